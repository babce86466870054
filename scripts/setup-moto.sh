#!/usr/bin/env bash
# Installs moto's standalone server (the S3/DynamoDB/SQS emulator used by the `aws` vitest project)
# into a project-local virtualenv: .cache/moto-venv (git-ignored).
#
#   bash scripts/setup-moto.sh          # install, or do nothing if the pinned version is already there
#   MOTO_VENV=/some/dir bash scripts/setup-moto.sh   # other location (the test globalSetup reads MOTO_VENV too)
#   MOTO_PYTHON=python3.12 bash scripts/setup-moto.sh # other interpreter (default: python3)
#
# Idempotent: when the venv already has moto == MOTO_VERSION and its server extras import, it exits at once.
# Needs python3 >= 3.10 with the venv module (Debian/Ubuntu: apt-get install python3-venv).
# Only moto is pinned exactly; its dependencies come from pip's resolver within moto's own bounds.
set -euo pipefail

MOTO_VERSION="5.2.5"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${MOTO_VENV:-$root/.cache/moto-venv}"
python="${MOTO_PYTHON:-python3}"

fail() {
  printf 'setup-moto: %s\n' "$1" >&2
  exit 1
}

# True when the venv holds the pinned moto and the server entry point plus its web stack import.
installed() {
  [ -x "$venv/bin/python" ] && [ -x "$venv/bin/moto_server" ] || return 1
  "$venv/bin/python" - "$MOTO_VERSION" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
if version("moto") != sys.argv[1]:
    sys.exit(1)
import flask, flask_cors, moto.server  # noqa: F401  (the [server] extra)
PY
}

if installed; then
  echo "setup-moto: moto $MOTO_VERSION already installed in $venv"
  exit 0
fi

command -v "$python" >/dev/null 2>&1 ||
  fail "'$python' not found. Install Python >= 3.10 (Debian/Ubuntu: apt-get install python3 python3-venv), then re-run: bash scripts/setup-moto.sh"

"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
  fail "moto $MOTO_VERSION needs Python >= 3.10; '$python' is $("$python" -c 'import platform; print(platform.python_version())'). Set MOTO_PYTHON=/path/to/python3.10+ and re-run."

"$python" -c 'import venv, ensurepip' >/dev/null 2>&1 ||
  fail "'$python' lacks the venv/ensurepip modules. Debian/Ubuntu: apt-get install python3-venv (or python3.X-venv matching '$python --version'), then re-run: bash scripts/setup-moto.sh"

echo "setup-moto: installing moto[server]==$MOTO_VERSION into $venv"
mkdir -p "$(dirname "$venv")"
# --clear: a half-built or stale venv (other moto version, other Python) is rebuilt from scratch.
"$python" -m venv --clear "$venv" || fail "could not create the virtualenv at $venv (try: apt-get install python3-venv)"

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  "moto[server]==$MOTO_VERSION" >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  fail "pip install moto[server]==$MOTO_VERSION failed (see above). Is PyPI (or your pip index) reachable?"
fi

installed || fail "moto $MOTO_VERSION was installed but does not import; delete $venv and re-run."
echo "setup-moto: ready: $venv/bin/moto_server (moto $MOTO_VERSION)"
