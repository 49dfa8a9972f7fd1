// Child process of gateway-bench: the shared OpenAI test server with a fixed 20 ms latency and a fixed 200-token reply.
import { startOpenAiTestServer, toyPieces } from '@agl/testing';

const reply = 'w '.repeat(100);
if (toyPieces(reply).length !== 200) throw new Error('the bench reply must be exactly 200 toy tokens');
const llm = await startOpenAiTestServer({
  latencyMs: Number(process.env.BENCH_LATENCY_MS ?? 20),
  respond: () => ({ content: reply }),
  // The bench never reads them; kept, they would grow this process's heap all run long.
  keepRequests: false,
});
process.send?.({ type: 'ready', baseURL: llm.baseURL });
process.on('message', (m: { type: string }) => {
  if (m.type === 'cpu') process.send?.({ type: 'cpu', usage: process.cpuUsage() });
  if (m.type === 'stop') void llm.close().then(() => process.exit(0));
});
