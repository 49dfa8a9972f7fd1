import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Attributes } from '@agl/core/schema';
import { extractSpanAttributes } from './span-batch-attributes';

/** Puts the extracted maps back into the parsed reduced body. */
function reassemble(text: string): unknown {
  const extracted = extractSpanAttributes(text);
  if (extracted === null) return null;
  const body = JSON.parse(extracted.reduced) as { spans: Array<Record<string, unknown>> };
  expect(body.spans).toHaveLength(extracted.attributesJson.length);
  extracted.attributesJson.forEach((json, i) => {
    if (json !== null) body.spans[i]!.attributes = JSON.parse(json) as unknown;
  });
  return body;
}

const primitive = fc.oneof(
  fc.string(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
);
const attributeValue = fc.oneof(primitive, fc.array(primitive, { maxLength: 4 }), fc.constant(null));
const attributes = fc.dictionary(
  fc.string().filter((k) => k !== '__proto__'),
  attributeValue,
  { maxKeys: 8 },
);
const anyJson = fc.jsonValue({ maxDepth: 3 });
const span = fc.record(
  {
    rollout_id: fc.string(),
    name: fc.string(),
    attributes,
    events: fc.array(fc.record({ name: fc.string(), attributes: anyJson })),
    resource: fc.record({ attributes: anyJson }),
    status: anyJson,
  },
  { requiredKeys: ['attributes'] },
);
const batch = fc.record(
  { spans: fc.array(fc.oneof(span, anyJson), { maxLength: 5 }), echo: fc.boolean(), other: anyJson },
  { requiredKeys: ['spans'] },
);

describe('extractSpanAttributes', () => {
  it('takes out every span attribute map of a JSON.stringify body, and the rest parses to the same body', () => {
    fc.assert(
      fc.property(batch, (value) => {
        const text = JSON.stringify(value);
        const extracted = extractSpanAttributes(text)!;
        expect(extracted).not.toBeNull();
        const spans = value.spans as unknown[];
        extracted.attributesJson.forEach((json, i) => {
          const s = spans[i] as { attributes?: unknown } | null;
          const isSpanWithMap =
            typeof s === 'object' &&
            s !== null &&
            !Array.isArray(s) &&
            typeof s.attributes === 'object' &&
            s.attributes !== null &&
            !Array.isArray(s.attributes);
          expect(json !== null, JSON.stringify(s)).toBe(isSpanWithMap);
        });
        expect(reassemble(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 1500 },
    );
  });

  it('takes out only maps the span schema accepts, as text JSON.parse reads, whatever the body is mutated into', () => {
    const mutate = fc.tuple(
      batch,
      fc.nat(),
      fc.constantFrom(
        '',
        '{',
        '}',
        '[',
        ']',
        '"',
        '\\',
        ',',
        ':',
        '1e999',
        '01',
        '-',
        'nul',
        '\u0001',
        '\\x',
        '{"a":1}',
        '[null]',
        '__proto__',
        ' ',
      ),
    );
    fc.assert(
      fc.property(mutate, ([value, at, insert]) => {
        const clean = JSON.stringify(value);
        const pos = at % (clean.length + 1);
        const text = clean.slice(0, pos) + insert + clean.slice(pos + (at % 2));
        const extracted = extractSpanAttributes(text);
        if (extracted === null) return;
        // Whatever was taken out is valid attribute JSON, and the reduced body parses exactly when the original does.
        for (const json of extracted.attributesJson)
          if (json !== null) expect(Attributes.safeParse(JSON.parse(json)).success, json).toBe(true);
        let original: unknown;
        try {
          original = JSON.parse(text);
        } catch {
          expect(() => JSON.parse(extracted.reduced)).toThrow();
          return;
        }
        expect(reassemble(text)).toEqual(original);
      }),
      { numRuns: 3000 },
    );
  });

  it('leaves alone what it must not take: values outside the schema, non-JSON text, duplicate keys, spaced maps', () => {
    const one = (attrs: string): string => `{"spans":[{"name":"n","attributes":${attrs}}],"echo":false}`;
    for (const attrs of [
      '{"a":{"b":1}}',
      '{"a":[null]}',
      '{"a":[[1]]}',
      '{"a":1e999}',
      '{"a":-1e400}',
      '{"a":01}',
      '{"a":+1}',
      '{"a":.5}',
      '{"a":NaN}',
      '{"a":"x\\qy"}',
      '{"a":"x\u0001y"}',
      '{"__proto__":1}',
      '{"a": 1}',
      '{"a":tru}',
      '{"a":1,}',
    ]) {
      const extracted = extractSpanAttributes(one(attrs));
      expect(extracted === null || extracted.attributesJson[0] === null, attrs).toBe(true);
    }
    expect(extractSpanAttributes('{"spans":[],"spans":[{"attributes":{"a":1}}]}')).toBeNull();
    expect(extractSpanAttributes('{"spans":[{"attributes":{"a":1},"attributes":{"b":2}}]}')).toBeNull();
    expect(extractSpanAttributes('[1]')).toBeNull();
    // Escapes, unicode and every kind of value are taken as they are.
    const text = one('{"k\\"ey":"\\u00e9\\n😀","n":-1.5e-3,"b":false,"z":null,"l":["x",2,true],"e":[]}');
    expect(extractSpanAttributes(text)!.attributesJson[0]).toBe(
      '{"k\\"ey":"\\u00e9\\n😀","n":-1.5e-3,"b":false,"z":null,"l":["x",2,true],"e":[]}',
    );
    expect(extractSpanAttributes(text)!.reduced).toBe('{"spans":[{"name":"n","attributes":{}}],"echo":false}');
  });
});
