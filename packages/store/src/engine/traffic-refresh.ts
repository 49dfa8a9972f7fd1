import { call, type Rule } from './storage-ops';
import { rollupRewards } from './traffic-rewards';
import { TRAFFIC_HOUR } from './traffic-rows';

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
