// Child process of hostile-body-bench: a gateway with a memory store and no reachable backend (the hostile body must
// be refused before any backend call). Reports its peak RSS, CPU time and longest event-loop delay on request.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { MemoryStore } from '@agl/store';
import { startGateway } from '../src/index';

const gateway = await startGateway({ store: new MemoryStore(), backend: 'http://127.0.0.1:9/v1', port: 0 });
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
const cpu0 = process.cpuUsage();
process.send?.({ type: 'ready', url: gateway.url, rssMiB: process.memoryUsage().rss / 2 ** 20 });
process.on('message', (m: { type: string }) => {
  if (m.type === 'rss') {
    const cpu = process.cpuUsage(cpu0);
    process.send?.({
      type: 'rss',
      maxRssMiB: process.resourceUsage().maxRSS / 1024,
      cpuMs: (cpu.user + cpu.system) / 1000,
      maxLoopDelayMs: delay.max / 1e6,
    });
  }
  if (m.type === 'stop') void gateway.close().then(() => process.exit(0));
});
