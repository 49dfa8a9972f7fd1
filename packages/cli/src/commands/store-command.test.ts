import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { type Command, CommanderError } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StoreClient } from '@agl/store/client';
import { SqliteStore } from '@agl/store/sqlite';
import { createProgram } from '../program';

const ROOT = resolve(import.meta.dirname, '../../../..');
const BIN = 'packages/cli/src/bin.ts';
/** tsx's loader by path, so a child started in a temporary folder finds it. */
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const REPLAY = join(ROOT, 'packages/store/src/server/__fixtures__/agl03_client_replay.py');

/** `agl store serve <args>`, or with `command: []` AGL 0.3's form `agl store <args>`. */
function startServe(
  args: string[],
  o: { cwd?: string; command?: string[] } = {},
): { child: ChildProcess; url: Promise<string>; lines: string[]; stderr: string[] } {
  const cwd = o.cwd ?? ROOT;
  const child = spawn(
    process.execPath,
    ['--conditions=@agl/source', '--import', TSX, join(ROOT, BIN), 'store', ...(o.command ?? ['serve']), ...args],
    {
      cwd,
      env: { ...process.env, AGL_STORE_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  const url = new Promise<string>((resolveUrl, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const match = /^AGL_STORE_URL=(.+)$/.exec(line);
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`agl store serve exited early (${code}): ${stderr.join('\n')}`)));
  });
  return { child, url, lines, stderr };
}

/**
 * Resolves once the StoreClient (plain `node:http`) has handed a whole request to `path` to the OS: headers and body
 * (the request's `finish` event; `http.client.request.start` hands over each client request as it is created).
 */
