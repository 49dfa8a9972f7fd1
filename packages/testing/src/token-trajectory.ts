import type { Trajectory } from '@agl/core';
import { taskIdOf, type RolloutInfo } from '@agl/core/transitions';

/** One token-level turn of {@link tokenTrajectory}. */
export interface TokenTurn {
  promptTokenIds: number[];
  responseTokenIds: number[];
  /** Per response token, when the test policy gave them. */
  logprobs?: number[];
  finalReward: number;
}

/**
 * The one-turn, train-mode trajectory a GRPO test's adapter returns for a claimed rollout: its task id by `taskIdOf`
 * (the GRPO algorithm records it as `metadata.task_id`), the prompt and response token ids, and the final reward (no
 * per-step reward).
 */
export function tokenTrajectory(rollout: RolloutInfo | undefined, turn: TokenTurn): Trajectory {
  if (!rollout) throw new Error('tokenTrajectory: the adapter was called without its rollout');
  return {
    rolloutId: rollout.rolloutId,
    attemptId: 'a',
    taskId: taskIdOf({ input: rollout.input, metadata: rollout.metadata ?? null }),
    mode: 'train',
    transitions: [
      {
        agentName: null,
        state: { messages: [], tokenIds: turn.promptTokenIds },
        action: {
          message: { role: 'assistant' },
          tokenIds: turn.responseTokenIds,
          ...(turn.logprobs ? { logprobs: turn.logprobs.map((logprob) => ({ token: '', logprob })) } : {}),
        },
        reward: null,
        done: true,
        spanIds: [],
      },
    ],
    finalReward: turn.finalReward,
  };
}
