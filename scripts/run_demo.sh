#!/usr/bin/env bash
# The bundled demo (`make demo DURATION=<s>`): the collision_monitor node on the demo arm
# (config/demo.yaml), the joint player driving it into self-contact, floor contact and a probe
# touch, and a view of the result.
#
#   bash scripts/run_demo.sh [DURATION] [viewer args...]     DURATION in s, 0 = until Ctrl-C
#
# * With `rviz2` and `ros2` on PATH and a DISPLAY (a full ROS 2 install), it runs
#   `ros2 launch ambf_collision demo.launch.py` (node + joint player + RViz with the markers).
#   Set DEMO_NO_RVIZ=1 to get the text view instead.
# * Otherwise each piece runs as its own process: collision_monitor, joint_player and
#   demo_viewer, which prints the live compact view and writes demo_output/demo_scene.png.
# All processes share a ROS_DOMAIN_ID of their own (DEMO_DOMAIN_ID, default 92..101 by PID), so
# the demo never talks to other ROS graphs on the machine. Ctrl-C, SIGTERM or the end of
# DURATION stop every child (SIGTERM, then SIGKILL after 5 s); exit status 0. If the node or the
# joint player ends by itself first, the demo stops with exit status 1 and shows the end of that
# process's log (with Python's fault handler on, a crash leaves its Python stack there).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DURATION="${1:-0}"
shift || true
cd "$ROOT"
if [ ! -f .ws/install/setup.bash ]; then
  echo "run_demo: the workspace is not built; run 'make demo' or 'bash scripts/setup_env.sh'" >&2
  exit 2
fi
set +u  # the colcon setup scripts read unset variables
# shellcheck disable=SC1091
source scripts/activate.sh
set -u
export ROS_DOMAIN_ID="${DEMO_DOMAIN_ID:-$((101 - $$ % 10))}"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 RCUTILS_COLORIZED_OUTPUT=0
OUT="$ROOT/demo_output"
mkdir -p "$OUT"

if [ -z "${DEMO_NO_RVIZ:-}" ] && [ -n "${DISPLAY:-}" ] && command -v rviz2 >/dev/null \
    && command -v ros2 >/dev/null; then
  echo "run_demo: RViz found: ros2 launch ambf_collision demo.launch.py (domain $ROS_DOMAIN_ID)"
  if [ "$DURATION" != 0 ]; then
    timeout -s INT "$DURATION" ros2 launch ambf_collision demo.launch.py
  else
    ros2 launch ambf_collision demo.launch.py
  fi
  exit 0
fi

LIB="$(python -c 'from ament_index_python.packages import get_package_prefix as p; print(p("ambf_collision"))')/lib/ambf_collision"
set -m  # each child in its own process group: a terminal Ctrl-C reaches only this script
pids=()
stopping=0
stop_all() {
  [ "$stopping" = 1 ] && return
  stopping=1
  # the joint player first (no joint state arrives while the node shuts down), then the node,
  # then the viewer
  for p in "${pids[@]}"; do
    kill -TERM "$p" 2>/dev/null
    for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
  done
  for _ in $(seq 50); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null && echo "run_demo: killed $p" >&2; done
  wait 2>/dev/null
}
trap 'stop_all; echo "run_demo: stopped"; exit 0' INT TERM

echo "run_demo: collision_monitor + joint_player + demo_viewer on ROS_DOMAIN_ID=$ROS_DOMAIN_ID" \
     "(duration ${DURATION}s, 0 = until Ctrl-C); logs in demo_output/"
"$LIB/collision_monitor" --ros-args --params-file config/demo.yaml \
  >"$OUT/collision_monitor.log" 2>&1 &
node=$!
"$LIB/joint_player" --ros-args -p rate:=100.0 >"$OUT/joint_player.log" 2>&1 &
player=$!
pids+=("$player" "$node")
"$LIB/demo_viewer" --params-file config/demo.yaml --output-dir "$OUT" --duration "$DURATION" "$@" &
viewer=$!
pids+=("$viewer")
# The viewer ends the demo (DURATION, or a signal through the trap). The node and the player run
# until stopped: either ending first is a failure, reported with the end of its log.
ended=""
wait -n -p ended  # bash >= 5.1: the pid of the child that ended, and its status
status=$?
for entry in "collision_monitor:$node" "joint_player:$player"; do
  name="${entry%%:*}" pid="${entry##*:}"
  kill -0 "$pid" 2>/dev/null && continue
  if [ "$pid" = "$ended" ]; then own=$status; else wait "$pid"; own=$?; fi  # ended as well
  echo "run_demo: $name ended by itself (exit status $own); the end of demo_output/$name.log:" >&2
  tail -n 20 "$OUT/$name.log" >&2
  stop_all
  exit 1
done
stop_all
if grep -q "Traceback" "$OUT/collision_monitor.log" "$OUT/joint_player.log" 2>/dev/null; then
  echo "run_demo: a process failed; see demo_output/*.log" >&2
  exit 1
fi
if [ "$status" != 0 ]; then
  echo "run_demo: demo_viewer exited with $status" >&2
  exit "$status"
fi
echo "run_demo: done; picture: demo_output/demo_scene.png"
exit 0
