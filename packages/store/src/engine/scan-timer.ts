/** The watchdog's debounce: a scan is due when the last one is `seconds` old (0 = always). */
export class ScanTimer {
  readonly #seconds: number;
  #last: number | null = null;
  #previous: number | null = null;
  /** How many scans ran (for the debounce tests). */
  scans = 0;

  constructor(seconds: number) {
    this.#seconds = seconds;
  }

  /** Whether a scan is due at `now`; if so it counts as started (see {@link ScanTimer.skipped}). */
  due(now: number): boolean {
    if (this.#seconds > 0 && this.#last !== null && now - this.#last < this.#seconds) return false;
    this.#previous = this.#last;
    this.#last = now;
    return true;
  }

  /** The scan {@link ScanTimer.due} allowed did not run after all: the next call may run it. */
  skipped(): void {
    this.#last = this.#previous;
  }
}
