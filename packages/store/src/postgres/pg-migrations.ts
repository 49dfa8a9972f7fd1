import type { PoolClient } from 'pg';
import { UserError } from '@agl/core/errors';
import { PG_TRAFFIC_MIGRATION, PG_TRAFFIC_REWARD_MIGRATION } from './pg-traffic';
import { PG_TRAFFIC_HOURS_MIGRATION } from './pg-traffic-hours';

/** One schema migration of the PostgreSQL store; `sql` receives the quoted schema name. */
export interface PgMigration {
  version: number;
  name: string;
  sql: (schema: string) => string;
}

/**
 * Every migration, oldest first. Never edit a released one: append a new version. Documents are stored as JSON text
 * (a lossless round trip: JSONB reorders keys and refuses `\u0000`); span attributes are also kept as JSONB with a GIN
 * index for attribute queries, next to the plain columns the query routes filter and sort on.
 */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: 'initial',
    sql: (s) => `
      CREATE TABLE ${s}.rollouts (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        rollout_id TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL,
        start_time DOUBLE PRECISION NOT NULL,
        end_time DOUBLE PRECISION,
        mode TEXT,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
      CREATE INDEX rollouts_by_status ON ${s}.rollouts (status, seq);
      CREATE INDEX rollouts_by_start_time ON ${s}.rollouts (start_time, seq);
      CREATE TABLE ${s}.attempts (
        rollout_id TEXT NOT NULL,
        attempt_id TEXT NOT NULL,
        sequence_id INTEGER NOT NULL,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (rollout_id, attempt_id)
      );
      CREATE UNIQUE INDEX attempts_by_sequence ON ${s}.attempts (rollout_id, sequence_id);
      CREATE TABLE ${s}.spans (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        rollout_id TEXT NOT NULL,
        attempt_id TEXT NOT NULL,
        span_id TEXT NOT NULL,
        sequence_id BIGINT NOT NULL,
        trace_id TEXT NOT NULL,
        name TEXT NOT NULL,
        attributes JSONB,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL,
        UNIQUE (rollout_id, attempt_id, span_id)
      );
      CREATE INDEX spans_by_rollout ON ${s}.spans (rollout_id, seq);
      CREATE INDEX spans_by_attempt ON ${s}.spans (rollout_id, attempt_id, seq);
      CREATE INDEX spans_by_name ON ${s}.spans (rollout_id, name);
      CREATE INDEX spans_attributes ON ${s}.spans USING GIN (attributes jsonb_path_ops);
      CREATE TABLE ${s}.span_sequence_ids (rollout_id TEXT PRIMARY KEY, value BIGINT NOT NULL);
      CREATE TABLE ${s}.rollout_queue (pos BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, rollout_id TEXT NOT NULL);
      CREATE INDEX rollout_queue_by_id ON ${s}.rollout_queue (rollout_id);
      CREATE TABLE ${s}.resources (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        resources_id TEXT NOT NULL UNIQUE,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
      CREATE TABLE ${s}.workers (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        worker_id TEXT NOT NULL UNIQUE,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
      CREATE TABLE ${s}.store_meta (key TEXT PRIMARY KEY, value TEXT);
    `,
  },
  {
    version: 2,
    name: 'traffic-columns',
    // The live-traffic view counts a window from an index on start time, never reading every rollout.
    sql: PG_TRAFFIC_MIGRATION,
  },
  {
    version: 3,
    name: 'releases',
    // Guarded releases (Contract 4c): one document per release, its decision log inside.
    sql: (s) => `
      CREATE TABLE ${s}.releases (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        release_id TEXT NOT NULL UNIQUE,
        schema_version INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'traffic-rollups',
    // The live-traffic view reads hourly counts (delta rows, folded on read) and reward sums per hour, recomputed only
    // for hours a write marked stale.
    sql: (s) => PG_TRAFFIC_HOURS_MIGRATION(s) + PG_TRAFFIC_REWARD_MIGRATION(s),
  },
];

/** The newest migration version this code knows. */
export const PG_LATEST_MIGRATION = PG_MIGRATIONS.at(-1)!.version;

/** Advisory lock key of migrations (any constant; scoped by the schema name through hashtext). */
const MIGRATION_LOCK = 0x41474c01;

/**
 * Brings `schema` up to {@link PG_LATEST_MIGRATION} in one transaction under an advisory lock, so several servers
 * starting at once on a new database migrate it exactly once. Refuses a schema written by a newer AGL. Returns the
 * versions applied now.
 */
export async function migratePg(
  client: PoolClient,
  schema: string,
  label: string,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
): Promise<number[]> {
  const s = quoteIdent(schema);
  const latest = migrations.at(-1)?.version ?? 0;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK, schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)`,
    );
    const row = await client.query<{ v: number | null }>(`SELECT MAX(version) AS v FROM ${s}.schema_migrations`);
    const current = row.rows[0]?.v ?? 0;
    if (current > latest) {
      throw new UserError(
        `PostgreSQL store ${label} (schema ${schema}) has schema version ${current}, newer than this AGL supports (${latest}). Upgrade @agl/store, or use another schema.`,
      );
    }
    const applied: number[] = [];
    for (const m of migrations) {
      if (m.version <= current) continue;
      await client.query(m.sql(s));
      await client.query(`INSERT INTO ${s}.schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`, [
        m.version,
        m.name,
        Date.now() / 1000,
      ]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** A schema name that needs no quoting rules beyond double quotes: letters, digits, underscores. */
export function validSchemaName(schema: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema);
}

/** `"schema"`, for names that passed {@link validSchemaName}. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
