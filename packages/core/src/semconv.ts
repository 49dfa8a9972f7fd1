/**
 * Every span name and attribute name AGL writes or reads, in one module (DESIGN.md Contract 2).
 *
 * The layout is Agent Lightning 0.3's (reference v0 §4.4 to §4.6), so Python Agent Lightning reading our store finds
 * the same LLM calls, rewards and agents that our converter finds. Other forms that the converter only *reads*
 * (newer GenAI JSON messages, OpenInference) are listed at the end.
 *
 * Browser-safe: no imports.
 */

// ---------------------------------------------------------------------------------------------------------------------
// AGL 0.3 span names (`agentlightning.semconv`)
// ---------------------------------------------------------------------------------------------------------------------

/** Span names of AGL 0.3's emitters and adapters. */
export const AGL_SPAN_NAMES = {
  /** Rewards, tags and free-form annotations. */
  annotation: 'agentlightning.annotation',
  /** `emitMessage`. */
  message: 'agentlightning.message',
  /** `emitObject`. */
  object: 'agentlightning.object',
  /** `emitException`. */
  exception: 'agentlightning.exception',
  /** `operation(name, fn)`: a traced user step. */
  operation: 'agentlightning.operation',
  /**
   * The reward operation name: an `agentlightning.operation` span whose `agentlightning.operation.name` equals this
   * counts as a reward span (LLM calls inside it are judge calls, not policy calls).
   */
  reward: 'agentlightning.reward',
  /** A synthetic node made by adapters (missing parent). */
  virtual: 'agentlightning.virtual',
} as const;

export const SPAN_ANNOTATION = AGL_SPAN_NAMES.annotation;
export const SPAN_MESSAGE = AGL_SPAN_NAMES.message;
export const SPAN_OBJECT = AGL_SPAN_NAMES.object;
export const SPAN_EXCEPTION = AGL_SPAN_NAMES.exception;
export const SPAN_OPERATION = AGL_SPAN_NAMES.operation;
export const SPAN_REWARD = AGL_SPAN_NAMES.reward;
export const SPAN_VIRTUAL = AGL_SPAN_NAMES.virtual;
/** Name and id of the synthetic root made when a trace has several roots. */
export const SPAN_VIRTUAL_ROOT = 'virtual-root';

// ---------------------------------------------------------------------------------------------------------------------
// Resource / ownership attributes (`LightningResourceAttributes`)
// ---------------------------------------------------------------------------------------------------------------------

/** Owning rollout; span-level values override resource-level ones (OTLP receivers). */
export const ATTR_ROLLOUT_ID = 'agentlightning.rollout_id';
/** Owning attempt. */
export const ATTR_ATTEMPT_ID = 'agentlightning.attempt_id';
/** Sequence id (int or decimal string). */
export const ATTR_SPAN_SEQUENCE_ID = 'agentlightning.span_sequence_id';
/** Name of the tracer that produced the span (`weave`, `agl`). */
export const ATTR_TRACER_NAME = 'agentlightning.tracer.name';

// ---------------------------------------------------------------------------------------------------------------------
// AGL span attributes (`LightningSpanAttributes`)
// ---------------------------------------------------------------------------------------------------------------------

/** Prefix: `agentlightning.reward.{i}.name` / `.value`; index 0 is the primary reward. */
export const ATTR_REWARD = 'agentlightning.reward';
/** Name of the primary dimension when a plain number is emitted. */
export const REWARD_PRIMARY_NAME = 'primary';
/** `agentlightning.reward.{i}.name`. */
export const rewardNameKey = (index: number): string => `${ATTR_REWARD}.${index}.name`;
/** `agentlightning.reward.{i}.value`. */
export const rewardValueKey = (index: number): string => `${ATTR_REWARD}.${index}.value`;

/**
 * Who gave a reward span its value: `feedback` (a user's late feedback, `recordFeedback`), `judge` (an LLM judge);
 * absent for the agent, the runner or a reward function. Read on `agentlightning.annotation` spans, the ones
 * `recordFeedback` and judges write. A rollout's final reward prefers the latest feedback, then the latest agent
 * reward, then the latest judge score (`findFinalRewardSpan`).
 */
export const ATTR_REWARD_SOURCE = 'agl.reward.source';
/** The values of {@link ATTR_REWARD_SOURCE}. */
export const REWARD_SOURCES = { feedback: 'feedback', judge: 'judge' } as const;
/** A feedback span's free-text comment. */
export const ATTR_FEEDBACK_COMMENT = 'agl.feedback.comment';
/** The judge model that scored a rollout (judge reward spans). */
export const ATTR_JUDGE_MODEL = 'agl.judge.model';
/** SHA-256 (hex) of the rubric text a judge scored against. */
export const ATTR_JUDGE_RUBRIC_HASH = 'agl.judge.rubric_hash';
/** The judge's short rationale for its score. */
export const ATTR_JUDGE_RATIONALE = 'agl.judge.rationale';
/** `rubric` (one transcript against a rubric) or `group` (a task's rollouts ranked against each other). */
export const ATTR_JUDGE_MODE = 'agl.judge.mode';

