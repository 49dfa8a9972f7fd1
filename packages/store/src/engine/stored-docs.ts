import { UserError } from '@agl/core/errors';
import { SCHEMA_VERSION } from '@agl/core/schema';

/** A row of a SQL storage (SQLite, PostgreSQL): a JSON document and the schema version it was written with. */
export type DocRow = { doc: string; schema_version: number };

/** Rollout fields that `pageRollouts` can sort on in SQL, with their columns; others fall back to the generic path. */
export const ROLLOUT_SORT_COLUMNS: Readonly<Record<string, string>> = {
  startTime: 'start_time',
  endTime: 'end_time',
  rolloutId: 'rollout_id',
  status: 'status',
};

/**
 * Reads a stored JSON document. Documents carry the schema version they were written with; a version from a newer AGL
 * is refused, older versions would be upgraded here (there is only version 1 so far).
 */
export function readDoc<T>(row: DocRow | undefined): T | null {
  if (!row) return null;
  if (row.schema_version > SCHEMA_VERSION) {
    throw new UserError(
      `A stored document has schema version ${row.schema_version}, newer than this AGL (${SCHEMA_VERSION}). Upgrade @agl/store.`,
    );
  }
  return JSON.parse(row.doc) as T;
}

/** {@link readDoc} of each row (none may be missing). */
export function readDocs<T>(rows: DocRow[]): T[] {
  return rows.map((row) => readDoc<T>(row)!);
}
