import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { addToolLoopWire } from './__fixtures__/add-tool-wire';
import { readParquetRows } from './__fixtures__/parquet-reader';
import { seedRollout } from './__fixtures__/seed-store';
import { exportDpo, exportSft } from './export-fine-tuning';
import { exportVerl } from './export-verl';
import { readJsonl } from './jsonl';
import { loadTrajectories } from './load-trajectories';

// Every seeded rollout: agent span → LLM call 1 (prompt [101,102,103] → tool call [201,202], logprobs −0.5, −0.25)
// → tool span → LLM call 2 (prompt [101,102,103,201,202,301] → answer token, logprob −0.125) → reward span.
// A "drift" rollout's second prompt is [101,999,201,202,301], which does not continue call 1.
let dir: string;
let store: SqliteStore;
let rs1: string;
let rs2: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-export-'));
  store = new SqliteStore({ path: join(dir, 'store.sqlite') });
  const llm = (model: string) => ({
    main_llm: { resourceType: 'llm' as const, endpoint: 'http://127.0.0.1:9/v1', model },
  });
  rs1 = (await store.addResources(llm('policy-v1'))).resourcesId;
  const seeds: Record<string, Parameters<typeof seedRollout>[1]> = {
    a1: { taskId: 'A', mode: 'train', answer: '5', answerToken: 401, reward: 1 },
    a2: { taskId: 'A', mode: 'train', answer: '6', answerToken: 402, reward: 0, drift: true },
    b1: { taskId: 'B', mode: 'train', answer: '5', answerToken: 403, reward: 0.5 },
    b2: { taskId: 'B', mode: 'train', answer: '5', answerToken: 404, reward: 0.5 },
    val: { taskId: 'A', mode: 'val', answer: '5', answerToken: 405, reward: 1 },
    judge: { taskId: 'C', mode: 'train', answer: '5', answerToken: 406, reward: 1, agent: 'judge' },
  };
  for (const [name, spec] of Object.entries(seeds)) ids[name] = await seedRollout(store, spec);
  rs2 = (await store.addResources(llm('policy-v2'))).resourcesId;
  ids.newer = await seedRollout(store, { taskId: 'A', mode: 'train', answer: '5', answerToken: 407, reward: 1 });
});
afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('loadTrajectories', () => {
  it('filters by mode, resources version and agent, and reads task ids from metadata', async () => {
    const all = await loadTrajectories({ store });
    expect(all.trajectories.map((t) => t.rolloutId)).toEqual([
      ids.a1,
      ids.a2,
      ids.b1,
      ids.b2,
      ids.val,
      ids.judge,
      ids.newer,
    ]);
    const train = await loadTrajectories({
      store,
      filter: { modeIn: ['train'], resourcesIdIn: [rs1], agentMatch: /^calc$/ },
    });
    expect(train.nRollouts).toBe(5);
    expect(train.resourcesIdIn).toEqual([rs1]);
    expect(train.trajectories.map((t) => [t.taskId, t.transitions.length, t.finalReward])).toEqual([
      ['A', 2, 1],
      ['A', 2, 0],
      ['B', 2, 0.5],
      ['B', 2, 0.5],
      ['C', 0, 1], // the judge's calls are filtered out by agentMatch
    ]);
    const latest = await loadTrajectories({ store, filter: { resourcesIdIn: ['latest'] } });
    expect(latest.resourcesIdIn).toEqual([rs2]);
    expect(latest.trajectories.map((t) => t.rolloutId)).toEqual([ids.newer]);
  });
});

