import { describe, expect, it } from 'vitest';
import type { ChatMessage, Trajectory, Transition } from '@agl/core/schema';
import { ADD_TOOL_CALL_WIRE, ADD_TOOL_RESULT_WIRE, addToolLoopWire } from './__fixtures__/add-tool-wire';
import { toDpoPairs } from './dpo-pairs';
import { toOpenAiMessage } from './openai-messages';
import { toSftRecords } from './sft-records';

const sys: ChatMessage = { role: 'system', content: 'You are a calculator.' };
const user: ChatMessage = { role: 'user', content: 'What is 2+3?' };
const toolCall: ChatMessage = {
  role: 'assistant',
  toolCalls: [{ id: 'call_1', name: 'add', arguments: '{"a":2,"b":3}' }],
};
const toolResult: ChatMessage = { role: 'tool', content: '5', toolCallId: 'call_1' };

function step(messages: ChatMessage[], answer: ChatMessage): Transition {
  return {
    agentName: 'calc',
    state: { messages },
    action: { message: answer },
    reward: null,
    done: false,
    spanIds: [],
  };
}
function traj(rolloutId: string, taskId: string, finalReward: number | null, transitions: Transition[]): Trajectory {
  return { rolloutId, attemptId: 'at-1', taskId, mode: 'train', transitions, finalReward };
}

// A two-turn tool loop answering 5 (reward 1), and one answering 6 after the same tool call (reward 0).
const good = traj('r-good', 'sum', 1, [
  step([sys, user], toolCall),
  step([sys, user, toolCall, toolResult], { role: 'assistant', content: '5' }),
]);
const bad = traj('r-bad', 'sum', 0, [
  step([sys, user], toolCall),
  step([sys, user, toolCall, toolResult], { role: 'assistant', content: '6' }),
]);
const middling = traj('r-mid', 'sum', 0.5, [step([sys, user], { role: 'assistant', content: 'about 5' })]);

describe('toOpenAiMessage', () => {
  it('writes snake_case tool calls and tool call ids, and null content for tool-call-only turns', () => {
    expect(toOpenAiMessage(toolCall)).toEqual(ADD_TOOL_CALL_WIRE);
    expect(toOpenAiMessage(toolResult)).toEqual(ADD_TOOL_RESULT_WIRE);
  });
});

describe('toSftRecords', () => {
  it('folds a multi-turn loop into one record holding every assistant turn', () => {
    const { records, stats } = toSftRecords({ trajectories: [good] });
    expect(records).toEqual([
      {
        messages: addToolLoopWire('You are a calculator.', 'What is 2+3?'),
      },
    ]);
    expect(stats).toEqual({ nTrajectories: 1, nFilteredOut: 0, nRecords: 1 });
  });

  it('keeps separate records when a later call does not continue the conversation', () => {
    const t = traj('r', 't', 1, [
      step([user], { role: 'assistant', content: 'x' }),
      step([sys], { role: 'assistant', content: 'y' }),
    ]);
    expect(toSftRecords({ trajectories: [t] }).records.map((r) => r.messages.length)).toEqual([2, 2]);
  });

  it('filters by minimum reward and keeps the best trajectory per task', () => {
    const all = [bad, middling, good];
    const byReward = toSftRecords({ trajectories: all, minReward: 0.5 });
    // bad (0) is dropped; middling (0.5) and good (1) kept
    expect(byReward.stats).toEqual({ nTrajectories: 3, nFilteredOut: 1, nRecords: 2 });
    const best = toSftRecords({ trajectories: all, bestPerTask: true });
    expect(best.records).toHaveLength(1);
    expect(best.records[0]!.messages.at(-1)).toEqual({ role: 'assistant', content: '5' });
  });

  it('attaches the tools offered to the call', () => {
    const tools = [{ type: 'function' as const, function: { name: 'add', parameters: { type: 'object' } } }];
    const { records } = toSftRecords({ trajectories: [good], toolsOf: () => tools });
    expect(records[0]!.tools).toEqual(tools);
  });
});

describe('toDpoPairs', () => {
  it('pairs the best and worst responses of a task at the first call where they differ', () => {
    const { records, stats } = toDpoPairs({ trajectories: [bad, middling, good] });
    // best = good (1), worst = bad (0); call 0 is identical (same tool call), call 1 differs: "5" vs "6"
    expect(records).toEqual([
      {
        input: { messages: [sys, user, toolCall, toolResult].map(toOpenAiMessage) },
        preferred_output: [{ role: 'assistant', content: '5' }],
        non_preferred_output: [{ role: 'assistant', content: '6' }],
      },
    ]);
    expect(stats).toEqual({
      nTasks: 1,
      nPairs: 1,
      nTooFewRewarded: 0,
      nNoRewardGap: 0,
      nNoSharedPrompt: 0,
      nIdentical: 0,
    });
  });

  it('skips tasks without a reward gap, with a single rewarded trajectory, or whose prompts differ', () => {
    const tie = [traj('a', 'tie', 1, good.transitions), traj('b', 'tie', 1, bad.transitions)];
    const lonely = [traj('c', 'lonely', 1, good.transitions), traj('d', 'lonely', null, bad.transitions)];
    const drift = [
      traj('e', 'drift', 1, [step([user], { role: 'assistant', content: '5' })]),
      traj('f', 'drift', 0, [step([sys, user], { role: 'assistant', content: '6' })]),
    ];
    const same = [traj('g', 'same', 1, good.transitions), traj('h', 'same', 0, good.transitions)];
    const { records, stats } = toDpoPairs({ trajectories: [...tie, ...lonely, ...drift, ...same] });
    expect(records).toEqual([]);
    expect(stats).toEqual({
      nTasks: 4,
      nPairs: 0,
      nTooFewRewarded: 1,
      nNoRewardGap: 1,
      nNoSharedPrompt: 1,
      nIdentical: 1,
    });
  });

  it('honours minRewardGap', () => {
    // good − middling = 0.5, not more than 0.5 → no pair
    expect(toDpoPairs({ trajectories: [middling, good], minRewardGap: 0.5 }).stats.nNoRewardGap).toBe(1);
    expect(toDpoPairs({ trajectories: [middling, good], minRewardGap: 0.4 }).stats.nPairs).toBe(1);
  });
});
