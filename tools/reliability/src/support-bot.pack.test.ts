import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommandLine, runReadme } from './harness/readme-blocks';
import { REPO_ROOT, workspacePackages, type WorkspacePackage } from './harness/workspace-packages';

const run = promisify(execFile);
const EXAMPLE = join(REPO_ROOT, 'examples/support-bot');

/** The example's `@agl/*` dependencies and theirs, as workspace packages. */
function neededPackages(): WorkspacePackage[] {
  const all = new Map(workspacePackages().map((p) => [p.name, p]));
  const needed = new Map<string, WorkspacePackage>();
  const visit = (manifest: Record<string, unknown>): void => {
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies'] as const) {
      for (const name of Object.keys((manifest[field] ?? {}) as Record<string, string>)) {
        const pkg = all.get(name);
        if (!pkg || needed.has(name) || !name.startsWith('@agl/')) continue;
        needed.set(name, pkg);
        // A package's own devDependencies are not installed with it, nor are its optional peers (e.g. `@agl/cli`'s
        // `@agl/tiny-llm`, loaded only by `agl tiny serve`).
        const optional = (pkg.manifest.peerDependenciesMeta ?? {}) as Record<string, { optional?: boolean }>;
        const peers = Object.fromEntries(
          Object.entries((pkg.manifest.peerDependencies ?? {}) as Record<string, string>).filter(
            ([peer]) => optional[peer]?.optional !== true,
          ),
        );
        visit({ dependencies: pkg.manifest.dependencies, peerDependencies: peers });
      }
    }
  };
  visit(JSON.parse(readFileSync(join(EXAMPLE, 'package.json'), 'utf8')) as Record<string, unknown>);
  return [...needed.values()];
}

/** The README's loop block ("Improve it: the whole loop"), one line each, comments kept. */
function loopLines(readme: string): string[] {
  const block = readme.split('<!-- loop-commands')[1]!.split('```sh\n')[1]!.split('```')[0]!;
  return block.split('\n').filter((l) => l.trim() !== '');
}

/** A command that keeps running in a terminal of its own (`# terminal 1:` …), started in its own process group. */
interface Background {
  child: ChildProcess;
  output: () => string;
}

/**
 * The support-bot example copied out of the monorepo into a temporary folder, its `@agl/*` packages installed from
 * `npm pack` tarballs (third-party packages from the registry or npm's cache), and every command of its README run
 * there as written: the one-command demo block, then the improvement loop's lines in order (each `# terminal N`
 * server started in the background and awaited, the `export` line applied to the commands after it, `<rollout-id>`
 * standing for an id the traffic line printed).
 */
