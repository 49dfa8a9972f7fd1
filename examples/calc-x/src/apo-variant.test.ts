import { join } from 'node:path';
import { TraceToTransitions } from '@agl/core/transitions';
import { SqliteStore } from '@agl/store/sqlite';
import { useTestLlmAndDir } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { CALC_SEED_PROMPT, runCalcApo } from './apo-variant';
import { CALC_ADVICE, calcApoRuleLlm } from './apo-variant-rule-llm';

const suite = useTestLlmAndDir({ respond: calcApoRuleLlm, dirPrefix: 'agl-calc-x-apo-' });

describe('Calc-X APO variant (system prompt optimised offline against the rule-based test server)', () => {
  it(
    'takes held-out exact match from the vague seed to the tool-using, number-only prompt',
    { timeout: 120_000 },
    async () => {
      const storePath = join(suite.dir, 'store.sqlite');
      const result = await runCalcApo({
        baseURL: suite.llm.baseURL,
        agentModel: 'test-model',
        gradientModel: 'test-model',
        applyEditModel: 'test-model',
        store: storePath,
      });
      expect(result.seedScore).toBe(0);
      expect(result.bestScore).toBeGreaterThanOrEqual(0.9);
      expect(result.bestPrompt.startsWith(CALC_SEED_PROMPT)).toBe(true);
      expect(result.bestPrompt).toContain(CALC_ADVICE.tool);
      expect(result.bestPrompt).toContain(CALC_ADVICE.format);

      // The best prompt's val rollouts in the SQLite store: createAgent's two LLM calls around the calc tool, reward 1.
      const store = new SqliteStore({ path: storePath });
      try {
        const rollouts = (await store.queryRollouts({ statusIn: ['succeeded'] })).items.filter(
          (r) => r.resourcesId === result.bestResourcesId && r.mode === 'val',
        );
        expect(rollouts.length).toBeGreaterThan(0);
        const spans = (await store.querySpans({ rolloutId: rollouts[0]!.rolloutId })).items;
        expect(spans.some((s) => s.attributes['tool.name'] === 'calc')).toBe(true);
        const trajectory = new TraceToTransitions().adapt(spans);
        expect(trajectory.transitions).toHaveLength(2);
        expect(trajectory.transitions[0]!.state.messages[0]).toMatchObject({
          role: 'system',
          content: result.bestPrompt,
        });
        expect(trajectory.transitions[0]!.action.message.toolCalls?.[0]?.name).toBe('calc');
        expect(trajectory.finalReward).toBe(1);
      } finally {
        await store.close();
      }
    },
  );
});
