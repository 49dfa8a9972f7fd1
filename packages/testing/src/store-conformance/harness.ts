import type { Span, SpanInput, WorkerStatus } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import { afterEach, beforeEach, expect } from 'vitest';
import { FakeClock } from '../fake-clock';
import type { StoreFactory, StoreUnderTest } from './types';

/** Per-test access to the store under test. */
export interface Harness {
  readonly store: LightningStore;
  readonly clock: FakeClock;
  /** Replaces the current store with a fresh one using another watchdog debounce (and a fresh clock at `start`). */
  restart(options: { scanDebounceSeconds: number; start?: number }): Promise<void>;
}

/** Registers beforeEach/afterEach that create and dispose a fresh store per test. */
export function createHarness(factory: StoreFactory): Harness {
  let current: StoreUnderTest | null = null;
  let clock = new FakeClock();

  async function dispose(): Promise<void> {
    if (!current) return;
    const { store, cleanup } = current;
    current = null;
    try {
      await store.close();
    } finally {
      await cleanup?.();
    }
  }

  beforeEach(async () => {
    clock = new FakeClock();
    current = await factory({ clock, scanDebounceSeconds: 0 });
  });
  afterEach(dispose);

  return {
    get store(): LightningStore {
      if (!current) throw new Error('store used outside a test');
      return current.store;
    },
    get clock(): FakeClock {
      return clock;
    },
    async restart({ scanDebounceSeconds, start }): Promise<void> {
      await dispose();
      clock = new FakeClock(start);
      current = await factory({ clock, scanDebounceSeconds });
    },
  };
}

let counter = 0;

/** A minimal valid span for `rolloutId`/`attemptId`; override any field. */
export function makeSpan(rolloutId: string, attemptId: string, overrides: Partial<SpanInput> = {}): SpanInput {
  counter += 1;
  return {
    rolloutId,
    attemptId,
    sequenceId: 1,
    traceId: 'trace-' + String(counter).padStart(4, '0'),
    spanId: `span-${counter}`,
    parentId: null,
    name: 'test-span',
    startTime: 1_700_000_001,
    endTime: 1_700_000_002,
    ...overrides,
  };
}

/** Asserts that worker `workerId` holds no attempt since now (`lastIdleTime`), with its status and heartbeat stats. */
export async function expectWorkerReleased(
  h: Harness,
  workerId: string,
  status: WorkerStatus,
  heartbeatStats: Record<string, unknown>,
): Promise<void> {
  expect(await h.store.getWorkerById(workerId)).toMatchObject({
    status,
    currentRolloutId: null,
    currentAttemptId: null,
    lastIdleTime: h.clock.now(),
    heartbeatStats,
  });
}

/** Asserts a promise rejects with an AGL error of the given stable name (`AGL_NotFoundError`, ...). */
export async function expectAglError(promise: Promise<unknown>, name: string, message?: RegExp): Promise<Error> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${name}, but the call succeeded`).toBeInstanceOf(Error);
  const error = caught as Error;
  expect(error.name).toBe(name);
  if (message) expect(error.message).toMatch(message);
  return error;
}

/** Everything observable in the store, for "nothing changed" checks. */
export async function snapshot(store: LightningStore, rolloutIds: readonly string[] = []): Promise<unknown> {
  const spans: Record<string, Span[]> = {};
  for (const id of rolloutIds) spans[id] = (await store.querySpans({ rolloutId: id })).items;
  const attempts: Record<string, unknown> = {};
  for (const id of rolloutIds) attempts[id] = (await store.queryAttempts({ rolloutId: id })).items;
  const stats = await store.statistics();
  return {
    rollouts: (await store.queryRollouts()).items,
    attempts,
    spans,
    workers: (await store.queryWorkers()).items,
    resources: (await store.queryResources()).items,
    totals: [stats.totalRollouts, stats.totalAttempts, stats.totalSpans, stats.totalResources, stats.totalWorkers],
  };
}
