import { aglVitestProject } from '../../tools/vitest-preset';

export default aglVitestProject('support-bot', { test: { testTimeout: 150_000, hookTimeout: 90_000 } });
