"""pip install . : the pure-Python core and the `ambf-collision` command, without ROS.

The ROS 2 node and messages are built by colcon (CMakeLists.txt, package.xml), whose install
step also compiles the numba kernels (cmake/compile_kernels.cmake). A wheel has no such step (it
is built elsewhere than where it is installed, and numba keys its cache by the installed path):
the kernels compile on their first use, 1-2 minutes once, and `ambf-collision` says so on stderr
before it starts.
"""
from setuptools import setup

setup()
