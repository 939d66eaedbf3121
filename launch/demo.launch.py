"""The bundled demo with RViz: collision_monitor on the demo arm (config/demo.yaml), the joint
player driving it through self-contact, floor contact and a probe touch, and RViz showing the
markers (config/collision_monitor.rviz).

    ros2 launch ambf_collision demo.launch.py [rviz:=false] [rate:=100.0]

Without RViz, `make demo` runs the same node and player with a text view and a PNG picture.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    share = get_package_share_directory("ambf_collision")
    return LaunchDescription([
        DeclareLaunchArgument("rviz", default_value="true", description="Start RViz"),
        DeclareLaunchArgument("rate", default_value="100.0",
                              description="Joint states per second (Hz) of the joint player"),
        Node(package="ambf_collision", executable="collision_monitor", name="collision_monitor",
             output="screen", parameters=[os.path.join(share, "config", "demo.yaml")]),
        Node(package="ambf_collision", executable="joint_player", name="joint_player",
             output="screen", parameters=[{"rate": LaunchConfiguration("rate")}]),
        Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
             arguments=["-d", os.path.join(share, "config", "collision_monitor.rviz")],
             condition=IfCondition(LaunchConfiguration("rviz"))),
    ])
