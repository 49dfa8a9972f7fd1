import { context, SpanStatusCode, type Attributes as OtelAttributes } from '@opentelemetry/api';
import { ValidationError } from '../errors/index';
import { sanitizeAttributeValue, toSpanAttributes } from '../transitions/otel-attributes';
import {
  ATTR_EXCEPTION_ESCAPED,
  ATTR_EXCEPTION_MESSAGE,
  ATTR_EXCEPTION_STACKTRACE,
  ATTR_EXCEPTION_TYPE,
  ATTR_MESSAGE_BODY,
  ATTR_OBJECT_JSON,
  ATTR_OBJECT_LITERAL,
  ATTR_OBJECT_TYPE,
  REWARD_PRIMARY_NAME,
  SPAN_ANNOTATION,
  SPAN_EXCEPTION,
  SPAN_MESSAGE,
  SPAN_OBJECT,
  rewardNameKey,
  rewardValueKey,
} from '../semconv';
import { getAglTracer } from './agl-tracer';
import { isRecordingOff, requireRolloutContext } from './rollout-context';
import { preciseNowMs } from './span-conversion';

/** An attribute value after sanitising. */
export type EmittedAttributeValue = string | number | boolean | Array<string | number | boolean>;

/** What an emitter built (AGL 0.3 `SpanCoreFields`). */
export interface EmittedSpan {
  name: string;
  attributes: Record<string, EmittedAttributeValue>;
  status: { statusCode: 'UNSET' | 'OK' | 'ERROR'; description: string | null };
  /** Seconds since the epoch. */
  startTime: number;
  /** Seconds since the epoch (equal to `startTime`: emitter spans have no duration). */
  endTime: number;
}

/** Options every emitter takes. */
export interface EmitOptions {
  /** Extra attributes, flattened and sanitised. */
  attributes?: Record<string, unknown>;
  /**
   * `true` (default): send the span to the rollout's store; outside a rollout this throws a `UserError`.
   * `false`: only build and return the span.
   */
  propagate?: boolean;
}

function emit(
  what: string,
  name: string,
  attributes: Record<string, EmittedAttributeValue>,
  options: EmitOptions,
): EmittedSpan {
  const merged = { ...attributes, ...(options.attributes ? toSpanAttributes(options.attributes) : {}) } as Record<
    string,
    EmittedAttributeValue
  >;
  const nowMs = preciseNowMs();
  const now = nowMs / 1000;
  const built: EmittedSpan = {
    name,
    attributes: merged,
    status: { statusCode: 'OK', description: null },
    startTime: now,
    endTime: now,
  };
  if (options.propagate === false || isRecordingOff()) return built;
  const ctx = requireRolloutContext(what);
  const tracer = (ctx.tracer ?? getAglTracer()).getTracer('agentlightning');
  const span = tracer.startSpan(name, { attributes: merged as OtelAttributes, startTime: nowMs }, context.active());
  span.setStatus({ code: SpanStatusCode.OK });
  span.end(nowMs);
  return built;
}

function rewardNumber(value: unknown, label: string): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw new ValidationError(
    `emitReward: reward ${label} must be a finite number or a boolean, got ${JSON.stringify(value) ?? String(value)}.`,
    [{ path: label, message: 'expected a finite number' }],
  );
}

/**
 * Emits a reward as an `agentlightning.annotation` span. A number becomes the single `primary` dimension; an object
 * `{name: value}` is a multi-dimensional reward whose first key (or `primaryKey`) is dimension 0, the primary reward.
 */
