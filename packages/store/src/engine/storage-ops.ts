import type { StoreStorage } from './storage';

/**
 * The storage calls a store rule may make: the persistence methods of {@link StoreStorage}, without its transaction
 * control. The synchronous backends implement them as they are; the asynchronous ones (PostgreSQL) return each answer
 * as a promise ({@link AsyncRuleStorage}). An optional method a backend lacks answers `null`.
 */
export type RuleStorage = Omit<
  StoreStorage,
  'name' | 'transaction' | 'read' | 'savepoint' | 'tryTransaction' | 'serializeSpans' | 'externalChanges' | 'close'
>;

type Method = (...args: never[]) => unknown;

/** {@link RuleStorage} with every answer a promise (same optional methods). */
export type AsyncRuleStorage = {
  [K in keyof RuleStorage]: RuleStorage[K] extends Method | undefined
    ? (...args: Parameters<NonNullable<RuleStorage[K]>>) => Promise<ReturnType<NonNullable<RuleStorage[K]>>>
    : never;
};

/** The name of a storage call. */
export type StorageOpName = keyof RuleStorage;

/** One storage call a rule yields: the driver runs it inside the rule's transaction and sends the answer back. */
export interface StorageOp {
  readonly op: StorageOpName;
  readonly args: readonly unknown[];
}

/**
 * A store rule: a generator that yields {@link StorageOp}s and returns its result. Written once, it runs on a
 * synchronous storage ({@link runRule}) and on an asynchronous one ({@link runRuleAsync}), each inside the transaction
 * the caller opened.
 */
export type Rule<T> = Generator<StorageOp, T, unknown>;

type Answer<K extends StorageOpName> = ReturnType<NonNullable<RuleStorage[K]>>;

/** Yields one storage call and returns its answer, typed: `const rollout = yield* call('getRollout', id)`. */
export function* call<K extends StorageOpName>(
  op: K,
  ...args: Parameters<NonNullable<RuleStorage[K]>>
): Generator<StorageOp, Answer<K> | (undefined extends RuleStorage[K] ? null : never), unknown> {
  return (yield { op, args }) as Answer<K>;
}

const invoke = (storage: object, { op, args }: StorageOp): unknown => {
  const method = (storage as Record<string, ((...a: readonly unknown[]) => unknown) | undefined>)[op];
  return method ? method.apply(storage, args as unknown[]) : null;
};

/**
 * Runs a rule's storage calls one by one (the caller holds the transaction): synchronously while the answers are
 * plain values, and on from each answer that is a promise once it settles.
 */
function drive<T>(storage: object, rule: Rule<T>, first: IteratorResult<StorageOp, T>): T | Promise<T> {
  let step = first;
  while (!step.done) {
    let answer: unknown;
    try {
      answer = invoke(storage, step.value);
    } catch (error) {
      step = rule.throw(error);
      continue;
    }
    if (answer instanceof Promise) {
      return answer.then(
        (value) => drive(storage, rule, rule.next(value)),
        (error: unknown) => drive(storage, rule, rule.throw(error)),
      );
    }
    step = rule.next(answer);
  }
  return step.value;
}

/** Runs a rule against a synchronous storage (the caller holds the transaction). */
export function runRule<T>(storage: RuleStorage, rule: Rule<T>): T {
  return drive(storage, rule, rule.next()) as T;
}

/** Runs a rule against an asynchronous storage, awaiting each call (the caller holds the transaction). */
export async function runRuleAsync<T>(storage: AsyncRuleStorage, rule: Rule<T>): Promise<T> {
  return drive(storage, rule, rule.next());
}
