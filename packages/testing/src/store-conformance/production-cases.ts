import { describe, expect, it } from 'vitest';
import { findFinalReward, listFeedback, TraceToTransitions } from '@agl/core/transitions';
import { applyRecords, recordFeedback, type ApplyRecordsResult, type LightningStore } from '@agl/core/store';
import { expectAglError, makeSpan, type Harness } from './harness';

/** A realistic epoch second (2023-11-14): the store server refuses times outside 2000–2200. */
const T0 = 1_700_000_000;

type Apply = (store: LightningStore, records: unknown[]) => Promise<ApplyRecordsResult>;
type BatchApply = (records: readonly unknown[]) => Promise<ApplyRecordsResult>;

/** `applyRecords`, and the store's `applyProductionRecords` (looked up per test: the harness makes a store per test). */
function applyVariants(): Array<[string, Apply]> {
  const batched: Apply = async (store, records) => {
    const method = (store as { applyProductionRecords?: BatchApply }).applyProductionRecords;
    return method ? method.call(store, records) : applyRecords(store, records);
  };
  return [
    ['applyRecords', applyRecords],
    ['applyProductionRecords', batched],
  ];
}

/**
 * Production recording (DESIGN.md Contract 1b): client-chosen ids and times, records applied idempotently, late
 * feedback as the rollout's final reward.
 */
