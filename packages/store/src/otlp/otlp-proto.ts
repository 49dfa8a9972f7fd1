import { createRequire } from 'node:module';
import protobuf from 'protobufjs';
import { ValidationError } from '@agl/core/errors';

/**
 * The official OTLP protobuf messages, as protobufjs static code generated from opentelemetry-proto and shipped by
 * `@opentelemetry/otlp-transformer@0.208.0` (installed under the alias `otlp-transformer-0208`). Newer releases of
 * that package only encode, so this deep import is isolated here (reference typescript-frameworks.md §11.2).
 */
interface GeneratedMessage<T> {
  decode(reader: Uint8Array): T;
  encode(message: T): { finish(): Uint8Array };
  fromObject(object: Record<string, unknown>): T;
  toObject(message: T, options?: protobuf.IConversionOptions): Record<string, unknown>;
  verify(message: Record<string, unknown>): string | null;
  create(properties?: Record<string, unknown>): T;
}

interface TraceCollectorNamespace {
  ExportTraceServiceRequest: GeneratedMessage<object>;
  ExportTraceServiceResponse: GeneratedMessage<object>;
}

const require = createRequire(import.meta.url);
const root = require('otlp-transformer-0208/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: TraceCollectorNamespace } } } };
};
const collector = root.opentelemetry.proto.collector.trace.v1;

/** google.rpc.Status (google/rpc/status.proto), the body of OTLP/HTTP error answers; `details` is not used. */
const RpcStatus = new protobuf.Type('Status')
  .add(new protobuf.Field('code', 1, 'int32'))
  .add(new protobuf.Field('message', 2, 'string'));
new protobuf.Root().define('google.rpc').add(RpcStatus);

/** Options that turn a decoded message into plain JSON-like values: int64 as decimal strings, bytes as base64. */
const TO_OBJECT: protobuf.IConversionOptions = {
  longs: String,
  enums: Number,
  bytes: String,
  defaults: false,
  arrays: true,
};

/** A decoded `ExportTraceServiceRequest` as a plain object (camelCase keys, base64 ids, int64 as strings). */
export type PlainTraceRequest = Record<string, unknown>;

function parseFailure(reason: string): ValidationError {
  return new ValidationError(
    `Unable to parse OTLP traces payload: ${reason}. Send an ExportTraceServiceRequest (OTLP/HTTP protobuf or JSON).`,
    [{ path: '(body)', message: reason }],
    { status: 400 },
  );
}

/** Decodes an OTLP/HTTP protobuf body. An empty body is a valid empty request. */
export function decodeTraceRequestProtobuf(body: Uint8Array): PlainTraceRequest {
  try {
    const message = collector.ExportTraceServiceRequest.decode(body);
    return collector.ExportTraceServiceRequest.toObject(message, TO_OBJECT);
  } catch (error) {
    throw parseFailure(error instanceof Error ? error.message : String(error));
  }
}

const HEX = /^[0-9a-fA-F]*$/;

function hexIdsToBytes(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) hexIdsToBytes(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  for (const key of ['traceId', 'spanId', 'parentSpanId']) {
    const value = record[key];
    if (typeof value === 'string') {
      if (!HEX.test(value) || value.length % 2 !== 0) throw parseFailure(`${key} "${value}" is not a hex string`);
      record[key] = Buffer.from(value, 'hex');
    }
  }
  for (const key of ['resourceSpans', 'scopeSpans', 'spans', 'links']) hexIdsToBytes(record[key]);
}

/**
 * Decodes an OTLP/HTTP JSON body (ids in hex, as the OTLP spec requires) through the same generated message type,
 * so both encodings give identical plain objects.
 */
export function decodeTraceRequestJson(body: Uint8Array | string): PlainTraceRequest {
  let parsed: unknown;
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  if (text.trim() === '') return {};
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw parseFailure(`invalid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw parseFailure('expected a JSON object');
  hexIdsToBytes(parsed);
  try {
    const message = collector.ExportTraceServiceRequest.fromObject(parsed as Record<string, unknown>);
    const problem = collector.ExportTraceServiceRequest.verify(message as Record<string, unknown>);
    if (problem) throw new Error(problem);
    return collector.ExportTraceServiceRequest.toObject(message, TO_OBJECT);
  } catch (error) {
    if (ValidationError.isInstance(error)) throw error;
    throw parseFailure(error instanceof Error ? error.message : String(error));
  }
}

/** Encodes an `ExportTraceServiceResponse`, with `partialSuccess` when some spans were rejected. */
export function encodeTraceResponse(
  partial: { rejectedSpans: number; errorMessage: string } | null,
  format: 'protobuf' | 'json',
): Buffer {
  const properties =
    partial === null
      ? {}
      : { partialSuccess: { rejectedSpans: partial.rejectedSpans, errorMessage: partial.errorMessage } };
  const message = collector.ExportTraceServiceResponse.fromObject(properties);
  if (format === 'json') {
    return Buffer.from(JSON.stringify(collector.ExportTraceServiceResponse.toObject(message, { longs: String })));
  }
  return Buffer.from(collector.ExportTraceServiceResponse.encode(message).finish());
}

/** Decodes an `ExportTraceServiceResponse` (tests and clients). */
export function decodeTraceResponse(body: Uint8Array): Record<string, unknown> {
  return collector.ExportTraceServiceResponse.toObject(collector.ExportTraceServiceResponse.decode(body), {
    longs: Number,
  });
}

/** Encodes a google.rpc.Status error body. */
export function encodeRpcStatus(code: number, message: string, format: 'protobuf' | 'json'): Buffer {
  if (format === 'json') return Buffer.from(JSON.stringify({ code, message }));
  return Buffer.from(RpcStatus.encode(RpcStatus.create({ code, message })).finish());
}

/** Decodes a google.rpc.Status error body (tests). */
export function decodeRpcStatus(body: Uint8Array): { code: number; message: string } {
  return RpcStatus.toObject(RpcStatus.decode(body), { defaults: true }) as { code: number; message: string };
}
