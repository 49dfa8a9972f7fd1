// The README's tinkerGrpo example, run as written (a .ts file under tsx) against the Tinker stand-in over real HTTP.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { startTinkerStandIn, type TinkerStandIn } from '@agl/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
let dir: string;
let standIn: TinkerStandIn;

beforeAll(async () => {
  standIn = await startTinkerStandIn({ apiKey: 'tml-readme' });
  dir = await mkdtemp(join(tmpdir(), 'agl-readme-grpo-'));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
});
afterAll(async () => {
  await standIn?.close();
  await rm(dir, { recursive: true, force: true });
});

it('the README’s tinkerGrpo example runs: 2 rounds through the Tinker primitives', async () => {
  const readme = await readFile(resolve(import.meta.dirname, '../README.md'), 'utf8');
  const block = readme
    .split('```ts\n')
    .map((b) => b.split('```')[0]!)
    .find((b) => b.includes('tinkerGrpo({'))!;
  expect(block).toBeDefined();
  await writeFile(join(dir, 'example.mts'), block);
  const child = spawn(process.execPath, ['--conditions=@agl/source', '--import', 'tsx', 'example.mts'], {
    cwd: dir,
    env: { ...process.env, TINKER_API_KEY: 'tml-readme', TINKER_BASE_URL: standIn.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  expect(code, err).toBe(0);
  // `console.log` colours the summary's values when FORCE_COLOR is set (CI sets it).
  out = stripVTControlCharacters(out);
  expect(out).toMatch(/rounds: 2,/);
  expect(out).toMatch(/samplerPath: 'tinker:\/\/\S+\/sampler_weights\/000002'/);
  // The stand-in's bigram model never answers the arithmetic, so every group scores 0 and is skipped (no
  // forward_backward); each round still saves a sampler path and publishes it.
  expect(standIn.requestsTo('/api/v1/create_model')).toHaveLength(1);
  expect(standIn.requestsTo('/api/v1/save_weights_for_sampler')).toHaveLength(2);
  expect(standIn.sampled).toHaveLength(16);
}, 180_000);
