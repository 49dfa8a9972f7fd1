import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import { runAglFromSource, startOpenAiTestServer, toyTokenize, type OpenAiTestServer } from '@agl/testing';
import { CommanderError, type Command } from 'commander';
import { createProgram, runCli } from '../program';
import type { CliIo } from './output';

const ENTRY = resolve(import.meta.dirname, '__fixtures__/train-entry.ts');

/** Parse only (commander errors captured instead of exiting the process). */
async function parseOnly(...args: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const program = createProgram({ io: { out: () => undefined, err: (l) => void (err += `${l}\n`) } });
  const configure = (cmd: Command): void => {
    cmd.exitOverride().configureOutput({ writeOut: () => undefined, writeErr: (s) => void (err += s) });
    cmd.commands.forEach(configure);
  };
  configure(program);
  try {
    await program.parseAsync(['node', 'agl', ...args]);
    return { code: 0, err };
  } catch (error) {
    if (error instanceof CommanderError) return { code: error.exitCode, err };
    throw error;
  }
}

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => void out.push(l), err: (l) => void err.push(l) };
  const code = await runCli(['node', 'agl', ...args], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('agl train / rollouts / spans / export transitions against real stores', () => {
  let llm: OpenAiTestServer;
  let dir: string;
  let db: string;
  let trainRun: { code: number | null; stdout: string; stderr: string };

  beforeAll(async () => {
    llm = await startOpenAiTestServer();
    dir = mkdtempSync(join(tmpdir(), 'agl-cli-loop-'));
    db = join(dir, 'store.sqlite');
    trainRun = await runAglFromSource(['train', ENTRY, '--store', db, '--runners', '2', '--json'], {
      CI: '1',
      TEST_LLM_URL: llm.baseURL,
      AGL_STORE_URL: '',
      AGL_STORE_TOKEN: '',
    });
  }, 120_000);
  afterAll(async () => {
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('agl train loads a .ts entry, runs its agent on train + val with the embedded SQLite store, prints progress and a result', () => {
    expect(trainRun.code, trainRun.stderr).toBe(0);
    const lines = trainRun.stdout.trim().split('\n');
    const result = JSON.parse(lines.at(-1)!) as {
      runner: { succeeded: number; failed: number };
      progress: { succeeded: number; failed: number; meanReward: number };
    };
    expect(result.runner).toMatchObject({ succeeded: 4, failed: 1 });
    expect(result.progress).toMatchObject({ succeeded: 4, failed: 1, meanReward: 1 });
    expect(lines.some((l) => l.startsWith('[agl train] rollouts 5/5 done (4 ok, 1 failed)'))).toBe(true);
    expect(llm.requests.length).toBe(5);
  });

  it('agl rollouts list / show, agl spans and agl export transitions read the store', async () => {
    const list = await cli('rollouts', 'list', '--store', db);
    expect(list.code, list.err).toBe(0);
    expect(list.out).toMatch(/^ROLLOUT\s+STATUS\s+MODE\s+REWARD\s+ATTEMPTS/mu);
    expect(list.out).toMatch(/\ssucceeded\s+val\s+1\s+1\s/u);
    expect(list.out).toMatch(/\sfailed\s+train\s+-\s+1\s/u);
    expect(list.out).toContain('5 of 5 rollouts');
    const failed = JSON.parse((await cli('rollouts', 'list', '--store', db, '--status', 'failed', '--json')).out) as {
      items: { rollout_id: string; input: { id: string } }[];
      total: number;
    };
    expect(failed.total).toBe(1);
    expect(failed.items[0]!.input.id).toBe('boom');
    const ok = JSON.parse(
      (await cli('rollouts', 'list', '--store', db, '--status', 'succeeded', '--mode', 'val', '--json')).out,
    ) as { items: { rollout_id: string }[] };
    expect(ok.items).toHaveLength(1);
    const id = ok.items[0]!.rollout_id;

    const show = JSON.parse((await cli('rollouts', 'show', id, '--store', db)).out) as {
      rollout: { status: string; mode: string };
      attempts: { status: string; worker_id: string }[];
      span_count: number;
    };
    expect(show.rollout).toMatchObject({ status: 'succeeded', mode: 'val' });
    expect(show.attempts).toHaveLength(1);
    expect(show.attempts[0]!.worker_id).toMatch(/^Worker-[12]$/u);
    expect(show.span_count).toBe(2);

    const spans = await cli('spans', id, '--store', db);
    expect(spans.out).toMatch(/1\s+openai\.chat\.completion/u);
    expect(spans.out).toMatch(/2\s+agentlightning\.annotation.*reward=1/u);
    expect(spans.out).toContain('2 spans');
    const latest = await cli('spans', 'latest', '--store', db);
    expect(latest.code, latest.err).toBe(0);
    expect(latest.out).toMatch(/^rollout ro-\S+\n/u);

    const out = join(dir, 'transitions.jsonl');
    const exported = await cli('export', 'transitions', '--out', out, '--store', db);
    expect(exported.code, exported.err).toBe(0);
    expect(exported.out).toContain('wrote 5 transitions from 5 rollouts');
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            task_id: string;
            reward: number | null;
            action: { token_ids: number[] };
            state: { messages: { content: string }[] };
          },
      );
    const x2 = rows.find((r) => r.task_id === 'x2')!;
    expect(x2.reward).toBe(1);
    expect(x2.action.token_ids).toEqual(toyTokenize('7'));
    expect(x2.state.messages[0]!.content).toBe('What is 3 + 4?');
    expect(rows.find((r) => r.task_id === 'boom')!.reward).toBeNull();
  });

  it('agl rollouts cancel / requeue change statuses through a store server (--store-url)', async () => {
    const store = new SqliteStore({ path: db });
    let server: StoreServer | undefined;
    try {
      server = await createStoreServer({ store, port: 0, token: 'tok' });
      const queued = await store.enqueueRollout({ input: { id: 'later' } });
      const cancelled = await cli('rollouts', 'cancel', queued.rolloutId, '--store-url', server.url, '--token', 'tok');
      expect(cancelled.out).toBe(`${queued.rolloutId} cancelled`);
      expect((await store.getRolloutById(queued.rolloutId))?.status).toBe('cancelled');
      const requeued = await cli('rollouts', 'requeue', queued.rolloutId, '--store-url', server.url, '--token', 'tok');
      expect(requeued.out).toBe(`${queued.rolloutId} requeuing`);
      const missing = await cli('rollouts', 'show', 'ro-nope', '--store-url', server.url, '--token', 'tok');
      expect(missing.code).toBe(1);
      expect(missing.err).toContain('No rollout "ro-nope"');
      const unauthorized = await cli('rollouts', 'list', '--store-url', server.url);
      expect(unauthorized.code).toBe(1);
    } finally {
      await server?.close();
      await store.close();
    }
  });

  it(
    'agl train --store-url runs against a store server (StoreClient), with the token from $AGL_STORE_TOKEN',
    { timeout: 120_000 },
    async () => {
      const store = new SqliteStore({ path: join(dir, 'served.sqlite') });
      let server: StoreServer | undefined;
      try {
        server = await createStoreServer({ store, port: 0, token: 'tok2' });
        const run = await runAglFromSource(['train', ENTRY, '--store-url', server.url, '--no-progress'], {
          CI: '1',
          TEST_LLM_URL: llm.baseURL,
          AGL_STORE_TOKEN: 'tok2',
        });
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toMatch(
          /^agl train: 5 rollouts in [\d.]+s: 4 succeeded, 1 failed; mean final reward 1\.000\.$/mu,
        );
        expect(run.stdout).toContain(`store: ${server.url}`);
        expect(run.stdout).toContain(`npx agl rollouts list --store-url ${server.url}`);
        expect(run.stdout).not.toContain('[agl train]');
        expect((await store.queryRollouts({ statusIn: ['succeeded'] })).total).toBe(4);
      } finally {
        await server?.close();
        await store.close();
      }
    },
  );

  it('unknown flags are errors with a suggestion, and bad values name the fix', async () => {
    const typo = await parseOnly('rollouts', 'list', '--statsu', 'failed', '--store', db);
    expect(typo.code).not.toBe(0);
    expect(typo.err).toMatch(/unknown option '--statsu'[\s\S]*--status/u);
    const bad = await cli('rollouts', 'list', '--status', 'done', '--store', db);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('--status got "done"');
    let trainHelp = '';
    const train = createProgram().commands.find((c) => c.name() === 'train')!;
    train.configureOutput({ writeOut: (text) => void (trainHelp += text) });
    train.outputHelp();
    for (const name of ['agent', 'train', 'val', 'algorithm', 'apo', 'config'])
      expect(trainHelp).toMatch(new RegExp(`^  ${name}\\s`, 'mu'));
    expect(trainHelp).toContain('--quiet');
    for (const help of [
      ['train', '--help'],
      ['rollouts', 'list', '--help'],
      ['spans', '--help'],
      ['export', 'transitions', '--help'],
    ]) {
      expect((await parseOnly(...help)).code).toBe(0);
    }
    expect((await parseOnly('train', ENTRY, '--runners', '0')).err).toContain('expected an integer ≥ 1');
    const noEntry = await cli('train', join(dir, 'missing.ts'), '--store', db);
    expect(noEntry.code).toBe(1);
    expect(noEntry.err).toContain('does not exist');
  });
});
