import { randomUUID } from 'node:crypto';
import { NotFoundError, UserError, ValidationError } from '@agl/core/errors';
import type { TinkerRequestType } from '@agl/tinker';

type FutureState =
  | { status: 'pending'; done: Promise<void> }
  | { status: 'done'; value: unknown }
  | { status: 'failed'; error: string; category: 'user' | 'server' };

interface FutureEntry {
  kind: TinkerRequestType;
  state: FutureState;
}

/** What `retrieve_future` answers. */
export type FutureOutcome =
  | { status: 'pending' }
  | { status: 'done'; kind: TinkerRequestType; value: unknown }
  | { status: 'failed'; error: string; category: 'user' | 'server' };

/**
 * Tinker's future protocol: a call answers `{request_id}` at once and runs in the background; `retrieve_future`
 * waits up to `longPollMs` for it, then answers `try_again` (the SDK polls again without sleeping, so the wait here is
 * what keeps it from spinning). Finished results are kept (the oldest go past `keep`).
 */
export class FutureRegistry {
  readonly #entries = new Map<string, FutureEntry>();
  readonly #longPollMs: number;
  readonly #keep: number;

  constructor(options: { longPollMs?: number; keep?: number } = {}) {
    this.#longPollMs = options.longPollMs ?? 2000;
    this.#keep = options.keep ?? 10_000;
  }

  /** Starts `run` and returns its request id. A `UserError` fails the future with category `user`. */
  submit(kind: TinkerRequestType, run: () => Promise<unknown>): string {
    const id = randomUUID();
    const entry: FutureEntry = { kind, state: { status: 'pending', done: Promise.resolve() } };
    const done = run().then(
      (value) => {
        entry.state = { status: 'done', value };
      },
      (err: unknown) => {
        const user = UserError.isInstance(err) || ValidationError.isInstance(err) || NotFoundError.isInstance(err);
        entry.state = {
          status: 'failed',
          error: `${kind} failed: ${err instanceof Error ? err.message : String(err)}`,
          category: user ? 'user' : 'server',
        };
      },
    );
    if (entry.state.status === 'pending') entry.state = { status: 'pending', done };
    this.#entries.set(id, entry);
    if (this.#entries.size > this.#keep) this.#entries.delete(this.#entries.keys().next().value!);
    return id;
  }

  /** The outcome of `id`, waiting up to the long-poll time while it is pending; undefined for an unknown id. */
  async retrieve(id: string, signal?: AbortSignal): Promise<FutureOutcome | undefined> {
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    if (entry.state.status === 'pending') {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        entry.state.done,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.#longPollMs);
          signal?.addEventListener('abort', () => resolve(), { once: true });
        }),
      ]);
      clearTimeout(timer);
    }
    const s = entry.state;
    if (s.status === 'pending') return { status: 'pending' };
    if (s.status === 'failed') return s;
    return { status: 'done', kind: entry.kind, value: s.value };
  }
}

/**
 * Runs one model's requests in `seq_id` order (the SDK numbers every training-client request 1, 2, 3, … and the
 * service executes them in that order, whatever order the HTTP requests arrive in). A request whose predecessor never
 * comes runs after `gapMs`; requests without a seq_id run in arrival order.
 */
export class SeqQueue {
  #next = 1;
  #chain: Promise<unknown> = Promise.resolve();
  readonly #waiters = new Map<number, () => void>();
  readonly #gapMs: number;

  constructor(gapMs = 5000) {
    this.#gapMs = gapMs;
  }

  async run<T>(seq: number | undefined, fn: () => Promise<T>): Promise<T> {
    if (seq !== undefined && seq > this.#next) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.#gapMs);
        t.unref?.();
        this.#waiters.set(seq, () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    const p = this.#chain.then(fn);
    this.#chain = p.catch(() => undefined);
    try {
      return await p;
    } finally {
      if (seq !== undefined && seq >= this.#next) {
        this.#next = seq + 1;
        const wake = this.#waiters.get(this.#next);
        this.#waiters.delete(this.#next);
        wake?.();
      }
    }
  }
}
