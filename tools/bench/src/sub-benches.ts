import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { OverheadSummary } from '@agl/testing';
import { REPO_ROOT } from './child-processes';
import type { ResultTree } from './results';

/** Runs `npm run <script> -w <workspace> -- ...args`, its output into `logFile`; rejects on a non-zero exit or timeout. */
export function runWorkspaceScript(options: {
  workspace: string;
  script: string;
  args: string[];
  env?: Record<string, string>;
  logFile: string;
  timeoutMs: number;
}): Promise<void> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(options.logFile);
    const child = spawn('npm', ['run', options.script, '-w', options.workspace, '--', ...options.args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    const timer = setTimeout(() => child.kill('SIGTERM'), options.timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      log.end();
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `npm run ${options.script} -w ${options.workspace} ended with ${signal ?? `exit code ${code}`}; see ${options.logFile}`,
          ),
        );
    });
  });
}

/** The adapters that ship `bench/overhead.ts`. */
export function adaptersWithBench(): string[] {
  const dir = join(REPO_ROOT, 'adapters');
  return readdirSync(dir)
    .filter((name) => existsSync(join(dir, name, 'bench', 'overhead.ts')))
    .sort();
}

/**
 * Each adapter's overhead bench (`npm run bench -w adapters/<name> -- --json <file>`): CPU µs per traced call, per
 * untraced call, and their ratio. A bench that fails is recorded as null figures with the reason.
 */
export async function runAdapterBenches(options: {
  artifactsDir: string;
  calls?: number;
  log?: (line: string) => void;
}): Promise<ResultTree> {
  const out: ResultTree = {};
  for (const name of adaptersWithBench()) {
    const file = join(options.artifactsDir, `adapter-${name}.json`);
    rmSync(file, { force: true });
    options.log?.(`  adapter ${name}: npm run bench -w adapters/${name}`);
    try {
      await runWorkspaceScript({
        workspace: `adapters/${name}`,
        script: 'bench',
        args: ['--json', file],
        env: options.calls ? { AGL_BENCH_CALLS: String(options.calls) } : {},
        logFile: join(options.artifactsDir, `adapter-${name}.log`),
        timeoutMs: 10 * 60_000,
      });
      const s = JSON.parse(readFileSync(file, 'utf8')) as OverheadSummary;
      out[name] = {
        cpuMicrosPerCall: s.tracedUsPerCall,
        untracedCpuMicrosPerCall: s.untracedUsPerCall,
        addedCpuMicrosPerCall: s.overheadUsPerCall,
        overheadRatio: s.untracedUsPerCall > 0 ? s.tracedUsPerCall / s.untracedUsPerCall : null,
        calls: s.calls,
        spansStored: s.spansStored,
      };
    } catch (error) {
      out[name] = { cpuMicrosPerCall: null, overheadRatio: null, reason: (error as Error).message };
    }
  }
  return out;
}

/** The gateway's fixed-profile bench (`npm run bench -w packages/gateway -- --json <file>`). */
export async function runGatewayBench(options: {
  artifactsDir: string;
  quick: boolean;
  log?: (line: string) => void;
}): Promise<ResultTree> {
  const file = join(options.artifactsDir, 'gateway.json');
  rmSync(file, { force: true });
  options.log?.('  gateway: npm run bench -w packages/gateway');
  try {
    await runWorkspaceScript({
      workspace: 'packages/gateway',
      script: 'bench',
      args: ['--json', file],
      env: options.quick ? { BENCH_ROUNDS: '2', BENCH_REQUESTS: '500', BENCH_SERIAL: '100' } : {},
      logFile: join(options.artifactsDir, 'gateway.log'),
      timeoutMs: 10 * 60_000,
    });
    const report = JSON.parse(readFileSync(file, 'utf8')) as { gateway: ResultTree; profile?: ResultTree };
    return { ...report.gateway, profile: report.profile ?? null };
  } catch (error) {
    return { throughputRatio: null, p50AddedMs: null, reason: (error as Error).message };
  }
}
