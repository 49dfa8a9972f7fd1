import { aglVitestProject } from '../../tools/vitest-preset';

const config = aglVitestProject('tiny-llm', { test: { testTimeout: 60_000 } });

// vitest passes ssr.resolve.conditions to the test process as `--conditions`. With `import` among them, Node's own
// `require('long')` inside tfjs's CommonJS bundle picks long's ESM build and tfjs fails at load
// ("Long.fromString is not a function"). Vite adds import/require per import kind anyway, so drop it here.
const ssrResolve = (config as { ssr?: { resolve?: { conditions?: string[] } } }).ssr?.resolve;
if (ssrResolve?.conditions)
  ssrResolve.conditions = ssrResolve.conditions.filter((c) => c !== 'import' && c !== 'module');

export default config;
