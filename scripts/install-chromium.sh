#!/usr/bin/env bash
# Installs Debian's chromium for the browser test of GET /docs (test/api/docs.test.ts), which opens
# the page headless. Does nothing when chromium is already on PATH, so CI and a dev machine can run
# it every time. Needs root (or sudo) and apt-get.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "chromium already installed: $(command -v chromium)"
  exit 0
fi
SUDO=''
if [ "$(id -u)" -ne 0 ]; then SUDO='sudo'; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium
chromium --version
