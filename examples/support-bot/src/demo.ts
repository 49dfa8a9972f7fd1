/**
 * `npm run demo` (from examples/support-bot): the whole loop offline in one command. Starts the scripted test LLM,
 * `agl store serve` on `.agl/store.sqlite` (relative to where npm was typed) and the support service as `npm start`
 * runs it; sends a few customer chats, gives three of them feedback through the service's `POST /feedback`, waits
 * until the recorder has delivered everything, stops, and says how to look at it.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { waitFor } from './child-service';
import { markedChats, sendChats, serviceStats } from './live-traffic';
import { startSupportStack } from './support-stack';

const db = resolve(process.env.INIT_CWD ?? process.cwd(), '.agl/store.sqlite');
mkdirSync(dirname(db), { recursive: true });
const stack = await startSupportStack({ db });
const { bot } = stack;
try {
  const chats = markedChats(`demo${Date.now().toString(36)}`, 10);
  const answers = await sendChats(bot.url, chats, 4);
  for (const [i, a] of answers.entries()) {
    if (a.status !== 200 || a.reply !== chats[i]!.expectedReply)
      throw new Error(`POST /chat "${chats[i]!.message}" answered ${a.status} ${JSON.stringify(a.reply)}`);
    if (i < 3) console.log(`customer: ${chats[i]!.message}\nbot:      ${a.reply}   (rollout ${a.rolloutId})`);
  }
  for (const [i, a] of answers.slice(0, 3).entries()) {
    const res = await fetch(`${bot.url}/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        rolloutId: a.rolloutId,
        reward: i === 1 ? 0 : 1,
        comment: i === 1 ? 'too slow' : 'thanks!',
      }),
    });
    if (res.status !== 201) throw new Error(`POST /feedback answered ${res.status}: ${await res.text()}`);
  }
  const stats = await waitFor('the recorder to deliver every rollout', async () => {
    const s = await serviceStats(bot.url);
    return s.buffered === 0 ? s : undefined;
  });
  console.log(`\nrecorded ${stats.recorded} requests (3 with feedback) into ${db}; dropped ${stats.dropped}`);
} finally {
  await stack.close();
}
console.log('look at them: npx agl rollouts list, or npx agl store serve and open http://127.0.0.1:4747');
