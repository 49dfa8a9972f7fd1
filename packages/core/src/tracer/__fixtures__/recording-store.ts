import type { Span, SpanInput } from '../../schema/index';
import type { LightningStore } from '../../store/index';
import { AglTracer } from '../agl-tracer';

/**
 * The two store methods the processor calls, recording what it receives. Core cannot import @agl/store; the same
 * behaviours run against the real MemoryStore in packages/trainer/src/tracer-store.test.ts.
 */
export class RecordingStore {
  readonly batches: SpanInput[][] = [];
  readonly spans: Span[] = [];
  readonly counters = new Map<string, number>();
  failRollout: string | null = null;

  async getNextSpanSequenceIds(pairs: ReadonlyArray<readonly [string, string]>): Promise<number[]> {
    return pairs.map(([rolloutId]) => {
      const next = (this.counters.get(rolloutId) ?? 0) + 1;
      this.counters.set(rolloutId, next);
      return next;
    });
  }

  async addSpans(spans: SpanInput[]): Promise<Span[]> {
    await Promise.resolve();
    if (this.failRollout && spans.some((s) => s.rolloutId === this.failRollout)) {
      throw new Error(`Rollout ${this.failRollout} not found`);
    }
    this.batches.push(spans);
    this.spans.push(...(spans as Span[]));
    return spans as Span[];
  }

  asStore(): LightningStore {
    return this as unknown as LightningStore;
  }
}

const tracers: AglTracer[] = [];

/** A tracer with no exit hooks and a long export delay (tests flush it), shut down by {@link shutdownTracers}. */
export function newTracer(options: ConstructorParameters<typeof AglTracer>[0] = {}): AglTracer {
  const tracer = new AglTracer({ exitHooks: false, scheduledDelayMillis: 10_000, ...options });
  tracers.push(tracer);
  return tracer;
}
/** Shuts down every tracer {@link newTracer} made (an `afterEach`). */
export async function shutdownTracers(): Promise<void> {
  for (const t of tracers.splice(0)) await t.shutdown();
}
