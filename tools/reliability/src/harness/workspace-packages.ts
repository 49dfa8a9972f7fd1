import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The monorepo root. */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** A workspace package. */
export interface WorkspacePackage {
  name: string;
  dir: string;
  private: boolean;
  manifest: Record<string, unknown>;
}

/** Every workspace package, from the root `workspaces` globs (`dir/*` only). */
export function workspacePackages(): WorkspacePackage[] {
  const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
  const out: WorkspacePackage[] = [];
  for (const glob of root.workspaces) {
    const parent = join(REPO_ROOT, glob.replace(/\/\*$/, ''));
    if (!existsSync(parent)) continue;
    for (const entry of readdirSync(parent, { withFileTypes: true })) {
      const file = join(parent, entry.name, 'package.json');
      if (!entry.isDirectory() || !existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      out.push({
        name: String(manifest.name),
        dir: join(parent, entry.name),
        private: manifest.private === true,
        manifest,
      });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** The first ```ts block of a README, or null. */
export function firstTsBlock(readme: string): string | null {
  const match = /^```(?:ts|typescript)\n([\s\S]*?)^```/mu.exec(readme);
  return match ? match[1]! : null;
}

/** The import statements of a snippet that name packages (relative imports are the package's own internals). */
export function packageImports(snippet: string): string[] {
  return [...snippet.matchAll(/^import\s[\s\S]*?\sfrom\s+['"]([^'"]+)['"];?$/gmu)]
    .filter((m) => !m[1]!.startsWith('.'))
    .map((m) => m[0]);
}
