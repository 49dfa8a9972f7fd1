import { fromWire, type JsonValue, type SpanInput } from '@agl/core/schema';
import { createRedactor, redactPatternsFromEnv, type RedactPattern, type Redactor } from '@agl/core/redact';
import type { WireSpan } from '@agl/core/tracer';

/** Attributes of one span, as `redact` sees them. */
export type SpanAttributes = Record<string, unknown>;

/**
 * Sees every span's attributes before export and returns the ones to store (a new object, or the same one changed).
 * `span` is the whole span (name, ids), read-only.
 */
export type RedactFn = (attributes: SpanAttributes, span: Readonly<SpanInput>) => SpanAttributes;

/** `configureObserve`'s `redact: { patterns }`: the built-in detectors plus these regular expressions. */
export interface RedactOptions {
  /** More secrets to mask: regular expressions (a named group `secret` limits the mask to it). */
  patterns?: readonly RedactPattern[];
}

/** How the recorder redacts: whole spans (in wire form), and a rollout's input and metadata. */
export interface RecordRedaction {
  /** The span with its secrets masked: a copy, or the same span when nothing changed. */
  span(span: WireSpan): WireSpan;
  json<T extends JsonValue>(value: T): T;
}

let builtin: Redactor | null = null;
function defaultRedactor(): Redactor {
  builtin ??= createRedactor();
  return builtin;
}

/**
 * `text` with every secret the built-in detectors know masked as `[REDACTED]` (API keys, tokens, passwords, private
 * keys, URL credentials; see SECURITY.md), also when split by zero-width characters or spelled with lookalike letters.
 */
export function redactText(text: string): string {
  return defaultRedactor().text(text);
}

/**
 * The default `redact`: masks secrets in every string attribute (prompts and completions, scanned as one conversation
 * so a key split across two messages is caught; tool-call arguments and results; tool definitions), and the whole
 * value of secret-named attributes (`…authorization`, `…api_key`, `…password`). Compose it with your own:
 * `redact: (attrs, span) => myRedact(redactSecrets(attrs, span))`.
 */
export function redactSecrets(attributes: SpanAttributes): SpanAttributes {
  return defaultRedactor().attributes(attributes);
}

/**
 * The recorder's redaction for a `redact` option: `false` = none; a function sees span attributes (and the built-in
 * engine still masks rollout input and metadata); otherwise the built-in engine with `patterns` and the patterns of
 * `AGL_REDACT_PATTERNS` (a malformed variable is reported through `warn` and left out: recording never throws).
 * Throws `ValidationError` for a bad pattern in `options.patterns`.
 */
export function recordRedaction(
  option: RedactFn | RedactOptions | false | undefined,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
): RecordRedaction | null {
  if (option === false) return null;
  let envPatterns: string[] = [];
  try {
    envPatterns = redactPatternsFromEnv(env);
    createRedactor({ patterns: envPatterns });
  } catch (error) {
    warn(`[agl observe] ${(error as Error).message} The variable's patterns are not used.`);
    envPatterns = [];
  }
  const patterns = [...(typeof option === 'object' ? (option.patterns ?? []) : []), ...envPatterns];
  const redactor = patterns.length > 0 ? createRedactor({ patterns }) : defaultRedactor();
  if (typeof option === 'function') {
    return {
      span: (span) => {
        if (!span.attributes) return span;
        // The function sees a copy of the attributes (the tracer's own map is shared with its other processors) and the
        // span in API form (camelCase), as documented.
        return { ...span, attributes: option({ ...span.attributes }, fromWire('span', span) as SpanInput) };
      },
      json: (value) => redactor.json(value),
    };
  }
  return { span: (span) => redactor.span(span), json: (value) => redactor.json(value) };
}
