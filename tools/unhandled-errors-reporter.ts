import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Reporter, SerializedError, TestModule, Vitest } from 'vitest/node';

/**
 * A vitest reporter that writes the run's unhandled errors (an uncaught exception or an unhandled rejection outside any
 * test: vitest fails the run with every test passed) to `outputFile`, relative to the project root. `.ci/run`'s closing
 * summary counts and names them, so a run that fails only on one of these says why at the end of the log.
 */
export class UnhandledErrorsReporter implements Reporter {
  readonly #outputFile: string;
  #root = process.cwd();

  constructor(options: { outputFile: string }) {
    this.#outputFile = options.outputFile;
  }

  onInit(vitest: Vitest): void {
    this.#root = vitest.config.root;
  }

  onTestRunEnd(_modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const file = resolve(this.#root, this.#outputFile);
    mkdirSync(dirname(file), { recursive: true });
    const errors = unhandledErrors.map((error) => ({
      name: String(error.name ?? 'Error'),
      message: String(error.message ?? ''),
      stack: String(error.stack ?? '')
        .split('\n')
        .slice(0, 12)
        .join('\n'),
    }));
    writeFileSync(file, JSON.stringify({ errors }, null, 2));
  }
}
