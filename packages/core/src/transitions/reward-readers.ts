import {
  ATTR_AGENTOPS_ENTITY_OUTPUT,
  ATTR_AGENTOPS_TASK_OUTPUT,
  ATTR_LEGACY_REWARD,
  ATTR_MESSAGE_BODY,
  ATTR_OBJECT_JSON,
  ATTR_OBJECT_LITERAL,
  ATTR_OBJECT_TYPE,
  ATTR_OPERATION_NAME,
  ATTR_FEEDBACK_COMMENT,
  ATTR_REWARD,
  ATTR_REWARD_SOURCE,
  REWARD_SOURCES,
  SPAN_ANNOTATION,
  SPAN_MESSAGE,
  SPAN_OBJECT,
  SPAN_OPERATION,
  SPAN_REWARD,
} from '../semconv';
import { filterAndUnflatten, hasPrefix } from './otel-attributes';

/** The parts of a span the readers look at (a stored `Span` or emitted core fields). */
export interface SpanLike {
  name: string;
  attributes: Readonly<Record<string, unknown>>;
  sequenceId?: number;
  startTime?: number | null;
}

/** One reward dimension. */
export interface RewardDimension {
  name: string;
  value: number;
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
}

/** Every reward dimension on the span (`agentlightning.reward.{i}.name/value`), index 0 first. */
export function getRewardsFromSpan(span: SpanLike): RewardDimension[] {
  if (!hasPrefix(span.attributes, ATTR_REWARD)) return [];
  const value = filterAndUnflatten(span.attributes, ATTR_REWARD);
  const list = Array.isArray(value) ? value : value && typeof value === 'object' ? Object.values(value) : [value];
  const out: RewardDimension[] = [];
  list.forEach((entry, i) => {
    if (entry && typeof entry === 'object') {
      const rec = entry as Record<string, unknown>;
      const v = toNumber(rec.value);
      if (v !== null) out.push({ name: typeof rec.name === 'string' ? rec.name : String(i), value: v });
    } else {
      const v = toNumber(entry);
      if (v !== null) out.push({ name: String(i), value: v });
    }
  });
  return out;
}

function legacyAgentOpsReward(raw: unknown): number | null {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return null;
    }
  }
  if (value && typeof value === 'object' && (value as Record<string, unknown>).type === 'reward') {
    return toNumber((value as Record<string, unknown>).value);
  }
  return null;
}

/**
 * The primary reward of a span, or `null` (AGL 0.3 `get_reward_value`): `agentlightning.reward.0.value`; else a legacy
 * AgentOps `{"type":"reward","value":v}` output; else the v0.2 `reward` attribute of an annotation span.
 */
export function getRewardValue(span: SpanLike): number | null {
  const dims = getRewardsFromSpan(span);
  if (dims.length > 0) return (dims[0] as RewardDimension).value;
  for (const key of [ATTR_AGENTOPS_TASK_OUTPUT, ATTR_AGENTOPS_ENTITY_OUTPUT]) {
    const legacy = legacyAgentOpsReward(span.attributes[key] ?? filterAndUnflatten(span.attributes, key));
    if (legacy !== null) return legacy;
  }
  if (span.name === SPAN_ANNOTATION && ATTR_LEGACY_REWARD in span.attributes) {
    return toNumber(span.attributes[ATTR_LEGACY_REWARD]);
  }
  return null;
}

/** True when the span carries a reward. */
export function isRewardSpan(span: SpanLike): boolean {
  return getRewardValue(span) !== null;
}

/** True for a reward span or an `agentlightning.operation` named `agentlightning.reward` (judge calls inside). */
export function isRewardScope(span: SpanLike): boolean {
  return isRewardSpan(span) || (span.name === SPAN_OPERATION && span.attributes[ATTR_OPERATION_NAME] === SPAN_REWARD);
}

/** The reward spans, in input order. */
export function findRewardSpans<T extends SpanLike>(spans: readonly T[]): T[] {
  return spans.filter(isRewardSpan);
}

/** Who gave a reward span its value (`agl.reward.source`): a user's `feedback`, a `judge`, or the `agent`. */
export type RewardSource = 'feedback' | 'judge' | 'agent';

