import type { Trajectory, Transition } from '../../schema/index';

/** A call with token ids; `logprobs` are plain numbers (token text is synthetic). */
export function call(options: {
  prompt?: number[];
  response?: number[];
  logprobs?: number[];
  reward?: number | null;
  agentName?: string | null;
  text?: string;
  messages?: Transition['state']['messages'];
}): Transition {
  return {
    agentName: options.agentName ?? 'agent',
    state: {
      messages: options.messages ?? [{ role: 'user', content: 'q' }],
      ...(options.prompt ? { tokenIds: options.prompt } : {}),
    },
    action: {
      message: { role: 'assistant', content: options.text ?? 'a' },
      ...(options.response ? { tokenIds: options.response } : {}),
      ...(options.logprobs ? { logprobs: options.logprobs.map((logprob, i) => ({ token: `t${i}`, logprob })) } : {}),
    },
    reward: options.reward ?? null,
    done: false,
    spanIds: [],
  };
}

/** A trajectory; the last call is marked `done`. */
export function trajectory(options: {
  rolloutId: string;
  taskId: string;
  transitions: Transition[];
  finalReward?: number | null;
  attemptId?: string;
}): Trajectory {
  const transitions = options.transitions.map((t, i, all) => ({ ...t, done: i === all.length - 1 }));
  return {
    rolloutId: options.rolloutId,
    attemptId: options.attemptId ?? `at-${options.rolloutId}`,
    taskId: options.taskId,
    mode: 'train',
    transitions,
    finalReward: options.finalReward ?? null,
  };
}
