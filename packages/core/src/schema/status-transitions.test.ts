import { describe, expect, it } from 'vitest';
import { InvalidTransitionError } from '../errors/invalid-transition-error';
import { AttemptStatus, RolloutStatus } from './enums';
import {
  ATTEMPT_TRANSITIONS,
  ROLLOUT_TRANSITIONS,
  assertAttemptTransition,
  assertRolloutTransition,
  canTransitionRollout,
  rolloutStatusFromAttempt,
} from './status-transitions';

// The exhaustive expectation, written out independently of the table under test.
const ROLLOUT_ALLOWED = new Set([
  'queuing>preparing',
  'queuing>succeeded',
  'queuing>failed',
  'queuing>cancelled',
  'queuing>requeuing',
  'preparing>running',
  'preparing>succeeded',
  'preparing>failed',
  'preparing>cancelled',
  'preparing>requeuing',
  'preparing>queuing',
  'running>preparing',
  'running>succeeded',
  'running>failed',
  'running>cancelled',
  'running>requeuing',
  'running>queuing',
  'requeuing>preparing',
  'requeuing>running',
  'requeuing>succeeded',
  'requeuing>failed',
  'requeuing>cancelled',
  'requeuing>queuing',
  'succeeded>queuing',
  'succeeded>requeuing',
  'failed>queuing',
  'failed>requeuing',
  'cancelled>queuing',
  'cancelled>requeuing',
]);
const ATTEMPT_ALLOWED = new Set([
  'preparing>running',
  'preparing>succeeded',
  'preparing>failed',
  'preparing>unresponsive',
  'preparing>timeout',
  'running>succeeded',
  'running>failed',
  'running>unresponsive',
  'running>timeout',
  'unresponsive>running',
  'unresponsive>succeeded',
  'unresponsive>failed',
  'unresponsive>timeout',
]);

describe('rollout status transitions', () => {
  for (const from of RolloutStatus.options) {
    for (const to of RolloutStatus.options) {
      const allowed = from === to || ROLLOUT_ALLOWED.has(`${from}>${to}`);
      it(`${from} → ${to} is ${allowed ? 'allowed' : 'rejected'}`, () => {
        if (allowed) {
          expect(() => assertRolloutTransition('ro-1', from, to)).not.toThrow();
        } else {
          let caught: unknown;
          try {
            assertRolloutTransition('ro-1', from, to);
          } catch (error) {
            caught = error;
          }
          expect(InvalidTransitionError.isInstance(caught)).toBe(true);
          expect((caught as Error).message).toContain(`"${from}" → "${to}"`);
        }
      });
    }
  }

  it('keeps the moves AGL 0.3 exercises', () => {
    expect(canTransitionRollout('queuing', 'succeeded')).toBe(true);
    expect(canTransitionRollout('preparing', 'requeuing')).toBe(true);
    expect(canTransitionRollout('requeuing', 'running')).toBe(true);
    expect(canTransitionRollout('succeeded', 'preparing')).toBe(false);
    expect(Object.keys(ROLLOUT_TRANSITIONS).sort()).toEqual([...RolloutStatus.options].sort());
  });
});

describe('attempt status transitions', () => {
  for (const from of AttemptStatus.options) {
    for (const to of AttemptStatus.options) {
      const allowed = from === to || ATTEMPT_ALLOWED.has(`${from}>${to}`);
      it(`${from} → ${to} is ${allowed ? 'allowed' : 'rejected'}`, () => {
        const run = () => assertAttemptTransition('at-1', from, to);
        if (allowed) expect(run).not.toThrow();
        else expect(run).toThrow(/Illegal attempt status transition/);
      });
    }
  }
  it('covers every status', () => {
    expect(Object.keys(ATTEMPT_TRANSITIONS).sort()).toEqual([...AttemptStatus.options].sort());
  });
});

describe('rolloutStatusFromAttempt', () => {
  const retry = { maxAttempts: 3, retryCondition: ['failed', 'timeout'] as AttemptStatus[] };
  it('carries preparing, running and succeeded over', () => {
    expect(rolloutStatusFromAttempt('preparing', 1, retry)).toBe('preparing');
    expect(rolloutStatusFromAttempt('running', 1, retry)).toBe('running');
    expect(rolloutStatusFromAttempt('succeeded', 3, retry)).toBe('succeeded');
  });
  it('requeues only when the condition matches and attempts remain', () => {
    expect(rolloutStatusFromAttempt('failed', 2, retry)).toBe('requeuing');
    expect(rolloutStatusFromAttempt('failed', 3, retry)).toBe('failed');
    expect(rolloutStatusFromAttempt('unresponsive', 1, retry)).toBe('failed');
    expect(rolloutStatusFromAttempt('timeout', 1, retry)).toBe('requeuing');
  });
});
