import { ValidationError } from '@agl/core/errors';
import { rewardProblem, timeProblem, type SpanInput } from '@agl/core/schema';
import { ATTR_REWARD } from '@agl/core/semconv';
import { applyRecords, type LightningStore } from '@agl/core/store';

/** `agentlightning.reward.{i}.value` and AGL 0.3's scalar `agentlightning.reward`. */
const REWARD_KEY = new RegExp(`^${ATTR_REWARD.replace(/\./gu, '\\.')}(?:\\.\\d+\\.value)?$`, 'u');

function refuse(field: string, problem: string): ValidationError {
  return new ValidationError(`Invalid ${field}: ${problem}.`, [{ path: field, message: problem }], { status: 422 });
}

function checkRewardAttributes(attributes: unknown, where: string): void {
  if (typeof attributes !== 'object' || attributes === null) return;
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value !== 'number' || !REWARD_KEY.test(key)) continue;
    const problem = rewardProblem(value);
    if (problem) throw refuse(`${where}.attributes["${key}"]`, problem);
  }
}

/** Each of `fields` of `value` that is a number must be a time within 2000-01-01 … 2200-01-01 (`null` is fine). */
function checkTimes(value: unknown, fields: readonly string[], where: string): void {
  if (typeof value !== 'object' || value === null) return;
  for (const field of fields) {
    const time = (value as Record<string, unknown>)[field];
    if (typeof time !== 'number') continue;
    const problem = timeProblem(time);
    if (problem) throw refuse(where ? `${where}.${field}` : field, problem);
  }
}

const SPAN_TIMES = ['startTime', 'endTime'] as const;
const ATTEMPT_TIMES = ['startTime', 'endTime', 'lastHeartbeatTime'] as const;

function checkSpan(span: Partial<SpanInput> | undefined, where: string): void {
  if (!span) return;
  checkTimes(span, SPAN_TIMES, where);
  if (Array.isArray(span.events)) span.events.forEach((e, i) => checkTimes(e, ['timestamp'], `${where}.events[${i}]`));
  checkRewardAttributes(span.attributes, where);
}

/** The attributes of the span batch route's text path: parsed only when they name a reward. */
function checkAttributeTexts(texts: unknown, where: string): void {
  if (!Array.isArray(texts)) return;
  texts.forEach((text, i) => {
    if (typeof text !== 'string' || !text.includes(ATTR_REWARD)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return; // The route refuses malformed attribute text itself.
    }
    checkRewardAttributes(parsed, `${where}[${i}]`);
  });
}

type Check = (args: unknown[]) => void;

const CHECKS: Record<string, Check> = {
  startRollout: ([request]) => checkTimes(request, ['startTime'], ''),
  updateRollout: ([, update]) => checkTimes(update, SPAN_TIMES, ''),
  updateAttempt: ([, , update]) => checkTimes(update, ATTEMPT_TIMES, ''),
  addSpan: ([span]) => checkSpan(span as SpanInput, 'span'),
  addSpans: ([spans]) => (spans as SpanInput[]).forEach((s, i) => checkSpan(s, `spans[${i}]`)),
  ingestSpans: ([items]) =>
    (items as Array<{ span?: SpanInput } | null>).forEach((s, i) => checkSpan(s?.span, `spans[${i}]`)),
  addSpansWithAttributesJson: ([spans, texts]) => {
    (spans as SpanInput[]).forEach((s, i) => checkSpan(s, `spans[${i}]`));
    checkAttributeTexts(texts, 'spans');
  },
};

/**
 * Whether every record of a production records batch passes the bounds: each span of its `spans` records
 * ({@link checkSpan}), and the times of its `start` and `end` records.
 */
function recordsWithinBounds(records: unknown): boolean {
  if (!Array.isArray(records)) return true;
  try {
    for (const record of records as Array<{ kind?: unknown; spans?: unknown } | null>) {
      if (record?.kind === 'spans' && Array.isArray(record.spans))
        (record.spans as SpanInput[]).forEach((s, i) => checkSpan(s, `spans[${i}]`));
      else if (record?.kind === 'start' || record?.kind === 'end') checkTimes(record, SPAN_TIMES, '');
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * `store` with value bounds enforced on every write the server makes for a client (span routes, OTLP, records,
 * events, feedback, rollout and attempt routes), before anything of the request is written:
 * - a reward attribute (`agentlightning.reward.{i}.value`) outside ±1e15 is a 422 `ValidationError` naming the span
 *   and the attribute;
 * - a time (a span's `startTime`/`endTime` and its events' `timestamp`, a rollout's `startTime`, an attempt's
 *   `endTime`/`lastHeartbeatTime`) outside 2000-01-01 … 2200-01-01 in epoch seconds (or not finite) is a 422 naming
 *   the field (`spans[3].startTime`).
 */
export function enforceWriteBounds(store: LightningStore): LightningStore {
  const bounded: LightningStore = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (key === 'applyProductionRecords') {
        // A batch with an out-of-bounds reward or time goes record by record through the checked methods, so only the
        // record that holds it is refused (by index), as `applyRecords` does.
        return (records: unknown) =>
          recordsWithinBounds(records) ? method.call(target, records) : applyRecords(bounded, records as unknown[]);
      }
      const check = typeof key === 'string' ? CHECKS[key] : undefined;
      if (!check) return method.bind(target);
      return (...args: unknown[]) => {
        try {
          check(args);
        } catch (error) {
          return Promise.reject(error);
        }
        return method.apply(target, args);
      };
    },
  });
  return bounded;
}
