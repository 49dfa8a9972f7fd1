import { sha256Hex } from '@agl/core/transitions';
import { AglError, UserError } from '@agl/core/errors';
import { isRecord } from '@agl/core/guards';
import type { ChatClient } from '../chat-client';
import { judgeCacheKey, MemoryJudgeCache, type JudgeCache, type JudgeScore } from './judge-cache';
import {
  GROUP_RESPONSE_FORMAT,
  GROUP_SYSTEM,
  groupUserMessage,
  RUBRIC_RESPONSE_FORMAT,
  RUBRIC_SYSTEM,
  rubricUserMessage,
} from './judge-prompts';

/** The judge's answer did not parse as the asked-for JSON, after every retry. Never recorded as a reward. */
export class JudgeAnswerError extends AglError {
  override readonly name = 'AGL_JudgeAnswerError';
  /** The last answer (first 500 characters). */
  readonly answer: string;

  constructor(message: string, answer: string) {
    super(message);
    this.answer = answer.slice(0, 500);
  }
}

/** Options of {@link LlmJudge}. */
export interface LlmJudgeOptions {
  /** The OpenAI-compatible client (concurrency limit, retries on 429/5xx, token and cost budget). */
  client: ChatClient;
  model: string;
  /** The rubric text (e.g. the contents of `rubric.md`). */
  rubric: string;
  /** Default: an in-process {@link MemoryJudgeCache}. */
  cache?: JudgeCache;
  /** Extra calls after an answer that does not parse (default 2). */
  maxParseRetries?: number;
  /** Default 0. */
  temperature?: number;
  /** Completion token limit per call. */
  maxTokens?: number;
}

/** A judged score plus whether it came from the cache (a cached score cost no call). */
export interface JudgeResult extends JudgeScore {
  cached: boolean;
}

/** The first 16 hex digits of SHA-256 of the rubric text: `agl.judge.rubric_hash`. */
export function rubricHash(rubric: string): string {
  return sha256Hex(rubric).slice(0, 16);
}

function parseJson(text: string): unknown {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/u.exec(text);
  return JSON.parse(fenced ? (fenced[1] as string) : text) as unknown;
}

function asScore(value: unknown): JudgeScore | string {
  if (!isRecord(value)) return 'the answer is not a JSON object';
  const { reward, rationale } = value;
  if (typeof reward !== 'number' || !Number.isFinite(reward) || reward < 0 || reward > 1)
    return `reward must be a number in [0, 1]; got ${JSON.stringify(reward)}`;
  return { reward, rationale: typeof rationale === 'string' ? rationale : '' };
}

function parseRubric(text: string): JudgeScore[] | string {
  const score = asScore(parseJson(text));
  return typeof score === 'string' ? score : [score];
}

function parseGroup(text: string, n: number): JudgeScore[] | string {
  const value = parseJson(text);
  const list = isRecord(value) && Array.isArray(value.scores) ? value.scores : null;
  if (!list) return 'the answer has no "scores" array';
  const out: (JudgeScore | undefined)[] = new Array(n).fill(undefined);
  for (const entry of list) {
    const id = isRecord(entry) ? Number(entry.id) : Number.NaN;
    if (!Number.isInteger(id) || id < 1 || id > n)
      return `unknown attempt id ${JSON.stringify(isRecord(entry) ? entry.id : entry)}`;
    const score = asScore(entry);
    if (typeof score === 'string') return `attempt ${id}: ${score}`;
    out[id - 1] = score;
  }
  const missing = out.findIndex((s) => s === undefined);
  return missing >= 0 ? `no score for attempt ${missing + 1}` : (out as JudgeScore[]);
}

