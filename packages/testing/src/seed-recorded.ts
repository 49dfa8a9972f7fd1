// Seeds a store with rollouts as production recording leaves them: `metadata.source`, `metadata.agent_name`, an agent
// span, optional LLM calls (with a tool: one that asks for it, then one that answers with its result), the agent's reward, a judge reward and late user
// feedback written with core's `recordFeedback`. The other spans are written with `addSpan`.
import type { JsonObject, JsonValue, RolloutMode } from '@agl/core/schema';
import { recordFeedback, type LightningStore } from '@agl/core/store';

/** One rollout to seed. */
export interface RecordedRollout {
  input: JsonValue;
  metadata?: JsonObject;
  mode?: RolloutMode;
  resourcesId?: string;
  /** Agent name written on the `agent.run` span (`agent.name`). */
  spanAgent?: string;
  /** The user's question and the final answer, with an optional tool call and its result between (two LLM calls). */
  conversation?: { user: string; answer: string; tool?: { name: string; arguments: string; result: string } };
  /** The agent's own reward. */
  reward?: number;
  /** A judge reward span (`agl.reward.source = 'judge'`), with these extra attributes. */
  judge?: number;
  judgeAttributes?: Record<string, string>;
  /** Feedback rewards, oldest first; the first carries the comment `first`. */
  feedback?: number[];
}

type Attrs = Record<string, string | number>;

function prompt(c: NonNullable<RecordedRollout['conversation']>, withTool: boolean): Attrs {
  const a: Attrs = {
    'gen_ai.system': 'openai',
    'gen_ai.request.model': 'agent-model',
    'gen_ai.prompt.0.role': 'system',
    'gen_ai.prompt.0.content': 'You are a helpful assistant.',
    'gen_ai.prompt.1.role': 'user',
    'gen_ai.prompt.1.content': c.user,
  };
  if (withTool && c.tool) {
    Object.assign(a, {
      'gen_ai.prompt.2.role': 'assistant',
      'gen_ai.prompt.2.tool_calls.0.id': 'call_1',
      'gen_ai.prompt.2.tool_calls.0.name': c.tool.name,
      'gen_ai.prompt.2.tool_calls.0.arguments': c.tool.arguments,
      'gen_ai.prompt.3.role': 'tool',
      'gen_ai.prompt.3.tool_call_id': 'call_1',
      'gen_ai.prompt.3.content': c.tool.result,
    });
  }
  return a;
}

/** The LLM calls of a conversation: with a tool, a first call that asks for it, then one that answers. */
function llmCalls(c: NonNullable<RecordedRollout['conversation']>): Attrs[] {
  const answer = {
    ...prompt(c, true),
    'gen_ai.completion.0.role': 'assistant',
    'gen_ai.completion.0.content': c.answer,
  };
  if (!c.tool) return [answer];
  const askTool: Attrs = {
    ...prompt(c, false),
    'gen_ai.completion.0.role': 'assistant',
    'gen_ai.completion.0.tool_calls.0.id': 'call_1',
    'gen_ai.completion.0.tool_calls.0.name': c.tool.name,
    'gen_ai.completion.0.tool_calls.0.arguments': c.tool.arguments,
    'gen_ai.completion.0.finish_reason': 'tool_calls',
  };
  return [askTool, answer];
}

/** Writes one finished rollout (status `succeeded`, feedback added after it ended); returns its id. */
export async function seedRecorded(store: LightningStore, spec: RecordedRollout): Promise<string> {
  const started = await store.startRollout({
    input: spec.input,
    mode: spec.mode ?? null,
    metadata: spec.metadata ?? {},
    ...(spec.resourcesId ? { resourcesId: spec.resourcesId } : {}),
  });
  const { rolloutId } = started;
  const { attemptId } = started.attempt;
  const add = async (spanId: string, name: string, attributes: Attrs, parentId: string | null = 'agent') => {
    const sequenceId = await store.getNextSpanSequenceId(rolloutId, attemptId);
    const startTime = 1_700_000_000 + sequenceId;
    await store.addSpan({
      ...{ rolloutId, attemptId, sequenceId, traceId: `t-${rolloutId}`, spanId, parentId, name, attributes },
      ...{ startTime, endTime: startTime },
    });
  };
  const reward = (value: number, extra: Attrs = {}): Attrs => ({
    'agentlightning.reward.0.name': 'primary',
    'agentlightning.reward.0.value': value,
    ...extra,
  });
  await add('agent', 'agent.run', spec.spanAgent ? { 'agent.name': spec.spanAgent } : {}, null);
  for (const [i, attrs] of (spec.conversation ? llmCalls(spec.conversation) : []).entries())
    await add(`llm-${i}`, 'openai.chat.completion', attrs);
  if (spec.reward !== undefined) await add('reward', 'agentlightning.annotation', reward(spec.reward));
  await store.updateAttempt(rolloutId, attemptId, { status: 'succeeded' });
  if (spec.judge !== undefined) {
    const attrs = { 'agl.reward.source': 'judge', ...spec.judgeAttributes };
    await add('judge', 'agentlightning.annotation', reward(spec.judge, attrs));
  }
  for (const [i, value] of (spec.feedback ?? []).entries())
    await recordFeedback(store, rolloutId, value, i === 0 ? { comment: 'first' } : {});
  return rolloutId;
}
