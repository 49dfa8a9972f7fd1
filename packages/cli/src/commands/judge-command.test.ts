import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { PostgresStore } from '@agl/store/postgres';
import { SqliteStore } from '@agl/store/sqlite';
import { judgeRuleLlm, seedRecorded, startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { cli } from './__fixtures__/run-cli';

const ANSWERS = ['Sorry, a refund is on its way.', 'Sorry for that.', 'No.', 'A refund was sent.'];

describe('agl judge against a scripted judge model over HTTP', () => {
  let llm: OpenAiTestServer;
  let dir: string;
  let rubric: string;
  const calls = (): number => llm.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

  beforeAll(async () => {
    llm = await startOpenAiTestServer({ respond: judgeRuleLlm(), apiKey: 'sk-judge' });
    dir = mkdtempSync(join(tmpdir(), 'agl-judge-cli-'));
    rubric = join(dir, 'rubric.md');
    writeFileSync(rubric, '# Support replies\nApologise and offer a refund.\n- must: sorry\n- must: refund\n');
    vi.stubEnv('OPENAI_BASE_URL', llm.baseURL);
    vi.stubEnv('OPENAI_API_KEY', 'sk-judge');
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => void llm.requests.splice(0));

  const judge = (db: string, model: string, ...more: string[]) =>
    cli('judge', '--store', db, '--rubric', rubric, '--model', model, ...more);

  async function seeded(name: string, feedback?: number[]): Promise<string> {
    const db = join(dir, `${name}.sqlite`);
    const store = new SqliteStore({ path: db });
    for (const [i, answer] of ANSWERS.entries()) {
      await seedRecorded(store, {
        input: { q: i },
        metadata: { source: 'production', task_id: 'late-parcel' },
        conversation: { user: 'my parcel is late', answer },
        ...(feedback ? { feedback: [feedback[i]!] } : {}),
      });
    }
    await seedRecorded(store, { input: { q: 'x' }, conversation: { user: 'hi', answer: 'hello' }, reward: 1 });
    await store.close();
    return db;
  }

  it('writes judge reward spans with the key from OPENAI_API_KEY; a re-run makes 0 calls', async () => {
    const db = await seeded('rubric');
    const cache = join(dir, 'cache.jsonl');
    const args = ['--only-unrewarded', '--cache', cache];
    const run = await judge(db, 'judge-model', ...args, '--since', '1h', '--concurrency', '2');
    expect(run.err).toBe('');
    expect(run.out).toMatch(
      /^judged 4 rollouts \(0 from the cache\) of 5; skipped 0 already judged, 1 with a reward\n4 judge calls, \d+ tokens, \$0\.0000$/u,
    );
    expect(calls()).toBe(4);
    expect(llm.requests[0]?.headers.authorization).toBe('Bearer sk-judge');
    const store = new SqliteStore({ path: db });
    const judged = [];
    for (const r of (await store.queryRollouts({ sortBy: 'startTime' })).items) {
      const spans = (await store.querySpans({ rolloutId: r.rolloutId })).items;
      judged.push(
        spans.find((s) => s.attributes['agl.reward.source'] === 'judge')?.attributes['agentlightning.reward.0.value'] ??
          null,
      );
    }
    await store.close();
    expect(judged).toEqual([1, 0.5, 0, 0.5, null]);
    llm.requests.splice(0);
    const again = await judge(db, 'judge-model', ...args, '--json');
    expect(JSON.parse(again.out)).toMatchObject({ judged: 0, alreadyJudged: 4, rewarded: 1, failures: [] });
    expect(calls()).toBe(0);
  });

  it('--group-by task judges the task group in one call; --base-url wins over OPENAI_BASE_URL', async () => {
    const db = await seeded('group');
    process.env.OPENAI_BASE_URL = 'http://127.0.0.1:9/v1';
    try {
      const run = await judge(
        db,
        'judge-model',
        '--group-by',
        'task',
        '--base-url',
        llm.baseURL,
        '--no-cache',
        '--json',
      );
      expect(run.err).toBe('');
      expect(JSON.parse(run.out)).toMatchObject({ judged: 5, usage: { calls: 2 } });
    } finally {
      process.env.OPENAI_BASE_URL = llm.baseURL;
    }
  });

  it('stops cleanly with a message when the token budget is spent', async () => {
    const db = await seeded('budget');
    const run = await judge(db, 'judge-model', '--no-cache', '--max-tokens', '10', '--concurrency', '1');
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^judged 1 rollouts/u);
    expect(run.err).toMatch(
      /agl judge stopped: LLM token budget spent: \d+ of maxTotalTokens=10\. Raise maxTotalTokens to continue\. 4 rollouts were not judged\./u,
    );
    expect(calls()).toBe(1);
  });

  it('counts malformed answers as failures, never as rewards', async () => {
    const db = await seeded('broken');
    const run = await judge(db, 'broken-judge', '--no-cache', '--json');
    const report = JSON.parse(run.out) as { judged: number; failures: unknown[] };
    expect(report.judged).toBe(0);
    expect(report.failures).toHaveLength(5);
    expect(calls()).toBe(15);
  });

  it('--agreement reports Spearman rho and accuracy against user feedback', async () => {
    const db = await seeded('agreement', [0.9, 0.6, 0.2, 0.1]);
    expect((await cli('judge', '--store', db, '--agreement')).out).toBe(
      'no rollout has both a judge score and user feedback yet',
    );
    await judge(db, 'judge-model', '--no-cache');
    // Judge 1, 0.5, 0, 0.5 vs feedback 0.9, 0.6, 0.2, 0.1: ranks 4, 2.5, 1, 2.5 vs 4, 3, 2, 1 -> rho = 3 / sqrt(4.5 · 5).
    const text = await cli('judge', '--store', db, '--agreement', '--rubric', rubric, '--model', 'judge-model');
    expect(text.out).toBe(
      '4 rollouts with a judge score and feedback: Spearman rho 0.632, accuracy 75.0% at threshold 0.5',
    );
    const json = JSON.parse(
      (await cli('judge', '--store', db, '--agreement', '--threshold', '0.15', '--json')).out,
    ) as Record<string, number>;
    expect(json.pairs).toBe(4);
    expect(json.rho).toBeCloseTo(3 / Math.sqrt(22.5), 12);
    expect(json.accuracy).toBe(0.5);
  });

  it.skipIf(!process.env.AGL_TEST_PG_URL)('judges and builds a task set on a PostgreSQL store', async () => {
    const schema = `agl_judge_${process.pid}_${Date.now()}`;
    const url = `${process.env.AGL_TEST_PG_URL}?schema=${schema}`;
    const store = await PostgresStore.open({ connectionString: url, poolSize: 2 });
    try {
      for (const [i, answer] of ANSWERS.entries())
        await seedRecorded(store, { input: { q: i }, conversation: { user: 'late', answer }, feedback: [i / 4] });
      const run = await judge(url, 'judge-model', '--no-cache', '--json');
      expect(JSON.parse(run.out)).toMatchObject({ judged: 4, failures: [] });
      const agreement = JSON.parse((await cli('judge', '--store', url, '--agreement', '--json')).out) as {
        pairs: number;
      };
      expect(agreement.pairs).toBe(4);
      const out = join(dir, 'pg.jsonl');
      expect((await cli('dataset', 'build', '--store', url, '--out', out, '--json')).out).toContain('"train":4');
    } finally {
      await store.close();
      const client = new pg.Client({ connectionString: process.env.AGL_TEST_PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });

  it('names missing flags and the fix', async () => {
    expect((await cli('judge', '--model', 'm')).err).toMatch(/needs --rubric <file.md> and --model <model>/u);
    expect((await cli('judge', '--rubric', join(dir, 'none.md'), '--model', 'm')).err).toMatch(
      /Cannot read the rubric .*none\.md/u,
    );
    expect((await cli('judge', '--rubric', rubric, '--model', 'm', '--budget', '1')).err).toMatch(
      /--budget needs --price/u,
    );
  });
});
