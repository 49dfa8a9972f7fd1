import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { agl } from './__fixtures__/run-agl';

const dir = mkdtempSync(join(tmpdir(), 'agl-cli-resources-latest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('agl resources latest', () => {
  it('says how to publish when the store has none, then prints the newest version (keys masked) or its id', async () => {
    const db = join(dir, 'a.sqlite');
    const store = new SqliteStore({ path: db });
    const none = await agl('resources', 'latest', '--store', db);
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/No resources published in this store yet.*agl resources publish <file>/);

    await store.addResources({
      main_prompt: { resourceType: 'prompt_template', template: 'old {q}', engine: 'f-string' },
    });
    const newest = await store.addResources({
      main_prompt: { resourceType: 'prompt_template', template: 'new {q}', engine: 'f-string' },
      llm: { resourceType: 'llm', endpoint: 'http://127.0.0.1:9/v1', model: 'tiny', apiKey: 'sk-secret-123456' },
    });
    await store.close();

    const shown = await agl('resources', 'latest', '--store', db);
    expect(shown).toMatchObject({ code: 0, err: '' });
    const latest = JSON.parse(shown.out) as {
      resources_id: string;
      resources: Record<string, Record<string, unknown>>;
    };
    expect(latest.resources_id).toBe(newest.resourcesId);
    expect(latest.resources.main_prompt).toMatchObject({ template: 'new {q}' });
    expect(latest.resources.llm).toMatchObject({ api_key: '••••3456' });
    expect(JSON.stringify(latest)).not.toContain('sk-secret');

    expect((await agl('resources', 'latest', '--id', '--store', db)).out.trim()).toBe(newest.resourcesId);
  });
});
