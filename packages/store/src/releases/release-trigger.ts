import type { LightningStore } from '@agl/core/store';

/**
 * Runs the store's release decisions after each batch of recorded results (a production batch, a feedback): the
 * running releases are evaluated in the background, never on the request's path. Evaluations of one release are
 * coalesced by the store, so a burst of batches costs at most two.
 */
export class ReleaseTrigger {
  readonly #store: LightningStore;
  readonly #onError: (error: unknown) => void;
  #pending: Promise<void> | null = null;
  #again = false;

  constructor(store: LightningStore, onError: (error: unknown) => void = () => undefined) {
    this.#store = store;
    this.#onError = onError;
  }

  /** Results were recorded: evaluate the running releases soon. */
  afterBatch(): void {
    if (!this.#store.listReleases || !this.#store.evaluateRelease) return;
    if (this.#pending) {
      this.#again = true;
      return;
    }
    this.#pending = this.#run().finally(() => {
      this.#pending = null;
      if (this.#again) {
        this.#again = false;
        this.afterBatch();
      }
    });
  }

  /** Resolves when no evaluation is pending (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#pending) await this.#pending;
  }

  async #run(): Promise<void> {
    try {
      const running = (await this.#store.listReleases!()).filter((r) => r.state === 'running');
      for (const release of running) await this.#store.evaluateRelease!(release.releaseId);
    } catch (error) {
      this.#onError(error);
    }
  }
}
