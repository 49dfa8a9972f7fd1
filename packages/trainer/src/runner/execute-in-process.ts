import type { AttemptedRollout, Clock, LightningStore, NamedResources } from '@agl/core';
import { withRolloutContext, type RolloutTracer } from '@agl/core/tracer';
import { pickRolloutFn, type AgentContext, type LitAgent } from '../agent/lit-agent';
import { beginAttempt } from './attempt-heartbeat';
import { callHook, type RewardHook, type RunnerHooks, type RunnerLogger } from './hooks';
import { finishAttempt } from './finish-attempt';
import { emitFinalReward, flushSpans, rewardOfResult, writeExceptionSpan } from './span-io';

/** Everything one in-process attempt needs. */
export interface ExecuteInProcessOptions {
  store: LightningStore;
  agent: LitAgent;
  rollout: AttemptedRollout;
  resources: NamedResources;
  resourcesId: string | null;
  workerId: string;
  hooks: RunnerHooks;
  reward?: RewardHook;
  logger: RunnerLogger;
  clock: Clock;
  tracer?: RolloutTracer;
  heartbeatIntervalSeconds: number;
  /** Aborted when the runner stops. */
  signal: AbortSignal;
}

/**
 * Run one attempt of an in-process agent inside its rollout context (AGL 0.3 `_step_impl`): hooks, the agent call,
 * exception span on a throw, final reward from a numeric return or the reward hook, then the attempt status.
 */
export async function executeInProcess(options: ExecuteInProcessOptions): Promise<'succeeded' | 'failed'> {
  const { store, agent, rollout, workerId, hooks, logger } = options;
  const { rolloutId, attemptId, event, ctx, stopHeartbeat } = beginAttempt(options);
  const abort = new AbortController();
  const onStop = (): void => abort.abort(options.signal.reason);
  options.signal.addEventListener('abort', onStop, { once: true });
  const timeoutSeconds = rollout.config.timeoutSeconds;
  // The store's watchdog counts timeoutSeconds from the attempt's start (the dequeue), and requeues the rollout then; stop
  // the agent by the same deadline, so a retry never runs while this attempt still does.
  const remainingMs =
    timeoutSeconds != null
      ? Math.max(0, timeoutSeconds - Math.max(0, options.clock.now() - rollout.attempt.startTime)) * 1000
      : 0;
  const timer =
    timeoutSeconds != null
      ? setTimeout(() => abort.abort(new Error(`attempt exceeded timeoutSeconds=${timeoutSeconds}`)), remainingMs)
      : undefined;

  let result: unknown;
  let error: unknown;
  let failed = false;
  try {
    await callHook(logger, 'onRolloutStart', hooks.onRolloutStart, event);
    const agentContext: AgentContext = {
      rollout,
      rolloutId,
      attemptId,
      mode: rollout.mode,
      workerId,
      store,
      resourcesId: options.resourcesId,
      signal: abort.signal,
    };
    const fn = pickRolloutFn(agent, rollout.mode);
    result = await withRolloutContext(ctx, async () => {
      await callHook(logger, 'onTraceStart', hooks.onTraceStart, event);
      const value = await raceAbort(Promise.resolve(fn(rollout.input, options.resources, agentContext)), abort.signal);
      await callHook(logger, 'onTraceEnd', hooks.onTraceEnd, event);
      return value;
    });
  } catch (err) {
    failed = true;
    error = err;
  } finally {
    stopHeartbeat();
    if (timer) clearTimeout(timer);
    options.signal.removeEventListener('abort', onStop);
  }
  let rewardWritten = false;
  if (!failed) {
    try {
      const reward = rewardOfResult(result);
      if (reward !== null) {
        emitFinalReward(ctx, reward);
        rewardWritten = true;
      }
    } catch (err) {
      failed = true;
      error = err;
    }
  }
  try {
    if (failed) await writeExceptionSpan(ctx, error);
    else await flushSpans(ctx);
  } catch (err) {
    logger.warn(
      `writing spans of ${rolloutId}/${attemptId} failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return finishAttempt({
    ctx,
    rollout,
    agent,
    workerId,
    hooks,
    logger,
    reward: options.reward,
    result,
    failed,
    error,
    rewardWritten,
  });
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted)
    return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('rollout aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('rollout aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
