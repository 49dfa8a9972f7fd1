import { readFile } from 'node:fs/promises';
import { buildTrainingSamples } from '@agl/core/algorithms';
import { useOfflineExampleRun } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { REVIEWER_INSTRUCTIONS, WRITER_INSTRUCTIONS } from './newsroom-agents';
import { newsroomRuleLlm } from './newsroom-rule-llm';
import { headlineReward, HEADLINE_TASKS } from './newsroom-tasks';
import { runNewsroom } from './run-newsroom';

describe('the headline reward', () => {
  it('gives 1 at once, 0.5 after a revision, 0 when a constraint fails', () => {
    const task = HEADLINE_TASKS[0]!;
    expect(headlineReward('Second daily ferry approved for Oskel', task, false)).toBe(1);
    expect(headlineReward('Second daily ferry approved for Oskel', task, true)).toBe(0.5);
    expect(headlineReward('Council approves more boats', task, false)).toBe(0);
    expect(headlineReward('Ferry: the island council approved a second daily ferry', task, false)).toBe(0);
  });
});

describe('writer + reviewer offline: only the writer is trained', () => {
  const suite = useOfflineExampleRun({ respond: newsroomRuleLlm(), dirPrefix: 'agl-multi-agent-' }, runNewsroom);
  const requestsBy = (instructions: string): number =>
    suite.llm.requests.filter((q) => JSON.stringify(q.body).includes(JSON.stringify(instructions).slice(1, -1))).length;

  it('records both agents: every request the server saw is an LLM span of its agent in the store', () => {
    expect(suite.result().allTrajectories).toHaveLength(HEADLINE_TASKS.length * 3);
    expect(suite.result().callsByAgent.writer).toBe(requestsBy(WRITER_INSTRUCTIONS));
    expect(suite.result().callsByAgent.reviewer).toBe(requestsBy(REVIEWER_INSTRUCTIONS));
    expect(suite.result().callsByAgent.reviewer).toBeGreaterThan(0);
    expect(suite.result().callsByAgent.writer! + suite.result().callsByAgent.reviewer!).toBe(suite.llm.requests.length);
    const revised = suite.result().allTrajectories.find((t) => t.transitions.length === 4)!;
    expect(revised.transitions.map((t) => t.agentName)).toEqual(['writer', 'reviewer', 'writer', 'reviewer']);
  });

  it("agentMatch 'writer' keeps exactly the writer's calls: no reviewer prompt, response or span in any sample", () => {
    const samples = suite.result().batch.samples;
    expect(samples).toHaveLength(suite.result().callsByAgent.writer!);
    expect(new Set(samples.map((s) => s.agentName))).toEqual(new Set(['writer']));
    expect(suite.result().batch.stats.nSkippedNoTokens).toBe(0);
    const reviewer = suite
      .result()
      .allTrajectories.flatMap((t) => t.transitions)
      .filter((t) => t.agentName === 'reviewer');
    const key = (ids: readonly number[] | undefined): string => JSON.stringify(ids ?? []);
    const reviewerResponses = new Set(reviewer.map((t) => key(t.action.tokenIds)));
    const reviewerPrompts = new Set(reviewer.map((t) => key(t.state.tokenIds)));
    for (const s of samples) {
      expect(reviewerResponses.has(key(s.responseTokenIds))).toBe(false);
      expect(reviewerPrompts.has(key(s.promptTokenIds))).toBe(false);
    }
    const reviewerSpans = new Set(reviewer.flatMap((t) => t.spanIds));
    const trainedSpans = suite.result().trainedTrajectories.flatMap((t) => t.transitions.flatMap((x) => x.spanIds));
    expect(trainedSpans.length).toBe(samples.length);
    expect(trainedSpans.some((id) => reviewerSpans.has(id))).toBe(false);
    const writerPrompt = suite.result().trainedTrajectories[0]!.transitions[0]!.state.messages[0];
    expect(writerPrompt).toMatchObject({ role: 'system', content: WRITER_INSTRUCTIONS });
  });

  it('without the filter the reviewer would be trained too (the contrast)', () => {
    const unfiltered = buildTrainingSamples({ trajectories: suite.result().allTrajectories, level: 'transition' });
    expect(unfiltered.samples.filter((s) => s.agentName === 'reviewer')).toHaveLength(
      suite.result().callsByAgent.reviewer!,
    );
  });

  it('each task is a GRPO group with mixed rewards: advantages sum to zero per group and are not all zero', () => {
    const groups = new Map<string, number[]>();
    for (const s of suite.result().batch.samples)
      groups.set(s.groupId, [...(groups.get(s.groupId) ?? []), s.advantage]);
    expect(groups.size).toBe(HEADLINE_TASKS.length);
    expect(
      suite.result().batch.samples.some((s) => s.advantage > 0) &&
        suite.result().batch.samples.some((s) => s.advantage < 0),
    ).toBe(true);
    const perRollout = new Map<string, number>(suite.result().batch.samples.map((s) => [s.rolloutId, s.advantage]));
    const byTask = new Map<string, number>();
    for (const s of suite.result().batch.samples) byTask.set(s.groupId, 0);
    for (const [rolloutId, advantage] of perRollout) {
      const groupId = suite.result().batch.samples.find((s) => s.rolloutId === rolloutId)!.groupId;
      byTask.set(groupId, byTask.get(groupId)! + advantage);
    }
    for (const sum of byTask.values()) expect(Math.abs(sum)).toBeLessThan(1e-6);
    expect(suite.result().meanReward).toBeCloseTo(0.5, 6);
  });

  it('the verl export holds the same writer-only rows', async () => {
    const rows = (await readFile(suite.result().verl.files.jsonl!, 'utf8')).trim().split('\n');
    expect(rows).toHaveLength(suite.result().batch.samples.length);
    const info = JSON.parse(await readFile(suite.result().verl.infoPath, 'utf8')) as {
      filter?: { agentMatch?: string };
    };
    expect(JSON.stringify(info)).toContain('"agentMatch":"writer"');
  });
});
