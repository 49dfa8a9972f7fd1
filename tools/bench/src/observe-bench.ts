import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { Agent, request } from 'undici';
import { startOpenAiTestServer, type TestLlmReply, type TestLlmRequest } from '@agl/testing';
import { cpuSecondsOf, REPO_ROOT, serveStore } from './child-processes';
import { inclusiveHotspots } from './cpu-profile-summary';
import { median, round, type ResultTree } from './results';

/** Concurrency of the CPU legs (issue 56). */
const CONCURRENCY = 16;
/** Requests per service per repeat. */
const LEG_REQUESTS = 4000;
const LLM_LATENCY_MS = 5;
/** The recorder's default buffer bounds (`configureObserve`): 10,000 records, 64 MiB. */
const BUFFER_BYTE_LIMIT = 64 * 1024 * 1024;

/**
 * The three services side by side: `plain` (nothing recorded, nothing of AGL or OpenTelemetry loaded), `agl`
 * (`observeHandler` + `--import @agl/openai/register`, exporting to `agl store serve` on SQLite) and `otel` (the peer:
 * `observe-otel-preload.mjs`, OpenTelemetry's sdk-node + instrumentation-http + Traceloop's openai instrumentation
 * recording prompts and completions, OTLP/HTTP to a sink).
 */
type ServiceKind = 'plain' | 'agl' | 'otel' | 'aglBaseline';

/** Figures are keyed by service label: the kind, or `aglBaseline`, `aglBaseline2`, ... for the earlier builds. */
type ServiceLabel = 'plain' | 'agl' | 'otel' | `aglBaseline${string}`;

interface Child {
  proc: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

interface Service extends Child {
  kind: ServiceKind;
  label: ServiceLabel;
}

/** Spawns a bench child process and waits for its `<NAME>_URL=...` line. */
async function spawnChild(args: string[], env: NodeJS.ProcessEnv, urlLine: string): Promise<Child> {
  const proc = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stderr!.on('data', (d: Buffer) => (out = `${out}${d.toString()}`.slice(-4000)));
  const pattern = new RegExp(`${urlLine}=(\\S+)`, 'u');
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = pattern.exec(out);
      if (match) resolve(match[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`a bench child process exited early (${code}): ${out}`)));
  });
  return {
    proc,
    url,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      await once(proc, 'exit');
    },
  };
}

/**
 * Starts `observe-service-main.mjs` with plain `node` on the built packages (`npm ci` builds them; after changing
 * sources, `npm run build`). `profileDir` adds `--cpu-prof` (written when the service exits).
 */
async function startService(
  kind: ServiceKind,
  urls: { llm: string; store: string; otlp: string },
  profileDir?: string,
  baselineDir?: string,
  label: ServiceLabel = kind,
): Promise<Service> {
  const baseline = kind === 'aglBaseline' ? ['--import', './tools/bench/src/baseline-dist-loader.mjs'] : [];
  const preload =
    kind === 'agl' || kind === 'aglBaseline'
      ? [...baseline, '--import', '@agl/openai/register']
      : kind === 'otel'
        ? ['--import', './tools/bench/src/observe-otel-preload.mjs']
        : [];
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = await spawnChild(
    ['--expose-gc', ...profile, ...preload, 'tools/bench/src/observe-service-main.mjs'],
    {
      OPENAI_BASE_URL: urls.llm,
      BENCH_RECORDED: kind === 'agl' || kind === 'aglBaseline' ? '1' : '',
      BENCH_BASELINE_DIR: kind === 'aglBaseline' ? (baselineDir ?? '') : '',
      BENCH_ASYNC_CONTEXT: '',
      BENCH_AGENT: 'openai',
      AGL_STORE_URL: kind === 'agl' || kind === 'aglBaseline' ? urls.store : '',
      AGL_SAMPLE_RATE: '',
      BENCH_OTLP_URL: urls.otlp,
    },
    'SERVICE_URL',
  );
  return { ...child, kind, label };
}

