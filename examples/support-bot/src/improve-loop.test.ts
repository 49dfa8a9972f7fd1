// The README's "Improve it: the whole loop", end to end and offline: the long-running lines (test servers, store,
// service) are started on free ports, every other line runs as written (URLs and file names pointed at this test's),
// and each step's effect is checked in the store, in the task files and in what the test LLM was asked.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreClient } from '@agl/client';
import { ATTR_FEEDBACK_COMMENT, ATTR_JUDGE_MODEL, ATTR_REWARD_SOURCE } from '@agl/core/semconv';
import { runCli } from '@agl/cli';
import {
  startFineTuningTestServer,
  startOpenAiTestServer,
  type FineTuningTestServer,
  type OpenAiTestServer,
} from '@agl/testing';
import { SOURCE_FLAGS, startStoreServe, startSupportBotProcess, waitFor, type ChildService } from './child-service';
import { SEED_PROMPT } from './support-agent';
import { loopRuleLlm, THANKS } from './support-rule-llm';

const EXAMPLE = resolve(import.meta.dirname, '..');

/** The README's loop block, one command a line (comments dropped). */
function readmeCommands(): string[] {
  const readme = readFileSync(join(EXAMPLE, 'README.md'), 'utf8');
  const block = readme.split('<!-- loop-commands')[1]!.split('```sh\n')[1]!.split('```')[0]!;
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/u, '').trim())
    .filter((l) => l !== '');
}

/** The model and system prompt of a request the test LLM received. */
function chatOf(request: { body: unknown }): { model?: string; system?: string } {
  const body = request.body as { model?: string; messages?: { role: string; content: unknown }[] };
  const content = body.messages?.find((m) => m.role === 'system')?.content;
  // LangChain sends the system prompt as text parts.
  const parts = Array.isArray(content) ? (content as { text?: string }[]) : [{ text: content as string | undefined }];
  return { model: body.model, system: parts.map((p) => p.text ?? '').join('') };
}

const argv = (line: string): string[] => line.split(/\s+/u);
const withQuotes = (line: string): string[] =>
  [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/gu)].map((m) => m[1] ?? m[2] ?? m[3]!);

