import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../errors/validation-error';
import { fromWire, wirePath, type WireShape } from './wire-codec';

function issuesOf(error: z.ZodError, spell: (path: readonly PropertyKey[]) => string): ValidationIssue[] {
  return error.issues.map((issue) => ({ path: spell(issue.path), message: issue.message }));
}

function describe(what: string, issues: ValidationIssue[]): string {
  const first = issues.slice(0, 3).map((i) => `${i.path || '(body)'}: ${i.message}`);
  return `Invalid ${what}: ${first.join('; ')}${issues.length > 3 ? ` (+${issues.length - 3} more)` : ''}`;
}

/**
 * Validates a camelCase API value; throws {@link ValidationError} naming each bad field (camelCase paths).
 */
export function parseApi<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = issuesOf(result.error, (path) => path.map(String).join('.'));
  throw new ValidationError(describe(what, issues), issues);
}

/**
 * Converts a snake_case wire value to the API form and validates it; errors name the snake_case wire fields.
 */
export function parseWire<S extends z.ZodType>(schema: S, shape: WireShape, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(fromWire(shape, value));
  if (result.success) return result.data;
  const issues = issuesOf(result.error, wirePath);
  throw new ValidationError(describe(what, issues), issues);
}
