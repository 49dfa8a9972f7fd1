import type { ChatMessage, RolloutMode, Span, Trajectory, Transition } from '../schema/index';
import type { LightningStore } from '../store/index';
import { ATTR_AGL_GATEWAY } from '../semconv';
import type { SpanMapper } from './genai-span-mapper';
import { findLlmCalls, llmCallMatcher, responseIdOf, type AgentMatch, type LlmCallMatch } from './llm-calls';
import { normalizeLlmCall, type NormalizedLlmCall } from './llm-call-normalizer';
import { matchRewards, type RewardMatchPolicy } from './reward-matching';
import { findFinalReward, findFinalRewardSpan, getRewardValue } from './reward-readers';
import { taskIdOf } from './task-id';
import { buildTraceTree, repairHierarchy } from './trace-tree';

/** Options of {@link TraceToTransitions} (AGL 0.3 `TracerTraceToTriplet`, reference §5.7). */
export interface TraceToTransitionsOptions {
  /** Re-attach LLM spans hung on the outer root (§5.2). Default true. */
  repairHierarchy?: boolean;
  /** Which spans are LLM calls. Default: Contract 2 names, GenAI `chat` spans, OpenInference `LLM` spans. */
  llmCallMatch?: LlmCallMatch;
  /** Keep only calls made inside a matching agent (regex search, or an exact name). Default: every call. */
  agentMatch?: AgentMatch | null;
  /** Ignore LLM calls inside reward spans (LLM-as-judge). Default true. */
  excludeLlmCallInReward?: boolean;
  /** Reward matching policy. Default `first_occurrence`. */
  rewardMatch?: RewardMatchPolicy;
  /** Drop calls whose prompt or response token ids are empty, before rewards are matched. Default false. */
  skipEmptyTokenSpans?: boolean;
  /**
   * Contract 3: the final reward (the last reward span by sequence id) goes on the last transition, overriding what
   * matching gave it; other rewards are matched by the AGL 0.3 rules. `false` = pure AGL 0.3 matching. Default true.
   */
  finalRewardOnLastCall?: boolean;
  /**
   * Read-time rewrite of each span before anything else (framework presets: `genAiSpanMapper`, CrewAI agent names).
   * The store keeps the spans as sent. Default: none.
   */
  spanMapper?: SpanMapper;
  /** The agent a span stands for; `null` = not an agent span. Default `agentNameOf` (AGL 0.3 order). */
  agentName?: (span: Span) => string | null;
}

/** What the adapter needs to know about the rollout (a `Rollout` fits). */
export interface RolloutInfo {
  rolloutId: string;
  input?: unknown;
  mode?: RolloutMode;
  metadata?: Record<string, unknown> | null;
}

/** True for a span written by the AGL gateway (the source of truth for token ids). */
export function isGatewaySpan(span: Span): boolean {
  return span.attributes[ATTR_AGL_GATEWAY] === true;
}

function hasTokens(call: NormalizedLlmCall | null): boolean {
  return !!call && ((call.promptTokenIds?.length ?? 0) > 0 || (call.responseTokenIds?.length ?? 0) > 0);
}

/** Orders spans by sequence id, then start time (stable). */
export function sortSpans(spans: readonly Span[]): Span[] {
  return spans
    .map((span, i) => ({ span, i }))
    .sort(
      (a, b) => a.span.sequenceId - b.span.sequenceId || (a.span.startTime ?? 0) - (b.span.startTime ?? 0) || a.i - b.i,
    )
    .map((e) => e.span);
}

/**
 * Turns one attempt's spans into a `Trajectory` of `Transition`s (DESIGN.md Contract 3): builds the span tree, repairs
 * the hierarchy, selects the LLM calls (optionally one agent's, via `agentMatch`), matches rewards, and reads prompt and
 * response messages plus token ids and logprobs. LLM calls are read in the Contract 2 layout, GenAI JSON messages or
 * OpenInference form. When a gateway span and an adapter span describe the same call (same `gen_ai.response.id`), the
 * call is counted once: tokens from the gateway, structure (agent, messages) from the adapter.
 */
export class TraceToTransitions {
  readonly #options: Required<
    Omit<TraceToTransitionsOptions, 'llmCallMatch' | 'agentMatch' | 'spanMapper' | 'agentName'>
  > &
    Pick<TraceToTransitionsOptions, 'llmCallMatch' | 'agentMatch' | 'spanMapper' | 'agentName'>;

