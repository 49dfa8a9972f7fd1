import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MemoryStore } from '@agl/store';
import { roomSelectorRuleLlm as ruleLlm, startOpenAiTestServer, useTestLlmAndDir } from '@agl/testing';
import { Trainer } from '@agl/trainer';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { APO, loadApoCandidates, type ApoEvent, type ApoResult } from './index';
import { runApo, SEED_PROMPT, TRAIN, VAL } from './__fixtures__/run-apo';

const suite = useTestLlmAndDir({ respond: ruleLlm, dirPrefix: 'agl-apo-' });

function lineage(result: ApoResult, version: string): string[] {
  const byVersion = new Map(result.candidates.map((c) => [c.version, c]));
  const chain: string[] = [];
  for (let v: string | null = version; v !== null; v = byVersion.get(v)?.parent ?? null) chain.push(v);
  return chain;
}

describe('APO beam search', () => {
  const store = new MemoryStore();
  let result: ApoResult;
  let failedEdits = 0;

  beforeAll(async () => {
    const apo = await runApo({
      store,
      baseURL: suite.llm.baseURL,
      outputPath: join(suite.dir, 'best-prompt.txt'),
      onEvent: (e) => void (e.type === 'edit-failed' && (failedEdits += 1)),
    });
    result = apo.result!;
  });

  it('finds a prompt that beats the seed on the full validation set', () => {
    expect(result.seedScore).not.toBeNull();
    expect(result.bestScore).toBeGreaterThan(result.seedScore! + 0.2);
    expect(result.bestPrompt).not.toBe(SEED_PROMPT);
    expect(result.bestPrompt.startsWith(SEED_PROMPT)).toBe(true);
  });

  it('rejects at least one child that scored below its parent, and the winner comes out of ≥ 2 rounds of edits', () => {
    expect(result.rejectedWorseChildren.length).toBeGreaterThan(0);
    for (const r of result.rejectedWorseChildren) expect(r.score).toBeLessThan(r.parentScore);
    const best = result.candidates.find((c) => c.version === result.bestVersion)!;
    expect(best.round).toBeGreaterThanOrEqual(2);
    expect(lineage(result, best.version).length).toBeGreaterThanOrEqual(3);
    expect(result.roundsCompleted).toBe(3);
    // A harmful edit was proposed and did not survive.
    expect(result.candidates.some((c) => c.template.includes('prefer the largest room'))).toBe(true);
    expect(result.bestPrompt).not.toContain('prefer the largest room');
  });

  it('keeps every candidate as a resources version with its scores in the store', async () => {
    const stored = await loadApoCandidates({ store, runId: 'apo', resourceName: 'system_prompt' });
    expect(stored.map((c) => c.version)).toEqual(
      result.candidates.map((c) => c.version).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))),
    );
    for (const c of result.candidates) {
      const s = stored.find((x) => x.version === c.version)!;
      expect(s.template).toBe(c.template);
      expect(Object.keys(s.scores).length, c.version).toBeGreaterThan(0);
      for (const score of c.scores)
        expect(s.scores[score.key]?.score, `${c.version} ${score.key}`).toBeCloseTo(score.score, 10);
    }
    const rollouts = (await store.queryRollouts({ limit: -1 })).items;
    expect(rollouts.every((r) => r.resourcesId?.startsWith('apo-v'))).toBe(true);
    const best = await store.getResourcesById('apo-best');
    expect(best?.resources.system_prompt).toMatchObject({ template: result.bestPrompt });
    expect((await store.getLatestResources())?.resourcesId).toBe('apo-best');
  });

  it('saves the best prompt and the report', async () => {
    expect(await readFile(join(suite.dir, 'best-prompt.txt'), 'utf8')).toBe(`${result.bestPrompt}\n`);
    const report = JSON.parse(await readFile(join(suite.dir, 'best-prompt.txt.json'), 'utf8')) as ApoResult;
    expect(report.bestVersion).toBe(result.bestVersion);
  });

  it('is deterministic under a seed, and a rerun on the same store resumes with no new rollouts and no repeated edits', async () => {
    const again = (await runApo({ store: new MemoryStore(), baseURL: suite.llm.baseURL })).result!;
    expect(again.candidates.map((c) => [c.version, c.template])).toEqual(
      result.candidates.map((c) => [c.version, c.template]),
    );
    expect(again.bestVersion).toBe(result.bestVersion);
    const before = (await store.queryRollouts({ limit: 0 })).total;
    const resumed = (await runApo({ store, baseURL: suite.llm.baseURL })).result!;
    expect((await store.queryRollouts({ limit: 0 })).total).toBe(before);
    // Candidates already in the store are not re-derived, so their parents' train batches are not even re-read.
    expect(resumed.reusedRollouts).toBeGreaterThan(0);
    expect(resumed.reusedRollouts).toBeLessThanOrEqual(before);
    // Only the edits that failed the first time (nothing stored for them) ask the critique model again.
    expect(resumed.usage.calls).toBe(failedEdits);
    expect(resumed.usage.calls).toBeLessThan(result.usage.calls / 4);
    expect(resumed.bestPrompt).toBe(result.bestPrompt);
  });

  it('resumes after an interruption mid-run and ends where an uninterrupted run ends', async () => {
    const crashed = new MemoryStore();
    const stop = new AbortController();
    await runApo({
      store: crashed,
      baseURL: suite.llm.baseURL,
      signal: stop.signal,
      onEvent: (e) => e.type === 'round' && e.round === 1 && stop.abort(),
    }).catch(() => undefined);
    const partial = (await crashed.queryRollouts({ limit: 0 })).total;
    expect(partial).toBeGreaterThan(0);
    const resumed = (await runApo({ store: crashed, baseURL: suite.llm.baseURL })).result!;
    expect(resumed.reusedRollouts).toBeGreaterThan(0);
    expect(resumed.bestPrompt).toBe(result.bestPrompt);
    expect(resumed.candidates.map((c) => c.template)).toEqual(result.candidates.map((c) => c.template));
  });
});

