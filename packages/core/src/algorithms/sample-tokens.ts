import { ValidationError } from '../errors/index';
import type { Transition } from '../schema/index';
import type { SampleBuildStats, TrainingSample } from './training-sample';

/** The token view of one call. */
export interface TurnTokens {
  prompt: number[];
  response: number[];
  /** One logprob per response token, or `undefined` when missing or not aligned with the response. */
  logprobs: number[] | undefined;
}

/**
 * Token ids and logprobs of a transition, or `null` when either token list is missing or empty (AGL 1.0 drops calls
 * with empty response token ids; such a call cannot be trained).
 */
export function turnTokens(transition: Transition): TurnTokens | null {
  const prompt = transition.state.tokenIds;
  const response = transition.action.tokenIds;
  if (!prompt || !response || prompt.length === 0 || response.length === 0) return null;
  const raw = transition.action.logprobs;
  const logprobs =
    raw && raw.length === response.length && raw.every((l) => Number.isFinite(l.logprob))
      ? raw.map((l) => l.logprob)
      : undefined;
  return { prompt: [...prompt], response: [...response], logprobs };
}

/** Length limits of a sample (verl's `max_prompt_length` / `max_response_length`). */
export interface SampleLimits {
  /** A longer prompt drops the sample (verl marks it `is_drop`). Default: unlimited. */
  maxPromptLength?: number;
  /** A longer response is cut (mask and logprobs too). Default: unlimited. */
  maxResponseLength?: number;
}

/** Checks that limits are positive integers when given. */
export function validateLimits(limits: SampleLimits): void {
  for (const key of ['maxPromptLength', 'maxResponseLength'] as const) {
    const value = limits[key];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
      throw new ValidationError(`${key} must be a positive integer, got ${value}; omit it for no limit`, [
        { path: key, message: 'must be a positive integer' },
      ]);
    }
  }
}

/**
 * Applies the limits to a sample: returns `null` (and counts it) when the prompt is too long or nothing is left to
 * train; cuts an over-long response and counts it.
 */
export function finaliseSample(
  sample: TrainingSample,
  limits: SampleLimits,
  stats: SampleBuildStats,
): TrainingSample | null {
  if (limits.maxPromptLength !== undefined && sample.promptTokenIds.length > limits.maxPromptLength) {
    stats.nDroppedPromptTooLong += 1;
    return null;
  }
  let result = sample;
  const max = limits.maxResponseLength;
  if (max !== undefined && sample.responseTokenIds.length > max) {
    stats.nTruncated += 1;
    result = {
      ...sample,
      responseTokenIds: sample.responseTokenIds.slice(0, max),
      responseMask: sample.responseMask.slice(0, max),
      ...(sample.logprobs ? { logprobs: sample.logprobs.slice(0, max) } : {}),
    };
  }
  if (!result.responseMask.some((m) => m === 1)) {
    stats.nSkippedNoTokens += 1;
    return null;
  }
  return result;
}
