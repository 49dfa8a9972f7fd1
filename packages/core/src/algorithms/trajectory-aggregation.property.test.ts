import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { call, trajectory } from './__fixtures__/trajectories';
import { aggregateTrajectory } from './trajectory-aggregation';

const tokens = fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 6 });
// Each later call either continues the context (context + observation) or starts from an unrelated prompt.
const calls = fc.array(
  fc.record({
    continues: fc.boolean(),
    observation: fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 3 }),
    fresh: tokens,
    response: tokens,
  }),
  {
    minLength: 1,
    maxLength: 8,
  },
);

describe('aggregateTrajectory (properties)', () => {
  it('keeps every call, masks only observations, and rebuilds each merged context exactly', () => {
    fc.assert(
      fc.property(tokens, calls, (firstPrompt, steps) => {
        let context: number[] = [];
        const transitions = steps.map((step, i) => {
          const prompt =
            i > 0 && step.continues
              ? [...context, ...step.observation]
              : i === 0
                ? firstPrompt
                : [1000 + i, ...step.fresh];
          context = [...prompt, ...step.response];
          return call({ prompt, response: step.response });
        });
        const { samples, stats } = aggregateTrajectory({
          trajectory: trajectory({ rolloutId: 'r', taskId: 't', transitions }),
        });
        // one sample per prefix break, plus the first
        expect(samples).toHaveLength(1 + stats.nMismatches);
        // every call lands in exactly one sample, in order
        expect(samples.flatMap((s) => s.turnIndices)).toEqual(transitions.map((_, i) => i));
        for (const s of samples) {
          // trained tokens are exactly the merged calls' responses
          const trained = s.responseTokenIds.filter((_, j) => s.responseMask[j] === 1);
          expect(trained).toEqual(s.turnIndices.flatMap((i) => transitions[i]!.action.tokenIds!));
          // prompt + response is the last merged call's full context
          const last = transitions[s.turnIndices.at(-1)!]!;
          expect([...s.promptTokenIds, ...s.responseTokenIds]).toEqual([
            ...last.state.tokenIds!,
            ...last.action.tokenIds!,
          ]);
        }
      }),
      { numRuns: 300, seed: 8 },
    );
  });
});
