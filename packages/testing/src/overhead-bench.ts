import { writeFileSync } from 'node:fs';
import type { LightningStore } from '@agl/core';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';

/** What an adapter's overhead bench prints, and writes with `--json <file>` (collected by tools/bench). */
export interface OverheadSummary {
  adapter: string;
  calls: number;
  untracedUsPerCall: number;
  tracedUsPerCall: number;
  overheadUsPerCall: number;
  spansStored: number;
}

/** Options of {@link runOverheadBench}. */
export interface OverheadBenchOptions {
  /** Package name, e.g. `@agl/openai`. */
  adapter: string;
  /** Where the traced calls' spans go (pass `new MemoryStore()`: @agl/testing cannot depend on @agl/store). */
  store: LightningStore;
  /**
   * Called before each round of one mode: sets the mode up (e.g. registers or removes a global integration) and
   * returns one LLM call through the framework against an in-process fake model, traced or not.
   */
  callFor: (traced: boolean) => () => Promise<unknown>;
  /** Calls measured in all per mode (default `AGL_BENCH_CALLS`, else 10 000), split over the rounds. */
  calls?: number;
  /** Command-line arguments (default `process.argv`): `--json <file>` writes the summary there too. */
  argv?: string[];
}

const ROUNDS = 5;
const WARM_UP_CALLS = 200;

/**
 * CPU time per traced LLM call vs untraced (not a test): alternating untraced and traced rounds inside one rollout
 * context, so JIT warm-up and machine noise hit both modes alike. Prints the summary as one JSON line, writes it to
 * the file after `--json`, and shuts the AGL tracer down.
 */
export async function runOverheadBench(options: OverheadBenchOptions): Promise<OverheadSummary> {
  const perRound = Math.ceil((options.calls ?? Number(process.env.AGL_BENCH_CALLS ?? 10_000)) / ROUNDS);
  const { store } = options;
  const rollout = await store.startRollout({ input: {} });
  const ctx = { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store };

  async function measure(traced: boolean): Promise<number> {
    const call = options.callFor(traced);
    for (let i = 0; i < WARM_UP_CALLS; i += 1) await call();
    const start = process.cpuUsage();
    for (let i = 0; i < perRound; i += 1) await call();
    await getAglTracer().forceFlush();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / perRound;
  }

  let untracedTotal = 0;
  let tracedTotal = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    untracedTotal += await withRolloutContext(ctx, () => measure(false));
    tracedTotal += await withRolloutContext(ctx, () => measure(true));
  }
  const untraced = untracedTotal / ROUNDS;
  const traced = tracedTotal / ROUNDS;
  const summary: OverheadSummary = {
    adapter: options.adapter,
    calls: perRound * ROUNDS,
    untracedUsPerCall: +untraced.toFixed(1),
    tracedUsPerCall: +traced.toFixed(1),
    overheadUsPerCall: +(traced - untraced).toFixed(1),
    spansStored: (await store.querySpans({ rolloutId: rollout.rolloutId, limit: 0 })).total,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  const argv = options.argv ?? process.argv;
  const jsonAt = argv.indexOf('--json');
  const file = jsonAt > 0 ? argv[jsonAt + 1] : undefined;
  if (file) writeFileSync(file, `${JSON.stringify(summary)}\n`);
  await getAglTracer().shutdown();
  return summary;
}
