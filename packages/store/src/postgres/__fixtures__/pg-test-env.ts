import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import { postgresTestEnv, type StoreFactoryContext } from '@agl/testing';
import { PostgresStore } from '../index';

const env = await postgresTestEnv((config) => new pg.Client(config), 'PostgreSQL tests');
/**
 * The PostgreSQL the tests use: `AGL_TEST_PG_URL` (start one with `eval "$(tools/ci/start-postgres.sh)"`). Outside CI a
 * missing or unreachable server skips the PostgreSQL tests with a message; in CI (`isCi()`) it fails them.
 */
export const PG_URL = env.url;
/** True when the PostgreSQL tests should run: a reachable server, or CI (where they then fail loudly). */
export const PG_ENABLED = env.enabled;
/** Why PostgreSQL is unusable (null when it is fine); tests assert this is null so CI fails with the reason. */
export const PG_PROBLEM = env.problem;

/** A fresh schema name for one test. */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Drops a test schema (and everything in it). */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const TABLES = [
  'rollouts',
  'attempts',
  'spans',
  'span_sequence_ids',
  'rollout_queue',
  'resources',
  'workers',
  'store_meta',
  'releases',
];

/**
 * Empties a migrated test schema (identities restarted), so a test starts from a store as fresh as a new schema
 * without paying for the migration DDL each time. Does nothing when the schema does not exist yet.
 */
export async function emptySchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  try {
    await client.connect();
    const exists = await client.query(
      'SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2',
      [schema, 'rollouts'],
    );
    if (exists.rowCount === 0) return;
    await client.query(`TRUNCATE ${TABLES.map((t) => `"${schema}".${t}`).join(', ')} RESTART IDENTITY`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A schema that the conformance suite of one test file shares (dropped after the file): `empty()` before each test
 * starts it as fresh as a new schema (migrated once), `open()` opens a PostgresStore on it with the test's clock.
 */
export function conformanceSchema(prefix: string): {
  empty: () => Promise<void>;
  open: (context: StoreFactoryContext, poolSize: number) => Promise<PostgresStore>;
} {
  const schema = freshSchema(prefix);
  afterAll(() => dropSchema(schema));
  return {
    empty: () => emptySchema(schema),
    open: ({ clock, scanDebounceSeconds }, poolSize) =>
      PostgresStore.open({ connectionString: PG_URL, schema, clock, scanDebounceSeconds, poolSize }),
  };
}