export function productionCases(h: Harness): void {
  describe('production recording', () => {
    it('startRollout takes client-chosen ids and start time; a retry returns the same rollout', async () => {
      const request = { input: { q: 1 }, rolloutId: 'ro-client-1', attemptId: 'at-client-1', startTime: T0 + 1000.5 };
      const first = await h.store.startRollout(request);
      expect(first).toMatchObject({ rolloutId: 'ro-client-1', startTime: T0 + 1000.5, mode: null });
      expect(first.attempt).toMatchObject({ attemptId: 'at-client-1', startTime: T0 + 1000.5, sequenceId: 1 });
      const again = await h.store.startRollout(request);
      expect(again.attempt.attemptId).toBe('at-client-1');
      expect((await h.store.queryRollouts({ rolloutIdIn: ['ro-client-1'] })).total).toBe(1);
      expect((await h.store.queryAttempts({ rolloutId: 'ro-client-1' })).total).toBe(1);
    });

    it('startRollout refuses an existing rollout id with another attempt id (409) and odd ids (422)', async () => {
      await h.store.startRollout({ input: 1, rolloutId: 'ro-taken', attemptId: 'at-1' });
      await expectAglError(
        h.store.startRollout({ input: 1, rolloutId: 'ro-taken', attemptId: 'at-2' }),
        'AGL_ConflictError',
        /already exists/,
      );
      for (const rolloutId of ['..', 'a/b', 'x\u0001', 'r'.repeat(257)]) {
        await expectAglError(h.store.startRollout({ input: 1, rolloutId }), 'AGL_ValidationError');
      }
    });

    it('updateAttempt honours endTime with a terminal status only', async () => {
      const r = await h.store.startRollout({ input: 1, rolloutId: 'ro-end', attemptId: 'at-end', startTime: T0 + 10 });
      await expectAglError(
        h.store.updateAttempt('ro-end', 'at-end', { status: 'running', endTime: T0 + 20 }),
        'AGL_ValidationError',
        /terminal status/,
      );
      const ended = await h.store.updateAttempt(r.rolloutId, r.attempt.attemptId, {
        status: 'succeeded',
        endTime: T0 + 12,
      });
      expect(ended.endTime).toBe(T0 + 12);
      expect(await h.store.getRolloutById('ro-end')).toMatchObject({ status: 'succeeded', endTime: T0 + 12 });
    });

    // `applyRecords` record by record, and a store's own batch path (`applyProductionRecords`, one transaction per
    // batch on the embedded stores and PostgreSQL) where it has one: the same answers and the same stored state.
    for (const [label, apply] of applyVariants()) {
      it(`${label}: creates, fills and ends a rollout; replaying the batch changes nothing`, async () => {
        const span = makeSpan('ro-rec', 'at-rec', { sequenceId: 1, startTime: T0 + 101, endTime: T0 + 102 });
        const records = [
          {
            kind: 'start',
            rolloutId: 'ro-rec',
            attemptId: 'at-rec',
            input: 'hi',
            metadata: { source: 'production' },
            startTime: T0 + 100,
          },
          { kind: 'spans', spans: [span] },
          { kind: 'end', rolloutId: 'ro-rec', attemptId: 'at-rec', status: 'succeeded', endTime: T0 + 103 },
        ];
        expect(await apply(h.store, records)).toEqual({ applied: 3, rejected: [] });
        expect(await apply(h.store, records)).toEqual({ applied: 3, rejected: [] });
        const rollout = await h.store.getRolloutById('ro-rec');
        expect(rollout).toMatchObject({
          status: 'succeeded',
          mode: null,
          startTime: T0 + 100,
          endTime: T0 + 103,
          metadata: { source: 'production' },
        });
        expect((await h.store.querySpans({ rolloutId: 'ro-rec' })).total).toBe(1);
        expect((await h.store.queryAttempts({ rolloutId: 'ro-rec' })).items[0]).toMatchObject({
          status: 'succeeded',
          endTime: T0 + 103,
        });
      });

      it(`${label}: reports a bad or orphan record and still applies the others`, async () => {
        const result = await apply(h.store, [
          { kind: 'start', rolloutId: 'ro-ok', attemptId: 'at-ok', input: null, startTime: T0 + 5 },
          { kind: 'bogus' },
          { kind: 'spans', spans: [makeSpan('ro-missing', 'at-x'), makeSpan('ro-ok', 'at-ok', { sequenceId: 2 })] },
          { kind: 'end', rolloutId: 'ro-ok', attemptId: 'at-ok', status: 'failed', endTime: T0 + 6 },
        ]);
        expect(result.applied).toBe(2);
        expect(result.rejected.map((r) => [r.index, r.errorType])).toEqual([
          [1, 'AGL_ValidationError'],
          [2, 'AGL_NotFoundError'],
        ]);
        expect((await h.store.querySpans({ rolloutId: 'ro-ok' })).total).toBe(1);
        expect((await h.store.getRolloutById('ro-ok'))?.status).toBe('failed');
      });

      it(`${label}: keeps each rollout's order across a batch of interleaved rollouts, bad records included`, async () => {
        const n = 40;
        const id = (i: number) => `ro-many-${i}`;
        const at = (i: number) => `at-many-${i}`;
        const records: unknown[] = [];
        for (let i = 0; i < n; i += 1) {
          records.push({ kind: 'start', rolloutId: id(i), attemptId: at(i), input: i, startTime: T0 + 200 + i });
        }
        records.push({ kind: 'bogus' });
        for (let i = 0; i < n; i += 1) {
          const spans = [1, 2].map((seq) =>
            makeSpan(id(i), at(i), { sequenceId: seq, startTime: T0 + 300, endTime: T0 + 301 }),
          );
          records.push(
            { kind: 'spans', spans },
            { kind: 'end', rolloutId: id(i), attemptId: at(i), status: 'succeeded', endTime: T0 + 400 + i },
          );
        }
        // One record that touches two rollouts (after both their ends), and an orphan end in the middle of it all.
        records.splice(n + 10, 0, {
          kind: 'end',
          rolloutId: 'ro-many-missing',
          attemptId: 'at-x',
          status: 'failed',
          endTime: T0 + 9,
        });
        records.push({
          kind: 'spans',
          spans: [makeSpan(id(0), at(0), { sequenceId: 3 }), makeSpan(id(1), at(1), { sequenceId: 3 })],
        });
        const result = await apply(h.store, records);
        expect(result.rejected.map((r) => [r.index, r.errorType])).toEqual([
          [n, 'AGL_ValidationError'],
          [n + 10, 'AGL_NotFoundError'],
        ]);
        expect(result.applied).toBe(records.length - 2);
        const rollouts = await h.store.queryRollouts({
          rolloutIdIn: Array.from({ length: n }, (_, i) => id(i)),
          limit: n,
        });
        expect(rollouts.total).toBe(n);
        for (const rollout of rollouts.items) {
          const i = Number(rollout.rolloutId.slice('ro-many-'.length));
          expect(rollout).toMatchObject({
            status: 'succeeded',
            startTime: T0 + 200 + i,
            endTime: T0 + 400 + i,
            input: i,
          });
          expect((await h.store.querySpans({ rolloutId: rollout.rolloutId })).total).toBe(i < 2 ? 3 : 2);
        }
      });
    }

    it('feedback is kept, sorts after the rollout, and wins over the agent reward in transitions', async () => {
      const r = await h.store.startRollout({ input: 'q', rolloutId: 'ro-fb', attemptId: 'at-fb' });
      await h.store.addSpans([
        makeSpan(r.rolloutId, r.attempt.attemptId, {
          sequenceId: 1,
          name: 'openai.chat.completion',
          attributes: llmCall('hello'),
        }),
        makeSpan(r.rolloutId, r.attempt.attemptId, {
          sequenceId: 2,
          name: 'agentlightning.annotation',
          attributes: { 'agentlightning.reward.0.value': 0.2 },
        }),
      ]);
      await h.store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
      await recordFeedback(h.store, 'ro-fb', 1, { comment: 'great', dimensions: { polite: 0.5 } });
      await recordFeedback(h.store, 'ro-fb', 0);
      const spans = (await h.store.querySpans({ rolloutId: 'ro-fb', sortBy: 'sequenceId' })).items;
      expect(listFeedback(spans).map((f) => [f.reward, f.comment, f.dimensions])).toEqual([
        [1, 'great', { polite: 0.5 }],
        [0, undefined, {}],
      ]);
      expect(findFinalReward(spans)).toBe(0);
      const trajectory = new TraceToTransitions().adapt(spans);
      expect(trajectory.finalReward).toBe(0);
      expect(trajectory.transitions.at(-1)?.reward).toBe(0);
      await expectAglError(recordFeedback(h.store, 'ro-nope', 1), 'AGL_NotFoundError', /not found/);
      await expectAglError(recordFeedback(h.store, 'ro-fb', Number.NaN), 'AGL_ValidationError', /finite/);
    });
  });
}

function llmCall(answer: string): Record<string, string> {
  return {
    'gen_ai.prompt.0.role': 'user',
    'gen_ai.prompt.0.content': 'question',
    'gen_ai.completion.0.role': 'assistant',
    'gen_ai.completion.0.content': answer,
  };
}
