/**
 * Module resolve hook installed by the preload (`module.register`): the app's ESM `import ... from 'ai'` resolves to
 * `@agl/vercel-ai/ai`, which wraps `generateText` / `streamText` so that failing calls end their spans. The wrapper
 * re-exports the `ai` the app itself resolves (AI SDK 6 or 7, from the importing module's location), not this
 * package's own: its URL carries the app's `ai` URL (`?ai=`), and the wrapper's `import 'ai'` resolves to that.
 * Imports made from inside this package keep the real `ai`.
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

/** The app's `ai` URL a wrapper instance was served for (`<wrapper>?ai=<url>`), else undefined. */
function servedAiUrl(parentURL: string | undefined): string | undefined {
  if (!wrapperUrl || !parentURL?.startsWith(`${wrapperUrl}?`)) return undefined;
  return new URL(parentURL).searchParams.get('ai') ?? undefined;
}

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  if (specifier !== 'ai' || !wrapperUrl) return nextResolve(specifier, context);
  const served = servedAiUrl(context.parentURL);
  if (served) return { url: served, shortCircuit: true };
  if (ownModule(context.parentURL)) return nextResolve(specifier, context);
  // The `ai` this app module would load without AGL (its own node_modules, its own version).
  const real = await nextResolve(specifier, context);
  return { url: `${wrapperUrl}?ai=${encodeURIComponent(real.url)}`, format: 'module', shortCircuit: true };
};
