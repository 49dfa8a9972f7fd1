import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { UserError } from '@agl/core/errors';
import { DUMP_FORMAT, DUMP_VERSION, type DumpCounts, type DumpLine } from './dump-format';
import { openOpsDatabase } from './ops-database';

/** Options of {@link exportStore}. */
export interface ExportStoreOptions {
  /** The store: a SQLite file or a `postgres://` URL (`?schema=` selects the schema). */
  db: string;
  /** Output JSON Lines file. */
  out: string;
}

/**
 * Writes every rollout, attempt, span, resource, worker, sequence counter and queue entry of a store to a portable
 * JSON Lines dump, from one consistent read snapshot. {@link importStore} loads it into any backend (SQLite →
 * PostgreSQL migration).
 */
export async function exportStore(options: ExportStoreOptions): Promise<DumpCounts> {
  const opened = await openOpsDatabase({ spec: options.db, create: false });
  const file = createWriteStream(options.out, { encoding: 'utf8' });
  const failed = new Promise<never>((_, reject) => file.once('error', reject));
  failed.catch(() => undefined);
  const write = async (line: DumpLine): Promise<void> => {
    if (!file.write(`${JSON.stringify(line)}\n`)) await Promise.race([once(file, 'drain'), failed]);
  };
  const counts: DumpCounts = { rollouts: 0, attempts: 0, spans: 0, resources: 0, workers: 0, sequences: 0, queued: 0 };
  try {
    await opened.db.read(async (s) => {
      await write({
        kind: 'header',
        format: DUMP_FORMAT,
        version: DUMP_VERSION,
        source: opened.db.name,
        exportedAt: new Date().toISOString(),
      });
      for (const value of await s.listResources()) {
        await write({ kind: 'resources', value });
        counts.resources += 1;
      }
      await write({ kind: 'latestResources', value: await s.getLatestResourcesId() });
      for (const value of await s.listWorkers()) {
        await write({ kind: 'worker', value });
        counts.workers += 1;
      }
      for (const rollout of await s.listRollouts()) {
        await write({ kind: 'rollout', value: rollout });
        counts.rollouts += 1;
        for (const value of await s.listAttempts(rollout.rolloutId)) {
          await write({ kind: 'attempt', value });
          counts.attempts += 1;
        }
        for (const value of await s.listSpans(rollout.rolloutId, null)) {
          await write({ kind: 'span', value });
          counts.spans += 1;
        }
      }
      for (const value of await s.listSequences()) {
        await write({ kind: 'sequence', value });
        counts.sequences += 1;
      }
      const queue = await s.listQueue();
      counts.queued = queue.length;
      await write({ kind: 'queue', value: queue });
      await write({ kind: 'end', counts });
    });
    file.end();
    await Promise.race([once(file, 'finish'), failed]);
  } catch (error) {
    file.destroy();
    if ((error as NodeJS.ErrnoException).code !== undefined && (error as NodeJS.ErrnoException).syscall !== undefined) {
      throw new UserError(
        `Cannot write the dump to ${options.out}: ${(error as Error).message}. Check the path and free space.`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    await opened.close();
  }
  return counts;
}