describe('APO options', () => {
  it('refuses to resume a run id whose stored seed prompt differs, and validates sizes', async () => {
    const store = new MemoryStore();
    await store.updateResources('apo-v0', {
      system_prompt: { resourceType: 'prompt_template', template: 'another seed' },
    });
    await expect(runApo({ store, baseURL: suite.llm.baseURL, beamRounds: 1 })).rejects.toThrow(
      /different seed prompt.*new runId/u,
    );
    await expect(runApo({ store, baseURL: suite.llm.baseURL, beamWidth: 0 })).rejects.toThrow(
      /beamWidth must be an integer ≥ 1; got 0/u,
    );
  });
});

describe('APO budget', () => {
  it('stops when the LLM token budget is spent and still reports (and publishes) the best prompt so far', async () => {
    const store = new MemoryStore();
    const events: string[] = [];
    const result = (
      await runApo({
        store,
        baseURL: suite.llm.baseURL,
        runId: 'budget',
        llm: { baseURL: suite.llm.baseURL, maxTotalTokens: 400 },
        onEvent: (e) => void events.push(e.type),
      })
    ).result!;
    expect(result.budgetExhausted).toBe(true);
    expect(events).toContain('budget-exhausted');
    expect(result.roundsCompleted).toBeLessThan(3);
    expect(result.usage.promptTokens + result.usage.completionTokens).toBeGreaterThanOrEqual(400);
    expect((await store.getResourcesById('budget-best'))?.resources.system_prompt).toMatchObject({
      template: result.bestPrompt,
    });
  });
});

describe('APO reflective (GEPA-style) search', () => {
  it('beats the seed with per-task reflections and minibatch acceptance', async () => {
    const store = new MemoryStore();
    const result = (await runApo({ store, baseURL: suite.llm.baseURL, apoStrategy: 'reflective', runId: 'gepa' }))
      .result!;
    expect(result.strategy).toBe('reflective');
    expect(result.bestScore).toBeGreaterThan(result.seedScore! + 0.2);
    expect(result.rejectedWorseChildren.length).toBeGreaterThan(0);
    const stored = await loadApoCandidates({ store, runId: 'gepa' });
    expect(stored.length).toBe(result.candidates.length);
    const reflections = suite.llm.requests.filter((r) => JSON.stringify(r.body).includes('Reflect on this single run'));
    expect(reflections.length).toBeGreaterThan(0);
  });

  it('merges two complementary Pareto candidates into the winner when single edits each fix a different failure', async () => {
    // A critic that names only one problem per failure and one-task minibatches make siblings learn different fixes.
    const narrow = await startOpenAiTestServer({
      respond: (request) => {
        const reply = ruleLlm(request);
        if (request.model === 'critic-model' && reply.content)
          reply.content = reply.content.split('\n').slice(-1).join('\n');
        return reply;
      },
    });
    try {
      const result = (
        await runApo({
          store: new MemoryStore(),
          baseURL: narrow.baseURL,
          apoStrategy: 'reflective',
          runId: 'merge',
          seed: 4,
          gradientBatchSize: 1,
        })
      ).result!;
      const best = result.candidates.find((c) => c.version === result.bestVersion)!;
      expect(best.origin).toBe('merge');
      const a = result.candidates.find((c) => c.version === best.parent)!;
      const b = result.candidates.find((c) => c.version === best.mergedWith)!;
      for (const line of [...a.template.split('\n'), ...b.template.split('\n')]) expect(best.template).toContain(line);
      const [scoreA, scoreB] = [a, b].map((c) =>
        Math.max(...c.scores.filter((s) => s.key.endsWith('/full')).map((s) => s.score)),
      );
      expect(result.bestScore).toBeGreaterThan(Math.max(scoreA!, scoreB!));
    } finally {
      await narrow.close();
    }
  });
});

describe('APO on an untraced agent', () => {
  it('warns once per round that the rollouts hold no LLM span, naming the preload that traces the agent', async () => {
    const events: Extract<ApoEvent, { type: 'untraced' }>[] = [];
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }): void =>
      void (w.code === 'AGL_APO_UNTRACED' && warnings.push(w.message));
    process.on('warning', onWarning);
    try {
      await new Trainer({
        algorithm: new APO({
          llm: { baseURL: suite.llm.baseURL, retryBaseDelayMs: 1 },
          beamWidth: 1,
          branchFactor: 2,
          beamRounds: 2,
          gradientBatchSize: 2,
          valBatchSize: 2,
          onEvent: (e) => void (e.type === 'untraced' && events.push(e)),
        }),
        store: new MemoryStore(),
        nRunners: 2,
        pollIntervalSeconds: 0.01,
        quiet: true,
        initialResources: { system_prompt: { resourceType: 'prompt_template', template: SEED_PROMPT } },
      }).fit(async () => 0.5, { train: TRAIN.slice(0, 4), val: VAL.slice(0, 2) });
      await vi.waitFor(() => expect(warnings).toHaveLength(3));
    } finally {
      process.off('warning', onWarning);
    }
    expect(events.map((e) => e.round)).toEqual([0, 1, 2]);
    expect(warnings[1]).toMatch(/^APO round 1: none of the \d+ rollouts it evaluated holds an LLM span/u);
    expect(warnings[1]).toContain('--import @agl/openai/register');
  });
});
