import type { LightningStore } from '@agl/core';
import { Runner } from './runner';
import type { RunnerStats } from './worker-loop';
import type { StatsMessage } from './worker-stats';

const REPORT_INTERVAL_MS = 50;

/**
 * The runner of a worker process or thread, reporting its progress to the parent as counts every 50 ms (and once at
 * the end) rather than through `onRolloutEnd`, which would read every attempt's spans back from the store.
 */
export function reportingRunner(options: {
  store: LightningStore;
  agent: unknown;
  nWorkers: number;
  workerIdOffset: number;
  pollIntervalSeconds: number;
  heartbeatIntervalSeconds: number;
  send: (msg: StatsMessage) => void | Promise<void>;
  /** The parent's channel (`process` or a `MessagePort`): a `{ type: 'stop' }` message on it stops the runner. */
  messages: { on(event: 'message', listener: (msg: unknown) => void): unknown };
}): { runner: Runner; run: () => Promise<void> } {
  const { send, agent, messages, ...rest } = options;
  const runner = new Runner({ ...rest, agent: agent as never });
  messages.on('message', (msg) => {
    if ((msg as { type?: string } | null)?.type === 'stop') runner.stop();
  });
  const sent: RunnerStats = { started: 0, succeeded: 0, failed: 0 };
  const report = async (): Promise<void> => {
    const now = { ...runner.stats };
    if (now.started === sent.started && now.succeeded === sent.succeeded && now.failed === sent.failed) return;
    const delta: StatsMessage = {
      type: 'stats',
      started: now.started - sent.started,
      succeeded: now.succeeded - sent.succeeded,
      failed: now.failed - sent.failed,
    };
    Object.assign(sent, now);
    await send(delta);
  };
  const run = async (): Promise<void> => {
    const timer = setInterval(() => void report(), REPORT_INTERVAL_MS);
    try {
      await runner.run();
    } finally {
      clearInterval(timer);
      await report();
    }
  };
  return { runner, run };
}
