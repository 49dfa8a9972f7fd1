/**
 * `npm run traffic -- --n 30 [--url http://127.0.0.1:3000]`: plays `n` customers asking the
 * running service about their orders (`POST /chat`), prints one `rolloutId` per line, and, when `AGL_STORE_URL` is
 * set, waits until the store holds every one of those rollouts, finished (the service records in the background).
 */
import { parseArgs } from 'node:util';
import { StoreClient } from '@agl/client';
import { ORDERS } from './orders';

const { values } = parseArgs({
  options: { n: { type: 'string', default: '10' }, url: { type: 'string', default: 'http://127.0.0.1:3000' } },
});
const n = Number(values.n);
if (!Number.isInteger(n) || n < 1)
  throw new Error(`--n must be a whole number of requests such as 30 (got ${values.n})`);

const QUESTIONS = ['Where is my order {id}?', 'Has {id} shipped yet?', 'Any news on order {id}?'];
const ids: string[] = [];
for (let i = 0; i < n; i++) {
  // Each customer writes a little differently (the `#i`), so every request is its own task in the task set.
  const message = `${QUESTIONS[i % QUESTIONS.length]!.replace('{id}', ORDERS[i % ORDERS.length]!.id)} (#${i + 1})`;
  const res = await fetch(new URL('/chat', values.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
  });
  const body = (await res.json()) as { reply?: string; rolloutId?: string; error?: string };
  if (!res.ok || !body.rolloutId) throw new Error(`POST /chat answered ${res.status}: ${JSON.stringify(body)}`);
  ids.push(body.rolloutId);
  console.log(body.rolloutId);
}

if (process.env.AGL_STORE_URL) {
  const store = new StoreClient({ url: process.env.AGL_STORE_URL, token: process.env.AGL_STORE_TOKEN });
  const deadline = Date.now() + 30_000;
  const stored = async (id: string): Promise<boolean> => {
    const rollout = await store.getRolloutById(id);
    return rollout !== null && rollout.status !== 'running';
  };
  while (!(await Promise.all(ids.map(stored))).every(Boolean)) {
    if (Date.now() > deadline)
      throw new Error(`the store at ${process.env.AGL_STORE_URL} lacks some of the ${n} rollouts after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  console.error(`traffic: ${n} requests answered and recorded in ${process.env.AGL_STORE_URL}`);
}