  constructor(options: TraceToTransitionsOptions = {}) {
    this.#options = {
      repairHierarchy: options.repairHierarchy ?? true,
      excludeLlmCallInReward: options.excludeLlmCallInReward ?? true,
      rewardMatch: options.rewardMatch ?? 'first_occurrence',
      skipEmptyTokenSpans: options.skipEmptyTokenSpans ?? false,
      finalRewardOnLastCall: options.finalRewardOnLastCall ?? true,
      llmCallMatch: options.llmCallMatch,
      agentMatch: options.agentMatch ?? null,
      spanMapper: options.spanMapper,
      agentName: options.agentName,
    };
  }

  /** The transitions of the spans, in call order (empty when there are no spans or no LLM calls). */
  transitions(input: readonly Span[]): Transition[] {
    if (input.length === 0) return [];
    const o = this.#options;
    const spans = o.spanMapper ? input.map(o.spanMapper) : input;
    const root = buildTraceTree(spans);
    if (o.repairHierarchy) repairHierarchy(root);

    const isLlm = llmCallMatcher(o.llmCallMatch);
    const groups = new Map<string, Span[]>();
    for (const span of spans) {
      if (!isLlm(span)) continue;
      const rid = responseIdOf(span);
      if (rid === null) continue;
      const list = groups.get(rid);
      if (list) list.push(span);
      else groups.set(rid, [span]);
    }
    const skip = new Set<string>();
    for (const group of groups.values()) {
      if (group.some((s) => !isGatewaySpan(s))) for (const s of group) if (isGatewaySpan(s)) skip.add(s.spanId);
    }

    const found = findLlmCalls(root, {
      llmCallMatch: isLlm,
      agentMatch: o.agentMatch,
      excludeLlmCallInReward: o.excludeLlmCallInReward,
      skip,
      agentName: o.agentName,
    });
    type Built = { transition: Transition; id: string };
    let built: Built[] = found.map(({ node, agentName }) => ({
      id: node.id,
      transition: this.#toTransition(node.span, agentName, groups),
    }));
    if (o.skipEmptyTokenSpans) {
      built = built.filter(
        (b) => (b.transition.state.tokenIds?.length ?? 0) > 0 && (b.transition.action.tokenIds?.length ?? 0) > 0,
      );
    }

    const ordered = sortSpans(spans);
    const finalSpan = findFinalRewardSpan(ordered);
    const ignore = new Set<string>();
    if (o.finalRewardOnLastCall && finalSpan) ignore.add(finalSpan.spanId);
    const rewards = matchRewards(root, new Set(built.map((b) => b.id)), {
      policy: o.rewardMatch,
      ignoreRewardSpans: ignore,
    });
    built.forEach((b, i) => {
      b.transition.reward = rewards.get(b.id) ?? null;
      b.transition.done = i === built.length - 1;
    });
    const last = built[built.length - 1];
    if (last && o.finalRewardOnLastCall && finalSpan) last.transition.reward = getRewardValue(finalSpan);
    return built.map((b) => b.transition);
  }

  /** The trajectory of one attempt's spans. `rollout` supplies the task id (Contract 3) and mode. */
  adapt(spans: readonly Span[], rollout?: RolloutInfo): Trajectory {
    const first = spans[0];
    const ordered = sortSpans(spans);
    const finalReward = findFinalReward(ordered);
    const rolloutId = rollout?.rolloutId ?? first?.rolloutId ?? '';
    return {
      rolloutId,
      attemptId: first?.attemptId ?? '',
      taskId: rollout ? taskIdOf({ input: rollout.input ?? null, metadata: rollout.metadata ?? null }) : rolloutId,
      mode: rollout?.mode ?? null,
      transitions: this.transitions(spans),
      finalReward,
    };
  }

  /** Reads an attempt's spans (default: the latest attempt) and its rollout from a store, then {@link adapt}s them. */
  async fromStore(options: { store: LightningStore; rolloutId: string; attemptId?: string }): Promise<Trajectory> {
    const { store, rolloutId } = options;
    const rollout = await store.getRolloutById(rolloutId);
    const page = await store.querySpans({ rolloutId, attemptId: options.attemptId ?? 'latest' });
    const trajectory = this.adapt(page.items, rollout ?? { rolloutId });
    if (page.items.length === 0) {
      const attempt = options.attemptId ?? (await store.getLatestAttempt(rolloutId))?.attemptId ?? '';
      trajectory.attemptId = attempt;
    }
    return trajectory;
  }

  #toTransition(span: Span, agentName: string, groups: Map<string, Span[]>): Transition {
    const own = normalizeLlmCall(span.attributes);
    const rid = responseIdOf(span) ?? own?.responseId ?? null;
    let tokenSource: { span: Span; call: NormalizedLlmCall | null } = { span, call: own };
    if (rid !== null) {
      const twins = (groups.get(rid) ?? []).filter((s) => s.spanId !== span.spanId);
      const candidates = [...twins.filter(isGatewaySpan), ...twins.filter((s) => !isGatewaySpan(s))];
      for (const twin of candidates) {
        const call = normalizeLlmCall(twin.attributes);
        if (hasTokens(call) && (isGatewaySpan(twin) || !hasTokens(own))) {
          tokenSource = { span: twin, call };
          break;
        }
      }
    }
    const structure = own && (own.messages.length > 0 || own.choices.length > 0) ? own : tokenSource.call;
    const messages: ChatMessage[] = structure?.messages ?? [];
    const message: ChatMessage = structure?.choices[0] ??
      tokenSource.call?.choices[0] ?? { role: 'assistant', content: null };
    const tokens = tokenSource.call;
    const transition: Transition = {
      agentName: agentName === '*' ? null : agentName,
      state: { messages },
      action: { message },
      reward: null,
      done: false,
      spanIds: tokenSource.span === span ? [span.spanId] : [span.spanId, tokenSource.span.spanId],
      responseId: rid,
      sequenceId: span.sequenceId,
    };
    if (tokens?.promptTokenIds) transition.state.tokenIds = tokens.promptTokenIds;
    if (tokens?.responseTokenIds) transition.action.tokenIds = tokens.responseTokenIds;
    const logprobs = tokens?.logprobs ?? own?.logprobs;
    if (logprobs) transition.action.logprobs = logprobs;
    return transition;
  }
}
