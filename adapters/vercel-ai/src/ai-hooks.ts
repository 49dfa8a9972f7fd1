/**
 * Module resolve hook installed by the preload (`module.register`): the app's ESM `import ... from 'ai'` resolves to
 * `@agl/vercel-ai/ai`, which wraps `generateText` / `streamText` so that failing calls end their spans. Imports made
 * from inside this package keep the real `ai`.
 */
import type { ResolveHook } from 'node:module';

let wrapperUrl: string | undefined;
let ownDirs: string[] = [];

/** Receives the wrapper's URL and this package's root URL from `module.register`'s `data`. */
export function initialize(data: { wrapperUrl: string; packageUrl: string }): void {
  wrapperUrl = data.wrapperUrl;
  ownDirs = [`${data.packageUrl}dist/`, `${data.packageUrl}src/`];
}

/** A module of this package (its test fixtures excepted), which must get the real `ai`. */
function ownModule(url: string | undefined): boolean {
  return url !== undefined && ownDirs.some((dir) => url.startsWith(dir)) && !url.includes('/__fixtures__/');
}

export const resolve: ResolveHook = (specifier, context, nextResolve) => {
  if (specifier === 'ai' && wrapperUrl && !ownModule(context.parentURL)) {
    return { url: wrapperUrl, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
};
