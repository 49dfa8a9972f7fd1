import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, workspacePackages } from './harness/workspace-packages';

/** The `## Packages` table of the root README: each row's package links, as `[name](dir)`. */
function packageTable(readme: string): Map<string, string> {
  const section = readme.split(/^## Packages$/mu)[1]?.split(/^## /mu)[0] ?? '';
  const links = new Map<string, string>();
  for (const match of section.matchAll(/\[`(@agl\/[^`]+)`\]\(([^)]+)\)/gu)) links.set(match[1]!, match[2]!);
  return links;
}

describe("the root README's package table", () => {
  it('lists every package in packages/ and adapters/, each linked to its folder', () => {
    const table = packageTable(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'));
    const listed = workspacePackages()
      .map((p) => ({ name: p.name, dir: relative(REPO_ROOT, p.dir) }))
      .filter((p) => /^(packages|adapters)\//u.test(p.dir));
    expect(listed.length).toBeGreaterThan(10);
    const missing = listed.filter((p) => table.get(p.name) !== p.dir).map((p) => `${p.name} (${p.dir})`);
    expect(missing).toEqual([]);
  });
});
