import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autogenTraceAdapter } from '@agl/autogen';
import { SqliteStore } from '@agl/store/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MATH_TASKS, trainAutogenTeam, type AutogenTeamResult } from './autogen-team';

describe('Python AutoGen team (replayed OTLP) → process agent → SQLite store → solver transitions', () => {
  let dir: string;
  let storePath: string;
  let result: AutogenTeamResult;
  const byTask = (id: string) => {
    const rollout = result.rollouts.find((r) => (r.input as { id: string }).id === id)!;
    return { rollout, trajectory: result.trajectories.find((t) => t.rolloutId === rollout.rolloutId)! };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agl-python-autogen-'));
    storePath = join(dir, 'store.sqlite');
    result = await trainAutogenTeam({ python: 'replay', store: storePath });
  }, 90_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs one rollout per task; the reward posted to AGL_EVENT_URL is the final reward', () => {
    expect(result.rollouts.map((r) => r.status)).toEqual(MATH_TASKS.map(() => 'succeeded'));
    expect(byTask('m1').trajectory.finalReward).toBe(1);
    expect(byTask('m2').trajectory.finalReward).toBe(1);
    expect(byTask('m3').trajectory.finalReward).toBe(0); // the recorded run answered per day, not per week
    expect(result.meanReward).toBeCloseTo(2 / 3, 6);
  });

  it("agentMatch 'solver' keeps the solver's two chat calls (tool call, then the answer) and none of the checker's", () => {
    const { trajectory } = byTask('m1');
    expect(trajectory.transitions.map((t) => t.agentName)).toEqual(['solver', 'solver']);
    const [first, second] = trajectory.transitions;
    expect(first!.state.messages[0]).toMatchObject({
      role: 'system',
      content: expect.stringContaining('You are the solver'),
    });
    expect(first!.action.message.toolCalls).toEqual([
      expect.objectContaining({ name: 'calculator', arguments: '{"expression":"37*12"}' }),
    ]);
    expect(second!.state.messages.at(-1)).toMatchObject({ role: 'tool', content: '444' });
    expect(second!.action.message.content).toBe('444');
    expect(second!).toMatchObject({ done: true, reward: 1 });
  });

  it('the spans carry the owner the runner handed the process (OTEL_RESOURCE_ATTRIBUTES); the checker is readable on its own', async () => {
    const store = new SqliteStore({ path: storePath });
    try {
      const { rollout } = byTask('m2');
      const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
      const attempt = await store.getLatestAttempt(rollout.rolloutId);
      expect(spans.filter((s) => s.name.startsWith('chat '))).toHaveLength(3);
      expect(new Set(spans.map((s) => s.attemptId))).toEqual(new Set([attempt!.attemptId]));
      const checker = await autogenTraceAdapter({ agentMatch: 'checker' }).fromStore({
        store,
        rolloutId: rollout.rolloutId,
      });
      expect(checker.transitions).toHaveLength(1);
      expect(checker.transitions[0]!.action.message.content).toBe('APPROVE');
    } finally {
      await store.close();
    }
  });
});
