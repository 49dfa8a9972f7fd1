import { describe, expect, it } from 'vitest';
import { findFinalReward, findFinalRewardSpan, getRewardSource, listFeedback } from './reward-readers';

const reward = (value: number, source?: 'feedback' | 'judge', extra: Record<string, unknown> = {}) => ({
  name: 'agentlightning.annotation',
  attributes: {
    'agentlightning.reward.0.name': 'primary',
    'agentlightning.reward.0.value': value,
    ...(source ? { 'agl.reward.source': source } : {}),
    ...extra,
  },
});

describe('final reward precedence: latest feedback, else latest agent reward, else latest judge', () => {
  it('feedback wins over a later agent reward and a later judge score', () => {
    const spans = [reward(0.1), reward(0.9, 'feedback'), reward(0.3), reward(0.5, 'judge')];
    expect(findFinalReward(spans)).toBe(0.9);
    expect(findFinalRewardSpan(spans)).toBe(spans[1]);
  });

  it('the agent reward wins over a judge score; a judge score alone counts', () => {
    expect(findFinalReward([reward(0.4), reward(0.8, 'judge')])).toBe(0.4);
    expect(findFinalReward([reward(0.8, 'judge'), reward(0.6, 'judge')])).toBe(0.6);
    expect(findFinalReward([])).toBeNull();
  });

  it('reads the source and lists every feedback with its comment and dimensions, oldest first', () => {
    const first = reward(1, 'feedback', {
      'agl.feedback.comment': 'nice',
      'agentlightning.reward.1.name': 'tone',
      'agentlightning.reward.1.value': 0.5,
    });
    const spans = [first, reward(0.2), { ...reward(0, 'feedback'), sequenceId: 9, startTime: 100 }];
    expect(spans.map(getRewardSource)).toEqual(['feedback', 'agent', 'feedback']);
    expect(listFeedback(spans)).toEqual([
      { reward: 1, comment: 'nice', dimensions: { tone: 0.5 }, sequenceId: null, time: null, spanId: null },
      { reward: 0, dimensions: {}, sequenceId: 9, time: 100, spanId: null },
    ]);
    expect(getRewardSource(reward(1, 'unknown' as 'judge'))).toBe('agent');
    // Only annotation spans (what `feedback` and judges write) carry a source; any other reward is the agent's.
    expect(getRewardSource({ ...reward(1, 'feedback'), name: 'agentlightning.object' })).toBe('agent');
  });

  it("reads no other span's attributes once it has the latest agent reward, and still finds earlier feedback", () => {
    const read = new Set<number>();
    const unread = (i: number) => ({
      name: 'tool.call',
      get attributes() {
        read.add(i);
        return { task: String(i) };
      },
    });
    const spans = [unread(0), reward(0.7, 'feedback'), unread(1), unread(2), reward(0.2), unread(3)];
    expect(findFinalReward(spans)).toBe(0.7);
    expect([...read]).toEqual([3]); // the last span, read before the agent reward was found
    expect(findFinalRewardSpan([unread(0), reward(0.3, 'judge'), reward(0.5), unread(1)])).toMatchObject({
      attributes: { 'agentlightning.reward.0.value': 0.5 },
    });
  });
});
