import { SPAN_ANNOTATION } from '@agl/core/semconv';
import { countPgTrafficDeltas, readPgTrafficHours } from './pg-traffic-hours';
import { TRAFFIC_HOUR, type TrafficRewardRow, type TrafficRows, type TrafficRowsQuery } from '../engine/traffic-rows';

/** A rollout document's `metadata.<key>` when it is a string; documents holding `\u0000` (JSONB refuses it) give null. */
const metaColumn = (key: string): string =>
  `(CASE WHEN strpos(doc, '\\u0000') = 0 AND jsonb_typeof((doc::jsonb) -> 'metadata' -> '${key}') = 'string'
         THEN (doc::jsonb) -> 'metadata' ->> '${key}' END)`;

/**
 * Migration 2 of the PostgreSQL store: the live-traffic columns. `traffic_source` and `traffic_agent` are stored
 * generated columns (`metadata.source`, `metadata.agent_name`), covered with mode and status by an index on start time,
 * so the traffic view counts a window with an index-only scan; a partial index finds the annotation spans.
 */
export const PG_TRAFFIC_MIGRATION = (s: string): string => `
  ALTER TABLE ${s}.rollouts
    ADD COLUMN traffic_source TEXT GENERATED ALWAYS AS ${metaColumn('source')} STORED,
    ADD COLUMN traffic_agent TEXT GENERATED ALWAYS AS ${metaColumn('agent_name')} STORED;
  CREATE INDEX rollouts_traffic ON ${s}.rollouts (start_time) INCLUDE (mode, status, traffic_source, traffic_agent);
  CREATE INDEX spans_annotations ON ${s}.spans (rollout_id, attempt_id) WHERE name = '${SPAN_ANNOTATION}';
`;

const hourOf = (r: string): string => `floor(${r}.start_time / ${TRAFFIC_HOUR})::bigint`;
const ANNOTATION = `'${SPAN_ANNOTATION}'`;

/**
 * Migration 4 of the PostgreSQL store: the reward rollup (see the SQLite store's migration 5). `traffic_reward_hours`
 * holds the reward and feedback sums per hour of start and key; triggers add a row to `traffic_reward_stale` for the
 * hour of every rollout whose annotation spans, latest attempt or keys change, in the writer's transaction, and the
 * next read of that hour takes the marks and recomputes it. Marks are rows, never updated in place, so writers never
 * wait on each other or on a refresh; a refresh takes only marks already committed.
 */
export const PG_TRAFFIC_REWARD_MIGRATION = (s: string): string => `
  CREATE TABLE ${s}.traffic_reward_hours (
    hour BIGINT NOT NULL, mode TEXT NOT NULL, source TEXT NOT NULL, agent TEXT NOT NULL, failed BOOLEAN NOT NULL,
    with_feedback INTEGER NOT NULL, feedback_count INTEGER NOT NULL, rewarded INTEGER NOT NULL,
    reward_sum DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (hour, mode, source, agent, failed)
  );
  CREATE TABLE ${s}.traffic_reward_stale (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, hour BIGINT NOT NULL);
  CREATE INDEX traffic_reward_stale_by_hour ON ${s}.traffic_reward_stale (hour);
  INSERT INTO ${s}.traffic_reward_stale (hour)
    SELECT DISTINCT ${hourOf('r')} FROM ${s}.rollouts r
    WHERE EXISTS (SELECT 1 FROM ${s}.spans sp WHERE sp.rollout_id = r.rollout_id AND sp.name = ${ANNOTATION});
  CREATE FUNCTION ${s}.traffic_reward_mark() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF TG_TABLE_NAME = 'rollouts' THEN
      IF TG_OP <> 'INSERT' THEN
        INSERT INTO ${s}.traffic_reward_stale (hour) VALUES (floor(OLD.start_time / ${TRAFFIC_HOUR})::bigint);
      END IF;
      IF TG_OP = 'UPDATE' THEN
        INSERT INTO ${s}.traffic_reward_stale (hour) VALUES (floor(NEW.start_time / ${TRAFFIC_HOUR})::bigint);
      END IF;
    ELSIF TG_OP = 'DELETE' THEN
      INSERT INTO ${s}.traffic_reward_stale (hour)
        SELECT ${hourOf('r')} FROM ${s}.rollouts r WHERE r.rollout_id = OLD.rollout_id;
    ELSE
      INSERT INTO ${s}.traffic_reward_stale (hour)
        SELECT ${hourOf('r')} FROM ${s}.rollouts r WHERE r.rollout_id = NEW.rollout_id;
    END IF;
    RETURN NULL;
  END $fn$;
  CREATE TRIGGER traffic_reward_span_insert AFTER INSERT ON ${s}.spans
    FOR EACH ROW WHEN (NEW.name = ${ANNOTATION}) EXECUTE FUNCTION ${s}.traffic_reward_mark();
  CREATE TRIGGER traffic_reward_span_delete AFTER DELETE ON ${s}.spans
    FOR EACH ROW WHEN (OLD.name = ${ANNOTATION}) EXECUTE FUNCTION ${s}.traffic_reward_mark();
  CREATE TRIGGER traffic_reward_attempt AFTER INSERT ON ${s}.attempts
    FOR EACH ROW WHEN (NEW.sequence_id > 1) EXECUTE FUNCTION ${s}.traffic_reward_mark();
  CREATE TRIGGER traffic_reward_rollout_update AFTER UPDATE ON ${s}.rollouts
    FOR EACH ROW WHEN (OLD.start_time IS DISTINCT FROM NEW.start_time OR OLD.mode IS DISTINCT FROM NEW.mode
      OR (OLD.status = 'failed') IS DISTINCT FROM (NEW.status = 'failed')
      OR OLD.traffic_source IS DISTINCT FROM NEW.traffic_source OR OLD.traffic_agent IS DISTINCT FROM NEW.traffic_agent)
    EXECUTE FUNCTION ${s}.traffic_reward_mark();
  CREATE TRIGGER traffic_reward_rollout_delete AFTER DELETE ON ${s}.rollouts
    FOR EACH ROW EXECUTE FUNCTION ${s}.traffic_reward_mark();
`;

