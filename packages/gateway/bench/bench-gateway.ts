// Child process of gateway-bench: the gateway with an embedded memory store, recording every call of one train rollout.
import { MemoryStore } from '@agl/store';
import { startGateway } from '../src/index';

const store = new MemoryStore();
const spanWrite = process.env.BENCH_SPAN_WRITE === 'after-response' ? 'after-response' : 'before-response';
const gateway = await startGateway({ store, backend: process.env.BENCH_BACKEND_URL!, port: 0, spanWrite });
const rollout = await store.startRollout({ input: null, mode: 'train' });
process.send?.({ type: 'ready', baseURL: `${gateway.url}/rollout/${rollout.rolloutId}/attempt/${rollout.attempt.attemptId}/v1` });
process.on('message', (m: { type: string }) => {
  if (m.type === 'cpu') process.send?.({ type: 'cpu', usage: process.cpuUsage() });
  if (m.type === 'spans') void store.statistics().then((s) => process.send?.({ type: 'spans', count: s.totalSpans }));
  if (m.type === 'stop') void gateway.close().then(() => store.close()).then(() => process.exit(0));
});
