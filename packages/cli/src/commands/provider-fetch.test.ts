import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { cliErrorMessage } from '../cli-error-message';
import { cli } from './__fixtures__/run-cli';
import { seedSupportTranscript } from './__fixtures__/seed-support-transcripts';
import { providerFetch } from './provider-fetch';

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let dir: string;
let path: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-provider-fetch-'));
  path = join(dir, 'store.sqlite');
  const store = new SqliteStore({ path });
  for (let i = 0; i < 10; i++)
    await seedSupportTranscript(store, { order: `A${i}`, answer: `Order A${i} shipped.`, agentReward: 1, feedback: 1 });
  await store.close();
  vi.stubEnv('OPENAI_API_KEY', 'sk-wrong-url');
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

describe('errors name what failed', () => {
  it('agl finetune against a wrong URL names the URL, the reason and the flag to fix', async () => {
    const base = `http://127.0.0.1:${await closedPort()}/v1`;
    const run = await cli(
      'finetune',
      '--base-url',
      base,
      '--base-model',
      'gpt-4o-mini-2024-07-18',
      '--method',
      'sft',
      '--store',
      path,
    );
    expect(run.code).toBe(1);
    expect(run.err).not.toBe('error: Connection error.');
    expect(run.err).toContain(`the fine-tuning provider at ${new URL(base).origin}`);
    expect(run.err).toContain('ECONNREFUSED');
    expect(run.err).toContain('--base-url (or OPENAI_BASE_URL)');
  }, 60_000);

  it('a library error without an AGL cause prints its causes after its own message', () => {
    const socket = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const wrapped = new Error('Connection error.', { cause: new TypeError('fetch failed', { cause: socket }) });
    expect(cliErrorMessage(wrapped)).toBe('Connection error. (fetch failed: connect ECONNREFUSED 127.0.0.1:9)');
    expect(cliErrorMessage('plain')).toBe('plain');
  });

  it('providerFetch passes answers and aborts through unchanged', async () => {
    const ok = new Response('{}');
    await expect(providerFetch('x', 'y', async () => ok)('http://127.0.0.1:1/a')).resolves.toBe(ok);
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    await expect(
      providerFetch('x', 'y', async () => {
        throw abort;
      })('http://127.0.0.1:1/a'),
    ).rejects.toBe(abort);
  });
});
