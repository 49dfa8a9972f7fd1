import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startOpenAiTestServer } from '@agl/testing';
import { REPO_ROOT, serveStore, type ServedStore } from './child-processes';
import { postgresServerStarter } from './postgres-server';
import { median, round } from './results';

/** Options of {@link runRecordsIngestBench}. */
export interface RecordsIngestBenchOptions {
  /** A fresh directory for the SQLite files. */
  dir: string;
  /** Recorded requests captured from the real recorder, replayed once per repeat. Default 4,000. */
  requests?: number;
  /** Repetitions per backend; medians are reported. Default 5. */
  repeats?: number;
  /** Batches in flight at once (one recorder sends one at a time; several services share a store). Default 1 (one recorder: its batches in order). */
  inFlight?: number;
  /**
   * SQLite servers to compare in the same run (each started with `env` added, their repeats interleaved); the first is
   * the reported figure. Default: one, `sqlite`.
   */
  variants?: ReadonlyArray<{ label: string; env: Record<string, string> }>;
  /**
   * A git revision whose `agl store serve` runs beside this tree's, interleaved, as the variant `baseline <rev>` (its
   * `packages/` sources `git archive`d under `bench-artifacts/`, loaded in place of this tree's by
   * `baseline-dist-loader.mjs`). Default: `AGL_BENCH_RECORDS_BASELINE`, else none.
   */
  baselineRev?: string;
  /** `--cpu-prof` the SQLite server into this directory (the profile is written when it stops). */
  cpuProfileDir?: string;
  log?: (line: string) => void;
}

/** One backend's figures. */
export interface RecordsIngestFigure {
  /** Median store CPU (user + system, /proc) per recorded request (start, spans and end records), µs. */
  cpuMicrosPerRequest: number;
  /** Every repeat's figure, µs. */
  samples: number[];
  /** Recorded requests per second of one store core at that cost. */
  requestsPerCoreSecond: number;
}

/** What {@link runRecordsIngestBench} reports. */
export interface RecordsIngestBenchResult {
  requests: number;
  batches: number;
  recordsPerRequest: number;
  bytesPerRequest: number;
  cpuMicrosPerRequest: number;
  sqlite: RecordsIngestFigure;
  /** The other SQLite servers of the same run (e.g. `baseline <rev>`), by label. */
  variants?: Record<string, RecordsIngestFigure>;
  /** The same variants on PostgreSQL. */
  postgresVariants?: Record<string, RecordsIngestFigure>;
  postgres: RecordsIngestFigure | { skipped: string };
}

/** A captured `POST /v1/agl/records` body and the rollouts it starts. */
interface CapturedBatch {
  body: string;
  records: number;
}

/**
 * Captures exactly what the production recorder sends: `observe-service-main.mjs` (a node:http service, the
 * `@agl/openai/register` preload, `observeHandler`, one chat completion per request through the `openai` client
 * against a local fake LLM) exports to a capturing HTTP server that answers like the store (`{ applied, rejected }`).
 */
async function captureRecorderBatches(requests: number): Promise<CapturedBatch[]> {
  const llm = await startOpenAiTestServer({
    keepAliveTimeoutMs: 65_000,
    keepRequests: false,
    respond: () => ({ content: 'Order A-1002 is shipped, arriving 2026-12-07.' }),
  });
  const batches: CapturedBatch[] = [];
  let records = 0;
  const sink: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let applied = 0;
      if (req.url?.endsWith('/v1/agl/records')) {
        applied = (JSON.parse(body) as { records: unknown[] }).records.length;
        batches.push({ body, records: applied });
        records += applied;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ applied, rejected: [] }));
    });
  });
  sink.listen(0, '127.0.0.1');
  await once(sink, 'listening');
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const proc = spawn(
    process.execPath,
    ['--import', '@agl/openai/register', join('tools', 'bench', 'src', 'observe-service-main.mjs')],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        OPENAI_BASE_URL: llm.baseURL,
        BENCH_RECORDED: '1',
        BENCH_AGENT: 'openai',
        AGL_STORE_URL: sinkUrl,
        AGL_SAMPLE_RATE: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const dispatcher = new Agent({ connections: 32 });
  try {
    let out = '';
    proc.stderr!.on('data', (d: Buffer) => (out = `${out}${d.toString()}`.slice(-4000)));
    const url = await new Promise<string>((resolve, reject) => {
      proc.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const match = /SERVICE_URL=(\S+)/u.exec(out);
        if (match) resolve(match[1]!);
      });
      proc.once('exit', (code) => reject(new Error(`the recorded service exited early (${code}): ${out}`)));
    });
    let issued = 0;
    const worker = async (): Promise<void> => {
      while (issued < requests) {
        issued += 1;
        const res = await request(`${url}/chat`, {
          method: 'POST',
          dispatcher,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ message: 'Where is my order A-1002?' }),
        });
        await res.body.text();
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    // Start, spans and end of every request: wait for the recorder's last batch.
    const deadline = Date.now() + 30_000;
    while (records < requests * 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (records < requests * 3)
      throw new Error(`captured ${records} records of ${requests} recorded requests (expected ${requests * 3})`);
    return batches;
  } finally {
    proc.kill('SIGTERM');
    if (proc.exitCode === null) await once(proc, 'exit');
    await dispatcher.close();
    sink.close();
    await llm.close();
  }
}