type Rows = <T>(sql: string, params: unknown[]) => Promise<T[]>;

/** The hours of `[fromHour, toHour)` with stale marks; with `take`, the marks are deleted (refresh transactions). */
export async function stalePgTrafficHours(
  rows: Rows,
  s: string,
  fromHour: number,
  toHour: number,
  take: boolean,
): Promise<number[]> {
  const found = take
    ? await rows<{ hour: string }>(
        `DELETE FROM ${s}.traffic_reward_stale WHERE hour >= $1 AND hour < $2 RETURNING hour`,
        [fromHour, toHour],
      )
    : await rows<{ hour: string }>(
        `SELECT DISTINCT hour FROM ${s}.traffic_reward_stale WHERE hour >= $1 AND hour < $2`,
        [fromHour, toHour],
      );
  return [...new Set(found.map((r) => Number(r.hour)))].sort((a, b) => a - b);
}

/**
 * Replaces the reward rollup of `hours` by `rows`, under a transaction-scoped advisory lock so that two servers
 * refreshing the same hour take turns.
 */
export async function putPgTrafficRewards(
  rows: Rows,
  s: string,
  hours: readonly number[],
  put: readonly TrafficRewardRow[],
): Promise<void> {
  await rows(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`${s}.traffic_reward_hours`]);
  await rows(`DELETE FROM ${s}.traffic_reward_hours WHERE hour = ANY($1::bigint[])`, [[...hours]]);
  if (put.length === 0) return;
  const column = (f: (r: TrafficRewardRow) => unknown) => put.map(f);
  await rows(
    `INSERT INTO ${s}.traffic_reward_hours
       (hour, mode, source, agent, failed, with_feedback, feedback_count, rewarded, reward_sum)
     SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::int[], $7::int[],
                          $8::int[], $9::float8[])`,
    [
      column((r) => r.hour),
      column((r) => r.mode),
      column((r) => r.source),
      column((r) => r.agent),
      column((r) => r.failed === true || r.failed === 1),
      column((r) => r.with_feedback),
      column((r) => r.feedback_count),
      column((r) => r.rewarded),
      column((r) => r.reward_sum),
    ],
  );
}

const KEYS = (r: string): string =>
  `COALESCE(${r}.mode, '') AS mode, COALESCE(':' || ${r}.traffic_source, '') AS source,
   COALESCE(':' || ${r}.traffic_agent, '') AS agent, (${r}.status = 'failed') AS failed`;

