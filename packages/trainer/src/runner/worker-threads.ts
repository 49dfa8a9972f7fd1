import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { UserError } from '@agl/core/errors';
import type { RunnerLogger } from './hooks';
import type { RunnerStats } from './worker-loop';
import { addReportedStats, type StatsMessage } from './worker-stats';
import type { AgentModuleRef } from './worker-processes';

/** How a runner thread reaches the store: its own connection to the same SQLite file, or the store's HTTP endpoint. */
export type ThreadStoreRef = { kind: 'sqlite'; path: string } | { kind: 'http'; url: string; token: string | null };

/** Messages from a runner thread: `ready` once its agent and store are open, `fatal` when they cannot be. */
export type ThreadMessage = StatsMessage | { type: 'ready' } | { type: 'fatal'; message: string };

/** What the parent hands a runner thread (`workerData`). */
export interface WorkerThreadConfig {
  store: ThreadStoreRef;
  agentModule: AgentModuleRef;
  nWorkers: number;
  workerIdOffset: number;
  pollIntervalSeconds: number;
  heartbeatIntervalSeconds: number;
}

const HERE = fileURLToPath(import.meta.url);
const FROM_SOURCE = HERE.endsWith('.ts');
/** From source: the sibling `.ts`; built: `dist/runner/worker-thread-main.js` (this code is bundled into `dist/`). */
const ENTRY = FROM_SOURCE
  ? join(dirname(HERE), 'worker-thread-main.ts')
  : join(dirname(HERE), 'runner', 'worker-thread-main.js');

/**
 * A thread running `worker-thread-main`. TypeScript (the sources, or a `.ts` agent module) needs tsx, registered inside
 * the thread: a worker does not inherit the main thread's `--import tsx` hooks.
 */
function startThread(config: WorkerThreadConfig): Worker {
  const execArgv = FROM_SOURCE ? ['--conditions=@agl/source'] : [];
  if (!FROM_SOURCE && !/\.[mc]?tsx?$/u.test(config.agentModule.path))
    return new Worker(ENTRY, { workerData: config, execArgv });
  let tsx: string;
  try {
    tsx = join(dirname(createRequire(config.agentModule.path).resolve('tsx/package.json')), 'dist/esm/api/index.mjs');
  } catch (error) {
    throw new UserError(
      `Runner workerMode 'thread' needs tsx to load the TypeScript agent module ${config.agentModule.path}; install it (npm install tsx) or point agentModule at built JavaScript.`,
      { cause: error },
    );
  }
  const boot = `import(${JSON.stringify(pathToFileURL(tsx).href)}).then((m) => { m.register(); return import(${JSON.stringify(pathToFileURL(ENTRY).href)}); })`;
  return new Worker(boot, { eval: true, workerData: config, execArgv });
}

/** Splits `total` workers over `parts` threads as evenly as possible: [count, offset] each (threads with none are left out). */
export function splitWorkers(total: number, parts: number): Array<[number, number]> {
  let offset = 0;
  return Array.from({ length: parts }, (_, i): [number, number] => {
    const count = Math.floor(total / parts) + (i < total % parts ? 1 : 0);
    offset += count;
    return [count, offset - count];
  }).filter(([count]) => count > 0);
}

/**
 * Runs `nWorkers` async runner workers spread over `threads` worker threads of this process until `signal` aborts (or
 * `maxRollouts` attempts have finished). Each thread loads the agent module and opens its own store connection; when a
 * thread cannot (the module does not load, or has no such export), every thread stops and this rejects with that
 * error. A thread that dies later is replaced (its in-flight attempts are left to the store's watchdog). On stop, each
 * thread lets its in-flight attempts finish and closes its store.
 */
export async function superviseWorkerThreads(options: {
  agentModule: AgentModuleRef;
  store: ThreadStoreRef;
  threads: number;
  nWorkers: number;
  workerIdOffset: number;
  pollIntervalSeconds: number;
  heartbeatIntervalSeconds: number;
  maxRollouts?: number;
  stats: RunnerStats;
  signal: AbortSignal;
  logger: RunnerLogger;
  /** Called once every first thread has loaded the agent and opened its store. */
  onReady?: () => void;
}): Promise<void> {
  const { stats, signal, logger } = options;
  const local = new AbortController();
  let fatal: Error | null = null;
  const fail = (message: string, cause?: unknown): void => {
    fatal ??= new UserError(`Runner workerMode 'thread': ${message}`, { cause });
    stopAll();
  };
  const stopAll = (): void => local.abort();
  signal.addEventListener('abort', stopAll, { once: true });
  const parts = splitWorkers(options.nWorkers, options.threads);
  let starting = parts.length;
  const run = ([count, offset]: [number, number]): Promise<void> =>
    new Promise<void>((resolve) => {
      const config: WorkerThreadConfig = {
        store: options.store,
        agentModule: options.agentModule,
        nWorkers: count,
        workerIdOffset: options.workerIdOffset + offset,
        pollIntervalSeconds: options.pollIntervalSeconds,
        heartbeatIntervalSeconds: options.heartbeatIntervalSeconds,
      };
      const thread = startThread(config);
      let ready = false;
      const stop = (): void => thread.postMessage({ type: 'stop' });
      local.signal.addEventListener('abort', stop, { once: true });
      thread.on('message', (msg: ThreadMessage) => {
        if (msg.type === 'ready' && !ready) {
          ready = true;
          starting -= 1;
          if (starting === 0) options.onReady?.();
        }
        if (msg.type === 'fatal') fail(msg.message);
        if (msg.type === 'stats' && addReportedStats(stats, msg, options.maxRollouts)) stopAll();
      });
      const workers = `Worker-${config.workerIdOffset + 1}…${config.workerIdOffset + count}`;
      thread.on('error', (error) => {
        if (!ready) fail(`the thread for ${workers} could not start: ${error.message}`, error);
        else logger.warn(`runner thread for ${workers} failed: ${error.message}`);
      });
      thread.once('exit', (code) => {
        local.signal.removeEventListener('abort', stop);
        if (local.signal.aborted) return resolve();
        logger.warn(`runner thread for ${workers} exited (code ${code}); starting a replacement.`);
        resolve(run([count, offset]));
      });
    });
  if (signal.aborted) return;
  await Promise.all(parts.map(run));
  signal.removeEventListener('abort', stopAll);
  if (fatal) throw fatal;
}
