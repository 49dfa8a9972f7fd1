import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  roomSelectorRuleLlm as ruleLlm,
  runNode,
  SOURCE_NODE_FLAGS,
  trainRoomSelectorExample,
  useTestLlmAndDir,
} from '@agl/testing';
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
});
