import type { Span, SpanInput } from '@agl/core/schema';
import { prepareSpans, type SpanSerializer } from './rule-store';
import { attemptKey } from './rules';
import { call, type Rule } from './storage-ops';
import { addSpansRule, nextSequenceIdsRule, type RuleContext } from './store-rules';

/** A span to ingest (OTLP): its sequence id, or null for the store to issue one. */
export interface IngestSpan {
  span: SpanInput;
  sequenceId: number | null;
}

/** What {@link ingestSpansRule} did. */
export interface IngestSpansResult {
  /** The spans stored (a span already stored is skipped). */
  stored: Span[];
  /** The spans left out because their rollout, or their attempt of it, does not exist: index into the input. */
  unknown: Array<{ index: number; missing: 'rollout' | 'attempt' }>;
}

/**
 * Spans of any owners in one write transaction (OTLP ingest, reference v0 §3.4 steps 7–8): spans of a rollout or
 * attempt the store lacks are left out (reported by index), sequence ids are issued for the spans without one (in span
 * order), and the rest are checked and added as `addSpans` does, grouped by attempt. The rollouts are read with one
 * call where the storage can (`getRollouts`), so on PostgreSQL a request costs a few round trips, not several per
 * rollout. A span the schema refuses throws (a `ValidationError`), and nothing of the request stays.
 */
export function* ingestSpansRule(
  t: RuleContext,
  items: readonly IngestSpan[],
  serialize: SpanSerializer | undefined,
): Rule<IngestSpansResult> {
  const ids = [...new Set(items.map((item) => item.span.rolloutId))].sort();
  const found = yield* call('getRollouts', ids);
  const rollouts = new Set<string>();
  for (const id of ids) if (found ? found.has(id) : (yield* call('getRollout', id)) !== null) rollouts.add(id);
  const unknown: IngestSpansResult['unknown'] = [];
  const attempts = new Map<string, boolean>();
  /** Owned spans grouped by attempt, groups in the order first seen. */
  const groups = new Map<string, IngestSpan[]>();
  for (const [index, item] of items.entries()) {
    const { rolloutId, attemptId } = item.span;
    if (!rollouts.has(rolloutId)) {
      unknown.push({ index, missing: 'rollout' });
      continue;
    }
    const key = attemptKey(item.span);
    let known = attempts.get(key);
    if (known === undefined) {
      known = (yield* call('getAttempt', rolloutId, attemptId)) !== null;
      attempts.set(key, known);
    }
    if (!known) {
      unknown.push({ index, missing: 'attempt' });
      continue;
    }
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  const owned = items.filter((item) => groups.has(attemptKey(item.span)));
  const missing = owned.filter((item) => item.sequenceId === null);
  const issued =
    missing.length === 0
      ? []
      : yield* nextSequenceIdsRule(missing.map((item) => [item.span.rolloutId, item.span.attemptId] as const));
  const sequenceIds = new Map(missing.map((item, i) => [item, issued[i]!]));
  const spans = [...groups.values()]
    .flat()
    .map((item) => ({ ...item.span, sequenceId: item.sequenceId ?? sequenceIds.get(item)! }));
  if (spans.length === 0) return { stored: [], unknown };
  return { stored: yield* addSpansRule(t, prepareSpans(spans, serialize)), unknown };
}
