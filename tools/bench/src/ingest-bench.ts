import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import type { SpanInput } from '@agl/core';
import { toWire } from '@agl/core/schema';
import { createStoreServer } from '@agl/store/server';
import { MIGRATIONS, SqliteStore } from '@agl/store/sqlite';
import { seededRandom } from '@agl/core';
import { generateAttributes } from './random-attributes';
import { median } from './results';

/** Options of {@link runIngestBench}. */
export interface IngestBenchOptions {
  /** A fresh directory for the database files. */
  dir: string;
  /** Spans per measurement (the limit's single transaction). Default 10,000. */
  spans?: number;
  /** Rollouts the spans belong to. Default 100. */
  rollouts?: number;
  /** Spans per HTTP request (REST batch and OTLP). Default 1,000. */
  spansPerRequest?: number;
  /** Repetitions; medians are reported. Default 5. */
  repeats?: number;
  log?: (line: string) => void;
}

/** Spans per second of one ingest path, and its ratio to the raw SQLite limit measured in the same repetition. */
export interface IngestFigure {
  spansPerSecond: number;
  ratioToRawSqlite: number;
}

/** What {@link runIngestBench} reports. */
export interface IngestBenchResult {
  spans: number;
  spansPerRequest: number;
  repeats: number;
  /** Mean stored JSON document size per span, bytes. */
  docBytesPerSpan: number;
  rawSqlite: { spansPerSecond: number };
  addSpans: IngestFigure;
  restBatch: IngestFigure;
  otlpProtobuf: IngestFigure;
}

interface Fixture {
  rolloutIds: string[];
  attemptIds: string[];
  spans: SpanInput[];
}

const require = createRequire(import.meta.url);
interface GeneratedMessage {
  fromObject(object: Record<string, unknown>): object;
  encode(message: object): { finish(): Uint8Array };
}
const otlpRoot = require('otlp-transformer-0208/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: GeneratedMessage } } } } };
};
const ExportTraceServiceRequest = otlpRoot.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const hex = (random: () => number, bytes: number): string =>
  Array.from({ length: bytes }, () =>
    Math.floor(random() * 256)
      .toString(16)
      .padStart(2, '0'),
  ).join('');

/** A fresh SqliteStore with `count` started rollouts, and `spans` spans spread evenly over them (same seed, same spans). */
async function openFixture(
  path: string,
  options: { rollouts: number; spans: number },
): Promise<{ store: SqliteStore; fixture: Fixture }> {
  const store = new SqliteStore({ path });
  const rolloutIds: string[] = [];
  const attemptIds: string[] = [];
  for (let i = 0; i < options.rollouts; i += 1) {
    const r = await store.startRollout({ input: { task: i } });
    rolloutIds.push(r.rolloutId);
    attemptIds.push(r.attempt.attemptId);
  }
  const random = seededRandom(42);
  const perRollout = Math.ceil(options.spans / options.rollouts);
  const spans: SpanInput[] = [];
  const t0 = 1_700_000_000;
  for (let i = 0; i < options.spans; i += 1) {
    const r = i % options.rollouts;
    const traceId = hex(random, 16);
    spans.push({
      rolloutId: rolloutIds[r]!,
      attemptId: attemptIds[r]!,
      sequenceId: Math.floor(i / options.rollouts) + 1,
      traceId,
      spanId: hex(random, 8),
      parentId: null,
      name: `round${i % perRollout}_1`,
      status: { statusCode: 'OK', description: null },
      attributes: generateAttributes(random),
      events: [],
      links: [],
      startTime: t0 + i / 1000,
      endTime: t0 + i / 1000 + 0.05,
      context: null,
      parent: null,
      resource: { attributes: {}, schemaUrl: '' },
    } as SpanInput);
  }
  return { store, fixture: { rolloutIds, attemptIds, spans } };
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const secondsSince = (t0: number): number => (performance.now() - t0) / 1000;

/** The limit: the rows addSpans stored, inserted raw into a fresh file with the same table, indexes and pragmas. */
function rawInsertSeconds(fromPath: string, toPath: string): number {
  const from = new Database(fromPath, { readonly: true });
  const rows = from
    .prepare(
      'SELECT rollout_id, attempt_id, span_id, sequence_id, schema_version, doc, attributes FROM spans ORDER BY seq',
    )
    .raw()
    .all() as unknown[][];
  from.close();
  const db = new Database(toPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  for (const m of MIGRATIONS) db.exec(m.sql);
  const insert = db.prepare(
    'INSERT OR IGNORE INTO spans (rollout_id, attempt_id, span_id, sequence_id, schema_version, doc, attributes) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const all = db.transaction((list: unknown[][]) => {
    for (const row of list) insert.run(...row);
  });
  gc();
  const t0 = performance.now();
  all.immediate(rows);
  const seconds = secondsSince(t0);
  const count = (db.prepare('SELECT COUNT(*) AS n FROM spans').get() as { n: number }).n;
  db.close();
  if (count !== rows.length) throw new Error(`raw insert stored ${count} of ${rows.length} rows`);
  return seconds;
}

function otlpBody(spans: SpanInput[]): Uint8Array {
  const byRollout = new Map<string, SpanInput[]>();
  for (const s of spans) byRollout.set(s.rolloutId, [...(byRollout.get(s.rolloutId) ?? []), s]);
  const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
  const nanos = (seconds: number): string => `${BigInt(Math.round(seconds * 1e6)) * 1000n}`;
  const resourceSpans = [...byRollout].map(([rolloutId, list]) => ({
    resource: {
      attributes: [
        str('service.name', 'agl-bench'),
        str('agentlightning.rollout_id', rolloutId),
        str('agentlightning.attempt_id', list[0]!.attemptId),
      ],
    },
    scopeSpans: [
      {
        scope: { name: 'agl-bench' },
        spans: list.map((s) => ({
          traceId: Buffer.from(s.traceId, 'hex'),
          spanId: Buffer.from(s.spanId, 'hex'),
          name: s.name,
          kind: 1,
          startTimeUnixNano: nanos(s.startTime!),
          endTimeUnixNano: nanos(s.endTime!),
          attributes: Object.entries(s.attributes ?? {}).map(([k, v]) => str(k, String(v))),
          status: { code: 1 },
        })),
      },
    ],
  }));
  return ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject({ resourceSpans })).finish();
}

