// Issue 42, finding 4: time to the answer and the gateway's peak RSS for a 32 MiB `{"junk":[{},{},...]}` body sent to
// the chat route, and the slowest /healthz answer while it is handled. BENCH_CASE=limit sends instead the heaviest
// body within the limits: a chat call of just under 32 MiB with as many values as the limit allows (a message filling the 32 MiB and `{}` up to `LLM_BODY_LIMITS.maxValues`),
// which the gateway parses and forwards (the backend port is closed, so it ends in a 502).
// Run: node --conditions=@agl/source --import tsx bench/hostile-body-bench.ts
import { fork } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { LLM_BODY_LIMITS } from '../src/routes/request-body';

const child = fork(fileURLToPath(new URL('./hostile-body-gateway.ts', import.meta.url)), [], {
  execArgv: ['--conditions=@agl/source', '--import', 'tsx'],
});
const next = (
  type: string,
): Promise<{ url: string; rssMiB: number; maxRssMiB: number; cpuMs: number; maxLoopDelayMs: number }> =>
  new Promise((resolve) => child.once('message', (m: { type: string }) => m.type === type && resolve(m as never)));
const ready = await next('ready');
const url = ready.url;

const MiB = 32 * 1024 * 1024;
function junkBody(): Buffer {
  const body = Buffer.alloc(MiB - 16);
  body.write('{"junk":[');
  let at = 9;
  while (at + 4 < body.length - 2) at += body.write('{},', at);
  body.write('{}]}', at - 1);
  return body.subarray(0, at + 3);
}
function limitBody(): Buffer {
  const junk = Buffer.from(`[${'{},'.repeat(LLM_BODY_LIMITS.maxValues - 21)}{}]`);
  const head = '{"model":"m","messages":[{"role":"user","content":"';
  const tail = `"}],"junk":`;
  const content = 'x'.repeat(MiB - 1024 - junk.length - head.length - tail.length);
  return Buffer.concat([Buffer.from(head + content + tail), junk, Buffer.from('}')]);
}
const payload = process.env.BENCH_CASE === 'limit' ? limitBody() : junkBody();

let slowestHealthMs = 0;
let probing = true;
const probe = async (): Promise<void> => {
  while (probing) {
    const t = performance.now();
    await fetch(`${url}/healthz`).then((r) => r.text());
    slowestHealthMs = Math.max(slowestHealthMs, performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
};
const probes = probe();
const t0 = performance.now();
const status = await new Promise<number>((resolve, reject) => {
  const req = request(
    `${url}/v1/chat/completions`,
    { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(payload.length) } },
    (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    },
  );
  req.on('error', reject);
  req.end(payload);
});
const ms = performance.now() - t0;
probing = false;
await probes;
child.send({ type: 'rss' });
const { maxRssMiB, cpuMs, maxLoopDelayMs } = await next('rss');
console.log(
  JSON.stringify({
    bodyMiB: +(payload.length / 2 ** 20).toFixed(1),
    status,
    msToAnswer: Math.round(ms),
    slowestHealthMs: Math.round(slowestHealthMs),
    idleRssMiB: Math.round(ready.rssMiB),
    peakRssMiB: Math.round(maxRssMiB),
    gatewayCpuMs: Math.round(cpuMs),
    maxLoopDelayMs: Math.round(maxLoopDelayMs),
  }),
);
child.send({ type: 'stop' });
await new Promise((resolve) => child.once('exit', resolve));
