import { describe, expect, it } from 'vitest';
import type { LightningStore } from '@agl/core/store';
import { tempFileEachTest } from '../__fixtures__/temp-file';
import { MemoryStore } from '../memory/memory-store';
import { SqliteStore } from '../sqlite/sqlite-store';
import { countTransactions } from '../__fixtures__/count-transactions';
import { ingestOtlpSpans } from './ingest-otlp';
import type { ConvertedSpan } from './otlp-to-spans';

const file = tempFileEachTest('agl-otlp-ingest-', 'store.sqlite');

const converted = (rolloutId: string, attemptId: string, spanId: string, sequenceId: number | null): ConvertedSpan => ({
  sequenceId,
  span: {
    rolloutId,
    attemptId,
    sequenceId: sequenceId ?? 0,
    traceId: 't'.repeat(32),
    spanId,
    parentId: null,
    name: `span-${spanId}`,
    startTime: 1,
    endTime: 2,
    attributes: { k: spanId },
  },
});

/**
 * The store as a remote client sees it (no `ingestSpans`), counting `addSpans` calls, and claiming an extra attempt
 * `at-ghost` for `ghostRollout` that does not exist.
 */
function instrumented(
  store: MemoryStore,
  ghostRollout: string | null,
): { store: LightningStore; addSpansCalls: () => number } {
  let calls = 0;
  const proxy = new Proxy(store, {
    get(target, prop) {
      if (prop === 'ingestSpans') return undefined;
      if (prop === 'addSpans') {
        return (spans: unknown) => {
          calls += 1;
          return target.addSpans(spans as Parameters<MemoryStore['addSpans']>[0]);
        };
      }
      if (prop === 'queryAttempts') {
        return async (query: Parameters<MemoryStore['queryAttempts']>[0]) => {
          const page = await target.queryAttempts(query);
          if (query.rolloutId !== ghostRollout) return page;
          return { ...page, items: [...page.items, { ...page.items[0]!, attemptId: 'at-ghost' }] };
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: proxy as LightningStore, addSpansCalls: () => calls };
}

describe('ingestOtlpSpans into a store with ingestSpans (one transaction)', () => {
  for (const [label, open] of [
    ['memory', () => new MemoryStore()],
    ['SQLite', () => new SqliteStore({ path: file.path })],
  ] as const) {
    it(`${label}: stores a request's spans in one write, issuing missing sequence ids in span order`, async () => {
      const store = open();
      const a = await store.startRollout({ input: 1 });
      const b = await store.startRollout({ input: 2 });
      const writes = countTransactions(store);
      const spans = [
        converted(a.rolloutId, a.attempt.attemptId, 's1', null),
        converted(b.rolloutId, b.attempt.attemptId, 's2', 7),
        converted('ro-missing', 'at-x', 's5', 1),
        converted(a.rolloutId, a.attempt.attemptId, 's3', null),
        converted(b.rolloutId, 'at-other', 's6', 1),
        converted(a.rolloutId, a.attempt.attemptId, 's1', 9),
      ];
      const result = await ingestOtlpSpans(store, { spans, unowned: [] });
      expect(writes()).toBe(1);
      expect(result).toMatchObject({ accepted: 3, duplicates: 1, rejected: 2 });
      expect(result.messages).toEqual([
        'span "span-s5" names unknown rollout ro-missing',
        `span "span-s6" names unknown attempt at-other of rollout ${b.rolloutId}`,
      ]);
      const stored = await store.querySpans({ rolloutId: a.rolloutId });
      expect(stored.items.map((s) => [s.spanId, s.sequenceId, s.attributes])).toEqual([
        ['s1', 1, { k: 's1' }],
        ['s3', 2, { k: 's3' }],
      ]);
      expect(await store.getNextSpanSequenceId(a.rolloutId, a.attempt.attemptId)).toBe(10);
      expect((await store.getLatestAttempt(b.rolloutId))?.status).toBe('running');
      await store.close();
    });
  }
});

describe('ingestOtlpSpans', () => {
  it('stores every span of a request in one addSpans call, issuing missing sequence ids in span order', async () => {
    const memory = new MemoryStore();
    const a = await memory.startRollout({ input: 1 });
    const b = await memory.startRollout({ input: 2 });
    const { store, addSpansCalls } = instrumented(memory, null);
    const spans = [
      converted(a.rolloutId, a.attempt.attemptId, 's1', null),
      converted(b.rolloutId, b.attempt.attemptId, 's2', 7),
      converted(a.rolloutId, a.attempt.attemptId, 's3', null),
      converted(a.rolloutId, a.attempt.attemptId, 's1', 9),
    ];
    const result = await ingestOtlpSpans(store, { spans, unowned: [] });
    expect(result).toEqual({ accepted: 3, duplicates: 1, rejected: 0, messages: [] });
    expect(addSpansCalls()).toBe(1);
    expect((await memory.querySpans({ rolloutId: a.rolloutId })).items.map((s) => [s.spanId, s.sequenceId])).toEqual([
      ['s1', 1],
      ['s3', 2],
    ]);
    await memory.close();
  });

  it('when an attempt vanishes between the check and the write, only its spans are rejected and the rest are stored', async () => {
    const memory = new MemoryStore();
    const a = await memory.startRollout({ input: 1 });
    const b = await memory.startRollout({ input: 2 });
    const { store, addSpansCalls } = instrumented(memory, b.rolloutId);
    const spans = [
      converted(a.rolloutId, a.attempt.attemptId, 's1', 1),
      converted(b.rolloutId, 'at-ghost', 's2', 1),
      converted(a.rolloutId, a.attempt.attemptId, 's3', 2),
      converted(b.rolloutId, b.attempt.attemptId, 's4', 3),
    ];
    const result = await ingestOtlpSpans(store, { spans, unowned: [] });
    expect(result.accepted).toBe(3);
    expect(result.rejected).toBe(1);
    expect(result.messages.join('\n')).toContain('at-ghost');
    expect(addSpansCalls()).toBe(1 + 3);
    expect((await memory.querySpans({ rolloutId: a.rolloutId })).items.map((s) => s.spanId)).toEqual(['s1', 's3']);
    expect((await memory.querySpans({ rolloutId: b.rolloutId })).items.map((s) => s.spanId)).toEqual(['s4']);
    await memory.close();
  });
});
