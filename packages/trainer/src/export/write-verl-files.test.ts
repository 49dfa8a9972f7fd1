import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTrainingSamples } from '@agl/core/algorithms';
import { UserError } from '@agl/core/errors';
import type { Trajectory, Transition } from '@agl/core/schema';
import { readParquetRows } from './__fixtures__/parquet-reader';
import { readJsonl } from './jsonl';
import { VERL_COLUMNS } from './verl-rows';
import { writeVerlFiles } from './write-verl-files';

function call(prompt: number[], response: number[], logprobs?: number[]): Transition {
  return {
    agentName: 'solver',
    state: { messages: [{ role: 'user', content: 'q' }], tokenIds: prompt },
    action: {
      message: { role: 'assistant', content: 'a' },
      tokenIds: response,
      ...(logprobs ? { logprobs: logprobs.map((logprob) => ({ token: 'x', logprob })) } : {}),
    },
    reward: null,
    done: false,
    spanIds: [],
  };
}
function traj(rolloutId: string, taskId: string, finalReward: number, transitions: Transition[]): Trajectory {
  return { rolloutId, attemptId: `at-${rolloutId}`, taskId, mode: 'train', transitions, finalReward };
}

// Task T: r1 (reward 1) merges two calls; r2 (reward 0) breaks the prefix and gives two rows.
// Token ids above 2^31 check that int64 survives.
const BIG = 3_000_000_000;
const trajectories = [
  traj('r1', 'T', 1, [call([1, 2], [3], [-0.5]), call([1, 2, 3, 4], [BIG], [-0.25])]),
  traj('r2', 'T', 0, [call([1, 2], [7]), call([9], [8])]),
];
// Rollout-level GRPO over [1, 0]: mean 0.5, std √0.5 = 0.7071068 → r1: 0.5/0.7071078 = 0.7071058, r2: −0.7071058
const A = 0.5 / (Math.SQRT1_2 + 1e-6);
const expected = [
  {
    data_id: 'T',
    rollout_id: 'r1',
    prompts: [1, 2],
    responses: [3, 4, BIG],
    response_mask: [1, 0, 1],
    input_ids: [1, 2, 3, 4, BIG],
    position_ids: [0, 1, 2, 3, 4],
    attention_mask: [1, 1, 1, 1, 1],
    token_level_scores: [0, 0, 1],
    advantages: [A, 0, A],
    rollout_log_probs: [-0.5, 0, -0.25],
    reward: 1,
    advantage: A,
    turn_indices: [0, 1],
  },
  {
    data_id: 'T',
    rollout_id: 'r2',
    prompts: [1, 2],
    responses: [7],
    response_mask: [1],
    input_ids: [1, 2, 7],
    position_ids: [0, 1, 2],
    attention_mask: [1, 1, 1],
    token_level_scores: [0],
    advantages: [-A],
    rollout_log_probs: null,
    reward: 0,
    advantage: -A,
    turn_indices: [0],
  },
  {
    data_id: 'T',
    rollout_id: 'r2',
    prompts: [9],
    responses: [8],
    response_mask: [1],
    input_ids: [9, 8],
    position_ids: [0, 1],
    attention_mask: [1, 1],
    token_level_scores: [0],
    advantages: [-A],
    rollout_log_probs: null,
    reward: 0,
    advantage: -A,
    turn_indices: [1],
  },
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-verl-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('writeVerlFiles', () => {
  it('writes JSONL and Parquet rows that read back equal to the trajectories', async () => {
    const { samples } = buildTrainingSamples({ trajectories });
    const files = await writeVerlFiles({ samples, outDir: join(dir, 'out') });
    expect(files.rows).toBe(3);

    const jsonl = (await readJsonl(files.jsonl!)) as Record<string, unknown>[];
    const parquet = await readParquetRows(files.parquet!);
    expect(parquet.rows).toHaveLength(3);
    expect(Object.keys(parquet.types)).toEqual([...VERL_COLUMNS]);
    expect(parquet.types).toMatchObject({
      prompts: 'List<Int64>',
      response_mask: 'List<Int32>',
      advantages: 'List<Float64>',
      data_id: 'Utf8',
      reward: 'Float64',
    });
    for (const [i, want] of expected.entries()) {
      for (const source of [jsonl[i]!, parquet.rows[i]!]) {
        expect(source).toMatchObject({
          ...want,
          advantages: want.advantages.map((v) => expect.closeTo(v, 12)),
          advantage: expect.closeTo(want.advantage, 12),
        });
        expect(source.uid).toBe('T');
        expect(source.attempt_id).toBe(`at-${want.rollout_id}`);
        expect(source.mode).toBe('train');
        expect(source.agent_name).toBe('solver');
      }
    }
  });

  it('writes only the formats asked for, under a custom name', async () => {
    const { samples } = buildTrainingSamples({ trajectories });
    const files = await writeVerlFiles({ samples, outDir: dir, name: 'step-3', formats: ['parquet'] });
    expect(files.jsonl).toBeUndefined();
    expect(files.parquet).toBe(join(dir, 'step-3.parquet'));
  });

  it('refuses an empty export with a message that names the likely cause', async () => {
    await expect(writeVerlFiles({ samples: [], outDir: dir })).rejects.toThrow(UserError);
    await expect(writeVerlFiles({ samples: [], outDir: dir })).rejects.toThrow(/token ids/);
  });
});
