import type Database from 'better-sqlite3';
import { SPAN_ANNOTATION } from '@agl/core/semconv';
import { TRAFFIC_HOUR, type TrafficRewardRow, type TrafficRows, type TrafficRowsQuery } from '../engine/traffic-rows';

// Key expressions of a rollout row (`X` is NEW, OLD or a table alias); see `TrafficGroupRow` for the encoding.
const hourOf = (x: string): string => `(CAST(${x}.start_time AS INTEGER) / ${TRAFFIC_HOUR})`;
const modeOf = (x: string): string => `COALESCE(${x}.mode, '')`;
const metaOf = (x: string, key: string): string =>
  `(CASE json_type(${x}.doc, '$.metadata.${key}') WHEN 'text' THEN ':' || json_extract(${x}.doc, '$.metadata.${key}') ELSE '' END)`;
const failedOf = (x: string): string => `(${x}.status = 'failed')`;
const keyOf = (x: string): string[] => [
  hourOf(x),
  modeOf(x),
  metaOf(x, 'source'),
  metaOf(x, 'agent_name'),
  failedOf(x),
];
const KEY_COLUMNS = ['hour', 'mode', 'source', 'agent', 'failed'];
const keyMatches = (x: string): string => KEY_COLUMNS.map((c, i) => `${c} = ${keyOf(x)[i]}`).join(' AND ');
const bump = (x: string): string =>
  `INSERT INTO traffic_hours (${KEY_COLUMNS.join(', ')}, n) VALUES (${keyOf(x).join(', ')}, 1)
     ON CONFLICT (${KEY_COLUMNS.join(', ')}) DO UPDATE SET n = n + 1;`;
const drop = (x: string): string => `UPDATE traffic_hours SET n = n - 1 WHERE ${keyMatches(x)};`;
const ANNOTATION = `'${SPAN_ANNOTATION}'`;
/** A span row's attribute map as JSON text (rows from before migration 2 keep it inside `doc`). */
const attributesOf = (x: string): string => `COALESCE(${x}.attributes, json_extract(${x}.doc, '$.attributes'))`;
/** The common reward layout: `agentlightning.reward.0.value` when it is a number, else NULL (read in JS then). */
const rewardOf = (x: string): string =>
  `(CASE WHEN json_type(${attributesOf(x)}, '$."agentlightning.reward.0.value"') IN ('integer', 'real')
     THEN json_extract(${attributesOf(x)}, '$."agentlightning.reward.0.value"') END)`;
/** The columns of a `traffic_annotations` row for span row `x` of rollout row `r` (a SELECT list, FROM follows). */
const annotationRow = (x: string): string =>
  `(start_time, span_seq, rollout_id, attempt_seq, sequence_id, mode, source, agent, failed, reward, reward_source,
    attributes)
   SELECT r.start_time, ${x}.seq, ${x}.rollout_id,
     (SELECT a.sequence_id FROM attempts a WHERE a.rollout_id = ${x}.rollout_id AND a.attempt_id = ${x}.attempt_id),
     ${x}.sequence_id, ${keyOf('r').slice(1).join(', ')}, ${rewardOf(x)},
     json_extract(${attributesOf(x)}, '$."agl.reward.source"'),
     CASE WHEN ${rewardOf(x)} IS NULL THEN ${attributesOf(x)} END`;

/**
 * Migration 3 of the SQLite store: the live-traffic rollup. `traffic_hours` counts rollouts per hour of start and key
 * (kept by triggers on `rollouts`, so every writer, in any process, keeps it right); `traffic_annotations` indexes the
 * annotation spans (rewards, feedback) by their rollout's start time. Both are filled from existing rows.
 */
