import { UserError } from '@agl/core/errors';

/** A comma-separated flag value as a list (`undefined` when absent or empty). */
export function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
}

/**
 * A comma-separated flag value whose items must be among `allowed` (`undefined` when absent or empty); throws a
 * UserError naming `--<flag>`, the bad item and the choices.
 */
export function parseChoices<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  flag: string,
): T[] | undefined {
  const items = list(value);
  for (const item of items ?? []) {
    if (!(allowed as readonly string[]).includes(item))
      throw new UserError(
        `--${flag} got ${JSON.stringify(item)}; use one or more of ${allowed.join(', ')} (comma-separated).`,
      );
  }
  return items as T[] | undefined;
}

/** Parses a number flag; throws a UserError naming the flag. */
export function numberFlag(flag: string, options: { integer?: boolean; min?: number; max?: number } = {}) {
  return (value: string): number => {
    const n = Number(value);
    const ok =
      value.trim() !== '' &&
      Number.isFinite(n) &&
      (!options.integer || Number.isInteger(n)) &&
      (options.min === undefined || n >= options.min) &&
      (options.max === undefined || n <= options.max);
    if (!ok) {
      const kind = options.integer ? 'an integer' : 'a number';
      const range = [
        options.min !== undefined ? `≥ ${options.min}` : '',
        options.max !== undefined ? `≤ ${options.max}` : '',
      ]
        .filter(Boolean)
        .join(' and ');
      throw new UserError(`--${flag} got ${JSON.stringify(value)}; pass ${kind}${range ? ` ${range}` : ''}.`);
    }
    return n;
  };
}

/** A finite number given as text (an argument or a `name=value` part); throws a UserError naming `what` and `example`. */
export function finiteNumber(text: string, what: string, example: string): number {
  const value = text.trim() === '' ? Number.NaN : Number(text);
  if (!Number.isFinite(value))
    throw new UserError(`${what} must be a finite number, got ${JSON.stringify(text)}; ${example}.`);
  return value;
}
