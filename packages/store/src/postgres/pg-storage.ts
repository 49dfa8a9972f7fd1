import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { PoolClient } from 'pg';
import {
  SCHEMA_VERSION,
  TERMINAL_STATUSES,
  isTerminalStatus,
  type Attempt,
  type Release,
  type ResourcesUpdate,
  type Rollout,
  type RolloutStatus,
  type Span,
  type Worker,
} from '@agl/core/schema';
import type { AttemptRef } from '@agl/core/store';
import type { RolloutPageQuery } from '../engine/storage';
import { ROLLOUT_SORT_COLUMNS as SORT_COLUMNS, readDoc, readDocs, type DocRow as Row } from '../engine/stored-docs';
import type { TrafficRewardRow, TrafficRows, TrafficRowsQuery } from '../engine/traffic-rows';
import type { AsyncStorageTx } from './async-storage';
import { putPgTrafficRewards, readPgTraffic, stalePgTrafficHours } from './pg-traffic';
import { compactPgTrafficHours } from './pg-traffic-hours';

const V = SCHEMA_VERSION;
/** Rows per multi-row span INSERT (10 parameters a row; PostgreSQL allows 65 535 per statement). */
const SPAN_CHUNK = 500;
/** Largest NOTIFY payload we send (PostgreSQL's limit is 8000 bytes). */
const NOTIFY_BYTES = 7000;
/** Statement text → prepared statement name (shared by every connection; each prepares it once). */
const STATEMENT_NAMES = new Map<string, string>();

/** The tables of documents kept by one id, and that id's column. */
const KEY_COLUMNS = { resources: 'resources_id', workers: 'worker_id', releases: 'release_id' } as const;
type KeyedTable = keyof typeof KEY_COLUMNS;

/** Span attributes as JSONB text, or null when PostgreSQL's JSONB cannot hold them (a `\u0000` in a string). */
function attributesJson(span: Span): string | null {
  const text = JSON.stringify(span.attributes ?? {});
  return text.includes('\\u0000') ? null : text;
}

/** A change notice as it travels over NOTIFY: terminal rollout ids, and whether something was enqueued. */
export interface ChangeNotice {
  /** Rollout ids with their new status. */
  r?: Array<[string, RolloutStatus]>;
  /** Number of rollouts enqueued. */
  q?: number;
}

/**
 * {@link AsyncStorageTx} on one pooled PostgreSQL connection inside an open transaction. In a write transaction,
 * reads of rollouts and workers take row locks (`FOR UPDATE`) so concurrent servers serialize their read-modify-write
 * cycles per rollout; the queue is popped with `FOR UPDATE SKIP LOCKED`, so dequeuers never wait on each other.
 */
export class PgStorageTx implements AsyncStorageTx {
  readonly writable: boolean;
  readonly #c: PoolClient;
  readonly #s: string;
  readonly #channel: string;
  /**
   * Write transactions only: documents of rollouts this transaction holds the row lock of (read `FOR UPDATE` or
   * inserted), and their latest attempts. Every writer of a rollout or its attempts locks the rollout first, so these
   * stay exact until COMMIT and spare the engine's re-reads a round trip each.
   */
  readonly #rolloutCache: Map<string, string> | null;
  readonly #latestCache: Map<string, string> | null;

  constructor(options: { client: PoolClient; schema: string; writable: boolean; channel: string }) {
    this.#c = options.client;
    this.#s = options.schema;
    this.writable = options.writable;
    this.#channel = options.channel;
    this.#rolloutCache = options.writable ? new Map() : null;
    this.#latestCache = options.writable ? new Map() : null;
  }

