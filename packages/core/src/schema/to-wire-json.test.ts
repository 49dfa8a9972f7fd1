import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toWireJson } from './to-wire-json';
import { WIRE_SHAPES, fromWire, toWire, type WireShape } from './wire-codec';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '__fixtures__', 'v1');
const apiFixture = (name: string, shape: WireShape): unknown =>
  fromWire(shape, JSON.parse(readFileSync(join(fixtures, name), 'utf8')));
const slow = (shape: WireShape, value: unknown): string => JSON.stringify(toWire(shape, value));

/** Any JSON, keys included, with the characters that need escaping and some of the codec's own key names. */
const key = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom(
    'rolloutId',
    'attemptId',
    'traceId',
    'statusCode',
    'attributes',
    'context',
    'schemaUrl',
    'a"b',
    'c\\d',
    'é\u2028',
  ),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** A camelCase span with every typed part filled in randomly, and random extra keys. */
const span = fc.record({
  rolloutId: fc.string(),
  attemptId: fc.string(),
  sequenceId: fc.integer(),
  traceId: fc.string(),
  spanId: fc.string(),
  parentId: fc.option(fc.string()),
  name: fc.string(),
  status: fc.oneof(fc.record({ statusCode: fc.string(), description: fc.option(fc.string()) }), json),
  attributes: fc.dictionary(key, json, { maxKeys: 6 }),
  events: fc.oneof(
    fc.array(fc.oneof(fc.record({ name: fc.string(), attributes: json, timestamp: fc.double() }), json), {
      maxLength: 3,
    }),
    json,
  ),
  links: fc.array(
    fc.record({
      context: fc.oneof(
        fc.record({ traceId: fc.string(), spanId: fc.string(), isRemote: fc.boolean(), traceState: json }),
        json,
      ),
      attributes: json,
    }),
    { maxLength: 3 },
  ),
  startTime: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true })),
  endTime: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true })),
  context: fc.option(
    fc.record({ traceId: fc.string(), spanId: fc.string(), isRemote: fc.boolean(), traceState: json }),
  ),
  parent: fc.option(json),
  resource: fc.record({ attributes: json, schemaUrl: fc.string() }),
  extra: json,
});

describe('toWireJson', () => {
  it('writes what JSON.stringify(toWire(...)) writes for the frozen fixtures of every shape', () => {
    for (const [file, shape] of [
      ['rollout.json', 'rollout'],
      ['attempted-rollout.json', 'rollout'],
      ['worker.json', 'worker'],
      ['resources-update.json', 'resourcesUpdate'],
      ['span.json', 'span'],
    ] as const) {
      const api = apiFixture(file, shape);
      expect(toWireJson(shape, JSON.stringify(api)), file).toBe(slow(shape, api));
    }
  });

  it('matches the object codec on random spans, opaque JSON copied byte for byte', () => {
    fc.assert(
      fc.property(span, (value) => {
        const text = JSON.stringify(value);
        expect(toWireJson('span', text)).toBe(slow('span', JSON.parse(text)));
      }),
      { numRuns: 2000 },
    );
  });

  it('matches the object codec on arbitrary JSON for every shape, records and arrays of items included', () => {
    const shapes = Object.keys(WIRE_SHAPES) as WireShape[];
    fc.assert(
      fc.property(fc.constantFrom(...shapes), json, (shape, value) => {
        const text = JSON.stringify(value);
        expect(toWireJson(shape, text)).toBe(slow(shape, JSON.parse(text)));
      }),
      { numRuns: 2000 },
    );
  });

  it('takes the slow path for JSON that is not compact, with the same result', () => {
    const api = apiFixture('span.json', 'span');
    expect(toWireJson('span', JSON.stringify(api, null, 2))).toBe(slow('span', api));
    expect(toWireJson('span', ` ${JSON.stringify({ rolloutId: 'r', attributes: { x: [1, 2] } })} `)).toBe(
      '{"rollout_id":"r","attributes":{"x":[1,2]}}',
    );
    // An escaped key is decoded before it is looked up.
    expect(toWireJson('span', '{"rollout\\u0049d":"r"}')).toBe('{"rollout_id":"r"}');
  });

  it('throws what JSON.parse throws for text that is not JSON', () => {
    for (const bad of ['', '{', '{"rolloutId":}', '{"attributes":{"a":[1}]}', '{"a":1}x', '{"rolloutId":"r"']) {
      expect(() => toWireJson('span', bad), bad).toThrow(SyntaxError);
    }
  });

  it('renames only known keys: attribute keys that look like field names stay as they are', () => {
    const text = JSON.stringify({
      rolloutId: 'r',
      attributes: { rolloutId: 1, nested: { spanId: 2 } },
      status: { statusCode: 'OK' },
    });
    expect(toWireJson('span', text)).toBe(
      '{"rollout_id":"r","attributes":{"rolloutId":1,"nested":{"spanId":2}},"status":{"status_code":"OK"}}',
    );
  });
});
