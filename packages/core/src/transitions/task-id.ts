import { createHash } from 'node:crypto';
import { isRecord } from '../guards';

/** A canonical JSON string: object keys sorted, `undefined` members left out, so equal values hash equally. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** SHA-256 of a UTF-8 string, as lowercase hex (node:crypto). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The stable hash that stands in for a missing task id: `task-` and 16 hex digits of SHA-256(canonical JSON). */
export function stableTaskHash(input: unknown): string {
  return `task-${sha256Hex(canonicalJson(input)).slice(0, 16)}`;
}

/** A string or finite number id, as a string; null for anything else (empty strings included). */
function idValue(value: unknown): string | null {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/**
 * The task id of a rollout (DESIGN Contract 3), the one rule every package uses: `rollout.metadata.task_id`; else the
 * task input's own `task_id`, `taskId` or `id` field (a string or number); else {@link stableTaskHash} of the input.
 * Algorithms call it with `{ input: task }` when they enqueue and record the result as `metadata.task_id`, so a
 * rollout's id is the same whether it is read from its metadata or recomputed from its input.
 */
export function taskIdOf(rollout: { input: unknown; metadata?: Record<string, unknown> | null }): string {
  const fromMetadata = idValue(rollout.metadata?.task_id);
  if (fromMetadata !== null) return fromMetadata;
  const input = rollout.input;
  if (isRecord(input)) {
    for (const key of ['task_id', 'taskId', 'id']) {
      const own = idValue(input[key]);
      if (own !== null) return own;
    }
  }
  return stableTaskHash(input);
}
