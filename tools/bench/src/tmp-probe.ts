import { existsSync } from 'node:fs';
import { seedTrafficStore } from './traffic-bench';
import { SqliteStore } from '@agl/store/sqlite';
import { rewardInfos } from '../../../packages/store/src/server/routes/traffic-aggregate';
const n = Number(process.argv[2] ?? 20000);
const path = `/tmp/tb/probe-${n}.sqlite`;
const now = 1_796_600_000;
let t = performance.now();
if (!existsSync(path)) { await seedTrafficStore(path, n, now, 30 * 86400); console.log('seed', (performance.now() - t).toFixed(0)); }
const s = new SqliteStore({ path });
for (let k = 0; k < 3; k++) {
  t = performance.now(); const g = await s.queryTraffic({ since: now - 30 * 86400 + 1800 + k, until: now - 1000, bucketSeconds: 86400, omit: 'annotations' }); const tg = performance.now() - t;
  t = performance.now(); const ann: any[] = []; let worst = 0;
  for (let d = 0; d < 30; d++) { const t1 = performance.now(); ann.push(...(await s.queryTraffic({ since: now - (30 - d) * 86400, until: now - (29 - d) * 86400, sources: ['production', 'unscoped'], omit: 'groups' }))!.annotations); worst = Math.max(worst, performance.now() - t1); }
  const ta = performance.now() - t;
  t = performance.now(); const infos = rewardInfos(ann); const tr = performance.now() - t;
  console.log('groups', tg.toFixed(1), g!.groups.length, 'ann', ta.toFixed(1), ann.length, 'worst slice', worst.toFixed(1), 'infos', tr.toFixed(1), infos.length, 'rss', (process.memoryUsage().rss / 1e6).toFixed(0));
}
await s.close();