export const TRAFFIC_MIGRATION_SQL = `
  CREATE INDEX IF NOT EXISTS rollouts_by_start_time ON rollouts(start_time);
  CREATE TABLE traffic_hours (
    hour INTEGER NOT NULL,
    mode TEXT NOT NULL,
    source TEXT NOT NULL,
    agent TEXT NOT NULL,
    failed INTEGER NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (hour, mode, source, agent, failed)
  ) WITHOUT ROWID;
  INSERT INTO traffic_hours (${KEY_COLUMNS.join(', ')}, n)
    SELECT ${keyOf('r').join(', ')}, COUNT(*) FROM rollouts r GROUP BY 1, 2, 3, 4, 5;
  CREATE TRIGGER traffic_hours_insert AFTER INSERT ON rollouts BEGIN ${bump('NEW')} END;
  CREATE TRIGGER traffic_hours_update AFTER UPDATE ON rollouts
    WHEN OLD.start_time <> NEW.start_time OR OLD.mode IS NOT NEW.mode OR ${failedOf('OLD')} <> ${failedOf('NEW')}
      OR ${metaOf('OLD', 'source')} <> ${metaOf('NEW', 'source')}
      OR ${metaOf('OLD', 'agent_name')} <> ${metaOf('NEW', 'agent_name')}
    BEGIN ${drop('OLD')} ${bump('NEW')} END;
  CREATE TRIGGER traffic_hours_delete AFTER DELETE ON rollouts BEGIN ${drop('OLD')} END;

  CREATE TABLE traffic_annotations (
    start_time REAL NOT NULL,
    span_seq INTEGER NOT NULL,
    rollout_id TEXT NOT NULL,
    attempt_seq INTEGER,
    sequence_id INTEGER NOT NULL,
    mode TEXT NOT NULL,
    source TEXT NOT NULL,
    agent TEXT NOT NULL,
    failed INTEGER NOT NULL,
    reward REAL,
    reward_source TEXT,
    attributes TEXT,
    PRIMARY KEY (start_time, span_seq)
  ) WITHOUT ROWID;
  CREATE INDEX traffic_annotations_by_span ON traffic_annotations(span_seq);
  CREATE INDEX traffic_annotations_by_rollout ON traffic_annotations(rollout_id);
  INSERT INTO traffic_annotations ${annotationRow('s')} FROM spans s JOIN rollouts r ON r.rollout_id = s.rollout_id
    WHERE json_extract(s.doc, '$.name') = ${ANNOTATION};
  CREATE TRIGGER traffic_annotations_insert AFTER INSERT ON spans WHEN json_extract(NEW.doc, '$.name') = ${ANNOTATION}
    BEGIN
      INSERT INTO traffic_annotations ${annotationRow('NEW')} FROM rollouts r WHERE r.rollout_id = NEW.rollout_id;
    END;
  CREATE TRIGGER traffic_annotations_delete AFTER DELETE ON spans
    BEGIN DELETE FROM traffic_annotations WHERE span_seq = OLD.seq; END;
  CREATE TRIGGER traffic_annotations_keys AFTER UPDATE ON rollouts
    WHEN OLD.start_time <> NEW.start_time OR OLD.mode IS NOT NEW.mode OR ${failedOf('OLD')} <> ${failedOf('NEW')}
      OR ${metaOf('OLD', 'source')} <> ${metaOf('NEW', 'source')}
      OR ${metaOf('OLD', 'agent_name')} <> ${metaOf('NEW', 'agent_name')}
    BEGIN
      UPDATE traffic_annotations SET start_time = NEW.start_time, mode = ${modeOf('NEW')},
        source = ${metaOf('NEW', 'source')}, agent = ${metaOf('NEW', 'agent_name')}, failed = ${failedOf('NEW')}
      WHERE rollout_id = NEW.rollout_id;
    END;
  CREATE TRIGGER traffic_annotations_attempt AFTER INSERT ON attempts
    BEGIN
      UPDATE traffic_annotations SET attempt_seq = NEW.sequence_id
      WHERE rollout_id = NEW.rollout_id AND attempt_seq IS NULL
        AND span_seq IN (SELECT seq FROM spans WHERE rollout_id = NEW.rollout_id AND attempt_id = NEW.attempt_id);
    END;
  CREATE TRIGGER traffic_annotations_delete_rollout AFTER DELETE ON rollouts
    BEGIN DELETE FROM traffic_annotations WHERE rollout_id = OLD.rollout_id; END;
`;

const staleHourOf = (x: string): string => `(CAST(${x}.start_time AS INTEGER) / ${TRAFFIC_HOUR})`;
const REWARD_COLUMNS = ['with_feedback', 'feedback_count', 'rewarded', 'reward_sum'];

/**
 * Migration 5 of the SQLite store: the reward rollup. `traffic_reward_hours` holds, per hour of the rollouts' start and
 * key, the reward and feedback sums the traffic view shows (see `TrafficRewardRow`); they depend on the precedence of
 * `findFinalReward` and on reward layouts only JavaScript reads, so triggers only mark an hour stale in
 * `traffic_reward_stale` when one of its annotation rows, or the latest attempt of one of its rollouts, changes (in the
 * writer's transaction, whichever process writes), and the next read of that hour recomputes it
 * (`refreshSqliteTrafficRewards`). Existing files start with every hour that has annotation rows stale.
 */
