import { describe, expect, it } from 'vitest';
import { findFinalReward, listFeedback } from '@agl/core/transitions';
import type { TrafficAnnotationRow } from '../../engine/traffic-rows';
import { rewardInfos } from './traffic-aggregate';

const row = (sequence: number, attributes: Record<string, unknown>, asText = false): TrafficAnnotationRow => ({
  rollout_id: 'ro-1',
  start_time: 100,
  failed: 0,
  mode: '',
  source: ':production',
  agent: '',
  sequence_id: sequence,
  attributes: asText ? JSON.stringify(attributes) : attributes,
});
const agent = (v: unknown) => ({ 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': v });
const from = (source: string, v: unknown) => ({ ...agent(v), 'agl.reward.source': source });

describe('rewardInfos', () => {
  const cases: Array<[string, Array<Record<string, unknown>>]> = [
    ['agent only', [agent(0.2), agent(0.4)]],
    ['feedback wins over a later agent reward', [from('feedback', 1), agent(0)]],
    ['the latest of two feedbacks', [from('feedback', 1), from('feedback', 0.25)]],
    ['judge only where nobody else scored', [from('judge', 0.7)]],
    ['agent over judge', [from('judge', 0.7), agent(0.1)]],
    ['boolean and numeric-string rewards', [agent(true), from('feedback', '0.5')]],
    ['the legacy reward attribute', [{ reward: 0.9 }]],
    ['a span without any reward', [{ 'agl.note': 'x' }, agent(0.3)]],
  ];
  it.each(cases)('matches findFinalReward and listFeedback: %s', (_name, spans) => {
    for (const asText of [false, true]) {
      // Rows arrive in any order; the sequence id decides.
      const rows = spans.map((a, i) => row(i + 1, a, asText)).reverse();
      const like = spans.map((attributes, i) => ({ name: 'agentlightning.annotation', attributes, sequenceId: i + 1 }));
      const [info] = rewardInfos(rows);
      expect(info).toMatchObject({
        finalReward: findFinalReward(like),
        feedbackCount: listFeedback(like).length,
        source: 'production',
      });
    }
  });

  it('reads the reward SQLite precomputed when the attributes were left out', () => {
    const rows: TrafficAnnotationRow[] = [
      { ...row(1, {}), attributes: null, reward: 0.5, reward_source: 'feedback' },
      { ...row(2, {}), attributes: null, reward: 0, reward_source: null },
    ];
    expect(rewardInfos(rows)).toEqual([expect.objectContaining({ finalReward: 0.5, feedbackCount: 1 })]);
  });
});
