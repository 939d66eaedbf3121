# Source this file (bash) to get the venv and the built workspace: `source scripts/activate.sh`.
_ambf_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC1091
source "$_ambf_root/.venv/bin/activate"
if [ -z "${ROS_DISTRO:-}" ]; then
  export AMENT_PREFIX_PATH="$_ambf_root/.venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
fi
# shellcheck disable=SC1091
source "$_ambf_root/.ws/install/setup.bash"
unset _ambf_root
