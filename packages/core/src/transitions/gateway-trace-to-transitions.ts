import type { ChatMessage, Span, Trajectory, Transition } from '../schema/index';
import {
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_HOSTED_VLLM_CHOICES,
  ATTR_HOSTED_VLLM_ID,
  ATTR_HOSTED_VLLM_PROMPT_TOKEN_IDS,
  ATTR_HOSTED_VLLM_RESPONSE_TOKEN_IDS,
  SPAN_LITELLM_REQUEST,
  SPAN_RAW_GEN_AI_REQUEST,
} from '../semconv';
import { asTokenIds, normalizeLlmCall } from './llm-call-normalizer';
import { filterAndUnflatten } from './otel-attributes';
import { findFinalReward, findFinalRewardSpan, getRewardSource, getRewardValue } from './reward-readers';
import { taskIdOf } from './task-id';
import { isGatewaySpan, sortSpans, type RolloutInfo } from './trace-to-transitions';

interface LlmItem {
  span: Span;
  promptTokenIds: number[];
  responseTokenIds: number[];
  requestId: string | null;
}

function parseLiteral(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value.replace(/\(/g, '[').replace(/\)/g, ']').replace(/'/g, '"')) as unknown;
  } catch {
    return undefined;
  }
}

function vllmItem(span: Span): LlmItem | null {
  const a = span.attributes;
  const promptTokenIds = asTokenIds(parseLiteral(a[ATTR_HOSTED_VLLM_PROMPT_TOKEN_IDS])) ?? [];
  const nested = parseLiteral(a[ATTR_HOSTED_VLLM_RESPONSE_TOKEN_IDS]);
  let responseTokenIds = Array.isArray(nested) ? (asTokenIds(nested[0]) ?? []) : [];
  if (responseTokenIds.length === 0) {
    const choices = parseLiteral(a[ATTR_HOSTED_VLLM_CHOICES]) ?? filterAndUnflatten(a, ATTR_HOSTED_VLLM_CHOICES);
    const first = Array.isArray(choices) ? (choices[0] as Record<string, unknown> | undefined) : undefined;
    responseTokenIds = asTokenIds(first?.token_ids) ?? [];
  }
  const id = a[ATTR_GEN_AI_RESPONSE_ID] ?? a[ATTR_HOSTED_VLLM_ID];
  return { span, promptTokenIds, responseTokenIds, requestId: typeof id === 'string' ? id : null };
}

function genericItem(span: Span): LlmItem | null {
  const call = normalizeLlmCall(span.attributes);
  const a = span.attributes;
  const promptTokenIds = call?.promptTokenIds ?? asTokenIds(parseLiteral(a.prompt_token_ids)) ?? [];
  const responseTokenIds = call?.responseTokenIds ?? asTokenIds(parseLiteral(a.response_token_ids)) ?? [];
  const id = a[ATTR_GEN_AI_RESPONSE_ID];
  return { span, promptTokenIds, responseTokenIds, requestId: typeof id === 'string' ? id : null };
}

/** Options of {@link GatewayTraceToTransitions}. */
export interface GatewayTraceToTransitionsOptions {
  /** Besides `raw_gen_ai_request` and `litellm_request`, which spans are gateway LLM calls. Default: `agl.gateway` spans. */
  isGatewayCall?: (span: Span) => boolean;
}

/**
 * Converts LLM-proxy / gateway spans into transitions ordered by **sequence id only** (AGL 0.3
 * `LlmProxyTraceToTriplet`, reference §5.8). Only calls with both prompt and response token ids count; a repeated
 * request id is skipped. Each reward goes to the latest unassigned call with a strictly smaller sequence id; a reward
 * that precedes every call is dropped.
 */
export class GatewayTraceToTransitions {
  readonly #isGateway: (span: Span) => boolean;

  constructor(options: GatewayTraceToTransitionsOptions = {}) {
    this.#isGateway = options.isGatewayCall ?? isGatewaySpan;
  }

  /** The transitions, in sequence order. */
  transitions(spans: readonly Span[]): Transition[] {
    const ordered = sortSpans(spans);
    const items: LlmItem[] = [];
    const seen = new Set<string>();
    for (const span of ordered) {
      let item: LlmItem | null = null;
      if (span.name === SPAN_RAW_GEN_AI_REQUEST) item = vllmItem(span);
      else if (span.name === SPAN_LITELLM_REQUEST || this.#isGateway(span)) item = genericItem(span);
      if (!item || item.promptTokenIds.length === 0 || item.responseTokenIds.length === 0) continue;
      if (item.requestId !== null) {
        if (seen.has(item.requestId)) continue;
        seen.add(item.requestId);
      }
      items.push(item);
    }
    // Feedback and judge scores are rollout-level: the one that wins (findFinalRewardSpan) goes to the last call, the
    // others to none. The agent's own rewards go to the call before them, as before.
    const finalSpan = findFinalRewardSpan(ordered);
    const rolloutLevel = finalSpan !== null && getRewardSource(finalSpan) !== 'agent' ? finalSpan : null;
    const rewards: Array<{ seq: number; value: number }> = [];
    for (const span of ordered) {
      const value = getRewardValue(span);
      if (value !== null && getRewardSource(span) === 'agent') rewards.push({ seq: span.sequenceId, value });
    }
    const assigned = new Map<LlmItem, number>();
    for (const reward of rewards) {
      for (let i = items.length - 1; i >= 0; i -= 1) {
        const item = items[i] as LlmItem;
        if (item.span.sequenceId < reward.seq && !assigned.has(item)) {
          assigned.set(item, reward.value);
          break;
        }
      }
    }
    const lastItem = items[items.length - 1];
    if (rolloutLevel && lastItem) assigned.set(lastItem, getRewardValue(rolloutLevel) as number);
    return items.map((item, i) => {
      const call = normalizeLlmCall(item.span.attributes);
      const message: ChatMessage = call?.choices[0] ?? { role: 'assistant', content: null };
      const transition: Transition = {
        agentName: null,
        state: { messages: call?.messages ?? [], tokenIds: item.promptTokenIds },
        action: { message, tokenIds: item.responseTokenIds },
        reward: assigned.get(item) ?? null,
        done: i === items.length - 1,
        spanIds: [item.span.spanId],
        responseId: item.requestId,
        sequenceId: item.span.sequenceId,
      };
      if (call?.logprobs) transition.action.logprobs = call.logprobs;
      return transition;
    });
  }

  /** The trajectory of one attempt's gateway spans. */
  adapt(spans: readonly Span[], rollout?: RolloutInfo): Trajectory {
    const ordered = sortSpans(spans);
    const finalReward = findFinalReward(ordered);
    const rolloutId = rollout?.rolloutId ?? spans[0]?.rolloutId ?? '';
    return {
      rolloutId,
      attemptId: spans[0]?.attemptId ?? '',
      taskId: rollout ? taskIdOf({ input: rollout.input ?? null, metadata: rollout.metadata ?? null }) : rolloutId,
      mode: rollout?.mode ?? null,
      transitions: this.transitions(spans),
      finalReward,
    };
  }
}
