import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');
/** Reads of CI outside `isCi` (@agl/testing): the CLI's own plain-output rule and its test are product behaviour. */
const ALLOWED = new Set([
  'packages/testing/src/ci-env.ts',
  'packages/cli/src/progress/progress-display.ts',
  'packages/cli/src/progress/progress-display.test.ts',
]);

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry.name)) yield path;
  }
}

describe('one CI detector', () => {
  it('tests and test configs decide skip-vs-fail with isCi() from @agl/testing, never by reading CI themselves', () => {
    const readers: string[] = [];
    for (const top of ['packages', 'adapters', 'examples', 'tools']) {
      for (const path of sources(join(ROOT, top))) {
        if (/\benv(?:\.CI\b|\[['"]CI['"]\])/.test(readFileSync(path, 'utf8'))) readers.push(relative(ROOT, path));
      }
    }
    for (const path of ['vitest.config.ts'])
      if (/\benv\.CI\b/.test(readFileSync(join(ROOT, path), 'utf8'))) readers.push(path);
    expect(readers.filter((path) => !ALLOWED.has(path))).toEqual([]);
  });
});
