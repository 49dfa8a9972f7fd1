import { HttpError } from '@agl/core/errors';

/**
 * What one ingest request may hold, past its byte size: checked by the server's JSON parser, its span routes and the
 * OTLP readers, so that no request costs the server more than its memory budget (see the store README, "Limits").
 */
export interface IngestLimits {
  /** Largest number of JSON values in one body, counted before parsing (OTLP protobuf: messages and values read). */
  maxJsonValues: number;
  /** Largest number of spans in one request. */
  maxSpansPerRequest: number;
  /** Largest number of attributes of one span. */
  maxAttributesPerSpan: number;
}

/** No limits (in-process callers that trust their input). */
export const NO_INGEST_LIMITS: IngestLimits = {
  maxJsonValues: Infinity,
  maxSpansPerRequest: Infinity,
  maxAttributesPerSpan: Infinity,
};

/** A 413 (`AGL_PayloadTooLargeError`) that says which limit a body broke and how to stay under it. */
export function tooLarge(detail: string): HttpError {
  return new HttpError(413, detail, 'AGL_PayloadTooLargeError');
}

/** Refuses a request of more than `limits.maxSpansPerRequest` spans (413). */
export function checkSpanCount(count: number, limits: Pick<IngestLimits, 'maxSpansPerRequest'>): void {
  if (count > limits.maxSpansPerRequest) {
    throw tooLarge(
      `The request holds ${count} spans; the server's limit is ${limits.maxSpansPerRequest} per request. Send smaller batches.`,
    );
  }
}

/** Refuses a span with more than `limits.maxAttributesPerSpan` attributes (413); `where` names it (`spans.3`). */
export function checkAttributeCount(
  count: number,
  where: string,
  limits: Pick<IngestLimits, 'maxAttributesPerSpan'>,
): void {
  if (count > limits.maxAttributesPerSpan) {
    throw tooLarge(
      `${where}.attributes has ${count} attributes; the server's limit is ${limits.maxAttributesPerSpan} per span. ` +
        'Record fewer attributes (or one JSON string attribute for bulky data).',
    );
  }
}

/** A 413 for a body of more than `max` values. */
export function tooManyValues(max: number): HttpError {
  return tooLarge(
    `The body holds more than ${max} values (array items, object members, OTLP messages); the server's limit is ${max}. ` +
      'Send fewer items per request (split the batch).',
  );
}
