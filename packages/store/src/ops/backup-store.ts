import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { UserError } from '@agl/core/errors';
import { isPostgresUrl } from './ops-database';

/** Options of {@link backupStore}. */
export interface BackupStoreOptions {
  /** The store: a SQLite file or a `postgres://` URL. */
  db: string;
  /** Backup file to write (SQLite); the suggested dump file name (PostgreSQL). */
  out: string;
}

/** What a backup did: a SQLite copy, or (PostgreSQL) the `pg_dump` commands to run. */
export type BackupResult = { kind: 'sqlite'; out: string; pages: number } | { kind: 'postgres'; guidance: string };

/**
 * SQLite: an online backup (`better-sqlite3` `.backup()`, page by page, consistent even while servers write).
 * PostgreSQL: returns `pg_dump`/`pg_restore` guidance for the store's schema (the database's own tools do this best).
 */
export async function backupStore(options: BackupStoreOptions): Promise<BackupResult> {
  if (isPostgresUrl(options.db)) {
    const { parseConnectionString, redactUrl } = await import('../postgres/pg-database');
    const { url, schema } = parseConnectionString(options.db);
    const shown = redactUrl(url);
    const guidance = [
      `PostgreSQL stores are backed up with PostgreSQL's own tools (consistent while servers keep writing):`,
      `  pg_dump --format=custom --schema=${schema} --file=${options.out} '${shown}'`,
      `Restore into an empty database (or after DROP SCHEMA ${schema} CASCADE):`,
      `  pg_restore --dbname='${shown}' ${options.out}`,
      `Pass the password with PGPASSWORD or ~/.pgpass, not on the command line. For a portable copy that any AGL backend`,
      `can load (e.g. back to SQLite), use: agl store export --db '${shown}' --out store.jsonl`,
    ].join('\n');
    return { kind: 'postgres', guidance };
  }
  if (!existsSync(options.db))
    throw new UserError(`SQLite store ${options.db} does not exist. Pass the path of an existing store file.`);
  if (existsSync(options.out))
    throw new UserError(
      `Backup file ${options.out} already exists. Choose a new --out path (backups never overwrite).`,
    );
  const db = new Database(options.db, { readonly: true, fileMustExist: true });
  try {
    const result = await db.backup(options.out);
    return { kind: 'sqlite', out: options.out, pages: result.totalPages };
  } catch (error) {
    throw new UserError(
      `Backup of ${options.db} to ${options.out} failed: ${(error as Error).message}. Check the path and free space.`,
      { cause: error },
    );
  } finally {
    db.close();
  }
}
