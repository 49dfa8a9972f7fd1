import { promisify } from 'node:util';
import { gunzip, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  convertTraceRequest,
  convertTraceRequestProtobuf,
  decodeTraceRequestJson,
  decodeTraceRequestProtobuf,
  encodeRpcStatus,
  encodeTraceResponse,
  ingestOtlpSpans,
  type ConversionResult,
} from '../../otlp/index';
import { ValidationError } from '@agl/core/errors';
import type { IngestLimits } from '../../ingest-limits';
import { checkJsonStructure } from '../request-limits';
import { utf8Text } from '@agl/core/net';
import { HTTP_ERROR_TYPES, toErrorReply } from '../http-errors';
import type { RouteContext } from '../route-context';
import type { Redactor } from '@agl/core/redact';

type OtlpFormat = 'protobuf' | 'json';

const gunzipAsync = promisify(gunzip);

const CONTENT_TYPES: Record<string, OtlpFormat> = {
  'application/x-protobuf': 'protobuf',
  'application/protobuf': 'protobuf',
  'application/json': 'json',
};

/** gRPC status codes used in google.rpc.Status bodies. */
const RPC_INVALID_ARGUMENT = 3;
const RPC_INTERNAL = 13;

function send(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  body: Buffer,
  format: OtlpFormat,
): FastifyReply {
  reply.code(status).type(format === 'json' ? 'application/json' : 'application/x-protobuf');
  const accept = String(request.headers['accept-encoding'] ?? '');
  if (/\bgzip\b/i.test(accept)) {
    reply.header('content-encoding', 'gzip');
    return reply.send(gzipSync(body));
  }
  return reply.send(body);
}

function sendStatus(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
  errorType: string,
  format: OtlpFormat,
): FastifyReply {
  const code = status >= 500 ? RPC_INTERNAL : RPC_INVALID_ARGUMENT;
  if (format === 'protobuf') return send(request, reply, status, encodeRpcStatus(code, message, 'protobuf'), format);
  return send(
    request,
    reply,
    status,
    Buffer.from(JSON.stringify({ code, message, detail: message, error_type: errorType })),
    format,
  );
}

/**
 * The request body, inflated when gzip-encoded: in zlib's thread pool (off the event loop, which a 32 MiB inflate would
 * hold for a good part of a second), stopped at `bodyLimit` bytes.
 */
async function requestBody(request: FastifyRequest, bodyLimit: number): Promise<Buffer> {
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const encoding = String(request.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (encoding === 'identity' || encoding === '') return raw;
  if (encoding !== 'gzip') {
    throw Object.assign(new Error(`Unsupported Content-Encoding '${encoding}'; send 'gzip' or an uncompressed body`), {
      status: 415,
    });
  }
  try {
    return await gunzipAsync(raw, { maxOutputLength: bodyLimit });
  } catch (error) {
    const tooLarge = error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
    throw Object.assign(
      new Error(
        tooLarge
          ? `Decompressed OTLP body is larger than the server's limit of ${bodyLimit} bytes; export smaller batches, or start the server with a larger --body-limit`
          : `Unable to decompress gzip body: ${(error as Error).message}`,
      ),
      { status: tooLarge ? 413 : 400 },
    );
  }
}

/**
 * Protobuf is read straight from the bytes, counting what it reads against `limits`. What that reader declines goes
 * through the generated decoder, which allocates a message for as little as 2 bytes and cannot be stopped midway: it
 * runs only on bodies too small to exceed the value limit that way; a larger body it declines is a 400.
 */
function convertProtobuf(body: Buffer, limits: IngestLimits): ConversionResult {
  const converted = convertTraceRequestProtobuf(body, limits);
  if (converted !== null) return converted;
  if (body.length > 2 * limits.maxJsonValues) {
    throw new ValidationError(
      `Unable to parse OTLP traces payload: the ${body.length}-byte protobuf body is not a well-formed ExportTraceServiceRequest. ` +
        'Send an ExportTraceServiceRequest as the OpenTelemetry exporters write it.',
      [{ path: '(body)', message: 'malformed protobuf' }],
      { status: 400 },
    );
  }
  return convertTraceRequest(decodeTraceRequestProtobuf(body), limits);
}

/** OTLP/JSON: its structure is counted (depth, values) before it is parsed, like every JSON body of the server. */
function convertJson(body: Buffer, limits: IngestLimits): ConversionResult {
  const text = utf8Text(body);
  if (text.trim() !== '') checkJsonStructure(text, limits.maxJsonValues);
  return convertTraceRequest(decodeTraceRequestJson(text), limits);
}

/**
 * `POST /v1/traces` (OTLP/HTTP protobuf and JSON, gzip in and out) and the 501 answers for metrics, logs and profiles.
 * Registered as an encapsulated plugin: its content-type parser takes every body as raw bytes. With a `redactor`
 * (`--redact-otlp`), every span's secrets are masked before it is stored.
 */
export function otlpRoutesPlugin(ctx: RouteContext, options: { redactor?: Redactor | null } = {}) {
  const redactor = options.redactor ?? null;
  const bodyLimit = ctx.limits.bodyLimit;
  return async function otlpRoutes(app: FastifyInstance): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    app.post('/v1/traces', async (request, reply) => {
      const mediaType = String(request.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim()
        .toLowerCase();
      const format = CONTENT_TYPES[mediaType];
      if (format === undefined) {
        return sendStatus(
          request,
          reply,
          415,
          `Unsupported Content-Type '${mediaType}', expected 'application/x-protobuf' or 'application/json' (OTLP/HTTP)`,
          HTTP_ERROR_TYPES.mediaType,
          'json',
        );
      }
      let body: Buffer;
      try {
        body = await requestBody(request, bodyLimit);
      } catch (error) {
        const status = (error as { status?: number }).status ?? 400;
        return sendStatus(
          request,
          reply,
          status,
          (error as Error).message,
          status === 413 ? HTTP_ERROR_TYPES.tooLarge : HTTP_ERROR_TYPES.badJson,
          format,
        );
      }
      try {
        const converted = format === 'protobuf' ? convertProtobuf(body, ctx.limits) : convertJson(body, ctx.limits);
        if (redactor) for (const item of converted.spans) item.span = redactor.span(item.span);
        const result = await ingestOtlpSpans(ctx.store, converted);
        const partial =
          result.rejected > 0
            ? {
                rejectedSpans: result.rejected,
                errorMessage: `${result.rejected} span(s) rejected: ${result.messages.join('; ')}`,
              }
            : null;
        return send(request, reply, 200, encodeTraceResponse(partial, format), format);
      } catch (error) {
        const mapped = toErrorReply(error, { bodyLimit });
        if (mapped.status >= 500) request.log.error({ err: error }, 'OTLP ingest failed');
        return sendStatus(request, reply, mapped.status, mapped.body.detail, mapped.body.error_type, format);
      }
    });

    for (const path of ['/v1/metrics', '/v1/logs', '/v1/development/profiles']) {
      app.post(path, async (_request, reply) => reply.code(501).send());
    }
  };
}
