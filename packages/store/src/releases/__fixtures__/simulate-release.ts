import { seededRandom } from '@agl/core/random';
import type { Release } from '@agl/core/schema';
import { decideRelease, type ArmData } from '../release-decision';

/** One arm's true behaviour in a simulation. */
export interface SimArm {
  failureRate: number;
  /** Mean of a Bernoulli feedback reward. */
  feedbackMean: number;
  /** Median latency, seconds (log-normal, σ 0.3). */
  latencySeconds: number;
}

/** A running release with the given settings (the store fills the same defaults). */
export function simRelease(overrides: Partial<Release> = {}): Release {
  return {
    releaseId: 'rel-sim',
    state: 'running',
    baseline: 'rs-base',
    candidate: 'rs-cand',
    shares: [0.01, 0.1, 0.5, 1],
    stage: 0,
    share: 0.01,
    metric: 'feedback',
    guards: ['failure-rate:+0.02', 'latency-p95:+20%'],
    minRequests: 40,
    maxDurationSeconds: null,
    alpha: 0.05,
    createTime: 0,
    updateTime: 0,
    endTime: null,
    stageStartTime: 0,
    shareHistory: [{ time: 0, share: 0.01 }],
    arms: null,
    decisions: [],
    ...overrides,
  };
}

/**
 * Simulates a release on synthetic results: batches of `batch` requests, each on the candidate with the current
 * share, half of them with feedback; after each batch the store's decision logic runs, as it does after each batch of
 * recorded results. Returns the release when it ended (or after `maxBatches`), and the share each decision left.
 */
export function simulateRelease(
  seed: number,
  baseline: SimArm,
  candidate: SimArm,
  options: { batch?: number; maxBatches?: number; release?: Partial<Release> } = {},
): Release {
  const random = seededRandom(seed);
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const release = simRelease(options.release);
  const data: Record<
    'baseline' | 'candidate',
    { requests: ArmData['requests'][number][]; metric: number[]; tokens: number[] }
  > = {
    baseline: { requests: [], metric: [], tokens: [] },
    candidate: { requests: [], metric: [], tokens: [] },
  };
  const batch = options.batch ?? 400;
  let now = 0;
  for (let b = 0; b < (options.maxBatches ?? 200) && release.state === 'running'; b += 1) {
    for (let i = 0; i < batch; i += 1) {
      now += 0.01;
      const armName = random() < release.share ? 'candidate' : 'baseline';
      const truth = armName === 'candidate' ? candidate : baseline;
      const failed = random() < truth.failureRate;
      data[armName].requests.push({
        failed,
        durationSeconds: truth.latencySeconds * Math.exp(0.3 * normal()),
        startTime: now,
      });
      if (!failed && random() < 0.5) data[armName].metric.push(random() < truth.feedbackMean ? 1 : 0);
    }
    const verdict = decideRelease(release, data.baseline, data.candidate, now);
    release.arms = verdict.arms;
    const d = verdict.decision;
    if (!d) continue;
    release.decisions.push({ ...d, time: now, by: 'automatic' });
    if (d.action === 'ramp') {
      release.stage += 1;
      release.share = d.share;
      release.stageStartTime = now;
    } else {
      release.state = d.action === 'promote' ? 'promoted' : d.action === 'rollback' ? 'rolled_back' : 'aborted';
      release.share = d.share;
    }
    if (release.shareHistory.at(-1)!.share !== release.share)
      release.shareHistory.push({ time: now, share: release.share });
  }
  return release;
}
