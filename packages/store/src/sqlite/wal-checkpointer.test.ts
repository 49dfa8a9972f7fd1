import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testSpan } from '../__fixtures__/test-records';
import { SqliteStore } from './sqlite-store';
import { WalCheckpointer } from './wal-checkpointer';

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts a rollout and adds 1,000 spans of ~3 KB (10 batches of 100): enough WAL for the background checkpointer. */
async function addLargeSpans(store: SqliteStore, fill: string): Promise<void> {
  const r = await store.startRollout({ input: 'big' });
  const attributes = { blob: fill.repeat(3000) };
  for (let batch = 0; batch < 10; batch += 1) {
    await store.addSpans(
      Array.from({ length: 100 }, (_, i) =>
        testSpan(r.rolloutId, r.attempt.attemptId, {
          sequenceId: batch * 100 + i + 1,
          spanId: `s${batch}-${i}`,
          attributes,
        }),
      ),
    );
  }
}

describe('WalCheckpointer', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agl-wal-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('takes checkpoints off the main connection once the WAL outgrows the threshold, and loses nothing', async () => {
    const path = join(dir, 'busy.sqlite');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)');
    const checkpointer = new WalCheckpointer(db, path, {
      startBytes: 256 * 1024,
      checkIntervalMs: 20,
      checkpointIntervalMs: 20,
    });
    const insert = db.prepare('INSERT INTO t (doc) VALUES (?)');
    const doc = 'x'.repeat(4000);
    expect(checkpointer.active).toBe(false);
    for (let i = 0; i < 200; i += 1) insert.run(doc); // 200 commits, ~1 MB of WAL frames
    await until(() => checkpointer.active);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    for (let i = 0; i < 200; i += 1) insert.run(doc);
    // The worker copies the WAL into the database file while the main connection keeps writing.
    await until(() => statSync(path).size > 1_200_000);
    await checkpointer.stop();
    expect(checkpointer.active).toBe(false);
    db.close();
    expect(existsSync(`${path}-wal`)).toBe(false); // the main connection was the last one: it checkpointed and removed the WAL
    const reopened = new Database(path, { readonly: true });
    expect((reopened.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n).toBe(400);
    expect(reopened.pragma('integrity_check', { simple: true })).toBe('ok');
    reopened.close();
  });

  it('never starts for a store whose WAL stays small, and SqliteStore can turn it off', async () => {
    const quiet = new SqliteStore({ path: join(dir, 'quiet.sqlite') });
    await quiet.enqueueRollout({ input: 1 });
    expect(quiet.backgroundCheckpointing).toBe(false);
    await quiet.close();
    const off = new SqliteStore({ path: join(dir, 'off.sqlite'), backgroundCheckpoints: false });
    await addLargeSpans(off, 'y');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(off.backgroundCheckpointing).toBe(false);
    await off.close();
  });

  it('starts under a busy SqliteStore, which closes cleanly and reopens with every span', async () => {
    const path = join(dir, 'store.sqlite');
    const store = new SqliteStore({ path });
    await addLargeSpans(store, 'z');
    await until(() => store.backgroundCheckpointing, 5000);
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = new SqliteStore({ path });
    expect((await reopened.statistics()).totalSpans).toBe(1000);
    await reopened.close();
  });
});
