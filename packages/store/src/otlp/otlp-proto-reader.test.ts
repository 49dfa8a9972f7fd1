import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequestProtobuf } from './otlp-proto';
import { convertTraceRequestProtobuf } from './otlp-proto-reader';
import { convertTraceRequest, type ConversionResult } from './otlp-to-spans';

const require = createRequire(import.meta.url);
const root = require('otlp-transformer-0208/build/src/generated/root.js') as {
  opentelemetry: {
    proto: {
      collector: {
        trace: {
          v1: {
            ExportTraceServiceRequest: { fromObject(o: object): object; encode(m: object): { finish(): Uint8Array } };
          };
        };
      };
    };
  };
};
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const encode = (request: object): Buffer => Buffer.from(Request.encode(Request.fromObject(request)).finish());

/** What the generated decoder and the plain-object conversion give, or the error they throw. */
function viaGenerated(body: Buffer): ConversionResult | Error {
  try {
    return convertTraceRequest(decodeTraceRequestProtobuf(body));
  } catch (error) {
    return error as Error;
  }
}

/** Same values, same key order (JSON text), same numbers (NaN included). */
function expectSame(actual: ConversionResult, expected: ConversionResult): void {
  expect(actual).toEqual(expected);
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
}

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.constantFrom('', 'agentlightning.rollout_id', 'a.b', '__x'),
);
const bytes = (max: number) => fc.uint8Array({ minLength: 0, maxLength: max });
const int64 = fc.oneof(fc.integer(), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })).map(String);
const uint64 = fc.oneof(
  fc.constant('0'),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  fc.constant('1700000000123456789'),
);

const anyValue: fc.Arbitrary<object> = fc.letrec<{ value: object }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ stringValue: text }),
    fc.record({ boolValue: fc.boolean() }),
    fc.record({ intValue: int64 }),
    fc.record({ doubleValue: fc.oneof(fc.double(), fc.constantFrom(0, -0, 1.5)) }),
    fc.record({ bytesValue: bytes(6) }),
    fc.constant({}),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie('value'), { maxLength: 3 }) }) }),
    fc.record({
      kvlistValue: fc.record({
        values: fc.array(fc.record({ key: text, value: tie('value') }, { requiredKeys: ['key'] }), { maxLength: 3 }),
      }),
    }),
  ),
})).value;
const keyValues = (max: number) =>
  fc.array(fc.record({ key: text, value: anyValue }, { requiredKeys: [] }), { maxLength: max });
