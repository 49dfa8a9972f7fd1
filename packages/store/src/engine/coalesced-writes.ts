import type { Attempt, Rollout, Span } from '@agl/core/schema';
import { attemptKey } from './rules';
import type { SerializedSpans } from './storage';
import { call, type Rule, type StorageOp, type StorageOpName } from './storage-ops';

/**
 * Storage calls that touch none of the rows {@link coalesceWrites} holds back (their own table, no triggers on the
 * held ones), so they go to the storage at once without writing the held rows first.
 */
const INDEPENDENT = new Set<StorageOpName>(['getWorker', 'putWorker']);

type State = 'clean' | 'dirty' | 'new';

interface Held<T> {
  /** The row as the transaction left it (this cache's own object; callers get shallow copies). */
  doc: T;
  /** `new`: inserted in this plan, not written yet; `dirty`: stored, changed, not written yet; `clean`: as stored. */
  state: State;
}

/** Spans held back: for {@link StoreStorage.insertSerializedSpans} (`docs` set) or {@link StoreStorage.insertSpans}. */
interface HeldSpans {
  spans: Span[];
  docs: string[] | null;
  attributes: string[];
  keys: Set<string>;
}

const copy = <T extends object>(doc: T): T => ({ ...doc });

/** Copies of the held rows under `keys` that still need writing, split into inserts and updates; marks them clean. */
function takeHeld<T extends object>(
  held: Map<string, Held<T> | null>,
  keys: readonly string[],
): { fresh: T[]; changed: T[] } {
  const fresh: T[] = [];
  const changed: T[] = [];
  for (const key of keys) {
    const row = held.get(key);
    if (!row || row.state === 'clean') continue;
    (row.state === 'new' ? fresh : changed).push(copy(row.doc));
    row.state = 'clean';
  }
  return { fresh, changed };
}

/**
 * The write-back cache of one plan: rollouts and attempts the plan reads, inserts or updates are kept here, and each
 * is written once, in the state the plan leaves it, when the plan ends ({@link WriteCache.flush}) or before a storage
 * call that could see them. So a recorder's batch, which starts a rollout, heartbeats its attempt with a span and ends
 * both, writes one rollout row, one attempt row and its spans per request (not two inserts and three updates), and
 * SQLite's rollup triggers run once per row. Top-level fields are copied in and out (rules replace nested objects,
 * never change them in place), so callers own what they get, as from a storage.
 */
class WriteCache {
  readonly #rollouts = new Map<string, Held<Rollout> | null>();
  readonly #attempts = new Map<string, Held<Attempt>>();
  /** Per rollout, the key of its latest attempt (null: none), when known. */
  readonly #latest = new Map<string, string | null>();
  #resourcesId: { value: string | null } | null = null;
  #spans: HeldSpans | null = null;
  /** Span sequence counters to raise, per rollout the highest value asked for. */
  readonly #raises = new Map<string, number>();
  /** Rollouts and attempts held as `new`/`dirty`, in the order they first changed. */
  #changedRollouts: string[] = [];
  #changedAttempts: string[] = [];

  /** Answers one storage call of the plan, from this cache where it can, else from the storage (yielded). */
  *answer(op: StorageOp): Rule<unknown> {
    const args = op.args as unknown[];
    switch (op.op) {
      case 'getRollout':
        return yield* this.#getRollout(args[0] as string);
      case 'getRollouts':
        return yield* this.#getRollouts(args[0] as readonly string[], op);
      case 'getLatestAttempts':
        return yield* this.#getLatestAttempts(args[0] as readonly string[], op);
      case 'raiseSequence': {
        const [id, value] = args as [string, number];
        this.#raises.set(id, Math.max(this.#raises.get(id) ?? value, value));
        return undefined;
      }
      case 'incrementSequence':
        yield* this.#flushRaises();
        return yield op;
      case 'insertRollouts':
        return yield* this.#insertRollouts(args[0] as readonly Rollout[], op);
      case 'updateRollout':
        return yield* this.#updateRollout(args[0] as Rollout, op);
      case 'getAttempt':
        return yield* this.#getAttempt(args[0] as string, args[1] as string, op);
      case 'getLatestAttempt':
        return yield* this.#getLatestAttempt(args[0] as string, op);
      case 'insertAttempt':
        return yield* this.#insertAttempt(args[0] as Attempt, op);
      case 'updateAttempt':
        return yield* this.#updateAttempt(args[0] as Attempt, op);
      case 'insertSerializedSpans': {
        const s = args[0] as SerializedSpans;
        return yield* this.#insertSpans(s.spans, s.docs, s.attributes, op);
      }
      case 'insertSpans':
        return yield* this.#insertSpans(args[0] as readonly Span[], null, null, op);
      case 'getLatestResourcesId':
        // Only resource writes change it, and no plan that runs here makes one.
        if (this.#resourcesId === null) this.#resourcesId = { value: (yield op) as string | null };
        return this.#resourcesId.value;
      default:
        if (INDEPENDENT.has(op.op)) return yield op;
        return yield* this.#passThrough(op);
    }
  }

  /** Writes what is held, then runs `op` on the storage and forgets everything (it may have changed any row). */
  *#passThrough(op: StorageOp): Rule<unknown> {
    yield* this.flush();
    const answer: unknown = yield op;
    this.#rollouts.clear();
    this.#attempts.clear();
    this.#latest.clear();
    this.#resourcesId = null;
    return answer;
  }

