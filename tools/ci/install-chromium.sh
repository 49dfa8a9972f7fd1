#!/usr/bin/env bash
# Installs Debian's chromium for the dashboard's end-to-end tests (packages/dashboard/test/dashboard.e2e.test.ts,
# driven by playwright-core with executablePath = `which chromium`). Idempotent: does nothing when chromium is present.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "install-chromium: $(chromium --version 2>/dev/null | tail -n 1) already installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y chromium
echo "install-chromium: $(chromium --version 2>/dev/null | tail -n 1) installed at $(command -v chromium)"
