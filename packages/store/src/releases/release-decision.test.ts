import { describe, expect, it } from 'vitest';
import { simulateRelease, type SimArm } from './__fixtures__/simulate-release';
import { bernoulli, differenceInterval, summarize } from './sequential-test';

const base: SimArm = { failureRate: 0.05, feedbackMean: 0.6, latencySeconds: 0.2 };

describe('release decisions (mSPRT on synthetic results)', () => {
  it('promotes a candidate with a higher true feedback mean through every share, as better', () => {
    const release = simulateRelease(1, base, { ...base, feedbackMean: 0.85 }, { release: { minRequests: 100 } });
    expect(release.state).toBe('promoted');
    expect(release.decisions.map((d) => d.action)).toEqual(['ramp', 'ramp', 'ramp', 'promote']);
    expect(release.shareHistory.map((h) => h.share)).toEqual([0.01, 0.1, 0.5, 1]);
    expect(release.decisions.at(-1)!.figures.verdict).toBe('better');
  });

  it('rolls back a candidate with a higher failure rate before it reaches 50%', () => {
    const release = simulateRelease(2, base, { ...base, failureRate: 0.3 });
    expect(release.state).toBe('rolled_back');
    expect(Math.max(...release.shareHistory.map((h) => h.share))).toBeLessThan(0.5);
    expect(release.decisions.at(-1)!.reason).toMatch(/guard failure-rate/);
  });

  it('rolls back a slower candidate on the latency guard, and a worse one on the metric', () => {
    const slow = simulateRelease(3, base, { ...base, latencySeconds: 0.4 });
    expect(slow.state).toBe('rolled_back');
    expect(slow.decisions.at(-1)!.reason).toMatch(/latency-p95/);
    const worse = simulateRelease(4, base, { ...base, feedbackMean: 0.2 }, { release: { minRequests: 200 } });
    expect(worse.state).toBe('rolled_back');
    expect(worse.decisions.at(-1)!.reason).toMatch(/metric feedback is worse/);
  });

  it('A/A: over 200 simulations with identical arms, at most 5% end in a rollback or a promotion as better', () => {
    let falsePositives = 0;
    let promoted = 0;
    for (let seed = 1000; seed < 1200; seed += 1) {
      const release = simulateRelease(seed, base, base, { batch: 1000 });
      const last = release.decisions.at(-1);
      if (release.state === 'rolled_back' || (release.state === 'promoted' && last?.figures.verdict === 'better'))
        falsePositives += 1;
      if (release.state === 'promoted') promoted += 1;
    }
    // Printed for the closing note (the measured false-positive figure).
    console.log(
      `A/A: ${falsePositives}/200 false positives (${(falsePositives / 2).toFixed(1)}%), ${promoted} promoted`,
    );
    expect(falsePositives).toBeLessThanOrEqual(10);
    expect(promoted).toBeGreaterThanOrEqual(190);
  }, 180_000);

  it('a metric without spread (one judge score per arm) still decides', () => {
    const i = differenceInterval(summarize(Array(10).fill(0)), summarize(Array(20).fill(0.5)), 0.05)!;
    expect(i.high).toBeLessThan(0);
  });

  it('gives no interval before each side has 10 observations, and a Bernoulli sample with no events still has spread', () => {
    expect(differenceInterval(summarize([1, 0, 1]), summarize([1, 0, 1]), 0.05)).toBeNull();
    expect(bernoulli(0, 50).variance).toBeGreaterThan(0);
    const i = differenceInterval(bernoulli(0, 50), bernoulli(0, 50), 0.05)!;
    expect(i.low).toBeLessThan(0);
    expect(i.high).toBeGreaterThan(0);
  });
});
