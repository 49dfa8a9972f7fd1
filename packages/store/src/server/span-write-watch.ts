import type { SpanInput } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';

/** The store methods that write spans; their first argument is a span or a list of spans. */
const SPAN_WRITES = new Set<PropertyKey>(['addSpan', 'addSpans', 'addSpansWithAttributesJson']);

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
      if (!SPAN_WRITES.has(key)) return method.bind(target);
      return (...args: unknown[]) => {
        const result = method.apply(target, args);
        if (!(result instanceof Promise)) return result;
        const report = (): void => onWrite(rolloutIdsOf(args[0]));
        // Reported on failure too: part of a batch may have landed before the error.
        return result.finally(report);
      };
    },
  });
}
