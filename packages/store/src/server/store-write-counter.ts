import type { LightningStore } from '@agl/core/store';

/** Members that only read (or wait): everything else a caller invokes on the store counts as a write. */
const READ_MEMBER = /^(get|query|list|wait|count|statistics|close$)/;

/**
 * `store` with a write counter: every call of a member that is not a read (`get…`, `query…`, `list…`, `wait…`) adds
 * one when it settles, failed or not (part of a batch may have landed). Result caches key on {@link writes} so they
 * never answer from before a write made through this store; writes by other processes on the same database are
 * theirs to bound with a maximum age.
 */
export function countStoreWrites(store: LightningStore): { store: LightningStore; writes: () => number } {
  let writes = 0;
  const counted = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (typeof key !== 'string' || READ_MEMBER.test(key)) return method.bind(target);
      return (...args: unknown[]) => {
        let result: unknown;
        try {
          result = method.apply(target, args);
        } catch (error) {
          writes += 1;
          throw error;
        }
        if (!(result instanceof Promise)) {
          writes += 1;
          return result;
        }
        return result.finally(() => {
          writes += 1;
        });
      };
    },
  });
  return { store: counted, writes: () => writes };
}
