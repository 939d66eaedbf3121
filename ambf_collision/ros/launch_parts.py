"""Pieces the package's launch files share (``launch/*.launch.py``): file-list arguments, the
RViz and clock arguments, and the RViz node showing the monitor's markers."""

from __future__ import annotations

import os

import yaml
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

__all__ = ["file_list", "rviz_node", "viewer_arguments"]


def file_list(text: str) -> list:
    """A launch argument naming files: a YAML list (``"['a.yaml', 'b.yaml']"``) or one path;
    [] when empty."""
    text = text.strip()
    if text in ("", "[]", "''", '""'):
        return []
    files = yaml.safe_load(text) if text.startswith("[") else text
    return [files] if isinstance(files, str) else [str(f) for f in files]


def viewer_arguments(rviz_default: str = "false") -> list:
    """The ``rviz`` and ``use_sim_time`` launch arguments."""
    return [DeclareLaunchArgument("rviz", default_value=rviz_default,
                                  description="start RViz with config/collision_monitor.rviz"),
            DeclareLaunchArgument("use_sim_time", default_value="false",
                                  description="use the /clock topic")]


def rviz_node(share: str) -> Node:
    """RViz with the package's ``config/collision_monitor.rviz``, when ``rviz`` is true."""
    return Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
                arguments=["-d", os.path.join(share, "config", "collision_monitor.rviz")],
                parameters=[{"use_sim_time": LaunchConfiguration("use_sim_time")}],
                condition=IfCondition(LaunchConfiguration("rviz")))
