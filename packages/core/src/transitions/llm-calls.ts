import {
  DEFAULT_LLM_CALL_MATCH,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_OPENINFERENCE_SPAN_KIND,
  ATTR_OPERATION_OUTPUT,
} from '../semconv';
import type { Span } from '../schema/index';
import { agentNameOf } from './agent-name';
import { detectLlmCallFormat } from './llm-call-normalizer';
import { isRewardScope } from './reward-readers';
import type { TraceNode } from './trace-tree';

/** How LLM-call spans are recognised: a regex searched in the span name, a string (exact name), or a predicate. */
export type LlmCallMatch = RegExp | string | ((span: Span) => boolean);

/** Which agent's calls to keep: a regex searched in the agent name, or an exact name. */
export type AgentMatch = RegExp | string;

const GENAI_LLM_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content']);

/**
 * The default LLM-call test: Contract 2's span names, GenAI semconv `chat`/`text_completion` spans that carry messages,
 * and OpenInference `LLM` spans.
 */
export function isDefaultLlmCall(span: Span): boolean {
  if (DEFAULT_LLM_CALL_MATCH.test(span.name)) return true;
  const op = span.attributes[ATTR_GEN_AI_OPERATION_NAME];
  if (typeof op === 'string' && GENAI_LLM_OPERATIONS.has(op) && detectLlmCallFormat(span.attributes) !== null)
    return true;
  return span.attributes[ATTR_OPENINFERENCE_SPAN_KIND] === 'LLM' && detectLlmCallFormat(span.attributes) !== null;
}

/** Compiles an {@link LlmCallMatch} (default {@link isDefaultLlmCall}). */
export function llmCallMatcher(match: LlmCallMatch | undefined): (span: Span) => boolean {
  if (match === undefined) return isDefaultLlmCall;
  if (typeof match === 'function') return match;
  if (typeof match === 'string') return (span) => span.name === match;
  return (span) => {
    match.lastIndex = 0;
    return match.test(span.name);
  };
}

/** Compiles an {@link AgentMatch}: a RegExp is searched, a string must equal the name. */
export function agentMatcher(match: AgentMatch): (name: string) => boolean {
  if (typeof match === 'string') return (name) => name === match;
  return (name) => {
    match.lastIndex = 0;
    return match.test(name);
  };
}

/** The response id of an LLM-call span: `gen_ai.response.id`, else `agentlightning.operation.output.id`. */
export function responseIdOf(span: Span): string | null {
  for (const key of [ATTR_GEN_AI_RESPONSE_ID, `${ATTR_OPERATION_OUTPUT}.id`]) {
    const value = span.attributes[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return null;
}

/** One selected LLM call and the agent subtree it belongs to (`*` when no agent filter and no agent). */
export interface FoundLlmCall {
  node: TraceNode;
  agentName: string;
}

/** Options of {@link findLlmCalls}. */
export interface FindLlmCallsOptions {
  llmCallMatch?: LlmCallMatch;
  agentMatch?: AgentMatch | null;
  /** Skip LLM calls inside reward spans (judge calls). Default true. */
  excludeLlmCallInReward?: boolean;
  /** Drop nested calls without a response id and repeated response ids. Default true. */
  dedup?: boolean;
  /** Span ids never to select (e.g. gateway twins of adapter spans). */
  skip?: ReadonlySet<string>;
  /** The agent a span stands for (default {@link agentNameOf}). */
  agentName?: (span: Span) => string | null;
}

/** Selects the LLM-call spans of a tree (AGL 0.3 `find_llm_calls`, reference §5.4), in pre-order. */
export function findLlmCalls(root: TraceNode, options: FindLlmCallsOptions = {}): FoundLlmCall[] {
  const isLlm = llmCallMatcher(options.llmCallMatch);
  const agentOk = options.agentMatch == null ? null : agentMatcher(options.agentMatch);
  const excludeReward = options.excludeLlmCallInReward ?? true;
  const dedup = options.dedup ?? true;
  const nameOf = options.agentName ?? agentNameOf;
  const seen = new Set<string>();
  const found: FoundLlmCall[] = [];
  const visit = (node: TraceNode, subtree: string | null, withinReward: boolean, withinLlm: boolean): void => {
    let inLlm = withinLlm;
    if (subtree !== null && !withinReward && !node.virtual && !options.skip?.has(node.id) && isLlm(node.span)) {
      const rid = responseIdOf(node.span);
      const rejected = dedup && ((rid === null && withinLlm) || (rid !== null && seen.has(rid)));
      if (!rejected) {
        found.push({ node, agentName: subtree });
        if (rid !== null) seen.add(rid);
        if (dedup) inLlm = true;
      }
    }
    let next = subtree;
    const agent = node.virtual ? null : nameOf(node.span);
    if (agent !== null) next = agentOk === null || agentOk(agent) ? agent : null;
    const inReward = withinReward || (excludeReward && !node.virtual && isRewardScope(node.span));
    for (const child of node.children) visit(child, next, inReward, inLlm);
  };
  visit(root, agentOk === null ? '*' : null, false, false);
  return found;
}
