import { SPAN_ANNOTATION } from '@agl/core/semconv';
import { TRAFFIC_HOUR, type TrafficRows, type TrafficRowsQuery } from '../engine/traffic-rows';

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

const KEYS = (r: string): string =>
  `COALESCE(${r}.mode, '') AS mode, COALESCE(':' || ${r}.traffic_source, '') AS source,
   COALESCE(':' || ${r}.traffic_agent, '') AS agent, (${r}.status = 'failed') AS failed`;

/** Runs the traffic queries on schema `s` with `rows` (a query helper of the storage). */
export async function readPgTraffic(
  rows: <T>(sql: string, params: unknown[]) => Promise<T[]>,
  s: string,
  query: TrafficRowsQuery,
): Promise<TrafficRows> {
  const size = query.bucketSeconds ?? TRAFFIC_HOUR;
  const groups =
    query.omit === 'groups'
      ? []
      : await rows<TrafficRows['groups'][number] & { hour: string | number }>(
          `SELECT MIN(floor(r.start_time / ${TRAFFIC_HOUR}))::bigint AS hour, ${KEYS('r')}, COUNT(*)::int AS n
           FROM ${s}.rollouts r WHERE r.start_time >= $1 AND r.start_time < $2
           GROUP BY floor(r.start_time / $3), 2, 3, 4, 5`,
          [query.since, query.until, size],
        );
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
  return { groups: groups.map((g) => ({ ...g, hour: Number(g.hour) })), annotations };
}