/** Runs the traffic queries on schema `s` with `rows` (a query helper of the storage). */
export async function readPgTraffic(rows: Rows, s: string, query: TrafficRowsQuery): Promise<TrafficRows> {
  const size = query.bucketSeconds ?? TRAFFIC_HOUR;
  const firstWhole = Math.ceil(query.since / TRAFFIC_HOUR);
  const lastWhole = Math.floor(query.until / TRAFFIC_HOUR);
  if (query.rewardRollup && query.omit !== 'annotations') {
    // Whole hours from the reward rollup (stale hours named for the caller to refresh), the edges from the spans.
    const plain = { ...query, rewardRollup: false };
    if (firstWhole >= lastWhole) return { ...(await readPgTraffic(rows, s, plain)), rewards: [] };
    const per = Math.max(1, Math.round(size / TRAFFIC_HOUR));
    const staleHours = await stalePgTrafficHours(rows, s, firstWhole, lastWhole, false);
    const rewards = await rows<TrafficRewardRow & { hour: string }>(
      `SELECT MIN(hour) AS hour, mode, source, agent, failed, SUM(with_feedback)::int AS with_feedback,
              SUM(feedback_count)::int AS feedback_count, SUM(rewarded)::int AS rewarded, SUM(reward_sum) AS reward_sum
       FROM ${s}.traffic_reward_hours WHERE hour >= $1 AND hour < $2
       GROUP BY hour / $3::bigint, mode, source, agent, failed`,
      [firstWhole, lastWhole, per],
    );
    const out: TrafficRows = {
      groups: [],
      annotations: [],
      rewards: rewards.map((r) => ({ ...r, hour: Number(r.hour) })),
      staleHours,
    };
    if (query.omit !== 'groups') {
      const counts = await readPgTraffic(rows, s, { ...plain, omit: 'annotations' });
      out.groups = counts.groups;
      out.deltaRows = counts.deltaRows ?? 0;
    }
    const edge = async (since: number, until: number) =>
      out.annotations.push(...(await readPgTraffic(rows, s, { ...plain, since, until, omit: 'groups' })).annotations);
    if (query.since < firstWhole * TRAFFIC_HOUR) await edge(query.since, firstWhole * TRAFFIC_HOUR);
    if (lastWhole * TRAFFIC_HOUR < query.until) await edge(lastWhole * TRAFFIC_HOUR, query.until);
    return out;
  }
  const edge = (since: number, until: number) =>
    rows<TrafficRows['groups'][number] & { hour: string | number }>(
      `SELECT MIN(floor(r.start_time / ${TRAFFIC_HOUR}))::bigint AS hour, ${KEYS('r')}, COUNT(*)::int AS n
       FROM ${s}.rollouts r WHERE r.start_time >= $1 AND r.start_time < $2
       GROUP BY floor(r.start_time / $3), 2, 3, 4, 5`,
      [since, until, size],
    );
  const groups: Array<TrafficRows['groups'][number] & { hour: string | number }> = [];
  let deltaRows = 0;
  if (query.omit !== 'groups') {
    // Whole hours from the hourly counts (migration 4), the partial hours at either edge from the rollouts.
    if (firstWhole < lastWhole) {
      const per = Math.max(1, Math.round(size / TRAFFIC_HOUR));
      groups.push(...(await readPgTrafficHours(rows, s, firstWhole, lastWhole, per)));
      deltaRows = await countPgTrafficDeltas(rows, s, firstWhole, lastWhole);
      if (query.since < firstWhole * TRAFFIC_HOUR) groups.push(...(await edge(query.since, firstWhole * TRAFFIC_HOUR)));
      if (lastWhole * TRAFFIC_HOUR < query.until) groups.push(...(await edge(lastWhole * TRAFFIC_HOUR, query.until)));
    } else groups.push(...(await edge(query.since, query.until)));
  }
  const sources = query.sources ?? null;
  const annotations =
    query.omit === 'annotations'
      ? []
      : await rows<TrafficRows['annotations'][number]>(
          `SELECT r.rollout_id, r.start_time, ${KEYS('r')}, sp.sequence_id::int AS sequence_id, sp.attributes
           FROM ${s}.rollouts r
           JOIN ${s}.spans sp ON sp.rollout_id = r.rollout_id AND sp.name = $3
           WHERE r.start_time >= $1 AND r.start_time < $2
             ${sources === null ? '' : 'AND r.traffic_source = ANY($4::text[])'}
             AND sp.attempt_id = (SELECT a.attempt_id FROM ${s}.attempts a WHERE a.rollout_id = r.rollout_id
                                  ORDER BY a.sequence_id DESC LIMIT 1)`,
          [query.since, query.until, SPAN_ANNOTATION, ...(sources === null ? [] : [[...sources]])],
        );
  return { groups: groups.map((g) => ({ ...g, hour: Number(g.hour) })), annotations, deltaRows };
}
