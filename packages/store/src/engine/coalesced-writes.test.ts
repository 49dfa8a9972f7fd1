import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { applyRecords } from '@agl/core/store';
import { BATCHES, clock, contents, end, spans, start } from '../__fixtures__/recorder-batches';
import { tempFileEachTest } from '../__fixtures__/temp-file';
import { MemoryStore } from '../memory/memory-store';
import { SqliteStore } from '../sqlite/sqlite-store';
import type { SyncRuleRunner } from './sync-rule-runner';

const first = tempFileEachTest('agl-coalesced-a-', 'store.sqlite');
const second = tempFileEachTest('agl-coalesced-b-', 'store.sqlite');
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

/** The SQLite rollup tables the triggers keep, read straight from the file. */
function rollups(path: string): unknown {
  const db = new Database(path, { readonly: true });
  try {
    return {
      hours: db.prepare('SELECT * FROM traffic_hours WHERE n <> 0 ORDER BY hour, mode, source, agent, failed').all(),
      // Every column but `span_seq`: spans of a rollout the batch starts are written with its rows at the end, after
      // the spans of rollouts stored before (each rollout's spans keep their order, the table's global order differs).
      annotations: db
        .prepare('SELECT * FROM traffic_annotations ORDER BY start_time, span_seq')
        .all()
        .map((row) => ({ ...(row as object), span_seq: undefined })),
      stale: db.prepare('SELECT * FROM traffic_reward_stale ORDER BY hour').all(),
      sequences: db.prepare('SELECT * FROM span_sequence_ids ORDER BY rollout_id').all(),
    };
  } finally {
    db.close();
  }
}

/** Counts the storage calls of a store's rule runner, by name. */
function countCalls(store: SqliteStore | MemoryStore): Map<string, number> {
  const storage = (store as unknown as { runner: SyncRuleRunner }).runner.storage as unknown as Record<string, unknown>;
  const counts = new Map<string, number>();
  for (const name of ['insertRollouts', 'updateRollout', 'insertAttempt', 'updateAttempt', 'insertSerializedSpans']) {
    const original = (storage[name] as (...args: unknown[]) => unknown).bind(storage);
    storage[name] = (...args: unknown[]) => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return original(...args);
    };
  }
  return counts;
}

describe('coalesceWrites (a recorder batch writes each row once)', () => {
  it('stores a batch of whole requests as one rollout insert, one attempt insert each and one span insert', async () => {
    const store = new SqliteStore({ path: first.path, clock });
    closers.push(() => store.close());
    await store.queryRollouts({}); // the first watched call's watchdog scan, out of the way
    const calls = countCalls(store);
    const records = [0, 1, 2].flatMap((i) => [start(i), spans(i, ['a']), end(i)]);
    expect(await store.applyProductionRecords(records)).toEqual({ applied: 9, rejected: [] });
    expect(Object.fromEntries(calls)).toEqual({ insertRollouts: 1, insertAttempt: 3, insertSerializedSpans: 1 });
    expect((await store.getRolloutById('ro-1'))?.status).toBe('succeeded');
    expect(await store.getLatestAttempt('ro-1')).toMatchObject({ status: 'succeeded', lastHeartbeatTime: clock.now() });
  });

  it('leaves a SQLite file exactly as the records applied one by one do, rollups included', async () => {
    const batched = new SqliteStore({ path: first.path, clock });
    const single = new SqliteStore({ path: second.path, clock });
    closers.push(
      () => batched.close(),
      () => single.close(),
    );
    for (const batch of [...BATCHES, BATCHES[0]!]) {
      expect(await batched.applyProductionRecords(batch)).toEqual({ applied: batch.length, rejected: [] });
      expect(await applyRecords(single, batch)).toEqual({ applied: batch.length, rejected: [] });
    }
    expect(await contents(batched)).toEqual(await contents(single));
    expect((await batched.getRolloutById('ro-3'))?.status).toBe('failed');
    expect((await batched.querySpans({ rolloutId: 'ro-2' })).items.map((s) => s.spanId)).toEqual(['a', 'z']);
    await batched.close();
    await single.close();
    expect(rollups(first.path)).toEqual(rollups(second.path));
  });

  it('leaves a memory store as the records applied one by one do', async () => {
    const batched = new MemoryStore({ clock });
    const single = new MemoryStore({ clock });
    for (const batch of [...BATCHES, BATCHES[0]!]) {
      await batched.applyProductionRecords(batch);
      await applyRecords(single, batch);
    }
    expect(await contents(batched)).toEqual(await contents(single));
  });
});
