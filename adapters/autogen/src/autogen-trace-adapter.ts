import type { Span } from '@agl/core/schema';
import {
  TraceToTransitions,
  composeSpanMappers,
  detectLlmCallFormat,
  genAiSpanMapper,
  isDefaultLlmCall,
  type SpanMapper,
  type TraceToTransitionsOptions,
} from '@agl/core/transitions';

/**
 * The read-time mapping of AutoGen spans (reference §7.1) onto what `TraceToTransitions` reads: the generic GenAI
 * mapper of `@agl/core/transitions` (legacy content events → `gen_ai.input.messages` / `gen_ai.output.messages`;
 * `invoke_agent {name}` spans without `gen_ai.agent.name` named from the span name). Everything else AutoGen sends is
 * read as is:
 * - `invoke_agent {agent}` / `create_agent {agent}` spans carry `gen_ai.agent.name`, which `agentMatch` selects on;
 * - the OpenAI instrumentation's `chat {model}` spans (`gen_ai.operation.name = chat`) are the LLM calls, read from
 *   `gen_ai.input.messages` / `gen_ai.output.messages` (or the indexed `gen_ai.prompt.*` form);
 * - `execute_tool {tool}` spans and the runtime's `autogen {operation} {destination}` messaging spans are structure
 *   only (they are never LLM calls).
 */
export const autogenSpanMapper: SpanMapper = genAiSpanMapper;

/** OpenLLMetry's `opentelemetry-instrumentation-openai` names its chat spans `openai.chat` (indexed `gen_ai.prompt.*`). */
const OPENLLMETRY_CHAT = 'openai.chat';

/**
 * The LLM calls of an AutoGen trace: the core default (Contract 2 names, GenAI `chat` spans with messages,
 * OpenInference `LLM` spans) plus OpenLLMetry `openai.chat` spans in the indexed `gen_ai.prompt.*` form, the other
 * OpenAI instrumentation AutoGen's docs pair it with.
 */
export function isAutogenLlmCall(span: Span): boolean {
  return isDefaultLlmCall(span) || (span.name === OPENLLMETRY_CHAT && detectLlmCallFormat(span.attributes) === 'agl');
}

/** Options of {@link autogenTraceAdapter}: every `TraceToTransitions` option; `spanMapper` runs after AutoGen's. */
export type AutogenTraceAdapterOptions = TraceToTransitionsOptions;

/**
 * A `TraceToTransitions` configured for Python AutoGen traces received over OTLP (`agl store serve` /
 * `POST /v1/traces`). Pass `agentMatch` to keep one agent's calls (its AgentChat `name`, e.g. `'planner'` or
 * `/^(planner|critic)$/`).
 *
 * @example
 * const adapter = autogenTraceAdapter({ agentMatch: 'planner' });
 * const trajectory = await adapter.fromStore({ store, rolloutId });
 */
export function autogenTraceAdapter(options: AutogenTraceAdapterOptions = {}): TraceToTransitions {
  const { spanMapper, ...rest } = options;
  return new TraceToTransitions({
    ...rest,
    llmCallMatch: options.llmCallMatch ?? isAutogenLlmCall,
    spanMapper: spanMapper ? composeSpanMappers(autogenSpanMapper, spanMapper) : autogenSpanMapper,
  });
}
