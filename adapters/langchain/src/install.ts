import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { AglCallbackHandler, type AglCallbackHandlerOptions } from './agl-callback-handler';

/** The context variable under which the global handler is registered. */
export const AGL_LANGCHAIN_CONTEXT_VAR = 'agl_callback_handler';

interface ContextModule {
  registerConfigureHook(hook: { contextVar: string; inheritable?: boolean }): void;
  setContextVariable(name: string, value: unknown): void;
}

let installed: AglCallbackHandler | null = null;

async function loadContextModules(fromDir: string): Promise<ContextModule[]> {
  const modules: ContextModule[] = [];
  const require = createRequire(pathToFileURL(`${fromDir}/`).href);
  try {
    const esmPath = pathToFileURL(require.resolve('@langchain/core/context')).href.replace(/\.cjs$/, '.js');
    modules.push((await import(esmPath)) as ContextModule);
  } catch {
    modules.push((await import('@langchain/core/context')) as ContextModule);
  }
  try {
    modules.push(require('@langchain/core/context') as ContextModule);
  } catch {
    // No CommonJS copy resolvable from the app: ESM only.
  }
  return modules;
}

/**
 * Registers one {@link AglCallbackHandler} globally through LangChain's configure hook, in both the ESM and the
 * CommonJS copies of `@langchain/core` resolved from `fromDir` (default: the working directory), so every run
 * (`createAgent`, LangGraph graphs, plain runnables) is traced without passing callbacks. Call it before building
 * servers or workers (it sets an AsyncLocalStorage value for what runs after it). Idempotent.
 */
export async function installAglLangChain(
  options: AglCallbackHandlerOptions & { fromDir?: string } = {},
): Promise<AglCallbackHandler> {
  if (installed) return installed;
  const handler = new AglCallbackHandler(options);
  for (const mod of await loadContextModules(options.fromDir ?? process.cwd())) {
    mod.registerConfigureHook({ contextVar: AGL_LANGCHAIN_CONTEXT_VAR, inheritable: true });
  }
  const [first] = await loadContextModules(options.fromDir ?? process.cwd());
  first?.setContextVariable(AGL_LANGCHAIN_CONTEXT_VAR, handler);
  installed = handler;
  return handler;
}
