import { z } from 'zod';
import { ValidationError } from '../errors/validation-error';

/**
 * Version of the persisted schema. Stored JSON documents and database migrations carry it; readers accept every
 * version up to this one (see `__fixtures__/v1/`).
 */
export const SCHEMA_VERSION = 1;

/** Envelope of a persisted JSON document (store export, fixtures). */
export const StoredDocument = z.object({
  /** The schema version the document was written with (1 today). */
  schemaVersion: z.number().int().min(1),
  /** What the document holds: `rollout`, `attempt`, `span`, `worker`, `resources` or `dump`. */
  kind: z.string().min(1),
  /** The payload, in wire (snake_case) form. */
  data: z.unknown(),
});
/** @see {@link StoredDocument} */
export type StoredDocument = z.infer<typeof StoredDocument>;

/** Wraps a payload with the current schema version. */
export function toStoredDocument(kind: string, data: unknown): StoredDocument {
  return { schemaVersion: SCHEMA_VERSION, kind, data };
}

/** Reads a stored document, refusing versions from the future with a clear error. */
export function readStoredDocument(value: unknown): StoredDocument {
  const doc = StoredDocument.parse(value);
  if (doc.schemaVersion > SCHEMA_VERSION) {
    throw new ValidationError(
      `Stored document has schemaVersion ${doc.schemaVersion}, newer than this AGL (${SCHEMA_VERSION}). Upgrade @agl/core to read it.`,
      [{ path: 'schemaVersion', message: 'from a newer AGL' }],
    );
  }
  return doc;
}