function requestWritten(path: string): Promise<void> {
  return new Promise((resolveWritten) => {
    const onStart = (message: unknown): void => {
      const request = (message as { request: ClientRequest }).request;
      if (!request.path.startsWith(path)) return;
      unsubscribe('http.client.request.start', onStart);
      request.once('finish', () => resolveWritten());
    };
    subscribe('http.client.request.start', onStart);
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolveExit) => {
    if (child.exitCode !== null) resolveExit(child.exitCode);
    else child.once('exit', (code) => resolveExit(code));
  });

describe('agl store serve (child process, SQLite file, bearer token)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agl-cli-serve-'));
  const db = join(dir, 'agl.sqlite');
  const TOKEN = 'cli-test-token';
  let serve: ReturnType<typeof startServe>;
  let url = '';

  beforeAll(async () => {
    serve = startServe(['--port', '0', '--db', db, '--token', TOKEN, '--allowed-host', 'agl.internal']);
    url = await serve.url;
  }, 90_000);
  afterAll(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints AGL_STORE_URL=http://127.0.0.1:<port>, then the dashboard line', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await vi.waitFor(() => expect(serve.lines.length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    expect(serve.lines[0]).toBe(`AGL_STORE_URL=${url}`);
    expect(serve.lines[1]).toMatch(new RegExp(`^Dashboard: ${url}/`));
    await vi.waitFor(() => expect(serve.lines).toContain(`Store: ${db}`), { timeout: 10_000 });
    const info = await fetch(`${url}/v1/agl/ext/info`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await info.json()).toEqual({ store: db });
  });

  it("AGL 0.3's LightningStoreClient request sequence (python3 replay) gets the right status and shape for every call", () => {
    const result = spawnSync('python3', [REPLAY, url, TOKEN], { encoding: 'utf8', timeout: 60_000 });
    expect(result.stdout + result.stderr).toMatch(/REPLAY OK \d+ checks/);
    expect(result.status).toBe(0);
  }, 90_000);

  it('answers only loopback Host names and those of --allowed-host', async () => {
    const hostStatus = (host: string) =>
      new Promise<number>((resolveStatus, reject) => {
        const { hostname, port } = new URL(url);
        httpGet({ hostname, port, path: '/v1/agl/health', headers: { host } }, (res) => {
          res.resume();
          resolveStatus(res.statusCode ?? 0);
        }).on('error', reject);
      });
    expect(await hostStatus('agl.internal')).toBe(200);
    expect(await hostStatus(`localhost:${new URL(url).port}`)).toBe(200);
    expect(await hostStatus('rebind.attacker.example')).toBe(403);
  });

  it('answers a StoreClient, refuses a missing token, then drains and closes cleanly on SIGTERM', async () => {
    expect((await fetch(`${url}/v1/agl/rollouts`)).status).toBe(401);
    const client = new StoreClient({ url, token: TOKEN, retryDelays: [] });
    const [a, b] = await client.enqueueRollouts([{ input: { n: 1 } }, { input: { n: 2 } }]);
    const claimed = await client.dequeueRollout({ workerId: 'w' });
    expect(claimed?.rolloutId).toBe(a!.rolloutId);
    // an in-flight long poll is answered at once when the server starts closing
    const written = requestWritten('/v1/agl/waits/rollouts');
    const waiting = client.waitForRollouts([b!.rolloutId], { timeoutSeconds: 120 });
    await written;
    // The long poll's bytes are on the server's socket; the server has read them once it answers a request sent after
    // them (one event loop, which reads every readable socket of a turn before it gets to later ones).
    expect((await fetch(`${url}/v1/agl/health`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    serve.child.kill('SIGTERM');
    expect(await waiting).toEqual([]);
    expect(await exited(serve.child)).toBe(0);
    expect(serve.stderr.join('\n')).toMatch(/stopped cleanly/);
    await client.close();

    const raw = new Database(db, { readonly: true });
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    raw.close();
    const reopened = new SqliteStore({ path: db });
    const page = await reopened.queryRollouts({ rolloutIdIn: [a!.rolloutId, b!.rolloutId] });
    expect(page.items.map((r) => r.status).sort()).toEqual(['preparing', 'queuing']);
    expect((await reopened.statistics()).totalRollouts).toBeGreaterThanOrEqual(2);
    await reopened.close();
  }, 60_000);
});

describe("agl store with AGL 0.3's flags (a Python user's start command)", () => {
  it('`agl store --host --port --cors-origin … --log-level` serves the default store .agl/store.sqlite and says so', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'agl-cli-store03-'));
    const serve = startServe(
      [
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--cors-origin',
        'http://a.test',
        '--cors-origin',
        'http://b.test',
        '--log-level',
        'INFO',
      ],
      { cwd, command: [] },
    );
    try {
      const url = await serve.url;
      await vi.waitFor(() => expect(serve.lines.length).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
      expect(serve.lines).toContain('Store: .agl/store.sqlite');
      const preflight = await fetch(`${url}/v1/agl/health`, { headers: { origin: 'http://b.test' } });
      expect(preflight.status).toBe(200);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('http://b.test');
      serve.child.kill('SIGTERM');
      expect(await exited(serve.child)).toBe(0);
      expect(existsSync(join(cwd, '.agl', 'store.sqlite'))).toBe(true);
    } finally {
      if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('agl command line', () => {
  function run(argv: string[]): { out: string; err: string; code: number } {
    let out = '';
    let err = '';
    const program = createProgram({ io: { out: (l) => void (out += `${l}\n`), err: (l) => void (err += `${l}\n`) } });
    const configure = (cmd: Command): void => {
      cmd.exitOverride().configureOutput({ writeOut: (s) => void (out += s), writeErr: (s) => void (err += s) });
      cmd.commands.forEach(configure);
    };
    configure(program);
    try {
      program.parse(['node', 'agl', ...argv]);
      return { out, err, code: 0 };
    } catch (error) {
      if (error instanceof CommanderError) return { out, err, code: error.exitCode };
      throw error;
    }
  }

  it('every command has --help', () => {
    expect(run(['--help']).out).toMatch(/store/);
    const help = run(['store', 'serve', '--help']);
    expect(help.code).toBe(0);
    for (const flag of [
      '--db',
      '--memory',
      '--port',
      '--host',
      '--token',
      '--body-limit',
      '--cors-origin',
      '--allowed-host',
    ])
      expect(help.out).toContain(flag);
    expect(help.out).toContain('(default: ".agl/store.sqlite")');
    const store = run(['store', '--help']);
    for (const flag of ['--host', '--port', '--cors-origin', '--log-level']) expect(store.out).toContain(flag);
  });

  it('unknown flags are errors with a suggestion', () => {
    const result = run(['store', 'serve', '--prot', '1']);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/unknown option '--prot'/);
    expect(result.err).toMatch(/Did you mean --port\?/);
  });

  it('bad values are refused before anything starts', () => {
    expect(run(['store', 'serve', '--port', '70000']).err).toMatch(/--port.*0 to 65535/);
    expect(run(['store', 'serve', '--memory', '--db', 'x.sqlite']).err).toMatch(/cannot be used with/);
  });
});