export const TRAFFIC_REWARD_MIGRATION_SQL = `
  CREATE TABLE traffic_reward_hours (
    ${KEY_COLUMNS.map((c) => `${c} ${c === 'hour' || c === 'failed' ? 'INTEGER' : 'TEXT'} NOT NULL`).join(', ')},
    with_feedback INTEGER NOT NULL,
    feedback_count INTEGER NOT NULL,
    rewarded INTEGER NOT NULL,
    reward_sum REAL NOT NULL,
    PRIMARY KEY (${KEY_COLUMNS.join(', ')})
  ) WITHOUT ROWID;
  CREATE TABLE traffic_reward_stale (hour INTEGER PRIMARY KEY);
  INSERT OR IGNORE INTO traffic_reward_stale (hour) SELECT DISTINCT ${staleHourOf('t')} FROM traffic_annotations t;
  CREATE TRIGGER traffic_reward_stale_insert AFTER INSERT ON traffic_annotations
    BEGIN INSERT OR IGNORE INTO traffic_reward_stale (hour) VALUES (${staleHourOf('NEW')}); END;
  CREATE TRIGGER traffic_reward_stale_delete AFTER DELETE ON traffic_annotations
    BEGIN INSERT OR IGNORE INTO traffic_reward_stale (hour) VALUES (${staleHourOf('OLD')}); END;
  CREATE TRIGGER traffic_reward_stale_update AFTER UPDATE ON traffic_annotations
    BEGIN
      INSERT OR IGNORE INTO traffic_reward_stale (hour) VALUES (${staleHourOf('OLD')});
      INSERT OR IGNORE INTO traffic_reward_stale (hour) VALUES (${staleHourOf('NEW')});
    END;
  CREATE TRIGGER traffic_reward_stale_attempt AFTER INSERT ON attempts
    BEGIN
      INSERT OR IGNORE INTO traffic_reward_stale (hour)
        SELECT DISTINCT ${staleHourOf('t')} FROM traffic_annotations t WHERE t.rollout_id = NEW.rollout_id;
    END;
`;

/** The prepared statements of {@link readSqliteTraffic}. */
export interface TrafficStatements {
  hours: Database.Statement;
  edge: Database.Statement;
  annotations: (sources: boolean) => Database.Statement;
  rewards: Database.Statement;
  stale: Database.Statement;
  clearHour: Database.Statement;
  clearStale: Database.Statement;
  putReward: Database.Statement;
}

/** Prepared statements of {@link readSqliteTraffic}, once per connection. */
export function prepareTraffic(db: Database.Database): TrafficStatements {
  const cached = new Map<string, Database.Statement>();
  const statement = (sql: string): Database.Statement => {
    let stmt = cached.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      cached.set(sql, stmt);
    }
    return stmt;
  };
  return {
    /** Whole hours from the rollup, grouped by bucket (`?` = bucket size in hours). */
    hours: statement(
      `SELECT MIN(hour) AS hour, mode, source, agent, failed, SUM(n) AS n FROM traffic_hours
       WHERE hour >= ? AND hour < ? AND n > 0 GROUP BY hour / CAST(? AS INTEGER), mode, source, agent, failed`,
    ),
    /** Partial hours from the rollouts (`?` = bucket size in hours). */
    edge: statement(
      `SELECT MIN(${hourOf('r')}) AS hour, ${keyOf('r')
        .slice(1)
        .map((e, i) => `${e} AS ${KEY_COLUMNS[i + 1]}`)
        .join(', ')}, COUNT(*) AS n
       FROM rollouts r WHERE r.start_time >= ? AND r.start_time < ? GROUP BY ${hourOf('r')} / CAST(? AS INTEGER), 2, 3, 4, 5`,
    ),
    annotations: (sources: boolean) =>
      statement(
        `SELECT t.rollout_id AS rollout_id, t.start_time AS start_time, t.failed AS failed, t.mode AS mode,
                t.source AS source, t.agent AS agent, t.sequence_id AS sequence_id, t.reward AS reward,
                t.reward_source AS reward_source, t.attributes AS attributes
         FROM traffic_annotations t
         WHERE t.start_time >= ? AND t.start_time < ?
           ${sources ? "AND t.source IN (SELECT ':' || value FROM json_each(?))" : ''}
           AND t.attempt_seq = (SELECT MAX(a.sequence_id) FROM attempts a WHERE a.rollout_id = t.rollout_id)`,
      ),
    /** The reward rollup of whole hours, grouped by bucket (`?` = bucket size in hours). */
    rewards: statement(
      `SELECT MIN(hour) AS hour, mode, source, agent, failed, ${REWARD_COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(', ')}
       FROM traffic_reward_hours WHERE hour >= ? AND hour < ?
       GROUP BY hour / CAST(? AS INTEGER), mode, source, agent, failed`,
    ),
    stale: statement('SELECT hour FROM traffic_reward_stale WHERE hour >= ? AND hour < ? ORDER BY hour'),
    clearHour: statement('DELETE FROM traffic_reward_hours WHERE hour = ?'),
    clearStale: statement('DELETE FROM traffic_reward_stale WHERE hour = ?'),
    putReward: statement(
      `INSERT INTO traffic_reward_hours (${[...KEY_COLUMNS, ...REWARD_COLUMNS].join(', ')})
       VALUES (${[...KEY_COLUMNS, ...REWARD_COLUMNS].map(() => '?').join(', ')})`,
    ),
  };
}

