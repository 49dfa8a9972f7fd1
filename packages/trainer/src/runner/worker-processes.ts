import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LightningStore } from '@agl/core';
import type { RunnerLogger } from './hooks';
import type { ProcessEndpoints } from './process-env';
import { addReportedStats, type StatsMessage } from './worker-stats';
import type { RunnerStats } from './worker-loop';

/** Where a worker process finds the agent: an absolute module path (`.ts` runs through tsx) and its export. */
export interface AgentModuleRef {
  path: string;
  /** Default `agent`. */
  exportName?: string;
}

/** What the parent hands a worker process (JSON in `AGL_WORKER_CONFIG`). */
export interface WorkerProcessConfig {
  storeUrl: string;
  token: string | null;
  agentModule: AgentModuleRef;
  workerId: string;
  workerIndex: number;
  pollIntervalSeconds: number;
  heartbeatIntervalSeconds: number;
}

const HERE = fileURLToPath(import.meta.url);
/** From source: the sibling `.ts`; built: `dist/runner/worker-process-main.js` (this code is bundled into `dist/`). */
const ENTRY = HERE.endsWith('worker-processes.ts')
  ? join(dirname(HERE), 'worker-process-main.ts')
  : join(dirname(HERE), 'runner', 'worker-process-main.js');

/** Node flags for a child: workspace sources when this package runs from source; tsx for a TypeScript agent module. */
function childExecArgv(agentPath: string): string[] {
  const fromSource = HERE.endsWith('.ts');
  const tsAgent = /\.[mc]?tsx?$/u.test(agentPath);
  return [...(fromSource ? ['--conditions=@agl/source'] : []), ...(fromSource || tsAgent ? ['--import', 'tsx'] : [])];
}

/**
 * Keep `nWorkers` worker processes alive until `signal` aborts: a worker that dies (crash, kill) is replaced under the
 * same worker id; its in-flight attempt is left to the store's watchdog, which marks it `unresponsive` (or `timeout`)
 * and requeues the rollout per its config. On stop, each child gets a `stop` message, then SIGTERM, then SIGKILL.
 */
export async function superviseWorkerProcesses(options: {
  agentModule: AgentModuleRef;
  endpoints: ProcessEndpoints;
  nWorkers: number;
  workerIdOffset: number;
  pollIntervalSeconds: number;
  heartbeatIntervalSeconds: number;
  maxRollouts?: number;
  store: LightningStore;
  stats: RunnerStats;
  signal: AbortSignal;
  logger: RunnerLogger;
}): Promise<void> {
  const { stats, signal, logger } = options;
  const children = new Map<number, ChildProcess>();
  const local = new AbortController();
  const stopAll = (): void => local.abort();
  signal.addEventListener('abort', stopAll, { once: true });

  const spawnWorker = (index: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const workerId = `Worker-${options.workerIdOffset + index + 1}`;
      const config: WorkerProcessConfig = {
        storeUrl: options.endpoints.storeUrl,
        token: options.endpoints.token ?? null,
        agentModule: options.agentModule,
        workerId,
        workerIndex: options.workerIdOffset + index,
        pollIntervalSeconds: options.pollIntervalSeconds,
        heartbeatIntervalSeconds: options.heartbeatIntervalSeconds,
      };
      const child = fork(ENTRY, [], {
        execArgv: childExecArgv(options.agentModule.path),
        env: { ...process.env, AGL_WORKER_CONFIG: JSON.stringify(config) },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      children.set(index, child);
      child.on('message', (msg: StatsMessage) => {
        if (msg.type === 'stats' && addReportedStats(stats, msg, options.maxRollouts)) stopAll();
      });
      child.once('exit', (code, sig) => {
        children.delete(index);
        if (!local.signal.aborted) {
          logger.warn(
            `${workerId} (pid ${child.pid ?? '?'}) exited (${sig ?? `code ${code}`}); starting a replacement.`,
          );
          resolve(spawnWorker(index));
        } else {
          resolve();
        }
      });
    });

  local.signal.addEventListener('abort', () => {
    for (const child of children.values()) {
      if (child.connected) child.send({ type: 'stop' });
      const term = setTimeout(() => child.kill('SIGTERM'), 5000);
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      term.unref();
      kill.unref();
      child.once('exit', () => {
        clearTimeout(term);
        clearTimeout(kill);
      });
    }
  });
  if (signal.aborted) return;
  await Promise.all(Array.from({ length: options.nWorkers }, (_, i) => spawnWorker(i)));
  signal.removeEventListener('abort', stopAll);
}
