import { describe, expect, it } from 'vitest';
import { cloneData } from './clone-data';

describe('cloneData', () => {
  it('deep-copies JSON-like data exactly as structuredClone does, sharing nothing mutable', () => {
    const span = {
      rolloutId: 'ro-1',
      attributes: { 'gen_ai.prompt.0.content': 'hi', ids: [1, 2, 3], flag: true, none: null, n: -0.5 },
      events: [{ name: 'e', attributes: { k: ['a', 'b'] }, timestamp: null }],
      context: { traceId: 't', spanId: 's', isRemote: false, traceState: {} },
      extra: { nested: [{ deep: [[1], { x: undefined }] }] },
    };
    const copy = cloneData(span);
    expect(copy).toEqual(structuredClone(span));
    expect(copy).not.toBe(span);
    expect(copy.attributes.ids).not.toBe(span.attributes.ids);
    expect(copy.events[0]!.attributes.k).not.toBe(span.events[0]!.attributes.k);
    copy.attributes.ids.push(4);
    copy.extra.nested[0]!.deep.push([2]);
    expect(span.attributes.ids).toEqual([1, 2, 3]);
    expect(span.extra.nested[0]!.deep).toHaveLength(2);
  });

  it('keeps an own "__proto__" key as data, like structuredClone', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = cloneData(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('hands anything that is not plain data to structuredClone (deep cycles, dates, maps, holes, functions)', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    let node = cloneData(cyclic);
    for (let i = 0; i < 200; i += 1) {
      expect(node).not.toBe(cyclic);
      expect(node.a).toBe(1);
      node = node.self as Record<string, unknown>;
    }
    const when = new Date(5);
    expect(cloneData({ when }).when).toEqual(when);
    expect(cloneData({ m: new Map([[1, 2]]) }).m).toEqual(new Map([[1, 2]]));
    // eslint-disable-next-line no-sparse-arrays
    const holes = cloneData([1, , 3]);
    expect(1 in holes).toBe(false);
    expect(() => cloneData({ f: () => 1 })).toThrow(structuredCloneError());
  });
});

function structuredCloneError(): string {
  try {
    structuredClone({ f: () => 1 });
  } catch (err) {
    return (err as Error).message;
  }
  return 'no error';
}
