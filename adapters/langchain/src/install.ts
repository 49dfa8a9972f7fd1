import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import * as esmContext from '@langchain/core/context';
import { AglCallbackHandler, type AglCallbackHandlerOptions } from './agl-callback-handler';

/** The context variable under which the global handler is registered. */
export const AGL_LANGCHAIN_CONTEXT_VAR = 'agl_callback_handler';

interface ContextModule {
  registerConfigureHook(hook: { contextVar: string; inheritable?: boolean }): void;
  setContextVariable(name: string, value: unknown): void;
}

let installed: AglCallbackHandler | null = null;

/**
 * Registers one {@link AglCallbackHandler} globally through LangChain's configure hook, in both the ESM copy of
 * `@langchain/core` and the CommonJS copy resolved from `fromDir` (default: the working directory), so every run
 * (`createAgent`, LangGraph graphs, plain runnables) is traced without passing callbacks.
 *
 * Synchronous on purpose: LangChain keeps hooks in an AsyncLocalStorage value set with `enterWith`, which reaches the
 * code that runs *after* the caller only when no `await` came before it. Call it at the top of your entry module (or
 * use the preload) before starting servers or workers. Idempotent.
 */
export function installAglLangChain(
  options: AglCallbackHandlerOptions & { fromDir?: string } = {},
): AglCallbackHandler {
  if (installed) return installed;
  const handler = new AglCallbackHandler(options);
  const modules: ContextModule[] = [esmContext];
  try {
    const require = createRequire(pathToFileURL(`${options.fromDir ?? process.cwd()}/`).href);
    const cjs = require('@langchain/core/context') as ContextModule;
    if (cjs !== (esmContext as unknown)) modules.push(cjs);
  } catch {
    // No CommonJS copy resolvable from the app: ESM only.
  }
  for (const mod of modules) mod.registerConfigureHook({ contextVar: AGL_LANGCHAIN_CONTEXT_VAR, inheritable: true });
  esmContext.setContextVariable(AGL_LANGCHAIN_CONTEXT_VAR, handler);
  installed = handler;
  return handler;
}
