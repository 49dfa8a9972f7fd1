import { defineConfig, mergeConfig, type ViteUserConfig } from 'vitest/config';
import { isCi } from '../packages/testing/src/ci-env';
import { UnhandledErrorsReporter } from './unhandled-errors-reporter';

/**
 * Shared per-package vitest settings: resolve workspace packages to their TypeScript sources (the `@agl/source`
 * export condition), and write a JSON report that `.ci/run` sums into its closing line. Vite adds `import` and
 * `default` itself; naming them here would also hand them to Node for externalised CommonJS packages (tfjs breaks).
 */
export function aglVitestProject(name: string, overrides: ViteUserConfig = {}): ViteUserConfig {
  const base = defineConfig({
    resolve: { conditions: ['@agl/source', 'node'] },
    ssr: { resolve: { conditions: ['@agl/source', 'node'], externalConditions: ['@agl/source'] } },
    test: {
      name,
      environment: 'node',
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 30_000,
      allowOnly: !isCi(),
      reporters: aglReporters('vitest'),
    },
  });
  return mergeConfig(base, overrides);
}

/**
 * The reporters of a run whose reports `.ci/run` sums: the console, `test-artifacts/<prefix>-results.json` (vitest's
 * JSON report) and `test-artifacts/<prefix>-unhandled.json` (errors outside any test, which fail a run whose tests all
 * passed).
 */
export function aglReporters(prefix: string): NonNullable<NonNullable<ViteUserConfig['test']>['reporters']> {
  return [
    'default',
    ['json', { outputFile: `test-artifacts/${prefix}-results.json` }],
    new UnhandledErrorsReporter({ outputFile: `test-artifacts/${prefix}-unhandled.json` }),
  ];
}
