// Seeds a store with rollouts as production recording leaves them: `metadata.source`, `metadata.agent_name`, an
// agent span, an LLM call, an agent reward and late user feedback spans (`agl.reward.source = 'feedback'`).
import type { JsonObject, JsonValue, RolloutMode } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';

/** One rollout to seed. */
export interface RecordedRollout {
  input: JsonValue;
  metadata?: JsonObject;
  mode?: RolloutMode;
  resourcesId?: string;
  /** Agent name written on an `agent.run` span (`agent.name`). */
  spanAgent?: string;
  /** The agent's own reward. */
  reward?: number;
  /** Feedback rewards, oldest first; the first carries a comment. */
  feedback?: number[];
  /** A judge reward span. */
  judge?: number;
}

/** Writes one finished rollout; returns its id. */
export async function seedRecorded(store: LightningStore, spec: RecordedRollout): Promise<string> {
  const started = await store.startRollout({
    input: spec.input,
    mode: spec.mode ?? null,
    metadata: spec.metadata ?? {},
    ...(spec.resourcesId ? { resourcesId: spec.resourcesId } : {}),
  });
  const { rolloutId } = started;
  const { attemptId } = started.attempt;
  const add = async (spanId: string, name: string, attributes: Record<string, string | number>): Promise<void> => {
    const sequenceId = await store.getNextSpanSequenceId(rolloutId, attemptId);
    await store.addSpan({ rolloutId, attemptId, sequenceId, traceId: `t-${rolloutId}`, spanId, parentId: null, name, attributes, startTime: 1_700_000_000 + sequenceId, endTime: null });
  };
  const reward = (value: number, extra: Record<string, string | number> = {}): Record<string, string | number> => ({ 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': value, ...extra });
  await add('agent', 'agent.run', spec.spanAgent ? { 'agent.name': spec.spanAgent } : {});
  if (spec.judge !== undefined) await add('judge', 'agentlightning.annotation', reward(spec.judge, { 'agl.reward.source': 'judge' }));
  if (spec.reward !== undefined) await add('reward', 'agentlightning.annotation', reward(spec.reward));
  await store.updateAttempt(rolloutId, attemptId, { status: 'succeeded' });
  for (const [i, value] of (spec.feedback ?? []).entries()) {
    await add(`feedback-${i}`, 'agentlightning.annotation', reward(value, { 'agl.reward.source': 'feedback', ...(i === 0 ? { 'agl.feedback.comment': 'first' } : {}) }));
  }
  return rolloutId;
}
