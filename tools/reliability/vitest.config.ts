import { aglVitestProject } from '../vitest-preset';

// Real child processes and servers share 2 loaded cores: run files one at a time so timings stay honest. The packaging
// check (`*.pack.test.ts`) needs built packages and runs in `npm run test:build` (vitest.pack.config.ts).
export default aglVitestProject('reliability', {
  test: {
    exclude: ['**/node_modules/**', '**/.pack-*/**', 'src/**/*.pack.test.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
