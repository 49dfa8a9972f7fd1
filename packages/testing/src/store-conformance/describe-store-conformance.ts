import { describe } from 'vitest';
import { attemptSpanCases } from './attempt-span-cases';
import { concurrencyCases } from './concurrency-cases';
import { errorCases } from './error-cases';
import { createHarness } from './harness';
import { lifecycleCases } from './lifecycle-cases';
import { productionCases } from './production-cases';
import { queryCases } from './query-cases';
import { releaseCases } from './release-cases';
import { resourceWorkerCases } from './resource-worker-cases';
import { spanCases } from './span-cases';
import type { StoreConformanceOptions, StoreFactory } from './types';
import { watchdogCases } from './watchdog-cases';

/**
 * Registers the shared `LightningStore` conformance suite (every store-level behaviour of AGL 0.3's 40-item checklist,
 * concurrency and bad input) for one backend. Uses only the public `LightningStore` interface, so an HTTP client can
 * run it too. Each test gets a fresh store from `factory`, which must use the given fake clock.
 *
 * @example
 * describeStoreConformance('MemoryStore', ({ clock, scanDebounceSeconds }) => ({
 *   store: new MemoryStore({ clock, scanDebounceSeconds }),
 * }));
 */
export function describeStoreConformance(
  name: string,
  factory: StoreFactory,
  options: StoreConformanceOptions = {},
): void {
  describe(`${name} conforms to LightningStore`, () => {
    const h = createHarness(factory);
    lifecycleCases(h);
    spanCases(h);
    watchdogCases(h, options);
    queryCases(h);
    resourceWorkerCases(h);
    errorCases(h);
    concurrencyCases(h, options);
    productionCases(h);
    attemptSpanCases(h, options);
    releaseCases(h);
  });
}
