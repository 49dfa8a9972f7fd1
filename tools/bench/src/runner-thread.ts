/**
 * Worker thread of the embedded-threads store scenario: `workers` runner workers (async, one Runner) on this thread's
 * own `SqliteStore` connection to the scenario's file, running the benchmark agent. Posts `{type:'ready'}` once running;
 * on `{type:'stop'}` lets in-flight attempts finish, closes the store and posts `{type:'stats'}`.
 */
import { setMaxListeners } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteStore } from '@agl/store/sqlite';
import { Runner } from '@agl/trainer';
import { createBenchTracer, makeBenchAgent } from './bench-agent';

/** What {@link runEmbeddedThreadsScenario} passes each thread. */
export interface RunnerThreadData {
  dbPath: string;
  workers: number;
  workerIdOffset: number;
  maxRounds: number;
  sleepSeconds: number;
  pollSeconds: number;
  waitPollIntervalMs: number;
}

const data = workerData as RunnerThreadData;
const port = parentPort!;
// The runner gives each worker an abort listener on one signal.
setMaxListeners(5000);
const store = new SqliteStore({ path: data.dbPath, waitPollIntervalMs: data.waitPollIntervalMs });
const tracer = createBenchTracer();
let warnings = 0;
const runner = new Runner({
  store,
  agent: makeBenchAgent({ maxRounds: data.maxRounds, sleepSeconds: data.sleepSeconds, tracer }),
  nWorkers: data.workers,
  workerIdOffset: data.workerIdOffset,
  tracer,
  pollIntervalSeconds: data.pollSeconds,
  logger: {
    warn: (message) => {
      warnings += 1;
      if (warnings <= 5) process.stderr.write(`[bench runner thread ${data.workerIdOffset}] ${message}\n`);
    },
  },
});
const running = runner.run();
port.postMessage({ type: 'ready' });
port.on('message', (message: { type: string }) => {
  if (message.type !== 'stop') return;
  runner.stop();
  void running.then(async (stats) => {
    await tracer.shutdown();
    await store.close();
    port.postMessage({ type: 'stats', stats, warnings });
    port.close();
  });
});
