import { trace, ProxyTracerProvider, type Tracer } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_TRACER_NAME } from '../semconv';
import { ensureContextManager } from './context-manager';
import { installExitFlush } from './exit-flush';
import {
  LightningSpanProcessor,
  type LightningSpanProcessorOptions,
  type SpanProcessorStats,
} from './lightning-span-processor';
import type { RolloutTracer } from './rollout-context';

/** Options of {@link AglTracer}. */
export interface AglTracerOptions extends LightningSpanProcessorOptions {
  /** `service.name` of the resource. Default `agl-agent`. */
  serviceName?: string;
  /** More resource attributes. */
  resourceAttributes?: Record<string, string | number | boolean>;
  /** More processors (e.g. an OTLP exporter), run after the store processor. */
  spanProcessors?: SpanProcessor[];
  /**
   * Flush on `beforeExit`, SIGTERM and SIGINT, and on `exit` (process.exit, crashes) close the open spans with an error
   * and export what is left synchronously. Default true.
   */
  exitHooks?: boolean;
  /**
   * Attributes kept per span. OpenTelemetry's default (128) silently drops the rest, and a flattened LLM conversation
   * or AGL's nested attributes pass that easily. Default 8192.
   */
  maxAttributesPerSpan?: number;
}

export { ensureContextManager };

/**
 * The AGL tracer: an OpenTelemetry `NodeTracerProvider` whose {@link LightningSpanProcessor} writes every span started
 * inside a rollout context to that rollout's store. Emitters, `operation` and every AGL adapter use it directly;
 * `register()` makes it the global provider too, for instrumentation that only writes to the global provider (AGL never
 * does that on its own, so an app's own provider keeps the global slot).
 */
export class AglTracer implements RolloutTracer {
  /** The store-writing span processor. */
  readonly processor: LightningSpanProcessor;
  /** The OpenTelemetry provider. */
  readonly provider: NodeTracerProvider;
  #uninstallExit: (() => void) | null = null;
  #registered = false;
  readonly #otherProcessors: readonly SpanProcessor[];

  constructor(options: AglTracerOptions = {}) {
    this.processor = new LightningSpanProcessor(options);
    this.#otherProcessors = options.spanProcessors ?? [];
    this.provider = new NodeTracerProvider({
      resource: resourceFromAttributes({
        'service.name': options.serviceName ?? 'agl-agent',
        [ATTR_TRACER_NAME]: 'agl',
        ...options.resourceAttributes,
      }),
      spanProcessors: [this.processor, ...(options.spanProcessors ?? [])],
      spanLimits: { attributeCountLimit: options.maxAttributesPerSpan ?? 8192 },
    });
    ensureContextManager();
    if (options.exitHooks ?? true) {
      this.#uninstallExit = installExitFlush(() => this.forceFlush(), {
        closeOpenSpans: (message) => this.processor.closeOpenSpans(message),
        exportSync: (timeoutMs) => this.processor.exportPendingSync(timeoutMs),
      });
    }
  }

  /** An OpenTelemetry tracer of this provider. */
  getTracer(name = 'agl'): Tracer {
    return this.provider.getTracer(name);
  }

  /**
   * Installs this provider as the global OpenTelemetry provider (and the async context manager and W3C propagators
   * when none are set). Returns false when another global provider was already registered.
   */
  register(): boolean {
    if (!this.#registered) {
      this.provider.register();
      this.#registered = true;
    }
    const global = trace.getTracerProvider();
    const active = global instanceof ProxyTracerProvider ? global.getDelegate() : global;
    return active === this.provider;
  }

  /** Counters of the span processor (queued, exported, dropped, failed, unowned). */
  stats(): SpanProcessorStats {
    return this.processor.stats();
  }

  /**
   * Exports every queued span. The store processor is awaited until its exports are done (a failed export is counted
   * and logged), not cut off by OpenTelemetry's 30 s flush timeout, so a runner that flushes before it writes an
   * attempt's status never has spans land after the status; the other processors flush as they do under the provider.
   */
  async forceFlush(): Promise<void> {
    await Promise.all([this.processor.forceFlush(), ...this.#otherProcessors.map((p) => p.forceFlush())]);
  }

  /** Resolves once the spans queued so far are with their store, on the normal export schedule (no forced export). */
  whenExported(): Promise<void> {
    return this.processor.whenExported();
  }

  /** Calls `callback` once the spans ended so far are with their store or sink (see `RolloutTracer.afterSpansHanded`). */
  afterSpansHanded(callback: () => void): void {
    this.processor.afterSpansHanded(callback);
  }

  /**
   * Ends the spans still open (of one attempt, with `owner`) with an ERROR status and `message`, so they are exported
   * with the next flush; the runner calls it when a rollout fails. Returns how many were ended.
   */
  closeOpenSpans(message: string, owner?: { rolloutId: string; attemptId: string }): number {
    return this.processor.closeOpenSpans(message, owner);
  }

  /** Flushes and stops; removes the exit hooks. */
  async shutdown(): Promise<void> {
    this.#uninstallExit?.();
    this.#uninstallExit = null;
    await this.provider.shutdown();
  }
}

let defaultTracer: AglTracer | null = null;

/**
 * The process-wide tracer, created on first use. It is **not** registered as the global OpenTelemetry provider: AGL's
 * adapters, emitters and `operation` write through it directly, so an app that registers its own provider (before or
 * after AGL loads) keeps the global slot and gets exactly its own spans. Call `getAglTracer().register()` to make AGL's
 * provider the global one (for third-party instrumentation that only writes to the global provider).
 */
export function getAglTracer(): AglTracer {
  defaultTracer ??= new AglTracer();
  return defaultTracer;
}

/** Replaces the process-wide tracer (e.g. with custom queue sizes); returns the previous one. */
export function setAglTracer(tracer: AglTracer | null): AglTracer | null {
  const previous = defaultTracer;
  defaultTracer = tracer;
  return previous;
}
