#!/usr/bin/env bash
# Runs every test in the built workspace (called by `make test`, after `make env`). Extra
# arguments go to pytest.
# --quick (first argument; `make test-quick`, the edit loop): only the tests not marked slow, dds
# or launch (setup.cfg), with hypothesis's dev profile (test/conftest.py) unless
# HYPOTHESIS_PROFILE is set. It runs scripts/setup_env.sh (colcon build, kernel check: a minute
# or two on a busy machine) only when the workspace lacks something an edit cannot reach through
# the symlinked install: no workspace yet, a Python module or message file that is not installed,
# or a message, CMakeLists.txt or package.xml newer than the last build.
set -eo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

workspace_current() {
  ( source "$ROOT/scripts/flavour.sh"  # WS
    built="$WS/install/ambf_collision/share/ambf_collision/package.xml"
    [ -x "$VENV/bin/python" ] && [ -f "$WS/install/setup.bash" ] && [ -f "$built" ] || exit 1
    site=("$WS"/install/ambf_collision/lib/python3*/site-packages/ambf_collision)
    [ -d "${site[0]}" ] || exit 1
    cd "$ROOT"
    for f in $(find ambf_collision -name '*.py' -not -path '*/__pycache__/*'); do
      [ -e "${site[0]}/${f#ambf_collision/}" ] || exit 1
    done
    [ -z "$(find msg CMakeLists.txt package.xml -newer "$built" 2>/dev/null)" ] )
}

if [ "${1:-}" = --quick ]; then
  shift
  workspace_current || bash "$ROOT/scripts/setup_env.sh"
  export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-dev}"
  set -- -m "not slow and not dds and not launch" "$@"
fi
# shellcheck disable=SC1091
source "$ROOT/scripts/activate.sh"
cd "$ROOT"
# `pytest` (not `python -m pytest`): the installed package, with its generated messages, must win
# over the source folder of the same name.
exec pytest "$@"
