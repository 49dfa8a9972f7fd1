/**
 * Gateway benchmark (not a test). Fixed profile: backend latency 20 ms, a fixed 200-token reply (non-streaming chat
 * completions, training calls: token ids and logprobs on), concurrency 64. Each round sends the same number of requests
 * once straight to the backend and once through the gateway (the order alternates between rounds), with the same HTTP
 * client; the backend, the gateway and this load generator are separate processes. Reports medians over the rounds:
 * throughput ratio (gateway / direct, measured in the same round; target ≥ 85 %), added p50 / p99 latency (target
 * p50 < 1 ms, measured one call at a time), and the CPU time per call of the gateway process (and, for context, of
 * the backend and of this load generator). A bare pass-through proxy (`bench-passthrough.ts`) is measured the same way
 * in the same rounds, as the floor any Node proxy meets on this machine (BENCH_PASSTHROUGH=0 leaves it out).
 *
 * Run: `npm run bench -w packages/gateway [-- --json out.json]` (env: BENCH_ROUNDS, BENCH_REQUESTS,
 * BENCH_CONCURRENCY, BENCH_SERIAL, BENCH_LATENCY_MS, BENCH_SPAN_WRITE, BENCH_STORE=memory|sqlite, BENCH_CPU_PROFILE=<dir>,
 * BENCH_BASELINE, BENCH_BASELINE_SPAN_WRITE, BENCH_PASSTHROUGH=0).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { KEEP_ALIVE_THRESHOLD_MS } from '../src/upstream/upstream-client';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const SERIAL = Number(process.env.BENCH_SERIAL ?? 300);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 20);
const EXEC_ARGV = ['--conditions=@agl/source', '--import', 'tsx'];
const jsonFlag = process.argv.indexOf('--json');
const JSON_OUT = jsonFlag >= 0 ? process.argv[jsonFlag + 1] : undefined;
if (jsonFlag >= 0 && !JSON_OUT) throw new Error('--json needs a file name: --json bench-results.json');

interface Child {
  proc: ChildProcess;
  baseURL: string;
}

async function start(file: string, env: Record<string, string> = {}): Promise<Child> {
  const profile =
    process.env.BENCH_CPU_PROFILE && file.includes('gateway')
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`]
      : [];
  const proc = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
    execArgv: [...EXEC_ARGV, ...profile],
    env: { ...process.env, ...env },
  });
  const [message] = (await once(proc, 'message')) as [{ baseURL: string }];
  return { proc, baseURL: message.baseURL };
}

async function ask<T>(child: Child, type: string): Promise<T> {
  child.proc.send({ type });
  for (;;) {
    const [message] = (await once(child.proc, 'message')) as [{ type: string } & T];
    if (message.type === type) return message;
  }
}

/** CPU time (user + system) of a child so far, and its garbage-collection pause time (gateways only), in ms. */
const cpuAndGcMs = async (child: Child): Promise<{ cpu: number; gc: number }> => {
  const { usage, gcMs } = await ask<{ usage: NodeJS.CpuUsage; gcMs?: number }>(child, 'cpu');
  return { cpu: (usage.user + usage.system) / 1000, gc: gcMs ?? 0 };
};
const cpuMs = async (child: Child): Promise<number> => (await cpuAndGcMs(child)).cpu;
const ownCpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

// One client for both targets, keeping connections alive the way the gateway does towards the backend (the test
// backend advertises `Keep-Alive: timeout=1`, which undici's default 2 s threshold turns into a connect per call).
const dispatcher = new Agent({
  connections: CONCURRENCY * 2,
  keepAliveTimeout: 60_000,
  keepAliveTimeoutThreshold: KEEP_ALIVE_THRESHOLD_MS,
});
const body = (extra: Record<string, unknown>): string =>
  JSON.stringify({
    model: 'bench',
    messages: [{ role: 'user', content: 'Write two hundred words.' }],
    max_tokens: 200,
    ...extra,
  });

