import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TraceToTransitions } from '@agl/core/transitions';
import type { NamedResources } from '@agl/core';
import { SqliteStore } from '@agl/store/sqlite';
import { startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCompanyDatabase, ROW_COUNTS } from './company-database';
import { executionMatch, runQuery } from './execution-match';
import { extractSql, runSqlTask } from './sql-agent';
import { SQL_QUESTIONS, splitQuestions } from './sql-questions';
import { SQL_ADVICE, sqlRuleLlm } from './sql-rule-llm';
import { runSqlAgentApo, SEED_PROMPT } from './run-sql-agent';

let llm: OpenAiTestServer;
let dir: string;
let db: Database.Database;
beforeAll(async () => {
  llm = await startOpenAiTestServer({ respond: sqlRuleLlm });
  dir = await mkdtemp(join(tmpdir(), 'agl-sql-agent-'));
  db = buildCompanyDatabase(join(dir, 'check.sqlite'));
});
afterAll(async () => {
  db.close();
  await llm.close();
  await rm(dir, { recursive: true, force: true });
});

const resources = (template: string): NamedResources => ({
  llm: { resourceType: 'llm', endpoint: llm.baseURL, model: 'test-model', apiKey: null, samplingParameters: {} },
  system_prompt: { resourceType: 'prompt_template', template, engine: 'f-string' },
});

describe('the company database and the question set', () => {
  it('holds a few hundred deterministic rows; every gold query returns a non-empty answer', () => {
    const count = (t: string): unknown => runQuery(db, `SELECT COUNT(*) FROM ${t}`);
    for (const [table, n] of Object.entries(ROW_COUNTS))
      expect(count(table)).toEqual({ ok: true, columns: 1, rows: [[n]] });
    const again = buildCompanyDatabase(':memory:');
    const dump = (d: Database.Database): unknown => runQuery(d, 'SELECT * FROM employees ORDER BY id');
    expect(dump(again)).toEqual(dump(db));
    again.close();
    expect(SQL_QUESTIONS).toHaveLength(40);
    for (const task of SQL_QUESTIONS) {
      const out = runQuery(db, task.gold);
      expect(out.ok && out.rows.length > 0 && out.rows[0]!.some((v) => v !== null), task.id).toBe(true);
    }
    const { train, val } = splitQuestions();
    expect([train.length, val.length]).toEqual([20, 20]);
  });

  it('execution match: same rows in any order score 1 (order counts under ORDER BY); wrong, failing or extra columns score 0', () => {
    const gold = "SELECT name FROM departments WHERE city = 'Berlin'";
    expect(executionMatch(db, gold, gold)).toBe(1);
    expect(executionMatch(db, "SELECT name FROM departments WHERE city = 'Berlin' ORDER BY name DESC", gold)).toBe(1);
    expect(executionMatch(db, "SELECT * FROM departments WHERE city = 'Berlin'", gold)).toBe(0);
    expect(executionMatch(db, "SELECT name FROM departments WHERE city = 'berlin'", gold)).toBe(0);
    expect(executionMatch(db, 'SELECT nme FROM departments', gold)).toBe(0);
    const top = SQL_QUESTIONS.find((t) => t.id === 'top-0')!.gold;
    expect(executionMatch(db, top.replace(' DESC', ''), top)).toBe(0);
    expect(extractSql('```sql\nSELECT 1;\n```')).toBe('SELECT 1');
  });
});

describe('the LangGraph write → check → rewrite loop', () => {
  it('a reply with prose fails to run; the checker flags it and the rewrite fixes it on turn 2', async () => {
    const task = SQL_QUESTIONS.find((t) => t.id === 'hired-0')!;
    const run = await runSqlTask({ task, resources: resources(SEED_PROMPT), db });
    expect(run).toEqual({ query: task.gold, turns: 2, accepted: true, reward: 1 });
  });

  it('a semantic error the rewriter cannot fix runs to the turn limit and earns 0', async () => {
    const task = SQL_QUESTIONS.find((t) => t.id === 'count-0')!;
    const run = await runSqlTask({ task, resources: resources(SEED_PROMPT), db });
    expect(run).toMatchObject({ turns: 3, accepted: false, reward: 0 });
    expect(run.query).toContain('department =');
  });

  it('with the right advice in the prompt the first query is accepted and matches', async () => {
    const prompt = [SEED_PROMPT, 'Reply with only the SQL query.', ...Object.values(SQL_ADVICE)].join('\n');
    for (const id of ['count-0', 'top-0', 'budget-0', 'city-0', 'hours-0']) {
      const run = await runSqlTask({ task: SQL_QUESTIONS.find((t) => t.id === id)!, resources: resources(prompt), db });
      expect(run, id).toMatchObject({ turns: 1, accepted: true, reward: 1 });
    }
  });
});

describe('APO offline against the rule-based test LLM server', () => {
  it(
    'raises val execution match and leaves real rollouts, LLM spans and rewards in the SQLite store',
    { timeout: 120_000 },
    async () => {
      const result = await runSqlAgentApo({
        baseURL: llm.baseURL,
        agentModel: 'test-model',
        gradientModel: 'test-model',
        applyEditModel: 'test-model',
        workDir: join(dir, 'run'),
        apo: { beamRounds: 2 },
      });
      expect(result.seedScore).toBeLessThan(0.3);
      expect(result.bestScore).toBeGreaterThanOrEqual(0.8);
      expect(result.bestPrompt.startsWith(SEED_PROMPT)).toBe(true);
      expect(result.bestPrompt).toContain(SQL_ADVICE.join);

      const store = new SqliteStore({ path: result.storePath });
      try {
        const rollouts = (await store.queryRollouts({ statusIn: ['succeeded'] })).items;
        expect(rollouts.length).toBeGreaterThan(40);
        const spans = (await store.querySpans({ rolloutId: rollouts[0]!.rolloutId })).items;
        const trajectory = new TraceToTransitions().adapt(spans);
        // write, check, and possibly rewrite + check again: every call is an `openai.chat.completion` span.
        expect(trajectory.transitions.length).toBeGreaterThanOrEqual(2);
        expect(trajectory.transitions[0]!.state.messages[0]).toMatchObject({ role: 'system' });
        expect([0, 1]).toContain(trajectory.finalReward);
      } finally {
        await store.close();
      }
    },
  );
});
