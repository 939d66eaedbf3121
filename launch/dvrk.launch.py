"""Monitor a dVRK patient cart: any subset of ECM, PSM1, PSM2, PSM3, on their CRTK topics.

    ros2 launch ambf_collision dvrk.launch.py \
        ambf_models:=<ambf>/ambf_models/descriptions/multi-bodies/robots
    ros2 launch ambf_collision dvrk.launch.py arms:=PSM1,PSM2 psm_file:=/path/blender-psm.yaml

One collision_monitor watches every chosen arm, so that the arms' contacts with each other are
seen: each arm under its own namespace (its bodies are /PSM1/<body>), driven by its CRTK topic
(/PSM1/measured_js: the actuated joints, under the names a real dVRK publishes, through
`joint_aliases`), its parallelogram following its pitch joint (`couplings`), and placed by its
base frame on TF (PSM1_base: T_world = T_world<-PSM1_base * T_location). The cart file
(config/dvrk_cart.yaml, ambf_collision/ros/dvrk_cart.py) says all of this per arm; the
`cart_frames` executable publishes the base frames it gives (static placements, or the set-up
joints' measured_cp relayed to TF).

Arguments:
  arms          comma-separated arms of the cart file (default PSM1,PSM2,PSM3,ECM)
  ambf_models   AMBF's robots folder (ambf_models/descriptions/multi-bodies/robots), where the
                cart file's ADF names are looked up (default: $AMBF_MODELS)
  psm_file      an ADF file for every PSM ('' = the cart file's); ecm_file: the same for the ECM
  adf_files     YAML list of environment ADF files (or one path), placed by their own location
  cart          the cart file (default config/dvrk_cart.yaml)
  config        parameter file of the node (default config/dvrk.yaml)
  frames        start cart_frames for the cart's base frames (true/false)
  namespace     the node's namespace ('' = none: /collision_monitor/contacts)
  rviz          start RViz with config/collision_monitor.rviz (true/false)
  use_sim_time  use the /clock topic (true/false)
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from ambf_collision.ros.dvrk_cart import load_cart, monitor_parameters
from ambf_collision.ros.launch_parts import file_list, rviz_node, viewer_arguments


def _cart(context):
    arg = {name: LaunchConfiguration(name).perform(context)
           for name in ("arms", "ambf_models", "psm_file", "ecm_file", "adf_files", "cart",
                        "config", "namespace", "use_sim_time")}
    sim_time = arg["use_sim_time"].lower() in ("true", "1")
    cart = load_cart(arg["cart"])
    overrides = {kind: arg[f"{kind.lower()}_file"] for kind in ("PSM", "ECM")
                 if arg[f"{kind.lower()}_file"].strip()}
    params = monitor_parameters(cart, arg["arms"], arg["ambf_models"], overrides,
                                file_list(arg["adf_files"]))
    frames = Node(package="ambf_collision", executable="cart_frames", name="cart_frames",
                  output="screen", condition=IfCondition(LaunchConfiguration("frames")),
                  parameters=[{"cart": arg["cart"], "arms": arg["arms"],
                               "use_sim_time": sim_time}])
    monitor = Node(package="ambf_collision", executable="collision_monitor",
                   name="collision_monitor", namespace=arg["namespace"].strip("/"),
                   output="screen",
                   parameters=[arg["config"], params, {"use_sim_time": sim_time}])
    return [frames, monitor]


def generate_launch_description():
    share = get_package_share_directory("ambf_collision")
    return LaunchDescription([
        DeclareLaunchArgument("arms", default_value="PSM1,PSM2,PSM3,ECM",
                              description="comma-separated arms of the cart file"),
        DeclareLaunchArgument("ambf_models", default_value=os.environ.get("AMBF_MODELS", ""),
                              description="AMBF's robots folder (default $AMBF_MODELS)"),
        DeclareLaunchArgument("psm_file", default_value="",
                              description="ADF file of every PSM ('' = the cart file's)"),
        DeclareLaunchArgument("ecm_file", default_value="",
                              description="ADF file of the ECM ('' = the cart file's)"),
        DeclareLaunchArgument("adf_files", default_value="",
                              description="YAML list of environment ADF files"),
        DeclareLaunchArgument("cart", default_value=os.path.join(share, "config", "dvrk_cart.yaml"),
                              description="the cart file (arms, kinds, placements)"),
        DeclareLaunchArgument("config", default_value=os.path.join(share, "config", "dvrk.yaml"),
                              description="ROS 2 parameter file of the collision_monitor node"),
        DeclareLaunchArgument("frames", default_value="true",
                              description="publish the cart file's base frames (cart_frames)"),
        DeclareLaunchArgument("namespace", default_value="",
                              description="namespace of the node ('' = none)"),
        *viewer_arguments(),
        OpaqueFunction(function=_cart),
        rviz_node(share),
    ])
