import { z } from 'zod';
import { AglError } from '../errors/index';
import { JsonObject, JsonValue, type SpanInput } from '../schema/index';
import type { LightningStore } from './lightning-store';

const Id = z.string().min(1);
const Time = z.number().finite().positive();

/**
 * One record of a production recorder (`@agl/client`'s `observe`), as it travels from the service to the store:
 * a rollout's start (with the ids and time the recorder chose), a batch of its spans (sequence ids assigned by the
 * recorder), and its end.
 */
export const ProductionRecord = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('start'),
    rolloutId: Id,
    attemptId: Id,
    input: JsonValue,
    metadata: JsonObject.default({}),
    resourcesId: z.string().min(1).nullable().optional(),
    startTime: Time,
  }),
  z.object({ kind: z.literal('spans'), spans: z.array(z.looseObject({ rolloutId: Id, attemptId: Id })) }),
  z.object({
    kind: z.literal('end'),
    rolloutId: Id,
    attemptId: Id,
    status: z.enum(['succeeded', 'failed']),
    endTime: Time,
  }),
]);
/** @see {@link ProductionRecord} */
export type ProductionRecord = z.input<typeof ProductionRecord>;

/** What {@link applyRecords} did: records applied, and the ones refused (each with its index and why). */
export interface ApplyRecordsResult {
  applied: number;
  rejected: Array<{ index: number; kind: string; errorType: string; detail: string }>;
}

function describe(error: unknown): { errorType: string; detail: string } {
  if (AglError.isInstance(error)) return { errorType: error.name, detail: error.message };
  throw error;
}

async function addSpansGrouped(store: LightningStore, spans: SpanInput[]): Promise<void> {
  try {
    await store.addSpans(spans);
  } catch (error) {
    // One rollout the store does not know must not keep the other rollouts' spans out: retry per rollout.
    const groups = new Map<string, SpanInput[]>();
    for (const span of spans) {
      const group = groups.get(span.rolloutId);
      if (group) group.push(span);
      else groups.set(span.rolloutId, [span]);
    }
    if (groups.size === 1) throw error;
    let first: unknown = null;
    for (const group of groups.values()) {
      try {
        await store.addSpans(group);
      } catch (groupError) {
        first ??= groupError;
      }
    }
    if (first !== null) throw first;
  }
}

type ParsedRecord = z.output<typeof ProductionRecord>;

/** The `startRollout` request of a production start record (one mapping for every store's records path). */
export function startRequestOf(record: Extract<ParsedRecord, { kind: 'start' }>) {
  return {
    rolloutId: record.rolloutId,
    attemptId: record.attemptId,
    input: record.input,
    metadata: record.metadata,
    startTime: record.startTime,
    // The resources that served the request, decided once by the recorder; none (null) when the defaults served.
    resourcesId: record.resourcesId ?? null,
    keepResourcesId: true,
  };
}

async function applyOne(store: LightningStore, record: ParsedRecord): Promise<void> {
  if (record.kind === 'start') {
    const started = await store.startRollout(startRequestOf(record));
    if (started.attempt.status === 'preparing') {
      await store.updateAttempt(record.rolloutId, record.attemptId, { status: 'running' });
    }
  } else if (record.kind === 'spans') {
    if (record.spans.length > 0) await addSpansGrouped(store, record.spans as SpanInput[]);
  } else {
    await store.updateAttempt(record.rolloutId, record.attemptId, { status: record.status, endTime: record.endTime });
  }
}

/** The rollouts a record touches (a `spans` record may hold several). */
function rolloutsOf(record: ParsedRecord): string[] {
  if (record.kind !== 'spans') return [record.rolloutId];
  return [...new Set(record.spans.map((span) => span.rolloutId))];
}

/**
 * Applies production records to a store, each rollout's in order. Idempotent, so a recorder may resend a batch whose
 * answer it never saw: a start of an existing rollout (same attempt) changes nothing, spans already stored are skipped,
 * and an end repeats the same status and time. A start creates the rollout with mode `null` and its attempt `running`.
 *
 * The records of different rollouts are applied side by side (a record waits only for the earlier records of the
 * rollouts it touches), so a store that commits the writes of one event-loop turn together (SQLite) commits a batch's
 * rollouts in a few transactions, not one per record.
 *
 * A record the store refuses (bad shape, unknown rollout, conflicting ids) is reported in `rejected` (by index) and the
 * rest still apply, so one bad record never blocks a recorder's queue; a store fault (not an `AglError`) is thrown
 * once every record has settled.
 */
export async function applyRecords(store: LightningStore, records: readonly unknown[]): Promise<ApplyRecordsResult> {
  const result: ApplyRecordsResult = { applied: 0, rejected: [] };
  /** Per rollout, the last record applied to it (settled either way). */
  const tails = new Map<string, Promise<unknown>>();
  const runs: Array<Promise<void>> = [];
  for (const [index, raw] of records.entries()) {
    const parsed = ProductionRecord.safeParse(raw);
    const kind = typeof (raw as { kind?: unknown })?.kind === 'string' ? String((raw as { kind: string }).kind) : '?';
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue?.path.join('.') ?? '';
      result.rejected.push({
        index,
        kind,
        errorType: 'AGL_ValidationError',
        detail: `records[${index}]${path ? `.${path}` : ''}: ${issue?.message ?? 'invalid record'}`,
      });
      continue;
    }
    const record = parsed.data;
    const owners = rolloutsOf(record);
    const before = owners.flatMap((id) => tails.get(id) ?? []);
    const run = (before.length === 0 ? Promise.resolve() : Promise.all(before))
      .then(() => applyOne(store, record))
      .then(
        () => {
          result.applied += 1;
        },
        (error: unknown) => {
          result.rejected.push({ index, kind: record.kind, ...describe(error) });
        },
      );
    const settled = run.catch(() => undefined);
    for (const id of owners) tails.set(id, settled);
    runs.push(run);
  }
  const outcomes = await Promise.allSettled(runs);
  const fault = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (fault) throw fault.reason;
  result.rejected.sort((a, b) => a.index - b.index);
  return result;
}
