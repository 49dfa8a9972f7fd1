import { defineConfig } from 'vitest/config';
import { isCi } from './packages/testing/src/ci-env';

export default defineConfig({
  test: {
    projects: ['packages/*', 'adapters/*', 'examples/*', 'tools/bench', 'tools/reliability'],
    allowOnly: !isCi(),
  },
});
