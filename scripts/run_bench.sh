#!/usr/bin/env bash
# Runs every benchmark in bench/ (`make bench [ARGS=--full]`), each printing its ratios against a
# reference measured in the same run; installs requirements/bench.txt (MuJoCo) into the venv first.
# Default: quick mode (--quick where a script has it);
# `--full` runs each script with its default (longer) settings, and bench_latency.py with --full.
#   bash scripts/run_bench.sh [--quick | --full] [name-filter]
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_MODE=quick
FILTER=""
for a in "$@"; do
  case "$a" in
    --full) BENCH_MODE=full ;;
    --quick) BENCH_MODE=quick ;;
    *) FILTER="$a" ;;
  esac
done
set +u  # the colcon setup scripts read unset variables
# shellcheck disable=SC1091
source "$ROOT/scripts/activate.sh"
set -u
cd "$ROOT"
# the benches' own peers (requirements/bench.txt), installed into the venv on first use
python -c 'import mujoco' 2>/dev/null || python -m pip install --quiet -r requirements/bench.txt
failed=0
for script in bench/bench_*.py; do  # the others are their helpers
  name="$(basename "$script" .py)"
  [ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]] && continue
  args=()
  if [ "$BENCH_MODE" = quick ] && grep -q -- '"--quick"' "$script"; then args+=(--quick); fi
  if [ "$BENCH_MODE" = full ] && grep -q -- '"--full"' "$script"; then args+=(--full); fi
  echo "=== $name ${args[*]:-}"
  python "$script" "${args[@]}" || { echo "=== $name FAILED" >&2; failed=1; }
done
exit "$failed"
