import { emptyRecord, type AttributeValue, type Attributes } from '@agl/core/schema';
import {
  collectSpan,
  int64,
  nanosToSeconds,
  putAttribute,
  type ConversionResult,
  type DecodedOtlpSpan,
} from './otlp-to-spans';
import { NO_INGEST_LIMITS, checkSpanCount, tooManyValues, type IngestLimits } from '../ingest-limits';

/** Thrown inside the reader when the bytes are not what it expects; the caller then takes the generated decoder. */
class Unexpected extends Error {}

const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;
/** Deepest AnyValue nesting (arrays and kvlists) read here; deeper values go to the generated decoder. */
const MAX_DEPTH = 32;

/**
 * A reader of the protobuf wire format over one OTLP body, specialised to the messages `ExportTraceServiceRequest`
 * contains. Every read is bounded by `end` of the enclosing message.
 */
class WireReader {
  readonly buf: Buffer;
  pos = 0;
  readonly limits: IngestLimits;
  /** Messages and values read so far, and spans among them: counted as read, so a bomb stops at its first excess. */
  values = 0;
  spans = 0;

  constructor(buf: Buffer, limits: IngestLimits) {
    this.buf = buf;
    this.limits = limits;
  }

  /** Counts one more message or value read (a 413 past `maxJsonValues`). */
  tick(): void {
    if (++this.values > this.limits.maxJsonValues) throw tooManyValues(this.limits.maxJsonValues);
  }

  /** Counts one more span read (a 413 past `maxSpansPerRequest`). */
  tickSpan(): void {
    this.tick();
    checkSpanCount(++this.spans, this.limits);
  }

  /**
   * A 32-bit varint (tags, lengths, enums, counts, bools) read the way protobufjs reads one: the low 32 bits of the
   * first five bytes, and when the fifth still continues, the next five bytes are passed over whatever they hold.
   */
  uint32(end: number): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= end) throw new Unexpected();
      const b = this.buf[this.pos++]!;
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value % 2 ** 32;
    }
    this.pos += 5;
    if (this.pos > end) throw new Unexpected();
    return value % 2 ** 32;
  }

  /** Passes over a varint of any length (an unknown field's). */
  skipVarint(end: number): void {
    while (this.pos < end) if (this.buf[this.pos++]! < 0x80) return;
    throw new Unexpected();
  }

  /** A varint as a signed 64-bit integer. */
  int64(end: number): bigint {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= end) throw new Unexpected();
      const b = this.buf[this.pos++]!;
      value |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asIntN(64, value);
    }
    throw new Unexpected();
  }

  fixed64(end: number): bigint {
    if (this.pos + 8 > end) throw new Unexpected();
    const value = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return value;
  }

  double(end: number): number {
    if (this.pos + 8 > end) throw new Unexpected();
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  /** The end of the length-delimited field that starts here (the position moves past its length). */
  delimited(end: number): number {
    const length = this.uint32(end);
    const stop = this.pos + length;
    if (stop > end) throw new Unexpected();
    return stop;
  }

  string(end: number): string {
    const stop = this.delimited(end);
    const text = this.buf.toString('utf8', this.pos, stop);
    this.pos = stop;
    return text;
  }

  hex(end: number): string {
    const stop = this.delimited(end);
    const text = this.buf.toString('hex', this.pos, stop);
    this.pos = stop;
    return text;
  }

  skip(wire: number, end: number): void {
    if (wire === VARINT) this.skipVarint(end);
    else if (wire === FIXED64) this.pos += 8;
    else if (wire === BYTES) this.pos = this.delimited(end);
    else if (wire === FIXED32) this.pos += 4;
    else throw new Unexpected(); // groups (3, 4) and invalid wire types
    if (this.pos > end) throw new Unexpected();
  }
}

/** Reads the fields of the message ending at `end`, calling `field` for each; `field` returns false to skip one. */
function fields(r: WireReader, end: number, field: (no: number, wire: number) => boolean): void {
  while (r.pos < end) {
    const tag = r.uint32(end);
    const no = tag >>> 3;
    const wire = tag & 7;
    if (no === 0) throw new Unexpected();
    if (!field(no, wire)) r.skip(wire, end);
  }
}

/** Reads every message of the repeated field 1 (the only field) of the message ending at `end`. */
function messages(r: WireReader, end: number, read: (stop: number) => void): void {
  fields(r, end, (no, wire) => {
    if (no !== 1) return false;
    expect(wire, BYTES);
    r.tick();
    read(r.delimited(end));
    return true;
  });
}

/** Checks a known field's wire type (a mismatch is left to the generated decoder). */
function expect(wire: number, wanted: number): void {
  if (wire !== wanted) throw new Unexpected();
}

/**
 * Skips a field this conversion does not use but the generated decoder reads (`kind`, `trace_state`, dropped counts,
 * flags, schema URLs): checked for its wire type like the others. Unknown fields are skipped as they are.
 */