/** The batches with every rollout and attempt id made unique to repeat `tag` (a replay must not be an idempotent no-op). */
function retag(batches: readonly CapturedBatch[], tag: string): string[] {
  return batches.map((b) => b.body.replace(/"(rollout_id|attempt_id)":"([^"]+)"/gu, `"$1":"$2-${tag}"`));
}

/** Posts the bodies, `inFlight` at a time, in order per sender; throws on anything but a clean 200. */
async function replay(url: string, bodies: readonly string[], inFlight: number, dispatcher: Agent): Promise<void> {
  let next = 0;
  const sender = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next]!;
      next += 1;
      const res = await request(`${url}/v1/agl/records`, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await res.body.text();
      const answer = JSON.parse(text) as { rejected?: unknown[] };
      if (res.statusCode !== 200 || (answer.rejected?.length ?? 0) > 0)
        throw new Error(`the store answered ${res.statusCode}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, sender));
}

/**
 * Replays the batches to each server in turn, `repeats` rounds (the servers interleaved, so a busy host weighs on
 * every one alike), after one warm-up replay each; the median CPU per recorded request of each.
 */
async function measure(
  stores: ReadonlyArray<{ label: string; store: ServedStore }>,
  batches: readonly CapturedBatch[],
  requests: number,
  o: { repeats: number; inFlight: number; log: (line: string) => void },
): Promise<RecordsIngestFigure[]> {
  const dispatcher = new Agent({ connections: o.inFlight * stores.length, keepAliveTimeout: 60_000 });
  try {
    // Warm-up (JIT, statement caches): one replay each, not measured.
    for (const { store } of stores) await replay(store.url, retag(batches, 'warm'), o.inFlight, dispatcher);
    const samples = stores.map((): number[] => []);
    for (let r = 0; r < o.repeats; r += 1) {
      const bodies = retag(batches, `r${r}`);
      for (const [i, { label, store }] of stores.entries()) {
        const cpu0 = store.cpuSeconds() ?? NaN;
        await replay(store.url, bodies, o.inFlight, dispatcher);
        const us = (((store.cpuSeconds() ?? NaN) - cpu0) / requests) * 1e6;
        samples[i]!.push(round(us, 1));
        o.log(`  ingest.records ${label} repeat ${r + 1}/${o.repeats}: ${us.toFixed(0)} µs CPU per recorded request`);
      }
    }
    return samples.map((s) => {
      const cpu = median(s);
      return { cpuMicrosPerRequest: round(cpu, 1), samples: s, requestsPerCoreSecond: round(1e6 / cpu, 0) };
    });
  } finally {
    await dispatcher.close();
  }
}

type Variant = { label: string; env: Record<string, string> };

/**
 * Starts one server per variant (`start`, with the variant's environment added), measures them interleaved and stops
 * them; the figures in variant order.
 */
async function measureServers(
  variants: readonly Variant[],
  start: (variant: Variant, index: number) => Promise<ServedStore>,
  batches: readonly CapturedBatch[],
  requests: number,
  m: { repeats: number; inFlight: number; log: (line: string) => void },
  prefix = '',
): Promise<RecordsIngestFigure[]> {
  const stores: Array<{ label: string; store: ServedStore }> = [];
  try {
    for (const [i, v] of variants.entries()) {
      const saved = { ...process.env };
      Object.assign(process.env, v.env);
      try {
        stores.push({ label: `${prefix}${v.label}`, store: await start(v, i) });
      } finally {
        process.env = saved;
      }
    }
    const figures = await measure(stores, batches, requests, m);
    for (const [i, { label }] of stores.entries())
      if (i > 0)
        m.log(
          `  ingest.records ${label}: ${figures[i]!.cpuMicrosPerRequest} µs (samples ${figures[i]!.samples.join(', ')})`,
        );
    return figures;
  } finally {
    for (const { store } of stores) await store.stop();
  }
}

/**
 * The variant that runs revision `rev`'s store server: its `packages/` extracted (once) under `bench-artifacts/` and
 * swapped in for this tree's sources by the loader.
 */
function baselineVariant(rev: string): Variant {
  const sha = execFileSync('git', ['rev-parse', '--short=12', rev], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  const dir = join(REPO_ROOT, 'bench-artifacts', `records-baseline-${sha}`);
  if (!existsSync(join(dir, 'packages'))) {
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} packages | tar -x -C "${dir}"`], { cwd: REPO_ROOT });
  }
  const loader = join(REPO_ROOT, 'tools', 'bench', 'src', 'baseline-dist-loader.mjs');
  return {
    label: `baseline ${rev}`,
    env: { NODE_OPTIONS: `--import=${loader}`, BENCH_BASELINE_DIR: dir, BENCH_BASELINE_SOURCES: '1' },
  };
}

