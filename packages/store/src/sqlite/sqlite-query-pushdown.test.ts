import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { queryRollouts } from '../engine/queries';
import type { StoreStorage } from '../engine/storage';
import { runRule } from '../engine/storage-ops';
import { dequeueRolloutsRule, enqueueRolloutsRule, updateRolloutRule } from '../engine/store-rules';
import { SyncRuleRunner } from '../engine/sync-rule-runner';
import { toWire, toWireJson } from '@agl/core/schema';
import { migrate } from './migrations';
import { SqliteStorage } from './sqlite-storage';
import { SqliteStore } from './sqlite-store';

/** Every `{ ...a, ...b, ...c }` of one item of each list, in nested-loop order. */
function combinations<A extends object, B extends object, C extends object>(
  as: A[],
  bs: B[],
  cs: C[],
): Array<A & B & C> {
  return as.flatMap((a) => bs.flatMap((b) => cs.map((c) => ({ ...a, ...b, ...c }))));
}

describe('SqliteStorage.pageRollouts', () => {
  it('returns exactly what the generic in-process query returns, for every filter and sort combination', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-pushdown-'));
    const db = new Database(join(dir, 'q.sqlite'));
    migrate(db, 'q.sqlite');
    const storage = new SqliteStorage(db);
    let t = 100;
    const runner = new SyncRuleRunner({ storage, clock: { now: () => t }, scanDebounceSeconds: 0 });
    const made = runner.write((c) =>
      enqueueRolloutsRule(
        c,
        Array.from({ length: 12 }, (_, i) => ({ input: i, mode: ([null, 'train', 'val'] as const)[i % 3] })),
      ),
    );
    for (const [i, r] of made.entries()) {
      t += i % 2; // some equal start times
      if (i % 4 === 0) runner.write((c) => updateRolloutRule(c, r.rolloutId, { status: 'failed' }));
      if (i % 5 === 0) runner.write((c) => dequeueRolloutsRule(c, { limit: 1 }));
    }
    const generic = new Proxy(storage, {
      get: (target, key) => (key === 'pageRollouts' ? undefined : Reflect.get(target, key, target)),
    }) as StoreStorage;
    // Methods must run on the real instance (private fields); only pageRollouts is hidden.
    const bound = (s: StoreStorage) =>
      new Proxy(s, {
        get: (target, key) => {
          const v = Reflect.get(target, key, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(storage) : v;
        },
      }) as StoreStorage;
    const filters = [
      {},
      { statusIn: ['failed' as const] },
      { statusIn: ['queuing' as const, 'preparing' as const], modeIn: ['train' as const, null] },
      { rolloutIdContains: made[3]!.rolloutId.slice(-5), statusIn: ['failed' as const], filterLogic: 'or' as const },
      { rolloutIdIn: made.slice(2, 7).map((r) => r.rolloutId), statusIn: [] },
      { filterLogic: 'or' as const },
    ];
    const sorts = [
      {},
      { sortBy: 'start_time' },
      { sortBy: 'endTime', sortOrder: 'desc' as const },
      { sortBy: 'status' },
      { sortOrder: 'desc' as const },
      { sortBy: 'rollout_id', sortOrder: 'desc' as const },
    ];
    const pages = [{}, { limit: 3, offset: 2 }, { limit: 0 }, { offset: 50 }];
    let checked = 0;
    for (const options of combinations(filters, sorts, pages)) {
      const fast = runner.read(queryRollouts(options));
      const slow = storage.read(() => runRule(bound(generic), queryRollouts(options)));
      expect(fast, JSON.stringify(options)).toEqual(slow);
      checked += 1;
    }
    expect(checked).toBe(filters.length * sorts.length * pages.length);
    storage.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('SqliteStore.querySpanDocs', () => {
  it('gives the stored JSON of exactly the spans querySpans gives, in the same order and page, and null for filters', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-span-docs-'));
    const store = new SqliteStore({ path: join(dir, 's.sqlite') });
    const first = await store.startRollout({ input: 'x' });
    const second = await store.startAttempt(first.rolloutId);
    const empty = await store.enqueueRollout({ input: 'none' });
    // Sequence ids out of insertion order and with ties (the sort must be stable), two attempts, odd attribute text.
    const seqs = [3, 1, 2, 2, 5, 1, 4];
    await store.addSpans(
      seqs.map((sequenceId, i) => ({
        rolloutId: first.rolloutId,
        attemptId: i % 3 === 0 ? first.attempt.attemptId : second.attempt.attemptId,
        sequenceId,
        traceId: `t${i % 2}`,
        spanId: `s${i}`,
        parentId: i > 0 ? `s${i - 1}` : null,
        name: i % 2 ? 'tool' : 'llm',
        startTime: i,
        endTime: i + 1,
        attributes: { 'a"b\\c': `v${i}`, rolloutId: i, list: ['é', '\u2028'] },
        events: [{ name: 'e', attributes: { k: i }, timestamp: i }],
      })),
    );
    const wire = (items: unknown[]): string => JSON.stringify(toWire('span', items));
    const scopes = [
      { rolloutId: first.rolloutId },
      { rolloutId: first.rolloutId, attemptId: 'latest' },
      { rolloutId: first.rolloutId, attemptId: first.attempt.attemptId },
      { rolloutId: empty.rolloutId, attemptId: 'latest' },
      { rolloutId: 'ro-missing' },
    ];
    const orders = [{}, { sortBy: 'sequence_id', sortOrder: 'desc' as const }, { sortBy: 'sequenceId' }];
    const pages = [{}, { limit: 2, offset: 1 }, { limit: 0 }, { offset: 9 }];
    let checked = 0;
    for (const options of combinations(scopes, orders, pages)) {
      const docs = await store.querySpanDocs(options);
      const spans = await store.querySpans(options);
      expect(docs, JSON.stringify(options)).not.toBeNull();
      expect({ ...docs!, items: docs!.items.map((d) => JSON.parse(d) as unknown) }).toEqual(spans);
      expect(`[${docs!.items.map((d) => toWireJson('span', d)).join(',')}]`).toBe(wire(spans.items));
      checked += 1;
    }
    expect(checked).toBe(scopes.length * orders.length * pages.length);
    for (const filtered of [
      { name: 'tool' },
      { traceIdContains: 't1' },
      { sortBy: 'start_time' },
      { parentId: 's0', filterLogic: 'or' as const },
    ]) {
      expect(
        await store.querySpanDocs({ rolloutId: first.rolloutId, ...filtered }),
        JSON.stringify(filtered),
      ).toBeNull();
    }
    await expect(store.querySpanDocs({ rolloutId: first.rolloutId, sortBy: 'colour' })).rejects.toThrow(
      /Invalid sort_by/,
    );
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
