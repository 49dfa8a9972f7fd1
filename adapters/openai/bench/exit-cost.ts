// Time the crash-time flush adds to a process exit (not a test): `npm run bench:exit -w adapters/openai`.
// A child under `--import @agl/openai/register` makes 21 spans and calls process.exit(1): `flushed`, all of them
// already exported; `pending-warm`, 20 ended spans queued and an agent span open, 2 s after the first span (the
// exporter thread has loaded the store client meanwhile, as during a real run); `pending-cold`, the same at once (the
// exit also waits for the thread to start and load). Median of AGL_BENCH_RUNS (default 10) runs each.
import { fileURLToPath } from 'node:url';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import { runNode, SOURCE_NODE_FLAGS } from '@agl/testing';

const RUNS = Number(process.env.AGL_BENCH_RUNS ?? 10);
const child = fileURLToPath(new URL('./exit-child.ts', import.meta.url));
const store = new MemoryStore();
const server = await createStoreServer({ store, port: 0 });
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const figures: Record<string, { medianMs: number; spansStored: number }> = {};
for (const mode of ['flushed', 'pending-warm', 'pending-cold']) {
  const times: number[] = [];
  let stored = 0;
  for (let i = 0; i < RUNS; i += 1) {
    const rollout = await store.startRollout({ input: {} });
    const run = await runNode([...SOURCE_NODE_FLAGS, '--import', '@agl/openai/register', child, mode], {
      AGL_STORE_URL: server.url,
      AGL_ROLLOUT_ID: rollout.rolloutId,
      AGL_ATTEMPT_ID: rollout.attempt.attemptId,
    });
    const ms = /EXIT_MS ([\d.]+)/.exec(run.stderr)?.[1];
    if (run.code !== 1 || !ms) throw new Error(`exit-child ${mode} failed (${run.code}): ${run.stderr}`);
    times.push(Number(ms));
    stored = (await store.querySpans({ rolloutId: rollout.rolloutId })).items.length;
  }
  figures[mode] = { medianMs: Number(median(times).toFixed(1)), spansStored: stored };
}
await server.close();
console.log(JSON.stringify({ runs: RUNS, exitHook: figures }, null, 2));
