import type { LightningStore } from '@agl/core/store';
import type { SpanInput } from '@agl/core/schema';

/** What {@link fillDemoStore} wrote, for assertions. */
export interface DemoStore {
  /** Final reward per rollout id (null: no reward span). */
  rewards: Map<string, number | null>;
  /** Spans per attempt id. */
  spanCounts: Map<string, number>;
  /** The rollout with an LLM call, a tool call and a reward. */
  richRolloutId: string;
  resourceIds: string[];
}

/**
 * Fills a store like a short APO run would: two prompt versions (the first with an LLM resource and an API key),
 * finished train/val rollouts whose attempt holds an agent span, an LLM call, a tool call and a reward.
 */
export async function fillDemoStore(store: LightningStore): Promise<DemoStore> {
  const v1 = await store.addResources({
    prompt: { resourceType: 'prompt_template', template: 'Pick a room.\nAnswer with the id.', engine: 'f-string' },
    llm: { resourceType: 'llm', endpoint: 'http://127.0.0.1:9/v1', model: 'agent-model', apiKey: 'sk-very-secret-0042' },
  });
  const v2 = await store.addResources({
    prompt: { resourceType: 'prompt_template', template: 'Pick the smallest room that fits.\nAnswer with the id.', engine: 'f-string' },
  });
  const rewards = new Map<string, number | null>();
  const spanCounts = new Map<string, number>();
  let richRolloutId = '';
  const plan: Array<[string, 'train' | 'val', number | null]> = [
    [v1.resourcesId, 'train', 0],
    [v1.resourcesId, 'val', 0.3],
    [v2.resourcesId, 'train', 1],
    [v2.resourcesId, 'val', 1],
    [v2.resourcesId, 'train', null],
  ];
  for (const [resourcesId, mode, reward] of plan) {
    const r = await store.startRollout({ input: { request: `book for ${mode}` }, mode, resourcesId, workerId: 'Worker-0' });
    const t = r.startTime;
    const base = { rolloutId: r.rolloutId, attemptId: r.attempt.attemptId, traceId: 'a'.repeat(32) };
    const spans: SpanInput[] = [
      { ...base, sequenceId: 1, spanId: 'agent0000000001', parentId: null, name: 'agent.step', startTime: t, endTime: t + 2, attributes: { 'agent.name': 'room-agent' } },
      {
        ...base,
        sequenceId: 2,
        spanId: 'llm00000000000001',
        parentId: 'agent0000000001',
        name: 'openai.chat.completion',
        startTime: t + 0.1,
        endTime: t + 1.1,
        attributes: {
          'gen_ai.request.model': 'agent-model',
          'gen_ai.prompt.0.role': 'system',
          'gen_ai.prompt.0.content': 'Pick a room.',
          'gen_ai.prompt.1.role': 'user',
          'gen_ai.prompt.1.content': 'Book a room for 4 people with a projector.',
          'gen_ai.completion.0.role': 'assistant',
          'gen_ai.completion.0.content': 'Room B12',
          'gen_ai.usage.input_tokens': 21,
          'gen_ai.usage.output_tokens': 3,
        },
      },
      { ...base, sequenceId: 3, spanId: 'tool0000000000001', parentId: 'agent0000000001', name: 'tool.rooms', startTime: t + 1.2, endTime: t + 1.5, attributes: { 'tool.name': 'list_rooms', 'tool.parameters': '{"capacity":4}' } },
    ];
    if (reward !== null) {
      spans.push({
        ...base,
        sequenceId: 4,
        spanId: 'reward00000000001',
        parentId: null,
        name: 'agentlightning.annotation',
        startTime: t + 2,
        endTime: t + 2,
        attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': reward },
      });
    }
    await store.addSpans(spans);
    await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
    rewards.set(r.rolloutId, reward);
    spanCounts.set(r.attempt.attemptId, spans.length);
    if (reward === 1 && !richRolloutId) richRolloutId = r.rolloutId;
  }
  // Start times have millisecond resolution and equal ones keep insertion order under either sort direction (as in
  // AGL), so let the clock move on: the queued rollout is then strictly the newest.
  await new Promise((resolve) => setTimeout(resolve, 5));
  await store.enqueueRollout({ input: { request: 'queued' }, mode: 'train' });
  await store.updateWorker('Worker-0');
  return { rewards, spanCounts, richRolloutId, resourceIds: [v1.resourcesId, v2.resourcesId] };
}