describe('support-bot: the whole improvement loop from the README', () => {
  let dir: string;
  let llm: OpenAiTestServer;
  let ft: FineTuningTestServer;
  let storeServe: ChildService;
  let bot: ChildService;
  let store: StoreClient;
  const env = { url: process.env.AGL_STORE_URL, base: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
  const cwd = process.cwd();

  /** One README line, its fixed URLs and files pointed at this test's servers and folder. */
  const localise = (line: string): string =>
    line
      .replaceAll('http://127.0.0.1:4000/v1', llm.baseURL)
      .replaceAll('http://127.0.0.1:4001/v1', ft.baseURL)
      .replaceAll('http://127.0.0.1:4747', storeServe.url)
      .replaceAll('http://127.0.0.1:3000', bot.url)
      // The README's paths are relative to the example's folder; this test's commands run in a scratch folder.
      .replace(
        / (--rubric )?(rubric\.md|src\/apo-entry\.ts) /u,
        (_m, flag: string | undefined, path: string) => ` ${flag ?? ''}${join(EXAMPLE, path)} `,
      );

  async function agl(line: string): Promise<string> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['node', ...withQuotes(localise(line)).slice(1)], {
      out: (l) => void out.push(l),
      err: (l) => void err.push(l),
    });
    expect(code, `${line}\n${err.join('\n')}`).toBe(0);
    return out.join('\n');
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agl-support-loop-'));
    // `npm run test-servers`: the same two servers, in this process so the test sees what they were asked.
    llm = await startOpenAiTestServer({ respond: loopRuleLlm });
    ft = await startFineTuningTestServer({ advance: 'on-poll' });
    storeServe = await startStoreServe({ db: join(dir, 'support.sqlite') });
    store = new StoreClient({ url: storeServe.url });
    // `export ...`: the CLI commands below run in this process and read the same variables.
    process.env.AGL_STORE_URL = storeServe.url;
    process.env.OPENAI_BASE_URL = llm.baseURL;
    process.env.OPENAI_API_KEY = 'sk-test';
    bot = await startSupportBotProcess({ AGL_STORE_URL: storeServe.url, OPENAI_BASE_URL: llm.baseURL });
    // Task files, APO's output and the judge cache land in a scratch folder, not in the repository.
    process.chdir(dir);
  });
  afterAll(async () => {
    process.chdir(cwd);
    for (const [name, value] of [
      ['AGL_STORE_URL', env.url],
      ['OPENAI_BASE_URL', env.base],
      ['OPENAI_API_KEY', env.key],
    ] as const)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    await bot?.stop();
    await storeServe?.stop();
    await Promise.all([llm?.close(), ft?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const t0 = Date.now();
  const lap = (step: string): void => console.log(`loop: ${step} done at ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  it('records, rates, judges, builds a task set, runs APO, fine-tunes, and the service serves the result', async () => {
    const lines = readmeCommands();
    const line = (start: string): string => {
      const found = lines.find((l) => l.startsWith(start));
      expect(found, `a README line starting with ${start}`).toBeDefined();
      return found!;
    };
    expect(lines[0]).toBe('npm run test-servers');
    expect(line('npx agl store serve')).toBeTruthy();
    expect(line('export AGL_STORE_URL=')).toContain('OPENAI_BASE_URL=http://127.0.0.1:4000/v1');
    expect(line('npm start')).toBe('npm start');

    // 1. Record: the traffic script's requests become 30 production rollouts.
    const traffic = line('npm run traffic');
    const trafficArgs = argv(traffic.split(' -- ')[1]!);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [...SOURCE_FLAGS, 'src/traffic.ts', ...trafficArgs, '--url', bot.url],
      { cwd: EXAMPLE, env: { ...process.env, NODE_OPTIONS: '' } },
    );
    const ids = stdout.trim().split('\n');
    expect(ids).toHaveLength(30);
    const rollouts = (await store.queryRollouts({})).items;
    expect(rollouts.map((r) => r.rolloutId).sort()).toEqual([...ids].sort());
    for (const r of rollouts) expect(r.metadata).toMatchObject({ source: 'production', agent_name: 'support-bot' });

    lap('record');
    // 2. Feedback on three of them.
    const rated = ids.slice(0, 3);
    for (const id of rated) await agl(line('npx agl feedback').replace('<rollout-id>', id));
    const spansOf = async (id: string) => (await store.querySpans({ rolloutId: id, attemptId: 'latest' })).items;
    const rewardSources = async (id: string) =>
      (await spansOf(id)).map((s) => s.attributes[ATTR_REWARD_SOURCE]).filter((v) => v !== undefined);
    for (const id of rated) {
      const feedback = (await spansOf(id)).find((s) => s.attributes[ATTR_REWARD_SOURCE] === 'feedback');
      expect(feedback?.attributes[ATTR_FEEDBACK_COMMENT]).toBe('right order, and polite');
    }

    lap('feedback');
    // 3. The judge scores the 27 unrewarded rollouts only.
    await agl(line('npx agl judge'));
    for (const id of ids) expect(await rewardSources(id)).toEqual(rated.includes(id) ? ['feedback'] : ['judge']);
    const judged = (await spansOf(ids[5]!)).find((s) => s.attributes[ATTR_REWARD_SOURCE] === 'judge')!;
    expect(judged.attributes[ATTR_JUDGE_MODEL]).toBe('judge-model');
    expect(judged.attributes['agentlightning.reward.0.value']).toBe(0.5); // the seed prompt forgets the thank-you

    lap('judge');
    // 4. The task set: every request once, split by a hash of the input.
    await agl(line('npx agl dataset build'));
    const read = (file: string) =>
      readFileSync(join(dir, file), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { body: { message: string }; _agl: { rollout_id: string; source: string } });
    const [train, val] = [read('tasks.jsonl'), read('tasks.val.jsonl')];
    expect(train.length + val.length).toBe(30);
    expect(val.length).toBeGreaterThan(0);
    expect(train.length).toBeGreaterThan(val.length);
    expect(new Set([...train, ...val].map((t) => t._agl.rollout_id))).toEqual(new Set(ids));
    expect(train[0]!._agl.source).toBe('production');

    lap('dataset');
    // 5. APO with the judge as reward publishes its best prompt as the latest resources version.
    const before = (await store.queryResources({})).items.length;
    const trained = await agl(line('npx agl train'));
    const apoBest = await store.getLatestResources();
    expect(apoBest?.resourcesId).toBe('support-bot-apo-best');
    // The name the README gives is the one the run prints and publishes.
    const published = /published as the latest resources version (\S+):/u.exec(trained)?.[1];
    expect(published).toBe(apoBest?.resourcesId);
    expect(readFileSync(join(EXAMPLE, 'README.md'), 'utf8')).toContain(
      `\`agl train\` ends with \`published as the latest resources version ${published}\``,
    );
    const bestPrompt = (apoBest!.resources.system_prompt as { template: string }).template;
    expect(bestPrompt).not.toBe(SEED_PROMPT);
    expect(bestPrompt).toContain(THANKS);
    expect((await store.queryResources({})).items.length).toBeGreaterThan(before);

    lap('apo');
    // 6. Fine-tune on the best transcripts: one more version, the APO prompt kept, the tuned model named.
    const versions = (await store.queryResources({})).items.length;
    await agl(line('npx agl finetune'));
    const [job] = [...ft.jobs.values()];
    expect(job).toMatchObject({ status: 'succeeded', model: 'gpt-4o-mini' });
    const tuned = await store.getLatestResources();
    expect((await store.queryResources({})).items.length).toBe(versions + 1);
    expect(tuned!.resources.main_llm).toMatchObject({ model: job!.fine_tuned_model });
    expect(tuned!.resources.system_prompt).toMatchObject({ template: bestPrompt });

    lap('finetune');
    // 7. The running service answers with APO's prompt on the tuned model (once its resources cache refreshed).
    const curl = withQuotes(localise(line('curl')));
    const ask = async (): Promise<string | undefined> => {
      const res = await fetch(
        curl.find((a) => a.startsWith('http'))!,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: curl[curl.indexOf('-d') + 1],
        },
      );
      const { reply } = (await res.json()) as { reply: string };
      return chatOf(llm.requests.at(-1)!).model === job!.fine_tuned_model ? reply : undefined;
    };
    const reply = await waitFor('a reply from the tuned model', ask, 20_000);
    expect(reply).toBe(`Order A-1002 is shipped, arriving 2026-12-07. ${THANKS}`);
    const served = llm.requests.map(chatOf).filter((r) => r.model === job!.fine_tuned_model);
    expect(served.length).toBeGreaterThan(0);
    expect(served.at(-1)!.system).toBe(bestPrompt);
  }, 120_000);
});
