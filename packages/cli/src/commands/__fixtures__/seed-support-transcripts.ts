// Seeds a store with recorded support-bot traffic as production recording writes it (CONTRACTS C/D): a rollout with
// `metadata.source = 'production'`, an agent span, one traced chat call that looks up an order with a tool and answers,
// the agent's own reward span, and later a user's feedback (`recordFeedback`, CONTRACTS A), which takes precedence.
import type { Attributes } from '@agl/core/schema';
import { recordFeedback, type LightningStore } from '@agl/core/store';
import { llmRequestAttributes, llmResponseAttributes } from '@agl/core/tracer';

const TOOL = {
  name: 'lookup_order',
  description: 'Find an order by id',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
};

/** One recorded conversation; returns the rollout id. */
export async function seedSupportTranscript(
  store: LightningStore,
  spec: { order: string; answer: string; agentReward: number; feedback: number; agent?: string; resourcesId?: string },
): Promise<string> {
  const question = `Where is my order ${spec.order}?`;
  const started = await store.startRollout({
    input: { question },
    mode: null,
    metadata: { source: 'production', agent_name: spec.agent ?? 'support-bot', task_id: `order-${spec.order}` },
    ...(spec.resourcesId ? { resourcesId: spec.resourcesId } : {}),
  });
  const { rolloutId } = started;
  const { attemptId } = started.attempt;
  const t0 = 1_750_000_000;
  const messages = [
    { role: 'system', content: 'You are the support bot. Look orders up before answering.' },
    { role: 'user', content: question },
    {
      role: 'assistant',
      toolCalls: [{ id: 'call_1', name: TOOL.name, arguments: JSON.stringify({ id: spec.order }) }],
    },
    { role: 'tool', toolCallId: 'call_1', content: JSON.stringify({ id: spec.order, status: 'shipped' }) },
  ];
  const spans: Array<{ spanId: string; parentId: string | null; name: string; attributes: Attributes }> = [
    { spanId: 'agent', parentId: null, name: 'agent.run', attributes: { 'agent.name': spec.agent ?? 'support-bot' } },
    {
      spanId: 'llm',
      parentId: 'agent',
      name: 'openai.chat.completion',
      attributes: {
        ...llmRequestAttributes({ model: 'gpt-4o-mini', messages, tools: [TOOL] }),
        ...llmResponseAttributes({
          id: `${rolloutId}-1`,
          choices: [{ role: 'assistant', content: spec.answer, finishReason: 'stop' }],
        }),
      },
    },
    {
      spanId: 'reward',
      parentId: 'agent',
      name: 'agentlightning.annotation',
      attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': spec.agentReward },
    },
  ];
  for (const [i, s] of spans.entries()) {
    await store.addSpan({
      ...s,
      rolloutId,
      attemptId,
      sequenceId: await store.getNextSpanSequenceId(rolloutId, attemptId),
      traceId: `trace-${rolloutId}`,
      startTime: t0 + i,
      endTime: t0 + i + 0.5,
    });
  }
  await store.updateAttempt(rolloutId, attemptId, { status: 'succeeded' });
  await recordFeedback(store, rolloutId, spec.feedback, { comment: spec.feedback >= 1 ? 'thanks!' : 'wrong order' });
  return rolloutId;
}
