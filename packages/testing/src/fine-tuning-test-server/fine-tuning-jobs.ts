import { isRecord } from '@agl/core/guards';

/** A stored file as `GET /v1/files/{id}` returns it (the OpenAI `file` object). */
export interface TestFileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: 'processed';
  status_details: null;
}

/** The error object of a failed job. */
export interface TestJobError {
  code: string;
  message: string;
  param: string | null;
}

/** A job as the OpenAI `fine_tuning.job` object spells it. */
export interface TestFineTuningJob {
  id: string;
  object: 'fine_tuning.job';
  created_at: number;
  error: TestJobError | null;
  fine_tuned_model: string | null;
  finished_at: number | null;
  hyperparameters: Record<string, unknown>;
  model: string;
  organization_id: string;
  result_files: string[];
  seed: number;
  status: 'validating_files' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  trained_tokens: number | null;
  training_file: string;
  validation_file: string | null;
  estimated_finish: number | null;
  integrations: null;
  metadata: Record<string, string> | null;
  method: { type: 'supervised' | 'dpo'; supervised?: unknown; dpo?: unknown };
  /** Not an OpenAI field: the suffix the job was created with (kept to build `fine_tuned_model`). */
  user_provided_suffix: string | null;
}

/** One `fine_tuning.job.event`. */
export interface TestJobEvent {
  id: string;
  object: 'fine_tuning.job.event';
  created_at: number;
  level: 'info' | 'warn' | 'error';
  message: string;
  type: 'message' | 'metrics';
  data: Record<string, unknown> | null;
}

/** The minimum number of training examples the provider accepts. */
export const MIN_TRAINING_EXAMPLES = 10;

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** Checks one chat message; returns a problem or `null`. */
function messageProblem(m: unknown, where: string): string | null {
  if (!isRecord(m)) return `${where} is not an object`;
  if (typeof m.role !== 'string' || !ROLES.has(m.role)) return `${where} has an unknown role ${JSON.stringify(m.role)}`;
  const hasCalls = Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
  if (m.content === undefined || (m.content === null && !(m.role === 'assistant' && hasCalls)))
    return `${where} has no content`;
  return null;
}

function lineProblem(value: unknown, method: 'supervised' | 'dpo'): string | null {
  if (!isRecord(value)) return 'is not a JSON object';
  if (method === 'supervised') {
    if (!Array.isArray(value.messages) || value.messages.length === 0) return 'has no "messages" list';
    for (const [i, m] of value.messages.entries()) {
      const problem = messageProblem(m, `messages[${i}]`);
      if (problem) return problem;
    }
    if (!value.messages.some((m) => isRecord(m) && m.role === 'assistant')) return 'has no assistant message';
    return null;
  }
  if (!isRecord(value.input) || !Array.isArray(value.input.messages)) return 'has no "input.messages" list';
  for (const key of ['preferred_output', 'non_preferred_output']) {
    const out = value[key];
    if (!Array.isArray(out) || out.length === 0) return `has no "${key}" list`;
    for (const [i, m] of out.entries()) {
      const problem = messageProblem(m, `${key}[${i}]`);
      if (problem) return problem;
    }
  }
  return null;
}

/**
 * What the provider checks when a job leaves `validating_files`: the file parses as JSONL, every line has the shape
 * of the job's method, and there are at least {@link MIN_TRAINING_EXAMPLES} lines. Returns the job error or `null`.
 */
export function validateTrainingFile(text: string, method: 'supervised' | 'dpo'): TestJobError | null {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  for (const [i, line] of lines.entries()) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return invalid(`Line ${i + 1} is not valid JSON.`);
    }
    const problem = lineProblem(value, method);
    if (problem) return invalid(`Line ${i + 1} ${problem}.`);
  }
  if (lines.length < MIN_TRAINING_EXAMPLES)
    return invalid(`Training file has ${lines.length} example(s), but it must have at least ${MIN_TRAINING_EXAMPLES}.`);
  return null;
}

function invalid(message: string): TestJobError {
  return {
    code: 'invalid_training_file',
    message: `The job failed due to an invalid training file. ${message}`,
    param: 'training_file',
  };
}
