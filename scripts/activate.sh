# Source this file (bash) to get the venv and the built workspace: `source scripts/activate.sh`
# (`ROS_WHEELS=jazzy source scripts/activate.sh` for the Jazzy wheel environment). Afterwards
# `ambf-collision`, `ros2 run ambf_collision ...` (with ros2cli) and the package's Python modules,
# messages and executables are available.
_ambf_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$_ambf_root" source "$_ambf_root/scripts/flavour.sh" || return 2
# shellcheck disable=SC1091
source "$VENV/bin/activate"
if [ "$MODE" = wheels ]; then
  export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
fi
# shellcheck disable=SC1091
source "$WS/install/setup.bash"
# the flavour's variables were only needed here
unset _ambf_root MODE FLAVOUR VENV WS PY_BASE REQS WHEELS ROS2_SRC ROS2_SRC_PACKAGES
unset -f _ambf_find_python
