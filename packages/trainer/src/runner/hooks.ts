import type { AttemptedRollout, Span } from '@agl/core';
import type { LitAgent } from '../agent/lit-agent';
import type { ProcessAgent } from '../agent/process-agent';

/** What every hook receives. */
export interface HookEvent {
  agent: LitAgent | ProcessAgent;
  rollout: AttemptedRollout;
  workerId: string;
}

/** Runner lifecycle hooks (AGL 0.3 §7.3). Errors thrown by hooks are reported to the logger and swallowed. */
export interface RunnerHooks {
  /** Before the resources are fetched and the agent runs. */
  onRolloutStart?(event: HookEvent): void | Promise<void>;
  /** Inside the rollout context, right before the agent is called. */
  onTraceStart?(event: HookEvent): void | Promise<void>;
  /** Inside the rollout context, after the agent returned (not called when it threw). */
  onTraceEnd?(event: HookEvent): void | Promise<void>;
  /** After the spans are flushed and before the attempt status is written. */
  onRolloutEnd?(
    event: HookEvent & { spans: Span[]; status: 'succeeded' | 'failed'; error?: unknown },
  ): void | Promise<void>;
}

/**
 * Runner-side reward: called when an attempt succeeded without any reward (no returned number, no emitted reward span,
 * no reward event). A number it returns is written as the final reward span.
 */
export type RewardHook = (
  task: unknown,
  result: unknown,
  spans: Span[],
) => number | null | undefined | Promise<number | null | undefined>;

/** Where the runner reports problems that do not fail a rollout (hook errors, status races). */
export interface RunnerLogger {
  warn(message: string): void;
  info?(message: string): void;
}

/** Default logger: warnings to stderr. */
export const stderrLogger: RunnerLogger = {
  warn: (message) => {
    process.stderr.write(`[agl runner] ${message}\n`);
  },
};

/** Run a hook, reporting and swallowing its error. */
export async function callHook<E>(
  logger: RunnerLogger,
  name: string,
  hook: ((event: E) => void | Promise<void>) | undefined,
  event: E,
): Promise<void> {
  if (!hook) return;
  try {
    await hook(event);
  } catch (err) {
    logger.warn(`hook ${name} threw (ignored): ${err instanceof Error ? err.message : String(err)}`);
  }
}
