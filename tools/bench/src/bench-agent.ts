import type { Span } from '@agl/core';
import { findFinalReward } from '@agl/core/transitions';
import { AglTracer, emitReward } from '@agl/core/tracer';
import type { RolloutFn } from '@agl/trainer';
import { generateAttributes, randInt, uniform } from './random-attributes';

/**
 * The tracer the benchmark runners use: a queue large enough for 1,000 concurrent rollouts (nothing dropped), no exit
 * hooks, and OpenTelemetry's span attribute count limit raised from its default 128: a depth-3, breadth-6 attribute
 * dict has up to 216 leaves, and the JS SDK drops attributes past the limit (the `task` attribute, set last, would be
 * lost; Python's SDK evicts the oldest instead). Every generated attribute is stored.
 */
export function createBenchTracer(): AglTracer {
  process.env.OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT ??= '100000';
  return new AglTracer({ maxQueueSize: 1_000_000, exitHooks: false });
}

const sleep = (seconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/**
 * AGL 0.3's synthetic `@rollout` agent (tests/benchmark/benchmark_store.py `make_agent`), per-rollout values unchanged:
 * `rounds = randint(1, maxRounds)`; each round opens `agent{i}` with nested `round{i}_1` and `round{i}_2`, each sleeping
 * `U(0, sleepSeconds)` and carrying random flattened attributes; one random round's first span gets `task=<task>`;
 * after each round a reward `U(0, 1)` with probability 0.5; then a `final` span (sleep, attributes) and a final
 * reward `U(1, 2)`.
 */
export function makeBenchAgent(options: { maxRounds: number; sleepSeconds: number; tracer: AglTracer }): RolloutFn {
  const otel = options.tracer.getTracer('agl-bench');
  const { maxRounds, sleepSeconds } = options;
  const nested = (name: string, fn: (span: { setAttribute(k: string, v: string): unknown }) => void): Promise<void> =>
    otel.startActiveSpan(name, async (span) => {
      try {
        await sleep(uniform(0, sleepSeconds));
        span.setAttributes(generateAttributes());
        fn(span);
      } finally {
        span.end();
      }
    });
  return async (input: unknown) => {
    const task = String(input);
    const rounds = randInt(1, maxRounds);
    const selected = randInt(0, rounds - 1);
    for (let i = 0; i < rounds; i += 1) {
      await otel.startActiveSpan(`agent${i}`, async (agentSpan) => {
        try {
          await nested(`round${i}_1`, (span) => {
            if (i === selected) span.setAttribute('task', task);
          });
          await nested(`round${i}_2`, () => undefined);
        } finally {
          agentSpan.end();
        }
      });
      if (Math.random() < 0.5) emitReward(uniform(0, 1));
    }
    await nested('final', () => undefined);
    emitReward(uniform(1, 2));
  };
}

/** AGL's `check_spans`: the task attribute is present and the final reward is in [1, 2]. Throws otherwise. */
export function checkSpans(spans: readonly Span[], task: string): void {
  const finalReward = findFinalReward(spans);
  if (finalReward === null) throw new Error(`final reward not found among ${spans.length} spans (task ${task})`);
  if (!(finalReward >= 1 && finalReward <= 2))
    throw new Error(`final reward ${finalReward} is not in [1, 2] (task ${task})`);
  if (!spans.some((s) => s.attributes.task === task))
    throw new Error(`task attribute ${task} not found in ${spans.length} spans`);
}