const owner = fc.constantFrom(
  [],
  [
    { key: 'agentlightning.rollout_id', value: { stringValue: 'ro-1' } },
    { key: 'agentlightning.attempt_id', value: { stringValue: 'at-1' } },
  ],
  [
    { key: 'agentlightning.rollout_id', value: { intValue: '7' } },
    { key: 'agentlightning.attempt_id', value: { stringValue: 'at-2' } },
    { key: 'agentlightning.span_sequence_id', value: { stringValue: '12' } },
  ],
);
const span = fc.record(
  {
    traceId: bytes(16),
    spanId: bytes(8),
    parentSpanId: bytes(8),
    name: text,
    kind: fc.integer({ min: 0, max: 5 }),
    startTimeUnixNano: uint64,
    endTimeUnixNano: uint64,
    attributes: fc.tuple(owner, keyValues(5)).map(([a, b]) => [...b, ...a]),
    events: fc.array(fc.record({ timeUnixNano: uint64, name: text, attributes: keyValues(2) }, { requiredKeys: [] }), {
      maxLength: 2,
    }),
    links: fc.array(
      fc.record({ traceId: bytes(16), spanId: bytes(8), attributes: keyValues(2) }, { requiredKeys: [] }),
      { maxLength: 2 },
    ),
    status: fc.record({ message: text, code: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const request = fc.record({
  resourceSpans: fc.array(
    fc.record(
      {
        resource: fc.record({ attributes: fc.tuple(owner, keyValues(3)).map(([a, b]) => [...a, ...b]) }),
        schemaUrl: text,
        scopeSpans: fc.array(
          fc.record(
            { scope: fc.record({ name: text }), spans: fc.array(span, { maxLength: 3 }) },
            { requiredKeys: [] },
          ),
          { maxLength: 2 },
        ),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 3 },
  ),
});

describe('convertTraceRequestProtobuf', () => {
  it('gives what the generated decoder and the plain conversion give, for any request', () => {
    fc.assert(
      fc.property(request, (req) => {
        const body = encode(req);
        const expected = viaGenerated(body);
        if (expected instanceof Error) throw expected;
        const actual = convertTraceRequestProtobuf(body);
        expect(actual).not.toBeNull();
        expectSame(actual!, expected);
      }),
      { numRuns: 1500 },
    );
  });

  it('on corrupted bytes: declines (null) or gives exactly what the generated decoder gives, never accepts what it refuses', () => {
    fc.assert(
      fc.property(
        request,
        fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 3 }),
        fc.option(fc.nat()),
        (req, flips, cut) => {
          const body = encode(req);
          if (body.length === 0) return;
          for (const { at, byte } of flips) body[at % body.length] = byte;
          const mangled = cut === null ? body : body.subarray(0, cut % body.length);
          const expected = viaGenerated(mangled);
          const actual = convertTraceRequestProtobuf(mangled);
          if (actual === null) return;
          if (expected instanceof Error)
            throw new Error(`accepted bytes the generated decoder refuses (${expected.message})`);
          expectSame(actual, expected);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('reads a typical request: ids in hex, times in seconds, owner from the resource, unowned spans listed', () => {
    const body = encode({
      resourceSpans: [
        {
          resource: {
            attributes: [
              { key: 'agentlightning.rollout_id', value: { stringValue: 'ro-1' } },
              { key: 'agentlightning.attempt_id', value: { stringValue: 'at-1' } },
            ],
          },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: Buffer.from('0102030405060708090a0b0c0d0e0f10', 'hex'),
                  spanId: Buffer.from('0000000000000abc', 'hex'),
                  name: 'llm',
                  startTimeUnixNano: '1700000000500000000',
                  endTimeUnixNano: '1700000001000000000',
                  attributes: [
                    { key: 'gen_ai.usage.output_tokens', value: { intValue: '12' } },
                    { key: 'big', value: { intValue: '9007199254740993' } },
                    { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } } },
                    { key: 'nested', value: { kvlistValue: { values: [{ key: 'x', value: { doubleValue: 0.5 } }] } } },
                    { key: '', value: { boolValue: true } },
                  ],
                  status: { code: 2, message: 'boom' },
                },
              ],
            },
          ],
        },
        { scopeSpans: [{ spans: [{ spanId: Buffer.from('ff', 'hex'), name: 'orphan' }] }] },
      ],
    });
    const result = convertTraceRequestProtobuf(body)!;
    expectSame(result, viaGenerated(body) as ConversionResult);
    expect(result.spans).toHaveLength(1);
    expect(result.spans[0]!.span).toMatchObject({
      rolloutId: 'ro-1',
      attemptId: 'at-1',
      traceId: '0102030405060708090a0b0c0d0e0f10',
      spanId: '0000000000000abc',
      parentId: null,
      startTime: 1700000000.5,
      endTime: 1700000001,
      status: { statusCode: 'ERROR', description: 'boom' },
      attributes: {
        'gen_ai.usage.output_tokens': 12,
        big: '9007199254740993',
        tags: ['a', 'b'],
        'nested.x': 0.5,
        '': true,
      },
    });
    expect(result.unowned).toEqual([
      {
        name: 'orphan',
        spanId: '00000000000000ff',
        reason: expect.stringContaining('has no agentlightning.rollout_id'),
      },
    ]);
  });

  it('declines what it does not read like the generated decoder: two members of one AnyValue, groups, very deep values', () => {
    // KeyValue{key:"k", value: AnyValue{string_value:"s", bool_value:true}} inside a span inside a ResourceSpans.
    const anyTwo = Buffer.from([0x0a, 0x01, 0x73, 0x10, 0x01]);
    const kv = Buffer.concat([Buffer.from([0x0a, 0x01, 0x6b, 0x12, anyTwo.length]), anyTwo]);
    const spanBytes = Buffer.concat([Buffer.from([0x4a, kv.length]), kv]);
    const scope = Buffer.concat([Buffer.from([0x12, spanBytes.length]), spanBytes]);
    const rs = Buffer.concat([Buffer.from([0x12, scope.length]), scope]);
    const body = Buffer.concat([Buffer.from([0x0a, rs.length]), rs]);
    expect(convertTraceRequestProtobuf(body)).toBeNull();
    expect(viaGenerated(body)).not.toBeInstanceOf(Error);
    // A resource whose length now runs into the next field: protobufjs reads those bytes as an `entity_refs` message
    // (Resource field 3) and refuses them; so must this reader.
    const runOn = Buffer.from(
      '0a380a360a090a07f0908080e0a0800a1b0a15f0908080f0908080e0a080f0908080e0a080e0a080120210000a0212001a082820282028202920',
      'hex',
    );
    expect(viaGenerated(runOn)).toBeInstanceOf(Error);
    expect(convertTraceRequestProtobuf(runOn)).toBeNull();
    // A group (wire type 3) at the top level.
    expect(convertTraceRequestProtobuf(Buffer.from([0x0b, 0x0c]))).toBeNull();
    // Arrays nested 40 deep.
    let value: object = { stringValue: 'x' };
    for (let i = 0; i < 40; i += 1) value = { arrayValue: { values: [value] } };
    const deep = encode({
      resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'd', attributes: [{ key: 'k', value }] }] }] }],
    });
    expect(convertTraceRequestProtobuf(deep)).toBeNull();
    expect(viaGenerated(deep)).not.toBeInstanceOf(Error);
  });

  it('reads an empty body as an empty request, and a plain Uint8Array like a Buffer', () => {
    expect(convertTraceRequestProtobuf(new Uint8Array())).toEqual({ spans: [], unowned: [] });
    const body = encode({ resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'x' }] }] }] });
    expect(convertTraceRequestProtobuf(new Uint8Array(body))).toEqual(convertTraceRequestProtobuf(body));
  });
});
