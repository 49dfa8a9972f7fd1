import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roomSelectorRuleLlm as ruleLlm } from '@agl/testing';
import { runRoomSelector, SEED_PROMPT } from './run-room-selector';

const ROOT = resolve(import.meta.dirname, '../../..');

function run(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--conditions=@agl/source', '--import', 'tsx', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

let llm: OpenAiTestServer;
let dir: string;
beforeAll(async () => {
  llm = await startOpenAiTestServer({ respond: ruleLlm });
  dir = await mkdtemp(join(tmpdir(), 'agl-apo-example-'));
});
afterAll(async () => {
  await llm.close();
  await rm(dir, { recursive: true, force: true });
});

describe('apo-room-selector example', () => {
  it('improves the seed prompt offline against the rule-based test server', async () => {
    const result = await runRoomSelector({
      baseURL: llm.baseURL,
      agentModel: 'agent-model',
      gradientModel: 'critic-model',
      applyEditModel: 'editor-model',
    });
    expect(result.seedScore).toBeLessThan(0.5);
    expect(result.bestScore).toBeGreaterThan(result.seedScore! + 0.3);
    expect(result.bestPrompt.startsWith(SEED_PROMPT)).toBe(true);
  });

  it('explains how to point it at an endpoint when none is configured', async () => {
    const r = await run(['examples/apo-room-selector/src/main.ts'], { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('export OPENAI_BASE_URL=');
    expect(r.stdout).toContain('export OPENAI_API_KEY=');
  });

  it(
    '`agl train --algorithm apo` runs it from the CLI, prints the best prompt and saves it',
    { timeout: 120_000 },
    async () => {
      const db = join(dir, 'store.sqlite');
      const r = await run(
        [
          'packages/cli/src/bin.ts',
          'train',
          'examples/apo-room-selector/src/train-entry.ts',
          '--algorithm',
          'apo',
          '--store',
          db,
          '--no-progress',
        ],
        {
          CI: '1',
          OPENAI_BASE_URL: llm.baseURL,
          OPENAI_API_KEY: 'test',
          APO_AGENT_MODEL: 'agent-model',
          APO_GRADIENT_MODEL: 'critic-model',
          APO_EDIT_MODEL: 'editor-model',
          AGL_STORE_URL: '',
          AGL_STORE_TOKEN: '',
          APO_OUTPUT: join(dir, 'best.txt'),
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('apo: round 3 leader');
      expect(r.stdout).toMatch(/best prompt v\d+ \(val 1\.000, seed 0\.\d+/u);
      expect(r.stdout).toContain(SEED_PROMPT);
      const saved = await readFile(join(dir, 'best.txt'), 'utf8');
      expect(saved.startsWith(SEED_PROMPT)).toBe(true);
    },
  );
});
