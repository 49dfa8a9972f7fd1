import type { TrainingSample } from '@agl/core/algorithms';
import { UserError } from '@agl/core/errors';

/** A Tinker datum for a policy-gradient loss (`importance_sampling` / `ppo`), in `@agl/tinker`'s `Datum` shape. */
export interface PolicyDatum {
  model_input: { chunks: Array<{ type: 'encoded_text'; tokens: number[] }> };
  loss_fn_inputs: { target_tokens: number[]; logprobs: number[]; advantages: number[] };
}

/** How the summed Tinker loss is scaled: `token-mean` (each trained token weighs 1/(trained tokens)) or `sum`. */
export type TinkerLossAggregation = 'token-mean' | 'sum';

/** What {@link policyDatums} built. */
export interface PolicyDatumBatch {
  datums: PolicyDatum[];
  /** The sample each datum came from (index into the input). */
  sampleIndex: number[];
  /** Groups left out because every advantage in them is 0 (nothing to learn). */
  skippedGroups: number;
  /** Trained (advantage-carrying) tokens. */
  tokens: number;
}

/**
 * Contract 3 samples → Tinker datums (Contract 4b): `model_input` = prompt + response[:-1], `target_tokens` = the
 * sampled ids shifted by one, `logprobs` = the sampling logprobs, `advantages` = the sample's advantage on each
 * trained response token and 0 on prompt and observation tokens. Groups whose advantages are all 0 are skipped.
 */
export function policyDatums(
  samples: readonly TrainingSample[],
  options: { aggregation?: TinkerLossAggregation } = {},
): PolicyDatumBatch {
  const zeroGroups = new Set<string>();
  const groups = new Map<string, TrainingSample[]>();
  for (const s of samples) groups.set(s.groupId, [...(groups.get(s.groupId) ?? []), s]);
  for (const [id, list] of groups) if (list.every((s) => s.advantage === 0)) zeroGroups.add(id);
  const kept = samples.map((s, i) => ({ s, i })).filter(({ s }) => !zeroGroups.has(s.groupId));
  let tokens = 0;
  for (const { s } of kept) tokens += s.responseMask.reduce((a, m) => a + (m ? 1 : 0), 0);
  const scale = (options.aggregation ?? 'token-mean') === 'token-mean' ? 1 / Math.max(1, tokens) : 1;
  const datums = kept.map(({ s, i }) => {
    if (!s.logprobs)
      throw new UserError(
        `Training sample ${i} (group ${s.groupId}) has no sampling logprobs; Tinker's importance_sampling and ppo losses need them. Sample through a gateway that records logprobs (Contract 2) or through Tinker's asample.`,
      );
    const ids = [...s.promptTokenIds, ...s.responseTokenIds];
    const P = s.promptTokenIds.length;
    if (P === 0 || s.responseTokenIds.length === 0)
      throw new UserError(
        `Training sample ${i} (group ${s.groupId}) has an empty prompt or response; it cannot train.`,
      );
    const n = ids.length - 1;
    const logprobs = new Array<number>(n).fill(0);
    const advantages = new Array<number>(n).fill(0);
    for (let j = 0; j < s.responseTokenIds.length; j++) {
      logprobs[P - 1 + j] = s.logprobs[j] ?? 0;
      if (s.responseMask[j]) advantages[P - 1 + j] = s.advantage * scale;
    }
    return {
      model_input: { chunks: [{ type: 'encoded_text' as const, tokens: ids.slice(0, -1) }] },
      loss_fn_inputs: { target_tokens: ids.slice(1), logprobs, advantages },
    };
  });
  return { datums, sampleIndex: kept.map(({ i }) => i), skippedGroups: zeroGroups.size, tokens };
}
