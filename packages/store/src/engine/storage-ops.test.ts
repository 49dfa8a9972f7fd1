import { describe, expect, it } from 'vitest';
import { ScanTimer } from './scan-timer';
import { call, runRule, runRuleAsync, type AsyncRuleStorage, type Rule, type RuleStorage } from './storage-ops';

/** Reads a counter, catches a failing call, and asks for an optional method the storage lacks. */
function* sample(): Rule<{ before: number; after: number; caught: string; page: unknown }> {
  const before = yield* call('countRollouts');
  let caught = '';
  try {
    yield* call('dequeue');
  } catch (error) {
    caught = (error as Error).message;
  }
  const page = yield* call('pageRollouts', { logic: 'and', sortField: null, order: 'asc', limit: -1, offset: 0 });
  yield* call('enqueue', ['ro-1']);
  return { before, after: yield* call('countRollouts'), caught, page };
}

const syncStorage = (): RuleStorage => {
  let count = 0;
  return {
    countRollouts: () => count,
    dequeue: () => {
      throw new Error('queue unreadable');
    },
    enqueue: (ids: readonly string[]) => {
      count += ids.length;
    },
  } as unknown as RuleStorage;
};

describe('store rule drivers', () => {
  it('run one rule the same way on a synchronous and an asynchronous storage', async () => {
    const expected = { before: 0, after: 1, caught: 'queue unreadable', page: null };
    expect(runRule(syncStorage(), sample())).toEqual(expected);
    const s = syncStorage();
    const promised = new Proxy(s, {
      get: (target, key) => {
        const method = Reflect.get(target, key) as ((...a: unknown[]) => unknown) | undefined;
        return method && (async (...args: unknown[]) => method(...args));
      },
    }) as unknown as AsyncRuleStorage;
    await expect(runRuleAsync(promised, sample())).resolves.toEqual(expected);
  });

  it('pass an error the rule does not catch to the caller', async () => {
    function* failing(): Rule<void> {
      yield* call('dequeue');
    }
    expect(() => runRule(syncStorage(), failing())).toThrow('queue unreadable');
    const rejecting = { dequeue: () => Promise.reject(new Error('connection lost')) } as unknown as AsyncRuleStorage;
    await expect(runRuleAsync(rejecting, failing())).rejects.toThrow('connection lost');
  });
});

describe('ScanTimer', () => {
  it('allows a scan once per debounce window, and again at once when an allowed scan was skipped', () => {
    const timer = new ScanTimer(10);
    expect(timer.due(100)).toBe(true);
    expect(timer.due(105)).toBe(false);
    expect(timer.due(110)).toBe(true);
    timer.skipped();
    expect(timer.due(111)).toBe(true);
    expect(new ScanTimer(0).due(1)).toBe(true);
  });
});
