import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const TOKEN = 'dash-link-token-8f3a9c';

describe('agl store serve --log-json', () => {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@agl/source',
      '--import',
      TSX,
      join(ROOT, 'packages/cli/src/bin.ts'),
      'store',
      'serve',
      '--memory',
      '--port',
      '0',
      '--no-dashboard',
      '--log-json',
    ],
    { cwd: ROOT, env: { ...process.env, AGL_STORE_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line));
  const url = new Promise<string>((resolveUrl, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^AGL_STORE_URL=(.+)$/u.exec(line);
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`agl store serve exited (${code}): ${stderr.join('\n')}`)));
  });
  afterAll(() => {
    child.kill('SIGTERM');
  });

  it('logs dashboard links and API calls without ?token=, ?api_key= or ?key=', async () => {
    const base = await url;
    const headers = { authorization: `Bearer ${TOKEN}` };
    await fetch(`${base}/?token=${TOKEN}`);
    await fetch(`${base}/v1/agl/health?token=${TOKEN}&view=1`);
    await fetch(`${base}/v1/agl/rollouts?api_key=${TOKEN}x&limit=2&KEY=${TOKEN}y`, { headers });
    const deadline = Date.now() + 30_000;
    const logged = (): Array<{ url: string }> =>
      stderr.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { url: string });
    while (logged().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const urls = logged().map((l) => l.url);
    expect(urls).toEqual(['/', '/v1/agl/health?view=1', '/v1/agl/rollouts?limit=2']);
    expect(stderr.join('\n')).not.toContain(TOKEN);
  }, 60_000);
});