/** Prefix: `agentlightning.link.{i}.key_match` / `.value_match`. */
export const ATTR_LINK = 'agentlightning.link';
/** Prefix: `agentlightning.tag.{i}`. */
export const ATTR_TAG = 'agentlightning.tag';
/** Body of an `agentlightning.message` span. */
export const ATTR_MESSAGE_BODY = 'agentlightning.message.body';
/** Object emitter: type name (`str`, `int`, `float`, `bool`, `bytes`, `dict`, `list`, or a class name). */
export const ATTR_OBJECT_TYPE = 'agentlightning.object.type';
/** Object emitter: literal form of a primitive. */
export const ATTR_OBJECT_LITERAL = 'agentlightning.object.literal';
/** Object emitter: JSON form of a structured value. */
export const ATTR_OBJECT_JSON = 'agentlightning.object.json';
/** Operation name. */
export const ATTR_OPERATION_NAME = 'agentlightning.operation.name';
/** Prefix: operation inputs. */
export const ATTR_OPERATION_INPUT = 'agentlightning.operation.input';
/** Prefix: operation output. */
export const ATTR_OPERATION_OUTPUT = 'agentlightning.operation.output';

/** `{"agentlightning.tag.0": "a", ...}`. */
export function makeTagAttributes(tags: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  tags.forEach((tag, i) => {
    out[`${ATTR_TAG}.${i}`] = tag;
  });
  return out;
}