  *#getRollout(id: string): Rule<Rollout | null> {
    let held = this.#rollouts.get(id);
    if (held === undefined) {
      const stored = yield* call('getRollout', id);
      held = stored ? { doc: stored, state: 'clean' } : null;
      this.#rollouts.set(id, held);
    }
    return held ? copy(held.doc) : null;
  }

  /** Reads many rollouts at once (a storage without `getRollouts` answers null); absent ones are known absent. */
  *#getRollouts(ids: readonly string[], op: StorageOp): Rule<unknown> {
    const found = (yield op) as Map<string, Rollout> | null;
    if (found === null) return null;
    for (const id of ids) {
      if (this.#rollouts.has(id)) continue;
      const stored = found.get(id);
      this.#rollouts.set(id, stored ? { doc: stored, state: 'clean' } : null);
    }
    return found;
  }

  /** Reads the latest attempts of many rollouts at once, for the plan's later `getLatestAttempt` calls. */
  *#getLatestAttempts(ids: readonly string[], op: StorageOp): Rule<unknown> {
    const found = (yield op) as Map<string, Attempt>;
    for (const id of ids) {
      if (this.#latest.has(id)) continue;
      const stored = found.get(id);
      this.#latest.set(id, stored ? this.#keep(stored) : null);
    }
    return found;
  }

  /** Caches an attempt read from the storage, unless a copy is held already (that one is newer); returns its key. */
  #keep(stored: Attempt): string {
    const key = attemptKey(stored);
    if (!this.#attempts.has(key)) this.#attempts.set(key, { doc: stored, state: 'clean' });
    return key;
  }

  *#insertRollouts(rollouts: readonly Rollout[], op: StorageOp): Rule<unknown> {
    // Only ids known to be absent are held (a rule reads a rollout before it inserts it); anything else goes through.
    if (rollouts.some((r) => this.#rollouts.get(r.rolloutId) !== null)) return yield* this.#passThrough(op);
    for (const r of rollouts) {
      this.#rollouts.set(r.rolloutId, { doc: copy(r), state: 'new' });
      this.#latest.set(r.rolloutId, null);
      this.#changedRollouts.push(r.rolloutId);
    }
    return undefined;
  }

  *#updateRollout(rollout: Rollout, op: StorageOp): Rule<unknown> {
    const held = this.#rollouts.get(rollout.rolloutId);
    if (!held) return yield* this.#passThrough(op);
    held.doc = copy(rollout);
    if (held.state === 'clean') {
      held.state = 'dirty';
      this.#changedRollouts.push(rollout.rolloutId);
    }
    return undefined;
  }

  *#getAttempt(rolloutId: string, attemptId: string, op: StorageOp): Rule<Attempt | null> {
    const key = attemptKey({ rolloutId, attemptId });
    const held = this.#attempts.get(key);
    if (held) return copy(held.doc);
    // An attempt of a rollout inserted here is either held or does not exist.
    if (this.#rollouts.get(rolloutId)?.state === 'new') return null;
    const stored = (yield op) as Attempt | null;
    if (stored) this.#keep(stored);
    return stored ? copy(stored) : null;
  }

  *#getLatestAttempt(rolloutId: string, op: StorageOp): Rule<Attempt | null> {
    let key = this.#latest.get(rolloutId);
    if (key === undefined) {
      const stored = (yield op) as Attempt | null;
      key = stored ? this.#keep(stored) : null;
      this.#latest.set(rolloutId, key);
    }
    const held = key === null ? undefined : this.#attempts.get(key);
    return held ? copy(held.doc) : null;
  }

  *#insertAttempt(attempt: Attempt, op: StorageOp): Rule<unknown> {
    const key = attemptKey(attempt);
    // Held only for a rollout inserted here (its attempts are all known); else the storage checks it.
    if (this.#rollouts.get(attempt.rolloutId)?.state !== 'new' || this.#attempts.has(key))
      return yield* this.#passThrough(op);
    this.#attempts.set(key, { doc: copy(attempt), state: 'new' });
    this.#changedAttempts.push(key);
    const latestKey = this.#latest.get(attempt.rolloutId);
    const latest = latestKey ? this.#attempts.get(latestKey) : undefined;
    if (!latest || latest.doc.sequenceId < attempt.sequenceId) this.#latest.set(attempt.rolloutId, key);
    return undefined;
  }

  *#updateAttempt(attempt: Attempt, op: StorageOp): Rule<unknown> {
    const key = attemptKey(attempt);
    const held = this.#attempts.get(key);
    if (!held) return yield* this.#passThrough(op);
    held.doc = copy(attempt);
    if (held.state === 'clean') {
      held.state = 'dirty';
      this.#changedAttempts.push(key);
    }
    return undefined;
  }

  /**
   * Spans of rollouts inserted here are held (none of theirs can be stored yet; a span repeated in the plan is kept
   * once, the first time, as the storage would); spans of any other rollout are written at once, after what is held
   * (so each rollout's spans keep their order).
   */
  *#insertSpans(
    spans: readonly Span[],
    docs: readonly string[] | null,
    attributes: readonly string[] | null,
    op: StorageOp,
  ): Rule<Span[]> {
    const states = new Set(spans.map((s) => this.#rollouts.get(s.rolloutId)?.state));
    const fresh = states.size === 1 && states.has('new');
    if (!fresh || (this.#spans !== null && (this.#spans.docs === null) !== (docs === null))) {
      // Written now. The rows their triggers read (SQLite's annotation index reads the rollout and attempt) are
      // written first: every held row when one of their rollouts is new here, else only their own changed rows. A
      // span insert changes no rollout or attempt row, so the cache stays.
      if (states.has('new')) yield* this.flush();
      else yield* this.#flushRows(new Set(spans.map((s) => s.rolloutId)));
      return (yield op) as Span[];
    }
    this.#spans ??= { spans: [], docs: docs === null ? null : [], attributes: [], keys: new Set() };
    const held = this.#spans;
    const inserted: Span[] = [];
    spans.forEach((span, i) => {
      const key = `${span.rolloutId}\u0000${span.attemptId}\u0000${span.spanId}`;
      if (held.keys.has(key)) return;
      held.keys.add(key);
      held.spans.push(span);
      if (docs !== null) {
        held.docs!.push(docs[i]!);
        held.attributes.push(attributes![i]!);
      }
      inserted.push(span);
    });
    return inserted;
  }

  /** Writes the changed (not new) rollouts in `rolloutIds` and their changed attempts now; the rest stays held. */
  *#flushRows(rolloutIds: ReadonlySet<string>): Rule<void> {
    for (const id of this.#changedRollouts) {
      const held = this.#rollouts.get(id);
      if (!rolloutIds.has(id) || held?.state !== 'dirty') continue;
      yield* call('updateRollout', copy(held.doc));
      held.state = 'clean';
    }
    for (const key of this.#changedAttempts) {
      const held = this.#attempts.get(key);
      if (!held || held.state !== 'dirty' || !rolloutIds.has(held.doc.rolloutId)) continue;
      yield* call('updateAttempt', copy(held.doc));
      held.state = 'clean';
    }
  }

  *#flushRaises(): Rule<void> {
    yield* flushRaises(this.#raises);
  }

  /**
   * Writes every held change: new rollouts (one insert), changed rollouts, new attempts (one insert where the storage
   * can) and changed ones, the span sequence counters, then the spans.
   */
  *flush(): Rule<void> {
    const { fresh, changed } = takeHeld(this.#rollouts, this.#changedRollouts);
    this.#changedRollouts = [];
    if (fresh.length > 0) yield* call('insertRollouts', fresh);
    for (const rollout of changed) yield* call('updateRollout', rollout);
    const { fresh: freshAttempts, changed: changedAttempts } = takeHeld(this.#attempts, this.#changedAttempts);
    this.#changedAttempts = [];
    if (freshAttempts.length > 1 && (yield* call('insertAttempts', freshAttempts)) === null)
      for (const attempt of freshAttempts) yield* call('insertAttempt', attempt);
    else if (freshAttempts.length === 1) yield* call('insertAttempt', freshAttempts[0]!);
    for (const attempt of changedAttempts) yield* call('updateAttempt', attempt);
    yield* this.#flushRaises();
    const spans = this.#spans;
    this.#spans = null;
    if (spans === null) return;
    if (spans.docs === null) yield* call('insertSpans', spans.spans);
    else yield* call('insertSerializedSpans', { spans: spans.spans, docs: spans.docs, attributes: spans.attributes });
  }
}

/** Raises the held span sequence counters (in id order: PostgreSQL locks their rows). */
function* flushRaises(raises: Map<string, number>): Rule<void> {
  if (raises.size === 0) return;
  const list = [...raises].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  raises.clear();
  if (list.length > 1 && (yield* call('raiseSequences', list)) !== null) return;
  for (const [id, value] of list) yield* call('raiseSequence', id, value);
}

/**
 * Runs `rule` with its rollout and attempt writes coalesced ({@link WriteCache}): the same calls are answered and the
 * same rows end up stored, but each row is written once, in its final state, when the rule ends. For plans that touch
 * the same rows many times in one transaction (a recorder's batch of starts, spans and ends). A throw from the storage
 * reaches the rule as before; a rule that throws leaves the held writes unwritten (its transaction is undone anyway).
 */
export function* coalesceWrites<T>(rule: Rule<T>): Rule<T> {
  const cache = new WriteCache();
  let step = rule.next();
  while (!step.done) {
    let answer: unknown;
    try {
      answer = yield* cache.answer(step.value);
    } catch (error) {
      step = rule.throw(error);
      continue;
    }
    step = rule.next(answer);
  }
  yield* cache.flush();
  return step.value;
}
