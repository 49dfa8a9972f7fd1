/**
 * Whether the tests run in CI: the `CI` variable is set to anything but `''`, `0` or `false` (GitHub Actions and most
 * CI systems set `CI=true`; some set `1` or their own name). The one place tests decide skip-vs-fail on CI: outside CI
 * a test that needs a missing service (PostgreSQL, a browser) is skipped with a message; in CI it fails.
 *
 * @example
 * const enabled = problem === null || isCi();
 */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? '').trim().toLowerCase();
  return value !== '' && value !== '0' && value !== 'false';
}
