import { Span } from './span';
import { describe, expect, it } from 'vitest';
import { fastParseSpan } from './fast-span';

const full = {
  rolloutId: 'ro-1',
  attemptId: 'at-1',
  sequenceId: 3,
  traceId: 'a'.repeat(32),
  spanId: 'b'.repeat(16),
  parentId: null,
  name: 'openai.chat.completion',
  status: { statusCode: 'OK', description: null, extra: 1 },
  attributes: { 'gen_ai.prompt.0.content': 'hi', n: 2, ok: true, list: ['a', 'b'], nums: [1, 2], none: null },
  events: [{ name: 'e', attributes: { a: 1 }, timestamp: 5, more: 'x' }, { name: 'bare' }],
  links: [
    { context: { traceId: 't', spanId: 's' }, attributes: null },
    { context: { traceId: 't', spanId: 's', isRemote: true, traceState: { k: 'v' } } },
  ],
  startTime: 1.5,
  endTime: 2.5,
  context: { traceId: 't', spanId: 's', isRemote: false, traceState: {} },
  parent: null,
  resource: { attributes: { 'service.name': 'x' }, schemaUrl: 'u', other: [1] },
  kind: 'SpanKind.INTERNAL',
};
const minimal = {
  rolloutId: 'ro-1',
  attemptId: 'at-1',
  sequenceId: 0,
  traceId: '',
  spanId: 's',
  parentId: 'p',
  name: '',
  startTime: null,
  endTime: null,
};

const valid: unknown[] = [
  full,
  minimal,
  { ...minimal, status: {}, resource: {}, events: [], links: [] },
  { ...minimal, context: { traceId: 'x', spanId: 'y', custom: { deep: true } } },
  { ...minimal, status: { statusCode: 'ERROR', description: 'boom' } },
];
const invalid: unknown[] = [
  null,
  [],
  'span',
  { ...minimal, rolloutId: '' },
  { ...minimal, spanId: 5 },
  { ...minimal, sequenceId: 1.5 },
  { ...minimal, sequenceId: -1 },
  { ...minimal, sequenceId: '1' },
  { ...minimal, parentId: undefined },
  { ...minimal, startTime: undefined },
  { ...minimal, endTime: Number.POSITIVE_INFINITY },
  { ...minimal, attributes: { a: { nested: 1 } } },
  { ...minimal, attributes: { a: [1, [2]] } },
  { ...minimal, attributes: null },
  { ...minimal, status: { statusCode: 'WEIRD' } },
  { ...minimal, status: { description: 5 } },
  { ...minimal, events: [{ attributes: {} }] },
  { ...minimal, events: [{ name: 'x', timestamp: 'now' }] },
  { ...minimal, links: [{ attributes: {} }] },
  { ...minimal, links: [{ context: { traceId: 't', spanId: 's' }, attributes: { a: {} } }] },
  { ...minimal, context: { traceId: 't' } },
  { ...minimal, context: { traceId: 't', spanId: 's', isRemote: 'no' } },
  { ...minimal, context: { traceId: 't', spanId: 's', traceState: { k: 1 } } },
  { ...minimal, resource: { schemaUrl: 3 } },
  { ...minimal, resource: null },
];

describe('fastParseSpan', () => {
  it('accepts common spans and returns exactly what the zod schema returns', () => {
    for (const input of valid) {
      const fast = fastParseSpan(input);
      expect(fast, JSON.stringify(input)).not.toBeNull();
      expect(fast).toEqual(Span.parse(input));
    }
  });

  it('returns null for everything the zod schema rejects', () => {
    for (const input of invalid) {
      expect(Span.safeParse(input).success, JSON.stringify(input)).toBe(false);
      expect(fastParseSpan(input), JSON.stringify(input)).toBeNull();
    }
  });

  it('copies large attribute records key for key and in order, and leaves a `__proto__` key to zod', () => {
    const attributes: Record<string, unknown> = { 10: 1, 2: 'two' };
    for (let i = 0; i < 300; i += 1) attributes[`key.${i}.${'z'.repeat(i % 7)}`] = i % 3 === 0 ? [`v${i}`] : `v${i}`;
    const input = { ...minimal, attributes };
    const out = fastParseSpan(input)!;
    expect(JSON.stringify(out.attributes)).toBe(JSON.stringify(Span.parse(input).attributes));
    expect(Object.getPrototypeOf(out.attributes)).toBe(Object.prototype);
    const withProto = { ...minimal, attributes: JSON.parse('{"__proto__": ["x"], "a": 1}') as unknown };
    expect(fastParseSpan(withProto)).toBeNull();
    expect(Span.parse(withProto).attributes).toEqual({ a: 1 });
  });

  it('keeps the input attribute map itself with shareAttributes, and copies the rest as always', () => {
    const input = structuredClone(full);
    const out = fastParseSpan(input, { shareAttributes: true })!;
    expect(out.attributes).toBe(input.attributes);
    expect(out).toEqual(fastParseSpan(structuredClone(full)));
    expect(out.events[0]).not.toBe(input.events[0]);
    expect(fastParseSpan({ ...input, attributes: { bad: { nested: 1 } } }, { shareAttributes: true })).toBeNull();
  });

  it('never shares nested objects with its input', () => {
    const input = structuredClone(full);
    const out = fastParseSpan(input)!;
    (out.attributes as Record<string, unknown>).added = 1;
    out.events[0]!.name = 'changed';
    expect(input.attributes).not.toHaveProperty('added');
    expect(input.events[0]!.name).toBe('e');
  });
});
