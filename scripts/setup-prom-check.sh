#!/usr/bin/env bash
# Builds scripts/prom-check (a tiny Go program around Prometheus's own text-format parser,
# github.com/prometheus/common/expfmt) into .cache/prom-check/prom-check (git-ignored). The tests of
# packages/opentelemetry pipe the pages @opentelemetry/exporter-prometheus writes through it.
#
#   bash scripts/setup-prom-check.sh                    # build, or do nothing if the binary matches the sources
#   PROM_CHECK_BIN=/some/path bash scripts/setup-prom-check.sh   # other location (the tests read PROM_CHECK_BIN too)
#
# Idempotent: a stamp next to the binary holds the checksum of go.mod, go.sum and main.go; when it matches, it exits
# at once. Needs Go >= 1.26 (https://go.dev/dl/) and the Go module proxy (or GOPROXY / GOFLAGS=-mod=vendor of your
# own); the dependencies are pinned by go.sum and verified against it (-mod=readonly).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/scripts/prom-check"
bin="${PROM_CHECK_BIN:-$root/.cache/prom-check/prom-check}"
stamp="$bin.sha256"

fail() {
  printf 'setup-prom-check: %s\n' "$1" >&2
  exit 1
}

sum="$(cd "$src" && cat go.mod go.sum main.go | sha256sum | cut -d' ' -f1)"
if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
  echo "setup-prom-check: $bin is up to date"
  exit 0
fi

command -v go >/dev/null 2>&1 || fail "'go' not found. Install Go >= 1.26 (https://go.dev/dl/), then re-run: bash scripts/setup-prom-check.sh"

echo "setup-prom-check: building $bin"
mkdir -p "$(dirname "$bin")"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# GOTOOLCHAIN=local: an older Go fails with its own message instead of downloading a newer toolchain.
if ! (cd "$src" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -trimpath -o "$bin" .) >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  fail "go build failed (see above). It needs Go >= 1.26 ('go version': $(go version 2>/dev/null || echo none)) and the module proxy (GOPROXY)."
fi
printf '%s\n' "$sum" >"$stamp"
echo "setup-prom-check: ready: $bin"
