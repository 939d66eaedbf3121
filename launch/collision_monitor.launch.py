"""Launch the collision_monitor node for any robot (and optionally RViz with its markers).

    ros2 launch ambf_collision collision_monitor.launch.py adf_files:="['/path/robot.yaml']"
    ros2 launch ambf_collision collision_monitor.launch.py namespace:=psm1 \
        adf_files:="['psm.yaml']" joint_states:=/PSM1/measured_js

Arguments:
  namespace     the node's namespace ('' = none): /<ns>/collision_monitor, its topics under it,
                and relative joint-state topics (/<ns>/joint_states). Two arms: launch twice
                with different namespaces.
  adf_files     YAML list of ADF paths (or one path); overrides the config's adf_files
  probe_files   YAML list of probe files (or one path); overrides the config's probe_files
  config        ROS 2 parameter file of the node (default: the package's generic
                config/collision_monitor.yaml, which has no probes); its `/**:` key applies it
                under any namespace
  joint_states  topic the node reads joint states from (a remap of `joint_states`; '' = keep)
  rviz          start RViz with config/collision_monitor.rviz (true/false)
  use_sim_time  use the /clock topic (true/false)

Relative paths resolve against the current directory, then the package share folder
(ambf_collision/ros/paths.py).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from ambf_collision.ros.launch_parts import file_list, rviz_node, viewer_arguments


def _monitor(context):
    arg = {name: LaunchConfiguration(name).perform(context)
           for name in ("config", "adf_files", "probe_files", "namespace", "joint_states",
                        "use_sim_time")}
    params = [arg["config"], {"use_sim_time": arg["use_sim_time"].lower() in ("true", "1")}]
    for key in ("adf_files", "probe_files"):
        files = file_list(arg[key])
        if files:
            params.append({key: files})
    remaps = [("joint_states", arg["joint_states"])] if arg["joint_states"].strip() else []
    return [Node(package="ambf_collision", executable="collision_monitor",
                 name="collision_monitor", namespace=arg["namespace"].strip("/"),
                 output="screen", parameters=params, remappings=remaps)]


def generate_launch_description():
    share = get_package_share_directory("ambf_collision")
    return LaunchDescription([
        DeclareLaunchArgument("namespace", default_value="",
                              description="namespace of the node ('' = none)"),
        DeclareLaunchArgument("adf_files", default_value="",
                              description="YAML list of ADF files (overrides the config's)"),
        DeclareLaunchArgument("probe_files", default_value="",
                              description="YAML list of probe files (overrides the config's)"),
        DeclareLaunchArgument("config",
                              default_value=os.path.join(share, "config", "collision_monitor.yaml"),
                              description="ROS 2 parameter file of the collision_monitor node"),
        DeclareLaunchArgument("joint_states", default_value="",
                              description="joint-state topic (remaps joint_states; '' = keep)"),
        *viewer_arguments(),
        OpaqueFunction(function=_monitor),
        rviz_node(share),
    ])
