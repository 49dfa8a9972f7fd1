import type { LightningStore } from '@agl/core';
import { checkSpans } from './bench-agent';

/** Options of {@link runBatchAlgorithm}. */
export interface BatchAlgorithmOptions {
  store: LightningStore;
  totalTasks: number;
  batchSize: number;
  /** Seconds between `waitForRollouts(timeout 0)` polls (AGL: 5 s; scaled with the task count). Default 0.25. */
  pollSeconds?: number;
  /** Concurrent span reads while verifying. Default 8. */
  verifyConcurrency?: number;
  /**
   * Seconds a finished rollout may take to show all its spans before its check fails. The runner marks an attempt
   * finished even when its tracer flush timed out (30 s) under overload, so spans can land after the status. AGL checks
   * once; here a failed check is retried until this grace ends, and such rollouts are counted. Default 60.
   */
  lateSpansGraceSeconds?: number;
  /** Fail when no rollout finished for this long, in seconds (AGL's stall guard: 300 s). Default 300. */
  stallSeconds?: number;
  onProgress?: (done: number, total: number) => void;
}

/** What the algorithm measured. */
export interface BatchAlgorithmResult {
  verified: number;
  /** Rollouts whose spans were complete only after their status was terminal (see `lateSpansGraceSeconds`). */
  lateSpans: number;
  seconds: number;
  rolloutsPerSecond: number;
}

const sleep = (seconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/**
 * AGL 0.3's `AlgorithmBatch` in `batch` mode: per batch, add an LLM resource, enqueue `batchSize` tasks
 * (`task-{n}-generated`, mode train), then poll `waitForRollouts(ids, timeout 0)` until all are terminal. Every
 * rollout is verified as it finishes: status `succeeded`, its latest attempt's spans carry the `task` attribute, and
 * the final reward is in [1, 2]. Throws on the first failed check. The clock runs from the first enqueue to the last
 * verification.
 */
export async function runBatchAlgorithm(options: BatchAlgorithmOptions): Promise<BatchAlgorithmResult> {
  const { store, totalTasks, batchSize } = options;
  const pollSeconds = options.pollSeconds ?? 0.25;
  const stallSeconds = options.stallSeconds ?? 300;
  const started = performance.now();
  let submitted = 0;
  let verified = 0;
  let lateSpans = 0;
  while (submitted < totalTasks) {
    const count = Math.min(batchSize, totalTasks - submitted);
    await store.addResources({
      llm: { resourceType: 'llm', endpoint: `http://localhost:${submitted}/v1`, model: `test-model-${submitted}` },
    });
    const tasks = Array.from({ length: count }, (_, i) => `task-${submitted + i}-generated`);
    const rollouts = await store.enqueueRollouts(tasks.map((input) => ({ input, mode: 'train' as const })));
    submitted += count;
    const pending = new Map(rollouts.map((r, i) => [r.rolloutId, tasks[i]!]));
    let lastProgress = performance.now();
    while (pending.size > 0) {
      const finished = await store.waitForRollouts([...pending.keys()], { timeoutSeconds: 0 });
      const queue = [...finished];
      const verifyOne = async (): Promise<void> => {
        for (let rollout = queue.shift(); rollout; rollout = queue.shift()) {
          if (rollout.status !== 'succeeded')
            throw new Error(`rollout ${rollout.rolloutId} finished with status ${rollout.status}`);
          const task = pending.get(rollout.rolloutId)!;
          pending.delete(rollout.rolloutId);
          const firstFailure = await verifyRollout(store, rollout.rolloutId, task);
          if (firstFailure) {
            lateSpans += 1;
            await retryVerification(store, rollout.rolloutId, task, options.lateSpansGraceSeconds ?? 60, firstFailure);
          }
          verified += 1;
        }
      };
      await Promise.all(Array.from({ length: options.verifyConcurrency ?? 8 }, verifyOne));
      if (finished.length > 0) {
        lastProgress = performance.now();
        options.onProgress?.(verified, totalTasks);
      } else if ((performance.now() - lastProgress) / 1000 > stallSeconds) {
        throw new Error(
          `no rollout finished for ${stallSeconds} s; ${pending.size} pending (first: ${[...pending.keys()][0]})`,
        );
      }
      if (pending.size > 0) await sleep(pollSeconds);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return { verified, lateSpans, seconds, rolloutsPerSecond: verified / seconds };
}

/** Runs AGL's check on the latest attempt's spans; returns the failure, or null when it passes. */
async function verifyRollout(store: LightningStore, rolloutId: string, task: string): Promise<Error | null> {
  const spans = await store.querySpans({ rolloutId, attemptId: 'latest' });
  try {
    checkSpans(spans.items, task);
    return null;
  } catch (error) {
    return error as Error;
  }
}

async function retryVerification(
  store: LightningStore,
  rolloutId: string,
  task: string,
  graceSeconds: number,
  first: Error,
): Promise<void> {
  const deadline = performance.now() + graceSeconds * 1000;
  let failure: Error | null = first;
  while (failure && performance.now() < deadline) {
    await sleep(1);
    failure = await verifyRollout(store, rolloutId, task);
  }
  if (failure) throw new Error(`rollout ${rolloutId}: ${failure.message} (still after ${graceSeconds} s)`);
}