/**
 * The store's CPU per recorded request: the bodies the real recorder sends (captured once from a recorded service, see
 * {@link captureRecorderBatches}) replayed to a real `agl store serve` on a SQLite file, and on PostgreSQL when
 * `AGL_TEST_PG_URL` is set, with fresh ids each repeat; the server process's CPU from /proc over each replay, divided
 * by the requests replayed.
 */
export async function runRecordsIngestBench(options: RecordsIngestBenchOptions): Promise<RecordsIngestBenchResult> {
  const log = options.log ?? (() => undefined);
  const requests = options.requests ?? 4000;
  const repeats = options.repeats ?? 5;
  const inFlight = options.inFlight ?? 1;
  const batches = await captureRecorderBatches(requests);
  const records = batches.reduce((n, b) => n + b.records, 0);
  const bytes = batches.reduce((n, b) => n + Buffer.byteLength(b.body), 0);
  log(
    `  ingest.records: captured ${batches.length} batches, ${records} records of ${requests} recorded requests ` +
      `(${(bytes / requests).toFixed(0)} bytes per request)`,
  );
  const m = { repeats, inFlight, log };
  const baselineRev = options.baselineRev ?? process.env.AGL_BENCH_RECORDS_BASELINE ?? '';
  const variants = [
    ...(options.variants ?? [{ label: 'sqlite', env: {} }]),
    ...(baselineRev ? [baselineVariant(baselineRev)] : []),
  ];
  const figures = await measureServers(
    variants,
    (v, i) =>
      serveStore({
        dbPath: join(options.dir, `records-${i}.sqlite`),
        ...(options.cpuProfileDir ? { cpuProfileDir: join(options.cpuProfileDir, v.label) } : {}),
      }),
    batches,
    requests,
    m,
  );
  const sqlite = figures[0]!;
  let postgres: RecordsIngestFigure | { skipped: string };
  let postgresVariants: Record<string, RecordsIngestFigure> | null = null;
  const pg = await postgresServerStarter();
  if (pg.start) {
    const pgFigures = await measureServers(variants, () => pg.start!(), batches, requests, m, 'postgres ');
    postgres = pgFigures[0]!;
    if (variants.length > 1)
      postgresVariants = Object.fromEntries(variants.slice(1).map((v, i) => [v.label, pgFigures[i + 1]!]));
  } else {
    postgres = { skipped: pg.reason };
  }
  return {
    requests,
    batches: batches.length,
    recordsPerRequest: round(records / requests, 2),
    bytesPerRequest: round(bytes / requests, 0),
    cpuMicrosPerRequest: sqlite.cpuMicrosPerRequest,
    sqlite,
    ...(variants.length > 1
      ? { variants: Object.fromEntries(variants.slice(1).map((v, i) => [v.label, figures[i + 1]!])) }
      : {}),
    postgres,
    ...(postgresVariants ? { postgresVariants } : {}),
  };
}