/**
 * An LLM judge over any OpenAI-compatible model: {@link LlmJudge.rubric} scores one transcript against the rubric,
 * {@link LlmJudge.group} scores N runs of one task against each other in one call (the relative ranking of OpenPipe
 * ART's RULER). Answers use structured output (`response_format: json_schema`); an answer that does not parse is asked
 * again up to `maxParseRetries` times, then a {@link JudgeAnswerError} is thrown. Scores are cached by mode, model,
 * rubric and transcript(s): a cached score makes no call. A spent budget throws the client's `BudgetExceededError`.
 */
export class LlmJudge {
  readonly model: string;
  readonly rubricText: string;
  /** `agl.judge.rubric_hash` of the rubric. */
  readonly rubricHash: string;
  readonly client: ChatClient;
  readonly #cache: JudgeCache;
  readonly #retries: number;
  readonly #temperature: number;
  readonly #maxTokens: number | undefined;

  constructor(options: LlmJudgeOptions) {
    if (!options.model) throw new UserError('LlmJudge needs a model, e.g. { model: "gpt-4.1-mini" }.');
    if (!options.rubric?.trim()) throw new UserError('LlmJudge needs a non-empty rubric text.');
    const retries = options.maxParseRetries ?? 2;
    if (!Number.isInteger(retries) || retries < 0)
      throw new UserError(`LlmJudge maxParseRetries must be an integer ≥ 0; got ${String(options.maxParseRetries)}.`);
    this.client = options.client;
    this.model = options.model;
    this.rubricText = options.rubric;
    this.rubricHash = rubricHash(options.rubric);
    this.#cache = options.cache ?? new MemoryJudgeCache();
    this.#retries = retries;
    this.#temperature = options.temperature ?? 0;
    this.#maxTokens = options.maxTokens;
  }

  /** Scores one transcript against the rubric. */
  async rubric(transcript: string): Promise<JudgeResult> {
    const [score] = await this.#judge('rubric', [transcript]);
    return score as JudgeResult;
  }

  /** Scores the runs of one task against each other: one result per transcript, in order. One run = a rubric call. */
  async group(transcripts: readonly string[]): Promise<JudgeResult[]> {
    if (transcripts.length === 0) return [];
    if (transcripts.length === 1) return [await this.rubric(transcripts[0] as string)];
    return this.#judge('group', transcripts);
  }

  async #judge(mode: 'rubric' | 'group', transcripts: readonly string[]): Promise<JudgeResult[]> {
    const key = judgeCacheKey(mode, this.model, this.rubricText, transcripts);
    const hit = await this.#cache.get(key);
    if (hit && hit.length === transcripts.length) return hit.map((s) => ({ ...s, cached: true }));
    const user =
      mode === 'rubric'
        ? rubricUserMessage(this.rubricText, transcripts[0] as string)
        : groupUserMessage(this.rubricText, transcripts);
    let problem = '';
    let answer = '';
    for (let attempt = 0; attempt <= this.#retries; attempt += 1) {
      answer = await this.client.complete({
        model: this.model,
        messages: [
          { role: 'system', content: mode === 'rubric' ? RUBRIC_SYSTEM : GROUP_SYSTEM },
          { role: 'user', content: user },
        ],
        temperature: this.#temperature,
        maxTokens: this.#maxTokens,
        responseFormat: mode === 'rubric' ? RUBRIC_RESPONSE_FORMAT : GROUP_RESPONSE_FORMAT,
      });
      let parsed: JudgeScore[] | string;
      try {
        parsed = mode === 'rubric' ? parseRubric(answer) : parseGroup(answer, transcripts.length);
      } catch (err) {
        parsed = `not JSON (${err instanceof Error ? err.message : String(err)})`;
      }
      if (typeof parsed !== 'string') {
        await this.#cache.set(key, parsed);
        return parsed.map((s) => ({ ...s, cached: false }));
      }
      problem = parsed;
    }
    throw new JudgeAnswerError(
      `Judge model ${this.model} gave no usable ${mode} score after ${this.#retries + 1} tries: ${problem}. ` +
        'Use a model that supports structured output (response_format json_schema), or raise maxParseRetries.',
      answer,
    );
  }
}
