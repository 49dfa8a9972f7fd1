import type { AttemptedRollout, LightningStore, NamedResources, RolloutMode } from '@agl/core';
import { UserError } from '@agl/core/errors';

/** What the runner passes as the third argument of `rollout()`. */
export interface AgentContext {
  /** The dequeued rollout with its current attempt. */
  readonly rollout: AttemptedRollout;
  readonly rolloutId: string;
  readonly attemptId: string;
  readonly mode: RolloutMode;
  /** `Worker-{n}`. */
  readonly workerId: string;
  /** The store the spans go to. */
  readonly store: LightningStore;
  /** The id of the resources version this rollout runs with (null when there are no resources). */
  readonly resourcesId: string | null;
  /** Aborted when the runner stops or the attempt times out. */
  readonly signal: AbortSignal;
}

/** A numeric return becomes the final reward span; `void`/`null` means the agent emitted its rewards itself. */
export type RolloutResult = number | boolean | void | null | undefined;

/** The agent's rollout function: `(task, resources, context) => reward?`. */
export type RolloutFn<TTask = unknown> = (
  task: TTask,
  resources: NamedResources,
  context: AgentContext,
) => Promise<RolloutResult> | RolloutResult;

/**
 * A user agent: an object (or class instance) with `rollout`, and optional mode-specific variants. `mode === 'train'`
 * calls `trainingRollout` and every other mode calls `validationRollout`; both default to `rollout` (AGL 0.3 §7.1).
 */
export interface LitAgent<TTask = unknown> {
  rollout: RolloutFn<TTask>;
  trainingRollout?: RolloutFn<TTask>;
  validationRollout?: RolloutFn<TTask>;
  /** Informational name (logs, progress). */
  name?: string;
}

/** Anything the runner accepts as an in-process agent: a plain rollout function or a {@link LitAgent}. */
export type AgentLike<TTask = unknown> = RolloutFn<TTask> | LitAgent<TTask>;

/** Build a {@link LitAgent} from functions. */
export function litAgent<TTask = unknown>(options: LitAgent<TTask>): LitAgent<TTask> {
  if (typeof options?.rollout !== 'function') {
    throw new UserError(
      'litAgent({ rollout }) needs a rollout function: pass litAgent({ rollout: async (task, resources, ctx) => reward }).',
    );
  }
  return { ...options };
}

/** Normalise an {@link AgentLike} to a {@link LitAgent}; throws a `UserError` naming what was given otherwise. */
export function toLitAgent<TTask = unknown>(agent: AgentLike<TTask>): LitAgent<TTask> {
  if (typeof agent === 'function') return { rollout: agent, name: agent.name || 'agent' };
  if (agent !== null && typeof agent === 'object' && typeof (agent as LitAgent<TTask>).rollout === 'function') {
    const obj = agent as LitAgent<TTask>;
    return {
      rollout: obj.rollout.bind(obj),
      trainingRollout: obj.trainingRollout?.bind(obj),
      validationRollout: obj.validationRollout?.bind(obj),
      name: obj.name ?? (obj.constructor?.name && obj.constructor.name !== 'Object' ? obj.constructor.name : 'agent'),
    };
  }
  throw new UserError(
    `An agent must be a rollout function or an object with a rollout(task, resources, context) method; got ${describe(agent)}. ` +
      'Export `agent` as `async (task, resources, ctx) => reward`, litAgent({ rollout }), or processAgent({ command }).',
  );
}

/** The function to call for a rollout mode. */
export function pickRolloutFn<TTask>(agent: LitAgent<TTask>, mode: RolloutMode): RolloutFn<TTask> {
  if (mode === 'train') return agent.trainingRollout ?? agent.rollout;
  return agent.validationRollout ?? agent.rollout;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return `an object with keys [${Object.keys(value).join(', ')}]`;
  return typeof value;
}
