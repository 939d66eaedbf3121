"""Launch the collision_monitor node (and optionally RViz with the collision markers).

    ros2 launch ambf_collision collision_monitor.launch.py \
        config:=<params.yaml> adf_files:="['a.yaml','b.yaml']" rviz:=true use_sim_time:=false

Arguments: ``config`` (ROS 2 parameter file of the node; default the package's config/demo.yaml),
``adf_files`` (YAML list of ADF paths overriding the file's ``adf_files``; empty keeps it),
``rviz`` (start RViz with config/collision_monitor.rviz), ``use_sim_time``.
Relative paths in the parameter file resolve against the current directory, then the package
share folder (ambf_collision.paths.resolve_package_path).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _monitor(context):
    config = LaunchConfiguration("config").perform(context)
    adf = LaunchConfiguration("adf_files").perform(context).strip()
    sim = LaunchConfiguration("use_sim_time").perform(context).lower() in ("true", "1")
    params = [config, {"use_sim_time": sim}]
    if adf and adf not in ("[]", "''", '""'):
        import yaml
        files = yaml.safe_load(adf)
        params.append({"adf_files": [files] if isinstance(files, str) else list(files)})
    return [Node(package="ambf_collision", executable="collision_monitor",
                 name="collision_monitor", output="screen", parameters=params)]


def generate_launch_description():
    share = get_package_share_directory("ambf_collision")
    return LaunchDescription([
        DeclareLaunchArgument("config", default_value=os.path.join(share, "config", "demo.yaml"),
                              description="ROS 2 parameter file of the collision_monitor node"),
        DeclareLaunchArgument("adf_files", default_value="",
                              description="YAML list of ADF files (overrides the config's)"),
        DeclareLaunchArgument("rviz", default_value="false", description="Start RViz"),
        DeclareLaunchArgument("use_sim_time", default_value="false",
                              description="Use the /clock topic"),
        OpaqueFunction(function=_monitor),
        Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
             arguments=["-d", os.path.join(share, "config", "collision_monitor.rviz")],
             parameters=[{"use_sim_time": LaunchConfiguration("use_sim_time")}],
             condition=IfCondition(LaunchConfiguration("rviz"))),
    ])
