import { defineConfig, mergeConfig, type ViteUserConfig } from 'vitest/config';
import { isCi } from '../packages/testing/src/ci-env';

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
      reporters: ['default', ['json', { outputFile: 'test-artifacts/vitest-results.json' }]],
    },
  });
  return mergeConfig(base, overrides);
}
