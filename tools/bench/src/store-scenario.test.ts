import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Span } from '@agl/core';
import { checkSpans } from './bench-agent';
import { scenarioSize } from './scenario-sizes';
import { runEmbeddedScenario, runEmbeddedThreadsScenario } from './store-scenario';

const dir = mkdtempSync(join(tmpdir(), 'agl-bench-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const span = (attributes: Record<string, unknown>, name = 'x'): Span => ({ name, attributes }) as unknown as Span;
const reward = (value: number): Span =>
  span(
    { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': value },
    'agentlightning.annotation',
  );

describe('store scenario', () => {
  it("checkSpans refuses a missing task attribute and a final reward outside [1, 2] (AGL's check_spans)", () => {
    expect(() => checkSpans([span({ task: 't' }), reward(1.5)], 't')).not.toThrow();
    expect(() => checkSpans([span({ task: 'other' }), reward(1.5)], 't')).toThrow(/task attribute t not found/);
    expect(() => checkSpans([span({ task: 't' }), reward(1.5), reward(0.5)], 't')).toThrow(
      /final reward 0.5 is not in \[1, 2\]/,
    );
    expect(() => checkSpans([span({ task: 't' })], 't')).toThrow(/final reward not found/);
  });

  it(
    'runs the minimal size embedded (AGL values, 32 runners) and verifies every rollout',
    { timeout: 60_000 },
    async () => {
      const size = scenarioSize('minimal');
      expect(size).toMatchObject({ nRunners: 32, maxRounds: 6, sleepSeconds: 0.5, batchSize: 256 });
      const result = await runEmbeddedScenario({ size, tasks: 32, dir });
      expect(result.verified).toBe(32);
      expect(result.runner).toEqual({ started: 32, succeeded: 32, failed: 0 });
      // Per rollout: 3 spans and up to 1 reward per round (1-6 rounds), then final + final reward.
      expect(result.totalSpans).toBeGreaterThanOrEqual(32 * 5);
      expect(result.totalSpans).toBeLessThanOrEqual(32 * 26);
      expect(result.rolloutsPerSecond).toBeGreaterThan(0);
    },
  );

  it(
    'runs the minimal size with the runners on two worker threads, each on its own connection to the file',
    { timeout: 60_000 },
    async () => {
      const result = await runEmbeddedThreadsScenario({ size: scenarioSize('minimal'), tasks: 32, dir, threads: 2 });
      expect(result).toMatchObject({
        backend: 'embedded',
        verified: 32,
        runnerThreads: 2,
        runner: { started: 32, succeeded: 32, failed: 0 },
      });
      expect(result.totalSpans).toBeGreaterThanOrEqual(32 * 5);
      expect(result.cpuSeconds).toBeGreaterThan(0);
    },
  );
});