  get #lock(): string {
    return this.writable ? ' FOR UPDATE' : '';
  }

  /**
   * Runs one statement. Fixed-shape statements are named, so each pooled connection parses and plans them once
   * (variable-shape ones, such as multi-row inserts, stay unnamed).
   */
  #run(sql: string, params: unknown[] = [], fixed = true): Promise<pg.QueryResult> {
    if (!fixed) return this.#c.query(sql, params);
    let name = STATEMENT_NAMES.get(sql);
    if (name === undefined) {
      name = `agl_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
      STATEMENT_NAMES.set(sql, name);
    }
    return this.#c.query({ name, text: sql, values: params });
  }

  async #rows<T>(sql: string, params: unknown[] = [], fixed = true): Promise<T[]> {
    return (await this.#run(sql, params, fixed)).rows as T[];
  }

  async #count(table: string): Promise<number> {
    const [row] = await this.#rows<{ n: string }>(`SELECT COUNT(*) AS n FROM ${this.#s}.${table}`);
    return Number(row?.n ?? 0);
  }

  async getRollout(rolloutId: string): Promise<Rollout | null> {
    const cached = this.#rolloutCache?.get(rolloutId);
    if (cached !== undefined) return JSON.parse(cached) as Rollout;
    const [row] = await this.#rows<Row>(
      `SELECT doc, schema_version FROM ${this.#s}.rollouts WHERE rollout_id = $1${this.#lock}`,
      [rolloutId],
    );
    const rollout = readDoc<Rollout>(row);
    if (rollout && row) this.#rolloutCache?.set(rolloutId, row.doc);
    return rollout;
  }

  /** The rollouts among `rolloutIds` that exist, read in one statement (locked in id order in a write transaction). */
  async getRollouts(rolloutIds: readonly string[]): Promise<Map<string, Rollout>> {
    const out = new Map<string, Rollout>();
    if (rolloutIds.length === 0) return out;
    const rows = await this.#rows<Row & { rollout_id: string }>(
      `SELECT rollout_id, doc, schema_version FROM ${this.#s}.rollouts WHERE rollout_id = ANY($1::text[])
       ORDER BY rollout_id COLLATE "C"${this.#lock}`,
      [[...rolloutIds]],
    );
    for (const row of rows) {
      const rollout = readDoc<Rollout>(row);
      if (!rollout) continue;
      out.set(row.rollout_id, rollout);
      this.#rolloutCache?.set(row.rollout_id, row.doc);
    }
    return out;
  }

  async insertRollouts(rollouts: readonly Rollout[]): Promise<void> {
    if (rollouts.length === 0) return;
    const values: string[] = [];
    const params: unknown[] = [];
    for (const r of rollouts) {
      const b = params.length;
      values.push(`($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, ${V}, $${b + 6})`);
      params.push(r.rolloutId, r.status, r.startTime, r.endTime, r.mode, JSON.stringify(r));
    }
    await this.#run(
      `INSERT INTO ${this.#s}.rollouts (rollout_id, status, start_time, end_time, mode, schema_version, doc) VALUES ${values.join(', ')}`,
      params,
      values.length <= 16,
    );
    for (const r of rollouts) this.#rolloutCache?.set(r.rolloutId, JSON.stringify(r));
  }

  async updateRollout(r: Rollout): Promise<void> {
    const doc = JSON.stringify(r);
    this.#rolloutCache?.set(r.rolloutId, doc);
    await this.#run(
      `UPDATE ${this.#s}.rollouts SET status = $1, start_time = $2, end_time = $3, mode = $4, schema_version = ${V}, doc = $5 WHERE rollout_id = $6`,
      [r.status, r.startTime, r.endTime, r.mode, doc, r.rolloutId],
    );
  }

  async listRollouts(where?: { statuses?: readonly RolloutStatus[]; ids?: readonly string[] }): Promise<Rollout[]> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (where?.statuses) {
      params.push([...where.statuses]);
      conditions.push(`status = ANY($${params.length}::text[])`);
    }
    if (where?.ids) {
      params.push([...where.ids]);
      conditions.push(`rollout_id = ANY($${params.length}::text[])`);
    }
    const w = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
    return readDocs<Rollout>(
      await this.#rows<Row>(`SELECT doc, schema_version FROM ${this.#s}.rollouts ${w} ORDER BY seq`, params),
    );
  }

  async unfinishedRolloutIds(rolloutIds: readonly string[]): Promise<Set<string>> {
    const rows = await this.#rows<{ rollout_id: string }>(
      `SELECT rollout_id FROM ${this.#s}.rollouts WHERE rollout_id = ANY($1::text[]) AND NOT status = ANY($2::text[])`,
      [[...rolloutIds], [...TERMINAL_STATUSES]],
    );
    return new Set(rows.map((r) => r.rollout_id));
  }

  countRollouts(): Promise<number> {
    return this.#count('rollouts');
  }

  /** One page of rollouts, filtered, sorted and cut in SQL (same semantics as the in-process path). */
  async pageRollouts(query: RolloutPageQuery): Promise<{ items: Rollout[]; total: number } | null> {
    const column = query.sortField === null ? null : SORT_COLUMNS[query.sortField];
    if (column === undefined) return null;
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (query.statuses) {
      params.push([...query.statuses]);
      conditions.push(`status = ANY($${params.length}::text[])`);
    }
    if (query.ids) {
      params.push([...query.ids]);
      conditions.push(`rollout_id = ANY($${params.length}::text[])`);
    }
    if (query.idContains != null) {
      params.push(query.idContains);
      conditions.push(`strpos(rollout_id, $${params.length}) > 0`);
    }
    if (query.modes) {
      const hasNull = query.modes.includes(null);
      params.push(query.modes.filter((m) => m !== null));
      conditions.push(`(mode = ANY($${params.length}::text[])${hasNull ? ' OR mode IS NULL' : ''})`);
    }
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(query.logic === 'or' ? ' OR ' : ' AND ')}`;
    const dir = query.order === 'desc' ? 'DESC' : 'ASC';
    // COLLATE "C": byte order, the same as JavaScript's string comparison of the in-process path.
    const sortExpr = column === 'rollout_id' || column === 'status' ? `${column} COLLATE "C"` : column;
    const order = column === null ? `seq ${dir}` : `(${column} IS NULL) ${dir}, ${sortExpr} ${dir}, seq ASC`;
    const [count] = await this.#rows<{ n: string }>(`SELECT COUNT(*) AS n FROM ${this.#s}.rollouts ${where}`, params);
    const limit = query.limit === -1 ? null : Math.max(0, Math.floor(query.limit)); // LIMIT NULL = no limit
    const rows = await this.#rows<Row>(
      `SELECT doc, schema_version FROM ${this.#s}.rollouts ${where} ORDER BY ${order} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, Math.max(0, Math.floor(query.offset))],
    );
    return { items: readDocs<Rollout>(rows), total: Number(count?.n ?? 0) };
  }

  async getAttempt(rolloutId: string, attemptId: string): Promise<Attempt | null> {
    const [row] = await this.#rows<Row>(
      `SELECT doc, schema_version FROM ${this.#s}.attempts WHERE rollout_id = $1 AND attempt_id = $2`,
      [rolloutId, attemptId],
    );
    return readDoc<Attempt>(row);
  }

  async getLatestAttempt(rolloutId: string): Promise<Attempt | null> {
    const cached = this.#latestCache?.get(rolloutId);
    if (cached !== undefined) return JSON.parse(cached) as Attempt;
    const [row] = await this.#rows<Row>(
      `SELECT doc, schema_version FROM ${this.#s}.attempts WHERE rollout_id = $1 ORDER BY sequence_id DESC LIMIT 1`,
      [rolloutId],
    );
    const attempt = readDoc<Attempt>(row);
    if (attempt && row && this.#rolloutCache?.has(rolloutId)) this.#latestCache?.set(rolloutId, row.doc);
    return attempt;
  }

  async getLatestAttempts(rolloutIds: readonly string[]): Promise<Map<string, Attempt>> {
    const out = new Map<string, Attempt>();
    if (rolloutIds.length === 0) return out;
    const rows = await this.#rows<Row>(
      `SELECT DISTINCT ON (rollout_id) doc, schema_version FROM ${this.#s}.attempts WHERE rollout_id = ANY($1::text[]) ORDER BY rollout_id, sequence_id DESC`,
      [[...rolloutIds]],
    );
    for (const a of readDocs<Attempt>(rows)) out.set(a.rolloutId, a);
    return out;
  }

  async listAttempts(rolloutId: string): Promise<Attempt[]> {
    return readDocs<Attempt>(
      await this.#rows<Row>(
        `SELECT doc, schema_version FROM ${this.#s}.attempts WHERE rollout_id = $1 ORDER BY sequence_id`,
        [rolloutId],
      ),
    );
  }

  countAttempts(): Promise<number> {
    return this.#count('attempts');
  }

  async insertAttempt(a: Attempt): Promise<void> {
    if (this.#rolloutCache?.has(a.rolloutId)) this.#latestCache?.set(a.rolloutId, JSON.stringify(a));
    await this.#run(
      `INSERT INTO ${this.#s}.attempts (rollout_id, attempt_id, sequence_id, schema_version, doc) VALUES ($1, $2, $3, ${V}, $4)`,
      [a.rolloutId, a.attemptId, a.sequenceId, JSON.stringify(a)],
    );
  }

  /** Multi-row {@link PgStorageTx.insertAttempt}, in chunks. */
  async insertAttempts(attempts: readonly Attempt[]): Promise<number> {
    for (let start = 0; start < attempts.length; start += SPAN_CHUNK) {
      const chunk = attempts.slice(start, start + SPAN_CHUNK);
      const values: string[] = [];
      const params: unknown[] = [];
      for (const a of chunk) {
        const b = params.length;
        values.push(`($${b + 1}, $${b + 2}, $${b + 3}, ${V}, $${b + 4})`);
        const doc = JSON.stringify(a);
        params.push(a.rolloutId, a.attemptId, a.sequenceId, doc);
        if (this.#rolloutCache?.has(a.rolloutId)) this.#latestCache?.set(a.rolloutId, doc);
      }
      await this.#run(
        `INSERT INTO ${this.#s}.attempts (rollout_id, attempt_id, sequence_id, schema_version, doc) VALUES ${values.join(', ')}`,
        params,
        values.length <= 16,
      );
    }
    return attempts.length;
  }

  async updateAttempt(a: Attempt): Promise<void> {
    const latest = this.#latestCache?.get(a.rolloutId);
    if (latest !== undefined && (JSON.parse(latest) as Attempt).attemptId === a.attemptId)
      this.#latestCache?.set(a.rolloutId, JSON.stringify(a));
    await this.#run(
      `UPDATE ${this.#s}.attempts SET schema_version = ${V}, doc = $1 WHERE rollout_id = $2 AND attempt_id = $3`,
      [JSON.stringify(a), a.rolloutId, a.attemptId],
    );
  }

  /** Multi-row `INSERT … ON CONFLICT DO NOTHING RETURNING`, in chunks; returns the spans actually inserted. */
  async insertSpans(spans: readonly Span[]): Promise<Span[]> {
    const inserted: Span[] = [];
    for (let start = 0; start < spans.length; start += SPAN_CHUNK) {
      const chunk = spans.slice(start, start + SPAN_CHUNK);
      const values: string[] = [];
      const params: unknown[] = [];
      for (const s of chunk) {
        const b = params.length;
        values.push(
          `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}::jsonb, ${V}, $${b + 8})`,
        );
        params.push(
          s.rolloutId,
          s.attemptId,
          s.spanId,
          s.sequenceId,
          s.traceId,
          s.name,
          attributesJson(s),
          JSON.stringify(s),
        );
      }
      const rows = await this.#rows<{ rollout_id: string; attempt_id: string; span_id: string }>(
        `INSERT INTO ${this.#s}.spans (rollout_id, attempt_id, span_id, sequence_id, trace_id, name, attributes, schema_version, doc)
         VALUES ${values.join(', ')} ON CONFLICT (rollout_id, attempt_id, span_id) DO NOTHING RETURNING rollout_id, attempt_id, span_id`,
        params,
        values.length <= 16,
      );
      const fresh = new Set(rows.map((r) => `${r.rollout_id}\u0000${r.attempt_id}\u0000${r.span_id}`));
      for (const s of chunk) {
        const key = `${s.rolloutId}\u0000${s.attemptId}\u0000${s.spanId}`;
        if (fresh.delete(key)) inserted.push(s); // the first of in-batch duplicates is the one that landed
      }
    }
    return inserted;
  }

  async listSpans(rolloutId: string, attemptId: string | null): Promise<Span[]> {
    const rows =
      attemptId === null
        ? await this.#rows<Row>(`SELECT doc, schema_version FROM ${this.#s}.spans WHERE rollout_id = $1 ORDER BY seq`, [
            rolloutId,
          ])
        : await this.#rows<Row>(
            `SELECT doc, schema_version FROM ${this.#s}.spans WHERE rollout_id = $1 AND attempt_id = $2 ORDER BY seq`,
            [rolloutId, attemptId],
          );
    return readDocs<Span>(rows);
  }

  /** The live-traffic rows of a window (`pg-traffic.ts`). */
  trafficRows(query: TrafficRowsQuery): Promise<TrafficRows> {
    return readPgTraffic((sql, params) => this.#rows(sql, params), this.#s, query);
  }

  /** Hours of the traffic reward rollup marked stale, the marks deleted (`pg-traffic.ts`, migration 4). */
  takeStaleTrafficHours(fromHour: number, toHour: number): Promise<number[]> {
    return stalePgTrafficHours((sql, params) => this.#rows(sql, params), this.#s, fromHour, toHour, true);
  }

  /** Folds the hourly traffic counts' delta rows of the hours (`pg-traffic-hours.ts`). */
  compactTrafficHours(fromHour: number, toHour: number): Promise<void> {
    return compactPgTrafficHours((sql, params) => this.#rows(sql, params), this.#s, fromHour, toHour);
  }

  putTrafficRewards(hours: readonly number[], rows: readonly TrafficRewardRow[]): Promise<void> {
    return putPgTrafficRewards((sql, params) => this.#rows(sql, params, false), this.#s, hours, rows);
  }

  async listNamedSpansOfAttempts(attempts: readonly AttemptRef[], name: string): Promise<Span[]> {
    if (attempts.length === 0) return [];
    const rows = await this.#rows<Row>(
      `SELECT s.doc, s.schema_version FROM ${this.#s}.spans s
       JOIN unnest($1::text[], $2::text[]) AS a (rollout_id, attempt_id) USING (rollout_id, attempt_id)
       WHERE s.name = $3 ORDER BY s.seq`,
      [attempts.map((a) => a.rolloutId), attempts.map((a) => a.attemptId), name],
    );
    return readDocs<Span>(rows);
  }

  countSpans(): Promise<number> {
    return this.#count('spans');
  }

  async incrementSequence(rolloutId: string, count: number): Promise<number> {
    const [row] = await this.#rows<{ value: string }>(
      `INSERT INTO ${this.#s}.span_sequence_ids AS t (rollout_id, value) VALUES ($1, $2)
       ON CONFLICT (rollout_id) DO UPDATE SET value = t.value + excluded.value RETURNING value`,
      [rolloutId, count],
    );
    return Number(row!.value);
  }

  async raiseSequence(rolloutId: string, value: number): Promise<void> {
    await this.#run(
      `INSERT INTO ${this.#s}.span_sequence_ids AS t (rollout_id, value) VALUES ($1, $2)
       ON CONFLICT (rollout_id) DO UPDATE SET value = GREATEST(t.value, excluded.value)`,
      [rolloutId, value],
    );
  }

  /** Raises many counters (distinct ids, given in id order) with one statement. */
  async raiseSequences(raises: ReadonlyArray<readonly [string, number]>): Promise<number> {
    if (raises.length === 0) return 0;
    await this.#run(
      `INSERT INTO ${this.#s}.span_sequence_ids AS t (rollout_id, value)
       SELECT * FROM unnest($1::text[], $2::bigint[])
       ON CONFLICT (rollout_id) DO UPDATE SET value = GREATEST(t.value, excluded.value)`,
      [raises.map(([id]) => id), raises.map(([, value]) => value)],
    );
    return raises.length;
  }

  async listSequences(): Promise<Array<[string, number]>> {
    const rows = await this.#rows<{ rollout_id: string; value: string }>(
      `SELECT rollout_id, value FROM ${this.#s}.span_sequence_ids ORDER BY rollout_id`,
    );
    return rows.map((r) => [r.rollout_id, Number(r.value)]);
  }

  async enqueue(rolloutIds: readonly string[]): Promise<void> {
    if (rolloutIds.length === 0) return;
    await this.#run(`INSERT INTO ${this.#s}.rollout_queue (rollout_id) SELECT unnest($1::text[])`, [[...rolloutIds]]);
  }

  /** Pops the oldest queue entry that no other transaction is popping (`FOR UPDATE SKIP LOCKED`). */
  async dequeue(): Promise<string | null> {
    const [row] = await this.#rows<{ rollout_id: string }>(
      `DELETE FROM ${this.#s}.rollout_queue WHERE pos = (
         SELECT pos FROM ${this.#s}.rollout_queue ORDER BY pos LIMIT 1 FOR UPDATE SKIP LOCKED
       ) RETURNING rollout_id`,
    );
    return row ? row.rollout_id : null;
  }

  async isQueued(rolloutId: string): Promise<boolean> {
    return (
      (await this.#rows(`SELECT 1 FROM ${this.#s}.rollout_queue WHERE rollout_id = $1 LIMIT 1`, [rolloutId])).length > 0
    );
  }

  async hasQueued(): Promise<boolean> {
    return (await this.#rows(`SELECT 1 FROM ${this.#s}.rollout_queue LIMIT 1`)).length > 0;
  }

  async listQueue(): Promise<string[]> {
    return (
      await this.#rows<{ rollout_id: string }>(`SELECT rollout_id FROM ${this.#s}.rollout_queue ORDER BY pos`)
    ).map((r) => r.rollout_id);
  }

  /** The document of a `resources` or `workers` row by its id (locked in a write transaction), or null. */
  async #getKeyedDoc<T>(table: KeyedTable, id: string): Promise<T | null> {
    const [row] = await this.#rows<Row>(
      `SELECT doc, schema_version FROM ${this.#s}.${table} WHERE ${KEY_COLUMNS[table]} = $1${this.#lock}`,
      [id],
    );
    return readDoc<T>(row);
  }

  /** Inserts or replaces the document of a `resources` or `workers` row. */
  async #putKeyedDoc(table: KeyedTable, id: string, doc: object): Promise<void> {
    const key = KEY_COLUMNS[table];
    await this.#run(
      `INSERT INTO ${this.#s}.${table} (${key}, schema_version, doc) VALUES ($1, ${V}, $2)
       ON CONFLICT (${key}) DO UPDATE SET schema_version = excluded.schema_version, doc = excluded.doc`,
      [id, JSON.stringify(doc)],
    );
  }

  /** Every document of a `resources` or `workers` table, oldest first. */
  async #listKeyedDocs<T>(table: KeyedTable): Promise<T[]> {
    return readDocs<T>(await this.#rows<Row>(`SELECT doc, schema_version FROM ${this.#s}.${table} ORDER BY seq`));
  }

  getResources(resourcesId: string): Promise<ResourcesUpdate | null> {
    return this.#getKeyedDoc('resources', resourcesId);
  }

  async putResources(r: ResourcesUpdate, options: { latest?: boolean } = {}): Promise<void> {
    await this.#putKeyedDoc('resources', r.resourcesId, r);
    if (options.latest !== false) await this.setLatestResourcesId(r.resourcesId);
  }

  getRelease(releaseId: string): Promise<Release | null> {
    return this.#getKeyedDoc('releases', releaseId);
  }

  putRelease(release: Release): Promise<void> {
    return this.#putKeyedDoc('releases', release.releaseId, release);
  }

  listReleases(): Promise<Release[]> {
    return this.#listKeyedDocs('releases');
  }

  async getLatestResourcesId(): Promise<string | null> {
    const [row] = await this.#rows<{ value: string | null }>(
      `SELECT value FROM ${this.#s}.store_meta WHERE key = 'latest_resources_id'`,
    );
    return row?.value ?? null;
  }

  async setLatestResourcesId(resourcesId: string | null): Promise<void> {
    await this.#run(
      `INSERT INTO ${this.#s}.store_meta (key, value) VALUES ('latest_resources_id', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [resourcesId],
    );
  }

  listResources(): Promise<ResourcesUpdate[]> {
    return this.#listKeyedDocs('resources');
  }

  countResources(): Promise<number> {
    return this.#count('resources');
  }

  getWorker(workerId: string): Promise<Worker | null> {
    return this.#getKeyedDoc('workers', workerId);
  }

  putWorker(w: Worker): Promise<void> {
    return this.#putKeyedDoc('workers', w.workerId, w);
  }

  listWorkers(): Promise<Worker[]> {
    return this.#listKeyedDocs('workers');
  }

  countWorkers(): Promise<number> {
    return this.#count('workers');
  }

  /** Only one server runs the watchdog scan at a time: an advisory lock held until the transaction ends. */
  tryScanLock(): Promise<boolean> {
    return this.tryAdvisoryLock('watchdog');
  }

  /** Tries a cluster-wide lock held until this transaction ends (`pg_try_advisory_xact_lock`); false when taken. */
  async tryAdvisoryLock(key: string): Promise<boolean> {
    const [row] = await this.#rows<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS ok', [
      `${this.#s}:${key}`,
    ]);
    return row?.ok === true;
  }

  /** NOTIFY every server (delivered at COMMIT, dropped on ROLLBACK): terminal rollouts and queue activity. */
  async publishChanges(rollouts: readonly Rollout[], enqueued: number): Promise<void> {
    const terminal = rollouts
      .filter((r) => isTerminalStatus(r.status))
      .map((r): [string, RolloutStatus] => [r.rolloutId, r.status]);
    if (terminal.length === 0 && enqueued === 0) return;
    const notices: ChangeNotice[] = [];
    let current: ChangeNotice = enqueued > 0 ? { q: enqueued } : {};
    let size = 20;
    for (const entry of terminal) {
      const bytes = entry[0].length + 16;
      if (size + bytes > NOTIFY_BYTES) {
        notices.push(current);
        current = {};
        size = 20;
      }
      (current.r ??= []).push(entry);
      size += bytes;
    }
    notices.push(current);
    for (const notice of notices) await this.#run('SELECT pg_notify($1, $2)', [this.#channel, JSON.stringify(notice)]);
  }
}
