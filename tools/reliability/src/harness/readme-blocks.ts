import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * A runnable block of a README. A fenced block is runnable only when its info string says so:
 * ```` ```ts file=observe.mts ```` is written to that file (relative to the folder the README's commands run in);
 * ```` ```bash run ```` holds commands, run one line at a time, in order, each expected to exit 0.
 */
export type ReadmeBlock = { kind: 'file'; name: string; code: string } | { kind: 'run'; commands: string[] };

/** One command of a `run` block and how it went. */
export interface CommandResult {
  command: string;
  ok: boolean;
  output: string;
  seconds: number;
}

const FENCE = /^```([^\n`]*)\n([\s\S]*?)^```[ \t]*$/gmu;

/** The runnable blocks of a README, in order (see {@link ReadmeBlock}). */
export function runnableBlocks(markdown: string): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  for (const match of markdown.matchAll(FENCE)) {
    const words = match[1]!.trim().split(/\s+/u);
    const body = match[2]!;
    const file = words.find((w) => w.startsWith('file='));
    if (file) blocks.push({ kind: 'file', name: file.slice('file='.length), code: body });
    else if (words.includes('run')) {
      const commands = body.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
      blocks.push({ kind: 'run', commands });
    }
  }
  return blocks;
}

/** True for a command that starts a server which runs until stopped (`agl store serve`, `agl gateway serve`). */
export function isServerCommand(command: string): boolean {
  return /\bagl (store|gateway) serve\b/u.test(command);
}

/** Runs one command line with bash (pipefail), capturing stdout and stderr together. */
export function runCommandLine(
  command: string,
  o: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<CommandResult> {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', command], {
      cwd: o.cwd,
      env: o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      output += `\n(killed after ${o.timeoutMs / 1000}s)`;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ command, ok: code === 0, output, seconds: (Date.now() - started) / 1000 });
    });
  });
}

/**
 * Starts a server command, waits for its `AGL_STORE_URL=` / URL line, checks that `/` answers (for the store: the
 * dashboard's page), stops it with SIGINT and expects a clean stop.
 */
function runServerCommand(
  command: string,
  o: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<CommandResult> {
  const started = Date.now();
  return new Promise((done) => {
    // Its own process group, signalled as a whole like Ctrl-C in a terminal (`npx` does not pass SIGINT on).
    const child = spawn('bash', ['-c', command], {
      cwd: o.cwd,
      env: o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const signalGroup = (signal: NodeJS.Signals): void => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    let output = '';
    let problem: string | null = null;
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      problem = `no URL line, or no exit after SIGINT, within ${o.timeoutMs / 1000}s`;
      signalGroup('SIGKILL');
    }, o.timeoutMs);
    createInterface({ input: child.stdout }).on('line', (line) => {
      output += `${line}\n`;
      const url = /^AGL_(?:STORE|GATEWAY)_URL=(\S+)/u.exec(line)?.[1];
      if (!url) return;
      void (async () => {
        try {
          const page = await fetch(`${url}/`);
          const html = await page.text();
          if (/store serve/u.test(command) && !(page.status === 200 && html.includes('<div id="root">'))) {
            problem = `GET ${url}/ answered ${page.status}, not the dashboard: ${html.slice(0, 200)}`;
          }
          output += `GET ${url}/ → ${page.status}\n`;
        } catch (error) {
          problem = `GET ${url}/ failed: ${(error as Error).message}`;
        }
        signalGroup('SIGINT');
      })();
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      // `npx` itself ends with 130 on SIGINT, as after Ctrl-C; the server must have stopped cleanly.
      const stopped = code === 0 || ((code === 130 || signal === 'SIGINT') && /stopped cleanly/u.test(output));
      if (!stopped && problem === null) problem = `exit code ${String(code ?? signal)} after SIGINT`;
      done({
        command,
        ok: problem === null,
        output: problem ? `${output}\n${problem}` : output,
        seconds: (Date.now() - started) / 1000,
      });
    });
  });
}

/**
 * Runs the runnable blocks of a README in `cwd`, in order: writes each `file=` block, runs each command of each `run`
 * block (a server command is started, checked and stopped). Stops at the first failing command.
 */
export async function runReadme(
  markdown: string,
  o: {
    cwd: string;
    env?: NodeJS.ProcessEnv;
    timeoutMs?: number;
    onResult?: (r: CommandResult) => void;
    /** Flags appended to server commands (e.g. `--port 0` where port 4747 may be taken). */
    serverArgs?: string[];
  },
): Promise<CommandResult[]> {
  const env = o.env ?? process.env;
  const timeoutMs = o.timeoutMs ?? 180_000;
  const results: CommandResult[] = [];
  for (const block of runnableBlocks(markdown)) {
    if (block.kind === 'file') {
      const path = join(o.cwd, block.name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, block.code);
      continue;
    }
    for (const command of block.commands) {
      const server = isServerCommand(command);
      const line = server && o.serverArgs ? `${command.replace(/\s+#.*$/u, '')} ${o.serverArgs.join(' ')}` : command;
      const result = await (server ? runServerCommand : runCommandLine)(line, { cwd: o.cwd, env, timeoutMs });
      results.push(result);
      o.onResult?.(result);
      if (!result.ok) return results;
    }
  }
  return results;
}
