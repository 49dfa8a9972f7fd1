import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { UserError } from '@agl/core/errors';
import { SqliteStorage } from '../sqlite/sqlite-storage';
import { migrate } from '../sqlite/migrations';
import { asyncOverSync, type AsyncStoreDatabase } from '../postgres/async-storage';
import type { PgDatabase } from '../postgres/pg-database';

/** A store database opened for an offline operation (export, import, prune, backup). */
export type OpsDatabase =
  | { kind: 'sqlite'; path: string; raw: Database.Database; db: AsyncStoreDatabase; close(): Promise<void> }
  | { kind: 'postgres'; url: string; schema: string; pg: PgDatabase; db: AsyncStoreDatabase; close(): Promise<void> };

/** True for `postgres://…` and `postgresql://…` URLs. */
export function isPostgresUrl(spec: string): boolean {
  return /^postgres(ql)?:\/\//i.test(spec);
}

/**
 * Opens the store named by `spec`: a `postgres://` URL (schema from `?schema=`, migrated if new) or a SQLite file.
 * `create: false` refuses a SQLite file that does not exist (export, prune and backup never create one).
 */
export async function openOpsDatabase(options: { spec: string; create: boolean }): Promise<OpsDatabase> {
  const { spec } = options;
  if (isPostgresUrl(spec)) {
    const { PgDatabase } = await import('../postgres/pg-database');
    const { migratePg } = await import('../postgres/pg-migrations');
    const pg = new PgDatabase({ connectionString: spec, poolSize: 2 });
    try {
      const client = await pg.connect();
      try {
        await migratePg(client, pg.schema, spec);
      } finally {
        client.release();
      }
    } catch (error) {
      await pg.close().catch(() => undefined);
      throw error;
    }
    return { kind: 'postgres', url: spec, schema: pg.schema, pg, db: pg, close: () => pg.close() };
  }
  if (!options.create && !existsSync(spec)) {
    throw new UserError(
      `SQLite store ${spec} does not exist. Pass the path of an existing store file, or a postgres:// URL.`,
    );
  }
  let raw: Database.Database;
  try {
    raw = new Database(spec, { timeout: 10_000 });
    raw.pragma('journal_mode = WAL');
    migrate(raw, spec);
  } catch (error) {
    throw new UserError(
      `Cannot open SQLite store ${spec}: ${(error as Error).message}. Check the path and permissions.`,
      { cause: error },
    );
  }
  const storage = new SqliteStorage(raw);
  const db = asyncOverSync(storage, {
    begin: (write) => raw.exec(write ? 'BEGIN IMMEDIATE' : 'BEGIN'),
    commit: () => raw.exec('COMMIT'),
    rollback: () => {
      if (raw.inTransaction) raw.exec('ROLLBACK');
    },
    listQueue: () =>
      (raw.prepare('SELECT rollout_id FROM rollout_queue ORDER BY pos').all() as Array<{ rollout_id: string }>).map(
        (r) => r.rollout_id,
      ),
    listSequences: () =>
      (
        raw.prepare('SELECT rollout_id, value FROM span_sequence_ids ORDER BY rollout_id').all() as Array<{
          rollout_id: string;
          value: number;
        }>
      ).map((r): [string, number] => [r.rollout_id, r.value]),
    setLatestResourcesId: (id) => {
      if (id === null) raw.prepare("DELETE FROM store_meta WHERE key = 'latest_resources_id'").run();
      else
        raw
          .prepare(
            "INSERT INTO store_meta (key, value) VALUES ('latest_resources_id', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
          )
          .run(id);
    },
  });
  return {
    kind: 'sqlite',
    path: spec,
    raw,
    db,
    close: async () => {
      if (raw.open) raw.close();
    },
  };
}

/** The spec with a PostgreSQL password masked, for messages. */
export async function describeSpec(spec: string): Promise<string> {
  if (!isPostgresUrl(spec)) return spec;
  const { redactUrl } = await import('../postgres/pg-database');
  return redactUrl(spec);
}
