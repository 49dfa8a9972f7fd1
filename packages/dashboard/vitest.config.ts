import react from '@vitejs/plugin-react';
import { aglVitestProject } from '../../tools/vitest-preset';

// Component tests (*.test.tsx) run in happy-dom; the end-to-end test (test/*.e2e.test.ts) drives Chromium from Node.
export default aglVitestProject('dashboard', {
  plugins: [react()],
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/**/*.test.ts'],
  },
});
