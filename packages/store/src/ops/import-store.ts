import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Rollout, Span } from '@agl/core/schema';
import { UserError } from '@agl/core/errors';
import type { AsyncStorageTx } from '../postgres/async-storage';
import { DUMP_FORMAT, DUMP_VERSION, type DumpCounts, type DumpLine } from './dump-format';
import { describeSpec, openOpsDatabase } from './ops-database';

/** Options of {@link importStore}. */
export interface ImportStoreOptions {
  /** Target store: a SQLite file (created if missing) or a `postgres://` URL. It must be empty. */
  db: string;
  /** A dump written by {@link exportStore}. */
  in: string;
}

const SPAN_BATCH = 500;

/**
 * Loads a dump into an empty store in one transaction (all or nothing), keeping ids, statuses, timestamps, insertion
 * order, the queue and the sequence counters, so every query answers as it did on the source store.
 */
export async function importStore(options: ImportStoreOptions): Promise<DumpCounts> {
  if (!existsSync(options.in))
    throw new UserError(`Dump file ${options.in} does not exist. Write one with \`agl store export --out <file>\`.`);
  const opened = await openOpsDatabase({ spec: options.db, create: true });
  try {
    return await opened.db.transaction(async (s) => {
      const existing = (await s.countRollouts()) + (await s.countResources()) + (await s.countWorkers());
      if (existing > 0) {
        throw new UserError(
          `The target store ${await describeSpec(options.db)} is not empty (${existing} rollouts, resources or workers). Import into a new SQLite file or an empty PostgreSQL schema (?schema=name).`,
        );
      }
      return load(s, options.in);
    });
  } finally {
    await opened.close();
  }
}

async function load(s: AsyncStorageTx, path: string): Promise<DumpCounts> {
  const counts: DumpCounts = { rollouts: 0, attempts: 0, spans: 0, resources: 0, workers: 0, sequences: 0, queued: 0 };
  let latest: string | null = null;
  let ended: DumpCounts | null = null;
  let lineNo = 0;
  // Rollouts and spans are inserted in batches, one kind at a time, so that the file's order is kept.
  let batch: { kind: 'rollouts'; items: Rollout[] } | { kind: 'spans'; items: Span[] } | null = null;
  const flush = async (): Promise<void> => {
    if (batch?.kind === 'rollouts') await s.insertRollouts(batch.items);
    if (batch?.kind === 'spans') await s.insertSpans(batch.items);
    batch = null;
  };
  const add = async <K extends 'rollouts' | 'spans'>(
    kind: K,
    item: K extends 'rollouts' ? Rollout : Span,
  ): Promise<void> => {
    if (batch?.kind !== kind) {
      await flush();
      batch = kind === 'rollouts' ? { kind, items: [] } : { kind: 'spans', items: [] };
    }
    (batch.items as Array<typeof item>).push(item);
    counts[kind] += 1;
    if (batch.items.length >= SPAN_BATCH) await flush();
  };
  // Every other write goes after the pending batch, so the file's order is kept.
  const write = async (count: keyof DumpCounts, n: number, op: () => Promise<unknown>): Promise<void> => {
    await flush();
    await op();
    counts[count] += n;
  };
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const text of lines) {
    lineNo += 1;
    if (text.trim() === '') continue;
    let line: DumpLine;
    try {
      line = JSON.parse(text) as DumpLine;
    } catch (error) {
      throw new UserError(
        `${path}:${lineNo} is not valid JSON (${(error as Error).message}). Is this a dump from \`agl store export\`?`,
      );
    }
    if (lineNo === 1) {
      if (line.kind !== 'header' || line.format !== DUMP_FORMAT) {
        throw new UserError(
          `${path} is not an AGL store dump (first line lacks "format":"${DUMP_FORMAT}"). Write one with \`agl store export\`.`,
        );
      }
      if (line.version > DUMP_VERSION)
        throw new UserError(
          `${path} has dump version ${line.version}, newer than this AGL (${DUMP_VERSION}). Upgrade @agl/store.`,
        );
      continue;
    }
    if (ended) throw new UserError(`${path}:${lineNo}: data after the closing "end" line. The file is damaged.`);
    switch (line.kind) {
      case 'resources':
        await write('resources', 1, () => s.putResources(line.value));
        break;
      case 'latestResources':
        latest = line.value;
        break;
      case 'worker':
        await write('workers', 1, () => s.putWorker(line.value));
        break;
      case 'rollout':
        await add('rollouts', line.value);
        break;
      case 'attempt':
        await write('attempts', 1, () => s.insertAttempt(line.value));
        break;
      case 'span':
        await add('spans', line.value);
        break;
      case 'sequence':
        await write('sequences', 1, () => s.raiseSequence(...line.value));
        break;
      case 'queue':
        await write('queued', line.value.length, () => s.enqueue(line.value));
        break;
      case 'end':
        ended = line.counts;
        break;
      default:
        throw new UserError(
          `${path}:${lineNo}: unknown line kind "${(line as { kind: unknown }).kind}". The dump is from a newer AGL, or damaged.`,
        );
    }
  }
  await flush();
  if (!ended)
    throw new UserError(`${path} ends without its closing "end" line: the dump is truncated. Export it again.`);
  for (const key of Object.keys(counts) as Array<keyof DumpCounts>) {
    if (counts[key] !== ended[key]) {
      throw new UserError(
        `${path}: read ${counts[key]} ${key} but the dump announces ${ended[key]}. The file is damaged; export it again.`,
      );
    }
  }
  await s.setLatestResourcesId(latest);
  return counts;
}
