import { NotFoundError } from '@agl/core/errors';
import type { SpanInput } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import type { IngestSpan, IngestSpansResult } from '../engine/ingest-spans-rule';
import type { ConversionResult, ConvertedSpan } from './otlp-to-spans';

/** What an OTLP export did: spans stored, spans rejected (with why), spans skipped as duplicates. */
export interface OtlpIngestResult {
  accepted: number;
  duplicates: number;
  rejected: number;
  /** One line per reason, for `partialSuccess.errorMessage`. */
  messages: string[];
}

const MAX_MESSAGES = 5;

/** A store that ingests spans of any owners in one transaction (the embedded stores and PostgreSQL: `RuleStore`). */
interface SpanIngester {
  ingestSpans(items: readonly IngestSpan[]): Promise<IngestSpansResult>;
}

const ingestsSpans = (store: LightningStore): store is LightningStore & SpanIngester =>
  typeof (store as Partial<SpanIngester>).ingestSpans === 'function';

/**
 * Stores converted OTLP spans (reference v0 §3.4 steps 7–8): spans of an unknown rollout or attempt and spans without
 * an owner are rejected (counted, never silently dropped); missing sequence ids are issued in span order; the spans
 * are added as one `addSpans` does. A store with `ingestSpans` does it all in one transaction; any other (a remote
 * client) with reads, one bulk sequence id call and one `addSpans` call (per (rollout, attempt) group if one vanished
 * meanwhile).
 */
export async function ingestOtlpSpans(store: LightningStore, converted: ConversionResult): Promise<OtlpIngestResult> {
  const result: OtlpIngestResult = { accepted: 0, duplicates: 0, rejected: 0, messages: [] };
  const note = (message: string): void => {
    if (result.messages.length < MAX_MESSAGES) result.messages.push(message);
  };
  for (const span of converted.unowned) {
    result.rejected += 1;
    note(`${span.reason}; set them (for example through OTEL_RESOURCE_ATTRIBUTES)`);
  }
  if (ingestsSpans(store)) {
    if (converted.spans.length === 0) return result;
    const { stored, unknown } = await store.ingestSpans(converted.spans);
    for (const { index, missing } of unknown) {
      const span = converted.spans[index]!.span;
      result.rejected += 1;
      note(
        missing === 'rollout'
          ? `span "${span.name}" names unknown rollout ${span.rolloutId}`
          : `span "${span.name}" names unknown attempt ${span.attemptId} of rollout ${span.rolloutId}`,
      );
    }
    result.accepted += stored.length;
    result.duplicates += converted.spans.length - unknown.length - stored.length;
    return result;
  }

  const attemptsByRollout = new Map<string, Set<string> | null>();
  const owned: ConvertedSpan[] = [];
  for (const item of converted.spans) {
    const span = item.span;
    if (!attemptsByRollout.has(span.rolloutId)) {
      const rollout = await store.getRolloutById(span.rolloutId);
      const attempts =
        rollout === null
          ? null
          : new Set((await store.queryAttempts({ rolloutId: span.rolloutId })).items.map((a) => a.attemptId));
      attemptsByRollout.set(span.rolloutId, attempts);
    }
    const attempts = attemptsByRollout.get(span.rolloutId);
    if (attempts === null || attempts === undefined) {
      result.rejected += 1;
      note(`span "${span.name}" names unknown rollout ${span.rolloutId}`);
    } else if (!attempts.has(span.attemptId)) {
      result.rejected += 1;
      note(`span "${span.name}" names unknown attempt ${span.attemptId} of rollout ${span.rolloutId}`);
    } else {
      owned.push(item);
    }
  }

  const missing = owned.filter((item) => item.sequenceId === null);
  if (missing.length > 0) {
    const ids = await store.getNextSpanSequenceIds(
      missing.map((item) => [item.span.rolloutId, item.span.attemptId] as const),
    );
    missing.forEach((item, i) => {
      item.sequenceId = ids[i]!;
    });
  }

  const groups = new Map<string, SpanInput[]>();
  for (const { span, sequenceId } of owned) {
    const key = `${span.rolloutId}\u0000${span.attemptId}`;
    const group = groups.get(key) ?? [];
    group.push({ ...span, sequenceId: sequenceId ?? 0 });
    groups.set(key, group);
  }
  // One write for the whole request; only when a rollout or attempt vanished since the check above, group by group.
  try {
    const all = [...groups.values()].flat();
    if (all.length > 0) {
      const stored = await store.addSpans(all);
      result.accepted += stored.length;
      result.duplicates += all.length - stored.length;
    }
    return result;
  } catch (error) {
    if (!NotFoundError.isInstance(error)) throw error;
  }
  for (const group of groups.values()) {
    try {
      const stored = await store.addSpans(group);
      result.accepted += stored.length;
      result.duplicates += group.length - stored.length;
    } catch (error) {
      if (!NotFoundError.isInstance(error)) throw error;
      result.rejected += group.length;
      note(error.message);
    }
  }
  return result;
}
