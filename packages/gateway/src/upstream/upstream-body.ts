import { isRecord, type JsonRecord } from '@agl/core/guards';
import { chatResponseToAnthropic } from '../translation/anthropic-translation';
import type { CallPlan } from './call-plan';

/** What the gateway changes in a request before it goes to the backend. */
export interface CallOverrides {
  /** Model name to send instead of the client's, or `null` to keep it. */
  model: string | null;
  /** Sampling parameters that replace the client's (temperature, top_p, ...). */
  sampling: Record<string, unknown>;
  /** Ask the backend for `return_token_ids` and logprobs (training calls). */
  collectTokenIds: boolean;
}

/** Which extras the client itself asked for (those are never stripped). */
export interface ClientAsked {
  tokenIds: boolean;
  logprobs: boolean;
  usage: boolean;
}

/** The body to send upstream, and what must be stripped from the answer. */
export interface PreparedBody {
  body: JsonRecord;
  asked: ClientAsked;
  /** True when the answer carries extras the client did not ask for. */
  strip: boolean;
}

/**
 * Rewrites an OpenAI-style request for the backend: model and sampling overrides, `return_token_ids: true` and
 * logprobs on training calls, and `stream_options.include_usage` on streams (so the span gets usage). Remembers what
 * the client asked for so the extras can be stripped from its answer.
 */
export function prepareUpstreamBody(
  api: 'chat' | 'completion' | 'responses' | 'messages',
  client: JsonRecord,
  overrides: CallOverrides,
  recording = true,
): PreparedBody {
  const body: JsonRecord = { ...client };
  if (overrides.model !== null) body.model = overrides.model;
  Object.assign(body, overrides.sampling);
  const streamOptions = isRecord(client.stream_options) ? client.stream_options : null;
  const asked: ClientAsked = {
    tokenIds: client.return_token_ids === true,
    logprobs: api === 'completion' ? typeof client.logprobs === 'number' : client.logprobs === true,
    usage: streamOptions?.include_usage === true,
  };
  let strip = false;
  if (overrides.collectTokenIds && api !== 'messages') {
    body.return_token_ids = true;
    if (api === 'chat' && body.logprobs !== true) body.logprobs = true;
    if (api === 'completion' && typeof body.logprobs !== 'number') body.logprobs = 1;
    strip = !asked.tokenIds || (!asked.logprobs && api !== 'responses');
  }
  if (recording && (api === 'chat' || api === 'completion') && body.stream === true && !asked.usage) {
    body.stream_options = { ...(streamOptions ?? {}), include_usage: true };
    strip = true;
  }
  return { body, asked, strip };
}

function stripChoices(choices: unknown, asked: ClientAsked): void {
  if (!Array.isArray(choices)) return;
  for (const choice of choices) {
    if (!isRecord(choice)) continue;
    if (!asked.tokenIds) {
      delete choice.token_ids;
      delete choice.prompt_token_ids;
    }
    if (!asked.logprobs && 'logprobs' in choice) choice.logprobs = null;
  }
}

/** Removes the extras the client did not ask for from a non-streaming chat/completions answer (in place). */
export function stripResponse(body: JsonRecord, asked: ClientAsked): void {
  if (!asked.tokenIds) {
    delete body.prompt_token_ids;
    delete body.prompt_logprobs;
  }
  stripChoices(body.choices, asked);
}

/**
 * Removes the extras from one stream chunk (in place). Returns `false` when the whole chunk must be dropped (the
 * usage-only chunk the gateway asked for).
 */
export function stripChunk(chunk: JsonRecord, asked: ClientAsked): boolean {
  if (!asked.usage) {
    if (Array.isArray(chunk.choices) && chunk.choices.length === 0 && chunk.usage !== undefined) return false;
    delete chunk.usage;
  }
  stripResponse(chunk, asked);
  return true;
}

/**
 * What the client gets for a non-streaming answer: the Anthropic translation, or the backend's body with the extras
 * it did not ask for stripped. `null` means "send the backend's bytes unchanged".
 */
export function clientBodyOf(plan: CallPlan, upstream: JsonRecord, clientModel: unknown): JsonRecord | null {
  if (plan.kind === 'anthropic-translate') return chatResponseToAnthropic(upstream, clientModel);
  if (!plan.prepared.strip || plan.kind === 'anthropic-passthrough') return null;
  stripResponse(upstream, plan.prepared.asked);
  return upstream;
}
