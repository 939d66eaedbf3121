#!/usr/bin/env bash
# Runs every test in the built workspace (called by `make test`). Extra arguments go to pytest.
set -eo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC1091
source "$ROOT/scripts/activate.sh"
cd "$ROOT"
# `pytest` (not `python -m pytest`): the installed package, with its generated messages, must win
# over the source folder of the same name.
exec pytest "$@"
