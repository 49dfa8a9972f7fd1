import { spawn } from 'node:child_process';
import type { AttemptedRollout, Clock, LightningStore, NamedResources } from '@agl/core';
import { ProcessAgentError } from '@agl/core/errors';
import type { ProcessAgent } from '../agent/process-agent';
import { beginAttempt } from './attempt-heartbeat';
import { finishAttempt } from './finish-attempt';
import { callHook, type RewardHook, type RunnerHooks, type RunnerLogger } from './hooks';
import { processAgentEnv, type ProcessEndpoints } from './process-env';
import { writeExceptionSpan } from './span-io';

/** What a process agent's run produced (the `result` the reward hook sees). */
export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderrTail: string;
  timedOut: boolean;
}

/** Everything one process attempt needs. */
export interface ExecuteProcessOptions {
  store: LightningStore;
  agent: ProcessAgent;
  rollout: AttemptedRollout;
  resources: NamedResources;
  resourcesId: string | null;
  workerId: string;
  endpoints: ProcessEndpoints;
  hooks: RunnerHooks;
  reward?: RewardHook;
  logger: RunnerLogger;
  clock: Clock;
  heartbeatIntervalSeconds: number;
  signal: AbortSignal;
}

const STDOUT_LIMIT = 64 * 1024;

/** Spawn the command under the env contract and wait for it; kills it at `timeoutSeconds` or when the runner stops. */
export function runProcess(
  agent: ProcessAgent,
  env: Record<string, string>,
  timeoutSeconds: number | null,
  signal: AbortSignal,
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(agent.command, [...agent.args], {
      cwd: agent.cwd,
      env: { ...process.env, ...agent.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => {
      if (stdout.length < STDOUT_LIMIT) stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString('utf8')).slice(-16 * 1024);
    });
    let killTimer: NodeJS.Timeout | undefined;
    const kill = (): void => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), agent.killGraceSeconds * 1000);
      killTimer.unref();
    };
    const timeout =
      timeoutSeconds != null ? setTimeout(() => ((timedOut = true), kill()), timeoutSeconds * 1000) : undefined;
    signal.addEventListener('abort', kill, { once: true });
    child.once('error', (err) => {
      if (timeout) clearTimeout(timeout);
      signal.removeEventListener('abort', kill);
      reject(
        new ProcessAgentError(
          `Could not start process agent ${JSON.stringify(agent.command)}: ${err.message}. Check that the command exists and is executable.`,
        ),
      );
    });
    child.once('close', (code, sig) => {
      if (timeout) clearTimeout(timeout);
      if (killTimer) clearTimeout(killTimer);
      signal.removeEventListener('abort', kill);
      const lines = stderr.split('\n');
      resolve({
        exitCode: code,
        signal: sig,
        stdout,
        stderrTail: lines
          .slice(-agent.stderrTailLines - 1)
          .join('\n')
          .trim(),
        timedOut,
      });
    });
  });
}

/**
 * Run one attempt of a process agent (DESIGN.md Contract 2b): exit 0 = succeeded; otherwise failed with the stderr
 * tail as an exception span. Rewards: the event route and emitted reward spans land in the store directly; the
 * runner-side `reward` hook runs only when neither exists.
 */
export async function executeProcess(options: ExecuteProcessOptions): Promise<'succeeded' | 'failed'> {
  const { store, agent, rollout, workerId, hooks, logger } = options;
  const { rolloutId, attemptId, event, ctx, stopHeartbeat } = beginAttempt(options);
  let result: ProcessResult | undefined;
  let error: unknown;
  try {
    await callHook(logger, 'onRolloutStart', hooks.onRolloutStart, event);
    await store.updateAttempt(rolloutId, attemptId, { status: 'running', workerId }).catch(() => undefined);
    await callHook(logger, 'onTraceStart', hooks.onTraceStart, event);
    const env = processAgentEnv({
      rollout,
      resources: options.resources,
      resourcesId: options.resourcesId,
      endpoints: options.endpoints,
    });
    // Counted from the attempt's start, like the store's watchdog (see execute-in-process.ts).
    const timeoutSeconds = rollout.config.timeoutSeconds;
    const remaining =
      timeoutSeconds == null
        ? null
        : Math.max(0.001, timeoutSeconds - Math.max(0, options.clock.now() - rollout.attempt.startTime));
    result = await runProcess(agent, env, remaining, options.signal);
    if (result.exitCode !== 0) {
      const why = result.timedOut
        ? `was killed after timeoutSeconds=${rollout.config.timeoutSeconds}`
        : result.exitCode === null
          ? `was killed by ${result.signal ?? 'a signal'}`
          : `exited with code ${result.exitCode}`;
      error = new ProcessAgentError(
        `Process agent ${[agent.command, ...agent.args].join(' ')} ${why}. stderr (tail):\n${result.stderrTail}`,
      );
    } else {
      await callHook(logger, 'onTraceEnd', hooks.onTraceEnd, event);
    }
  } catch (err) {
    error = err;
  } finally {
    stopHeartbeat();
  }
  const failed = error !== undefined;
  if (failed) {
    await writeExceptionSpan(ctx, error).catch((err: unknown) =>
      logger.warn(`exception span of ${rolloutId}/${attemptId} failed: ${String(err)}`),
    );
  }
  return finishAttempt({ ctx, rollout, agent, workerId, hooks, logger, reward: options.reward, result, failed, error });
}
