#!/usr/bin/env bash
# Installs the Debian packages the tests use besides Node: chromium, for the browser test of
# GET /docs (test/api/docs.test.ts, headless), and curl and jq, which the README's walkthrough
# uses (test/api/walkthrough.test.ts runs it as written), and sqlite3, with which
# test/stack/ferretdb-index-spelling.test.ts edits an embedded database file as an older build
# left it. Installs only what is missing, so CI and a dev machine can run it every time. Needs root (or sudo) and apt-get.
set -euo pipefail
missing=()
for tool in chromium curl jq sqlite3; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "test tools already installed: chromium, curl, jq, sqlite3"
  exit 0
fi
SUDO=''
if [ "$(id -u)" -ne 0 ]; then SUDO='sudo'; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
chromium --version
