import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import * as agents from '@openai/agents';
import { AglTraceProcessor, type AglTraceProcessorOptions } from './agl-trace-processor';

/** Options of {@link addAglTraceProcessor}. */
export interface AddAglTraceProcessorOptions extends AglTraceProcessorOptions {
  /** Keep the SDK's default OpenAI exporter next to ours (default false: it needs an API key and calls api.openai.com). */
  keepDefaultExporter?: boolean;
  /** Directory the app's `@openai/agents` resolves from (default: the working directory). */
  fromDir?: string;
}

type AgentsModule = Pick<typeof agents, 'addTraceProcessor' | 'setTraceProcessors' | 'setTracingDisabled'>;

let installed: AglTraceProcessor | null = null;

/**
 * Installs the {@link AglTraceProcessor} on the SDK's global trace provider, replacing the default OpenAI exporter, and
 * keeps tracing on under `NODE_ENV=test`. Both the ESM and the CommonJS builds of the app's `@openai/agents` are loaded
 * first, because each one re-installs the default exporter when it loads. Idempotent; returns the processor.
 *
 * @example
 * addAglTraceProcessor();
 */
export function addAglTraceProcessor(options: AddAglTraceProcessorOptions = {}): AglTraceProcessor {
  if (installed) return installed;
  let sdk: AgentsModule = agents;
  try {
    const require = createRequire(pathToFileURL(`${options.fromDir ?? process.cwd()}/`).href);
    sdk = require('@openai/agents') as AgentsModule;
  } catch {
    // No CommonJS copy resolvable from the app: the ESM import above is the only one.
  }
  const processor = new AglTraceProcessor(options);
  if (options.keepDefaultExporter) sdk.addTraceProcessor(processor);
  else sdk.setTraceProcessors([processor]);
  sdk.setTracingDisabled(false);
  installed = processor;
  return processor;
}
