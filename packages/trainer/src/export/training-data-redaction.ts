import { createRedactor, describeRedactions, type RedactPattern, type Redactor } from '@agl/core/redact';
import {
  ATTR_HOSTED_VLLM_PROMPT_TOKEN_IDS,
  ATTR_HOSTED_VLLM_RESPONSE_TOKEN_IDS,
  ATTR_LOGPROBS_CONTENT,
  ATTR_LOGPROBS_REFUSAL,
  ATTR_PROMPT_TOKEN_IDS,
  ATTR_RESPONSE_TOKEN_IDS,
} from '@agl/core/semconv';
import type { Span } from '@agl/core/schema';

/**
 * Redaction of training data (`agl dataset build`, every `agl export`, fine-tuning uploads): on by default. `false`
 * turns it off (`--no-redact`); `{ patterns }` adds regular expressions to the built-in detectors. The patterns of
 * `AGL_REDACT_PATTERNS` (in `env`, default `process.env`) are always added.
 */
export type RedactOption = boolean | { patterns?: readonly RedactPattern[] };

/** What a redacted export masked. */
export interface RedactionSummary {
  /** False when redaction was off (`--no-redact`). */
  enabled: boolean;
  /** Secrets masked in all. */
  masked: number;
  /** Per detector id (`aws-access-key-id`, `jwt`, `secret-key-name`, `user-pattern-1`, ...). */
  byDetector: Record<string, number>;
  /** LLM calls whose token ids and logprobs were left out because their text held a secret (they spell it too). */
  tokenIdsDropped: number;
}

/** Attributes that spell a call's text as tokens: dropped from a call whose text had a secret masked. */
const TOKEN_ATTRIBUTES = [
  ATTR_PROMPT_TOKEN_IDS,
  ATTR_RESPONSE_TOKEN_IDS,
  ATTR_LOGPROBS_CONTENT,
  ATTR_LOGPROBS_REFUSAL,
  ATTR_HOSTED_VLLM_PROMPT_TOKEN_IDS,
  ATTR_HOSTED_VLLM_RESPONSE_TOKEN_IDS,
];

/**
 * One redaction pass over training data: masks secrets in spans (then drops the token ids of a call whose text held
 * one) and in JSON values (task inputs, fine-tuning records), and sums up what it masked.
 */
export class TrainingDataRedaction {
  readonly #redactor: Redactor;
  #tokenIdsDropped = 0;

  constructor(redactor: Redactor) {
    this.#redactor = redactor;
  }

  /** Spans with secrets masked; a span whose text changed loses its token ids and logprobs. */
  spans<S extends Span>(spans: readonly S[]): S[] {
    return spans.map((span) => {
      const masked = this.#redactor.span(span);
      if (masked === span) return span;
      const attributes = { ...masked.attributes };
      let dropped = false;
      for (const key of TOKEN_ATTRIBUTES) {
        if (key in attributes) {
          delete attributes[key];
          dropped = true;
        }
      }
      if (dropped) this.#tokenIdsDropped += 1;
      return { ...masked, attributes };
    });
  }

  /** A JSON value (an input, a fine-tuning line) with secrets masked; message lists are scanned as conversations. */
  json<T>(value: T): T {
    return this.#redactor.json(value);
  }

  summary(): RedactionSummary {
    const counts = this.#redactor.counts();
    return {
      enabled: true,
      masked: counts.total,
      byDetector: counts.byDetector,
      tokenIdsDropped: this.#tokenIdsDropped,
    };
  }
}

/**
 * The redaction for `option` (default on), or `null` when it is `false`. Throws `ValidationError` for a bad pattern
 * (in `option.patterns` or `AGL_REDACT_PATTERNS`).
 */
export function trainingDataRedaction(
  option: RedactOption | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): TrainingDataRedaction | null {
  if (option === false) return null;
  return new TrainingDataRedaction(
    createRedactor({ env, ...(typeof option === 'object' && option.patterns ? { patterns: option.patterns } : {}) }),
  );
}

/** The summary of a pass, or the "off" summary when there was none. */
export function redactionSummary(redaction: TrainingDataRedaction | null): RedactionSummary {
  return redaction?.summary() ?? { enabled: false, masked: 0, byDetector: {}, tokenIdsDropped: 0 };
}

/** One line for a command's summary: `redaction: 3 secrets masked (jwt 2, …)` or `redaction: off (--no-redact)`. */
export function describeRedactionSummary(summary: RedactionSummary): string {
  if (!summary.enabled) return 'redaction: off (--no-redact); secrets in the data were written as they are';
  const base = describeRedactions({ total: summary.masked, byDetector: summary.byDetector });
  const tokens =
    summary.tokenIdsDropped > 0 ? `; token ids of ${summary.tokenIdsDropped} call(s) holding a secret left out` : '';
  return `redaction: ${base}${tokens}`;
}

/**
 * Fine-tuning lines (OpenAI SFT `{messages, tools}` or DPO `{input, preferred_output, non_preferred_output}`, or any
 * provider's JSON lines) with every secret masked: the last step before an upload. `buildFineTuningData` already
 * redacts what it reads; a provider that builds its lines another way calls this on them before sending.
 */
export function redactFineTuningRecords<R>(
  records: readonly R[],
  redaction: TrainingDataRedaction | null = trainingDataRedaction(true),
): R[] {
  return redaction ? records.map((record) => redaction.json(record)) : [...records];
}
