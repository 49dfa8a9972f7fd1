import type { ServedModel, TinyModelHost } from '../server/tiny-model-host';
import { SPECIAL_TOKENS, type SpecialToken } from '../tokenizer/tiny-tokenizer';
import type { SampleResult } from './tinker-proto';
import { asObject, badField, modelInputTokens, optInt } from './tinker-wire';

/** Stop ids of `sampling_params.stop`: token ids, or strings that are one token (a special token's text included). */
function stopIds(served: ServedModel, stop: unknown): number[] {
  const tok = served.tokenizer;
  if (stop === undefined || stop === null) return [tok.specialId('<|end|>')];
  const list = Array.isArray(stop) ? stop : [stop];
  return list.map((s, i) => {
    if (typeof s === 'number' && Number.isInteger(s)) return s;
    if (typeof s !== 'string') throw badField(`sampling_params.stop[${i}]`, 'must be a token id or a string.');
    if ((SPECIAL_TOKENS as readonly string[]).includes(s)) return tok.specialId(s as SpecialToken);
    const ids = tok.encode(s);
    if (ids.length !== 1)
      throw badField(
        `sampling_params.stop[${i}]`,
        `"${s}" is ${ids.length} tokens on this model; the embedded policy stops on single tokens, so send token ids.`,
      );
    return ids[0]!;
  });
}

/**
 * Tinker's `asample` on the embedded policy: `num_samples` sequences from the prompt's token ids, each with its sampled
 * ids and their logprobs (raw log-softmax at temperature 1, as the sampler drew them). Without `stop` a sequence ends
 * on `<|end|>` (included in its tokens, as Tinker includes the stop token) or at `max_tokens`.
 */
export function sampleFromTinker(
  host: TinyModelHost,
  served: ServedModel,
  body: Record<string, unknown>,
): Promise<SampleResult & { type: 'sample' }> {
  const prompt = modelInputTokens(body.prompt, 'prompt');
  const sp = asObject(body.sampling_params ?? {}, 'sampling_params');
  const n = optInt(body, 'num_samples') ?? 1;
  if (n < 1 || n > 64) throw badField('num_samples', `must be 1 to 64, got ${n}.`);
  if ((optInt(body, 'topk_prompt_logprobs') ?? 0) > 0)
    throw badField('topk_prompt_logprobs', 'is not supported by the embedded policy; send 0 (prompt_logprobs works).');
  const topK = optInt(sp, 'top_k', 'sampling_params.') ?? -1;
  if (topK > 0)
    throw badField('sampling_params.top_k', 'is not supported by the embedded policy; send -1 (use top_p).');
  const temperature = sp.temperature ?? 1;
  const topP = sp.top_p ?? 1;
  if (typeof temperature !== 'number' || temperature < 0)
    throw badField('sampling_params.temperature', 'must be a number ≥ 0.');
  if (typeof topP !== 'number' || topP <= 0 || topP > 1) throw badField('sampling_params.top_p', 'must be in (0, 1].');
  const tok = served.tokenizer;
  const params = host.generationParams({
    served,
    promptIds: prompt,
    maxTokens: optInt(sp, 'max_tokens', 'sampling_params.'),
    temperature,
    topP,
    seed: optInt(sp, 'seed', 'sampling_params.'),
    topLogprobs: 0,
    bannedIds: [tok.specialId('<|bos|>'), tok.specialId('<|pad|>')],
  });
  params.stopIds = stopIds(served, sp.stop);
  const promptLogprobs = body.prompt_logprobs === true ? host.engine.score(served.version, prompt) : undefined;
  promptLogprobs?.catch(() => undefined);
  return Promise.all([host.engine.generate({ version: served.version, params, n }).result, promptLogprobs]).then(
    ([choices, prompt_logprobs]) => ({
      type: 'sample' as const,
      sequences: choices.map((c) => ({
        tokens: c.tokens.map((t) => t.id),
        logprobs: c.tokens.map((t) => t.logprob),
        stop_reason: c.finishReason,
      })),
      prompt_cache_hit_tokens: choices[0]?.cachedTokens ?? 0,
      ...(prompt_logprobs ? { prompt_logprobs } : {}),
    }),
  );
}
