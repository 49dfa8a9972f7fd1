import { UserError } from '@agl/core/errors';
import { openOpsDatabase } from './ops-database';

/** Options of {@link pruneStore}: exactly one of `before` and `keepLast`. */
export interface PruneStoreOptions {
  /** The store: a SQLite file or a `postgres://` URL. */
  db: string;
  /** Delete finished rollouts that ended before this time. */
  before?: Date;
  /** Keep the newest N rollouts (by creation order); delete older finished ones. */
  keepLast?: number;
  /** Count only; delete nothing. */
  dryRun?: boolean;
}

/** What a prune removed (or would remove, with `dryRun`). */
export interface PruneResult {
  rollouts: number;
  attempts: number;
  spans: number;
}

const FINISHED = "status IN ('succeeded', 'failed', 'cancelled')";

/**
 * Retention: deletes finished rollouts (succeeded, failed, cancelled) with their attempts, spans and counters, in one
 * transaction. Rollouts still queued or running are never deleted. Resources and workers stay.
 */
export async function pruneStore(options: PruneStoreOptions): Promise<PruneResult> {
  const { before, keepLast } = options;
  if ((before === undefined) === (keepLast === undefined)) {
    throw new UserError('Prune needs exactly one of --before <date> or --keep-last <n>.');
  }
  if (before !== undefined && Number.isNaN(before.getTime()))
    throw new UserError('Invalid --before date: use an ISO date such as 2026-01-31 or 2026-01-31T12:00:00Z.');
  if (keepLast !== undefined && (!Number.isInteger(keepLast) || keepLast < 0))
    throw new UserError(`Invalid --keep-last ${keepLast}: use a whole number ≥ 0.`);
  const cutoff = before === undefined ? null : before.getTime() / 1000;
  const opened = await openOpsDatabase({ spec: options.db, create: false });
  try {
    if (opened.kind === 'sqlite') {
      const raw = opened.raw;
      const where =
        cutoff !== null
          ? `${FINISHED} AND COALESCE(end_time, start_time) < ?`
          : `${FINISHED} AND seq NOT IN (SELECT seq FROM rollouts ORDER BY seq DESC LIMIT ?)`;
      const run = raw.transaction((): PruneResult => {
        const ids = (
          raw.prepare(`SELECT rollout_id FROM rollouts WHERE ${where}`).all(cutoff ?? keepLast) as Array<{
            rollout_id: string;
          }>
        ).map((r) => r.rollout_id);
        const list = JSON.stringify(ids);
        const inList = 'rollout_id IN (SELECT value FROM json_each(?))';
        const count = (table: string): number =>
          (raw.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${inList}`).get(list) as { n: number }).n;
        const result = { rollouts: ids.length, attempts: count('attempts'), spans: count('spans') };
        if (!options.dryRun) {
          for (const table of ['spans', 'attempts', 'span_sequence_ids', 'rollout_queue', 'rollouts'])
            raw.prepare(`DELETE FROM ${table} WHERE ${inList}`).run(list);
        }
        return result;
      });
      const result = run.immediate();
      if (!options.dryRun && result.rollouts > 0) raw.pragma('wal_checkpoint(TRUNCATE)');
      return result;
    }
    const client = await opened.pg.connect();
    const s = opened.pg.qschema;
    try {
      await client.query('BEGIN');
      const where =
        cutoff !== null
          ? `${FINISHED} AND COALESCE(end_time, start_time) < $1`
          : `${FINISHED} AND seq NOT IN (SELECT seq FROM ${s}.rollouts ORDER BY seq DESC LIMIT $1)`;
      const ids = (
        await client.query<{ rollout_id: string }>(`SELECT rollout_id FROM ${s}.rollouts WHERE ${where} FOR UPDATE`, [
          cutoff ?? keepLast,
        ])
      ).rows.map((r) => r.rollout_id);
      const count = async (table: string): Promise<number> =>
        Number(
          (
            await client.query<{ n: string }>(
              `SELECT COUNT(*) AS n FROM ${s}.${table} WHERE rollout_id = ANY($1::text[])`,
              [ids],
            )
          ).rows[0]?.n ?? 0,
        );
      const result = { rollouts: ids.length, attempts: await count('attempts'), spans: await count('spans') };
      if (!options.dryRun) {
        for (const table of ['spans', 'attempts', 'span_sequence_ids', 'rollout_queue', 'rollouts']) {
          await client.query(`DELETE FROM ${s}.${table} WHERE rollout_id = ANY($1::text[])`, [ids]);
        }
      }
      await client.query(options.dryRun ? 'ROLLBACK' : 'COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  } finally {
    await opened.close();
  }
}
