import { parseOps } from './calc-tasks';

/**
 * The value of a command-line flag that must be one of `allowed` (undefined when the flag was not given). Any other
 * value prints what was wrong and the allowed values, and exits with status 2.
 */
export function flagChoice<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (value === undefined || (allowed as readonly string[]).includes(value)) return value as T | undefined;
  console.error(`--${flag} ${value}: unknown value; use one of ${allowed.join(', ')}`);
  process.exit(2);
}

/**
 * The value of a numeric command-line flag (undefined when the flag was not given). Anything that is not a finite
 * number prints what was wrong and exits with status 2.
 */
export function flagNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() !== '' && Number.isFinite(n)) return n;
  console.error(`--${flag} ${value}: not a number; give a number, e.g. --${flag} 40`);
  process.exit(2);
}

/** The value of an operator-mix flag such as `--train-ops +-**` (see `parseOps`); anything else exits with status 2. */
export function flagOps(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return parseOps(value);
  } catch (error) {
    console.error(`--${flag} ${value}: ${(error as Error).message}`);
    process.exit(2);
  }
}
