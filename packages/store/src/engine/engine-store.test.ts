import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FakeClock } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../index';
import { SqliteStorage } from '../sqlite/sqlite-storage';
import { migrate } from '../sqlite/migrations';

describe('EngineStore', () => {
  it('a wait in progress rejects with StoreClosedError when the store closes', async () => {
    const store = new MemoryStore({ clock: new FakeClock() });
    const r = await store.startRollout({ input: 1 });
    const waiting = store.waitForRollouts([r.rolloutId], { timeoutSeconds: 30 });
    await store.close();
    await expect(waiting).rejects.toMatchObject({ name: 'AGL_StoreClosedError' });
  });

  it('a wait without a timeout resolves on the event, without polling', async () => {
    const store = new MemoryStore({ clock: new FakeClock() });
    const r = await store.startRollout({ input: 1 });
    let settled = false;
    const waiting = store.waitForRollouts([r.rolloutId]).then((v) => ((settled = true), v));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    await store.updateRollout(r.rolloutId, { status: 'cancelled' });
    expect((await waiting).map((x) => x.status)).toEqual(['cancelled']);
    await store.close();
  });

  it('the default watchdog debounce is 10 seconds', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    const r = await store.startRollout({ input: 1, config: { timeoutSeconds: 1 } });
    clock.advance(9);
    expect((await store.getLatestAttempt(r.rolloutId))?.status).toBe('preparing');
    clock.advance(1);
    expect((await store.getLatestAttempt(r.rolloutId))?.status).toBe('timeout');
    await store.close();
  });
});

describe('SqliteStorage transactions', () => {
  it('roll back every write when the callback throws', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-sqlite-tx-'));
    const db = new Database(join(dir, 's.sqlite'));
    migrate(db, 's.sqlite');
    const s = new SqliteStorage(db);
    const rollout = {
      rolloutId: 'ro-a',
      input: null,
      startTime: 1,
      endTime: null,
      mode: null,
      resourcesId: null,
      status: 'queuing' as const,
      config: { timeoutSeconds: null, unresponsiveSeconds: null, maxAttempts: 1, retryCondition: [] },
      metadata: {},
    };
    expect(() =>
      s.transaction(() => {
        s.insertRollouts([rollout]);
        s.enqueue(['ro-a']);
        s.incrementSequence('ro-a', 2);
        s.putResources({ resourcesId: 'r', createTime: 1, updateTime: 1, version: 1, resources: {} });
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(s.countRollouts()).toBe(0);
    expect(s.transaction(() => s.dequeue())).toBeNull();
    expect(s.getLatestResourcesId()).toBeNull();
    expect(s.transaction(() => s.incrementSequence('ro-a', 1))).toBe(1);
    s.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
