import { aglVitestProject } from '../../tools/vitest-preset';

export default aglVitestProject('support-bot', { test: { testTimeout: 90_000, hookTimeout: 60_000 } });
