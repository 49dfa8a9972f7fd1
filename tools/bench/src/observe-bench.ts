import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startOpenAiTestServer, type TestLlmReply, type TestLlmRequest } from '@agl/testing';
import { cpuSecondsOf, REPO_ROOT, serveStore } from './child-processes';
import { median, round, type ResultTree } from './results';

const CONCURRENCY = 32;
const LLM_LATENCY_MS = 5;
/** The recorder's default buffer bounds (`configureObserve`): 10,000 records, 64 MiB. */
const BUFFER_BYTE_LIMIT = 64 * 1024 * 1024;

interface Service {
  proc: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/**
 * How a bench service runs: `plain` (nothing of AGL), `asyncContext` (plain, each request inside an
 * `AsyncLocalStorage`: the cost of Node 20's async hooks alone), `traced` (the `@agl/openai/register` preload and no
 * store: AGL's tracer writes an LLM span per call, nothing recorded), `recorded` (preload + `observeHandler` +
 * `AGL_STORE_URL`).
 */
type ServiceKind = 'plain' | 'asyncContext' | 'traced' | 'recorded';

/**
 * Starts `observe-service-main.mjs` with plain `node` on the built packages (`npm ci` builds them; after changing
 * sources, `npm run build`).
 */
async function startService(
  kind: ServiceKind,
  llmBaseUrl: string,
  storeUrl: string,
  agent: 'openai' | 'langchain' = 'openai',
): Promise<Service> {
  const register = agent === 'langchain' ? '@agl/langchain/register' : '@agl/openai/register';
  const preload = kind === 'traced' || kind === 'recorded' ? ['--import', register] : [];
  const proc = spawn(process.execPath, ['--expose-gc', ...preload, 'tools/bench/src/observe-service-main.mjs'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      OPENAI_BASE_URL: llmBaseUrl,
      BENCH_RECORDED: kind === 'recorded' ? '1' : '',
      BENCH_ASYNC_CONTEXT: kind === 'asyncContext' ? '1' : '',
      BENCH_AGENT: agent,
      AGL_STORE_URL: kind === 'recorded' ? storeUrl : '',
      AGL_SAMPLE_RATE: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stderr!.on('data', (d: Buffer) => (out = `${out}${d.toString()}`.slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /SERVICE_URL=(\S+)/u.exec(out);
      if (match) resolve(match[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`the bench service exited early (${code}): ${out}`)));
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

/**
 * The fake LLM: the one-call agent gets its answer; the LangChain agent (it offers `order_status`) first gets a call of
 * that tool, then, with the tool's result in the conversation, that result as its answer.
 */
function supportModel(request: TestLlmRequest): TestLlmReply {
  const toolResult = request.messages.findLast((m) => m.role === 'tool')?.content;
  if (toolResult !== undefined) return { content: toolResult };
  if (request.tools.some((t) => t.name === 'order_status'))
    return { toolCalls: [{ name: 'order_status', arguments: { orderId: 'A-1002' } }] };
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

async function stats(service: Service, path = '/stats'): Promise<Record<string, number>> {
  const res = await request(`${service.url}${path}`, { dispatcher });
  return (await res.body.json()) as Record<string, number>;
}

/** The service's V8 heap in use after a full collection, MB: what it holds, apart from the garbage RSS also counts. */
async function heapAfterGcMb(service: Service): Promise<number> {
  return round((await stats(service, '/heap')).heapUsed! / 1024 / 1024, 1);
}

/**
 * A/B pairs at concurrency 32, the order alternating: each side's requests/s, p50 and service CPU per request, and the
 * host's: the service, the store and this process (the fake LLM and the load generator) together, which share the
 * host's cores, so that at saturation the throughput ratio follows it.
 */
async function abPairs(
  plain: Service,
  recorded: Service,
  o: { pairs: number; legMs: number; log: (line: string) => void; label: string; storeCpuSeconds: () => number | null },
): Promise<ResultTree[]> {
  const rows: ResultTree[] = [];
  for (let i = 0; i < o.pairs; i += 1) {
    const order = i % 2 === 0 ? [plain, recorded] : [recorded, plain];
    const got = new Map<
      Service,
      Awaited<ReturnType<typeof load>> & { cpuUs: number; storeUs: number; hostUs: number }
    >();
    for (const s of order) {
      const cpu0 = cpuSecondsOf(s.proc.pid) ?? NaN;
      const store0 = o.storeCpuSeconds() ?? NaN;
      const own0 = process.cpuUsage();
      const measured = await load(s.url, { concurrency: CONCURRENCY, ms: o.legMs });
      const own = process.cpuUsage(own0);
      const perRequest = (seconds: number): number => (seconds / measured.latencies.length) * 1e6;
      const cpuUs = perRequest((cpuSecondsOf(s.proc.pid) ?? NaN) - cpu0);
      const storeUs = perRequest((o.storeCpuSeconds() ?? NaN) - store0);
      const hostUs = cpuUs + storeUs + perRequest((own.user + own.system) / 1e6);
      got.set(s, { ...measured, cpuUs, storeUs, hostUs });
    }
    const a = got.get(plain)!;
    const b = got.get(recorded)!;
    rows.push({
      unrecordedRps: round(a.rps, 1),
      recordedRps: round(b.rps, 1),
      ratio: round(b.rps / a.rps, 4),
      unrecordedP50Ms: round(a.p50, 3),
      recordedP50Ms: round(b.p50, 3),
      unrecordedCpuMicrosPerRequest: round(a.cpuUs, 0),
      recordedCpuMicrosPerRequest: round(b.cpuUs, 0),
      recordedStoreCpuMicrosPerRequest: round(b.storeUs, 0),
      unrecordedHostCpuMicrosPerRequest: round(a.hostUs, 0),
      recordedHostCpuMicrosPerRequest: round(b.hostUs, 0),
    });
    o.log(
      `  ${o.label} pair ${i + 1}/${o.pairs}: unrecorded ${a.rps.toFixed(0)} req/s p50 ${a.p50.toFixed(2)} ms, recorded ${b.rps.toFixed(0)} req/s p50 ${b.p50.toFixed(2)} ms, ratio ${(b.rps / a.rps).toFixed(3)}; service CPU ${a.cpuUs.toFixed(0)} → ${b.cpuUs.toFixed(0)} µs/request, host CPU ${a.hostUs.toFixed(0)} → ${b.hostUs.toFixed(0)} µs/request (store ${b.storeUs.toFixed(0)})`,
    );
  }
  return rows;
}

/** One call at a time, `calls` a side, in alternating slices of 100 so both sides see the same host. */
async function serialLatencies(
  plain: Service,
  recorded: Service,
  calls: number,
): Promise<{ plain: number[]; recorded: number[] }> {
  const serial = { plain: [] as number[], recorded: [] as number[] };
  for (let done = 0; done < calls; done += 100) {
    serial.plain.push(...(await load(plain.url, { concurrency: 1, count: 100 })).latencies);
    serial.recorded.push(...(await load(recorded.url, { concurrency: 1, count: 100 })).latencies);
  }
  return serial;
}

/** The medians of A/B pairs: throughput ratio, requests/s and service CPU per request on each side. */
function pairMedians(rows: ResultTree[]): ResultTree {
  const pick = (key: string): number[] => rows.map((r) => r[key] as number);
  return {
    throughputRatio: round(median(pick('ratio')), 4),
    unrecordedRps: round(median(pick('unrecordedRps')), 1),
    recordedRps: round(median(pick('recordedRps')), 1),
    cpuMicrosPerRequest: {
      unrecorded: round(median(pick('unrecordedCpuMicrosPerRequest')), 0),
      recorded: round(median(pick('recordedCpuMicrosPerRequest')), 0),
    },
    // The store's CPU per recorded request, and the whole host's (service + store + fake LLM and load generator): on a
    // host whose cores they all share, the throughput ratio at saturation is about the host CPU ratio.
    storeCpuMicrosPerRequest: round(median(pick('recordedStoreCpuMicrosPerRequest')), 0),
    hostCpuMicrosPerRequest: {
      unrecorded: round(median(pick('unrecordedHostCpuMicrosPerRequest')), 0),
      recorded: round(median(pick('recordedHostCpuMicrosPerRequest')), 0),
    },
    hostCpuRatio: round(
      median(
        rows.map(
          (r) => (r.unrecordedHostCpuMicrosPerRequest as number) / (r.recordedHostCpuMicrosPerRequest as number),
        ),
      ),
      4,
    ),
  };
}

/**
 * The support-bot's own agent (LangChain.js `createAgent` with a tool: two LLM calls and a tool call per request),
 * recorded (`observeHandler`, `@agl/langchain/register`) against unrecorded: A/B pairs at concurrency 32 and one call
 * at a time. Its own CPU per request is many times the one-call agent's, so recording weighs less in it.
 */
async function langChainShape(
  llmBaseUrl: string,
  storeUrl: string,
  o: {
    pairs: number;
    legMs: number;
    serialCalls: number;
    log: (line: string) => void;
    storeCpuSeconds: () => number | null;
  },
): Promise<ResultTree> {
  const plain = await startService('plain', llmBaseUrl, storeUrl, 'langchain');
  const recorded = await startService('recorded', llmBaseUrl, storeUrl, 'langchain');
  try {
    for (const s of [plain, recorded]) await load(s.url, { concurrency: CONCURRENCY, count: 400 }); // warm-up
    const rows = await abPairs(plain, recorded, { ...o, label: 'observe (LangChain agent)' });
    await waitDrained(recorded);
    const serial = await serialLatencies(plain, recorded, o.serialCalls);
    await waitDrained(recorded);
    return {
      ...pairMedians(rows),
      p50AddedMs: round(median(serial.recorded) - median(serial.plain), 3),
      serialP50Ms: { unrecorded: round(median(serial.plain), 3), recorded: round(median(serial.recorded), 3) },
      pairs: rows,
    };
  } finally {
    await Promise.allSettled([plain.stop(), recorded.stop()]);
  }
}

/**
 * The live-service bench (issue 37): the support-bot's shape of service (node:http + an agent making one chat
 * completion through the instrumented `openai` client) against a 5 ms fake LLM, recorded (`observeHandler`, the
 * `@agl/openai/register` preload, `agl store serve` on SQLite) against unrecorded, in the same run:
 * - throughput at concurrency 32, median of A/B pairs whose order alternates;
 * - where the recorded service's CPU goes: the same service plain, with an `AsyncLocalStorage` around each request,
 *   traced (the preload without a store) and recorded, in interleaved rounds;
 * - added p50 latency one call at a time (the gateway bench's convention) and at concurrency 32;
 * - the same figures for the support-bot's own agent, LangChain.js with a tool (`langchain`);
 * - the recorded service's RSS while the store is down for 60 s (15 s with `--quick`) under the same load, against
 *   the recorder's buffer byte limit plus 50 MB.
 */
export async function runObserveBench(options: { quick: boolean; log?: (line: string) => void }): Promise<ResultTree> {
  const log = options.log ?? (() => undefined);
  const pairs = options.quick ? 3 : 5;
  const legMs = options.quick ? 3000 : 8000;
  const serialCalls = options.quick ? 600 : 2000;
  const downSeconds = options.quick ? 15 : 60;
  const dir = mkdtempSync(join(tmpdir(), 'agl-bench-observe-'));
  const llm = await startOpenAiTestServer({
    latencyMs: LLM_LATENCY_MS,
    // A hosted API keeps connections open for a minute or more; at the test server's default (1 s) undici's fetch
    // would open a new connection for every LLM call, a cost no production service pays.
    keepAliveTimeoutMs: 65_000,
    // Hundreds of thousands of calls: kept, they would grow this process's heap (and its collector's pauses, which
    // stall the LLM for both sides) all run long.
    keepRequests: false,
    respond: supportModel,
  });
  const store = await serveStore({ dbPath: join(dir, 'store.sqlite') });
  const plain = await startService('plain', llm.baseURL, store.url);
  const recorded = await startService('recorded', llm.baseURL, store.url);
  const asyncContext = await startService('asyncContext', llm.baseURL, store.url);
  const traced = await startService('traced', llm.baseURL, store.url);
  try {
    for (const s of [plain, recorded, asyncContext, traced]) {
      await load(s.url, { concurrency: CONCURRENCY, count: 1000 }); // warm-up
    }
    const storeCpuSeconds = (): number | null => store.cpuSeconds();
    const rows = await abPairs(plain, recorded, { pairs, legMs, log, label: 'observe', storeCpuSeconds });
    // Where the recorded service's CPU goes: the four kinds of service in interleaved rounds, the same load.
    const cpuOf = new Map<Service, number[]>();
    // The two extra kinds have had only the warm-up so far; the JIT settles over a few thousand requests.
    for (const s of [asyncContext, traced]) await load(s.url, { concurrency: CONCURRENCY, count: 4000 });
    for (let round = 0; round < (options.quick ? 1 : 3); round += 1) {
      for (const s of [plain, asyncContext, traced, recorded]) {
        const cpu0 = cpuSecondsOf(s.proc.pid) ?? NaN;
        const measured = await load(s.url, { concurrency: CONCURRENCY, ms: options.quick ? 2000 : 4000 });
        const cpuUs = (((cpuSecondsOf(s.proc.pid) ?? NaN) - cpu0) / measured.latencies.length) * 1e6;
        cpuOf.set(s, [...(cpuOf.get(s) ?? []), cpuUs]);
      }
    }
    const cpuBreakdown = {
      plain: round(median(cpuOf.get(plain)!), 0),
      asyncContext: round(median(cpuOf.get(asyncContext)!), 0),
      traced: round(median(cpuOf.get(traced)!), 0),
      recorded: round(median(cpuOf.get(recorded)!), 0),
    };
    await Promise.allSettled([asyncContext.stop(), traced.stop()]);
    log(`  observe: service CPU per request by kind (medians), µs: ${JSON.stringify(cpuBreakdown)}`);

    // One call at a time, in alternating slices so both sides see the same host, once the recorder has sent what the
    // legs at concurrency 32 left in its buffer (else the store ingesting that backlog would weigh on the recorded side).
    await waitDrained(recorded);
    const serial = await serialLatencies(plain, recorded, serialCalls);
    const langchain = await langChainShape(llm.baseURL, store.url, {
      pairs,
      legMs,
      serialCalls: serialCalls / 4,
      log,
      storeCpuSeconds,
    });
    const drained = await waitDrained(recorded);
    log(`  observe: recorder drained, counters ${JSON.stringify(drained)}`);

    // The store goes down; the service keeps serving the same load.
    const rssBeforeMb = rssMbOf(recorded.proc.pid);
    await store.stop();
    let peakRssMb = rssBeforeMb;
    const down = await load(recorded.url, {
      concurrency: CONCURRENCY,
      ms: downSeconds * 1000,
      onTick: () => (peakRssMb = Math.max(peakRssMb, rssMbOf(recorded.proc.pid))),
    });
    peakRssMb = Math.max(peakRssMb, rssMbOf(recorded.proc.pid));
    const downStats = await stats(recorded);
    const bufferMb = BUFFER_BYTE_LIMIT / 1024 / 1024;
    const unrecordedRssMb = rssMbOf(plain.proc.pid);
    // The unrecorded service's peak under the same load (its legs at concurrency 32): what the service itself takes.
    const unrecordedPeakRssMb = rssMbOf(plain.proc.pid, 'VmHWM');
    // Measured after the RSS figures (a full collection changes what RSS would have shown).
    const heapAfterGc = { unrecorded: await heapAfterGcMb(plain), recordedStoreDown: await heapAfterGcMb(recorded) };
    log(
      `  observe: store down ${downSeconds} s at ${down.rps.toFixed(0)} req/s: RSS ${rssBeforeMb.toFixed(0)} → peak ${peakRssMb.toFixed(0)} MB (buffer limit ${bufferMb.toFixed(0)} MB), counters ${JSON.stringify(downStats)}`,
    );
    return {
      profile: { concurrency: CONCURRENCY, llmLatencyMs: LLM_LATENCY_MS, pairs, legSeconds: legMs / 1000, serialCalls },
      // throughputRatio, unrecordedRps, recordedRps and cpuMicrosPerRequest (the service process's CPU per request,
      // load-independent; the store's work is not in it).
      ...pairMedians(rows),
      p50AddedMs: round(median(serial.recorded) - median(serial.plain), 3),
      p50AddedMsAtConcurrency: round(
        median(rows.map((r) => (r.recordedP50Ms as number) - (r.unrecordedP50Ms as number))),
        3,
      ),
      serialP50Ms: { unrecorded: round(median(serial.plain), 3), recorded: round(median(serial.recorded), 3) },
      // The same service plain, with an AsyncLocalStorage around each request, traced (preload, no store), recorded.
      cpuMicrosPerRequestByKind: cpuBreakdown,
      pairs: rows,
      langchain,
      storeDown: {
        seconds: downSeconds,
        requestsPerSecond: round(down.rps, 1),
        rssBeforeMb: round(rssBeforeMb, 1),
        unrecordedServiceRssMb: round(unrecordedRssMb, 1),
        unrecordedServicePeakRssMb: round(unrecordedPeakRssMb, 1),
        // What recording adds to the service's memory during the outage: the recorded peak over the unrecorded one.
        overUnrecordedMb: round(peakRssMb - unrecordedPeakRssMb, 1),
        overUnrecordedWithinBudget: peakRssMb - unrecordedPeakRssMb < bufferMb + 50,
        peakRssMb: round(peakRssMb, 1),
        bufferByteLimitMb: round(bufferMb, 1),
        budgetMb: round(bufferMb + 50, 1),
        withinBudget: peakRssMb < bufferMb + 50,
        // What the outage added over the recorded service's RSS under the same load with the store up.
        growthMb: round(peakRssMb - rssBeforeMb, 1),
        growthWithinBudget: peakRssMb - rssBeforeMb < bufferMb + 50,
        // What each service holds (V8 heap after a full collection), apart from the garbage its RSS also carries.
        heapAfterGcMb: heapAfterGc,
        counters: downStats,
      },
      targets: { throughputRatio: 0.9, p50AddedMs: 0.3 },
    };
  } finally {
    await Promise.allSettled([
      plain.stop(),
      recorded.stop(),
      asyncContext.stop(),
      traced.stop(),
      store.stop(),
      llm.close(),
    ]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits (polling, 60 s at most) until the recorder has nothing buffered; returns its counters. */
async function waitDrained(service: Service): Promise<Record<string, number>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = await stats(service);
    if (s.buffered === 0 || Date.now() > deadline) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
}
