import { defineProject, mergeConfig, type ViteUserConfig } from 'vitest/config';

/** Shared per-package vitest settings: resolve workspace packages to their TypeScript sources. */
export function aglVitestProject(name: string, overrides: ViteUserConfig = {}): ViteUserConfig {
  const base = defineProject({
    resolve: { conditions: ['@agl/source', 'node', 'import', 'default'] },
    ssr: { resolve: { conditions: ['@agl/source', 'node', 'import', 'default'], externalConditions: ['@agl/source'] } },
    test: {
      name,
      environment: 'node',
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 30_000,
      allowOnly: !process.env.CI,
      reporters: ['default', ['json', { outputFile: 'test-artifacts/vitest-results.json' }]],
    },
  });
  return mergeConfig(base, overrides);
}