/** Resident set size of a live process in MB (Linux `VmRSS`, or its peak so far `VmHWM`), or NaN. */
function rssMbOf(pid: number | undefined, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+)\\s+kB`, 'u').exec(status)?.[1]) / 1024;
  } catch {
    return NaN;
  }
}

const dispatcher = new Agent({ connections: CONCURRENCY * 2, pipelining: 1, keepAliveTimeout: 60_000 });
const payload = JSON.stringify({ message: 'Where is my order A-1002?' });

function supportModel(request: TestLlmRequest): TestLlmReply {
  const toolResult = request.messages.findLast((m) => m.role === 'tool')?.content;
  if (toolResult !== undefined) return { content: toolResult };
  return { content: 'Order A-1002 is shipped, arriving 2026-12-07.' };
}

/** Closed-loop load: `concurrency` workers for `ms` (or `count` calls); per-call latencies in ms and calls/s. */
async function load(
  url: string,
  o: { concurrency: number; ms?: number; count?: number; onTick?: () => void },
): Promise<{ rps: number; p50: number; latencies: number[] }> {
  const latencies: number[] = [];
  const started = performance.now();
  const until = started + (o.ms ?? Infinity);
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < until && issued < (o.count ?? Infinity)) {
      issued += 1;
      const t0 = performance.now();
      const res = await request(`${url}/chat`, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json' },
        body: payload,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200)
        throw new Error(`the bench service answered ${res.statusCode}: ${text.slice(0, 200)}`);
      latencies.push(performance.now() - t0);
    }
  };
  const ticker = o.onTick ? setInterval(o.onTick, 250) : null;
  try {
    await Promise.all(Array.from({ length: o.concurrency }, worker));
  } finally {
    if (ticker) clearInterval(ticker);
  }
  const wall = performance.now() - started;
  return { rps: (latencies.length / wall) * 1000, p50: median(latencies), latencies };
}

async function getJson(url: string): Promise<Record<string, number>> {
  const res = await request(url, { dispatcher });
  return (await res.body.json()) as Record<string, number>;
}

/** The service's V8 heap in use after a full collection, MB. */
async function heapAfterGcMb(service: Service): Promise<number> {
  return round((await getJson(`${service.url}/heap`)).heapUsed! / 1024 / 1024, 1);
}

/** One repeat's figures: per service, CPU µs per request (export of what the leg queued included) and RSS after it. */
interface RepeatRow {
  cpuUs: Partial<Record<ServiceLabel, number>> & Record<'plain' | 'agl' | 'otel', number>;
  rssMb: Partial<Record<ServiceLabel, number>> & Record<'plain' | 'agl' | 'otel', number>;
  storeUs: number;
  /** The store's CPU over each baseline AGL service's leg (with `AGL_BENCH_OBSERVE_BASELINE`), by label. */
  baselineStoreUs?: Partial<Record<ServiceLabel, number>>;
  sinkUs: number;
  loadAverage: number;
}

/**
 * One repeat: each service in turn (the order rotates with `index`) serves {@link LEG_REQUESTS} requests at
 * {@link CONCURRENCY}, then exports what it still holds (`GET /flush`, so each side pays for all it recorded); its CPU
 * (utime + stime from /proc) over the leg and the flush, per request; the store's CPU over the AGL leg, and the OTLP
 * sink's over the peer's.
 */
async function repeatOnce(
  services: readonly Service[],
  index: number,
  peers: { storeCpu: () => number | null; sinkCpu: () => number | null },
): Promise<RepeatRow> {
  const order = services.map((_, i) => services[(i + index) % services.length]!);
  const row: RepeatRow = {
    cpuUs: { plain: NaN, agl: NaN, otel: NaN },
    rssMb: { plain: NaN, agl: NaN, otel: NaN },
    storeUs: NaN,
    sinkUs: NaN,
    loadAverage: round(loadavg()[0]!, 2),
  };
  for (const s of order) {
    const cpu0 = cpuSecondsOf(s.proc.pid) ?? NaN;
    const store0 = peers.storeCpu() ?? NaN;
    const sink0 = peers.sinkCpu() ?? NaN;
    const measured = await load(s.url, { concurrency: CONCURRENCY, count: LEG_REQUESTS });
    await getJson(`${s.url}/flush`);
    const perRequest = (seconds: number): number => (seconds / measured.latencies.length) * 1e6;
    row.cpuUs[s.label] = perRequest((cpuSecondsOf(s.proc.pid) ?? NaN) - cpu0);
    row.rssMb[s.label] = rssMbOf(s.proc.pid);
    if (s.kind === 'agl') row.storeUs = perRequest((peers.storeCpu() ?? NaN) - store0);
    if (s.kind === 'aglBaseline')
      (row.baselineStoreUs ??= {})[s.label] = perRequest((peers.storeCpu() ?? NaN) - store0);
    if (s.kind === 'otel') row.sinkUs = perRequest((peers.sinkCpu() ?? NaN) - sink0);
  }
  return row;
}

/** One call at a time, `calls` a service, in alternating slices of 100 so all see the same host. */
async function serialLatencies(
  services: readonly Service[],
  calls: number,
): Promise<Partial<Record<ServiceLabel, number[]>> & Record<'plain' | 'agl' | 'otel', number[]>> {
  const out: Partial<Record<ServiceLabel, number[]>> & Record<'plain' | 'agl' | 'otel', number[]> = {
    plain: [],
    agl: [],
    otel: [],
  };
  for (let done = 0; done < calls; done += 100) {
    for (const s of services)
      (out[s.label] ??= []).push(...(await load(s.url, { concurrency: 1, count: 100 })).latencies);
  }
  return out;
}

/**
 * The same-run A/B (`AGL_BENCH_OBSERVE_BASELINE=<dir>[,<dir>...]`, copies of earlier builds' `dist/` folders): one
 * baseline AGL service's figures beside the current one's, from the same repeats, and what the next build in the list
 * (or the current one, after the last) saves over it.
 */
function baselineFigures(
  rows: readonly RepeatRow[],
  serial: Partial<Record<ServiceLabel, number[]>> & Record<'plain' | 'agl' | 'otel', number[]>,
  label: ServiceLabel,
  next: ServiceLabel,
  dir: string,
): ResultTree {
  const cpu = (r: RepeatRow, l: ServiceLabel): number => r.cpuUs[l] ?? NaN;
  const added = median(rows.map((r) => cpu(r, label) - r.cpuUs.plain));
  const current = median(rows.map((r) => r.cpuUs.agl - r.cpuUs.plain));
  return {
    dir,
    label,
    next,
    serviceCpuAddedMicros: round(added, 0),
    // What the current build saves over the baseline, µs of service CPU per request (median of same-repeat pairs).
    serviceCpuSavedMicros: round(median(rows.map((r) => cpu(r, label) - r.cpuUs.agl)), 0),
    // What the next build in the list (the current one after the last) saves over this one.
    nextSavesMicros: round(median(rows.map((r) => cpu(r, label) - cpu(r, next))), 0),
    nextCheaperInRepeats: rows.filter((r) => cpu(r, next) < cpu(r, label)).length,
    currentServiceCpuAddedMicros: round(current, 0),
    storeCpuMicrosPerRequest: round(median(rows.map((r) => r.baselineStoreUs?.[label] ?? NaN)), 0),
    serviceRssAddedMb: round(median(rows.map((r) => (r.rssMb[label] ?? NaN) - r.rssMb.plain)), 1),
    p50AddedMs: round(median(serial[label] ?? []) - median(serial.plain), 3),
    currentCheaperInRepeats: rows.filter((r) => r.cpuUs.agl < cpu(r, label)).length,
  };
}

/** Waits (polling, 60 s at most) until the recorder has nothing buffered; returns its counters. */
async function waitDrained(service: Service): Promise<Record<string, number>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = await getJson(`${service.url}/stats`);
    if (s.buffered === 0 || Date.now() > deadline) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The AGL service's RSS while the store is down for `seconds` under load at {@link CONCURRENCY}, against the
 * recorder's buffer byte limit plus 50 MB; nothing recorded before the outage is lost (`counters`).
 */
async function storeOutage(
  agl: Service,
  plain: Service,
  stopStore: () => Promise<unknown>,
  seconds: number,
  log: (line: string) => void,
): Promise<ResultTree> {
  const drained = await waitDrained(agl);
  log(`  observe: recorder drained, counters ${JSON.stringify(drained)}`);
  const rssBeforeMb = rssMbOf(agl.proc.pid);
  await stopStore();
  let peakRssMb = rssBeforeMb;
  const down = await load(agl.url, {
    concurrency: CONCURRENCY,
    ms: seconds * 1000,
    onTick: () => (peakRssMb = Math.max(peakRssMb, rssMbOf(agl.proc.pid))),
  });
  peakRssMb = Math.max(peakRssMb, rssMbOf(agl.proc.pid));
  const counters = await getJson(`${agl.url}/stats`);
  const bufferMb = BUFFER_BYTE_LIMIT / 1024 / 1024;
  const unrecordedPeakRssMb = rssMbOf(plain.proc.pid, 'VmHWM');
  const heapAfterGc = { unrecorded: await heapAfterGcMb(plain), recordedStoreDown: await heapAfterGcMb(agl) };
  log(
    `  observe: store down ${seconds} s at ${down.rps.toFixed(0)} req/s: RSS ${rssBeforeMb.toFixed(0)} → peak ${peakRssMb.toFixed(0)} MB (buffer limit ${bufferMb.toFixed(0)} MB), counters ${JSON.stringify(counters)}`,
  );
  return {
    seconds,
    requestsPerSecond: round(down.rps, 1),
    rssBeforeMb: round(rssBeforeMb, 1),
    unrecordedServicePeakRssMb: round(unrecordedPeakRssMb, 1),
    overUnrecordedMb: round(peakRssMb - unrecordedPeakRssMb, 1),
    overUnrecordedWithinBudget: peakRssMb - unrecordedPeakRssMb < bufferMb + 50,
    peakRssMb: round(peakRssMb, 1),
    bufferByteLimitMb: round(bufferMb, 1),
    budgetMb: round(bufferMb + 50, 1),
    withinBudget: peakRssMb < bufferMb + 50,
    growthMb: round(peakRssMb - rssBeforeMb, 1),
    heapAfterGcMb: heapAfterGc,
    counters,
  };
}

/**
 * The live-service bench, side by side (issue 56): a node:http service making one `openai` chat completion per
 * request to a 5 ms fake LLM, run plain, with AGL and with the standard OpenTelemetry stack that records prompts, in
 * interleaved repeats (12, or 3 with `--quick`) of {@link LEG_REQUESTS} requests at {@link CONCURRENCY} per service;
 * each process's CPU per request from /proc (the service's, the store's, the OTLP sink's) and the services' RSS,
 * medians of the repeats' same-round differences; added p50 one call at a time in alternating slices; then the store
 * down for 60 s (15 s) under load. `AGL_BENCH_OBSERVE_PROFILE=<dir>` writes the AGL service's CPU profile there and
 * prints its hottest frames.
 */
export async function runObserveBench(options: { quick: boolean; log?: (line: string) => void }): Promise<ResultTree> {
  const log = options.log ?? (() => undefined);
  const repeats = Number(process.env.AGL_BENCH_OBSERVE_REPEATS) || (options.quick ? 3 : 12);
  const serialCalls = options.quick ? 300 : 2000;
  const downSeconds = options.quick ? 15 : 60;
  const profileDir = process.env.AGL_BENCH_OBSERVE_PROFILE || undefined;
  const baselineDirs = (process.env.AGL_BENCH_OBSERVE_BASELINE ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter((d) => d !== '');
  const baselineLabel = (i: number): ServiceLabel => (i === 0 ? 'aglBaseline' : `aglBaseline${i + 1}`);
  const dir = mkdtempSync(join(tmpdir(), 'agl-bench-observe-'));
  const llm = await startOpenAiTestServer({
    latencyMs: LLM_LATENCY_MS,
    // A hosted API keeps connections open for a minute or more.
    keepAliveTimeoutMs: 65_000,
    keepRequests: false,
    respond: supportModel,
  });
  const store = await serveStore({ dbPath: join(dir, 'store.sqlite') });
  const sink = await spawnChild(['tools/bench/src/otlp-sink-main.mjs'], {}, 'OTLP_SINK_URL');
  const urls = { llm: llm.baseURL, store: store.url, otlp: sink.url };
  const services: Service[] = [];
  try {
    services.push(await startService('plain', urls));
    services.push(await startService('agl', urls, profileDir));
    services.push(await startService('otel', urls));
    for (const [i, baselineDir] of baselineDirs.entries())
      services.push(await startService('aglBaseline', urls, undefined, resolvePath(baselineDir), baselineLabel(i)));
    const [plain, agl] = services as [Service, Service, Service];
    // Warm-up: the JIT settles over a few thousand requests.
    for (const s of services) await load(s.url, { concurrency: CONCURRENCY, count: options.quick ? 1000 : 2000 });
    for (const s of services) await getJson(`${s.url}/flush`);
    const peers = { storeCpu: () => store.cpuSeconds(), sinkCpu: () => cpuSecondsOf(sink.proc.pid) };
    const rows: RepeatRow[] = [];
    for (let i = 0; i < repeats; i += 1) {
      const row = await repeatOnce(services, i, peers);
      rows.push(row);
      log(
        `  observe repeat ${i + 1}/${repeats} (load ${row.loadAverage}): service µs/request plain ${row.cpuUs.plain.toFixed(0)}, ` +
          `AGL ${row.cpuUs.agl.toFixed(0)} (+${(row.cpuUs.agl - row.cpuUs.plain).toFixed(0)}), OpenTelemetry ` +
          `${row.cpuUs.otel.toFixed(0)} (+${(row.cpuUs.otel - row.cpuUs.plain).toFixed(0)}); store ${row.storeUs.toFixed(0)}, ` +
          `OTLP sink ${row.sinkUs.toFixed(0)}` +
          baselineDirs
            .map((_, b) => `; ${baselineLabel(b)} ${(row.cpuUs[baselineLabel(b)] ?? NaN).toFixed(0)}`)
            .join('') +
          `; RSS MB ${row.rssMb.plain.toFixed(0)} / ${row.rssMb.agl.toFixed(0)} / ${row.rssMb.otel.toFixed(0)}`,
      );
    }
    const added = (kind: 'agl' | 'otel'): number[] => rows.map((r) => r.cpuUs[kind] - r.cpuUs.plain);
    const aglAdded = median(added('agl'));
    const peerAdded = median(added('otel'));
    const serial = await serialLatencies(services, serialCalls);
    const p50 = { plain: median(serial.plain), agl: median(serial.agl), otel: median(serial.otel) };
    const storeDown = await storeOutage(agl, plain, () => store.stop(), downSeconds, log);
    const figures: ResultTree = {
      profile: {
        concurrency: CONCURRENCY,
        llmLatencyMs: LLM_LATENCY_MS,
        requestsPerLeg: LEG_REQUESTS,
        repeats,
        serialCalls,
        peer: 'OpenTelemetry sdk-node + instrumentation-http + @traceloop/instrumentation-openai (traceContent) + OTLP/HTTP, BatchSpanProcessor',
      },
      serviceCpuAddedMicros: round(aglAdded, 0),
      peerServiceCpuAddedMicros: round(peerAdded, 0),
      serviceCpuRatioToPeer: round(aglAdded / peerAdded, 3),
      storeCpuMicrosPerRequest: round(median(rows.map((r) => r.storeUs)), 0),
      serviceRssAddedMb: round(median(rows.map((r) => r.rssMb.agl - r.rssMb.plain)), 1),
      p50AddedMs: round(p50.agl - p50.plain, 3),
      peerP50AddedMs: round(p50.otel - p50.plain, 3),
      peerServiceRssAddedMb: round(median(rows.map((r) => r.rssMb.otel - r.rssMb.plain)), 1),
      peerSinkCpuMicrosPerRequest: round(median(rows.map((r) => r.sinkUs)), 0),
      // What the OTLP sink received from the peer (exports, bytes): it records the prompts and completions too.
      peerSinkReceived: await getJson(`${sink.url}/stats`),
      serviceCpuMicrosPerRequest: {
        plain: round(median(rows.map((r) => r.cpuUs.plain)), 0),
        agl: round(median(rows.map((r) => r.cpuUs.agl)), 0),
        otel: round(median(rows.map((r) => r.cpuUs.otel)), 0),
      },
      // In how many repeats AGL's service CPU was below the peer's.
      aglCheaperInRepeats: rows.filter((r) => r.cpuUs.agl < r.cpuUs.otel).length,
      serialP50Ms: { plain: round(p50.plain, 3), agl: round(p50.agl, 3), otel: round(p50.otel, 3) },
      loadAverage: {
        median: round(median(rows.map((r) => r.loadAverage)), 2),
        max: round(Math.max(...rows.map((r) => r.loadAverage)), 2),
      },
      repeatRows: rows as unknown as ResultTree[],
      ...(baselineDirs.length > 0
        ? {
            baseline: baselineFigures(
              rows,
              serial,
              'aglBaseline',
              baselineDirs.length > 1 ? baselineLabel(1) : 'agl',
              baselineDirs[0]!,
            ),
            baselines: baselineDirs.map((d, i) =>
              baselineFigures(
                rows,
                serial,
                baselineLabel(i),
                i + 1 < baselineDirs.length ? baselineLabel(i + 1) : 'agl',
                d,
              ),
            ),
          }
        : {}),
      storeDown,
      targets: { serviceCpuRatioToPeer: 0.8, storeCpuMicrosPerRequest: 100, serviceRssAddedMb: 30, p50AddedMs: 0.15 },
    };
    log(
      `  observe: service CPU added per request AGL +${aglAdded.toFixed(0)} µs, OpenTelemetry +${peerAdded.toFixed(0)} µs ` +
        `(ratio ${(aglAdded / peerAdded).toFixed(3)}); store ${String(figures.storeCpuMicrosPerRequest)} µs/request; ` +
        `RSS +${String(figures.serviceRssAddedMb)} MB; p50 added (c=1) ${String(figures.p50AddedMs)} ms`,
    );
    if (profileDir) {
      await agl.stop();
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      if (file)
        for (const h of inclusiveHotspots(join(profileDir, file), 30))
          log(`    ${(h.totalShare * 100).toFixed(1)} % total, ${(h.selfShare * 100).toFixed(1)} % self  ${h.frame}`);
    }
    return figures;
  } finally {
    await Promise.allSettled([...services.map((s) => s.stop()), sink.stop(), store.stop(), llm.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
