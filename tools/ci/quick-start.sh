#!/usr/bin/env bash
# The README's quick start, in order, on this clone right after `npm ci` (no other build step): `npx --no-install agl
# --help`, then every runnable block of README.md (```ts file=… blocks written, ```bash run commands run) against the
# test LLM. The result lands in tools/ci/test-artifacts/quick-start-results.json, counted in the closing summary.
set -uo pipefail
cd "$(dirname "$0")/../.."
exec node --conditions=@agl/source --import tsx tools/reliability/src/quick-start-main.ts
