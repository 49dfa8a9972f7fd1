import { describe, expect, it } from 'vitest';
import { newAttemptId, newResourcesId, newRolloutId, newSpanId, newTraceId } from './ids';
import { formatPromptTemplate, proxyLlmBaseUrl, Resource } from './resources';
import { normalizeTimestamp } from './span';

describe('ids', () => {
  it('use AGL 0.3 prefixes and lengths', () => {
    expect(newRolloutId()).toMatch(/^ro-[0-9a-f]{12}$/);
    expect(newAttemptId()).toMatch(/^at-[0-9a-f]{8}$/);
    expect(newResourcesId()).toMatch(/^rs-[0-9a-f]{12}$/);
    expect(newTraceId()).toMatch(/^[0-9a-f]{32}$/);
    expect(newSpanId()).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(Array.from({ length: 1000 }, newRolloutId)).size).toBe(1000);
  });

  it('stay distinct and well formed across refills of the random pool (4 KiB serves about 250 trace ids)', () => {
    const traceIds = Array.from({ length: 2000 }, newTraceId);
    expect(new Set(traceIds).size).toBe(2000);
    for (const id of traceIds) expect(id).toMatch(/^[0-9a-f]{32}$/);
    // every hex digit turns up in every position: the bytes are random, not a counter or a repeated block
    for (let position = 0; position < 32; position += 1)
      expect(new Set(traceIds.map((id) => id[position])).size).toBe(16);
  });
});

describe('proxyLlmBaseUrl', () => {
  it('inserts the rollout and attempt before a trailing /v1', () => {
    expect(proxyLlmBaseUrl('http://h:1/v1', 'R', 'A')).toBe('http://h:1/rollout/R/attempt/A/v1');
    expect(proxyLlmBaseUrl('http://h:1/v1/', 'R', 'A')).toBe('http://h:1/rollout/R/attempt/A/v1');
    expect(proxyLlmBaseUrl('http://h:1', 'R', 'A')).toBe('http://h:1/rollout/R/attempt/A');
  });
});

describe('formatPromptTemplate', () => {
  it('follows f-string rules', () => {
    expect(formatPromptTemplate('Hi {name}, {{literal}} {missing}', { name: 'Ada' })).toBe(
      'Hi Ada, {literal} {missing}',
    );
  });
});

describe('Resource', () => {
  it('fills defaults and rejects unknown resource types', () => {
    expect(Resource.parse({ resourceType: 'llm', endpoint: 'http://x/v1', model: 'm' })).toEqual({
      resourceType: 'llm',
      endpoint: 'http://x/v1',
      model: 'm',
      apiKey: null,
      samplingParameters: {},
    });
    expect(Resource.safeParse({ resourceType: 'tool', endpoint: 'x' }).success).toBe(false);
  });
});

describe('normalizeTimestamp', () => {
  it('maps falsy to null and nanoseconds to seconds', () => {
    expect(normalizeTimestamp(0)).toBeNull();
    expect(normalizeTimestamp(null)).toBeNull();
    expect(normalizeTimestamp(1_733_150_000_500_000_000)).toBeCloseTo(1_733_150_000.5, 3);
    expect(normalizeTimestamp(1_733_150_000.5)).toBe(1_733_150_000.5);
  });
});
