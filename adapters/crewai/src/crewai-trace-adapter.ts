import type { Span } from '@agl/core/schema';
import {
  TraceToTransitions,
  composeSpanMappers,
  genAiSpanMapper,
  type SpanMapper,
  type TraceToTransitionsOptions,
} from '@agl/core/transitions';
import {
  ATTR_AGENT_NAME,
  ATTR_GRAPH_NODE_ID,
  ATTR_OPENINFERENCE_SPAN_KIND,
  OPENINFERENCE_KIND_AGENT,
} from '@agl/core/semconv';

const WRAPPER_SUFFIX = '._execute_core';
const EVENT_BUS_SUFFIX = '.execute';

/**
 * The CrewAI role of an OpenInference `AGENT` span, from its name when the span carries neither `agent.name` nor
 * `graph.node.id`: wrapper-based instrumentations name it `{role}._execute_core`, event-bus ones
 * `{role}.{task[:50]}.execute` (reference §7.2). For the latter the role is the text before the first `.`, so a role
 * that itself contains a dot is cut there; such spans still carry `graph.node.id` in the wrapper-based versions.
 */
export function crewAiRoleFromSpanName(name: string): string | null {
  if (name.endsWith(WRAPPER_SUFFIX)) return name.slice(0, -WRAPPER_SUFFIX.length).trim() || null;
  if (name.endsWith(EVENT_BUS_SUFFIX)) {
    const head = name.slice(0, -EVENT_BUS_SUFFIX.length);
    const dot = head.indexOf('.');
    const role = (dot < 0 ? head : head.slice(0, dot)).trim();
    return role || null;
  }
  return null;
}

/** Gives OpenInference `AGENT` spans without `agent.name` / `graph.node.id` their CrewAI role as `agent.name`. */
export function nameCrewAiAgentSpans(span: Span): Span {
  const a = span.attributes;
  if (a[ATTR_OPENINFERENCE_SPAN_KIND] !== OPENINFERENCE_KIND_AGENT) return span;
  const has = (key: string) => typeof a[key] === 'string' && a[key] !== '';
  if (has(ATTR_AGENT_NAME) || has(ATTR_GRAPH_NODE_ID)) return span;
  const role = crewAiRoleFromSpanName(span.name);
  return role ? { ...span, attributes: { ...a, [ATTR_AGENT_NAME]: role } } : span;
}

/**
 * The read-time mapping of CrewAI spans (OpenInference, reference §7.2 / §8): the generic GenAI mapper of
 * `@agl/core/transitions`, then {@link nameCrewAiAgentSpans}. The core already reads the rest:
 * - `AGENT` spans name the agent by `graph.node.id` (the role), which `agentMatch` selects on;
 * - `LLM` spans (from the CrewAI event-bus instrumentation, or `openinference-instrumentation-litellm` / `-openai`)
 *   are the calls: `llm.input_messages.*`, `llm.output_messages.*` (tool calls included), `llm.model_name`,
 *   `llm.invocation_parameters`, `llm.tools.*`, `llm.token_count.*`;
 * - `CHAIN` (`{crew}.kickoff`) and `TOOL` (`{tool}._use`) spans are structure only.
 */
export const crewAiSpanMapper: SpanMapper = composeSpanMappers(genAiSpanMapper, nameCrewAiAgentSpans);

/** Options of {@link crewAiTraceAdapter}: every `TraceToTransitions` option; `spanMapper` runs after CrewAI's. */
export type CrewAiTraceAdapterOptions = TraceToTransitionsOptions;

/**
 * A `TraceToTransitions` configured for Python CrewAI traces (OpenInference) received over OTLP (`agl store serve` /
 * `POST /v1/traces`). Pass `agentMatch` to keep one agent's calls: its CrewAI `role`, e.g. `'Researcher'`.
 *
 * @example
 * const adapter = crewAiTraceAdapter({ agentMatch: 'Researcher' });
 * const trajectory = await adapter.fromStore({ store, rolloutId });
 */
export function crewAiTraceAdapter(options: CrewAiTraceAdapterOptions = {}): TraceToTransitions {
  const { spanMapper, ...rest } = options;
  return new TraceToTransitions({
    ...rest,
    spanMapper: spanMapper ? composeSpanMappers(crewAiSpanMapper, spanMapper) : crewAiSpanMapper,
  });
}
