import { exitCli } from '../exit-cli';
import type { CliIo } from './output';

/**
 * Keeps a server command alive until SIGINT or SIGTERM, then runs `shutdown` once and resolves. A second signal
 * exits at once with code 130; a failing shutdown sets exit code 1. Shared by `agl store serve` and
 * `agl gateway serve`.
 */
export function serveUntilSignal(options: {
  io: CliIo;
  /** Log prefix, e.g. `agl store`. */
  label: string;
  /** What the shutdown does, e.g. `draining requests and closing the store`. */
  stopping: string;
  shutdown: () => Promise<void>;
}): Promise<void> {
  const { io, label } = options;
  return new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        io.err(`${label}: ${signal} again, exiting without waiting.`);
        void exitCli(130);
        return;
      }
      stopping = true;
      io.err(`${label}: ${signal} received, ${options.stopping}...`);
      void options
        .shutdown()
        .then(() => io.err(`${label}: stopped cleanly.`))
        .catch((error: unknown) => {
          io.err(`${label}: error while stopping: ${(error as Error).message}`);
          process.exitCode = 1;
        })
        .finally(() => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
