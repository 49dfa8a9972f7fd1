/**
 * Child process of the HTTP store scenario: `AGL_BENCH_WORKERS` runner workers (async, one Runner) talking to the store
 * server through `StoreClient`, running the benchmark agent. Started with `fork` (IPC): sends `{type:'ready'}` once
 * running, stops on `{type:'stop'}` after in-flight attempts finish, then reports its stats and exits.
 */
import { setMaxListeners } from 'node:events';
import { StoreClient } from '@agl/store/client';
import { Runner } from '@agl/trainer';
import { createBenchTracer, makeBenchAgent } from './bench-agent';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`runner-child needs ${name}`);
  return value;
};

// The runner gives each worker an abort listener on one signal.
setMaxListeners(5000);
const store = new StoreClient({ url: env('AGL_STORE_URL') });
const tracer = createBenchTracer();
let warnings = 0;
const runner = new Runner({
  store,
  agent: makeBenchAgent({
    maxRounds: Number(env('AGL_BENCH_MAX_ROUNDS')),
    sleepSeconds: Number(env('AGL_BENCH_SLEEP_SECONDS')),
    tracer,
  }),
  nWorkers: Number(env('AGL_BENCH_WORKERS')),
  workerIdOffset: Number(env('AGL_BENCH_WORKER_OFFSET')),
  tracer,
  pollIntervalSeconds: Number(env('AGL_BENCH_POLL_SECONDS')),
  logger: {
    warn: (message) => {
      warnings += 1;
      if (warnings <= 5) process.stderr.write(`[bench runner ${process.pid}] ${message}\n`);
    },
  },
});
const running = runner.run();
process.send?.({ type: 'ready' });
process.on('message', (message: { type: string }) => {
  if (message.type !== 'stop') return;
  runner.stop();
  void running
    .then(async (stats) => {
      await tracer.shutdown();
      await store.close();
      process.send?.({ type: 'stats', stats, warnings, tracer: tracer.stats() }, () => process.exit(0));
    })
    .catch((error: unknown) => {
      process.stderr.write(`[bench runner ${process.pid}] ${String(error)}\n`);
      process.exit(1);
    });
});
