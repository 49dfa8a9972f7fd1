import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, firstTsBlock, packageImports, workspacePackages, type WorkspacePackage } from './harness/workspace-packages';

const run = promisify(execFile);
/** READMEs whose snippet is self-contained: it must run to the end against the installed tarballs. */
const RUN_IN_FULL = new Set(['@agl/store', '@agl/openai', '@agl/openai-agents', '@agl/vercel-ai']);

/**
 * `npm pack` of every public workspace package, installed into a temporary project by unpacking each tarball into its
 * `node_modules` (no registry, no install scripts). The project sits inside the repository, so the third-party
 * dependencies resolve from the root `node_modules` while every `@agl/*` import resolves to the unpacked tarball's
 * `dist` (no `@agl/source` condition). Then each README's first TypeScript snippet is run there.
 */
describe('packaging: npm pack every public package, install the tarballs, run the README snippets', () => {
  const publicPackages = workspacePackages().filter((p) => !p.private);
  let project: string;
  const tarballs = new Map<string, string>();

  beforeAll(async () => {
    const unbuilt = publicPackages.filter((p) => !existsSync(join(p.dir, 'dist')));
    if (unbuilt.length > 0) throw new Error(`Build first (npx nx run-many -t build): no dist/ in ${unbuilt.map((p) => p.name).join(', ')}.`);
    project = mkdtempSync(join(REPO_ROOT, 'tools/reliability/.pack-'));
    const packDir = join(project, 'tarballs');
    mkdirSync(packDir);
    const workspaces = publicPackages.flatMap((p) => ['--workspace', p.dir]);
    const { stdout } = await run('npm', ['pack', ...workspaces, '--pack-destination', packDir, '--ignore-scripts', '--json'], { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 });
    for (const entry of JSON.parse(stdout) as { name: string; filename: string }[]) tarballs.set(entry.name, join(packDir, entry.filename));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'agl-pack-check', private: true, type: 'module' }));
    for (const [name, file] of tarballs) {
      const target = join(project, 'node_modules', name);
      mkdirSync(target, { recursive: true });
      await run('tar', ['-xzf', file, '-C', target, '--strip-components=1']);
    }
  }, 180_000);
  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  async function runSnippet(pkg: WorkspacePackage, code: string, suffix: string): Promise<{ code: number; output: string }> {
    const file = join(project, `${pkg.name.replace('/', '__')}.${suffix}.ts`);
    writeFileSync(file, code);
    try {
      const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', file], {
        cwd: project,
        timeout: 60_000,
        env: { ...process.env, NODE_OPTIONS: '', OPENAI_API_KEY: 'sk-pack-check' },
      });
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string; message: string };
      return { code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}${e.stderr ?? e.message}` };
    }
  }

  it('packs every public package, and each tarball holds its dist, README and package.json', () => {
    expect([...tarballs.keys()].sort()).toEqual(publicPackages.map((p) => p.name).sort());
    for (const pkg of publicPackages) {
      const root = join(project, 'node_modules', pkg.name);
      expect(existsSync(join(root, 'dist')), `${pkg.name} dist`).toBe(true);
      expect(existsSync(join(root, 'README.md')), `${pkg.name} README`).toBe(true);
      expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version).toBe(pkg.manifest.version);
    }
  });

  it('resolves every package import of every README snippet to the installed tarballs', async () => {
    const failures: string[] = [];
    for (const pkg of publicPackages) {
      const snippet = firstTsBlock(readFileSync(join(pkg.dir, 'README.md'), 'utf8'));
      if (snippet === null) {
        failures.push(`${pkg.name}: README has no \`\`\`ts usage snippet`);
        continue;
      }
      const imports = packageImports(snippet);
      if (imports.length === 0) continue;
      const result = await runSnippet(pkg, `${imports.join('\n')}\n`, 'imports');
      if (result.code !== 0) failures.push(`${pkg.name}: ${result.output.slice(-800)}`);
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it('runs the self-contained README snippets to the end', async () => {
    for (const pkg of publicPackages.filter((p) => RUN_IN_FULL.has(p.name))) {
      const snippet = firstTsBlock(readFileSync(join(pkg.dir, 'README.md'), 'utf8'))!;
      const result = await runSnippet(pkg, snippet, 'run');
      expect(result.code, `${pkg.name}: ${result.output.slice(-800)}`).toBe(0);
    }
  }, 300_000);

  it('installs a working agl binary', async () => {
    const bin = (publicPackages.find((p) => p.name === '@agl/cli')!.manifest.bin as Record<string, string>).agl!;
    const { stdout } = await run(process.execPath, [join(project, 'node_modules', '@agl/cli', bin), '--help'], { cwd: project, timeout: 60_000 });
    expect(stdout).toMatch(/store/);
  }, 120_000);
});
