#!/usr/bin/env bash
# `make colcon-test`: the package's tests as colcon runs them (CMakeLists.txt: the pytest suite
# through ament_cmake_pytest, and ruff), then `colcon test-result`, which counts them.
# PYTEST_ADDOPTS passes pytest options (e.g. -q -p no:cacheprovider), a marker expression too
# (-m 'launch or smoke': .ci/run on Jazzy); one that selects no test makes pytest exit 5, a
# failure here as any non-zero exit is.
set -eo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC1091
source "$ROOT/scripts/activate.sh"
source "$ROOT/scripts/flavour.sh"  # WS
cd "$WS"
status=0
colcon --log-base "$WS/log" test --base-paths "$WS/src" --build-base "$WS/build" \
  --install-base "$WS/install" --packages-select ambf_collision \
  --event-handlers console_direct+ summary+ --return-code-on-test-failure || status=$?
colcon test-result --test-result-base "$WS/build/ambf_collision" --verbose || status=$?
exit "$status"
