import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { useTempDirs } from '@agl/testing';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('./bin.ts', import.meta.url));
const temp = useTempDirs();

describe('agl-tiny serve', () => {
  it('prints AGL_TINY_URL (and TINKER_BASE_URL with --tinker), creates v0 in an empty directory, and enforces the token', async () => {
    const dir = await temp.make('agl-tiny-bin-');
    const args = [
      '--conditions=@agl/source',
      '--import',
      'tsx',
      bin,
      'serve',
      '--dir',
      dir,
      '--port',
      '0',
      '--token',
      's3cret',
      '--tinker',
    ];
    const child = spawn(
      process.execPath,
      [...args, '--d-model', '16', '--layers', '1', '--heads', '2', '--d-ff', '16', '--max-seq-len', '32'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      const [url, tinkerUrl] = await new Promise<[string, string]>((resolve, reject) => {
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /AGL_TINY_URL=(\S+)\n/.exec(out);
          const t = /TINKER_BASE_URL=(\S+)\n/.exec(out);
          if (m && t) resolve([m[1]!, t[1]!]);
        });
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('exit', (code) => reject(new Error(`agl-tiny exited with ${code}: ${err}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      const denied = await fetch(`${url}/v1/models`);
      expect(denied.status).toBe(401);
      expect(((await denied.json()) as { detail: string }).detail).toMatch(/Authorization: Bearer/);
      const ok = await fetch(`${url}/v1/models`, { headers: { authorization: 'Bearer s3cret' } });
      expect(((await ok.json()) as { data: unknown[] }).data[0]).toMatchObject({
        id: 'agl-tiny@v0',
        max_model_len: 32,
      });
      // --tinker: Tinker's REST API on the same port, the key in X-API-Key.
      expect(tinkerUrl).toBe(url);
      const session = await fetch(`${tinkerUrl}/api/v1/create_session`, {
        method: 'POST',
        headers: { 'x-api-key': 's3cret', 'content-type': 'application/json' },
        body: JSON.stringify({ tags: [], sdk_version: '0.25.0', type: 'create_session' }),
      });
      expect(((await session.json()) as { session_id: string }).session_id).toMatch(/\S/);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
