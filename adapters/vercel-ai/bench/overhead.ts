// CPU time per traced LLM call vs untraced (not a test): `npm run bench -w adapters/vercel-ai`.
import { writeFileSync } from 'node:fs';
import { generateText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { registerAglTelemetry } from '../src/index';

const CALLS = Number(process.env.AGL_BENCH_CALLS ?? 10_000);
const PER_ROUND = Math.ceil(CALLS / 5);
// The in-process fake model.
const model = new MockLanguageModelV3({
  doGenerate: async () => ({
    content: [{ type: 'text', text: 'It is sunny.' }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: 9, noCache: 9, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 4, text: 4, reasoning: 0 },
    },
    warnings: [],
  }),
});

async function measure(): Promise<number> {
  const call = () => generateText({ model, system: 'You are a weather agent.', prompt: 'Weather in Paris?' });
  for (let i = 0; i < 200; i += 1) await call();
  const start = process.cpuUsage();
  for (let i = 0; i < PER_ROUND; i += 1) await call();
  await getAglTracer().forceFlush();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / PER_ROUND;
}

const store = new MemoryStore();
const rollout = await store.startRollout({ input: {} });
const integration = registerAglTelemetry();
const ctx = { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store };
// Alternating rounds, so JIT warm-up and machine noise hit both modes alike.
const ROUNDS = 5;
let untracedTotal = 0;
let tracedTotal = 0;
for (let round = 0; round < ROUNDS; round += 1) {
  globalThis.AI_SDK_TELEMETRY_INTEGRATIONS = [];
  untracedTotal += await withRolloutContext(ctx, () => measure());
  globalThis.AI_SDK_TELEMETRY_INTEGRATIONS = [integration];
  tracedTotal += await withRolloutContext(ctx, () => measure());
}
const untraced = untracedTotal / ROUNDS;
const traced = tracedTotal / ROUNDS;
const spans = (await store.querySpans({ rolloutId: rollout.rolloutId, limit: 0 })).total;
const summary = {
  adapter: '@agl/vercel-ai',
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
