import type { LightningStore, Rollout } from '@agl/core';

/** The store methods that create rollouts, and how to read the ids from what they return. */
const CREATORS: Record<string, (result: unknown) => Rollout[]> = {
  enqueueRollout: (r) => [r as Rollout],
  enqueueRollouts: (r) => r as Rollout[],
  startRollout: (r) => [r as Rollout],
};

/** A store that records the ids of the rollouts created through it: what one run made. */
export interface RunRollouts {
  /** Hand this to the algorithm: the same store, with every rollout it creates recorded in {@link ids}. */
  store: LightningStore;
  /** The ids of the rollouts created through {@link store}, in creation order. */
  ids: Set<string>;
}

/**
 * Wraps `store` so that the rollouts created through it (`enqueueRollout(s)`, `startRollout`) are recorded. A run's
 * summary and progress then count only what this run made, not the store's earlier rollouts (production traffic, an
 * earlier run) nor another process's. Every other call goes to `store` itself (bound to it, so private fields work).
 */
export function trackRunRollouts(store: LightningStore): RunRollouts {
  const ids = new Set<string>();
  const tracked = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== 'function') return value;
      const creator = typeof prop === 'string' ? CREATORS[prop] : undefined;
      if (creator === undefined) return (value as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        for (const rollout of creator(result)) if (rollout?.rolloutId) ids.add(rollout.rolloutId);
        return result;
      };
    },
  });
  return { store: tracked, ids };
}
