#!/usr/bin/env bash
# Install what live_trial needs, project-locally where possible:
#   - a Python venv in .venv with live_trial and its test extra (pip, from PyPI)
#   - the Claude Code CLI range (npm; nothing global): the newest verified release in ./claude-pin (the default),
#     the oldest supported one in ./claude-pin/oldest (for the version matrix of .ci/run)
#   - tmux (Debian package; only installed when missing and we are root, else we say how)
#   - with --browser: Debian's chromium and chromium-driver, for the tests that open a trial's report.html in a real
#     browser (installed when missing and we are root; else we say how, and those tests are skipped outside CI)
# Idempotent: a second run installs nothing new.
set -euo pipefail
cd "$(dirname "$0")/.."
browser=0
for arg in "$@"; do
  case "$arg" in
    --browser) browser=1 ;;
    *) echo "setup: unknown option $arg (known: --browser)" >&2; exit 64 ;;
  esac
done

PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "setup: Python 3.11 or newer is needed (found $("$PY" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
  exit 2
fi

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.live-trial-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[test]'
  touch "$stamp"
fi

if ! command -v tmux >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
  else
    echo "setup: tmux is missing; install it (e.g. sudo apt-get install tmux) and run this again" >&2
    exit 3
  fi
fi

if [ "$browser" = 1 ] && { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; }; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "setup: chromium or chromedriver is missing; the report's browser tests need them" \
         "(e.g. sudo apt-get install chromium chromium-driver)" >&2
  fi
fi

# The CLI range (README "Set-up"): the newest verified release in ./claude-pin (the default of make demo / make test),
# the oldest supported one in ./claude-pin/oldest (the version matrix of .ci/run).
read -r pinned oldest < <(.venv/bin/python -c \
  'import live_trial as t; print(t.PINNED_CLAUDE_VERSION, t.OLDEST_CLAUDE_VERSION)')

# install_pin DIR VERSION: npm-install DIR/package.json unless DIR's claude already prints VERSION.
install_pin() {
  local dir=$1 want=$2 bin=$1/node_modules/.bin/claude have=""
  if [ -x "$bin" ]; then have=$("$bin" --version 2>/dev/null | awk '{print $1}') || true; fi
  if [ "$have" != "$want" ]; then
    if ! command -v npm >/dev/null 2>&1; then
      echo "setup: npm is missing; install Node.js 18+ (e.g. sudo apt-get install nodejs npm) and run this again" >&2
      exit 3
    fi
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null
    # npm may skip the package's postinstall (which puts the native binary in place): run it if the stub is left.
    if ! "$bin" --version >/dev/null 2>&1; then
      (cd "$dir/node_modules/@anthropic-ai/claude-code" && node install.cjs) >&2
    fi
    have=$("$bin" --version 2>/dev/null | awk '{print $1}')
  fi
  if [ "$have" != "$want" ]; then
    echo "setup: $dir holds claude ${have:-nothing}, expected $want (see $dir/package.json)" >&2
    exit 3
  fi
}
install_pin claude-pin "$pinned"
install_pin claude-pin/oldest "$oldest"
have=$pinned have_oldest=$oldest
bin=claude-pin/node_modules/.bin/claude
echo "setup: python $(.venv/bin/python -c 'import platform; print(platform.python_version())'), $(tmux -V), claude $have (default) at $bin, claude $have_oldest (oldest supported) at claude-pin/oldest/node_modules/.bin/claude"
if [ "$browser" = 1 ] && command -v chromium >/dev/null 2>&1; then
  echo "setup: $(chromium --version 2>/dev/null | head -1), $(chromedriver --version 2>/dev/null | awk '{print $1, $2}')"
fi
