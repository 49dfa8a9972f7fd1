import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFeedback, recordRewardSpan, type LightningStore } from '@agl/core/store';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import { SqliteStore } from '@agl/store/sqlite';
import { readJsonl } from '@agl/trainer/export';
import { runCli } from '../program';
import type { CliIo } from './output';

// One task, two rollouts, each a single Contract 2 LLM call with token ids and a reward span:
//   good: prompt [1, 2] → response [3], reward 1;   bad: prompt [1, 2] → response [4], reward 0.
async function seed(store: LightningStore, response: number, answer: string, reward: number): Promise<string> {
  const r = await store.startRollout({ input: { q: '1+1' }, mode: 'train', metadata: { task_id: 'sum' } });
  const base = { rolloutId: r.rolloutId, attemptId: r.attempt.attemptId, traceId: 't' };
  await store.addSpan({
    ...base,
    sequenceId: await store.getNextSpanSequenceId(r.rolloutId, r.attempt.attemptId),
    spanId: 'llm',
    parentId: null,
    name: 'openai.chat.completion',
    startTime: 10,
    endTime: 11,
    attributes: {
      'gen_ai.response.id': `${r.rolloutId}-1`,
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': '1+1?',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': answer,
      prompt_token_ids: [1, 2],
      response_token_ids: [response],
    },
  });
  await store.addSpan({
    ...base,
    sequenceId: await store.getNextSpanSequenceId(r.rolloutId, r.attempt.attemptId),
    spanId: 'reward',
    parentId: null,
    name: 'agentlightning.annotation',
    startTime: 12,
    endTime: 12,
    attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': reward },
  });
  await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
  return r.rolloutId;
}

function capture(): CliIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => void lines.push(l), err: (l) => void errors.push(l) };
}

let dir: string;
let storePath: string;
let server: StoreServer;
let serverStore: SqliteStore;

beforeAll(async () => {
  delete process.env.AGL_STORE_URL;
  dir = await mkdtemp(join(tmpdir(), 'agl-cli-export-'));
  storePath = join(dir, 'store.sqlite');
  const store = new SqliteStore({ path: storePath });
  await seed(store, 3, '2', 1);
  await seed(store, 4, '3', 0);
  await store.close();
  serverStore = new SqliteStore({ path: join(dir, 'served.sqlite') });
  await seed(serverStore, 3, '2', 1);
  await seed(serverStore, 4, '3', 0);
  server = await createStoreServer({ store: serverStore, port: 0, token: 'secret' });
});
afterAll(async () => {
  await server.close();
  await serverStore.close();
  await rm(dir, { recursive: true, force: true });
});

describe('agl export verl|sft|dpo', () => {
  it('exports verl rows from an embedded SQLite store file', async () => {
    const io = capture();
    const out = join(dir, 'verl');
    const code = await runCli(
      ['node', 'agl', 'export', 'verl', '--out', out, '--store', storePath, '--mode', 'train'],
      io,
    );
    expect(io.errors).toEqual([]);
    expect(code).toBe(0);
    expect(io.lines[0]).toBe(`wrote 2 rows to ${join(out, 'verl.jsonl')}, ${join(out, 'verl.parquet')}`);
    const rows = (await readJsonl(join(out, 'verl.jsonl'))) as Array<Record<string, unknown>>;
    // GRPO over [1, 0]: ±0.5/(0.7071068 + 1e-6) = ±0.7071058
    expect(rows.map((r) => [r.data_id, r.responses, r.response_mask, r.advantage])).toEqual([
      ['sum', [3], [1], expect.closeTo(0.7071058, 6)],
      ['sum', [4], [1], expect.closeTo(-0.7071058, 6)],
    ]);
  });

  it('exports from a store server with --store-url and --token (StoreClient)', async () => {
    const io = capture();
    const out = join(dir, 'remote');
    const args = ['export', 'verl', '--out', out, '--store-url', server.url, '--token', 'secret', '--format', 'jsonl'];
    const code = await runCli(['node', 'agl', ...args, '--estimator', 'rloo', '--json'], io);
    expect(io.errors).toEqual([]);
    expect(code).toBe(0);
    const summary = JSON.parse(io.lines.join('\n')) as {
      files: { rows: number; parquet?: string };
      stats: { nSamples: number };
    };
    expect(summary.files.rows).toBe(2);
    expect(summary.files.parquet).toBeUndefined();
    const rows = (await readJsonl(join(out, 'verl.jsonl'))) as Array<Record<string, unknown>>;
    // RLOO over [1, 0]: 1 − 0 = 1, 0 − 1 = −1
    expect(rows.map((r) => r.advantage)).toEqual([1, -1]);
  });

  it('exports SFT and DPO JSONL', async () => {
    const io = capture();
    const sft = join(dir, 'sft.jsonl');
    const dpo = join(dir, 'dpo.jsonl');
    expect(
      await runCli(['node', 'agl', 'export', 'sft', '--out', sft, '--store', storePath, '--min-reward', '1'], io),
    ).toBe(0);
    expect(await runCli(['node', 'agl', 'export', 'dpo', '--out', dpo, '--store', storePath], io)).toBe(0);
    expect(await readJsonl(sft)).toEqual([
      {
        messages: [
          { role: 'user', content: '1+1?' },
          { role: 'assistant', content: '2' },
        ],
      },
    ]);
    expect(await readJsonl(dpo)).toEqual([
      {
        input: { messages: [{ role: 'user', content: '1+1?' }] },
        preferred_output: [{ role: 'assistant', content: '2' }],
        non_preferred_output: [{ role: 'assistant', content: '3' }],
      },
    ]);
    expect(io.lines).toContain(`wrote 1 preference pairs to ${dpo}`);
  });

  it('names the flag and the fix on bad input, and refuses an empty export', async () => {
    const io = capture();
    const out = join(dir, 'bad');
    expect(
      await runCli(['node', 'agl', 'export', 'verl', '--out', out, '--store', storePath, '--mode', 'training'], io),
    ).toBe(1);
    expect(io.errors.at(-1)).toMatch(/--mode got "training"; use one or more of train, val, test/);
    expect(
      await runCli(['node', 'agl', 'export', 'verl', '--out', out, '--store', storePath, '--discount', '2'], io),
    ).toBe(1);
    expect(io.errors.at(-1)).toMatch(/--discount got "2"; pass a number ≥ 0 and ≤ 1/);
    expect(
      await runCli(['node', 'agl', 'export', 'verl', '--out', out, '--store', storePath, '--mode', 'val'], io),
    ).toBe(1);
    expect(io.errors.at(-1)).toMatch(/no training samples/);
  });
});