let resets = 0;
/** POST with one retry when a reused keep-alive connection was reset. */
async function post(url: string, payload: string): Promise<Awaited<ReturnType<typeof request>>> {
  try {
    return await request(url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json' },
      body: payload,
    });
  } catch (err) {
    if ((err as { code?: string }).code !== 'ECONNRESET' && (err as { code?: string }).code !== 'UND_ERR_SOCKET')
      throw err;
    resets += 1;
    return request(url, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: payload });
  }
}

/** Sends `n` calls with `concurrency` workers; returns per-call latencies (ms) and the wall time (ms). */
async function load(
  url: string,
  payload: string,
  n: number,
  concurrency: number,
): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < n) {
      next += 1;
      const t0 = performance.now();
      const res = await post(url, payload);
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies, wallMs: performance.now() - started };
}

const pct = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const median = (values: number[]): number => pct(values, 50);
const ms = (v: number): string => v.toFixed(2);

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  /** CPU per call (ms) of the gateway under test (0 for direct calls), the backend and the load generator. */
  gatewayCpu: number;
  /** Garbage-collection pause time per call (ms) of the gateway under test. */
  gatewayGc: number;
  backendCpu: number;
  clientCpu: number;
}

interface Target {
  name: 'direct' | 'gateway' | 'baseline' | 'passthrough';
  url: string;
  payload: string;
  child: Child | null;
}

const backend = await start('./bench-backend.ts', { BENCH_LATENCY_MS: String(LATENCY_MS) });
const targets: Target[] = [
  {
    name: 'direct',
    url: `${backend.baseURL}/chat/completions`,
    payload: body({ return_token_ids: true, logprobs: true }),
    child: null,
  },
];
// The direct calls ask for what the gateway adds on training calls, so the backend does the same work both ways.
const gateway = await start('./bench-gateway.ts', { BENCH_BACKEND_URL: backend.baseURL });
targets.push({ name: 'gateway', url: `${gateway.baseURL}/chat/completions`, payload: body({}), child: gateway });
// BENCH_BASELINE=<gateway index.ts, relative to bench/>: a second gateway build measured in the same rounds
// (BENCH_BASELINE_SPAN_WRITE sets its span-write mode, e.g. to compare the modes of one build).
const baseline = process.env.BENCH_BASELINE
  ? await start('./bench-gateway.ts', {
      BENCH_BACKEND_URL: backend.baseURL,
      BENCH_GATEWAY_MODULE: process.env.BENCH_BASELINE,
      BENCH_SPAN_WRITE: process.env.BENCH_BASELINE_SPAN_WRITE ?? process.env.BENCH_SPAN_WRITE ?? '',
    })
  : null;
if (baseline)
  targets.push({ name: 'baseline', url: `${baseline.baseURL}/chat/completions`, payload: body({}), child: baseline });
// The pass-through forwards the direct payload (token ids and logprobs asked for), so the backend's work is the same.
const passthrough =
  process.env.BENCH_PASSTHROUGH === '0'
    ? null
    : await start('./bench-passthrough.ts', { BENCH_BACKEND_URL: backend.baseURL });
if (passthrough)
  targets.push({
    name: 'passthrough',
    url: `${passthrough.baseURL}/chat/completions`,
    payload: targets[0]!.payload,
    child: passthrough,
  });

async function measure(target: Target, n: number, concurrency: number): Promise<Measured> {
  const none = { cpu: 0, gc: 0 };
  const g0 = target.child ? await cpuAndGcMs(target.child) : none;
  const [b0, c0] = [await cpuMs(backend), ownCpuMs()];
  const { latencies, wallMs } = await load(target.url, target.payload, n, concurrency);
  const g1 = target.child ? await cpuAndGcMs(target.child) : none;
  const [b1, c1] = [await cpuMs(backend), ownCpuMs()];
  return {
    rps: (n / wallMs) * 1000,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    gatewayCpu: (g1.cpu - g0.cpu) / n,
    gatewayGc: (g1.gc - g0.gc) / n,
    backendCpu: (b1 - b0) / n,
    clientCpu: (c1 - c0) / n,
  };
}

