import { ValidationError } from '@agl/core/errors';
import {
  newAttemptId,
  newRolloutId,
  type JsonObject,
  type JsonValue,
  type NamedResources,
  type ReleaseArm,
} from '@agl/core/schema';
import { recordFeedback, type FeedbackOptions } from '@agl/core/store';
import {
  emitException,
  getAglTracer,
  preciseNowMs,
  withoutRecording,
  withRolloutContext,
  type RolloutContext,
} from '@agl/core/tracer';
import type { Span } from '@agl/core/schema';
import { StoreClient } from '../store-client';
import { flushObserve, getObserver, warnOnce } from './observe-config';
import { servedMetadata, servedResources } from './release-assignment';

/** Options of {@link observe}. */
export interface ObserveOptions {
  /** The rollout's task input (what the request asked), stored as the rollout's `input`. Default `null`. */
  input?: JsonValue;
  /** More rollout metadata, merged after `source: "production"`. */
  metadata?: JsonObject;
  /** Stored as `metadata.agent_name` (default: `configureObserve`'s `agentName`). */
  agentName?: string;
  /**
   * While a release runs, the key that picks the request's arm (a user or session id, so a user stays on one arm,
   * also while the share grows). Default: the rollout id (each request drawn on its own).
   */
  unitKey?: string;
}

/** The rollout `observe` hands to `fn`. */
export interface ObservedRollout {
  /**
   * The rollout's id. A request that is not recorded (`recorded: false`) gets one too, but it names nothing in the
   * store, and `observeHandler` / `observeFetch` do not put it in a response header.
   */
  readonly rolloutId: string;
  /** The attempt's id. */
  readonly attemptId: string;
  /**
   * False when no store is configured, `sampleRate` left this request out, or the buffer was full: nothing of it is
   * stored.
   */
  readonly recorded: boolean;
  /**
   * The resources that serve this request (prompt template, LLM endpoint...): the latest published ones, or while a
   * release runs, its arm's; `undefined` when none is known (the app's defaults serve it, and the rollout records no
   * resources id). Decided once per request: the record names exactly these.
   */
  readonly resources: NamedResources | undefined;
  /** The id of that resources version (`undefined` when none). */
  readonly resourcesId: string | undefined;
  /** The version number of that id (`undefined` when none). */
  readonly resourcesVersion: number | undefined;
  /** While a release runs: its id and the arm that serves this request (`baseline` or `candidate`). */
  readonly release: { readonly releaseId: string; readonly arm: ReleaseArm } | undefined;
}

/**
 * Records one request of a live service as a rollout: mode `null`, `metadata.source = "production"`, the resources
 * version that served it, and one attempt. `fn(rollout)` runs in the rollout's context, so every span of every AGL
 * adapter and of the tracer inside it (concurrent requests included) belongs to this rollout. The attempt ends
 * `succeeded`, or `failed` (the error recorded as an exception span) when `fn` throws. Returns `fn`'s value or rethrows
 * its error unchanged.
 *
 * Nothing here waits on the store: the rollout's start, its spans and its end are queued and exported in the
 * background (see `configureObserve`). Only the first request of the process may wait up to `resourcesFirstWaitMs` for
 * the first resources read.
 */
export function observe<T>(options: ObserveOptions, fn: (rollout: ObservedRollout) => T | Promise<T>): Promise<T> {
  return observeLazily(options, () => options.input ?? null, fn);
}

/**
 * `observe` with an input computed only when the request is recorded (internal: `observeHandler` and `observeFetch`
 * must not read a request that sampling leaves out). A request left out, or any request when no store is configured,
 * runs `fn` with `recorded: false` and nothing else.
 */
