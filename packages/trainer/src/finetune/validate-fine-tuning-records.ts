import { ValidationError, type ValidationIssue } from '@agl/core/errors';
import { isRecord } from '@agl/core/guards';

/** The fine-tuning methods of the OpenAI API that AGL writes data for. */
export type FineTuningMethod = 'sft' | 'dpo';

/** Limits of {@link validateFineTuningRecords}; the defaults are the provider's documented ones. */
export interface FineTuningLimits {
  /** Fewest examples a job accepts (OpenAI: 10). */
  minExamples?: number;
  /** Most tokens one example may hold (model dependent; default 65,536, the training context of gpt-4o-mini). */
  maxTokensPerExample?: number;
}

/** Provider defaults of {@link FineTuningLimits}. */
export const OPENAI_FINE_TUNING_LIMITS: Required<FineTuningLimits> = { minExamples: 10, maxTokensPerExample: 65_536 };

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'];

/**
 * Estimated tokens of one example: about four characters per token plus a few tokens of framing per message (the
 * provider counts with the model's tokenizer; this errs on the high side for English text and JSON).
 */
export function estimateExampleTokens(example: unknown): number {
  return Math.ceil(JSON.stringify(example).length / 4) + 4;
}

type Problem = { at: string; message: string };

function checkToolCalls(calls: unknown, at: string, problems: Problem[], ids: Set<string>): void {
  if (!Array.isArray(calls)) return void problems.push({ at, message: 'must be a list of tool calls' });
  calls.forEach((call, j) => {
    const where = `${at}[${j}]`;
    if (!isRecord(call) || typeof call.id !== 'string' || call.id === '')
      return void problems.push({ at: `${where}.id`, message: 'needs a non-empty string id' });
    ids.add(call.id);
    if (call.type !== 'function') problems.push({ at: `${where}.type`, message: 'must be "function"' });
    const fn = call.function;
    if (!isRecord(fn) || typeof fn.name !== 'string' || fn.name === '')
      return void problems.push({ at: `${where}.function.name`, message: 'needs the function name' });
    if (typeof fn.arguments !== 'string')
      return void problems.push({ at: `${where}.function.arguments`, message: 'must be a JSON string' });
    try {
      JSON.parse(fn.arguments);
    } catch {
      problems.push({
        at: `${where}.function.arguments`,
        message: 'is not valid JSON; the provider needs a JSON object string',
      });
    }
  });
}

function checkMessages(messages: unknown, at: string, problems: Problem[], knownIds = new Set<string>()): void {
  if (!Array.isArray(messages) || messages.length === 0)
    return void problems.push({ at, message: 'must be a non-empty list of chat messages' });
  messages.forEach((m, i) => {
    const where = `${at}[${i}]`;
    if (!isRecord(m)) return void problems.push({ at: where, message: 'must be an object with role and content' });
    if (typeof m.role !== 'string' || !ROLES.includes(m.role))
      return void problems.push({
        at: `${where}.role`,
        message: `is ${JSON.stringify(m.role)}; use one of ${ROLES.join(', ')}`,
      });
    const hasCalls = Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
    if (m.tool_calls !== undefined) {
      if (m.role !== 'assistant')
        problems.push({ at: `${where}.tool_calls`, message: 'is only allowed on assistant messages' });
      checkToolCalls(m.tool_calls, `${where}.tool_calls`, problems, knownIds);
    }
    const contentOk =
      typeof m.content === 'string' ||
      Array.isArray(m.content) ||
      (m.content === null && m.role === 'assistant' && hasCalls);
    if (!contentOk)
      problems.push({
        at: `${where}.content`,
        message: 'must be a string (null only on an assistant message with tool_calls)',
      });
    if (m.role === 'tool' && (typeof m.tool_call_id !== 'string' || !knownIds.has(m.tool_call_id)))
      problems.push({ at: `${where}.tool_call_id`, message: 'must name a tool call of an earlier assistant message' });
    if (m.weight !== undefined && m.weight !== 0 && m.weight !== 1)
      problems.push({ at: `${where}.weight`, message: 'must be 0 or 1' });
  });
}

