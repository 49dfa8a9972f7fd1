import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import * as agents from '@openai/agents';
import type { TraceProvider, TracingProcessor } from '@openai/agents';
import { AglTraceProcessor, type AglTraceProcessorOptions } from './agl-trace-processor';

/** Options of {@link addAglTraceProcessor}. */
export interface AddAglTraceProcessorOptions extends AglTraceProcessorOptions {
  /**
   * AGL's processor alone: the app's processors and the SDK's default OpenAI exporter are removed. Default: the
   * `AGL_OPENAI_AGENTS_EXCLUSIVE` environment variable is `1` or `true`; otherwise AGL's processor is added beside them.
   */
  exclusive?: boolean;
  /** Directory the app's `@openai/agents` resolves from (default: the working directory). */
  fromDir?: string;
}

type AgentsModule = Pick<typeof agents, 'Agent' | 'getCurrentSpan' | 'getGlobalTraceProvider'>;

let installed: AglTraceProcessor | null = null;
const patchedAgents = new WeakSet<object>();

/** Whether the SDK starts with tracing off: `NODE_ENV=test` or `OPENAI_AGENTS_DISABLE_TRACING` (its own rule). */
function disabledByEnv(): boolean {
  const flag = process.env.OPENAI_AGENTS_DISABLE_TRACING;
  return process.env.NODE_ENV === 'test' || flag === '1' || flag === 'true';
}

/** Passes events to `processor` only while the app's own view of tracing is on. */
function gated(processor: TracingProcessor, on: () => boolean): TracingProcessor {
  return {
    start: () => processor.start?.(),
    onTraceStart: async (t) => (on() ? processor.onTraceStart(t) : undefined),
    onTraceEnd: async (t) => (on() ? processor.onTraceEnd(t) : undefined),
    onSpanStart: async (s) => (on() ? processor.onSpanStart(s) : undefined),
    onSpanEnd: async (s) => (on() ? processor.onSpanEnd(s) : undefined),
    shutdown: (timeout) => processor.shutdown(timeout),
    forceFlush: () => processor.forceFlush(),
  };
}

/**
 * Keeps AGL recording whatever the app does with the shared trace provider: processors the app sets or adds later
 * are kept beside AGL's, and `setTracingDisabled(true)` (or tracing off by environment) turns tracing off for the
 * app's processors only.
 */
function guardProvider(provider: TraceProvider, agl: AglTraceProcessor, initial: TracingProcessor[]): void {
  let appTracing = !disabledByEnv();
  const on = (): boolean => appTracing;
  const setProcessors = provider.setProcessors.bind(provider);
  const registerProcessor = provider.registerProcessor.bind(provider);
  const setDisabled = provider.setDisabled.bind(provider);
  setProcessors([...initial.map((p) => gated(p, on)), agl]);
  provider.setProcessors = (processors) =>
    setProcessors([...processors.filter((p) => p !== agl).map((p) => gated(p, on)), agl]);
  provider.registerProcessor = (processor) => {
    if (processor !== agl) registerProcessor(gated(processor, on));
  };
  provider.setDisabled = (disabled) => {
    appTracing = !disabled;
  };
  setDisabled(false);
}

/** Records each agent's system prompt on the SDK span it is computed under, for LLM spans that do not echo it. */
function noteSystemPrompts(sdk: AgentsModule, agl: AglTraceProcessor): void {
  const proto = sdk.Agent.prototype as { getSystemPrompt: (...args: unknown[]) => Promise<string | undefined> };
  if (patchedAgents.has(proto)) return;
  patchedAgents.add(proto);
  const original = proto.getSystemPrompt;
  proto.getSystemPrompt = async function (this: unknown, ...args: unknown[]) {
    const prompt = await original.apply(this, args);
    const span = sdk.getCurrentSpan();
    if (span && typeof prompt === 'string') agl.noteSystemPrompt(span.spanId, prompt);
    return prompt;
  };
}

/**
 * Installs the {@link AglTraceProcessor} on the SDK's global trace provider beside the SDK's default OpenAI exporter
 * (unless `exclusive`); processors the app sets or adds afterwards are kept beside AGL's. Call it before registering
 * your own processors (the preload always runs first): the processors already registered are replaced by the SDK's
 * default exporter. AGL keeps recording when tracing is off for the app (`setTracingDisabled(true)`,
 * `NODE_ENV=test`): the app's processors then get nothing, as without AGL. Both the ESM and the CommonJS builds of the
 * app's `@openai/agents` are loaded first, because each installs the default exporter when it loads. Idempotent;
 * returns the processor.
 *
 * @example
 * addAglTraceProcessor();
 */
export function addAglTraceProcessor(options: AddAglTraceProcessorOptions = {}): AglTraceProcessor {
  if (installed) return installed;
  const copies: AgentsModule[] = [agents];
  try {
    const require = createRequire(pathToFileURL(`${options.fromDir ?? process.cwd()}/`).href);
    const cjs = require('@openai/agents') as AgentsModule;
    if (cjs.Agent !== agents.Agent) copies.push(cjs);
  } catch {
    // No CommonJS copy resolvable from the app: the ESM import above is the only one.
  }
  const processor = new AglTraceProcessor(options);
  const exclusive = options.exclusive ?? ['1', 'true'].includes(process.env.AGL_OPENAI_AGENTS_EXCLUSIVE ?? '');
  const sdkDefault = exclusive ? [] : [new agents.BatchTraceProcessor(new agents.OpenAITracingExporter())];
  guardProvider(agents.getGlobalTraceProvider(), processor, sdkDefault);
  for (const sdk of copies) noteSystemPrompts(sdk, processor);
  installed = processor;
  return processor;
}
