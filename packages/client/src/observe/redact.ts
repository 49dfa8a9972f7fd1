import type { SpanInput } from '@agl/core/schema';

/** Attributes of one span, as `redact` sees them. */
export type SpanAttributes = Record<string, unknown>;

/**
 * Sees every span's attributes before export and returns the ones to store (a new object, or the same one changed).
 * `span` is the whole span (name, ids), read-only.
 */
export type RedactFn = (attributes: SpanAttributes, span: Readonly<SpanInput>) => SpanAttributes;

const SECRET =
  /\b(sk-(?:proj-|ant-)?[A-Za-z0-9_-]{8,})|\b(Bearer\s+)[A-Za-z0-9._~+/-]{8,}=*|\b((?:api[_-]?key|x-api-key|access[_-]?token|secret)["']?\s*[=:]\s*["']?)[^\s"'&,;}]{4,}/gi;

/** `text` with bearer tokens and API keys (`sk-...`, `Bearer ...`, `api_key=...`) replaced by `[REDACTED]`. */
export function redactText(text: string): string {
  if (!/sk-|bearer|key|token|secret/i.test(text)) return text;
  return text.replace(SECRET, (_match, sk: string | undefined, bearer: string | undefined, key: string | undefined) =>
    sk ? '[REDACTED]' : `${bearer ?? key ?? ''}[REDACTED]`,
  );
}

/**
 * The default `redact`: masks bearer tokens and API keys in every string attribute (prompts, completions, tool
 * arguments and results). Compose it with your own: `redact: (attrs, span) => myRedact(redactSecrets(attrs, span))`.
 */
export function redactSecrets(attributes: SpanAttributes): SpanAttributes {
  let out: SpanAttributes | null = null;
  for (const key in attributes) {
    const value = attributes[key];
    if (typeof value !== 'string') continue;
    const masked = redactText(value);
    if (masked === value) continue;
    out ??= { ...attributes };
    out[key] = masked;
  }
  return out ?? attributes;
}