describe('exportVerl from a SQLite store', () => {
  it('writes rows whose tokens, masks and advantages match the stored trajectories', async () => {
    const out = join(dir, 'verl');
    const result = await exportVerl({
      store,
      outDir: out,
      filter: { modeIn: ['train'], resourcesIdIn: [rs1], agentMatch: /^calc$/ },
    });
    // A: rollouts [1, 0] → ±0.5/(0.7071068 + 1e-6) = ±0.7071058; B: [0.5, 0.5] → 0
    const adv = 0.5 / (Math.SQRT1_2 + 1e-6);
    // A row whose two calls merge: call 1's prompt; call 1's answer, the tool result (masked) and the answer token.
    const mergedRow = (dataId: string, rolloutId: string, answerToken: number, advantage: number, reward: number) => ({
      data_id: dataId,
      rollout_id: rolloutId,
      prompts: [101, 102, 103],
      responses: [201, 202, 301, answerToken],
      response_mask: [1, 1, 0, 1],
      rollout_log_probs: [-0.5, -0.25, 0, -0.125],
      advantage,
      reward,
    });
    const expected = [
      mergedRow('A', ids.a1!, 401, adv, 1),
      {
        data_id: 'A',
        rollout_id: ids.a2,
        prompts: [101, 102, 103],
        responses: [201, 202],
        response_mask: [1, 1],
        rollout_log_probs: [-0.5, -0.25],
        advantage: -adv,
        reward: 0,
      },
      {
        data_id: 'A',
        rollout_id: ids.a2,
        prompts: [101, 999, 201, 202, 301],
        responses: [402],
        response_mask: [1],
        rollout_log_probs: [-0.125],
        advantage: -adv,
        reward: 0,
      },
      mergedRow('B', ids.b1!, 403, 0, 0.5),
      mergedRow('B', ids.b2!, 404, 0, 0.5),
    ];
    const jsonl = (await readJsonl(result.files.jsonl!)) as Array<Record<string, unknown>>;
    const parquet = (await readParquetRows(result.files.parquet!)).rows;
    for (const rows of [jsonl, parquet]) {
      expect(rows).toHaveLength(expected.length);
      expected.forEach((want, i) => {
        const row = rows[i]!;
        expect(row).toMatchObject({ ...want, advantage: expect.closeTo(want.advantage, 9) });
        expect(row.advantages).toEqual(want.response_mask.map((m) => expect.closeTo(m * want.advantage, 9)));
        expect(row.token_level_scores).toEqual(
          want.responses.map((_, j) => (j === want.responses.length - 1 ? want.reward : 0)),
        );
        expect(row.input_ids).toEqual([...want.prompts, ...want.responses]);
      });
    }
    expect(result.stats).toMatchObject({ nTrajectories: 5, nSamples: 5, nMismatches: 1, nUnmergedTrajectories: 1 });
    const info = JSON.parse(await readFile(result.infoPath, 'utf8')) as Record<string, unknown>;
    expect(info).toMatchObject({
      format: 'agl-verl-export/1',
      nRollouts: 5,
      filter: { resourcesIdIn: [rs1], agentMatch: '/^calc$/' },
    });
  });
});

describe('exportSft / exportDpo from a SQLite store', () => {
  it('writes the rewarded conversation with its tools as OpenAI chat fine-tuning JSONL', async () => {
    const out = join(dir, 'sft.jsonl');
    const { stats } = await exportSft({
      store,
      out,
      filter: { modeIn: ['train'], resourcesIdIn: [rs1] },
      minReward: 1,
    });
    const lines = await readJsonl(out);
    // a1 (reward 1) and the judge rollout (reward 1); a2, b1, b2 are below 1
    expect(stats).toEqual({ nTrajectories: 5, nFilteredOut: 3, nRecords: 2 });
    expect(lines[0]).toEqual({
      messages: addToolLoopWire('Use the add tool.', 'task A'),
      tools: [
        {
          type: 'function',
          function: {
            name: 'add',
            description: 'Add two numbers',
            parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
          },
        },
      ],
    });
  });

  it('pairs the best and worst answers of each task as OpenAI preference JSONL', async () => {
    const out = join(dir, 'dpo.jsonl');
    const { stats } = await exportDpo({ store, out, filter: { modeIn: ['train'], resourcesIdIn: [rs1] } });
    const lines = (await readJsonl(out)) as Array<Record<string, unknown>>;
    // A: best a1 ("5", reward 1) vs worst a2 ("6", reward 0), diverging at the second call; B: a tie; C: one rollout
    expect(stats).toEqual({
      nTasks: 3,
      nPairs: 1,
      nTooFewRewarded: 1,
      nNoRewardGap: 1,
      nNoSharedPrompt: 0,
      nIdentical: 0,
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.preferred_output).toEqual([{ role: 'assistant', content: '5' }]);
    expect(lines[0]!.non_preferred_output).toEqual([{ role: 'assistant', content: '6' }]);
    expect((lines[0]!.input as { messages: unknown[] }).messages).toHaveLength(4);
  });
});
