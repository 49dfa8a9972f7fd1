import type Database from 'better-sqlite3';
import {
  SCHEMA_VERSION,
  TERMINAL_STATUSES,
  type Attempt,
  type Release,
  type ResourcesUpdate,
  type Rollout,
  type RolloutStatus,
  type Span,
  type Worker,
} from '@agl/core/schema';
import type { AttemptRef } from '@agl/core/store';
import {
  type RolloutPageQuery,
  type SerializedSpans,
  type SpanDoc,
  type StoreStorage,
  WRITE_LOCK_BUSY,
} from '../engine/storage';
import { ROLLOUT_SORT_COLUMNS as SORT_COLUMNS, readDoc, readDocs, type DocRow as Row } from '../engine/stored-docs';
import type { TrafficRewardRow, TrafficRows, TrafficRowsQuery } from '../engine/traffic-rows';
import { withLazyAttributes } from './lazy-attributes';
import {
  prepareTraffic,
  putSqliteTrafficRewards,
  readSqliteTraffic,
  staleSqliteTrafficHours,
  type TrafficStatements,
} from './sqlite-traffic';

/** A span row: the document without the attribute map, which is in `attributes` (NULL in rows from before migration 2). */
type SpanRow = Row & { sequence_id: number; attributes: string | null };

/** A span's JSON document without its attribute map: the map is unset for the stringify and put back (cheaper than a copy). */
function docWithoutAttributes(span: Span): string {
  const map = span.attributes;
  (span as { attributes?: Span['attributes'] }).attributes = undefined;
  try {
    return JSON.stringify(span);
  } finally {
    span.attributes = map;
  }
}

/** Spans of rows whose attribute maps are parsed on first access (rows from before migration 2 are parsed whole). */
function readSpans(rows: readonly SpanRow[]): Span[] {
  return rows.map((row) => {
    const span = readDoc<Span>(row)!;
    return row.attributes === null ? span : withLazyAttributes(span, row.attributes);
  });
}

const V = SCHEMA_VERSION;
const TERMINAL_JSON = JSON.stringify(TERMINAL_STATUSES);

