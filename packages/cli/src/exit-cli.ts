/**
 * The one way the `agl` process exits. `process.exit` ends the process at once, and a write to a pipe that the reader
 * has not emptied yet is still queued then: `agl … --json | node -e …` was cut at the pipe's 65,536 bytes. The helper
 * waits until every byte written to stdout and stderr has left the process (or the reader went away), then exits.
 */

/** A writable stream as the helper needs it (`process.stdout` / `process.stderr`). */
export interface FlushableStream {
  readonly writable: boolean;
  readonly destroyed: boolean;
  write(chunk: string, callback: (error?: Error | null) => void): boolean;
  once(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Resolves once everything written so far to `stream` has been handed to the OS (or the stream failed or closed: a
 * reader that quit early, `EPIPE`). An empty write's callback runs after every write queued before it.
 */
export function flushStream(stream: FlushableStream): Promise<void> {
  if (stream.destroyed || !stream.writable) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      stream.off('error', done);
      resolve();
    };
    // A closed reader makes the stream emit `error` (EPIPE); with this listener it is not an uncaught exception.
    stream.once('error', done);
    try {
      stream.write('', () => done());
    } catch {
      done();
    }
  });
}

/** Flushes every stream in `streams` (stdout and stderr by default). */
export async function flushOutput(
  streams: readonly FlushableStream[] = [process.stdout, process.stderr],
): Promise<void> {
  await Promise.all(streams.map((stream) => flushStream(stream)));
}

/**
 * Exits the `agl` process with `code` once stdout and stderr are flushed, whatever they are (pipe, file, TTY).
 * Every exit of the CLI goes through here (`bin.ts`, a second Ctrl-C in a server command): timers a command left
 * behind (an abandoned long poll) must not keep the process alive, and output must not be cut.
 */
export async function exitCli(code: number, streams?: readonly FlushableStream[]): Promise<never> {
  process.exitCode = code;
  await flushOutput(streams);
  process.exit(code);
}
