/**
 * Entry of a runner thread (`workerMode: 'thread'`): loads the agent module, opens its own store connection (the same
 * SQLite file, or the store's HTTP endpoint), and runs `nWorkers` async workers until the parent says stop. Reports
 * its started, succeeded and failed counts to the parent (`reportingRunner`).
 */
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import type { LightningStore } from '@agl/core';
import { StoreClient } from '@agl/store/client';
import { SqliteStore } from '@agl/store/sqlite';
import { reportingRunner } from './reporting-runner';
import type { ThreadMessage, WorkerThreadConfig } from './worker-threads';

const config = workerData as WorkerThreadConfig;
const port = parentPort!;
const send = (msg: ThreadMessage): void => port.postMessage(msg);
const exportName = config.agentModule.exportName ?? 'agent';
const mod = (await import(pathToFileURL(config.agentModule.path).href)) as Record<string, unknown>;
const agent = mod[exportName];
if (agent === undefined) {
  send({
    type: 'fatal',
    message: `${config.agentModule.path} has no export named ${exportName}; export the agent under that name or set agentModule.exportName.`,
  });
  port.close();
  process.exit(1);
}
// Another thread's commits are seen by polling `PRAGMA data_version`: every 100 ms, so idle workers find new rollouts soon.
const store: LightningStore =
  config.store.kind === 'sqlite'
    ? new SqliteStore({ path: config.store.path, waitPollIntervalMs: 100 })
    : new StoreClient({ url: config.store.url, token: config.store.token ?? undefined });
const { run } = reportingRunner({
  store,
  agent,
  nWorkers: config.nWorkers,
  workerIdOffset: config.workerIdOffset,
  pollIntervalSeconds: config.pollIntervalSeconds,
  heartbeatIntervalSeconds: config.heartbeatIntervalSeconds,
  send,
  messages: port,
});
send({ type: 'ready' });
await run();
await store.close();
port.close();
