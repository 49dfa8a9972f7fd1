import type { NamedResources } from '@agl/core';
import { MemoryStore } from '@agl/store';
import { judgeRuleLlm, roomSelectorRuleLlm, startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { Trainer } from '@agl/trainer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APO } from '../apo';
import { ChatClient } from '../chat-client';
import { roomAgent, type RoomTask } from '../demo/index';
import { SEED_PROMPT, TRAIN, VAL } from '../__fixtures__/run-apo';
import { findFinalReward } from '@agl/core/transitions';
import { judgeRewardHook, LlmJudge, rolloutTranscript } from './index';

const RUBRIC = [
  'The agent books a meeting room. The right answer is the room with the fewest seats among those that hold',
  'everyone and meet every need (projector, step-free); the first listed wins a tie.',
  'Reward 1 for exactly the right room id and nothing else, 0.3 for the right room inside other text, else 0.',
].join('\n');

/** The scripted judge applies the rubric to the transcript it is shown (it reads the request and the reply). */
function gradeRoomTranscript(transcript: string): number {
  const people = Number(/for (\d+) people/u.exec(transcript)?.[1] ?? 0);
  const rooms = [...transcript.matchAll(/(R\d+): seats (\d+), projector (yes|no), step-free (yes|no)/gu)]
    .map((m) => ({ id: m[1] as string, seats: Number(m[2]), projector: m[3] === 'yes', stepFree: m[4] === 'yes' }))
    .filter((r) => r.seats >= people)
    .filter((r) => !transcript.includes('needs a projector') || r.projector)
    .filter((r) => !transcript.includes('wheelchair') || r.stepFree);
  if (rooms.length === 0) return 0;
  const answer = rooms.reduce((a, b) => (b.seats < a.seats ? b : a)).id;
  const reply = ([...transcript.matchAll(/^\[assistant\] (.*)$/gmu)].at(-1)?.[1] ?? '').trim();
  if (reply === answer) return 1;
  const ids = reply.match(/\bR\d+\b/gu) ?? [];
  return ids.length === 1 && ids[0] === answer ? 0.3 : 0;
}

let llm: OpenAiTestServer;
beforeAll(async () => {
  llm = await startOpenAiTestServer({
    respond: judgeRuleLlm({ gradeTranscript: gradeRoomTranscript, fallback: roomSelectorRuleLlm }),
  });
});
afterAll(() => llm.close());

describe('APO with the LLM judge as its reward', () => {
  it('optimises the prompt when every reward comes from the rubric judge (no reward function)', async () => {
    const store = new MemoryStore();
    const judge = new LlmJudge({
      client: new ChatClient({ baseURL: llm.baseURL }),
      model: 'judge-model',
      rubric: RUBRIC,
    });
    const apo = new APO({
      llm: { baseURL: llm.baseURL, retryBaseDelayMs: 1 },
      gradientModel: 'critic-model',
      applyEditModel: 'editor-model',
      ...{ beamWidth: 2, branchFactor: 2, beamRounds: 3, gradientBatchSize: 3, valBatchSize: 6, seed: 2 },
    });
    // The agent returns no reward: the runner asks the judge, which reads the rollout's spans.
    const agent = async (task: RoomTask, resources: NamedResources): Promise<void> =>
      void (await roomAgent(task, resources));
    await new Trainer({
      algorithm: apo,
      store,
      nRunners: 4,
      pollIntervalSeconds: 0.01,
      quiet: true,
      reward: judgeRewardHook(judge),
      initialResources: {
        llm: { resourceType: 'llm', endpoint: llm.baseURL, model: 'agent-model' },
        system_prompt: { resourceType: 'prompt_template', template: SEED_PROMPT },
      },
    }).fit(agent as never, { train: TRAIN, val: VAL });
    const result = apo.result!;
    expect(result.seedScore).not.toBeNull();
    expect(result.bestScore).toBeGreaterThan(result.seedScore! + 0.2);
    expect(result.bestPrompt).not.toBe(SEED_PROMPT);
    const judgeCalls = llm.requests.filter((r) => (r.body as { model?: string }).model === 'judge-model');
    expect(judgeCalls.length).toBeGreaterThan(10);
    // Each rollout's reward is the judge's score of its own conversation.
    expect(judge.client.usage.calls).toBe(judgeCalls.length);
    const rollouts = (await store.queryRollouts({ statusIn: ['succeeded'] })).items;
    expect(rollouts.length).toBeGreaterThan(20);
    for (const r of rollouts) {
      const spans = (await store.querySpans({ rolloutId: r.rolloutId, attemptId: 'latest' })).items;
      expect(findFinalReward(spans), r.rolloutId).toBe(gradeRoomTranscript(rolloutTranscript(spans, r.input)));
    }
  }, 120_000);
});
