import type { TrainingSample } from '@agl/core/algorithms';

/**
 * One row of the verl export: the unpadded columns of verl's rollout batch (AGL 1.0 §2.4). Padding is left to the
 * loader (prompts left-padded, responses right-padded), so `attention_mask` is all ones and `position_ids` count up.
 */
export interface VerlRow {
  /** Task id: verl's GRPO group key (`uid = data_id_list`). */
  data_id: string;
  /** Same as `data_id`; verl's batch column name. */
  uid: string;
  rollout_id: string;
  attempt_id: string;
  mode: string | null;
  agent_name: string | null;
  /** Indices of the trajectory's calls merged into this row (`turn_index_list`). */
  turn_indices: number[];
  /** Prompt token ids. */
  prompts: number[];
  /** Response token ids (model tokens and observation tokens). */
  responses: number[];
  /** 1 = trained token, 0 = tool/observation token. */
  response_mask: number[];
  /** `prompts ++ responses`. */
  input_ids: number[];
  /** All ones (unpadded). */
  attention_mask: number[];
  /** 0 … len(input_ids) − 1. */
  position_ids: number[];
  /** The scalar reward at the last response position, 0 elsewhere (one per response token). */
  token_level_scores: number[];
  /** `advantage × response_mask[i]` (one per response token). */
  advantages: number[];
  /** Logprobs of the sampling policy (0 at mask-0 positions), or `null` when unknown. */
  rollout_log_probs: number[] | null;
  /** The scalar reward the row is scored with. */
  reward: number;
  /** The scalar advantage. */
  advantage: number;
}

/** Column names in file order. */
export const VERL_COLUMNS = [
  'data_id',
  'uid',
  'rollout_id',
  'attempt_id',
  'mode',
  'agent_name',
  'turn_indices',
  'prompts',
  'responses',
  'response_mask',
  'input_ids',
  'attention_mask',
  'position_ids',
  'token_level_scores',
  'advantages',
  'rollout_log_probs',
  'reward',
  'advantage',
] as const satisfies ReadonlyArray<keyof VerlRow>;

/** One verl row per sample, in order. */
export function toVerlRows(samples: readonly TrainingSample[]): VerlRow[] {
  return samples.map((s) => {
    const inputIds = [...s.promptTokenIds, ...s.responseTokenIds];
    const n = s.responseTokenIds.length;
    return {
      data_id: s.groupId,
      uid: s.groupId,
      rollout_id: s.rolloutId,
      attempt_id: s.attemptId,
      mode: s.mode,
      agent_name: s.agentName,
      turn_indices: [...s.turnIndices],
      prompts: [...s.promptTokenIds],
      responses: [...s.responseTokenIds],
      response_mask: [...s.responseMask],
      input_ids: inputIds,
      attention_mask: inputIds.map(() => 1),
      position_ids: inputIds.map((_, i) => i),
      token_level_scores: s.responseTokenIds.map((_, i) => (i === n - 1 ? s.reward : 0)),
      advantages: s.responseMask.map((m) => (m === 1 ? s.advantage : 0)),
      rollout_log_probs: s.logprobs ? [...s.logprobs] : null,
      reward: s.reward,
      advantage: s.advantage,
    };
  });
}
