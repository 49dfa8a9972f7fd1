// Seeds a real LightningStore with rollouts whose spans follow DESIGN.md Contract 2: an agent span (`agent.name`),
// LLM calls named `openai.chat.completion` with flattened gen_ai.* prompt/completion attributes, `prompt_token_ids` /
// `response_token_ids` / `logprobs.content`, a tool child span, and a reward annotation span.
import type { LightningStore } from '@agl/core/store';
import type { Attributes, SpanInput } from '@agl/core/schema';

/** What one seeded rollout should contain. */
export interface SeedRollout {
  taskId: string;
  mode: 'train' | 'val';
  /** Final answer text of the second call. */
  answer: string;
  /** Response token id of the second call. */
  answerToken: number;
  reward: number;
  resourcesId?: string;
  /** Agent name; default `calc`. */
  agent?: string;
  /** When true the second prompt does not continue the first call (a retokenised history). */
  drift?: boolean;
}

/** The token layout every seeded rollout uses (see the comment in the tests). */
export const TOKENS = {
  prompt1: [101, 102, 103],
  response1: [201, 202],
  logprobs1: [-0.5, -0.25],
  logprobs2: [-0.125],
  toolResult: [301],
  driftPrompt2: [101, 999, 201, 202, 301],
} as const;

function chatCall(options: {
  responseId: string;
  messages: Array<{ role: string; content?: string; toolCallId?: string; toolCall?: boolean }>;
  completion: { content?: string; toolCall?: boolean };
  promptTokenIds: readonly number[];
  responseTokenIds: readonly number[];
  logprobs?: readonly number[];
}): Attributes {
  const a: Attributes = {
    'gen_ai.system': 'openai',
    'gen_ai.request.model': 'policy',
    'gen_ai.response.id': options.responseId,
    'gen_ai.request.functions.0.name': 'add',
    'gen_ai.request.functions.0.description': 'Add two numbers',
    'gen_ai.request.functions.0.parameters': '{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}',
    prompt_token_ids: [...options.promptTokenIds],
    response_token_ids: [...options.responseTokenIds],
  };
  options.messages.forEach((m, i) => {
    a[`gen_ai.prompt.${i}.role`] = m.role;
    if (m.content !== undefined) a[`gen_ai.prompt.${i}.content`] = m.content;
    if (m.toolCallId) a[`gen_ai.prompt.${i}.tool_call_id`] = m.toolCallId;
    if (m.toolCall) {
      a[`gen_ai.prompt.${i}.tool_calls.0.id`] = 'call_1';
      a[`gen_ai.prompt.${i}.tool_calls.0.name`] = 'add';
      a[`gen_ai.prompt.${i}.tool_calls.0.arguments`] = '{"a":2,"b":3}';
    }
  });
  a['gen_ai.completion.0.role'] = 'assistant';
  if (options.completion.content !== undefined) a['gen_ai.completion.0.content'] = options.completion.content;
  if (options.completion.toolCall) {
    a['gen_ai.completion.0.tool_calls.0.id'] = 'call_1';
    a['gen_ai.completion.0.tool_calls.0.name'] = 'add';
    a['gen_ai.completion.0.tool_calls.0.arguments'] = '{"a":2,"b":3}';
    a['gen_ai.completion.0.finish_reason'] = 'tool_calls';
  } else {
    a['gen_ai.completion.0.finish_reason'] = 'stop';
  }
  if (options.logprobs) {
    a['logprobs.content'] = JSON.stringify(options.logprobs.map((logprob, i) => ({ token: `t${i}`, logprob, top_logprobs: [] })));
  }
  return a;
}

/** Adds one finished rollout with its spans; returns its id. */
export async function seedRollout(store: LightningStore, spec: SeedRollout): Promise<string> {
  const started = await store.startRollout({
    input: { question: `task ${spec.taskId}` },
    mode: spec.mode,
    metadata: { task_id: spec.taskId },
    ...(spec.resourcesId ? { resourcesId: spec.resourcesId } : {}),
  });
  const { rolloutId } = started;
  const { attemptId } = started.attempt;
  const t0 = 1_700_000_000;
  let n = 0;
  const span = async (s: Pick<SpanInput, 'spanId' | 'parentId' | 'name' | 'attributes' | 'startTime' | 'endTime'>): Promise<void> => {
    const sequenceId = await store.getNextSpanSequenceId(rolloutId, attemptId);
    n += 1;
    await store.addSpan({ ...s, rolloutId, attemptId, sequenceId, traceId: `trace-${rolloutId}` });
  };
  const system = { role: 'system', content: 'Use the add tool.' };
  const user = { role: 'user', content: `task ${spec.taskId}` };
  const prompt2 = spec.drift ? TOKENS.driftPrompt2 : [...TOKENS.prompt1, ...TOKENS.response1, ...TOKENS.toolResult];
  await span({ spanId: 'agent', parentId: null, name: 'agent.run', attributes: { 'agent.name': spec.agent ?? 'calc' }, startTime: t0, endTime: t0 + 10 });
  // LLM call `index` (span `llm-<index>`, response id `<rolloutId>-<index>`) under the agent span, one second long.
  const llmCall = (index: number, startTime: number, call: Omit<Parameters<typeof chatCall>[0], 'responseId'>) =>
    span({
      spanId: `llm-${index}`,
      parentId: 'agent',
      name: 'openai.chat.completion',
      attributes: chatCall({ responseId: `${rolloutId}-${index}`, ...call }),
      startTime,
      endTime: startTime + 1,
    });
  await llmCall(1, t0 + 1, {
    messages: [system, user],
    completion: { toolCall: true },
    promptTokenIds: TOKENS.prompt1,
    responseTokenIds: TOKENS.response1,
    logprobs: TOKENS.logprobs1,
  });
  await span({
    spanId: 'tool-1',
    parentId: 'agent',
    name: 'tool.add',
    attributes: { 'tool.name': 'add', 'tool.parameters': '{"a":2,"b":3}', 'tool.call.id': 'call_1', 'tool.call.type': 'function' },
    startTime: t0 + 3,
    endTime: t0 + 4,
  });
  await llmCall(2, t0 + 5, {
    messages: [system, user, { role: 'assistant', toolCall: true }, { role: 'tool', content: '5', toolCallId: 'call_1' }],
    completion: { content: spec.answer },
    promptTokenIds: prompt2,
    responseTokenIds: [spec.answerToken],
    logprobs: TOKENS.logprobs2,
  });
  await span({
    spanId: 'reward',
    parentId: 'agent',
    name: 'agentlightning.annotation',
    attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': spec.reward },
    startTime: t0 + 7,
    endTime: t0 + 7,
  });
  await store.updateAttempt(rolloutId, attemptId, { status: 'succeeded' });
  if (n !== 5) throw new Error('seed: expected 5 spans');
  return rolloutId;
}