async function postAll(
  url: string,
  bodies: readonly Uint8Array[],
  contentType: string,
  dispatcher: Agent,
): Promise<number> {
  gc();
  const t0 = performance.now();
  for (const body of bodies) {
    const res = await request(url, { method: 'POST', dispatcher, headers: { 'content-type': contentType }, body });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`POST ${url} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  }
  return secondsSince(t0);
}

async function countSpans(store: SqliteStore): Promise<number> {
  return (await store.statistics()).totalSpans;
}

/**
 * Garbage from building the fixtures is collected before each timed section, so no path pays for another's.
 *
 * Ingest throughput of `addSpans` (embedded), the REST batch route and OTLP/HTTP protobuf (in-process server over
 * loopback, bodies pre-encoded to bytes, requests in sequence; REST sends `echo: false`, as `StoreClient` does), each against the raw better-sqlite3 limit: the same rows,
 * pre-serialised, inserted into the same table with the same indexes in one transaction. Every repetition uses fresh
 * database files; each ratio uses the limit of its own repetition; medians are reported.
 */
export async function runIngestBench(options: IngestBenchOptions): Promise<IngestBenchResult> {
  const n = options.spans ?? 10_000;
  const nRollouts = options.rollouts ?? 100;
  const perRequest = options.spansPerRequest ?? 1000;
  const repeats = options.repeats ?? 5;
  const dispatcher = new Agent({ keepAliveTimeout: 60_000 });
  const rows: { raw: number; add: number; rest: number; otlp: number; docBytes: number }[] = [];
  try {
    for (let rep = 0; rep < repeats; rep += 1) {
      const dir = join(options.dir, `ingest-${rep}`);
      mkdirSync(dir, { recursive: true });
      // addSpans: one call with every span (one transaction), as the limit has.
      const a = await openFixture(join(dir, 'add.sqlite'), { rollouts: nRollouts, spans: n });
      gc();
      const t0 = performance.now();
      await a.store.addSpans(a.fixture.spans);
      const add = secondsSince(t0);
      if ((await countSpans(a.store)) !== n) throw new Error('addSpans did not store every span');
      await a.store.close();
      const docDb = new Database(join(dir, 'add.sqlite'), { readonly: true });
      const docBytes = (
        docDb.prepare('SELECT AVG(LENGTH(doc) + IFNULL(LENGTH(attributes), 0)) AS b FROM spans').get() as { b: number }
      ).b;
      docDb.close();
      const raw = rawInsertSeconds(join(dir, 'add.sqlite'), join(dir, 'raw.sqlite'));

      // REST batch and OTLP protobuf, each into a fresh store behind its own server.
      const http = async (kind: 'rest' | 'otlp'): Promise<number> => {
        const f = await openFixture(join(dir, `${kind}.sqlite`), { rollouts: nRollouts, spans: n });
        const server = await createStoreServer({ store: f.store, port: 0 });
        const chunks: SpanInput[][] = [];
        for (let i = 0; i < n; i += perRequest) chunks.push(f.fixture.spans.slice(i, i + perRequest));
        let seconds: number;
        if (kind === 'rest') {
          const bodies = chunks.map((chunk) =>
            Buffer.from(JSON.stringify({ spans: toWire('span', chunk), echo: false })),
          );
          seconds = await postAll(`${server.url}/v1/agl/spans/batch`, bodies, 'application/json', dispatcher);
        } else {
          const bodies = chunks.map((chunk) => otlpBody(chunk));
          seconds = await postAll(`${server.url}/v1/traces`, bodies, 'application/x-protobuf', dispatcher);
        }
        const stored = await countSpans(f.store);
        await server.close();
        await f.store.close();
        if (stored !== n) throw new Error(`${kind} ingest stored ${stored} of ${n} spans`);
        return seconds;
      };
      const rest = await http('rest');
      const otlp = await http('otlp');
      rows.push({ raw, add, rest, otlp, docBytes });
      options.log?.(
        `  ingest rep ${rep + 1}/${repeats}: raw ${(n / raw).toFixed(0)} spans/s, addSpans ${(n / add).toFixed(0)}, REST ${(n / rest).toFixed(0)}, OTLP ${(n / otlp).toFixed(0)}`,
      );
    }
  } finally {
    await dispatcher.close();
  }
  const figure = (key: 'add' | 'rest' | 'otlp'): IngestFigure => ({
    spansPerSecond: median(rows.map((r) => n / r[key])),
    ratioToRawSqlite: median(rows.map((r) => r.raw / r[key])),
  });
  return {
    spans: n,
    spansPerRequest: perRequest,
    repeats,
    docBytesPerSpan: median(rows.map((r) => r.docBytes)),
    rawSqlite: { spansPerSecond: median(rows.map((r) => n / r.raw)) },
    addSpans: figure('add'),
    restBatch: figure('rest'),
    otlpProtobuf: figure('otlp'),
  };
}
