#!/usr/bin/env bash
# Runs the test suite (the README's test command, `npm test`) again under other Node.js majors.
#
# Usage: scripts/test-other-nodes.sh 22 24
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
for major in "$@"; do
  bin="$(bash scripts/install-node.sh "$major")"
  echo "=== npm test under Node $("$bin/node" --version)"
  PATH="$bin:$PATH" npm test
  "$bin/node" scripts/print-test-summary.mjs
done
