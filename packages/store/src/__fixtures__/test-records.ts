import { Span, type Rollout, type SpanInput } from '@agl/core/schema';
import { newRolloutRecord } from '../engine/rules';

/** A queuing rollout record as the storage layer keeps it: start time 1, the default config, no input. */
export function testRollout(rolloutId: string): Rollout {
  return newRolloutRecord({ rolloutId, input: null }, 'queuing', 1, null);
}

/** A root span of an attempt: trace `t`, span `s1`, name `n`, from 1 to 2, sequence id 1, unless `overrides` say. */
export function testSpan(rolloutId: string, attemptId: string, overrides: Partial<SpanInput> = {}): SpanInput {
  return {
    rolloutId,
    attemptId,
    sequenceId: 1,
    traceId: 't',
    spanId: 's1',
    parentId: null,
    name: 'n',
    startTime: 1,
    endTime: 2,
    ...overrides,
  };
}

/** {@link testSpan} as a whole stored document (every schema default filled in). */
export function testSpanDoc(rolloutId: string, attemptId: string, overrides: Partial<SpanInput> = {}): Span {
  return Span.parse(testSpan(rolloutId, attemptId, overrides));
}
