"""pip install . : the pure-Python core and the `ambf-collision` command, without ROS.

The ROS 2 node and messages are built by colcon (CMakeLists.txt, package.xml).
"""
from setuptools import setup

setup()
