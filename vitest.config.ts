import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'adapters/*', 'examples/*', 'tools/bench', 'tools/reliability'],
    allowOnly: !process.env.CI,
  },
});
