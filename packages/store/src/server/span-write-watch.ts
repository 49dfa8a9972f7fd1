import type { SpanInput } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';

/** The store methods that write spans; their first argument is a span or a list of spans. */
const SPAN_WRITES = new Set<PropertyKey>(['addSpan', 'addSpans', 'addSpansWithAttributesJson']);
/** The store method that ingests spans of any owners (OTLP); its first argument lists `{ span }` items. */
const INGEST_WRITES = 'ingestSpans';
/** The store method that applies a production recorder's batch; its first argument is the list of records. */
const RECORD_WRITES = 'applyProductionRecords';

/** The spans of a production records batch (its `spans` records). */
function spansOfRecords(arg: unknown): unknown[] {
  if (!Array.isArray(arg)) return [];
  return arg.flatMap((r: { kind?: unknown; spans?: unknown } | null) =>
    r?.kind === 'spans' && Array.isArray(r.spans) ? (r.spans as unknown[]) : [],
  );
}

/** The spans of `ingestSpans` items. */
function spansOfItems(arg: unknown): unknown[] {
  return Array.isArray(arg) ? arg.map((item: { span?: unknown } | null) => item?.span) : [];
}

function rolloutIdsOf(arg: unknown): string[] {
  const spans = (Array.isArray(arg) ? arg : [arg]) as Array<Partial<SpanInput> | null | undefined>;
  return [...new Set(spans.map((s) => s?.rolloutId).filter((id): id is string => typeof id === 'string'))];
}

/**
 * `store` with every span write reported: after `addSpan`/`addSpans` (and the SQLite text variant) settle, `onWrite`
 * gets the rollout ids written. Whatever writes through the returned store (span routes, OTLP, records, feedback,
 * events) is seen, so caches of span-derived values can drop what changed. Every other member is the store's own.
 */
export function watchSpanWrites(store: LightningStore, onWrite: (rolloutIds: string[]) => void): LightningStore {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      const records = key === RECORD_WRITES;
      const ingest = key === INGEST_WRITES;
      if (!records && !ingest && !SPAN_WRITES.has(key)) return method.bind(target);
      return (...args: unknown[]) => {
        const result = method.apply(target, args);
        if (!(result instanceof Promise)) return result;
        const report = (): void => {
          const spans = records ? spansOfRecords(args[0]) : ingest ? spansOfItems(args[0]) : args[0];
          const ids = rolloutIdsOf(spans);
          if (!records || ids.length > 0) onWrite(ids);
        };
        // Reported on failure too: part of a batch may have landed before the error.
        return result.finally(report);
      };
    },
  });
}
