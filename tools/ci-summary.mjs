// Sums the vitest JSON reports (and the quick start's report of the same shape) of every project into one closing "N passed, N failed" line, after the name and
// first lines of each failure. Also counts the unhandled errors each vitest run wrote (`*-unhandled.json`: they fail a run whose tests all passed) and
// names the steps of `.ci/run` that failed (AGL_CI_FAILED_STEPS, one per line), so the tail of a CI log says why a run failed.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

let passed = 0;
let failed = 0;
let skipped = 0;
let projects = 0;
let unhandled = 0;
const failures = [];
for (const group of ['packages', 'adapters', 'examples', 'tools']) {
  if (!existsSync(group)) continue;
  for (const name of readdirSync(group)) {
    const dir = join(group, name, 'test-artifacts');
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('-unhandled.json'))) {
      for (const error of JSON.parse(readFileSync(join(dir, file), 'utf8')).errors ?? []) {
        unhandled += 1;
        failures.push(
          `UNHANDLED ERROR in ${join(group, name)} (${file}): ${error.name}: ${error.message}\n    ${error.stack.split('\n').slice(0, 8).join('\n    ')}`,
        );
      }
    }
    // vitest-results.json (npm test), vitest-pack-results.json (npm run test:build), quick-start-results.json (tools/ci).
    for (const report of readdirSync(dir)
      .filter((f) => f.endsWith('results.json'))
      .sort()
      .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')))) {
      projects += 1;
      passed += report.numPassedTests;
      failed += report.numFailedTests;
      skipped += report.numPendingTests + (report.numTodoTests ?? 0);
      for (const result of report.testResults ?? []) {
        const where = relative(process.cwd(), result.name);
        for (const test of result.assertionResults ?? []) {
          if (test.status !== 'failed') continue;
          const message = (test.failureMessages ?? []).join('\n').split('\n').slice(0, 8).join('\n    ');
          failures.push(`FAILED ${where} > ${test.fullName}\n    ${message}`);
        }
        if (result.status === 'failed' && (result.assertionResults ?? []).length === 0) {
          failures.push(`FAILED ${where}: ${String(result.message ?? '').split('\n')[0]}`);
        }
      }
    }
  }
}
if (projects === 0) {
  console.log('0 passed, 1 failed (no vitest report found)');
  process.exit(1);
}
// Each failed step is a line, followed by indented lines of its log that say why (a lint or type error, a failed Nx task).
const stepLines = (process.env.AGL_CI_FAILED_STEPS ?? '').split('\n').filter((line) => line.trim());
const failedSteps = stepLines.filter((line) => !/^\s/.test(line)).length;
for (const line of stepLines) failures.push(/^\s/.test(line) ? line : `FAILED STEP ${line}`);
// A failed step with no failed test nor unhandled error behind it (lint, format, typecheck, a build) counts as one failure.
const total = failed + unhandled || failedSteps;
// Failures are printed last, so the tail of a CI log names them.
for (const failure of failures) console.log(failure);
console.log(`${passed} passed, ${total} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(total > 0 ? 1 : 0);
