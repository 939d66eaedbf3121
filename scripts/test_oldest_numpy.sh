#!/usr/bin/env bash
# The core library on the oldest NumPy it declares (numpy>=1.26: Ubuntu 24.04's python3-numpy,
# which a ROS 2 Kilted install runs on, with Python 3.12), called by .ci/run after `make test`:
# a venv .venv-numpy1 (Python 3.12 when this machine has it, else $PYTHON or python3) with
# requirements/core.txt + test.txt, NumPy then pinned to 1.26.4 (coal's
# PyPI wheels ask for NumPy >= 2 through cmeel-boost, and run on 1.26), and every test against the
# source tree. Without rclpy there, the ROS tests skip themselves (`make test` runs them).
#   bash scripts/test_oldest_numpy.sh [pytest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-numpy1"
NUMPY=1.26.4
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for p in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3.12 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "" 2>/dev/null; then PY="$p"; break; fi
  done
fi
want="$NUMPY scipy<1.17 $("$PY" -c 'import sys; print(sys.version.split()[0])') $(cat "$ROOT/requirements/core.txt" "$ROOT/requirements/test.txt" | sha256sum | cut -c1-16)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.stamp" 2>/dev/null)" != "$want" ]; then
  echo "[numpy1] creating $VENV ($("$PY" --version), NumPy $NUMPY)" >&2
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet -r "$ROOT/requirements/core.txt" -r "$ROOT/requirements/test.txt"
  # pip warns that cmeel-boost (coal) and contourpy (matplotlib) ask for numpy>=2.0: expected,
  # that is what this run checks
  # SciPy with it: 1.17 asks for NumPy >= 2 (and fails to import on 1.26); Ubuntu 24.04 pairs
  # NumPy 1.26 with SciPy 1.11, the oldest requirements/core.txt allows
  "$VENV/bin/python" -m pip install --quiet "numpy==$NUMPY" "scipy>=1.11,<1.17" 2>&1 \
    | grep -v "dependency\|requires numpy>=2.0" >&2 || true
  echo "$want" > "$VENV/.stamp"
fi
"$VENV/bin/python" -c "import numpy, scipy, sys; assert numpy.__version__ == '$NUMPY', numpy.__version__; print(f'[numpy1] Python {sys.version.split()[0]}, NumPy {numpy.__version__}, SciPy {scipy.__version__}')"
cd "$ROOT"
PYTHONPATH="$ROOT" exec "$VENV/bin/python" -m pytest -p no:cacheprovider "$@" test
