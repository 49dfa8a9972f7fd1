import type Database from 'better-sqlite3';
import { UserError } from '@agl/core/errors';
import { TRAFFIC_MIGRATION_SQL, TRAFFIC_REWARD_MIGRATION_SQL } from './sqlite-traffic';

/** One schema migration of the SQLite store. Applied in order, each in its own transaction, recorded in `schema_migrations`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every migration, oldest first. Never edit a released one: append a new version. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
      CREATE TABLE rollouts (
        seq INTEGER PRIMARY KEY,
        rollout_id TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL,
        start_time REAL NOT NULL,
        end_time REAL,
        mode TEXT,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
      CREATE INDEX rollouts_by_status ON rollouts(status);
      CREATE TABLE attempts (
        rollout_id TEXT NOT NULL,
        attempt_id TEXT NOT NULL,
        sequence_id INTEGER NOT NULL,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (rollout_id, attempt_id)
      );
      CREATE UNIQUE INDEX attempts_by_sequence ON attempts(rollout_id, sequence_id);
      CREATE TABLE spans (
        seq INTEGER PRIMARY KEY,
        rollout_id TEXT NOT NULL,
        attempt_id TEXT NOT NULL,
        span_id TEXT NOT NULL,
        sequence_id INTEGER NOT NULL,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL,
        UNIQUE (rollout_id, attempt_id, span_id)
      );
      CREATE TABLE span_sequence_ids (rollout_id TEXT PRIMARY KEY, value INTEGER NOT NULL);
      CREATE TABLE rollout_queue (pos INTEGER PRIMARY KEY, rollout_id TEXT NOT NULL);
      CREATE INDEX rollout_queue_by_id ON rollout_queue(rollout_id);
      CREATE TABLE resources (
        seq INTEGER PRIMARY KEY,
        resources_id TEXT NOT NULL UNIQUE,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
      CREATE TABLE workers (
        seq INTEGER PRIMARY KEY,
        worker_id TEXT NOT NULL UNIQUE,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
      CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT);
    `,
  },
  {
    version: 2,
    name: 'span-attributes-column',
    // A span's attribute map as JSON text, apart from the rest of its document, so reads parse it only when used.
    // Rows written before this migration keep NULL here and their attributes inside `doc`.
    sql: 'ALTER TABLE spans ADD COLUMN attributes TEXT;',
  },
  {
    version: 3,
    name: 'traffic-rollup',
    // The live-traffic view reads hourly counts and an index of annotation spans (kept by triggers), never every rollout.
    sql: TRAFFIC_MIGRATION_SQL,
  },
  {
    version: 4,
    name: 'releases',
    // Guarded releases (Contract 4c): one document per release, its decision log inside.
    sql: `
      CREATE TABLE releases (
        seq INTEGER PRIMARY KEY,
        release_id TEXT NOT NULL UNIQUE,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: 'traffic-reward-rollup',
    // The live-traffic view reads reward sums per hour, recomputed only for hours a write marked stale.
    sql: TRAFFIC_REWARD_MIGRATION_SQL,
  },
];

/** The newest migration version this code knows. */
export const LATEST_MIGRATION = MIGRATIONS.at(-1)!.version;

/**
 * Brings the database up to {@link LATEST_MIGRATION}. Safe when several processes open the same new file at once:
 * the check and the migrations run under one `BEGIN IMMEDIATE`. Refuses a database from a newer AGL.
 * Returns the versions applied now.
 */
export function migrate(db: Database.Database, path: string, migrations: readonly Migration[] = MIGRATIONS): number[] {
  const latest = migrations.at(-1)?.version ?? 0;
  const run = db.transaction(() => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)',
    );
    const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
    const current = row.v ?? 0;
    if (current > latest) {
      throw new UserError(
        `SQLite store ${path} has schema version ${current}, newer than this AGL supports (${latest}). Upgrade @agl/store, or open another file.`,
      );
    }
    const applied: number[] = [];
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const m of migrations) {
      if (m.version <= current) continue;
      db.exec(m.sql);
      record.run(m.version, m.name, Date.now() / 1000);
      applied.push(m.version);
    }
    return applied;
  });
  return run.immediate();
}
