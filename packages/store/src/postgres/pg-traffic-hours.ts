import { TRAFFIC_HOUR, type TrafficRows } from '../engine/traffic-rows';

type Rows = <T>(sql: string, params: unknown[]) => Promise<T[]>;

const keyValues = (x: 'OLD' | 'NEW', n: number): string =>
  `(floor(${x}.start_time / ${TRAFFIC_HOUR})::bigint, COALESCE(${x}.mode, ''), COALESCE(':' || ${x}.traffic_source, ''),
    COALESCE(':' || ${x}.traffic_agent, ''), ${x}.status = 'failed', ${n})`;
const COLUMNS = 'hour, mode, source, agent, failed';

/**
 * Part of migration 4 of the PostgreSQL store: the hourly counts of the live-traffic view (the SQLite store's
 * `traffic_hours`). A trigger on `rollouts` adds a delta row (+1 for the new keys, -1 for the old) for every insert,
 * key change and delete, in the writer's transaction; writers only insert, so they never wait on each other. Reads sum
 * compacted rows and deltas; a read that finds deltas in its window first folds them into the compacted rows
 * ({@link compactPgTrafficHours}). Existing rollouts are counted into compacted rows.
 */
export const PG_TRAFFIC_HOURS_MIGRATION = (s: string): string => `
  CREATE TABLE ${s}.traffic_hours (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    hour BIGINT NOT NULL, mode TEXT NOT NULL, source TEXT NOT NULL, agent TEXT NOT NULL, failed BOOLEAN NOT NULL,
    n INTEGER NOT NULL, compacted BOOLEAN NOT NULL DEFAULT false
  );
  CREATE UNIQUE INDEX traffic_hours_compacted ON ${s}.traffic_hours (${COLUMNS}) WHERE compacted;
  CREATE INDEX traffic_hours_deltas ON ${s}.traffic_hours (hour) WHERE NOT compacted;
  INSERT INTO ${s}.traffic_hours (${COLUMNS}, n, compacted)
    SELECT floor(start_time / ${TRAFFIC_HOUR})::bigint, COALESCE(mode, ''), COALESCE(':' || traffic_source, ''),
      COALESCE(':' || traffic_agent, ''), status = 'failed', COUNT(*), true
    FROM ${s}.rollouts GROUP BY 1, 2, 3, 4, 5;
  CREATE FUNCTION ${s}.traffic_hours_count() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF TG_OP <> 'INSERT' THEN
      INSERT INTO ${s}.traffic_hours (${COLUMNS}, n) VALUES ${keyValues('OLD', -1)};
    END IF;
    IF TG_OP <> 'DELETE' THEN
      INSERT INTO ${s}.traffic_hours (${COLUMNS}, n) VALUES ${keyValues('NEW', 1)};
    END IF;
    RETURN NULL;
  END $fn$;
  CREATE TRIGGER traffic_hours_insert_delete AFTER INSERT OR DELETE ON ${s}.rollouts
    FOR EACH ROW EXECUTE FUNCTION ${s}.traffic_hours_count();
  CREATE TRIGGER traffic_hours_update AFTER UPDATE ON ${s}.rollouts
    FOR EACH ROW WHEN (OLD.start_time IS DISTINCT FROM NEW.start_time OR OLD.mode IS DISTINCT FROM NEW.mode
      OR (OLD.status = 'failed') IS DISTINCT FROM (NEW.status = 'failed')
      OR OLD.traffic_source IS DISTINCT FROM NEW.traffic_source OR OLD.traffic_agent IS DISTINCT FROM NEW.traffic_agent)
    EXECUTE FUNCTION ${s}.traffic_hours_count();
`;

/** How many delta rows of `[fromHour, toHour)` are not yet folded into the compacted counts (counted up to 10,000). */
export async function countPgTrafficDeltas(rows: Rows, s: string, fromHour: number, toHour: number): Promise<number> {
  const [found] = await rows<{ n: number }>(
    `SELECT COUNT(*)::int AS n FROM (
       SELECT 1 FROM ${s}.traffic_hours WHERE NOT compacted AND hour >= $1 AND hour < $2 LIMIT 10000
     ) d`,
    [fromHour, toHour],
  );
  return found?.n ?? 0;
}

/**
 * Folds the committed delta rows of `[fromHour, toHour)` into the compacted counts, in the caller's write transaction,
 * under a transaction-scoped advisory lock (one compaction at a time; writers never take it). Deltas of transactions
 * still open are not seen, and stay for the next compaction.
 */
export async function compactPgTrafficHours(rows: Rows, s: string, fromHour: number, toHour: number): Promise<void> {
  await rows(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`${s}.traffic_hours`]);
  await rows(
    `WITH moved AS (
       DELETE FROM ${s}.traffic_hours WHERE NOT compacted AND hour >= $1 AND hour < $2 RETURNING ${COLUMNS}, n
     )
     INSERT INTO ${s}.traffic_hours (${COLUMNS}, n, compacted)
       SELECT ${COLUMNS}, SUM(n), true FROM moved GROUP BY 1, 2, 3, 4, 5
     ON CONFLICT (${COLUMNS}) WHERE compacted DO UPDATE SET n = ${s}.traffic_hours.n + EXCLUDED.n`,
    [fromHour, toHour],
  );
}

/** The counts of the whole hours `[fromHour, toHour)`, grouped by buckets of `per` hours (compacted rows and deltas). */
export async function readPgTrafficHours(
  rows: Rows,
  s: string,
  fromHour: number,
  toHour: number,
  per: number,
): Promise<TrafficRows['groups']> {
  const found = await rows<TrafficRows['groups'][number] & { hour: string }>(
    `SELECT MIN(hour) AS hour, mode, source, agent, failed, SUM(n)::int AS n FROM (
       SELECT ${COLUMNS}, SUM(n) AS n FROM ${s}.traffic_hours WHERE hour >= $1 AND hour < $2
       GROUP BY 1, 2, 3, 4, 5 HAVING SUM(n) > 0
     ) h GROUP BY hour / $3::bigint, mode, source, agent, failed`,
    [fromHour, toHour, per],
  );
  return found.map((g) => ({ ...g, hour: Number(g.hour) }));
}
