# Which environment the scripts use (sourced by setup_env.sh, activate.sh, run_tests.sh):
#   MODE     distro (a ROS 2 distribution is sourced: ROS_DISTRO set) or wheels (PyPI wheels)
#   FLAVOUR  the distribution's name, or the wheels': kilted (default) or jazzy (ROS_WHEELS=jazzy)
#   VENV, WS the venv and the colcon workspace of that flavour (.venv/.ws for Kilted and distros,
#            .venv-jazzy/.ws-jazzy for the Jazzy wheels, so both can be built side by side)
#   PY_BASE  the Python the venv is made from (PYTHON overrides)
#   REQS     the requirement files installed into the venv
#   ROS2_SRC upstream tf2/launch sources built in wheels mode (../shared/ros2-src; AMBF_ROS2_SRC)
ROOT="${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
ROS2_SRC="${AMBF_ROS2_SRC:-$(cd "$ROOT/.." && pwd)/shared/ros2-src}"
_ambf_find_python() {  # the first of "$@" that runs (pyenv shims exist for versions not enabled)
  local p
  for p in "$@"; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "" 2>/dev/null; then echo "$p"; return; fi
  done
}
ROS2_SRC_PACKAGES=(tf2 tf2_msgs tf2_py tf2_ros_py composition_interfaces
                   launch launch_xml launch_yaml launch_ros ros2launch)
if [ -n "${ROS_DISTRO:-}" ]; then
  MODE=distro
  FLAVOUR="$ROS_DISTRO"
  VENV="$ROOT/.venv"
  WS="$ROOT/.ws"
  PY_BASE="${PYTHON:-python3}"
  REQS=("$ROOT/requirements/core.txt" "$ROOT/requirements/test.txt")
else
  MODE=wheels
  FLAVOUR="${ROS_WHEELS:-kilted}"
  case "$FLAVOUR" in
    kilted)
      VENV="$ROOT/.venv"
      WS="$ROOT/.ws"
      PY_BASE="${PYTHON:-$(_ambf_find_python python3.11 "$HOME"/.pyenv/versions/3.11*/bin/python3.11 python3)}"
      WHEELS="$ROOT/requirements/ros-wheels.txt" ;;
    jazzy)
      VENV="$ROOT/.venv-jazzy"
      WS="$ROOT/.ws-jazzy"
      PY_BASE="${PYTHON:-$(_ambf_find_python python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3.12)}"
      WHEELS="$ROOT/requirements/ros-wheels-jazzy.txt" ;;
    *)
      echo "ROS_WHEELS=$FLAVOUR: unknown (kilted or jazzy)" >&2
      return 2 2>/dev/null || exit 2 ;;
  esac
  if [ -z "$PY_BASE" ] || ! "$PY_BASE" -c "" 2>/dev/null; then
    # the wheels are built for one Python version each (Kilted 3.11, Jazzy 3.12)
    echo "ROS_WHEELS=$FLAVOUR needs ${PY_BASE:-python3.12} (set PYTHON=/path/to/python)" >&2
    return 2 2>/dev/null || exit 2
  fi
  REQS=("$WHEELS" "$ROOT/requirements/core.txt" "$ROOT/requirements/test.txt")
fi
