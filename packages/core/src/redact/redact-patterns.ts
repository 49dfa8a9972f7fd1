import { ValidationError } from '../errors/validation-error';
import type { SecretDetector } from './secret-detectors';

/** A user pattern: a regular expression (its source as a string, or a RegExp). */
export type RedactPattern = string | RegExp;

/** The environment variable holding user patterns: a JSON array of regular expressions, or one per line. */
export const REDACT_PATTERNS_ENV = 'AGL_REDACT_PATTERNS';

/**
 * User patterns as detectors (`user-pattern-1`, ...): a string is a regular expression's source; a named group
 * `secret` limits the mask to that group. Throws `ValidationError` naming `source` and the bad pattern.
 */
export function compileRedactPatterns(patterns: readonly RedactPattern[], source: string): SecretDetector[] {
  return patterns.map((pattern, index) => {
    let compiled: RegExp;
    try {
      compiled = typeof pattern === 'string' ? new RegExp(pattern, 'u') : pattern;
    } catch (error) {
      throw new ValidationError(
        `${source}[${index}] ${JSON.stringify(pattern)} is not a valid regular expression (${(error as Error).message}); ` +
          'fix it, e.g. "acme_[0-9a-f]{32}" or "token=(?<secret>[^&]+)".',
        [{ path: `${source}.${index}`, message: 'invalid regular expression' }],
      );
    }
    if (compiled.source === '(?:)' || compiled.test('')) {
      throw new ValidationError(
        `${source}[${index}] ${JSON.stringify(String(pattern))} matches the empty string; a redact pattern must match a secret.`,
        [{ path: `${source}.${index}`, message: 'matches the empty string' }],
      );
    }
    return { id: `user-pattern-${index + 1}`, description: `user pattern ${compiled.source}`, pattern: compiled };
  });
}

/**
 * The patterns of `AGL_REDACT_PATTERNS`: a JSON array of strings (`["acme_[0-9a-f]{32}"]`), else one regular
 * expression per line. Empty or unset: none. Throws `ValidationError` for a malformed JSON array.
 */
export function redactPatternsFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  const raw = env[REDACT_PATTERNS_ENV]?.trim();
  if (!raw) return [];
  if (raw.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      throw new ValidationError(
        `${REDACT_PATTERNS_ENV} starts with "[" but is not a JSON array (${(error as Error).message}); ` +
          'set it to e.g. ["acme_[0-9a-f]{32}"] (backslashes doubled), or one pattern per line.',
        [{ path: REDACT_PATTERNS_ENV, message: 'invalid JSON' }],
      );
    }
    if (!Array.isArray(parsed) || parsed.some((p) => typeof p !== 'string' || p === '')) {
      throw new ValidationError(
        `${REDACT_PATTERNS_ENV} must be a JSON array of non-empty strings, e.g. ["acme_[0-9a-f]{32}"].`,
        [{ path: REDACT_PATTERNS_ENV, message: 'expected an array of strings' }],
      );
    }
    return parsed as string[];
  }
  return raw
    .split(/\r?\n/u)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