export async function observeLazily<T>(
  options: Omit<ObserveOptions, 'input'>,
  input: () => JsonValue | Promise<JsonValue>,
  fn: (rollout: ObservedRollout) => T | Promise<T>,
): Promise<T> {
  const observer = getObserver();
  const rolloutId = newRolloutId();
  const attemptId = newAttemptId();
  const recorder = observer.recorder;
  if (!recorder) {
    warnOnce(
      observer.logger,
      'no-store',
      '[agl observe] no store configured: requests are not recorded. Set AGL_STORE_URL (and AGL_STORE_TOKEN) or call ' +
        'configureObserve({ store }).',
    );
    return withoutRecording(() =>
      fn({
        rolloutId,
        attemptId,
        recorded: false,
        resources: undefined,
        resourcesId: undefined,
        resourcesVersion: undefined,
        release: undefined,
      }),
    );
  }
  // Decided once: what serves the request is what the record names (also for a release's arm). Awaited only while the
  // first read is pending: an await costs a promise (and the async context hooks on it) on every request.
  const cached = observer.resources?.get();
  const serving = cached instanceof Promise ? await cached : cached;
  const served = servedResources(serving, options.unitKey ?? rolloutId);
  if (observer.sampleRate < 1 && Math.random() >= observer.sampleRate) {
    recorder.countSampledOut();
    // Left out of the record, the request is still served with the published resources, like the recorded ones.
    return withoutRecording(() => fn({ rolloutId, attemptId, recorded: false, ...served }));
  }
  const agentName = options.agentName ?? observer.agentName;
  const metadata: JsonObject = { source: 'production', ...options.metadata, ...servedMetadata(served) };
  if (agentName !== undefined) metadata.agent_name = agentName;
  const resourcesId = served.resourcesId;
  const given = input();
  const recorded = recorder.start({
    rolloutId,
    attemptId,
    input: given instanceof Promise ? await given : given,
    metadata,
    resourcesId: resourcesId ?? null,
    // The tracer's clock (sub-millisecond): the rollout starts before, and ends after, its spans.
    startTime: preciseNowMs() / 1000,
  });
  const rollout: ObservedRollout = { rolloutId, attemptId, recorded, ...served };
  if (!recorded) return withoutRecording(() => fn(rollout));
  const ctx: RolloutContext = {
    rolloutId,
    attemptId,
    store: recorder.store,
    wireSpanSink: recorder.wireSpanSink,
    mode: null,
    resourcesId: resourcesId ?? null,
  };
  const finish = (status: 'succeeded' | 'failed'): void => {
    const endTime = preciseNowMs() / 1000;
    const end = (): void => recorder.end(rolloutId, attemptId, status, endTime);
    // The end goes after the spans the tracer still holds (handed to the recorder now, or, with a tracer that has no
    // span sinks, on its normal export schedule: never one export per request).
    const tracer = ctx.tracer ?? getAglTracer();
    if (tracer.afterSpansHanded) tracer.afterSpansHanded(end);
    else void (tracer.whenExported ? tracer.whenExported() : tracer.forceFlush()).catch(() => undefined).then(end);
  };
  let value: T;
  try {
    value = await withRolloutContext(ctx, () => fn(rollout));
  } catch (error) {
    try {
      withRolloutContext(ctx, () => emitException(error));
    } catch {
      // recording the error must never change it
    }
    finish('failed');
    throw error;
  }
  finish('succeeded');
  return value;
}

/** Options of {@link feedback}. */
export type { FeedbackOptions };

/**
 * Records a user's feedback on a rollout that may have finished minutes or days ago, from any process: a reward span
 * (`agl.reward.source = "feedback"`) on its latest attempt. Every feedback is kept; the latest feedback is the
 * rollout's final reward, ahead of a reward the agent emitted and of an LLM judge's.
 *
 * Unlike the rest of `@agl/client`, this call **throws** (it is an explicit user action, so its caller should know):
 * `NotFoundError` for an unknown rollout (including one still waiting in the recorder's buffer), `ValidationError`
 * for a non-finite reward, a `ConnectionError` when the store cannot be reached. It never touches the request path of
 * `observe`. Uses the configured store (`configureObserve` / `AGL_STORE_URL`); records of this process still in the
 * buffer are flushed first (at most 2 s), so feedback on a request that just finished finds its rollout.
 */
export async function feedback(
  rolloutId: string,
  reward: number | boolean,
  options: Omit<FeedbackOptions, 'time'> = {},
): Promise<Span> {
  const store = getObserver().store;
  if (!store) {
    throw new ValidationError(
      'feedback: no store configured. Set AGL_STORE_URL (and AGL_STORE_TOKEN) or call configureObserve({ store }).',
    );
  }
  if (getObserver().recorder?.stats().buffered) await flushObserve(2_000);
  if (store instanceof StoreClient) return store.addFeedback(rolloutId, reward, options);
  return recordFeedback(store, rolloutId, reward, options);
}
