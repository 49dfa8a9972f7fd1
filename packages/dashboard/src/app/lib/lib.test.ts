import { describe, expect, it } from 'vitest';
import { Span } from '@agl/core/schema';
import { formatAgo, formatDuration, formatReward } from './format';
import { lineDiff } from './line-diff';
import { matchPath } from './router';
import { buildWaterfall } from './waterfall';

const span = (
  id: string,
  parent: string | null,
  start: number,
  end: number,
  attributes: Record<string, string | number> = {},
  name = 'step',
) =>
  Span.parse({
    rolloutId: 'ro-1',
    attemptId: 'at-1',
    sequenceId: start,
    traceId: 't',
    spanId: id,
    parentId: parent,
    name,
    startTime: start,
    endTime: end,
    attributes,
  });

describe('buildWaterfall', () => {
  it('orders parents before children, places bars on the time axis and classifies spans', () => {
    const rows = buildWaterfall([
      span(
        'reward',
        null,
        110,
        110,
        { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': 0.5 },
        'agentlightning.annotation',
      ),
      span('tool', 'root', 105, 110, { 'tool.name': 'search' }),
      span(
        'llm',
        'root',
        101,
        104,
        { 'gen_ai.prompt.0.role': 'user', 'gen_ai.prompt.0.content': 'hi', 'gen_ai.usage.input_tokens': 7 },
        'openai.chat.completion',
      ),
      span('root', null, 100, 110, { 'agent.name': 'a' }),
    ]);
    expect(rows.map((r) => [r.span.spanId, r.depth, r.kind])).toEqual([
      ['root', 0, 'agent'],
      ['llm', 1, 'llm'],
      ['tool', 1, 'tool'],
      ['reward', 0, 'reward'],
    ]);
    expect(rows[1]!.offset).toBeCloseTo(0.1);
    expect(rows[1]!.width).toBeCloseTo(0.3);
    expect(rows[1]!.inputTokens).toBe(7);
    expect(rows[3]!.reward).toBe(0.5);
  });

  it('keeps orphans and cycles instead of dropping them', () => {
    const rows = buildWaterfall([span('a', 'b', 1, 2), span('b', 'a', 1, 2), span('orphan', 'missing', 0, 1)]);
    expect(rows.map((r) => r.span.spanId).sort()).toEqual(['a', 'b', 'orphan']);
  });
});

describe('lineDiff', () => {
  it('marks added and removed lines and keeps common ones', () => {
    expect(lineDiff('a\nb\nc', 'a\nx\nc\nd')).toEqual([
      { kind: 'same', text: 'a' },
      { kind: 'del', text: 'b' },
      { kind: 'add', text: 'x' },
      { kind: 'same', text: 'c' },
      { kind: 'add', text: 'd' },
    ]);
  });
});

describe('format and routes', () => {
  it('formats durations, rewards and ages', () => {
    expect(formatDuration(0.0425)).toBe('43 ms');
    expect(formatDuration(65)).toBe('1m 05s');
    expect(formatDuration(null)).toBe('—');
    expect(formatReward(0.33333)).toBe('0.333');
    expect(formatAgo(100, 112.5)).toBe('12.5 s ago');
  });

  it('matches path patterns with optional params', () => {
    expect(matchPath('/rollouts/:id', '/rollouts/ro-1%2F2')).toEqual({ id: 'ro-1/2' });
    expect(matchPath('/rollouts/:id', '/rollouts')).toBeNull();
    expect(matchPath('/traces/:r/:a?', '/traces/ro-1')).toEqual({ r: 'ro-1' });
    expect(matchPath('/rewards', '/rewards/x')).toBeNull();
  });
});