function checkTools(tools: unknown, at: string, problems: Problem[]): void {
  if (tools === undefined) return;
  if (!Array.isArray(tools)) return void problems.push({ at, message: 'must be a list of function tools' });
  tools.forEach((t, i) => {
    if (!isRecord(t) || t.type !== 'function' || !isRecord(t.function) || typeof t.function.name !== 'string')
      problems.push({ at: `${at}[${i}]`, message: 'must be {"type":"function","function":{"name":…,"parameters":…}}' });
  });
}

function lineProblems(line: unknown, method: FineTuningMethod, maxTokens: number): Problem[] {
  const problems: Problem[] = [];
  if (!isRecord(line)) return [{ at: '', message: 'must be a JSON object' }];
  if (method === 'sft') {
    checkMessages(line.messages, 'messages', problems);
    checkTools(line.tools, 'tools', problems);
    if (Array.isArray(line.messages) && !line.messages.some((m) => isRecord(m) && m.role === 'assistant'))
      problems.push({ at: 'messages', message: 'has no assistant message to train on' });
  } else {
    if (!isRecord(line.input)) problems.push({ at: 'input', message: 'must be {"messages":[…],"tools"?:[…]}' });
    else {
      const ids = new Set<string>();
      checkMessages(line.input.messages, 'input.messages', problems, ids);
      checkTools(line.input.tools, 'input.tools', problems);
    }
    for (const key of ['preferred_output', 'non_preferred_output']) {
      const out = line[key];
      checkMessages(out, key, problems);
      if (Array.isArray(out) && (out.length !== 1 || !isRecord(out[0]) || out[0].role !== 'assistant'))
        problems.push({ at: key, message: 'must hold exactly one assistant message' });
    }
  }
  const tokens = estimateExampleTokens(line);
  if (tokens > maxTokens)
    problems.push({
      at: '',
      message: `holds about ${tokens} tokens, over the limit of ${maxTokens}; shorten or drop this transcript`,
    });
  return problems;
}

/**
 * Checks fine-tuning lines against the provider's documented format and limits before anything is uploaded: at
 * least `minExamples` lines; per line the shape of the method (`sft`: `{messages, tools?}`; `dpo`: `{input,
 * preferred_output, non_preferred_output}`), known roles, content, tool-call shape and ids, and the estimated token
 * count. Throws a {@link ValidationError} whose message names the first bad line and the fix; `issues` lists all.
 */
export function validateFineTuningRecords(
  records: readonly unknown[],
  method: FineTuningMethod,
  limits: FineTuningLimits = {},
): void {
  const { minExamples, maxTokensPerExample } = { ...OPENAI_FINE_TUNING_LIMITS, ...limits };
  const issues: ValidationIssue[] = [];
  records.forEach((record, i) => {
    for (const p of lineProblems(record, method, maxTokensPerExample)) {
      issues.push({ path: `line ${i + 1}${p.at ? `: ${p.at}` : ''}`, message: p.message });
    }
  });
  if (issues.length > 0) {
    const first = issues[0]!;
    throw new ValidationError(
      `The ${method} training file is invalid: ${first.path} ${first.message} (${issues.length} problem(s) in all). ` +
        'Nothing was uploaded; fix the transcripts or narrow the selection (--min-reward, --agent, --since).',
      issues,
    );
  }
  if (records.length < minExamples) {
    throw new ValidationError(
      `The ${method} training file has ${records.length} example(s); the provider needs at least ${minExamples}. ` +
        'Nothing was uploaded; record or judge more rollouts, or lower --min-reward.',
      [{ path: 'file', message: `needs at least ${minExamples} examples` }],
    );
  }
}
