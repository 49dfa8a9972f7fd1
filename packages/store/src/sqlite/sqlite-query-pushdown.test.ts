import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { queryRollouts } from '../engine/queries';
import type { StoreStorage } from '../engine/storage';
import { StoreEngine } from '../engine/store-engine';
import { migrate } from './migrations';
import { SqliteStorage } from './sqlite-storage';

describe('SqliteStorage.pageRollouts', () => {
  it('returns exactly what the generic in-process query returns, for every filter and sort combination', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-pushdown-'));
    const db = new Database(join(dir, 'q.sqlite'));
    migrate(db, 'q.sqlite');
    const storage = new SqliteStorage(db);
    let t = 100;
    const engine = new StoreEngine({ storage, clock: { now: () => t }, scanDebounceSeconds: 0 });
    const made = engine.enqueueRollouts(
      Array.from({ length: 12 }, (_, i) => ({ input: i, mode: ([null, 'train', 'val'] as const)[i % 3] })),
    );
    for (const [i, r] of made.entries()) {
      t += i % 2; // some equal start times
      if (i % 4 === 0) engine.updateRollout(r.rolloutId, { status: 'failed' });
      if (i % 5 === 0) engine.dequeueRollouts({});
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
    for (const f of filters) {
      for (const s of sorts) {
        for (const p of pages) {
          const options = { ...f, ...s, ...p };
          const fast = storage.read(() => queryRollouts(storage, options));
          const slow = storage.read(() => queryRollouts(bound(generic), options));
          expect(fast, JSON.stringify(options)).toEqual(slow);
          checked += 1;
        }
      }
    }
    expect(checked).toBe(filters.length * sorts.length * pages.length);
    storage.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
