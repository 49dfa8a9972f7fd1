import Database from 'better-sqlite3';
import { join } from 'node:path';
import { SCHEMA_VERSION } from '@agl/core/schema';
import { describe, expect, it } from 'vitest';
import { tempFileEachTest } from '../__fixtures__/temp-file';
import { testSpanDoc } from '../__fixtures__/test-records';
import { LATEST_MIGRATION, MIGRATIONS, SqliteStore } from './index';
import { migrate } from './migrations';

describe('SqliteStore migrations and file format', () => {
  const tmp = tempFileEachTest('agl-sqlite-mig-', 'store.sqlite');

  it('a new file gets every migration once, in WAL mode; reopening applies nothing again', async () => {
    const store = new SqliteStore({ path: tmp.path });
    expect(store.journalMode).toBe('wal');
    await store.enqueueRollout({ input: 1 });
    await store.close();
    const db = new Database(tmp.path);
    const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all();
    expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    expect(migrate(db, tmp.path)).toEqual([]);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    const again = new SqliteStore({ path: tmp.path });
    expect((await again.queryRollouts()).total).toBe(1);
    await again.close();
  });

  it('stored documents carry the schema version', async () => {
    const store = new SqliteStore({ path: tmp.path });
    const r = await store.startRollout({ input: { x: 1 } });
    await store.close();
    const db = new Database(tmp.path, { readonly: true });
    const row = db.prepare('SELECT schema_version, doc FROM rollouts WHERE rollout_id = ?').get(r.rolloutId) as {
      schema_version: number;
      doc: string;
    };
    expect(row.schema_version).toBe(SCHEMA_VERSION);
    expect(JSON.parse(row.doc)).toMatchObject({ rolloutId: r.rolloutId, input: { x: 1 }, status: 'preparing' });
    const attempt = db.prepare('SELECT schema_version FROM attempts WHERE rollout_id = ?').get(r.rolloutId) as {
      schema_version: number;
    };
    expect(attempt.schema_version).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('a later migration is applied to an existing file, and only once', () => {
    const db = new Database(tmp.path);
    expect(migrate(db, tmp.path)).toEqual(MIGRATIONS.map((m) => m.version));
    const next = [
      ...MIGRATIONS,
      { version: LATEST_MIGRATION + 1, name: 'add_note', sql: 'ALTER TABLE rollouts ADD COLUMN note TEXT' },
    ];
    expect(migrate(db, tmp.path, next)).toEqual([LATEST_MIGRATION + 1]);
    expect(migrate(db, tmp.path, next)).toEqual([]);
    const cols = (db.prepare('PRAGMA table_info(rollouts)').all() as Array<{ name: string }>).map((c) => c.name);
    expect(cols).toContain('note');
    db.close();
  });

  it('a path in a missing directory is a UserError with the fix', () => {
    expect(() => new SqliteStore({ path: join(tmp.dir, 'missing', 'x.sqlite') })).toThrow(
      /Cannot open SQLite store.*directory exists/,
    );
  });

  it('a file from a newer AGL is refused with a UserError that says what to do', () => {
    const db = new Database(tmp.path);
    migrate(db, tmp.path);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      LATEST_MIGRATION + 5,
      'future',
      0,
    );
    db.close();
    expect(() => new SqliteStore({ path: tmp.path })).toThrow(/newer than this AGL supports.*Upgrade @agl\/store/);
  });

  it('a failing migration leaves the file at its previous version', () => {
    const db = new Database(tmp.path);
    migrate(db, tmp.path);
    const broken = [
      ...MIGRATIONS,
      { version: LATEST_MIGRATION + 1, name: 'broken', sql: 'CREATE TABLE x (a); SELECT * FROM missing_table' },
    ];
    expect(() => migrate(db, tmp.path, broken)).toThrow(/missing_table/);
    expect((db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v).toBe(
      LATEST_MIGRATION,
    );
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'x'").get()).toBeUndefined();
    db.close();
  });

  it('spans stored before the attributes column (migration 1) read back whole, beside spans stored after it', async () => {
    const db = new Database(tmp.path);
    migrate(
      db,
      tmp.path,
      MIGRATIONS.filter((m) => m.version === 1),
    );
    db.close();
    const first = new SqliteStore({ path: tmp.path });
    const r = await first.startRollout({ input: 1 });
    await first.close();
    // The span as a version-1 store wrote it: the whole document, attributes inside.
    const old = testSpanDoc(r.rolloutId, r.attempt.attemptId, {
      spanId: 'old',
      name: 'before',
      status: { statusCode: 'OK', description: null },
      attributes: { a: 1, 'b.c': ['x'] },
    });
    const v1 = new Database(tmp.path);
    v1.prepare(
      'INSERT INTO spans (rollout_id, attempt_id, span_id, sequence_id, schema_version, doc) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(r.rolloutId, r.attempt.attemptId, 'old', 1, SCHEMA_VERSION, JSON.stringify(old));
    v1.close();

    const store = new SqliteStore({ path: tmp.path });
    await store.addSpan({ ...old, spanId: 'new', sequenceId: 2, name: 'after', attributes: { a: 2, 'b.c': ['y'] } });
    const raw = new Database(tmp.path, { readonly: true });
    const rows = raw.prepare('SELECT span_id, doc, attributes FROM spans ORDER BY seq').all() as Array<{
      span_id: string;
      doc: string;
      attributes: string | null;
    }>;
    raw.close();
    expect(rows.map((row) => [row.span_id, row.attributes])).toEqual([
      ['old', null],
      ['new', '{"a":2,"b.c":["y"]}'],
    ]);
    expect(JSON.parse(rows[1]!.doc)).not.toHaveProperty('attributes');

    const spans = (await store.querySpans({ rolloutId: r.rolloutId })).items;
    expect(spans.map((s) => [s.name, s.attributes])).toEqual([
      ['before', { a: 1, 'b.c': ['x'] }],
      ['after', { a: 2, 'b.c': ['y'] }],
    ]);
    const docs = (await store.querySpanDocs({ rolloutId: r.rolloutId }))!.items.map((d) => JSON.parse(d) as unknown);
    expect(docs).toEqual(JSON.parse(JSON.stringify(spans)));
    await store.close();
  });

  it('a document written by a newer schema version is refused on read', async () => {
    const store = new SqliteStore({ path: tmp.path });
    const r = await store.enqueueRollout({ input: 1 });
    await store.close();
    const db = new Database(tmp.path);
    db.prepare('UPDATE rollouts SET schema_version = ? WHERE rollout_id = ?').run(SCHEMA_VERSION + 1, r.rolloutId);
    db.close();
    const reopened = new SqliteStore({ path: tmp.path });
    await expect(reopened.getRolloutById(r.rolloutId)).rejects.toThrow(/newer than this AGL/);
    await reopened.close();
  });
});
