import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRespond, startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { runnableBlocks, runReadme } from './harness/readme-blocks';
import {
  REPO_ROOT,
  firstTsBlock,
  packageImports,
  workspacePackages,
  type WorkspacePackage,
} from './harness/workspace-packages';

const run = promisify(execFile);
/** READMEs whose snippet is self-contained: it must run to the end against the installed tarballs. */
const RUN_IN_FULL = new Set(['@agl/client', '@agl/store', '@agl/openai', '@agl/openai-agents', '@agl/vercel-ai']);

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
    if (unbuilt.length > 0)
      throw new Error(`Build first (npx nx run-many -t build): no dist/ in ${unbuilt.map((p) => p.name).join(', ')}.`);
    project = mkdtempSync(join(REPO_ROOT, 'tools/reliability/.pack-'));
    const packDir = join(project, 'tarballs');
    mkdirSync(packDir);
    const workspaces = publicPackages.flatMap((p) => ['--workspace', p.dir]);
    const { stdout } = await run(
      'npm',
      ['pack', ...workspaces, '--pack-destination', packDir, '--ignore-scripts', '--json'],
      { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 },
    );
    for (const entry of JSON.parse(stdout) as { name: string; filename: string }[])
      tarballs.set(entry.name, join(packDir, entry.filename));
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'agl-pack-check', private: true, type: 'module' }),
    );
    for (const [name, file] of tarballs) {
      const target = join(project, 'node_modules', name);
      mkdirSync(target, { recursive: true });
      await run('tar', ['-xzf', file, '-C', target, '--strip-components=1']);
    }
    // The bin links `npm install` would make: each tarball's bins, and tsx (a dependency of @agl/cli).
    const bin = join(project, 'node_modules', '.bin');
    mkdirSync(bin, { recursive: true });
    for (const name of tarballs.keys()) {
      const manifest = JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8')) as {
        bin?: Record<string, string>;
      };
      for (const [command, target] of Object.entries(manifest.bin ?? {}))
        symlinkSync(relative(bin, join(project, 'node_modules', name, target)), join(bin, command));
    }
    symlinkSync(relative(bin, join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs')), join(bin, 'tsx'));
  }, 180_000);
  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  async function runSnippet(
    pkg: WorkspacePackage,
    code: string,
    suffix: string,
  ): Promise<{ code: number; output: string }> {
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

  it('runs every runnable block of README.md and of the package READMEs, as written, against the test LLM', async () => {
    const readmes = [join(REPO_ROOT, 'README.md'), ...publicPackages.map((p) => join(p.dir, 'README.md'))].filter(
      (file) => existsSync(file) && runnableBlocks(readFileSync(file, 'utf8')).length > 0,
    );
    expect(readmes.map((f) => relative(REPO_ROOT, f))).toContain('README.md');
    let llm: OpenAiTestServer | undefined;
    try {
      llm = await startOpenAiTestServer({
        respond: (r) =>
          /Capital of France/u.test(r.messages.at(-1)?.content ?? '') ? { content: 'Paris' } : defaultRespond(r),
      });
      // npm_config_offline: `npx agl` must find the installed bin, never ask the registry.
      const env = {
        ...process.env,
        NODE_OPTIONS: '',
        OPENAI_BASE_URL: llm.baseURL,
        OPENAI_API_KEY: 'sk-pack-check',
        AGL_STORE_URL: '',
        AGL_STORE_TOKEN: '',
        npm_config_offline: 'true',
      };
      for (const readme of readmes) {
        const cwd = join(project, `readme-${relative(REPO_ROOT, readme).replace(/[\\/]/gu, '_')}`);
        mkdirSync(cwd, { recursive: true });
        // `--port 0`: other test runs on this machine may hold 4747 (tools/ci/quick-start.sh runs the commands verbatim).
        const results = await runReadme(readFileSync(readme, 'utf8'), { cwd, env, serverArgs: ['--port', '0'] });
        const failed = results.find((r) => !r.ok);
        if (failed)
          expect.fail(`${relative(REPO_ROOT, readme)}: \`${failed.command}\` failed:\n${failed.output.slice(-1500)}`);
        expect(results.length, readme).toBeGreaterThan(0);
      }
    } finally {
      await llm?.close();
    }
  }, 300_000);

  it('installs a working agl binary', async () => {
    const bin = (publicPackages.find((p) => p.name === '@agl/cli')!.manifest.bin as Record<string, string>).agl!;
    const { stdout } = await run(process.execPath, [join(project, 'node_modules', '@agl/cli', bin), '--help'], {
      cwd: project,
      timeout: 60_000,
    });
    expect(stdout).toMatch(/store/);
  }, 120_000);

  it('a service that installs the packed @agl/client and @agl/openai compiles nothing and gets no server or database', async () => {
    // A real `npm install` (registry or cache for third-party packages) in a folder outside the repository, so nothing
    // resolves from the monorepo's node_modules.
    const service = mkdtempSync(join(tmpdir(), 'agl-service-'));
    try {
      writeFileSync(join(service, 'package.json'), JSON.stringify({ name: 'svc', private: true, type: 'module' }));
      const packed = ['@agl/core', '@agl/client', '@agl/openai'].map((name) => tarballs.get(name)!);
      await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...packed, 'openai@^6'], {
        cwd: service,
        timeout: 240_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, npm_config_ignore_scripts: 'false' },
      });
      const { stdout } = await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
        cwd: service,
        maxBuffer: 64 * 1024 * 1024,
      });
      const names = new Set(stdout.split('\n').map((line) => line.split('node_modules/').at(-1)!));
      for (const heavy of ['better-sqlite3', 'pg', 'fastify', '@agl/store'])
        expect(names.has(heavy), heavy).toBe(false);
      expect(names.has('@agl/client')).toBe(true);
      // No native build: no package with an install script, no binding.gyp, no compiled .node file.
      const native: string[] = [];
      const walk = (dir: string): void => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          const path = join(dir, entry.name);
          if (entry.isDirectory()) walk(path);
          else if (entry.name === 'binding.gyp' || entry.name.endsWith('.node')) native.push(relative(service, path));
          else if (entry.name === 'package.json' && dir.split('node_modules').length > 1) {
            const scripts = (JSON.parse(readFileSync(path, 'utf8')) as { scripts?: Record<string, string> }).scripts;
            if (scripts?.install || scripts?.preinstall || scripts?.postinstall) native.push(relative(service, path));
          }
        }
      };
      walk(join(service, 'node_modules'));
      expect(native).toEqual([]);
      // The preload and the API load in the installed project.
      const check = join(service, 'check.mjs');
      writeFileSync(check, "import { observe } from '@agl/client';\nconsole.log(await observe({}, () => 'ran'));\n");
      const ran = await run(process.execPath, ['--import', '@agl/openai/register', check], {
        cwd: service,
        timeout: 60_000,
        env: { ...process.env, NODE_OPTIONS: '', AGL_STORE_URL: '', AGL_ROLLOUT_ID: '', AGL_ATTEMPT_ID: '' },
      });
      expect(ran.stdout.trim()).toBe('ran');
    } finally {
      rmSync(service, { recursive: true, force: true });
    }
  }, 300_000);
});
