// Runs an ordinary agent file (no AGL code) and ends the process the way real programs end badly. Used by the adapter
// conformance suite's failure cases, untraced and with a preload:
//   node [--import @agl/<fw>/register] failure-harness.ts <mode> <agentFile> [agent args...]
// The agent file runs as the main module would (process.argv[1] is the agent file). Its run fails (the model answers
// 400 mid-run) or hangs (SIGTERM: the test sends it while the second call is in flight). Modes:
//   crash          the failure is rethrown from a timer (an uncaught exception)
//   exit-in-catch  run().catch((e) => { console.error(...); process.exit(1) })
//   tla            await run() at top level (a rejected top-level await)
//   unhandled      run() not awaited (an unhandled rejection)
//   sigterm        run() awaited; the process gets SIGTERM from the test (no handler of its own)
import { pathToFileURL } from 'node:url';

const [mode, agentFile, ...agentArgs] = process.argv.slice(2);
if (!mode || !agentFile) throw new Error('usage: failure-harness.ts <mode> <agentFile> [args...]');
process.argv = [process.argv[0]!, agentFile, ...agentArgs];
const run = (): Promise<unknown> => import(pathToFileURL(agentFile).href);

if (mode === 'crash') {
  run().catch((error: unknown) =>
    setTimeout(() => {
      throw error;
    }),
  );
} else if (mode === 'exit-in-catch') {
  run().catch((error: unknown) => {
    // eslint-disable-next-line no-console -- what the app prints is part of what the tests compare
    console.error('agent failed:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
} else if (mode === 'unhandled') {
  void run();
} else {
  await run();
}
