import { SPAN_ANNOTATION } from '@agl/core/semconv';
import type { LightningStore, ProductionRecord } from '@agl/core/store';
import { testSpan } from './test-records';

// A recorder's batches for the tests of the coalesced records path (memory, SQLite, PostgreSQL).

/** A clock that stands still, so the heartbeat times of two stores compare equal. */
export const clock = { now: () => 1_700_000_500 };
const T = 1_700_000_000;

/** Request `i`'s start record (source `source`). */
export const start = (i: number, source = 'production'): ProductionRecord => ({
  kind: 'start',
  rolloutId: `ro-${i}`,
  attemptId: `at-${i}`,
  input: { message: `request ${i}` },
  metadata: { source, agent_name: 'support' },
  startTime: T + i,
});
/** Request `i`'s spans record: one span per id, sequence ids from 1; an annotation carries reward i/10. */
export const spans = (i: number, spanIds: string[], name = 'openai.chat.completions'): ProductionRecord => ({
  kind: 'spans',
  spans: spanIds.map((spanId, k) =>
    testSpan(`ro-${i}`, `at-${i}`, {
      spanId,
      sequenceId: k + 1,
      name,
      startTime: T + i + 1,
      endTime: T + i + 2,
      attributes: name === SPAN_ANNOTATION ? { 'agentlightning.reward.0.value': i / 10 } : { 'gen_ai.system': 'openai' },
    }),
  ),
});
/** Request `i`'s end record. */
export const end = (i: number, status: 'succeeded' | 'failed' = 'succeeded'): ProductionRecord => ({
  kind: 'end',
  rolloutId: `ro-${i}`,
  attemptId: `at-${i}`,
  status,
  endTime: T + i + 3,
});

/**
 * Three batches as a recorder sends them: requests 0-2 whole in the first; requests 3-4 started in the first and
 * finished in the second (spans of a rollout stored earlier, one span repeated, one rollout failed); reward
 * annotations, one on a rollout stored earlier that the same batch just failed, one on a rollout the batch starts;
 * a late span of an ended rollout. The tests replay the first batch at the end (a retry after a lost answer).
 */
export const BATCHES: ProductionRecord[][] = [
  [
    start(0),
    start(1),
    spans(0, ['a', 'b']),
    start(2, 'canary'),
    spans(1, ['a']),
    end(0),
    spans(2, ['a', 'a']),
    end(1, 'failed'),
    start(3),
    start(4),
    spans(3, ['a']),
    end(2),
  ],
  [
    spans(3, ['a', 'b']),
    spans(4, ['a']),
    spans(0, ['r'], SPAN_ANNOTATION),
    end(3, 'failed'),
    end(4),
    spans(4, ['b']),
    start(7),
  ],
  [
    start(5),
    start(6),
    spans(5, ['a']),
    end(7, 'failed'),
    spans(7, ['r'], SPAN_ANNOTATION),
    spans(2, ['z']),
    end(5, 'failed'),
    spans(6, ['a'], SPAN_ANNOTATION),
    end(6),
  ],
];

/** Every stored row a client can see: rollouts by id, each with its attempts and spans in the store's order. */
export async function contents(store: LightningStore): Promise<unknown> {
  const rollouts = (await store.queryRollouts({})).items.sort((a, b) => (a.rolloutId < b.rolloutId ? -1 : 1));
  const out: unknown[] = [];
  for (const rollout of rollouts) {
    out.push(rollout);
    out.push((await store.queryAttempts({ rolloutId: rollout.rolloutId })).items);
    out.push((await store.querySpans({ rolloutId: rollout.rolloutId })).items);
  }
  out.push((await store.queryWorkers({})).items);
  return out;
}

