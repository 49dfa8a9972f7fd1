// An app with AI SDK 7 installed (`ai@7`, `@ai-sdk/openai@4`), for the tests that run the adapter on both SDKs: the
// fixture agents copied into test-artifacts/ai7-app, whose node_modules/ai and node_modules/@ai-sdk/openai link to
// the dev dependencies `ai7` (npm:ai@^7) and `@ai-sdk/openai4` (npm:@ai-sdk/openai@^4). Their own `import 'ai'`
// then loads AI SDK 7, as in an app that depends on it.
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** The root of an installed package (found through its package.json). */
function packageRoot(name: string): string {
  return dirname(realpathSync(require.resolve(`${name}/package.json`)));
}

/** `target` linked at `path`, unless already there (test files running side by side build the same app). */
function link(target: string, path: string): void {
  if (!existsSync(path)) symlinkSync(target, path, 'dir');
}

/**
 * Builds the AI SDK 7 app with copies of the named fixture files (a file is written only when it changed); returns
 * its directory. Synchronous, so a test file can call it while collecting its tests.
 */
export function ai7App(files: string[]): string {
  const dir = ai7App.dir;
  mkdirSync(join(dir, 'node_modules', '@ai-sdk'), { recursive: true });
  link(packageRoot('ai7'), join(dir, 'node_modules', 'ai'));
  link(packageRoot('@ai-sdk/openai4'), join(dir, 'node_modules', '@ai-sdk', 'openai'));
  for (const file of files) {
    const source = readFileSync(join(here, file), 'utf8');
    const copy = join(dir, file);
    if (!existsSync(copy) || readFileSync(copy, 'utf8') !== source) writeFileSync(copy, source);
  }
  return dir;
}

/** Where {@link ai7App} builds the app. */
ai7App.dir = join(here, '..', '..', 'test-artifacts', 'ai7-app');
