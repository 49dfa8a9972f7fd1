import { describe, expect, it } from 'vitest';
import { filterAndUnflatten, flattenAttributes, sanitizeAttributeValue, unflattenAttributes } from './otel-attributes';
import { findFinalReward, getObjectValue, getRewardValue, getRewardsFromSpan, isRewardScope } from './reward-readers';
import { canonicalJson, sha256Hex, stableTaskHash, taskIdOf } from './task-id';

describe('attribute encoding (reference §4.7)', () => {
  it('flattens objects and mixed lists, keeps homogeneous primitive lists', () => {
    expect(flattenAttributes({ a: { b: 1, c: [1, 2] }, d: [{ e: 'x' }, 'y'] })).toEqual({
      'a.b': 1,
      'a.c': [1, 2],
      'd.0.e': 'x',
      'd.1': 'y',
    });
    expect(flattenAttributes({ c: [1, 2] }, { expandLeafLists: true })).toEqual({ 'c.0': 1, 'c.1': 2 });
    expect(flattenAttributes(5, { prefix: 'p' })).toEqual({ p: 5 });
  });

  it('unflattens numeric-key nodes into lists', () => {
    expect(unflattenAttributes({ '0.role': 'user', '1.role': 'assistant', '1.x.0': 'a' })).toEqual([
      { role: 'user' },
      { role: 'assistant', x: ['a'] },
    ]);
    expect(unflattenAttributes({ '0': 'a', '2': 'b' })).toEqual({ '0': 'a', '2': 'b' });
    expect(filterAndUnflatten({ 'p.0.a': 1, 'px.b': 2, q: 3 }, 'p')).toEqual([{ a: 1 }]);
    expect(filterAndUnflatten({ q: 3 }, 'p')).toBeUndefined();
  });

  it('sanitises values', () => {
    expect(sanitizeAttributeValue([1, true])).toEqual([1, 1]);
    expect(sanitizeAttributeValue([1, 'a'])).toBe('[1,"a"]');
    expect(sanitizeAttributeValue(null)).toBe('null');
    expect(sanitizeAttributeValue({ a: 1 })).toBe('{"a":1}');
  });
});

describe('reward readers (reference §4.5)', () => {
  const span = (attributes: Record<string, unknown>, name = 'agentlightning.annotation') => ({ name, attributes });

  it('reads multi-dimensional rewards, index 0 primary', () => {
    const s = span({
      'agentlightning.reward.0.name': 'acc',
      'agentlightning.reward.0.value': 0.5,
      'agentlightning.reward.1.name': 'len',
      'agentlightning.reward.1.value': 2,
    });
    expect(getRewardsFromSpan(s)).toEqual([
      { name: 'acc', value: 0.5 },
      { name: 'len', value: 2 },
    ]);
    expect(getRewardValue(s)).toBe(0.5);
  });

  it('reads the legacy AgentOps and v0.2 forms', () => {
    expect(getRewardValue(span({ 'agentops.task.output': '{"type":"reward","value":0.4}' }, 'x'))).toBe(0.4);
    expect(getRewardValue(span({ reward: 0.9 }))).toBe(0.9);
    expect(getRewardValue(span({ reward: 0.9 }, 'other'))).toBeNull();
  });

  it('finds the final reward and reward scopes', () => {
    expect(findFinalReward([span({ reward: 1 }), span({}), span({ reward: 2 }), span({})])).toBe(2);
    expect(
      isRewardScope(span({ 'agentlightning.operation.name': 'agentlightning.reward' }, 'agentlightning.operation')),
    ).toBe(true);
    expect(isRewardScope(span({ 'agentlightning.operation.name': 'solve' }, 'agentlightning.operation'))).toBe(false);
  });

  it('inverts emitObject', () => {
    expect(
      getObjectValue(
        span({ 'agentlightning.object.type': 'int', 'agentlightning.object.literal': '3' }, 'agentlightning.object'),
      ),
    ).toBe(3);
    expect(
      getObjectValue(
        span(
          { 'agentlightning.object.type': 'dict', 'agentlightning.object.json': '{"a":1}' },
          'agentlightning.object',
        ),
      ),
    ).toEqual({ a: 1 });
  });
});

describe('task ids (Contract 3)', () => {
  it('hashes with SHA-256 over the canonical JSON of the input', () => {
    // SHA-256('{"a":1}') = 015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862
    expect(stableTaskHash({ a: 1 })).toBe('task-015abd7f5cc57a2d');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('uses metadata.task_id, else a key-order-independent hash of the input', () => {
    expect(taskIdOf({ input: 1, metadata: { task_id: 'abc' } })).toBe('abc');
    expect(taskIdOf({ input: { b: 1, a: [2] }, metadata: {} })).toBe(
      taskIdOf({ input: { a: [2], b: 1 }, metadata: null }),
    );
    expect(stableTaskHash({ a: 1 })).not.toBe(stableTaskHash({ a: 2 }));
    expect(canonicalJson({ b: 1, a: { d: 1, c: 2 } })).toBe('{"a":{"c":2,"d":1},"b":1}');
  });

  it("falls back to the input's own task_id / taskId / id before hashing", () => {
    expect(taskIdOf({ input: { id: 'q1', question: 'x' } })).toBe('q1');
    expect(taskIdOf({ input: { taskId: 7 } })).toBe('7');
    expect(taskIdOf({ input: { task_id: 'a', id: 'b' } })).toBe('a');
    expect(taskIdOf({ input: { id: 'q1' }, metadata: { task_id: 'm' } })).toBe('m');
    expect(taskIdOf({ input: { id: '' } })).toBe(stableTaskHash({ id: '' }));
  });
});
