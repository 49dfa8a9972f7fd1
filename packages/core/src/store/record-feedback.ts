import { NotFoundError, ValidationError } from '../errors/index';
import { checkReward, newSpanId, newTraceId, type Span } from '../schema/index';
import {
  ATTR_FEEDBACK_COMMENT,
  ATTR_REWARD_SOURCE,
  REWARD_PRIMARY_NAME,
  REWARD_SOURCES,
  SPAN_ANNOTATION,
  rewardNameKey,
  rewardValueKey,
} from '../semconv';
import type { LightningStore } from './lightning-store';

/** Options of {@link recordFeedback}. */
export interface FeedbackOptions {
  /** The user's comment, kept with the score. */
  comment?: string;
  /** Further named scores (`{ helpful: 1, polite: 0.5 }`), stored as reward entries 1..n. */
  dimensions?: Record<string, number>;
  /** When the feedback was given, epoch seconds. Default: the store's clock. */
  time?: number;
}

function finite(value: unknown, field: string): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ValidationError(
      `Feedback ${field} must be a finite number (or a boolean), got ${JSON.stringify(value) ?? String(value)}; send e.g. 1 for a thumbs-up and 0 for a thumbs-down.`,
      [{ path: field, message: 'must be a finite number' }],
    );
  }
  checkReward(value, field);
  return value;
}

/**
 * Writes one reward span on a rollout's latest attempt, after every span already stored (its sequence id comes from
 * the store), and returns it. Works on any `LightningStore`, embedded or remote. Throws `NotFoundError` for an unknown
 * rollout or one without attempts.
 */
export async function recordRewardSpan(
  store: LightningStore,
  rolloutId: string,
  attributes: Record<string, string | number | boolean>,
  options: { time?: number } = {},
): Promise<Span> {
  const attempt = await store.getLatestAttempt(rolloutId);
  if (!attempt) {
    const rollout = await store.getRolloutById(rolloutId);
    throw new NotFoundError(
      rollout ? 'attempt' : 'rollout',
      rolloutId,
      rollout
        ? `Rollout ${rolloutId} has no attempt yet, so a reward has nowhere to go; give it once the rollout has started.`
        : `Rollout ${rolloutId} not found; pass the id from the response header x-agl-rollout-id or \`agl rollouts\`.`,
    );
  }
  const sequenceId = await store.getNextSpanSequenceId(rolloutId, attempt.attemptId);
  const time = options.time ?? Date.now() / 1000;
  const span = await store.addSpan({
    rolloutId,
    attemptId: attempt.attemptId,
    sequenceId,
    traceId: newTraceId(),
    spanId: newSpanId(),
    parentId: null,
    name: SPAN_ANNOTATION,
    attributes,
    startTime: time,
    endTime: time,
  });
  if (!span) throw new Error(`The store did not keep the reward span of rollout ${rolloutId}.`);
  return span;
}

/**
 * Records a user's late feedback on a finished rollout (minutes or days later, from any process): a reward span with
 * `agl.reward.source = "feedback"`. Every feedback is kept; the latest is the rollout's final reward, ahead of the
 * agent's own reward and of judge scores (`findFinalRewardSpan`). Throws `ValidationError` for a non-finite reward and
 * `NotFoundError` for an unknown rollout.
 */
export async function recordFeedback(
  store: LightningStore,
  rolloutId: string,
  reward: number | boolean,
  options: FeedbackOptions = {},
): Promise<Span> {
  const attributes: Record<string, string | number | boolean> = {
    [rewardNameKey(0)]: REWARD_PRIMARY_NAME,
    [rewardValueKey(0)]: finite(reward, 'reward'),
    [ATTR_REWARD_SOURCE]: REWARD_SOURCES.feedback,
  };
  if (options.comment !== undefined) {
    if (typeof options.comment !== 'string') {
      throw new ValidationError('Feedback comment must be a string.', [{ path: 'comment', message: 'not a string' }]);
    }
    attributes[ATTR_FEEDBACK_COMMENT] = options.comment;
  }
  Object.entries(options.dimensions ?? {}).forEach(([name, value], i) => {
    attributes[rewardNameKey(i + 1)] = name;
    attributes[rewardValueKey(i + 1)] = finite(value, `dimensions.${name}`);
  });
  return recordRewardSpan(store, rolloutId, attributes, options.time === undefined ? {} : { time: options.time });
}
