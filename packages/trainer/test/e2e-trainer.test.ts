import { join } from 'node:path';
import { toyChatPromptIds, toyTokenize, useTestLlmAndDir, type OpenAiTestServer } from '@agl/testing';
import { isAttemptedRollout, type LightningStore, type Trajectory } from '@agl/core';
import { SqliteStore } from '@agl/store/sqlite';
import { StoreClient } from '@agl/store/client';
import { describe, expect, it } from 'vitest';
import { Baseline, Trainer } from '../src/index';
import { arithmeticAgent, arithmeticTasks, maxAttemptsOf, type ArithmeticTask } from './arithmetic-agent';
import { startAglStoreServe, type AglStoreServe } from './agl-store-serve';

const N = 200;
const tasks = arithmeticTasks(N);

async function runAndCheck(store: LightningStore, llm: OpenAiTestServer): Promise<void> {
  const baseline = new Baseline({
    maxQueueLength: 32,
    rolloutConfig: (task) => {
      const t = task as ArithmeticTask;
      return t.fail ? { maxAttempts: maxAttemptsOf(t), retryCondition: ['failed'] } : undefined;
    },
  });
  const warnings: string[] = [];
  const result = await new Trainer({
    algorithm: baseline,
    store,
    nRunners: 4,
    pollIntervalSeconds: 0.05,
    initialResources: { llm: { resourceType: 'llm', endpoint: llm.baseURL, model: 'test-model' } },
    logger: { warn: (m) => warnings.push(m) },
  }).fit(arithmeticAgent as never, { train: tasks });

  expect(warnings).toEqual([]);
  const all = await store.queryRollouts({ limit: -1 });
  expect(all.total).toBe(N);
  expect(all.items.every((r) => ['succeeded', 'failed'].includes(r.status))).toBe(true);
  const failing = tasks.filter((t) => t.fail);
  expect(result.runner.failed).toBe(failing.reduce((n, t) => n + maxAttemptsOf(t), 0));
  expect(result.runner.succeeded).toBe(N - failing.length);
  expect(new Set(all.items.map((r) => (isAttemptedRollout(r) ? r.attempt.workerId : null))).size).toBe(4);

  const byTask = new Map(all.items.map((r) => [(r.metadata as { task_id: string }).task_id, r]));
  for (const task of tasks) {
    const rollout = byTask.get(task.id)!;
    const attempts = (await store.queryAttempts({ rolloutId: rollout.rolloutId })).items;
    expect(attempts.length, task.id).toBe(maxAttemptsOf(task));
    expect(rollout.status).toBe(task.fail ? 'failed' : 'succeeded');
  }

  expect(baseline.trajectories).toHaveLength(N);
  const trajectories = new Map<string, Trajectory>(baseline.trajectories.map((t) => [t.taskId, t]));
  for (const task of tasks) {
    const trajectory = trajectories.get(task.id)!;
    const question = `What is ${task.a} + ${task.b}?`;
    const first = trajectory.transitions[0]!;
    expect(first.state.tokenIds).toEqual(toyChatPromptIds([{ role: 'user', content: question }]));
    expect(first.action.tokenIds).toEqual(toyTokenize(String(task.a + task.b)));
    expect(first.reward, JSON.stringify(trajectory)).toBe(0.5);
    if (task.fail) {
      expect(trajectory.transitions).toHaveLength(1);
      expect(trajectory.finalReward).toBe(0.5);
    } else {
      expect(trajectory.transitions).toHaveLength(2);
      expect(trajectory.transitions[1]!.reward).toBe(1);
      expect(trajectory.transitions[1]!.state.messages[0]).toMatchObject({
        role: 'user',
        content: `Double-check ${task.a} + ${task.b}`,
      });
      expect(trajectory.finalReward).toBe(1);
    }
  }
  expect(llm.requests.length).toBeGreaterThanOrEqual(2 * N - failing.length);
}

describe('Trainer end to end: 4 runners, 200 rollouts, openai client against the test LLM server', () => {
  const suite = useTestLlmAndDir({ dirPrefix: 'agl-e2e-' });

  it('with the embedded SQLite store', { timeout: 120_000 }, async () => {
    const store = new SqliteStore({ path: join(suite.dir, 'embedded.sqlite') });
    try {
      await runAndCheck(store, suite.llm);
    } finally {
      await store.close();
    }
  });

  it('with StoreClient against a real `agl store serve` child process', { timeout: 180_000 }, async () => {
    let server: AglStoreServe | undefined;
    let client: StoreClient | undefined;
    try {
      server = await startAglStoreServe({ path: join(suite.dir, 'served.sqlite'), token: 'e2e-token' });
      client = new StoreClient({ url: server.url, token: 'e2e-token' });
      await runAndCheck(client, suite.llm);
    } finally {
      await client?.close();
      await server?.stop();
    }
  });
});
