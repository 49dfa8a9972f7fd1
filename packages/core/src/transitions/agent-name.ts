import {
  ATTR_AGENT_NAME,
  ATTR_AGENTOPS_SPAN_KIND,
  ATTR_EXECUTOR_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_LANGCHAIN_CHAIN_TYPE,
  ATTR_LC_NAME,
  ATTR_OPENINFERENCE_SPAN_KIND,
  ATTR_OPERATION_INPUT,
  ATTR_OPERATION_NAME_PLAIN,
  ATTR_RECIPIENT_AGENT_TYPE,
  ATTR_TYPE,
} from '../semconv';

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * The agent a span stands for, or `null` (AGL 0.3 `agent_name()`, reference §5.3, checked in order): `agent.name`;
 * `gen_ai.agent.name` (GenAI semconv, AutoGen); AgentOps agent spans; AutoGen `recipient_agent_type`; LangGraph
 * `langchain.chain.type`; agent-framework `executor.id`; Weave agents; Weave + LangChain `lc_name`; OpenInference
 * `AGENT` spans (`graph.node.id`).
 */
export function agentNameOf(span: { name: string; attributes: Readonly<Record<string, unknown>> }): string | null {
  const a = span.attributes;
  return (
    str(a[ATTR_AGENT_NAME]) ??
    str(a[ATTR_GEN_AI_AGENT_NAME]) ??
    (a[ATTR_AGENTOPS_SPAN_KIND] === 'agent' ? str(a[ATTR_OPERATION_NAME_PLAIN]) : null) ??
    str(a[ATTR_RECIPIENT_AGENT_TYPE]) ??
    str(a[ATTR_LANGCHAIN_CHAIN_TYPE]) ??
    str(a[ATTR_EXECUTOR_ID]) ??
    (a[ATTR_TYPE] === 'agent' ? str(a[`${ATTR_OPERATION_INPUT}.name`]) : null) ??
    (span.name.startsWith('langchain.Chain.') ? str(a[ATTR_LC_NAME]) : null) ??
    (a[ATTR_OPENINFERENCE_SPAN_KIND] === 'AGENT' ? str(a['graph.node.id']) : null)
  );
}