/** The hours in `[fromHour, toHour)` whose reward rollup is stale. */
export function staleSqliteTrafficHours(q: TrafficStatements, fromHour: number, toHour: number): number[] {
  return (q.stale.all(fromHour, toHour) as Array<{ hour: number }>).map((r) => r.hour);
}

/** Replaces the reward rollup of `hours` by `rows` (all of them in those hours). */
export function putSqliteTrafficRewards(
  q: TrafficStatements,
  hours: readonly number[],
  rows: readonly TrafficRewardRow[],
): void {
  for (const hour of hours) q.clearHour.run(hour);
  for (const r of rows) {
    const failed = r.failed === true || r.failed === 1 ? 1 : 0;
    q.putReward.run(
      r.hour,
      r.mode,
      r.source,
      r.agent,
      failed,
      r.with_feedback,
      r.feedback_count,
      r.rewarded,
      r.reward_sum,
    );
  }
}

/**
 * The {@link TrafficRows} of a window: whole hours from the rollup, the partial hours at either edge from the rollouts
 * themselves (through the start-time index), and the annotation spans of rollouts started in the window.
 */
export function readSqliteTraffic(q: TrafficStatements, query: TrafficRowsQuery): TrafficRows {
  const { since, until } = query;
  const per = Math.max(1, Math.round((query.bucketSeconds ?? TRAFFIC_HOUR) / TRAFFIC_HOUR));
  const groups: TrafficRows['groups'] = [];
  const firstWhole = Math.ceil(since / TRAFFIC_HOUR);
  const lastWhole = Math.floor(until / TRAFFIC_HOUR);
  if (query.omit !== 'groups') {
    const edge = (from: number, to: number): void => {
      groups.push(...(q.edge.all(from, to, per) as TrafficRows['groups']));
    };
    if (firstWhole < lastWhole) {
      groups.push(...(q.hours.all(firstWhole, lastWhole, per) as TrafficRows['groups']));
      if (since < firstWhole * TRAFFIC_HOUR) edge(since, firstWhole * TRAFFIC_HOUR);
      if (lastWhole * TRAFFIC_HOUR < until) edge(lastWhole * TRAFFIC_HOUR, until);
    } else edge(since, until);
  }
  const annotations: TrafficRows['annotations'] = [];
  if (query.omit === 'annotations') return { groups, annotations };
  const sources = query.sources ?? null;
  const read = (from: number, to: number): void => {
    const rows =
      sources === null
        ? q.annotations(false).all(from, to)
        : q.annotations(true).all(from, to, JSON.stringify(sources));
    annotations.push(...(rows as TrafficRows['annotations']));
  };
  if (!query.rewardRollup || firstWhole >= lastWhole) {
    read(since, until);
    return { groups, annotations, ...(query.rewardRollup ? { rewards: [] } : {}) };
  }
  // Whole hours from the reward rollup (stale hours named for the caller to refresh), the partial hours at either edge
  // from annotations.
  const staleHours = staleSqliteTrafficHours(q, firstWhole, lastWhole);
  const rewards = q.rewards.all(firstWhole, lastWhole, per) as TrafficRewardRow[];
  if (since < firstWhole * TRAFFIC_HOUR) read(since, firstWhole * TRAFFIC_HOUR);
  if (lastWhole * TRAFFIC_HOUR < until) read(lastWhole * TRAFFIC_HOUR, until);
  return { groups, annotations, rewards, staleHours };
}