describe('packaging: the support-bot example copied out, installed from the packed tarballs, runs its README', () => {
  const packages = neededPackages();
  let root: string;
  let project: string;
  let installOutput = '';
  const background: Background[] = [];

  beforeAll(async () => {
    const unbuilt = packages.filter((p) => !existsSync(join(p.dir, 'dist')));
    if (unbuilt.length > 0)
      throw new Error(`Build first (npx nx run-many -t build): no dist/ in ${unbuilt.map((p) => p.name).join(', ')}.`);
    root = mkdtempSync(join(tmpdir(), 'agl-support-bot-pack-'));
    const packDir = join(root, 'tarballs');
    mkdirSync(packDir);
    const { stdout } = await run(
      'npm',
      [
        'pack',
        ...packages.flatMap((p) => ['--workspace', p.dir]),
        '--pack-destination',
        packDir,
        '--ignore-scripts',
        '--json',
      ],
      { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 },
    );
    const tarballs = new Map(
      (JSON.parse(stdout) as { name: string; filename: string }[]).map((e) => [
        e.name,
        `file:${join(packDir, basename(e.filename))}`,
      ]),
    );
    project = join(root, 'support-bot');
    cpSync(EXAMPLE, project, {
      recursive: true,
      filter: (src) => !/[\\/](node_modules|test-artifacts|\.agl)([\\/]|$)/u.test(src),
    });
    // As a user's copy: the `@agl/*` versions point at the tarballs (overrides reach the packages' own dependencies).
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as Record<string, unknown>;
    for (const field of ['dependencies', 'devDependencies'] as const) {
      const deps = manifest[field] as Record<string, string>;
      for (const name of Object.keys(deps)) if (tarballs.has(name)) deps[name] = tarballs.get(name)!;
    }
    manifest.overrides = Object.fromEntries(tarballs);
    writeFileSync(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    // Offline-capable: third-party packages from npm's cache where it has them. Install scripts off (better-sqlite3
    // would compile for minutes); its native module is the monorepo's build of the same version.
    const installed = await run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel', 'warn'],
      { cwd: project, timeout: 900_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NODE_OPTIONS: '' } },
    );
    installOutput = installed.stdout + installed.stderr;
    const sqlite = join(project, 'node_modules/better-sqlite3');
    const repoSqlite = join(REPO_ROOT, 'node_modules/better-sqlite3');
    const version = (dir: string): string =>
      (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    if (version(sqlite) === version(repoSqlite) && existsSync(join(repoSqlite, 'build/Release/better_sqlite3.node')))
      cpSync(join(repoSqlite, 'build'), join(sqlite, 'build'), { recursive: true });
    else await run('npm', ['rebuild', 'better-sqlite3'], { cwd: project, timeout: 600_000 });
  }, 1_200_000);

  afterAll(async () => {
    for (const b of background) {
      try {
        process.kill(-b.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const env = (): NodeJS.ProcessEnv => ({
    ...process.env,
    NODE_OPTIONS: '',
    AGL_STORE_URL: '',
    AGL_STORE_TOKEN: '',
    OPENAI_BASE_URL: '',
    npm_config_offline: 'true',
  });

  it('installs with no EBADENGINE warning on this Node, and no @agl package from the monorepo', () => {
    expect(installOutput).not.toMatch(/EBADENGINE/u);
    for (const pkg of packages) {
      const installed = join(project, 'node_modules', pkg.name);
      expect(existsSync(join(installed, 'dist')), pkg.name).toBe(true);
    }
    expect(existsSync(join(project, 'node_modules/@agl/source'))).toBe(false);
  });

  it('runs the one-command demo block as written (demo, rollouts list, store serve)', async () => {
    const results = await runReadme(readFileSync(join(project, 'README.md'), 'utf8'), {
      cwd: project,
      env: env(),
      serverArgs: ['--port', '0'],
    });
    const failed = results.find((r) => !r.ok);
    if (failed) expect.fail(`\`${failed.command}\` failed:\n${failed.output.slice(-2000)}`);
    // (`--port 0` is the harness's, for a machine where 4747 may be taken.)
    expect(results.map((r) => r.command.replace(/\s+#.*$/u, ''))).toEqual([
      'npm run demo',
      'npx agl rollouts list',
      'npx agl store serve --port 0',
    ]);
    expect(results[1]!.output.match(/^ro-\S+/gmu)?.length).toBe(10);
  }, 600_000);

  it('runs the improvement loop as written, from the copy, and the service ends up on the published prompt', async () => {
    const vars = env();
    let rolloutId: string | undefined;
    const outputs: string[] = [];
    for (const raw of loopLines(readFileSync(join(project, 'README.md'), 'utf8'))) {
      const terminal = /#\s*terminal (\d)/u.exec(raw)?.[1];
      const command = raw.replace(/\s+#.*$/u, '').trim();
      if (command.startsWith('export ')) {
        for (const [, name, value] of command.matchAll(/(\w+)=(\S+)/gu)) vars[name!] = value!;
        continue;
      }
      if (terminal !== undefined && terminal !== '4') {
        background.push(await startBackground(command, project, vars));
        continue;
      }
      const line = rolloutId === undefined ? command : command.replaceAll('<rollout-id>', rolloutId);
      const result = await runCommandLine(line, { cwd: project, env: vars, timeoutMs: 300_000 });
      expect(result.ok, `\`${line}\` failed:\n${result.output.slice(-2000)}`).toBe(true);
      outputs.push(result.output);
      if (command.startsWith('npm run traffic')) {
        rolloutId = /^(ro-\S+)$/mu.exec(result.output)?.[1];
        expect(result.output.match(/^ro-\S+$/gmu)?.length).toBe(30);
      }
    }
    // The name the README gives APO's published prompt is the one the run printed.
    expect(outputs.join('\n')).toContain('published as the latest resources version support-bot-apo-best');
    // The last line asked the service, which by then serves APO's prompt (its thank-you) from the tuned model.
    expect(outputs.at(-1)).toMatch(/"reply":"Order A-1002 is shipped[^"]*"/u);
  }, 900_000);
});

/** Starts `command` in its own process group and resolves once it printed a URL (`NAME=http://…` or a URL line). */
function startBackground(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Background> {
  const child = spawn('bash', ['-c', command], {
    cwd,
    env: { ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`\`${command}\`: no URL line in 180 s:\n${output}`)), 180_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output += `${line}\n`;
      // test-servers prints two URLs (LLM, fine-tuning); wait for the last one.
      if (!/^[A-Z_]+_URL=http/u.test(line) || (command.includes('test-servers') && !line.startsWith('FINE_TUNING')))
        return;
      clearTimeout(timer);
      resolve({ child, output: () => output });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`\`${command}\` exited (${code}) before printing its URL:\n${output}`));
    });
  });
}