function unused(
  r: WireReader,
  no: number,
  wire: number,
  end: number,
  types: Readonly<Record<number, number>>,
): boolean {
  const wanted = types[no];
  if (wanted === undefined) return false;
  expect(wire, wanted);
  // The varints among them are all 32-bit (enums, counts), read as such.
  if (wire === VARINT) r.uint32(end);
  else r.skip(wire, end);
  return true;
}

/** An `InstrumentationScope` (unused, but read through so that malformed bytes are declined as the generated decoder declines them). */
function scope(r: WireReader, end: number): void {
  fields(r, end, (no, wire) => {
    if (no !== 3) return unused(r, no, wire, end, { 1: BYTES, 2: BYTES, 4: VARINT });
    expect(wire, BYTES);
    keyValue(r, r.delimited(end), 0);
    return true;
  });
}

/** An `AnyValue` as the JS value the plain-object path gives (bytes as hex, int64 as number or decimal string). */
function anyValue(r: WireReader, end: number, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new Unexpected();
  let value: unknown = null;
  let member = 0;
  fields(r, end, (no, wire) => {
    if (no < 1 || no > 7) return false;
    if (member !== 0 && member !== no) throw new Unexpected(); // two members of the oneof: left to the generated decoder
    member = no;
    if (no === 1) {
      expect(wire, BYTES);
      value = r.string(end);
    } else if (no === 2) {
      expect(wire, VARINT);
      value = r.uint32(end) !== 0;
    } else if (no === 3) {
      expect(wire, VARINT);
      value = int64(r.int64(end));
    } else if (no === 4) {
      expect(wire, FIXED64);
      value = r.double(end);
    } else if (no === 7) {
      expect(wire, BYTES);
      value = r.hex(end);
    } else {
      expect(wire, BYTES);
      const stop = r.delimited(end);
      value = no === 5 ? arrayValue(r, stop, depth + 1) : kvlistValue(r, stop, depth + 1);
    }
    return true;
  });
  return value;
}

function arrayValue(r: WireReader, end: number, depth: number): unknown[] {
  const values: unknown[] = [];
  messages(r, end, (stop) => values.push(anyValue(r, stop, depth)));
  return values;
}

function kvlistValue(r: WireReader, end: number, depth: number): Record<string, unknown> {
  const entries: Array<[string, unknown]> = [];
  messages(r, end, (stop) => entries.push(keyValue(r, stop, depth)));
  return Object.fromEntries(entries);
}

/** A `KeyValue`: its key ("" when absent) and value (null when absent). */
function keyValue(r: WireReader, end: number, depth: number): [string, unknown] {
  let key = '';
  let value: unknown = null;
  fields(r, end, (no, wire) => {
    if (no === 1) {
      expect(wire, BYTES);
      key = r.string(end);
    } else if (no === 2) {
      expect(wire, BYTES);
      const stop = r.delimited(end);
      value = anyValue(r, stop, depth);
    } else return false;
    return true;
  });
  return [key, value];
}

/** Adds the `KeyValue` ending at `end` to an attribute map. */
function attribute(r: WireReader, end: number, out: Attributes): void {
  r.tick();
  const [key, value] = keyValue(r, end, 0);
  putAttribute(out, key, value);
}

function span(r: WireReader, end: number): DecodedOtlpSpan {
  r.tickSpan();
  const s: DecodedOtlpSpan = {
    traceId: '',
    spanId: '',
    parentId: null,
    name: '',
    statusCode: 0,
    statusMessage: '',
    attributes: emptyRecord<AttributeValue>(),
    events: [],
    links: [],
    startTime: null,
    endTime: null,
  };
  fields(r, end, (no, wire) => {
    switch (no) {
      case 1:
      case 2:
      case 4: {
        expect(wire, BYTES);
        const hex = r.hex(end);
        if (no === 1) s.traceId = hex;
        else if (no === 2) s.spanId = hex;
        else s.parentId = hex === '' ? null : hex.padStart(16, '0');
        return true;
      }
      case 5:
        expect(wire, BYTES);
        s.name = r.string(end);
        return true;
      case 7:
      case 8: {
        expect(wire, FIXED64);
        const t = nanosToSeconds(r.fixed64(end));
        if (no === 7) s.startTime = t;
        else s.endTime = t;
        return true;
      }
      case 9:
        expect(wire, BYTES);
        attribute(r, r.delimited(end), s.attributes);
        return true;
      case 11:
        expect(wire, BYTES);
        s.events.push(event(r, r.delimited(end)));
        return true;
      case 13:
        expect(wire, BYTES);
        s.links.push(link(r, r.delimited(end)));
        return true;
      case 15: {
        expect(wire, BYTES);
        const stop = r.delimited(end);
        s.statusCode = 0;
        s.statusMessage = '';
        fields(r, stop, (sno, swire) => {
          if (sno === 2) {
            expect(swire, BYTES);
            s.statusMessage = r.string(stop);
          } else if (sno === 3) {
            expect(swire, VARINT);
            s.statusCode = r.uint32(stop) | 0;
          } else return false;
          return true;
        });
        return true;
      }
      default:
        return unused(r, no, wire, end, { 3: BYTES, 6: VARINT, 10: VARINT, 12: VARINT, 14: VARINT, 16: FIXED32 });
    }
  });
  s.traceId = s.traceId.padStart(32, '0');
  s.spanId = s.spanId.padStart(16, '0');
  return s;
}

