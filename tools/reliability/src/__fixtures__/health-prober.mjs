/**
 * Probes `GET <url>/v1/agl/health` every 20 ms in its own process (so the test's own work of sending a large body does
 * not delay the probes) and prints `HEALTH_MAX_MS=<n>` (the slowest probe) when stdin closes or says "stop".
 */
import { setTimeout as delay } from 'node:timers/promises';

const url = `${process.argv[2]}/v1/agl/health`;
let max = 0;
let stopping = false;
process.stdin.on('data', () => {
  stopping = true;
});
process.stdin.on('end', () => {
  stopping = true;
});
process.stdout.write('PROBING\n');
while (!stopping) {
  const started = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  await res.arrayBuffer();
  max = Math.max(max, performance.now() - started);
  await delay(20);
}
process.stdout.write(`HEALTH_MAX_MS=${Math.round(max)}\n`);
