/**
 * Gateway benchmark (not a test). Fixed profile: backend latency 20 ms, a fixed 200-token reply (non-streaming chat
 * completions, training calls: token ids and logprobs on), concurrency 64. Each round sends the same requests once
 * straight to the backend and once through the gateway; the backend, the gateway and this load generator are separate
 * processes. Reports medians over the rounds: throughput ratio (gateway / direct; target ≥ 85 %), added p50 / p99
 * latency (target p50 < 1 ms), and the gateway's CPU time per call.
 *
 * Run: `npm run bench -w packages/gateway` (env: BENCH_ROUNDS, BENCH_REQUESTS, BENCH_CONCURRENCY).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const EXEC_ARGV = ['--conditions=@agl/source', '--import', 'tsx'];

interface Child {
  proc: ChildProcess;
  baseURL: string;
}

async function start(file: string, env: Record<string, string> = {}): Promise<Child> {
  const profile = process.env.BENCH_CPU_PROFILE && file.includes('gateway') ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`] : [];
  const proc = fork(fileURLToPath(new URL(file, import.meta.url)), [], { execArgv: [...EXEC_ARGV, ...profile], env: { ...process.env, ...env } });
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

const cpuMs = async (child: Child): Promise<number> => {
  const { usage } = await ask<{ usage: NodeJS.CpuUsage }>(child, 'cpu');
  return (usage.user + usage.system) / 1000;
};

const dispatcher = new Agent({ connections: CONCURRENCY * 2, keepAliveTimeout: 60_000 });
const body = (extra: Record<string, unknown>): string => JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Write two hundred words.' }], max_tokens: 200, ...extra });

let resets = 0;
/** POST with one retry when a reused keep-alive connection was reset. */
async function post(url: string, payload: string): Promise<Awaited<ReturnType<typeof request>>> {
  try {
    return await request(url, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: payload });
  } catch (err) {
    if ((err as { code?: string }).code !== 'ECONNRESET' && (err as { code?: string }).code !== 'UND_ERR_SOCKET') throw err;
    resets += 1;
    return request(url, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: payload });
  }
}

/** Sends `REQUESTS` calls with `CONCURRENCY` workers; returns per-call latencies (ms) and the wall time (ms). */
async function load(url: string, payload: string): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < REQUESTS) {
      next += 1;
      const t0 = performance.now();
      const res = await post(url, payload);
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { latencies, wallMs: performance.now() - started };
}

const pct = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const median = (values: number[]): number => pct(values, 50);

const backend = await start('./bench-backend.ts');
const gateway = await start('./bench-gateway.ts', { BENCH_BACKEND_URL: backend.baseURL });
// The direct calls ask for what the gateway adds on training calls, so the backend does the same work both ways.
const directPayload = body({ return_token_ids: true, logprobs: true });
const gatewayPayload = body({});
await load(`${backend.baseURL}/chat/completions`, directPayload);
await load(`${gateway.baseURL}/chat/completions`, gatewayPayload);

const rows: { ratio: number; directRps: number; gatewayRps: number; addP50: number; addP99: number; cpuPerCall: number }[] = [];
for (let round = 1; round <= ROUNDS; round += 1) {
  const direct = await load(`${backend.baseURL}/chat/completions`, directPayload);
  const cpu0 = await cpuMs(gateway);
  const viaGateway = await load(`${gateway.baseURL}/chat/completions`, gatewayPayload);
  const cpu1 = await cpuMs(gateway);
  const directRps = (REQUESTS / direct.wallMs) * 1000;
  const gatewayRps = (REQUESTS / viaGateway.wallMs) * 1000;
  const row = {
    ratio: gatewayRps / directRps,
    directRps,
    gatewayRps,
    addP50: pct(viaGateway.latencies, 50) - pct(direct.latencies, 50),
    addP99: pct(viaGateway.latencies, 99) - pct(direct.latencies, 99),
    cpuPerCall: (cpu1 - cpu0) / REQUESTS,
  };
  rows.push(row);
  console.log(
    `round ${round}: direct ${directRps.toFixed(0)} req/s (p50 ${pct(direct.latencies, 50).toFixed(2)} ms, p99 ${pct(direct.latencies, 99).toFixed(2)} ms) | ` +
      `gateway ${gatewayRps.toFixed(0)} req/s (p50 ${pct(viaGateway.latencies, 50).toFixed(2)} ms, p99 ${pct(viaGateway.latencies, 99).toFixed(2)} ms) | ` +
      `ratio ${(row.ratio * 100).toFixed(1)} % | gateway CPU ${row.cpuPerCall.toFixed(3)} ms/call`,
  );
}

// Added latency without queueing: one call at a time.
const serial = async (url: string, payload: string, n: number): Promise<number[]> => {
  const out: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const t0 = performance.now();
    const res = await post(url, payload);
    await res.body.text();
    out.push(performance.now() - t0);
  }
  return out;
};
const serialDirect = await serial(`${backend.baseURL}/chat/completions`, directPayload, 200);
const serialGateway = await serial(`${gateway.baseURL}/chat/completions`, gatewayPayload, 200);
const { count } = await ask<{ count: number }>(gateway, 'spans');

console.log('');
console.log(`profile: backend latency 20 ms, 200-token reply (token ids + logprobs), concurrency ${CONCURRENCY}, ${REQUESTS} calls × ${ROUNDS} rounds`);
console.log(`median throughput ratio (gateway / direct): ${(median(rows.map((r) => r.ratio)) * 100).toFixed(1)} %  (target ≥ 85 %)`);
console.log(`median throughput: direct ${median(rows.map((r) => r.directRps)).toFixed(0)} req/s, gateway ${median(rows.map((r) => r.gatewayRps)).toFixed(0)} req/s`);
console.log(`median added latency at concurrency ${CONCURRENCY}: p50 ${median(rows.map((r) => r.addP50)).toFixed(2)} ms, p99 ${median(rows.map((r) => r.addP99)).toFixed(2)} ms`);
console.log(`added latency at concurrency 1: p50 ${(pct(serialGateway, 50) - pct(serialDirect, 50)).toFixed(2)} ms, p99 ${(pct(serialGateway, 99) - pct(serialDirect, 99)).toFixed(2)} ms  (target p50 < 1 ms)`);
console.log(`median gateway CPU per call: ${median(rows.map((r) => r.cpuPerCall)).toFixed(3)} ms (includes building and storing the span)`);
console.log(`spans stored: ${count}; load-generator connection resets retried: ${resets}`);

for (const child of [gateway, backend]) {
  child.proc.send({ type: 'stop' });
  await once(child.proc, 'exit');
}
await dispatcher.close();