function event(r: WireReader, end: number): DecodedOtlpSpan['events'][number] {
  r.tick();
  const e: DecodedOtlpSpan['events'][number] = { name: '', attributes: emptyRecord<AttributeValue>(), timestamp: null };
  fields(r, end, (no, wire) => {
    if (no === 1) {
      expect(wire, FIXED64);
      e.timestamp = nanosToSeconds(r.fixed64(end));
    } else if (no === 2) {
      expect(wire, BYTES);
      e.name = r.string(end);
    } else if (no === 3) {
      expect(wire, BYTES);
      attribute(r, r.delimited(end), e.attributes);
    } else return unused(r, no, wire, end, { 4: VARINT });
    return true;
  });
  return e;
}

function link(r: WireReader, end: number): DecodedOtlpSpan['links'][number] {
  r.tick();
  const l: DecodedOtlpSpan['links'][number] = { traceId: '', spanId: '', attributes: emptyRecord<AttributeValue>() };
  fields(r, end, (no, wire) => {
    if (no === 1 || no === 2) {
      expect(wire, BYTES);
      if (no === 1) l.traceId = r.hex(end);
      else l.spanId = r.hex(end);
    } else if (no === 4) {
      expect(wire, BYTES);
      attribute(r, r.delimited(end), l.attributes);
    } else return unused(r, no, wire, end, { 3: BYTES, 5: VARINT, 6: FIXED32 });
    return true;
  });
  l.traceId = l.traceId.padStart(32, '0');
  l.spanId = l.spanId.padStart(16, '0');
  return l;
}

/** One `ResourceSpans`: its spans are collected once the whole message (resource included) has been read. */
function resourceSpans(r: WireReader, end: number, result: ConversionResult): void {
  let resourceAttributes = emptyRecord<AttributeValue>();
  let schemaUrl = '';
  const spans: DecodedOtlpSpan[] = [];
  fields(r, end, (no, wire) => {
    if (no === 1) {
      expect(wire, BYTES);
      const stop = r.delimited(end);
      resourceAttributes = emptyRecord<AttributeValue>(); // a repeated singular message replaces the earlier one
      fields(r, stop, (rno, rwire) => {
        if (rno === 3) {
          // `entity_refs` (unused): read through, like the scope.
          expect(rwire, BYTES);
          const refEnd = r.delimited(stop);
          fields(r, refEnd, (eno, ewire) => unused(r, eno, ewire, refEnd, { 1: BYTES, 2: BYTES, 3: BYTES, 4: BYTES }));
          return true;
        }
        if (rno !== 1) return unused(r, rno, rwire, stop, { 2: VARINT });
        expect(rwire, BYTES);
        attribute(r, r.delimited(stop), resourceAttributes);
        return true;
      });
    } else if (no === 2) {
      expect(wire, BYTES);
      r.tick();
      const stop = r.delimited(end);
      fields(r, stop, (sno, swire) => {
        if (sno === 1) {
          expect(swire, BYTES);
          scope(r, r.delimited(stop));
          return true;
        }
        if (sno !== 2) return unused(r, sno, swire, stop, { 3: BYTES });
        expect(swire, BYTES);
        spans.push(span(r, r.delimited(stop)));
        return true;
      });
    } else if (no === 3) {
      expect(wire, BYTES);
      schemaUrl = r.string(end);
    } else return false;
    return true;
  });
  for (const s of spans) collectSpan(result, s, resourceAttributes, schemaUrl, r.limits);
}

/**
 * Converts an OTLP/HTTP protobuf `ExportTraceServiceRequest` straight from its bytes to AGL spans, with the same
 * result as `convertTraceRequest(decodeTraceRequestProtobuf(body))`, without building the generated message objects,
 * their plain copies and base64 ids first (that was most of the OTLP route's time). Returns null for anything it does
 * not read the way the generated decoder does (truncated or malformed bytes, an unexpected wire type, two members of
 * one `AnyValue`, very deep values): the caller then takes the generated decoder, which also words the error.
 * Messages, values and spans are counted as they are read: past `limits` it throws a 413 `HttpError` at once.
 */
export function convertTraceRequestProtobuf(
  body: Uint8Array,
  limits: IngestLimits = NO_INGEST_LIMITS,
): ConversionResult | null {
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const r = new WireReader(buf, limits);
  const result: ConversionResult = { spans: [], unowned: [] };
  try {
    messages(r, buf.length, (stop) => resourceSpans(r, stop, result));
  } catch (error) {
    if (error instanceof Unexpected || error instanceof RangeError) return null;
    throw error;
  }
  return result;
}