/** `{"agentlightning.link.0.key_match": k, "agentlightning.link.0.value_match": v, ...}` in insertion order. */
export function makeLinkAttributes(links: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  Object.entries(links).forEach(([key, value], i) => {
    out[`${ATTR_LINK}.${i}.key_match`] = key;
    out[`${ATTR_LINK}.${i}.value_match`] = value;
  });
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------
// OTel exception attributes
// ---------------------------------------------------------------------------------------------------------------------

export const ATTR_EXCEPTION_TYPE = 'exception.type';
export const ATTR_EXCEPTION_MESSAGE = 'exception.message';
export const ATTR_EXCEPTION_ESCAPED = 'exception.escaped';
export const ATTR_EXCEPTION_STACKTRACE = 'exception.stacktrace';

// ---------------------------------------------------------------------------------------------------------------------
// LLM-call spans, Contract 2 layout (written by every adapter and the gateway)
// ---------------------------------------------------------------------------------------------------------------------

/** Span name of chat calls, whatever the provider. */
export const SPAN_CHAT_COMPLETION = 'openai.chat.completion';
/** Span name of text completions. */
export const SPAN_COMPLETION = 'openai.completion';
/**
 * Span-name part of the converter's default LLM-call test (a regex *search*): AGL 0.3's `openai\.chat\.completion`,
 * widened to Contract 2's text-completion name `openai.completion`.
 */
export const DEFAULT_LLM_CALL_MATCH = /openai\.(chat\.)?completion/;

/** Provider name (`openai`, `anthropic`, `vllm`, ...). */
export const ATTR_GEN_AI_SYSTEM = 'gen_ai.system';
/** Prefix: `gen_ai.prompt.{i}.role|content|tool_call_id`. */
export const ATTR_GEN_AI_PROMPT = 'gen_ai.prompt';
/** Prefix: `gen_ai.completion.{i}.role|content|finish_reason|tool_calls.{j}.id|name|arguments`. */
export const ATTR_GEN_AI_COMPLETION = 'gen_ai.completion';
/** Prefix of request attributes. */
export const ATTR_GEN_AI_REQUEST = 'gen_ai.request';
/** Prefix of response attributes. */
export const ATTR_GEN_AI_RESPONSE = 'gen_ai.response';
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const ATTR_GEN_AI_REQUEST_TEMPERATURE = 'gen_ai.request.temperature';
export const ATTR_GEN_AI_REQUEST_MAX_TOKENS = 'gen_ai.request.max_tokens';
export const ATTR_GEN_AI_REQUEST_TOP_P = 'gen_ai.request.top_p';
export const ATTR_GEN_AI_REQUEST_STREAMING = 'gen_ai.request.streaming';
/**
 * `true` on the span of a streamed LLM call whose stream the app never read: the span ended when the stream was
 * garbage collected or the process ended, with no completion.
 */
export const ATTR_STREAM_UNREAD = 'agentlightning.stream.unread';
/** Prefix: `gen_ai.request.functions.{k}.name|description|parameters`. */
export const ATTR_GEN_AI_REQUEST_FUNCTIONS = 'gen_ai.request.functions';
export const ATTR_GEN_AI_RESPONSE_ID = 'gen_ai.response.id';
export const ATTR_GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
/** Input tokens served from the backend's prompt (prefix) cache; included in the input tokens. */
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
/** Deprecated alias of input tokens, still read. */
export const ATTR_GEN_AI_USAGE_PROMPT_TOKENS = 'gen_ai.usage.prompt_tokens';
/** Deprecated alias of output tokens, still read. */
export const ATTR_GEN_AI_USAGE_COMPLETION_TOKENS = 'gen_ai.usage.completion_tokens';

/** `gen_ai.prompt.{i}.{field}`. */
export const promptKey = (index: number, field: 'role' | 'content' | 'tool_call_id' | 'name'): string =>
  `${ATTR_GEN_AI_PROMPT}.${index}.${field}`;
/** `gen_ai.completion.{i}.{field}`. */
export const completionKey = (index: number, field: 'role' | 'content' | 'finish_reason'): string =>
  `${ATTR_GEN_AI_COMPLETION}.${index}.${field}`;
/** `gen_ai.completion.{i}.tool_calls.{j}.{field}`. */
export const completionToolCallKey = (index: number, call: number, field: 'id' | 'name' | 'arguments'): string =>
  `${ATTR_GEN_AI_COMPLETION}.${index}.tool_calls.${call}.${field}`;
/** `gen_ai.prompt.{i}.tool_calls.{j}.{field}` (assistant history messages with tool calls). */
export const promptToolCallKey = (index: number, call: number, field: 'id' | 'name' | 'arguments'): string =>
  `${ATTR_GEN_AI_PROMPT}.${index}.tool_calls.${call}.${field}`;
/** `gen_ai.request.functions.{k}.{field}`. */
export const requestFunctionKey = (index: number, field: 'name' | 'description' | 'parameters'): string =>
  `${ATTR_GEN_AI_REQUEST_FUNCTIONS}.${index}.${field}`;

// Token ids and logprobs (AGL 0.3 names).
/** Prompt token ids (int[]). */
export const ATTR_PROMPT_TOKEN_IDS = 'prompt_token_ids';
/** Response token ids (int[]). */
export const ATTR_RESPONSE_TOKEN_IDS = 'response_token_ids';
/** JSON string of the OpenAI logprobs `content` list. */
export const ATTR_LOGPROBS_CONTENT = 'logprobs.content';
/** JSON string of the OpenAI logprobs `refusal` list. */
export const ATTR_LOGPROBS_REFUSAL = 'logprobs.refusal';

// Tool execution spans (children of the agent step).
export const ATTR_TOOL_NAME = 'tool.name';
export const ATTR_TOOL_PARAMETERS = 'tool.parameters';
export const ATTR_TOOL_CALL_ID = 'tool.call.id';
export const ATTR_TOOL_CALL_TYPE = 'tool.call.type';
/** Prefix grouping the tool attributes (TraceToMessages). */
export const ATTR_TOOL = 'tool';

// Agent spans.
/** Agent name AGL 0.3 reads (OpenAI Agents SDK form). */
export const ATTR_AGENT_NAME = 'agent.name';
/** GenAI agent name; written together with `agent.name`. */
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name';

// Agent detection keys of AGL 0.3 (§5.3), in check order after `agent.name`.
export const ATTR_AGENTOPS_SPAN_KIND = 'agentops.span.kind';
export const ATTR_OPERATION_NAME_PLAIN = 'operation.name';
export const ATTR_RECIPIENT_AGENT_TYPE = 'recipient_agent_type';
export const ATTR_LANGCHAIN_CHAIN_TYPE = 'langchain.chain.type';
export const ATTR_EXECUTOR_ID = 'executor.id';
export const ATTR_TYPE = 'type';
export const ATTR_LC_NAME = 'lc_name';

// Legacy reward locations (read only).
export const ATTR_AGENTOPS_TASK_OUTPUT = 'agentops.task.output';
export const ATTR_AGENTOPS_ENTITY_OUTPUT = 'agentops.entity.output';
/** v0.2 annotation reward attribute. */
export const ATTR_LEGACY_REWARD = 'reward';

// Gateway / request context.
/** HTTP header carrying the rollout id (gateway). */
export const HEADER_ROLLOUT_ID = 'x-rollout-id';
/** HTTP header carrying the attempt id (gateway). */
export const HEADER_ATTEMPT_ID = 'x-attempt-id';
/** Marks a span written by the AGL gateway (value: `true`). */
export const ATTR_AGL_GATEWAY = 'agl.gateway';

// ---------------------------------------------------------------------------------------------------------------------
// LLM-proxy spans of AGL 0.3 (LiteLLM, vLLM), read by GatewayTraceToTransitions (§5.8)
// ---------------------------------------------------------------------------------------------------------------------

export const SPAN_RAW_GEN_AI_REQUEST = 'raw_gen_ai_request';
export const SPAN_LITELLM_REQUEST = 'litellm_request';
export const ATTR_REQUESTER_CUSTOM_HEADERS = 'metadata.requester_custom_headers';
export const ATTR_HOSTED_VLLM_PROMPT_TOKEN_IDS = 'llm.hosted_vllm.prompt_token_ids';
export const ATTR_HOSTED_VLLM_RESPONSE_TOKEN_IDS = 'llm.hosted_vllm.response_token_ids';
export const ATTR_HOSTED_VLLM_CHOICES = 'llm.hosted_vllm.choices';
export const ATTR_HOSTED_VLLM_ID = 'llm.hosted_vllm.id';

// ---------------------------------------------------------------------------------------------------------------------
// Forms the converter reads and normalises (never written by AGL)
// ---------------------------------------------------------------------------------------------------------------------

/** Newer GenAI semconv: JSON `[{role, parts:[...]}]`. */
export const ATTR_GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages';
/** Newer GenAI semconv: JSON `[{role, parts:[...], finish_reason}]`. */
export const ATTR_GEN_AI_OUTPUT_MESSAGES = 'gen_ai.output.messages';
/** Newer GenAI semconv: JSON `[{type:"text", content}]`. */
export const ATTR_GEN_AI_SYSTEM_INSTRUCTIONS = 'gen_ai.system_instructions';
/** Newer GenAI semconv: JSON tool definitions. */
export const ATTR_GEN_AI_TOOL_DEFINITIONS = 'gen_ai.tool.definitions';
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';

/** OpenInference span kind (`LLM`, `AGENT`, `TOOL`, ...). */
export const ATTR_OPENINFERENCE_SPAN_KIND = 'openinference.span.kind';
/** Prefix: `llm.input_messages.{i}.message.role|content|tool_call_id|tool_calls.{k}.tool_call.*`. */
export const ATTR_LLM_INPUT_MESSAGES = 'llm.input_messages';
/** Prefix: `llm.output_messages.{i}.message.*`. */
export const ATTR_LLM_OUTPUT_MESSAGES = 'llm.output_messages';
export const ATTR_LLM_MODEL_NAME = 'llm.model_name';
export const ATTR_LLM_PROVIDER = 'llm.provider';
export const ATTR_LLM_SYSTEM = 'llm.system';
export const ATTR_LLM_INVOCATION_PARAMETERS = 'llm.invocation_parameters';
/** Prefix: `llm.tools.{i}.tool.json_schema`. */
export const ATTR_LLM_TOOLS = 'llm.tools';
export const ATTR_LLM_TOKEN_COUNT_PROMPT = 'llm.token_count.prompt';
export const ATTR_LLM_TOKEN_COUNT_COMPLETION = 'llm.token_count.completion';

// GenAI / OpenInference names read by the span mappers (adapters/genai-span-mapper.ts; never written by AGL).
/** GenAI agent id (AutoGen `create_agent` / `invoke_agent` spans). */
export const ATTR_GEN_AI_AGENT_ID = 'gen_ai.agent.id';
/** `gen_ai.operation.name` of an agent invocation span (`invoke_agent {name}`). */
export const GEN_AI_OPERATION_INVOKE_AGENT = 'invoke_agent';
/** `gen_ai.operation.name` of an agent creation span (`create_agent {name}`). */
export const GEN_AI_OPERATION_CREATE_AGENT = 'create_agent';
/** `gen_ai.operation.name` of a tool execution span (`execute_tool {tool}`). */
export const GEN_AI_OPERATION_EXECUTE_TOOL = 'execute_tool';
/** Legacy GenAI content span events (semconv ≤ 1.26): attribute `gen_ai.prompt` / `gen_ai.completion` (JSON lists). */
export const EVENT_GEN_AI_CONTENT_PROMPT = 'gen_ai.content.prompt';
export const EVENT_GEN_AI_CONTENT_COMPLETION = 'gen_ai.content.completion';
/** Legacy GenAI per-message events: `gen_ai.{system,user,assistant,tool}.message` and `gen_ai.choice`. */
export const EVENT_GEN_AI_CHOICE = 'gen_ai.choice';
/** OpenInference graph node id (CrewAI agent spans: the agent role). */
export const ATTR_GRAPH_NODE_ID = 'graph.node.id';
/** OpenInference span kind of an agent span. */
export const OPENINFERENCE_KIND_AGENT = 'AGENT';
