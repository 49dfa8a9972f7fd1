/**
 * The README's quick start on this clone, as CI runs it right after `npm ci` (tools/ci/quick-start.sh):
 * `npx --no-install agl --help`, then every runnable block of README.md in order, in a scratch folder inside the clone,
 * against the test LLM. Writes a vitest-shaped report to tools/ci/test-artifacts/ (counted by tools/ci-summary.mjs) and
 * exits 1 when a command fails.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultRespond, startOpenAiTestServer } from '@agl/testing';
import { runCommandLine, runReadme, type CommandResult } from './harness/readme-blocks';
import { REPO_ROOT } from './harness/workspace-packages';

const started = Date.now();
const work = join(REPO_ROOT, '.quick-start');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const llm = await startOpenAiTestServer({
  respond: (r) =>
    /Capital of France/u.test(r.messages.at(-1)?.content ?? '') ? { content: 'Paris' } : defaultRespond(r),
});
// npm_config_offline: `npx` must find this clone's `agl`, never ask the registry.
const env = {
  ...process.env,
  OPENAI_BASE_URL: llm.baseURL,
  OPENAI_API_KEY: 'sk-quick-start',
  AGL_STORE_URL: '',
  AGL_STORE_TOKEN: '',
  npm_config_offline: 'true',
  NODE_OPTIONS: '',
};
const log = (r: CommandResult): void => {
  process.stdout.write(`${r.ok ? 'ok  ' : 'FAIL'} ${r.seconds.toFixed(1)}s  ${r.command}\n`);
  if (!r.ok) process.stdout.write(`${r.output.trim().split('\n').slice(-30).join('\n')}\n`);
};
const results: CommandResult[] = [];
try {
  const help = await runCommandLine('npx --no-install agl --help', { cwd: work, env, timeoutMs: 120_000 });
  if (help.ok && !/\bstore\b/u.test(help.output))
    Object.assign(help, { ok: false, output: `${help.output}\n(the help does not list the store command)` });
  results.push(help);
  log(help);
  if (help.ok)
    results.push(
      ...(await runReadme(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'), { cwd: work, env, onResult: log })),
    );
} finally {
  await llm.close();
}
const failed = results.filter((r) => !r.ok);
const report = {
  numPassedTests: results.length - failed.length,
  numFailedTests: failed.length,
  numPendingTests: 0,
  testResults: [
    {
      name: join(REPO_ROOT, 'README.md'),
      status: failed.length ? 'failed' : 'passed',
      assertionResults: results.map((r) => ({
        fullName: `quick start: ${r.command}`,
        status: r.ok ? 'passed' : 'failed',
        failureMessages: r.ok ? [] : [r.output.trim().split('\n').slice(-8).join('\n')],
      })),
    },
  ],
};
mkdirSync(join(REPO_ROOT, 'tools/ci/test-artifacts'), { recursive: true });
writeFileSync(join(REPO_ROOT, 'tools/ci/test-artifacts/quick-start-results.json'), JSON.stringify(report, null, 2));
console.log(
  `quick start: ${report.numPassedTests} passed, ${report.numFailedTests} failed in ${((Date.now() - started) / 1000).toFixed(1)}s`,
);
if (failed.length === 0) rmSync(work, { recursive: true, force: true });
process.exit(failed.length ? 1 : 0);
