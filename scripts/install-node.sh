#!/usr/bin/env bash
# Installs a Node.js binary from the npm registry into an ignored cache folder and prints its bin directory.
#
# Usage: scripts/install-node.sh <major>          e.g. scripts/install-node.sh 22
#
# The `node` package (e.g. node@22) only ships a preinstall script that fetches the platform package
# `node-<os>-<arch>`, with os (linux, darwin) and arch (x64, arm64) taken from this machine; npm 11 does not run
# dependency install scripts unless approved, so this script installs that platform package directly. It is not a devDependency on purpose: a `node` binary in node_modules/.bin would
# shadow the system one in every npm script.
set -euo pipefail
major="${1:?usage: install-node.sh <major>}"
case "$major" in
  22) version=22.23.3 ;;
  24) version=24.21.0 ;;
  *) echo "install-node.sh: no pinned version for Node $major (edit scripts/install-node.sh)" >&2; exit 2 ;;
esac
case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "install-node.sh: unsupported operating system $(uname -s) (linux and darwin are supported)" >&2; exit 2 ;;
esac
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) echo "install-node.sh: unsupported architecture $(uname -m)" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.cache/node/$version"
bin="$dir/node_modules/node-$os-$arch/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node-$os-$arch@$version" >&2
fi
"$bin/node" --version >&2
echo "$bin"
