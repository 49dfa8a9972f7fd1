/**
 * A minimal OTLP/HTTP protobuf encoder (ExportTraceServiceRequest with one resource, one scope and string
 * attributes), written by hand so fuzz tests can build, then truncate or corrupt, real wire bytes.
 */

function varint(value: number): number[] {
  const out: number[] = [];
  let v = value;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

function lengthDelimited(field: number, payload: Uint8Array | number[]): number[] {
  return [...varint((field << 3) | 2), ...varint(payload.length), ...payload];
}

function text(field: number, value: string): number[] {
  return lengthDelimited(field, [...Buffer.from(value, 'utf8')]);
}

function fixed64(field: number, value: bigint): number[] {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(value);
  return [...varint((field << 3) | 1), ...bytes];
}

function keyValue(key: string, value: string): number[] {
  return [...text(1, key), ...lengthDelimited(2, text(1, value))];
}

/** One span of {@link encodeTraceRequest}. */
export interface OtlpSpanSpec {
  traceId: Buffer;
  spanId: Buffer;
  name: string;
  attributes: Record<string, string>;
}

/** `ExportTraceServiceRequest` bytes: the resource carries `resourceAttributes`, each span its own attributes. */
export function encodeTraceRequest(resourceAttributes: Record<string, string>, spans: OtlpSpanSpec[]): Uint8Array {
  const resource = Object.entries(resourceAttributes).flatMap(([k, v]) => lengthDelimited(1, keyValue(k, v)));
  const spanBytes = spans.flatMap((s) =>
    lengthDelimited(2, [
      ...lengthDelimited(1, [...s.traceId]),
      ...lengthDelimited(2, [...s.spanId]),
      ...text(5, s.name),
      ...fixed64(7, 1_700_000_000_000_000_000n),
      ...fixed64(8, 1_700_000_001_000_000_000n),
      ...Object.entries(s.attributes).flatMap(([k, v]) => lengthDelimited(9, keyValue(k, v))),
    ]),
  );
  const scopeSpans = [...lengthDelimited(1, text(1, 'agl-fuzz')), ...spanBytes];
  const resourceSpans = [...lengthDelimited(1, resource), ...lengthDelimited(2, scopeSpans)];
  return Uint8Array.from(lengthDelimited(1, resourceSpans));
}
