import { defineConfig, mergeConfig } from 'vitest/config';
import { aglReporters, aglVitestProject } from '../vitest-preset';

// `npm run test:build`: the packaging check needs built dist/ folders, so it runs after `nx run-many -t build`.
// (mergeConfig concatenates arrays, so `include` is set after the merge.)
const config = mergeConfig(
  aglVitestProject('reliability-pack'),
  defineConfig({ test: { testTimeout: 300_000, hookTimeout: 300_000 } }),
);
config.test!.include = ['src/**/*.pack.test.ts'];
config.test!.exclude = ['**/node_modules/**'];
config.test!.reporters = aglReporters('vitest-pack');
export default config;
