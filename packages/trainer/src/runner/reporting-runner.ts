import type { LightningStore } from '@agl/core';
import { Runner } from './runner';
import type { WorkerMessage } from './worker-processes';

/** The runner of a worker process or thread: async workers that report each started and finished attempt to the parent. */
export function reportingRunner(options: {
  store: LightningStore;
  agent: unknown;
  nWorkers: number;
  workerIdOffset: number;
  pollIntervalSeconds: number;
  heartbeatIntervalSeconds: number;
  send: (msg: WorkerMessage) => void;
}): Runner {
  const { send, agent, ...rest } = options;
  return new Runner({
    ...rest,
    agent: agent as never,
    hooks: {
      onRolloutStart: () => send({ type: 'started' }),
      onRolloutEnd: (e) => send({ type: 'attempt', status: e.status }),
    },
  });
}