export function emitReward(
  reward: number | boolean | Record<string, number | boolean>,
  options: EmitOptions & { primaryKey?: string } = {},
): EmittedSpan {
  const attrs: Record<string, EmittedAttributeValue> = {};
  if (typeof reward === 'number' || typeof reward === 'boolean') {
    attrs[rewardNameKey(0)] = REWARD_PRIMARY_NAME;
    attrs[rewardValueKey(0)] = rewardNumber(reward, 'value');
  } else if (reward && typeof reward === 'object' && !Array.isArray(reward)) {
    const keys = Object.keys(reward);
    if (keys.length === 0) {
      throw new ValidationError('emitReward: the reward object is empty; pass at least one {name: value} entry.');
    }
    const primary = options.primaryKey ?? (keys[0] as string);
    if (!keys.includes(primary)) {
      throw new ValidationError(
        `emitReward: primaryKey ${JSON.stringify(primary)} is not a key of the reward (keys: ${keys.join(', ')}).`,
        [{ path: 'primaryKey', message: 'must be one of the reward keys' }],
      );
    }
    const ordered = [primary, ...keys.filter((k) => k !== primary)];
    ordered.forEach((key, i) => {
      attrs[rewardNameKey(i)] = key;
      attrs[rewardValueKey(i)] = rewardNumber(reward[key], key);
    });
  } else {
    throw new ValidationError(
      `emitReward: expected a number or an object of numbers, got ${JSON.stringify(reward) ?? String(reward)}.`,
    );
  }
  return emit('emitReward', SPAN_ANNOTATION, attrs, options);
}

/** Emits free-form annotations (flattened) as an `agentlightning.annotation` span. */
export function emitAnnotation(
  annotation: Record<string, unknown>,
  options: Omit<EmitOptions, 'attributes'> = {},
): EmittedSpan {
  if (!annotation || typeof annotation !== 'object' || Array.isArray(annotation)) {
    throw new ValidationError('emitAnnotation: the annotation must be a plain object of attributes.');
  }
  return emit('emitAnnotation', SPAN_ANNOTATION, toSpanAttributes(annotation), options);
}

/** Emits a log-like message as an `agentlightning.message` span (`agentlightning.message.body`). */
export function emitMessage(message: string, options: EmitOptions = {}): EmittedSpan {
  if (typeof message !== 'string') {
    throw new ValidationError(`emitMessage: the message must be a string, got ${typeof message}.`);
  }
  return emit('emitMessage', SPAN_MESSAGE, { [ATTR_MESSAGE_BODY]: message }, options);
}

function objectAttributes(value: unknown): Record<string, EmittedAttributeValue> {
  if (typeof value === 'string') return { [ATTR_OBJECT_TYPE]: 'str', [ATTR_OBJECT_LITERAL]: value };
  if (typeof value === 'boolean')
    return { [ATTR_OBJECT_TYPE]: 'bool', [ATTR_OBJECT_LITERAL]: value ? 'True' : 'False' };
  if (typeof value === 'number') {
    return { [ATTR_OBJECT_TYPE]: Number.isInteger(value) ? 'int' : 'float', [ATTR_OBJECT_LITERAL]: String(value) };
  }
  if (value instanceof Uint8Array) {
    let binary = '';
    for (const byte of value) binary += String.fromCharCode(byte);
    return { [ATTR_OBJECT_TYPE]: 'bytes', [ATTR_OBJECT_LITERAL]: btoa(binary) };
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new ValidationError(`emitObject: the object is not JSON-serialisable (${String(error)}).`);
  }
  if (json === undefined) throw new ValidationError(`emitObject: ${typeof value} values are not JSON-serialisable.`);
  const type =
    value === null
      ? 'NoneType'
      : Array.isArray(value)
        ? 'list'
        : Object.getPrototypeOf(value) === Object.prototype
          ? 'dict'
          : ((value as object).constructor?.name ?? 'object');
  return { [ATTR_OBJECT_TYPE]: type, [ATTR_OBJECT_JSON]: json };
}

/** Emits any JSON-serialisable value as an `agentlightning.object` span. */
export function emitObject(value: unknown, options: EmitOptions = {}): EmittedSpan {
  return emit('emitObject', SPAN_OBJECT, objectAttributes(value), options);
}

/** Emits an error as an `agentlightning.exception` span (OTel `exception.*` keys; status OK, as in AGL 0.3). */
export function emitException(error: unknown, options: EmitOptions = {}): EmittedSpan {
  const err = error instanceof Error ? error : null;
  const attrs: Record<string, EmittedAttributeValue> = {
    [ATTR_EXCEPTION_TYPE]: err ? err.name || err.constructor.name : typeof error,
    [ATTR_EXCEPTION_MESSAGE]: err ? err.message : String(sanitizeAttributeValue(error)),
    [ATTR_EXCEPTION_ESCAPED]: true,
  };
  if (err?.stack) attrs[ATTR_EXCEPTION_STACKTRACE] = err.stack;
  return emit('emitException', SPAN_EXCEPTION, attrs, options);
}
