import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findFinalReward, listFeedback } from '@agl/core/transitions';
import { recordRewardSpan, type LightningStore } from '@agl/core/store';
import { createStoreServer } from '@agl/store/server';
import { SqliteStore } from '@agl/store/sqlite';
import { agl } from './__fixtures__/run-agl';

const dir = mkdtempSync(join(tmpdir(), 'agl-cli-feedback-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A finished rollout whose agent rewarded it 0. */
async function seedRollout(store: LightningStore): Promise<string> {
  const r = await store.startRollout({ input: { q: 'hi' } });
  await recordRewardSpan(store, r.rolloutId, {
    'agentlightning.reward.0.name': 'primary',
    'agentlightning.reward.0.value': 0,
  });
  await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
  return r.rolloutId;
}

const RESOURCES = {
  main_prompt: { resource_type: 'prompt_template', template: 'Answer {question}', engine: 'f-string' },
  llm: { resource_type: 'llm', endpoint: 'http://127.0.0.1:9/v1', model: 'tiny', api_key: 'sk-secret-123456' },
};

describe('agl feedback and agl resources', () => {
  it('records feedback and publishes resources on a SQLite file', async () => {
    const db = join(dir, 'a.sqlite');
    const store = new SqliteStore({ path: db });
    const id = await seedRollout(store);
    await store.close();

    const given = await agl('feedback', id, '1', '--comment', 'great', '--dimension', 'tone=0.5', '--store', db);
    expect(given).toMatchObject({ code: 0, err: '' });
    expect(given.out).toMatch(new RegExp(`feedback 1 recorded on rollout ${id}`));
    expect((await agl('rollouts', 'list', '--store', db)).out).toMatch(new RegExp(`${id}\\s+succeeded\\s+-\\s+1\\s`));

    const file = join(dir, 'resources.json');
    writeFileSync(file, JSON.stringify(RESOURCES));
    const first = await agl('resources', 'publish', file, '--store', db);
    expect(first.code).toBe(0);
    const firstId = first.out.trim();
    expect(firstId).toMatch(/^rs-/);
    // camelCase is accepted too; --merge keeps the other resources of the latest version.
    const camel = join(dir, 'prompt.json');
    writeFileSync(
      camel,
      JSON.stringify({ main_prompt: { resourceType: 'prompt_template', template: 'Be brief: {question}' } }),
    );
    const merged = await agl('resources', 'publish', camel, '--merge', '--store', db);
    expect(merged.code).toBe(0);
    const shown = await agl('resources', 'show', '--store', db);
    const latest = JSON.parse(shown.out) as {
      resources_id: string;
      resources: Record<string, Record<string, unknown>>;
    };
    expect(latest.resources_id).toBe(merged.out.trim());
    expect(latest.resources.main_prompt).toMatchObject({ template: 'Be brief: {question}' });
    expect(latest.resources.llm).toMatchObject({ model: 'tiny', api_key: '••••3456' });
    const listed = await agl('resources', 'list', '--store', db);
    expect(listed.out).toContain(`${merged.out.trim()} *`);
    expect(listed.out).toContain(firstId);

    const reopened = new SqliteStore({ path: db });
    const spans = (await reopened.querySpans({ rolloutId: id })).items;
    expect(findFinalReward(spans)).toBe(1);
    expect(listFeedback(spans)).toMatchObject([{ reward: 1, comment: 'great', dimensions: { tone: 0.5 } }]);
    expect((await reopened.getLatestResources())?.resources.llm).toMatchObject({ apiKey: 'sk-secret-123456' });
    await reopened.close();
  });

  it('works against a served store with a token', async () => {
    const store = new SqliteStore({ path: join(dir, 'served.sqlite') });
    const server = await createStoreServer({ store, port: 0, token: 'tok', closeStore: true });
    try {
      const id = await seedRollout(store);
      const flags = ['--store-url', server.url, '--token', 'tok'];
      expect((await agl('feedback', id, '0.25', '--dimension', 'helpful=1', ...flags)).code).toBe(0);
      expect(findFinalReward((await store.querySpans({ rolloutId: id })).items)).toBe(0.25);
      const refused = await agl('feedback', id, '1', '--store-url', server.url);
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(/Authorization/);

      const file = join(dir, 'served.json');
      writeFileSync(file, JSON.stringify(RESOURCES));
      const published = await agl('resources', 'publish', file, ...flags);
      expect(published.code).toBe(0);
      expect((await store.getLatestResources())?.resourcesId).toBe(published.out.trim());
    } finally {
      await server.close();
    }
  });

  it('refuses bad input with a message naming the field', async () => {
    const db = join(dir, 'bad.sqlite');
    expect((await agl('feedback', 'ro-x', 'great', '--store', db)).err).toMatch(/reward must be a finite number/);
    expect((await agl('feedback', 'ro-x', '1', '--dimension', 'tone', '--store', db)).err).toMatch(/name=value/);
    expect((await agl('feedback', 'ro-missing', '1', '--store', db)).err).toMatch(/ro-missing not found/);
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ llm: { resource_type: 'llm', endpoint: 'http://x/v1' } }));
    const bad = await agl('resources', 'publish', file, '--store', db);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/resource "llm"\.model/);
    writeFileSync(file, JSON.stringify({ p: { resource_type: 'prompt', template: 'x' } }));
    expect((await agl('resources', 'publish', file, '--store', db)).err).toMatch(/resource "p"\.resource_type/);
    writeFileSync(file, '[1]');
    expect((await agl('resources', 'publish', file, '--store', db)).err).toMatch(/JSON object of named resources/);
  });

  it('refuses a {"__proto__": {…}} file like the REST route (422 naming it) and publishes nothing', async () => {
    const db = join(dir, 'proto.sqlite');
    const file = join(dir, 'proto.json');
    writeFileSync(file, '{"__proto__": {"resource_type": "prompt_template", "template": "x"}}');
    const bad = await agl('resources', 'publish', file, '--store', db);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/resource "__proto__": forbidden resource name/);
    const listed = await agl('resources', 'list', '--json', '--store', db);
    const before = (JSON.parse(listed.out) as { total: number }).total;
    writeFileSync(
      file,
      '{"ok": {"resource_type": "prompt_template", "template": "x"}, "constructor": {"resource_type": "prompt_template", "template": "y"}}',
    );
    expect((await agl('resources', 'publish', file, '--store', db)).err).toMatch(/resource "constructor"/);
    expect((JSON.parse((await agl('resources', 'list', '--json', '--store', db)).out) as { total: number }).total).toBe(
      before,
    );
  });
});
