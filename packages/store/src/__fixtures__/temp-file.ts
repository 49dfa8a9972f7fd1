import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/**
 * Gives each test of the enclosing `describe` a fresh temporary directory (removed after the test) and the path of a
 * file `name` in it. Read `dir` and `path` inside the tests: they change from test to test.
 */
export function tempFileEachTest(prefix: string, name: string): { readonly dir: string; readonly path: string } {
  const current = { dir: '', path: '' };
  beforeEach(() => {
    current.dir = mkdtempSync(join(tmpdir(), prefix));
    current.path = join(current.dir, name);
  });
  afterEach(() => rmSync(current.dir, { recursive: true, force: true }));
  return current;
}