describe('exports and rollout lists use the final-reward precedence (feedback > agent > judge)', () => {
  it('a rollout with feedback is exported with the feedback reward, even when a judge scored it later', async () => {
    const path = join(dir, 'feedback.sqlite');
    const store = new SqliteStore({ path });
    const good = await seed(store, 3, '2', 1);
    const bad = await seed(store, 4, '3', 0);
    // Users disagree with the agent: thumbs-down on "2", thumbs-up on "3"; a judge's later 1 on "2" does not win.
    await recordFeedback(store, good, 0);
    await recordFeedback(store, bad, 1);
    await recordRewardSpan(store, good, {
      'agentlightning.reward.0.name': 'primary',
      'agentlightning.reward.0.value': 1,
      'agl.reward.source': 'judge',
    });
    await store.close();
    const io = capture();
    const sft = join(dir, 'feedback-sft.jsonl');
    const dpo = join(dir, 'feedback-dpo.jsonl');
    const transitions = join(dir, 'feedback-transitions.jsonl');
    expect(await runCli(['node', 'agl', 'export', 'sft', '--out', sft, '--store', path, '--min-reward', '1'], io)).toBe(
      0,
    );
    expect(await runCli(['node', 'agl', 'export', 'dpo', '--out', dpo, '--store', path], io)).toBe(0);
    expect(await runCli(['node', 'agl', 'export', 'transitions', '--out', transitions, '--store', path], io)).toBe(0);
    const out = join(dir, 'feedback-verl');
    expect(
      await runCli(['node', 'agl', 'export', 'verl', '--out', out, '--store', path, '--format', 'jsonl'], io),
    ).toBe(0);
    expect(io.errors).toEqual([]);
    expect(
      ((await readJsonl(sft)) as Array<{ messages: Array<{ content: string }> }>).map((r) => r.messages[1]!.content),
    ).toEqual(['3']);
    expect(await readJsonl(dpo)).toMatchObject([
      { preferred_output: [{ content: '3' }], non_preferred_output: [{ content: '2' }] },
    ]);
    expect(((await readJsonl(transitions)) as Array<{ final_reward: number }>).map((r) => r.final_reward)).toEqual([
      0, 1,
    ]);
    const rows = (await readJsonl(join(out, 'verl.jsonl'))) as Array<{ responses: number[]; advantage: number }>;
    expect(rows.map((r) => [r.responses, Math.sign(r.advantage)])).toEqual([
      [[3], -1],
      [[4], 1],
    ]);
    const listed = capture();
    expect(await runCli(['node', 'agl', 'rollouts', 'list', '--store', path], listed)).toBe(0);
    const tableRow = (rolloutId: string) =>
      listed.lines
        .join('\n')
        .split('\n')
        .find((l) => l.startsWith(rolloutId));
    expect(tableRow(good)).toMatch(/succeeded\s+train\s+0\s/);
    expect(tableRow(bad)).toMatch(/succeeded\s+train\s+1\s/);
  });
});
