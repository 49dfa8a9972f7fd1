import type { Trajectory } from '../schema/index';
import { finaliseSample, type SampleLimits } from './sample-tokens';
import type { TrainingSample } from './training-sample';
import {
  forEachTurn,
  type RewardOptions,
  sampleOrigin,
  type SamplesResult,
  startSampleBuild,
} from './transition-samples';

/** Options of {@link aggregateTrajectory}. */
export interface AggregateTrajectoryOptions extends SampleLimits {
  trajectory: Trajectory;
  reward?: RewardOptions;
}

interface OpenSegment {
  prompt: number[];
  response: number[];
  mask: number[];
  /** `null` once any merged call lacked logprobs. */
  logprobs: number[] | null;
  /** Running context C = prompt + response so far. */
  context: number[];
  turns: number[];
}

function startsWith(sequence: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > sequence.length) return false;
  for (let i = 0; i < prefix.length; i++) if (sequence[i] !== prefix[i]) return false;
  return true;
}

/**
 * Trajectory-level aggregation (AGL 1.0 §2.4, verl's `trajectory` level). Starting from the first call's prompt P₀
 * and response R₀ (context C = P₀+R₀, mask 1), each later call (Pᵢ, Rᵢ) whose prompt starts with C exactly is merged:
 * the new observation tokens Pᵢ[|C|:] are appended with mask 0 and logprob 0, then Rᵢ with mask 1, and C = Pᵢ+Rᵢ.
 * Otherwise the sample is closed, a mismatch counted, and a new sample starts at this call. A sample is scored with
 * the return of its first call; its logprobs are dropped if any merged call lacked them.
 */
export function aggregateTrajectory(options: AggregateTrajectoryOptions): SamplesResult {
  const { trajectory } = options;
  const { stats, assigned } = startSampleBuild(options);
  const segments: OpenSegment[] = [];
  let current: OpenSegment | null = null;
  forEachTurn(trajectory, stats, (tokens, _transition, index) => {
    if (current && startsWith(tokens.prompt, current.context)) {
      const observation = tokens.prompt.slice(current.context.length);
      current.response.push(...observation, ...tokens.response);
      current.mask.push(...observation.map(() => 0), ...tokens.response.map(() => 1));
      current.logprobs =
        current.logprobs && tokens.logprobs
          ? [...current.logprobs, ...observation.map(() => 0), ...tokens.logprobs]
          : null;
      current.context = [...tokens.prompt, ...tokens.response];
      current.turns.push(index);
      return;
    }
    if (current) stats.nMismatches += 1;
    current = {
      prompt: tokens.prompt,
      response: [...tokens.response],
      mask: tokens.response.map(() => 1),
      logprobs: tokens.logprobs ? [...tokens.logprobs] : null,
      context: [...tokens.prompt, ...tokens.response],
      turns: [index],
    };
    segments.push(current);
  });
  const samples: TrainingSample[] = [];
  for (const segment of segments) {
    const first = segment.turns[0] ?? 0;
    const sample = finaliseSample(
      {
        promptTokenIds: segment.prompt,
        responseTokenIds: segment.response,
        responseMask: segment.mask,
        ...(segment.logprobs ? { logprobs: segment.logprobs } : {}),
        ...sampleOrigin(trajectory),
        reward: assigned.returns[first] ?? 0,
        turnIndices: segment.turns,
        agentName: trajectory.transitions[first]?.agentName ?? null,
      },
      options,
      stats,
    );
    if (sample) {
      samples.push(sample);
      stats.nTurns += sample.turnIndices.length;
    }
  }
  stats.nSamples = samples.length;
  if (samples.length > 0) stats.nTrajectoriesWithSamples = 1;
  if (segments.length > 1) stats.nUnmergedTrajectories = 1;
  return { samples, stats };
}
