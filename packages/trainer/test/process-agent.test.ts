import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TraceToTransitions, getRewardValue } from '@agl/core/transitions';
import { SqliteStore } from '@agl/store/sqlite';
import { startOpenAiTestServer, toyChatPromptIds, toyTokenize, type OpenAiTestServer } from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processAgent, Runner, type ProcessResult } from '../src/index';

const SCRIPT = fileURLToPath(new URL('./fixtures/python_agent.py', import.meta.url));

describe('process agents (Contract 2b): a python3 stdlib agent under the env contract', () => {
  let llm: OpenAiTestServer;
  let dir: string;
  let store: SqliteStore;
  let ids: { ok: string; bad: string; silent: string };
  const hookCalls: unknown[][] = [];
  beforeAll(async () => {
    llm = await startOpenAiTestServer();
    dir = await mkdtemp(join(tmpdir(), 'agl-proc-'));
    store = new SqliteStore({ path: join(dir, 'store.sqlite'), scanDebounceSeconds: 0 });
    await store.addResources({ llm: { resourceType: 'llm', endpoint: llm.baseURL, model: 'test-model' } });
    const ok = await store.enqueueRollout({ input: { question: 'What is 20 + 22?', expected: 42 }, mode: 'train' });
    const bad = await store.enqueueRollout({ input: { question: 'What is 1 + 1?', fail: true }, mode: 'train' });
    const silent = await store.enqueueRollout({ input: { question: 'What is 2 * 4?', no_reward: true }, mode: 'val' });
    const runner = new Runner({
      store,
      agent: processAgent({ command: 'python3', args: [SCRIPT] }),
      nWorkers: 2,
      pollIntervalSeconds: 0.05,
      logger: { warn: () => undefined },
      reward: (task, result, spans) => {
        hookCalls.push([task, (result as ProcessResult).stdout.trim(), spans.length]);
        return 0.3;
      },
    });
    const running = runner.run();
    await store.waitForRollouts([ok.rolloutId, bad.rolloutId, silent.rolloutId], { timeoutSeconds: 60 });
    runner.stop();
    await running;
    ids = { ok: ok.rolloutId, bad: bad.rolloutId, silent: silent.rolloutId };
  }, 120_000);
  afterAll(async () => {
    await store.close();
    await llm.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('its LLM span becomes a transition with token ids, and its reward event is the reward', async () => {
    const rollout = await store.getRolloutById(ids.ok);
    expect(rollout?.status).toBe('succeeded');
    const spans = (await store.querySpans({ rolloutId: ids.ok, sortBy: 'sequenceId' })).items;
    const trajectory = new TraceToTransitions().adapt(spans, rollout!);
    expect(trajectory.transitions).toHaveLength(1);
    const [t] = trajectory.transitions;
    expect(t!.state.tokenIds).toEqual(toyChatPromptIds([{ role: 'user', content: 'What is 20 + 22?' }]));
    expect(t!.action.tokenIds).toEqual(toyTokenize('42'));
    expect(t!.action.message).toMatchObject({ role: 'assistant', content: '42' });
    expect(t!.reward).toBe(1);
    expect(trajectory.finalReward).toBe(1);
    const llmRequest = llm.requests.find((r) => JSON.stringify(r.body).includes('20 + 22'));
    expect(llmRequest?.headers.authorization).toMatch(/^Bearer [0-9a-f]{32}$/u);
  });

  it('a non-zero exit marks the attempt failed and records stderr in an exception span', async () => {
    const attempts = (await store.queryAttempts({ rolloutId: ids.bad })).items;
    expect(attempts.map((a) => a.status)).toEqual(['failed']);
    const spans = (await store.querySpans({ rolloutId: ids.bad })).items;
    const exception = spans.find((s) => s.name === 'agentlightning.exception');
    expect(String(exception?.attributes['exception.message'])).toContain('exited with code 3');
    expect(String(exception?.attributes['exception.message'])).toContain('giving up on purpose');
    expect(spans.some((s) => s.name === 'openai.chat.completion')).toBe(true);
  });

  it('without a reward event or span, the runner-side reward hook supplies the reward', async () => {
    expect((await store.getRolloutById(ids.silent))?.status).toBe('succeeded');
    expect(hookCalls).toEqual([[{ question: 'What is 2 * 4?', no_reward: true }, '{"answer": "8"}', 1]]);
    const spans = (await store.querySpans({ rolloutId: ids.silent })).items;
    expect(spans.map(getRewardValue).filter((v) => v !== null)).toEqual([0.3]);
  });
});

describe('process agents behind the loopback AGL gateway (Runner gateway: true)', () => {
  it(
    'an agent that only calls AGL_OPENAI_BASE_URL gets its call recorded by the gateway, with token ids',
    { timeout: 120_000 },
    async () => {
      const llm = await startOpenAiTestServer();
      const dir = await mkdtemp(join(tmpdir(), 'agl-proc-gw-'));
      const store = new SqliteStore({ path: join(dir, 'store.sqlite') });
      try {
        await store.addResources({ main_llm: { resourceType: 'llm', endpoint: llm.baseURL, model: 'test-model' } });
        const r = await store.enqueueRollout({
          input: { question: 'What is 5 + 5?', expected: 10, no_span: true },
          mode: 'train',
        });
        const runner = new Runner({
          store,
          agent: processAgent({ command: 'python3', args: [SCRIPT] }),
          gateway: true,
          pollIntervalSeconds: 0.05,
          logger: { warn: () => undefined },
        });
        const running = runner.run();
        const [done] = await store.waitForRollouts([r.rolloutId], { timeoutSeconds: 60 });
        runner.stop();
        await running;
        expect(done?.status).toBe('succeeded');
        const spans = (await store.querySpans({ rolloutId: r.rolloutId, sortBy: 'sequenceId' })).items;
        const trajectory = new TraceToTransitions().adapt(spans, done!);
        expect(trajectory.transitions).toHaveLength(1);
        expect(trajectory.transitions[0]!.state.tokenIds).toEqual(
          toyChatPromptIds([{ role: 'user', content: 'What is 5 + 5?' }]),
        );
        expect(trajectory.transitions[0]!.action.tokenIds).toEqual(toyTokenize('10'));
        expect(trajectory.finalReward).toBe(1);
        // the gateway never forwards the agent's AGL_KEY upstream (the resource has no api key here)
        expect(llm.requests.at(-1)?.headers.authorization).toBeUndefined();
      } finally {
        await store.close();
        await llm.close();
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
