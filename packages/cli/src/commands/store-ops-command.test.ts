import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { agl } from './__fixtures__/run-agl';

const dir = mkdtempSync(join(tmpdir(), 'agl-cli-ops-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('agl store export | import | prune | backup', () => {
  it('round-trips a SQLite store through a dump, prunes it, and backs it up', async () => {
    const db = join(dir, 'a.sqlite');
    const store = new SqliteStore({ path: db });
    for (let i = 0; i < 4; i += 1) {
      const r = await store.startRollout({ input: i });
      await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
    }
    await store.enqueueRollout({ input: 'queued' });
    await store.close();

    const dump = join(dir, 'a.jsonl');
    const exported = await agl('store', 'export', '--db', db, '--out', dump);
    expect(exported).toMatchObject({ code: 0, err: '' });
    expect(exported.out).toMatch(/exported 5 rollouts, 4 attempts, 0 spans/);
    expect(readFileSync(dump, 'utf8').split('\n')[0]).toContain('"format":"agl-store-dump"');

    const copy = join(dir, 'b.sqlite');
    expect((await agl('store', 'import', '--db', copy, '--in', dump)).out).toMatch(
      /imported 5 rollouts, 4 attempts, 0 spans.*\(1 queued\)/,
    );
    const again = await agl('store', 'import', '--db', copy, '--in', dump);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/is not empty/);

    expect((await agl('store', 'prune', '--db', copy, '--keep-last', '2', '--dry-run')).out).toMatch(
      /would delete 3 rollouts/,
    );
    expect((await agl('store', 'prune', '--db', copy, '--keep-last', '2')).out).toMatch(
      /^deleted 3 rollouts, 3 attempts, 0 spans/,
    );
    const neither = await agl('store', 'prune', '--db', copy);
    expect(neither.code).toBe(1);
    expect(neither.err).toMatch(/exactly one of --before <date> or --keep-last <n>/);
    expect((await agl('store', 'prune', '--db', copy, '--before', '2000-01-01')).out).toMatch(/deleted 0 rollouts/);

    const backup = join(dir, 'b.backup.sqlite');
    expect((await agl('store', 'backup', '--db', copy, '--out', backup)).out).toMatch(/backed up .* pages/);
    expect(existsSync(backup)).toBe(true);
    const restored = new SqliteStore({ path: backup });
    expect((await restored.statistics()).totalRollouts).toBe(2);
    await restored.close();

    const guidance = await agl('store', 'backup', '--db', 'postgres://u:secret@db:5432/agl', '--out', 'agl.dump');
    expect(guidance.out).toMatch(
      /pg_dump --format=custom --schema=public --file=agl\.dump 'postgres:\/\/u:\*\*\*@db:5432\/agl'/,
    );
    expect(guidance.out).not.toContain('secret');
  });

  it('a missing SQLite file is an error that names it, never an empty new store', async () => {
    const missing = join(dir, 'missing.sqlite');
    const result = await agl('store', 'export', '--db', missing, '--out', join(dir, 'x.jsonl'));
    expect(result.code).toBe(1);
    expect(result.err).toContain(`SQLite store ${missing} does not exist`);
    expect(existsSync(missing)).toBe(false);
  });
});
