import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '@agl/store';
import { processAgent, Runner, type ProcessResult } from '@agl/trainer';
import { crewAiTraceAdapter } from './index';

const SCRIPT = fileURLToPath(new URL('./__fixtures__/crewai_otlp_agent.py', import.meta.url));

describe("process agent: python3 sends OTLP/JSON using only the runner's OTel env vars", () => {
  const store = new MemoryStore({ scanDebounceSeconds: 0 });
  const outputs: unknown[] = [];
  let rolloutId = '';

  beforeAll(async () => {
    const rollout = await store.enqueueRollout({ input: { topic: 'the Rhine' }, mode: 'train' });
    rolloutId = rollout.rolloutId;
    // No storeEndpoint: the runner serves the store on a loopback port with a fresh bearer token itself.
    const runner = new Runner({
      store,
      agent: processAgent({ command: 'python3', args: [SCRIPT] }),
      pollIntervalSeconds: 0.05,
      logger: { warn: () => undefined },
      reward: (_task, result) => {
        outputs.push(JSON.parse((result as ProcessResult).stdout.trim()) as unknown);
        return 1;
      },
    });
    const running = runner.run();
    await store.waitForRollouts([rolloutId], { timeoutSeconds: 60 });
    runner.stop();
    await running;
  }, 90_000);
  afterAll(async () => {
    await store.close();
  });

  it('the export reached /v1/traces with the token header and the owner resource attributes', async () => {
    expect((await store.getRolloutById(rolloutId))?.status).toBe('succeeded');
    expect(outputs).toEqual([
      expect.objectContaining({
        endpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1\/traces$/u),
        headers: ['Authorization'],
        resource: ['agentlightning.attempt_id', 'agentlightning.rollout_id'],
        status: 200,
      }),
    ]);
  });

  it("the spans belong to the runner's attempt and yield the Researcher's transition", async () => {
    const attempt = await store.getLatestAttempt(rolloutId);
    const spans = (await store.querySpans({ rolloutId })).items;
    expect(spans.map((s) => s.name)).toEqual(
      expect.arrayContaining(['Crew.kickoff', 'Researcher._execute_core', 'completion']),
    );
    expect(new Set(spans.filter((s) => s.name === 'completion').map((s) => s.attemptId))).toEqual(
      new Set([attempt!.attemptId]),
    );
    const trajectory = await crewAiTraceAdapter({ agentMatch: 'Researcher' }).fromStore({ store, rolloutId });
    expect(trajectory.transitions).toHaveLength(1);
    expect(trajectory.transitions[0]).toMatchObject({
      agentName: 'Researcher',
      state: { messages: [{ role: 'user', content: 'Find facts about the Rhine' }] },
      action: { message: { role: 'assistant', content: 'It is long.' } },
    });
  });
});
