import { call, type Rule } from './storage-ops';
import type { Plan } from './store-rules';
import { rollupRewards } from './traffic-rewards';
import { TRAFFIC_HOUR, type TrafficRows, type TrafficRowsQuery } from './traffic-rows';

/** Stale hours of the traffic reward rollup recomputed per write transaction. */
const REFRESH_HOURS = 24;
/** Delta rows of the hourly traffic counts (PostgreSQL) a read sums before it folds them into the counts. */
const TRAFFIC_COMPACT_AT = 1000;

/**
 * `RuleStore.queryTraffic`: the storage's traffic rows of a window in one read. When the read names stale hours of the
 * reward rollup, they are recomputed a day at a time (other calls served in between: a file fresh from migration) and
 * the window read again; when it summed many delta rows of the hourly counts (PostgreSQL), they are folded after.
 */
export async function readTraffic(
  query: TrafficRowsQuery,
  read: <T>(rule: () => Rule<T>) => Promise<T>,
  write: <T>(plan: Plan<T>) => Promise<T>,
): Promise<TrafficRows | null> {
  const [from, to] = [Math.ceil(query.since / TRAFFIC_HOUR), Math.floor(query.until / TRAFFIC_HOUR)];
  let rows = await read(() => call('trafficRows', query));
  const stale = rows?.staleHours ?? [];
  if (stale.length > 0) {
    for (let i = 0; i < stale.length;) {
      const first = stale[i]!;
      while (i < stale.length && stale[i]! < first + REFRESH_HOURS) i += 1;
      await write(() => refreshTrafficRewards(first, Math.min(to, first + REFRESH_HOURS)));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    rows = await read(() => call('trafficRows', query));
  }
  if ((rows?.deltaRows ?? 0) >= TRAFFIC_COMPACT_AT) await write(() => call('compactTrafficHours', from, to));
  return rows;
}

/**
 * Recomputes the traffic reward rollup of the stale hours in `[fromHour, toHour)` from their annotation rows, in one
 * write transaction, one run of consecutive stale hours per read. The stale marks are taken (deleted) before the
 * annotation rows are read: a write committed before the take is in the read, and one committed after it leaves a new
 * mark for the next refresh. A storage without a rollup does nothing.
 */
export function* refreshTrafficRewards(fromHour: number, toHour: number): Rule<void> {
  const stale = yield* call('takeStaleTrafficHours', fromHour, toHour);
  if (stale === null || stale.length === 0) return;
  for (let i = 0; i < stale.length;) {
    let j = i + 1;
    while (j < stale.length && stale[j] === stale[j - 1]! + 1) j += 1;
    const since = stale[i]! * TRAFFIC_HOUR;
    const until = (stale[j - 1]! + 1) * TRAFFIC_HOUR;
    const rows = yield* call('trafficRows', { since, until, omit: 'groups' });
    yield* call('putTrafficRewards', stale.slice(i, j), rollupRewards(rows?.annotations ?? []));
    i = j;
  }
}
