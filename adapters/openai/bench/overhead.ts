// CPU time per traced LLM call vs untraced (not a test): `npm run bench -w adapters/openai`.
import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { instrumentOpenAI } from '../src/index';

const CALLS = Number(process.env.AGL_BENCH_CALLS ?? 10_000);
const PER_ROUND = Math.ceil(CALLS / 5);
const body = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 0,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'It is sunny.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
});
// The in-process fake model: a fetch that answers at once, no socket.
const fakeFetch = async (): Promise<Response> =>
  new Response(body, { headers: { 'content-type': 'application/json' } });
const make = (): OpenAI =>
  new OpenAI({ apiKey: 'k', baseURL: 'http://fake.invalid/v1', fetch: fakeFetch, maxRetries: 0 });
const messages: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are a weather agent.' },
  { role: 'user', content: 'Weather in Paris?' },
];

async function measure(client: OpenAI): Promise<number> {
  for (let i = 0; i < 200; i += 1) await client.chat.completions.create({ model: 'm', messages });
  const start = process.cpuUsage();
  for (let i = 0; i < PER_ROUND; i += 1) await client.chat.completions.create({ model: 'm', messages });
  await getAglTracer().forceFlush();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / PER_ROUND;
}

const store = new MemoryStore();
const rollout = await store.startRollout({ input: {} });
const plain = make();
const traced1 = instrumentOpenAI(make());
const ctx = { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store };
// Alternating rounds, so JIT warm-up and machine noise hit both modes alike.
const ROUNDS = 5;
let untracedTotal = 0;
let tracedTotal = 0;
for (let round = 0; round < ROUNDS; round += 1) {
  untracedTotal += await withRolloutContext(ctx, () => measure(plain));

  tracedTotal += await withRolloutContext(ctx, () => measure(traced1));
}
const untraced = untracedTotal / ROUNDS;
const traced = tracedTotal / ROUNDS;
const spans = (await store.querySpans({ rolloutId: rollout.rolloutId, limit: 0 })).total;
const summary = {
  adapter: '@agl/openai',
  calls: PER_ROUND * 5,
  untracedUsPerCall: +untraced.toFixed(1),
  tracedUsPerCall: +traced.toFixed(1),
  overheadUsPerCall: +(traced - untraced).toFixed(1),
  spansStored: spans,
};
console.log(JSON.stringify(summary));
// `--json <file>`: the same figures into a file (collected by `npm run bench` at the root, tools/bench).
const jsonAt = process.argv.indexOf('--json');
if (jsonAt > 0 && process.argv[jsonAt + 1]) writeFileSync(process.argv[jsonAt + 1]!, `${JSON.stringify(summary)}\n`);
await getAglTracer().shutdown();
