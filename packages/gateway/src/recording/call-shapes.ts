import { SPAN_CHAT_COMPLETION, SPAN_COMPLETION } from '@agl/core/semconv';
import {
  anthropicRequestToChat,
  anthropicResponseToCanonical,
  chatResponseToAnthropic,
} from '../translation/anthropic-translation';
import type { CanonicalRequest, CanonicalResponse } from './canonical-call';
import type { CallKind, CallPlan } from '../upstream/call-plan';
import type { JsonRecord } from '../routes/http-io';
import {
  chatRequestToCanonical,
  chatResponseToCanonical,
  completionRequestToCanonical,
  completionResponseToCanonical,
  responsesRequestToCanonical,
  responsesResponseToCanonical,
} from './openai-canonical';
import { stripResponse } from '../upstream/upstream-body';

/** Span name of a call (Contract 2): chat-like calls are `openai.chat.completion` whatever the provider. */
export function spanNameOf(kind: CallKind): string {
  return kind === 'completion' ? SPAN_COMPLETION : SPAN_CHAT_COMPLETION;
}

/** `gen_ai.system` of a call: the API the client spoke. */
export function systemOf(kind: CallKind): string {
  return kind === 'anthropic-passthrough' || kind === 'anthropic-translate' ? 'anthropic' : 'openai';
}

/** The request as the backend saw it, in canonical form. */
export function canonicalRequestOf(plan: CallPlan): CanonicalRequest {
  const body = plan.prepared.body;
  switch (plan.kind) {
    case 'completion':
      return completionRequestToCanonical(body);
    case 'responses':
      return responsesRequestToCanonical(body);
    case 'anthropic-passthrough':
      return chatRequestToCanonical(anthropicRequestToChat(body));
    default:
      return chatRequestToCanonical(body);
  }
}

/** A complete backend answer in canonical form. */
export function canonicalResponseOf(kind: CallKind, body: JsonRecord): CanonicalResponse {
  switch (kind) {
    case 'completion':
      return completionResponseToCanonical(body);
    case 'responses':
      return responsesResponseToCanonical(body);
    case 'anthropic-passthrough':
      return anthropicResponseToCanonical(body);
    default:
      return chatResponseToCanonical(body);
  }
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
