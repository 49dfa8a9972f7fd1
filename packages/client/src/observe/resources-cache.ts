/**
 * What serves requests (the latest published resources and a running release's arms), read from the store with a short cache: a request gets the cached value at once;
 * a stale value is refreshed in the background. Only the very first read waits for the store, at most `firstWaitMs`.
 * (every request that arrives during that first window shares the same deadline). A failed read keeps the last known value (or `undefined` when none was ever read).
 */
export class ResourcesCache<T> {
  readonly #load: () => Promise<T | null>;
  readonly #ttlMs: number;
  readonly #firstWaitMs: number;
  readonly #onError: (error: unknown) => void;
  #value: T | undefined;
  #loadedAt = -Infinity;
  #loading: Promise<void> | null = null;
  #firstDone = false;
  /** Until when requests may wait for the first read (set by the first request). */
  #firstDeadline: number | null = null;

  constructor(options: {
    load: () => Promise<T | null>;
    ttlMs: number;
    firstWaitMs: number;
    onError: (error: unknown) => void;
  }) {
    this.#load = options.load;
    this.#ttlMs = options.ttlMs;
    this.#firstWaitMs = options.firstWaitMs;
    this.#onError = options.onError;
  }

  /**
   * The current resources; a promise of them (resolved within `firstWaitMs`) only before the first read has completed,
   * the value itself after (no promise per request).
   */
  get(): T | undefined | Promise<T | undefined> {
    const now = Date.now();
    if (now - this.#loadedAt >= this.#ttlMs) this.#refresh();
    if (this.#firstDone) return this.#value;
    this.#firstDeadline ??= now + this.#firstWaitMs;
    const wait = this.#firstDeadline - now;
    if (this.#loading && wait > 0) return this.#waitFirst(this.#loading, wait);
    return this.#value;
  }

  async #waitFirst(loading: Promise<void>, wait: number): Promise<T | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([loading, new Promise<void>((resolve) => (timer = setTimeout(resolve, wait)))]);
    clearTimeout(timer);
    return this.#value;
  }

  #refresh(): void {
    if (this.#loading) return;
    this.#loading = this.#load()
      .then(
        (value) => {
          this.#value = value ?? undefined;
        },
        (error: unknown) => this.#onError(error),
      )
      .finally(() => {
        this.#loadedAt = Date.now();
        this.#firstDone = true;
        this.#loading = null;
      });
  }
}