// Warm-up (JIT, connection pools, caches), every target.
for (const target of targets) await load(target.url, target.payload, REQUESTS, CONCURRENCY);

type Round = Partial<Record<Target['name'], Measured>>;
const rounds: Round[] = [];
for (let round = 1; round <= ROUNDS; round += 1) {
  // Rotate the order, so no target always runs first (or last) in a round.
  const order = targets.map((_, i) => targets[(i + round - 1) % targets.length]!);
  const got: Round = {};
  for (const target of order) got[target.name] = await measure(target, REQUESTS, CONCURRENCY);
  rounds.push(got);
  const direct = got.direct!;
  const line = [
    `round ${round}: direct ${direct.rps.toFixed(0)} req/s (p50 ${ms(direct.p50)} ms, p99 ${ms(direct.p99)} ms)`,
  ];
  for (const name of ['gateway', 'baseline', 'passthrough'] as const) {
    const via = got[name];
    if (!via) continue;
    line.push(
      `${name} ${via.rps.toFixed(0)} req/s (p50 ${ms(via.p50)} ms, p99 ${ms(via.p99)} ms) ratio ${((via.rps / direct.rps) * 100).toFixed(1)} % CPU ${(via.gatewayCpu * 1000).toFixed(0)} µs/call`,
    );
  }
  line.push(
    `backend ${(direct.backendCpu * 1000).toFixed(0)} µs/call, client ${(direct.clientCpu * 1000).toFixed(0)} µs/call`,
  );
  console.log(line.join(' | '));
}

// Added latency without queueing: one call at a time, cycling through the targets.
const serial: Record<string, number[]> = {};
const serialCpu: Record<string, number> = {};
const serialGc: Record<string, number> = {};
for (const target of targets) {
  serial[target.name] = [];
  const at = target.child ? await cpuAndGcMs(target.child) : { cpu: 0, gc: 0 };
  serialCpu[target.name] = -at.cpu;
  serialGc[target.name] = -at.gc;
}
for (let i = 0; i < SERIAL; i += 1) {
  for (const target of targets) {
    const t0 = performance.now();
    const res = await post(target.url, target.payload);
    await res.body.text();
    serial[target.name]!.push(performance.now() - t0);
  }
}
for (const target of targets) {
  if (!target.child) continue;
  const at = await cpuAndGcMs(target.child);
  serialCpu[target.name]! += at.cpu;
  serialGc[target.name]! += at.gc;
}
const { count } = await ask<{ count: number }>(gateway, 'spans');

function summarise(name: 'gateway' | 'baseline' | 'passthrough') {
  const rows = rounds.map((r) => ({ direct: r.direct!, via: r[name]! }));
  return {
    throughputRatio: median(rows.map((r) => r.via.rps / r.direct.rps)),
    directRps: median(rows.map((r) => r.direct.rps)),
    gatewayRps: median(rows.map((r) => r.via.rps)),
    p50AddedMs: pct(serial[name]!, 50) - pct(serial.direct!, 50),
    p99AddedMs: pct(serial[name]!, 99) - pct(serial.direct!, 99),
    p50AddedMsAtConcurrency: median(rows.map((r) => r.via.p50 - r.direct.p50)),
    p99AddedMsAtConcurrency: median(rows.map((r) => r.via.p99 - r.direct.p99)),
    cpuMicrosPerCall: median(rows.map((r) => r.via.gatewayCpu)) * 1000,
    cpuMicrosPerCallSerial: (serialCpu[name]! / SERIAL) * 1000,
    gcPauseMicrosPerCall: median(rows.map((r) => r.via.gatewayGc)) * 1000,
    gcPauseMicrosPerCallSerial: (serialGc[name]! / SERIAL) * 1000,
    backendCpuMicrosPerCall: median(rows.map((r) => r.direct.backendCpu)) * 1000,
    clientCpuMicrosPerCall: median(rows.map((r) => r.direct.clientCpu)) * 1000,
  };
}

