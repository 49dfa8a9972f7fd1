import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  roomSelectorRuleLlm as ruleLlm,
  runNode,
  SOURCE_NODE_FLAGS,
  trainRoomSelectorExample,
  useTestLlmAndDir,
} from '@agl/testing';
import { SqliteStore } from '@agl/store/sqlite';
import { describe, expect, it } from 'vitest';
import { runRoomSelector, SEED_PROMPT } from './run-room-selector';

const suite = useTestLlmAndDir({ respond: ruleLlm, dirPrefix: 'agl-apo-example-' });

describe('apo-room-selector example', () => {
  it('improves the seed prompt offline against the rule-based test server', async () => {
    const result = await runRoomSelector({
      baseURL: suite.llm.baseURL,
      agentModel: 'agent-model',
      gradientModel: 'critic-model',
      applyEditModel: 'editor-model',
    });
    expect(result.seedScore).toBeLessThan(0.5);
    expect(result.bestScore).toBeGreaterThan(result.seedScore! + 0.3);
    expect(result.bestPrompt.startsWith(SEED_PROMPT)).toBe(true);
  });

  it('explains how to point it at an endpoint when none is configured', async () => {
    const env = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
    const r = await runNode([...SOURCE_NODE_FLAGS, 'src/main.ts'], env, resolve(import.meta.dirname, '..'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('export OPENAI_BASE_URL=');
    expect(r.stdout).toContain('export OPENAI_API_KEY=');
  });

  it(
    '`agl train --algorithm apo` runs it from the CLI, prints the best prompt and saves it',
    { timeout: 120_000 },
    async () => {
      const r = await trainRoomSelectorExample({ baseURL: suite.llm.baseURL, dir: suite.dir });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('apo: round 3 leader');
      expect(r.stdout).toMatch(/best prompt v\d+ \(val 1\.000, seed 0\.\d+/u);
      expect(r.stdout).toContain(SEED_PROMPT);
      const saved = await readFile(join(suite.dir, 'best.txt'), 'utf8');
      expect(saved.startsWith(SEED_PROMPT)).toBe(true);
    },
  );

  it(
    '`agl train --algorithm apo --release` makes the winner a release candidate; the latest stays the baseline',
    { timeout: 180_000 },
    async () => {
      const dir = join(suite.dir, 'release');
      await mkdir(dir, { recursive: true });
      const seeded = new SqliteStore({ path: join(dir, 'store.sqlite') });
      const baseline = await seeded.addResources({
        llm: { resourceType: 'llm', endpoint: suite.llm.baseURL, model: 'agent-model', apiKey: 'test' },
        system_prompt: { resourceType: 'prompt_template', template: SEED_PROMPT },
      });
      await seeded.close();
      const r = await trainRoomSelectorExample({
        baseURL: suite.llm.baseURL,
        dir,
        args: ['--release', '--shares', '0.1,0.5,1', '--min-requests', '20'],
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/best prompt v\d+ \(val 1\.000.*the candidate of release \S+ against /u);
      const store = new SqliteStore({ path: join(dir, 'store.sqlite') });
      try {
        expect((await store.getLatestResources())!.resourcesId).toBe(baseline.resourcesId);
        const [release] = await store.listReleases!();
        expect(release).toMatchObject({
          state: 'running',
          baseline: baseline.resourcesId,
          shares: [0.1, 0.5, 1],
          minRequests: 20,
        });
        const candidate = (await store.getResourcesById(release!.candidate))!;
        const prompt = candidate.resources.system_prompt as { template: string };
        expect(prompt.template.startsWith(SEED_PROMPT)).toBe(true);
        expect(prompt.template).not.toBe(SEED_PROMPT);
      } finally {
        await store.close();
      }
    },
  );
});
