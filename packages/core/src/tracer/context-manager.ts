import { context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';

let contextManagerChecked = false;

/**
 * Makes sure a context manager propagates OpenTelemetry's context across `await` (needed for nesting, and for the
 * rollout context, which rides it): when none is registered, an `AsyncLocalStorageContextManager` is. An app's own
 * manager (registered first, e.g. by `@opentelemetry/sdk-node`) is kept. Checks once per process.
 */
export function ensureContextManager(): void {
  if (contextManagerChecked) return;
  contextManagerChecked = true;
  const key = createContextKey('agl.probe');
  const probe = ROOT_CONTEXT.setValue(key, true);
  const works = context.with(probe, () => context.active().getValue(key) === true);
  if (works) return;
  const manager = new AsyncLocalStorageContextManager();
  manager.enable();
  if (!context.setGlobalContextManager(manager)) manager.disable();
}
