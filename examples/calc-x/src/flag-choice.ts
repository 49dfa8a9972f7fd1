/**
 * The value of a command-line flag that must be one of `allowed` (undefined when the flag was not given). Any other
 * value prints what was wrong and the allowed values, and exits with status 2.
 */
export function flagChoice<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined || (allowed as readonly string[]).includes(value)) return value as T | undefined;
  console.error(`--${flag} ${value}: unknown value; use one of ${allowed.join(', ')}`);
  process.exit(2);
}