/**
 * The source of a reward span: `feedback` or `judge` on an annotation span that says so (`feedback` and judges write
 * annotation spans), else `agent`.
 */
export function getRewardSource(span: SpanLike): RewardSource {
  if (span.name !== SPAN_ANNOTATION) return 'agent';
  const source = span.attributes[ATTR_REWARD_SOURCE];
  return source === REWARD_SOURCES.feedback || source === REWARD_SOURCES.judge ? source : 'agent';
}

/**
 * The span that holds a rollout's final reward, or `null`. Spans are read in input order (sort them first): the latest
 * user feedback wins, else the latest reward the agent (or runner) emitted, else the latest judge score. So a thumbs-up
 * given days later overrides the agent's own reward, and a judge fills in only where nobody else scored.
 *
 * It reads from the end, and once it has the latest agent reward it looks only at annotation spans (where feedback and
 * judge scores live), so the other spans' attributes are not read.
 */
export function findFinalRewardSpan<T extends SpanLike>(spans: readonly T[]): T | null {
  let agent: T | null = null;
  let judge: T | null = null;
  for (let i = spans.length - 1; i >= 0; i -= 1) {
    const span = spans[i] as T;
    if (agent !== null && span.name !== SPAN_ANNOTATION) continue;
    if (!isRewardSpan(span)) continue;
    const source = getRewardSource(span);
    if (source === 'feedback') return span;
    if (source === 'agent') agent ??= span;
    else judge ??= span;
  }
  return agent ?? judge;
}

/** The final reward of a rollout's spans (in input order), by the precedence of {@link findFinalRewardSpan}; or `null`. */
export function findFinalReward(spans: readonly SpanLike[]): number | null {
  const span = findFinalRewardSpan(spans);
  return span ? getRewardValue(span) : null;
}

/** One user feedback on a rollout, as `listFeedback` reads it. */
export interface FeedbackEntry {
  /** The primary reward. */
  reward: number;
  /** The user's comment, when given. */
  comment?: string;
  /** Further named scores (reward entries 1..n). */
  dimensions: Record<string, number>;
  sequenceId: number | null;
  /** When it was given (epoch seconds), when known. */
  time: number | null;
  spanId: string | null;
}

/** Every feedback span's reward, comment and dimensions, in input order (oldest first when the spans are sorted). */
export function listFeedback(spans: readonly (SpanLike & { spanId?: string })[]): FeedbackEntry[] {
  const out: FeedbackEntry[] = [];
  for (const span of spans) {
    if (getRewardSource(span) !== 'feedback') continue;
    const dims = getRewardsFromSpan(span);
    const primary = dims[0];
    if (!primary) continue;
    const comment = span.attributes[ATTR_FEEDBACK_COMMENT];
    out.push({
      reward: primary.value,
      ...(typeof comment === 'string' ? { comment } : {}),
      dimensions: Object.fromEntries(dims.slice(1).map((d) => [d.name, d.value])),
      sequenceId: span.sequenceId ?? null,
      time: span.startTime ?? null,
      spanId: span.spanId ?? null,
    });
  }
  return out;
}

/** The body of an `agentlightning.message` span, or `null`. */
export function getMessageValue(span: SpanLike): string | null {
  if (span.name !== SPAN_MESSAGE) return null;
  const body = span.attributes[ATTR_MESSAGE_BODY];
  return typeof body === 'string' ? body : null;
}

/** The value of an `agentlightning.object` span (the inverse of `emitObject`), or `undefined`. */
export function getObjectValue(span: SpanLike): unknown {
  if (span.name !== SPAN_OBJECT) return undefined;
  const type = span.attributes[ATTR_OBJECT_TYPE];
  const literal = span.attributes[ATTR_OBJECT_LITERAL];
  const json = span.attributes[ATTR_OBJECT_JSON];
  if (typeof json === 'string') return JSON.parse(json) as unknown;
  if (typeof literal !== 'string') return undefined;
  switch (type) {
    case 'int':
    case 'float':
      return Number(literal);
    case 'bool':
      return literal === 'True' || literal === 'true';
    case 'bytes':
      return Uint8Array.from(atob(literal), (c) => c.charCodeAt(0));
    default:
      return literal;
  }
}
