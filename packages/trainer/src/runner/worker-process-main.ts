/**
 * Entry of a runner worker process (`workerMode: 'process'`): loads the agent module, connects to the store over
 * HTTP, and runs one worker loop until the parent says stop. Reports its started, succeeded and failed counts over IPC
 * (`reportingRunner`).
 */
import { pathToFileURL } from 'node:url';
import { StoreClient } from '@agl/store/client';
import { reportingRunner } from './reporting-runner';
import type { StatsMessage } from './worker-stats';
import type { WorkerProcessConfig } from './worker-processes';

async function main(): Promise<void> {
  const config = JSON.parse(process.env.AGL_WORKER_CONFIG ?? '{}') as WorkerProcessConfig;
  const mod = (await import(pathToFileURL(config.agentModule.path).href)) as Record<string, unknown>;
  const agent = mod[config.agentModule.exportName ?? 'agent'];
  const store = new StoreClient({ url: config.storeUrl, token: config.token ?? undefined });
  // Resolves once the message is handed to the IPC channel, so the last report is not lost to process.exit.
  const send = (msg: StatsMessage): Promise<void> =>
    new Promise<void>((resolve) => {
      if (!process.connected || !process.send) resolve();
      else process.send(msg, () => resolve());
    });
  const { runner, run } = reportingRunner({
    store,
    agent,
    nWorkers: 1,
    workerIdOffset: config.workerIndex,
    pollIntervalSeconds: config.pollIntervalSeconds,
    heartbeatIntervalSeconds: config.heartbeatIntervalSeconds,
    send,
    messages: process,
  });
  process.on('SIGTERM', () => runner.stop());
  process.on('disconnect', () => runner.stop());
  await run();
  await store.close();
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`[agl worker] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