/** Prepared statements, compiled once per connection. */
function prepare(db: Database.Database) {
  const sel = 'SELECT doc, schema_version FROM';
  return {
    getRollout: db.prepare(`${sel} rollouts WHERE rollout_id = ?`),
    getRollouts: db.prepare(
      'SELECT rollout_id, doc, schema_version FROM rollouts WHERE rollout_id IN (SELECT value FROM json_each(?))',
    ),
    insertRollout: db.prepare(
      'INSERT INTO rollouts (rollout_id, status, start_time, end_time, mode, schema_version, doc) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    updateRollout: db.prepare(
      'UPDATE rollouts SET status = ?, start_time = ?, end_time = ?, mode = ?, schema_version = ?, doc = ? WHERE rollout_id = ?',
    ),
    listRollouts: db.prepare(`${sel} rollouts ORDER BY seq`),
    listRolloutsByStatus: db.prepare(`${sel} rollouts WHERE status IN (SELECT value FROM json_each(?)) ORDER BY seq`),
    listRolloutsById: db.prepare(`${sel} rollouts WHERE rollout_id IN (SELECT value FROM json_each(?)) ORDER BY seq`),
    listRolloutsByIdAndStatus: db.prepare(
      `${sel} rollouts WHERE rollout_id IN (SELECT value FROM json_each(?)) AND status IN (SELECT value FROM json_each(?)) ORDER BY seq`,
    ),
    unfinishedRolloutIds: db
      .prepare(
        'SELECT rollout_id FROM rollouts WHERE rollout_id IN (SELECT value FROM json_each(?)) AND status NOT IN (SELECT value FROM json_each(?))',
      )
      .pluck(),
    countRollouts: db.prepare('SELECT COUNT(*) AS n FROM rollouts'),
    getAttempt: db.prepare(`${sel} attempts WHERE rollout_id = ? AND attempt_id = ?`),
    latestAttempt: db.prepare(`${sel} attempts WHERE rollout_id = ? ORDER BY sequence_id DESC LIMIT 1`),
    latestAttempts: db.prepare(
      `SELECT a.doc, a.schema_version FROM attempts a JOIN (
         SELECT rollout_id, MAX(sequence_id) AS s FROM attempts
         WHERE rollout_id IN (SELECT value FROM json_each(?)) GROUP BY rollout_id
       ) m ON a.rollout_id = m.rollout_id AND a.sequence_id = m.s`,
    ),
    listAttempts: db.prepare(`${sel} attempts WHERE rollout_id = ? ORDER BY sequence_id`),
    countAttempts: db.prepare('SELECT COUNT(*) AS n FROM attempts'),
    insertAttempt: db.prepare(
      'INSERT INTO attempts (rollout_id, attempt_id, sequence_id, schema_version, doc) VALUES (?, ?, ?, ?, ?)',
    ),
    updateAttempt: db.prepare(
      'UPDATE attempts SET schema_version = ?, doc = ? WHERE rollout_id = ? AND attempt_id = ?',
    ),
    insertSpan: db.prepare(
      'INSERT OR IGNORE INTO spans (rollout_id, attempt_id, span_id, sequence_id, schema_version, doc, attributes) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    listSpans: db.prepare(
      'SELECT sequence_id, doc, attributes, schema_version FROM spans WHERE rollout_id = ? ORDER BY seq',
    ),
    listSpansOfAttempt: db.prepare(
      'SELECT sequence_id, doc, attributes, schema_version FROM spans WHERE rollout_id = ? AND attempt_id = ? ORDER BY seq',
    ),
    // `attempts` is a JSON array of [rolloutId, attemptId] pairs; the lookup uses the (rollout_id, attempt_id) index.
    listNamedSpansOfAttempts: db.prepare(
      `SELECT sequence_id, doc, attributes, schema_version FROM spans
       WHERE (rollout_id, attempt_id) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
         AND json_extract(doc, '$.name') = ? ORDER BY seq`,
    ),
    countSpans: db.prepare('SELECT COUNT(*) AS n FROM spans'),
    incSeq: db.prepare(
      'INSERT INTO span_sequence_ids (rollout_id, value) VALUES (?, ?) ON CONFLICT (rollout_id) DO UPDATE SET value = value + excluded.value RETURNING value',
    ),
    raiseSeq: db.prepare(
      'INSERT INTO span_sequence_ids (rollout_id, value) VALUES (?, ?) ON CONFLICT (rollout_id) DO UPDATE SET value = MAX(value, excluded.value)',
    ),
    enqueue: db.prepare('INSERT INTO rollout_queue (rollout_id) VALUES (?)'),
    dequeue: db.prepare(
      'DELETE FROM rollout_queue WHERE pos = (SELECT MIN(pos) FROM rollout_queue) RETURNING rollout_id',
    ),
    isQueued: db.prepare('SELECT 1 AS x FROM rollout_queue WHERE rollout_id = ? LIMIT 1'),
    hasQueued: db.prepare('SELECT 1 AS x FROM rollout_queue LIMIT 1'),
    getResources: db.prepare(`${sel} resources WHERE resources_id = ?`),
    putResources: db.prepare(
      'INSERT INTO resources (resources_id, schema_version, doc) VALUES (?, ?, ?) ON CONFLICT (resources_id) DO UPDATE SET schema_version = excluded.schema_version, doc = excluded.doc',
    ),
    listResources: db.prepare(`${sel} resources ORDER BY seq`),
    countResources: db.prepare('SELECT COUNT(*) AS n FROM resources'),
    getRelease: db.prepare(`${sel} releases WHERE release_id = ?`),
    putRelease: db.prepare(
      'INSERT INTO releases (release_id, schema_version, doc) VALUES (?, ?, ?) ON CONFLICT (release_id) DO UPDATE SET schema_version = excluded.schema_version, doc = excluded.doc',
    ),
    listReleases: db.prepare(`${sel} releases ORDER BY seq`),
    getMeta: db.prepare('SELECT value FROM store_meta WHERE key = ?'),
    setMeta: db.prepare(
      'INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    getWorker: db.prepare(`${sel} workers WHERE worker_id = ?`),
    putWorker: db.prepare(
      'INSERT INTO workers (worker_id, schema_version, doc) VALUES (?, ?, ?) ON CONFLICT (worker_id) DO UPDATE SET schema_version = excluded.schema_version, doc = excluded.doc',
    ),
    listWorkers: db.prepare(`${sel} workers ORDER BY seq`),
    countWorkers: db.prepare('SELECT COUNT(*) AS n FROM workers'),
  };
}

/**
 * {@link StoreStorage} on one better-sqlite3 connection. Writes run under `BEGIN IMMEDIATE` (one writer at a time
 * across processes, waiting up to the busy timeout), reads in a deferred transaction (a consistent WAL snapshot).
 */
export class SqliteStorage implements StoreStorage {
  readonly name = 'SqliteStore';
  readonly #db: Database.Database;
  readonly #q: ReturnType<typeof prepare>;
  readonly #tx: Database.Transaction<(fn: () => unknown) => unknown>;
  readonly #dynamic = new Map<string, Database.Statement>();
  #dataVersion: number | null = null;
  #traffic: TrafficStatements | null = null;
  /** The connection's busy timeout, switched off only while `tryTransaction` begins. */
  readonly #busyTimeoutMs: number;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#busyTimeoutMs = Number(db.pragma('busy_timeout', { simple: true }));
    this.#q = prepare(db);
    this.#tx = db.transaction((fn: () => unknown) => fn());
  }

  /** A prepared statement for generated SQL, compiled once per distinct text (a few dozen shapes at most). */
  #cached(sql: string): Database.Statement {
    let stmt = this.#dynamic.get(sql);
    if (!stmt) {
      stmt = this.#db.prepare(sql);
      this.#dynamic.set(sql, stmt);
    }
    return stmt;
  }

  transaction<T>(fn: () => T): T {
    if (this.#db.inTransaction) return fn();
    return this.#tx.immediate(fn) as T;
  }

  tryTransaction<T>(fn: () => T): T | typeof WRITE_LOCK_BUSY {
    if (this.#db.inTransaction) return fn();
    // BEGIN IMMEDIATE without the busy handler; the handler is back for everything after it. (A prepared PRAGMA
    // statement would not do: SQLite applies this pragma when the statement is compiled, not when it runs.)
    this.#db.pragma('busy_timeout = 0');
    let began = false;
    try {
      return this.#tx.immediate(() => {
        began = true;
        this.#restoreBusyTimeout();
        return fn();
      }) as T;
    } catch (error) {
      if (!began && String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) return WRITE_LOCK_BUSY;
      throw error;
    } finally {
      if (!began) this.#restoreBusyTimeout();
    }
  }

  #restoreBusyTimeout(): void {
    this.#db.pragma(`busy_timeout = ${this.#busyTimeoutMs}`);
  }

  read<T>(fn: () => T): T {
    if (this.#db.inTransaction) return fn();
    return this.#tx.deferred(fn) as T;
  }

  savepoint<T>(fn: () => T): T {
    if (!this.#db.inTransaction) throw new Error('savepoint() runs inside a transaction');
    // A better-sqlite3 transaction function called inside a transaction runs as SAVEPOINT … RELEASE / ROLLBACK TO.
    return this.#tx(fn) as T;
  }

  getRollout(rolloutId: string): Rollout | null {
    return readDoc<Rollout>(this.#q.getRollout.get(rolloutId) as Row | undefined);
  }

  /** The rollouts among `rolloutIds` that exist, with one statement (a recorder's batch reads all of its own so). */
  getRollouts(rolloutIds: readonly string[]): Map<string, Rollout> {
    const out = new Map<string, Rollout>();
    if (rolloutIds.length === 0) return out;
    for (const row of this.#q.getRollouts.all(JSON.stringify(rolloutIds)) as Array<Row & { rollout_id: string }>) {
      const rollout = readDoc<Rollout>(row);
      if (rollout) out.set(row.rollout_id, rollout);
    }
    return out;
  }

  insertRollouts(rollouts: readonly Rollout[]): void {
    for (const r of rollouts)
      this.#q.insertRollout.run(r.rolloutId, r.status, r.startTime, r.endTime, r.mode, V, JSON.stringify(r));
  }

  updateRollout(rollout: Rollout): void {
    this.#q.updateRollout.run(
      rollout.status,
      rollout.startTime,
      rollout.endTime,
      rollout.mode,
      V,
      JSON.stringify(rollout),
      rollout.rolloutId,
    );
  }

  /** The live-traffic rows of a window, from the rollup tables of migration 3 (`sqlite-traffic.ts`). */
  trafficRows(query: TrafficRowsQuery): TrafficRows {
    this.#traffic ??= prepareTraffic(this.#db);
    return readSqliteTraffic(this.#traffic, query);
  }

  /** The stale hours of `[fromHour, toHour)` (migration 5), marked fresh: the write transaction recomputes them. */
  takeStaleTrafficHours(fromHour: number, toHour: number): number[] {
    this.#traffic ??= prepareTraffic(this.#db);
    const hours = staleSqliteTrafficHours(this.#traffic, fromHour, toHour);
    for (const hour of hours) this.#traffic.clearStale.run(hour);
    return hours;
  }

  /** Replaces the reward rollup of `hours` by `rows` (inside a write transaction). */
  putTrafficRewards(hours: readonly number[], rows: readonly TrafficRewardRow[]): void {
    this.#traffic ??= prepareTraffic(this.#db);
    putSqliteTrafficRewards(this.#traffic, hours, rows);
  }

  /** One page of rollouts, filtered, sorted and cut in SQL (only the page's documents are parsed). */
  pageRollouts(query: RolloutPageQuery): { items: Rollout[]; total: number } | null {
    const column = query.sortField === null ? null : SORT_COLUMNS[query.sortField];
    if (column === undefined) return null;
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (query.statuses) {
      conditions.push('status IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(query.statuses));
    }
    if (query.ids) {
      conditions.push('rollout_id IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(query.ids));
    }
    if (query.idContains != null) {
      conditions.push('instr(rollout_id, ?) > 0');
      params.push(query.idContains);
    }
    if (query.modes) {
      const hasNull = query.modes.includes(null);
      conditions.push(`(mode IN (SELECT value FROM json_each(?))${hasNull ? ' OR mode IS NULL' : ''})`);
      params.push(JSON.stringify(query.modes.filter((m) => m !== null)));
    }
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(query.logic === 'or' ? ' OR ' : ' AND ')}`;
    const desc = query.order === 'desc';
    const order =
      column === null
        ? `seq ${desc ? 'DESC' : 'ASC'}`
        : `(${column} IS NULL) ${desc ? 'DESC' : 'ASC'}, ${column} ${desc ? 'DESC' : 'ASC'}, seq ASC`;
    const total = (this.#cached(`SELECT COUNT(*) AS n FROM rollouts ${where}`).get(...params) as { n: number }).n;
    const rows = this.#cached(
      `SELECT doc, schema_version FROM rollouts ${where} ORDER BY ${order} LIMIT ? OFFSET ?`,
    ).all(...params, query.limit, query.offset) as Row[];
    return { items: readDocs<Rollout>(rows), total };
  }

  listRollouts(where?: { statuses?: readonly RolloutStatus[]; ids?: readonly string[] }): Rollout[] {
    const { statuses, ids } = where ?? {};
    let rows: unknown[];
    if (ids && statuses) rows = this.#q.listRolloutsByIdAndStatus.all(JSON.stringify(ids), JSON.stringify(statuses));
    else if (ids) rows = this.#q.listRolloutsById.all(JSON.stringify(ids));
    else if (statuses) rows = this.#q.listRolloutsByStatus.all(JSON.stringify(statuses));
    else rows = this.#q.listRollouts.all();
    return readDocs<Rollout>(rows as Row[]);
  }

  unfinishedRolloutIds(rolloutIds: readonly string[]): Set<string> {
    return new Set(this.#q.unfinishedRolloutIds.all(JSON.stringify(rolloutIds), TERMINAL_JSON) as string[]);
  }

  countRollouts(): number {
    return (this.#q.countRollouts.get() as { n: number }).n;
  }

  getAttempt(rolloutId: string, attemptId: string): Attempt | null {
    return readDoc<Attempt>(this.#q.getAttempt.get(rolloutId, attemptId) as Row | undefined);
  }

  getLatestAttempt(rolloutId: string): Attempt | null {
    return readDoc<Attempt>(this.#q.latestAttempt.get(rolloutId) as Row | undefined);
  }

  getLatestAttempts(rolloutIds: readonly string[]): Map<string, Attempt> {
    const out = new Map<string, Attempt>();
    if (rolloutIds.length === 0) return out;
    for (const a of readDocs<Attempt>(this.#q.latestAttempts.all(JSON.stringify(rolloutIds)) as Row[]))
      out.set(a.rolloutId, a);
    return out;
  }

  listAttempts(rolloutId: string): Attempt[] {
    return readDocs<Attempt>(this.#q.listAttempts.all(rolloutId) as Row[]);
  }

  countAttempts(): number {
    return (this.#q.countAttempts.get() as { n: number }).n;
  }

  insertAttempt(attempt: Attempt): void {
    this.#q.insertAttempt.run(attempt.rolloutId, attempt.attemptId, attempt.sequenceId, V, JSON.stringify(attempt));
  }

  updateAttempt(attempt: Attempt): void {
    this.#q.updateAttempt.run(V, JSON.stringify(attempt), attempt.rolloutId, attempt.attemptId);
  }

  insertSpans(spans: readonly Span[]): Span[] {
    return this.insertSerializedSpans(this.serializeSpans(spans));
  }

  serializeSpans(spans: readonly Span[], attributesJson: ReadonlyArray<string | null> = []): SerializedSpans {
    // The attribute map goes in its own column (as the caller's checked text when given); the document has the rest.
    return {
      spans,
      docs: spans.map(docWithoutAttributes),
      attributes: spans.map((s, i) => attributesJson[i] ?? JSON.stringify(s.attributes)),
    };
  }

  insertSerializedSpans({ spans, docs, attributes }: SerializedSpans): Span[] {
    const inserted: Span[] = [];
    const stmt = this.#q.insertSpan;
    spans.forEach((s, i) => {
      if (stmt.run(s.rolloutId, s.attemptId, s.spanId, s.sequenceId, V, docs[i], attributes[i]).changes === 1)
        inserted.push(s);
    });
    return inserted;
  }

  listSpans(rolloutId: string, attemptId: string | null): Span[] {
    return readSpans(this.#spanRows(rolloutId, attemptId));
  }

  listNamedSpansOfAttempts(attempts: readonly AttemptRef[], name: string): Span[] {
    if (attempts.length === 0) return [];
    const pairs = JSON.stringify(attempts.map((a) => [a.rolloutId, a.attemptId]));
    return readSpans(this.#q.listNamedSpansOfAttempts.all(pairs, name) as SpanRow[]);
  }

  listSpanDocs(rolloutId: string, attemptId: string | null): SpanDoc[] | null {
    const rows = this.#spanRows(rolloutId, attemptId);
    // Documents of another schema version go through readDoc (refused when newer, upgraded when older).
    if (rows.some((row) => row.schema_version !== SCHEMA_VERSION)) return null;
    return rows.map((row) => ({
      sequenceId: row.sequence_id,
      doc: row.attributes === null ? row.doc : `${row.doc.slice(0, -1)},"attributes":${row.attributes}}`,
    }));
  }

  #spanRows(rolloutId: string, attemptId: string | null): SpanRow[] {
    return (
      attemptId === null ? this.#q.listSpans.all(rolloutId) : this.#q.listSpansOfAttempt.all(rolloutId, attemptId)
    ) as SpanRow[];
  }

  countSpans(): number {
    return (this.#q.countSpans.get() as { n: number }).n;
  }

  incrementSequence(rolloutId: string, count: number): number {
    return (this.#q.incSeq.get(rolloutId, count) as { value: number }).value;
  }

  raiseSequence(rolloutId: string, value: number): void {
    this.#q.raiseSeq.run(rolloutId, value);
  }

  enqueue(rolloutIds: readonly string[]): void {
    for (const id of rolloutIds) this.#q.enqueue.run(id);
  }

  dequeue(): string | null {
    const row = this.#q.dequeue.get() as { rollout_id: string } | undefined;
    return row ? row.rollout_id : null;
  }

  isQueued(rolloutId: string): boolean {
    return this.#q.isQueued.get(rolloutId) !== undefined;
  }

  hasQueued(): boolean {
    return this.#q.hasQueued.get() !== undefined;
  }

  externalChanges(): boolean {
    const version = Number(this.#db.pragma('data_version', { simple: true }));
    const changed = this.#dataVersion !== null && version !== this.#dataVersion;
    this.#dataVersion = version;
    return changed;
  }

  getResources(resourcesId: string): ResourcesUpdate | null {
    return readDoc<ResourcesUpdate>(this.#q.getResources.get(resourcesId) as Row | undefined);
  }

  putResources(resources: ResourcesUpdate, options: { latest?: boolean } = {}): void {
    this.#q.putResources.run(resources.resourcesId, V, JSON.stringify(resources));
    if (options.latest !== false) this.setLatestResourcesId(resources.resourcesId);
  }

  setLatestResourcesId(resourcesId: string): void {
    this.#q.setMeta.run('latest_resources_id', resourcesId);
  }

  getRelease(releaseId: string): Release | null {
    return readDoc<Release>(this.#q.getRelease.get(releaseId) as Row | undefined);
  }

  putRelease(release: Release): void {
    this.#q.putRelease.run(release.releaseId, V, JSON.stringify(release));
  }

  listReleases(): Release[] {
    return readDocs<Release>(this.#q.listReleases.all() as Row[]);
  }

  getLatestResourcesId(): string | null {
    const row = this.#q.getMeta.get('latest_resources_id') as { value: string } | undefined;
    return row ? row.value : null;
  }

  listResources(): ResourcesUpdate[] {
    return readDocs<ResourcesUpdate>(this.#q.listResources.all() as Row[]);
  }

  countResources(): number {
    return (this.#q.countResources.get() as { n: number }).n;
  }

  getWorker(workerId: string): Worker | null {
    return readDoc<Worker>(this.#q.getWorker.get(workerId) as Row | undefined);
  }

  putWorker(worker: Worker): void {
    this.#q.putWorker.run(worker.workerId, V, JSON.stringify(worker));
  }

  listWorkers(): Worker[] {
    return readDocs<Worker>(this.#q.listWorkers.all() as Row[]);
  }

  countWorkers(): number {
    return (this.#q.countWorkers.get() as { n: number }).n;
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
