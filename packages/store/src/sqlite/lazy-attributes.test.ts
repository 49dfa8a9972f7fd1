import { describe, expect, it, vi } from 'vitest';
import { withLazyAttributes } from './lazy-attributes';

const text = '{"gen_ai.prompt.0.content":"hi","n":3,"list":[1,2]}';
const plain = {
  name: 'llm',
  sequenceId: 1,
  attributes: { 'gen_ai.prompt.0.content': 'hi', n: 3, list: [1, 2] },
  events: [],
};
const lazy = () => withLazyAttributes({ name: 'llm', sequenceId: 1, events: [] }, text);

describe('withLazyAttributes', () => {
  it('parses nothing until the attributes are read, then once', () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const span = lazy();
      expect(parse).not.toHaveBeenCalled();
      expect(span.attributes.n).toBe(3);
      expect(span.attributes.list).toEqual([1, 2]);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('looks like a plain span to JSON, spreading, structuredClone, keys and equality', () => {
    const span = lazy();
    expect(span).toEqual(plain);
    expect(JSON.parse(JSON.stringify(lazy()))).toEqual(plain);
    expect({ ...lazy() }).toEqual(plain);
    expect(structuredClone(lazy())).toEqual(plain);
    expect(Object.keys(lazy()).sort()).toEqual(Object.keys(plain).sort());
  });

  it('keeps edits to the parsed map and takes a new map on assignment', () => {
    const span = lazy();
    span.attributes.extra = 'x';
    expect(span.attributes.extra).toBe('x');
    expect(JSON.parse(JSON.stringify(span)).attributes.extra).toBe('x');
    span.attributes = { only: true };
    expect(span.attributes).toEqual({ only: true });
    expect(JSON.stringify(span)).toContain('"attributes":{"only":true}');
  });

  it('gives every span its own map', () => {
    const a = lazy();
    const b = lazy();
    a.attributes.n = 4;
    expect(b.attributes.n).toBe(3);
  });
});
