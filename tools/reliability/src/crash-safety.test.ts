import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { seededRandom } from '@agl/core';
import { StoreClient } from '@agl/store/client';
import { afterAll, describe, expect, it } from 'vitest';
import { killAndWait, onLines, spawnNode } from './harness/child-process';
import { randomInt } from './harness/random-int';
import { startStoreProcess, type StoreProcess } from './harness/store-process';

const WRITER = fileURLToPath(new URL('./__fixtures__/crash-writer.mjs', import.meta.url));
const SEEDS = [11, 23, 37];

interface WriterLine {
  t: 'sent' | 'ack' | 'error';
  batch: string;
  kind: 'start' | 'enqueue' | 'spans';
  size: number;
  status?: number;
  ids?: string[];
  rolloutId?: string;
}

/** Runs the writer against `server` and `kill -9`s it after a seeded random number of acknowledged batches. */
async function writeUntilCrash(
  seed: number,
  server: StoreProcess,
  sent: Map<string, WriterLine>,
  acked: Map<string, WriterLine>,
): Promise<void> {
  const killAt = randomInt(seededRandom(seed), 5, 120);
  const writer = spawnNode({
    file: WRITER,
    typescript: false,
    env: { AGL_STORE_URL: server.url, AGL_SEED: String(seed), AGL_BATCH_PREFIX: `s${seed}-` },
  });
  let ackedNow = 0;
  let crashing: Promise<void> | null = null;
  onLines(writer, (text) => {
    const line = JSON.parse(text) as WriterLine;
    if (line.t === 'sent') sent.set(line.batch, line);
    if (line.t === 'ack') {
      acked.set(line.batch, line);
      if (++ackedNow >= killAt && crashing === null) crashing = server.crash();
    }
  });
  const exited = new Promise<number | null>((resolve) => writer.once('exit', (code) => resolve(code)));
  const code = await Promise.race([
    exited,
    new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 60_000)),
  ]);
  if (code === 'stuck') await killAndWait(writer);
  await (crashing ?? server.crash());
  expect(code, `seed ${seed}: the writer stops by itself once the server is gone`).toBe(0);
  expect(crashing, `seed ${seed}: the server was killed after ${killAt} acknowledged batches`).not.toBeNull();
}

/** Checks the restarted server against everything the writers sent so far; returns how many batches were unacknowledged. */
async function verify(
  server: StoreProcess,
  sent: Map<string, WriterLine>,
  acked: Map<string, WriterLine>,
): Promise<number> {
  const client = new StoreClient({ url: server.url });
  try {
    const rollouts = (await client.queryRollouts({ limit: -1 })).items;
    const byBatch = new Map<string, string[]>();
    for (const r of rollouts) {
      const batch = String((r.metadata as Record<string, unknown>).batch);
      byBatch.set(batch, [...(byBatch.get(batch) ?? []), r.rolloutId]);
    }
    const spanOwners = new Set([...sent.values()].filter((l) => l.kind === 'spans').map((l) => l.rolloutId!));
    const spanIds = new Set<string>();
    for (const rolloutId of spanOwners) {
      for (const s of (await client.querySpans({ rolloutId, limit: -1 })).items) spanIds.add(s.spanId);
    }
    let unacknowledged = 0;
    for (const line of sent.values()) {
      const ack = acked.get(line.batch);
      const present =
        line.kind === 'spans'
          ? line.ids!.filter((id) => spanIds.has(id)).length
          : (byBatch.get(line.batch) ?? []).length;
      if (ack) {
        expect(ack.status, `batch ${line.batch} (${line.kind})`).toBeLessThan(300);
        expect(present, `acknowledged ${line.kind} batch ${line.batch}: all ${line.size} items present`).toBe(
          line.size,
        );
        if (line.kind !== 'spans') expect(new Set(byBatch.get(line.batch))).toEqual(new Set(ack.ids));
      } else {
        unacknowledged += 1;
        expect(
          [0, line.size],
          `unacknowledged ${line.kind} batch ${line.batch}: wholly present or absent (found ${present})`,
        ).toContain(present);
      }
    }
    // Nothing appears that no batch wrote.
    expect([...byBatch.keys()].filter((batch) => !sent.has(batch))).toEqual([]);
    return unacknowledged;
  } finally {
    await client.close();
  }
}

describe('crash safety: kill -9 of the SQLite store server while a child process writes', () => {
  let dir: string;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`seeds ${SEEDS.join(', ')}: after each kill and restart every acknowledged write is there, unacknowledged batches are all-or-nothing, integrity_check ok`, async () => {
    dir = mkdtempSync(join(tmpdir(), 'agl-crash-'));
    const dbPath = join(dir, 'agl.sqlite');
    const sent = new Map<string, WriterLine>();
    const acked = new Map<string, WriterLine>();
    let server = await startStoreProcess({ dbPath });
    try {
      let unacknowledgedBefore = 0;
      for (const seed of SEEDS) {
        await writeUntilCrash(seed, server, sent, acked);
        server = await startStoreProcess({ dbPath });
        const unacknowledged = await verify(server, sent, acked);
        // 4 lanes were writing when the server died, so some batches were in flight.
        expect(unacknowledged, `seed ${seed}`).toBeGreaterThan(unacknowledgedBefore);
        unacknowledgedBefore = unacknowledged;
        const db = new Database(dbPath, { readonly: true });
        try {
          expect(db.pragma('integrity_check', { simple: true }), `seed ${seed}`).toBe('ok');
          // A connection that never asked for WAL reads it from the file: the server wrote in WAL mode.
          expect(db.pragma('journal_mode', { simple: true }), `seed ${seed}`).toBe('wal');
        } finally {
          db.close();
        }
      }
    } finally {
      await server.stop();
    }
  });
});
