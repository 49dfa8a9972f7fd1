// Child process of gateway-bench: the gateway with an embedded store (memory, or SQLite with BENCH_STORE=sqlite),
// recording every call of one train rollout.
// BENCH_GATEWAY_MODULE may name another build of the gateway (a path relative to this file) to compare against.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import type { LightningStore } from '@agl/core/store';
import { MemoryStore } from '@agl/store';
import { SqliteStore } from '@agl/store/sqlite';
import type * as GatewayModule from '../src/index';

const { startGateway } = (await import(process.env.BENCH_GATEWAY_MODULE ?? '../src/index')) as typeof GatewayModule;
// Garbage-collection pause time so far (ms), reported with the CPU time.
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
}).observe({ entryTypes: ['gc'] });
// BENCH_STORE=sqlite: an SQLite file store (spans leave the JS heap) instead of the in-memory one.
const store: LightningStore =
  process.env.BENCH_STORE === 'sqlite'
    ? new SqliteStore({ path: join(mkdtempSync(join(tmpdir(), 'agl-gw-bench-')), 'store.sqlite') })
    : new MemoryStore();
const spanWrite = process.env.BENCH_SPAN_WRITE || 'auto';
if (spanWrite !== 'auto' && spanWrite !== 'before-response' && spanWrite !== 'after-response')
  throw new Error(`BENCH_SPAN_WRITE=${spanWrite}: use auto, before-response or after-response`);
const gateway = await startGateway({ store, backend: process.env.BENCH_BACKEND_URL!, port: 0, spanWrite });
const rollout = await store.startRollout({ input: null, mode: 'train' });
process.send?.({
  type: 'ready',
  baseURL: `${gateway.url}/rollout/${rollout.rolloutId}/attempt/${rollout.attempt.attemptId}/v1`,
});
process.on('message', (m: { type: string }) => {
  if (m.type === 'cpu') process.send?.({ type: 'cpu', usage: process.cpuUsage(), gcMs });
  if (m.type === 'spans') void store.statistics().then((s) => process.send?.({ type: 'spans', count: s.totalSpans }));
  if (m.type === 'stop')
    void gateway
      .close()
      .then(() => store.close())
      .then(() => process.exit(0));
});