const passthroughSummary = passthrough ? summarise('passthrough') : null;
const summary = {
  ...summarise('gateway'),
  // The same figures of the bare pass-through proxy, measured in the same rounds: the floor on this machine.
  passthroughThroughputRatio: passthroughSummary?.throughputRatio ?? null,
  passthroughP50AddedMs: passthroughSummary?.p50AddedMs ?? null,
  passthroughCpuMicrosPerCall: passthroughSummary?.cpuMicrosPerCall ?? null,
  spansStored: count,
  connectionResetsRetried: resets,
};
const baselineSummary = baseline ? summarise('baseline') : null;

console.log('');
console.log(
  `profile: backend latency ${LATENCY_MS} ms, 200-token reply (token ids + logprobs), concurrency ${CONCURRENCY}, ${REQUESTS} calls × ${ROUNDS} rounds`,
);
for (const [label, s] of [
  ['gateway', summary],
  ['baseline', baselineSummary],
] as const) {
  if (!s) continue;
  const tag = label === 'gateway' ? '' : ` [baseline ${process.env.BENCH_BASELINE}]`;
  console.log(`${label}${tag}:`);
  console.log(
    `  median throughput ratio (gateway / direct): ${(s.throughputRatio * 100).toFixed(1)} %  (target ≥ 85 %); direct ${s.directRps.toFixed(0)} req/s, gateway ${s.gatewayRps.toFixed(0)} req/s`,
  );
  console.log(
    `  added latency at concurrency 1 (${SERIAL} calls): p50 ${ms(s.p50AddedMs)} ms, p99 ${ms(s.p99AddedMs)} ms  (target p50 < 1 ms)`,
  );
  console.log(
    `  median added latency at concurrency ${CONCURRENCY}: p50 ${ms(s.p50AddedMsAtConcurrency)} ms, p99 ${ms(s.p99AddedMsAtConcurrency)} ms`,
  );
  console.log(
    `  median gateway CPU per call (building and storing the span included): ${s.cpuMicrosPerCall.toFixed(0)} µs at concurrency ${CONCURRENCY}, ` +
      `${s.cpuMicrosPerCallSerial.toFixed(0)} µs one at a time; of which GC pauses ${s.gcPauseMicrosPerCall.toFixed(0)} µs and ${s.gcPauseMicrosPerCallSerial.toFixed(0)} µs`,
  );
}
if (passthroughSummary) {
  const p = passthroughSummary;
  console.log(
    `bare pass-through proxy (no parsing, no span; the floor of a Node proxy here): throughput ratio ${(p.throughputRatio * 100).toFixed(1)} %, ` +
      `added p50 ${ms(p.p50AddedMs)} ms one at a time, ${ms(p.p50AddedMsAtConcurrency)} ms at concurrency ${CONCURRENCY}; CPU ${p.cpuMicrosPerCall.toFixed(0)} µs per call`,
  );
}
console.log(
  `backend CPU ${summary.backendCpuMicrosPerCall.toFixed(0)} µs and load generator CPU ${summary.clientCpuMicrosPerCall.toFixed(0)} µs per direct call`,
);
console.log(`spans stored: ${count}; load-generator connection resets retried: ${resets}`);

if (JSON_OUT) {
  const report = {
    benchmark: 'gateway',
    profile: {
      backendLatencyMs: LATENCY_MS,
      replyTokens: 200,
      concurrency: CONCURRENCY,
      requestsPerRound: REQUESTS,
      rounds: ROUNDS,
      serialCalls: SERIAL,
    },
    targets: { throughputRatio: 0.85, p50AddedMs: 1 },
    gateway: summary,
    ...(baselineSummary ? { baseline: { module: process.env.BENCH_BASELINE, ...baselineSummary } } : {}),
    ...(passthroughSummary ? { passthrough: passthroughSummary } : {}),
    rounds,
    node: process.version,
    measuredAt: new Date().toISOString(),
  };
  writeFileSync(JSON_OUT, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`figures written to ${JSON_OUT}`);
}

for (const child of [gateway, ...(baseline ? [baseline] : []), ...(passthrough ? [passthrough] : []), backend]) {
  child.proc.send({ type: 'stop' });
  await once(child.proc, 'exit');
}
await dispatcher.close();
