"""The ``collision_monitor`` node's parameters (``config/collision_monitor.yaml`` documents each
one; ``ros2 param describe`` shows the same text with type and range).

Units: metres, seconds, Hz. Paths: absolute, ``package://ambf_collision/...``, or relative to
the current folder, then to the package share folder (``ros/paths.py``).
"""

from __future__ import annotations

from ambf_collision.ros.parameters import (BOOL, INTEGERS, NUMBER, STRING, STRINGS, ConfigError,
                                           Parameter)

__all__ = ["MONITOR_KEYS", "PAIR_KEYS", "PARAMETERS", "check_combination", "parse_padding"]

P = Parameter
PARAMETERS = {
    # -- the scene (read-only: restart, or call ~/reload after editing the files) -------------
    "adf_files": P([""], STRINGS, "AMBF ADF files loaded into one world ([''] = none: the node "
                   "only reports that it monitors nothing)"),
    "adf_namespaces": P([""], STRINGS, "per ADF file the namespace that replaces the file's own "
                        "(e.g. ['/psm1/', '/psm2/'] for two copies of one arm); [''] keeps each "
                        "file's own"),
    "hull_meshes": P([""], STRINGS, "bodies (names or fnmatch patterns, qualified or plain) "
                     "whose concave collision meshes are monitored as their convex hulls, for "
                     "speed (never farther than the mesh); [''] = none: every mesh is monitored "
                     "as AMBF collides it (concave unless its 'collision mesh type' is "
                     "CONVEX_HULL or CONVEX_MESH)"),
    "probe_files": P([""], STRINGS, "tactile probe YAML files; [''] = no probes"),
    "coupling_files": P([""], STRINGS, "YAML files of coupled joints (passive = multiplier * "
                        "source + offset), e.g. a dVRK arm's parallelogram"),
    "couplings": P([""], STRINGS, "coupled joints as strings, in the format of the coupling "
                   "files' entries"),
    "world_frame": P("world", STRING, "frame of every published position and of the root "
                     "transforms"),
    "root_frames": P([""], STRINGS, "per ADF file the TF frame that places its root bodies "
                     "(T_world_frame<-frame * T_location); '' = the ADF location in world_frame"),
    "ignore_pairs": P([""], STRINGS, "body pairs never checked, 'bodyA:bodyB' (fnmatch "
                      "patterns); settable at run time: the pair list is rebuilt without "
                      "reloading the files, from the next evaluation on", read_only=False),
    "check_pairs": P([""], STRINGS, "body pairs always checked, 'bodyA:bodyB' (fnmatch "
                     "patterns); settable at run time like ignore_pairs", read_only=False),
    "padding": P([""], STRINGS, "per-body safety padding, 'BODY=METRES' (BODY: a body name or "
                 "fnmatch pattern, qualified or plain; later entries win): every shape of the "
                 "body grows by a ball of that radius, so its distances drop by it; settable at "
                 "run time like ignore_pairs", read_only=False),
    "tf_backend": P("auto", STRING, "root transforms from 'auto' (tf2_ros where importable, "
                    "else the built-in cache) or 'fallback' (always the built-in cache)"),
    # -- joint states (read-only) --------------------------------------------------------------
    "joint_state_topics": P(["joint_states"], STRINGS, "sensor_msgs/JointState topics, merged by "
                            "joint name (relative names are remappable and take the node's "
                            "namespace)"),
    "joint_state_files": P([-1], INTEGERS, "per joint-state topic the index (0-based) of the ADF "
                           "file whose joints its names refer to, so two arms loaded from one "
                           "file can both use plain joint names; -1 = any file. [-1] = every "
                           "topic names any joint"),
    "joint_aliases": P([""], STRINGS, "other names joint states may use for joints, "
                       "'ALIAS=JOINT' (JOINT plain or qualified), e.g. dVRK's CRTK names "
                       "'outer_yaw=base link-yaw link'; [''] = none"),
    "required_joints": P([""], STRINGS, "joints that must have been received before anything is "
                         "evaluated (NO_JOINT_STATE until then); others keep their last value, "
                         "initially 0"),
    # -- sensed obstacles (read-only; per source the keys of SOURCE_PARAMETERS) ------------------
    "obstacle_sources": P([""], STRINGS, "point-cloud sources (names), each with its own "
                          "parameters SOURCE.topic, SOURCE.point_radius, ... (nav2's style); "
                          "[''] = none"),
    # -- run time (can be changed with `ros2 param set`) ---------------------------------------
    "report_distance": P(0.05, NUMBER, "pairs closer than this (m) are published as contacts",
                         0.0, 100.0, read_only=False),
    "self_report_distance": P(-1.0, NUMBER, "report distance (m) of self pairs (both bodies "
                              "of one robot); -1 = report_distance", -1.0, 100.0,
                              read_only=False),
    "environment_report_distance": P(-1.0, NUMBER, "report distance (m) of robot-environment "
                                     "pairs; -1 = report_distance", -1.0, 100.0,
                                     read_only=False),
    "max_rate": P(1000.0, NUMBER, "cap on evaluations per second on average (Hz; bursts of "
                  "up to 10 ms of it run back to back); joint states arriving faster are "
                  "coalesced into the next allowed evaluation, the latest is never dropped",
                  0.1, 100000.0, read_only=False),
    "heartbeat_rate": P(10.0, NUMBER, "status publications per second (Hz) while no joint state "
                        "arrives", 0.1, 100.0, read_only=False),
    "joint_state_timeout": P(0.5, NUMBER, "a joint whose latest state is older than this (s) "
                             "makes the status STALE (named in the status message and "
                             "/diagnostics); fixed, coupled and loop-closing joints never do; 0 "
                             "turns the check off", 0.0, 3600.0, read_only=False),
    "joint_forget_timeout": P(0.0, NUMBER, "a joint that stopped arriving this long ago (s) no "
                              "longer makes the status STALE: it keeps its last value and is "
                              "named in the OK status until it comes again; 0 = never forget "
                              "(STALE until it comes again)", 0.0, 1e6, read_only=False),
    "transform_tolerance": P(0.1, NUMBER, "the latest root transform is used when it is at most "
                             "this much (s) older than the joint-state stamp", 0.0, 3600.0,
                             read_only=False),
    "future_tolerance": P(0.5, NUMBER, "joint-state stamps further than this (s) in the future "
                          "are rejected (BAD_JOINT_STATE)", 0.0, 3600.0, read_only=False),
    "max_stamp_age": P(60.0, NUMBER, "joint-state stamps older than this (s) on arrival are "
                       "rejected (BAD_JOINT_STATE)", 0.0, 1e9, low_open=True, read_only=False),
    "accept_unstamped": P(False, BOOL, "joint states stamped 0 (not stamped) are stamped with "
                          "their arrival time; false: rejected (BAD_JOINT_STATE), since nothing "
                          "tells whether they are current", read_only=False),
    "continuous": P(True, BOOL, "each evaluation covers the step from the previous joint state "
                    "(straight in joint space): a contact that happened between the two states "
                    "is published with swept true and its time_of_contact; false: each state "
                    "alone", read_only=False),
    "continuous_max_step": P(0.5, NUMBER, "a step in which a joint moves more than this (rad or "
                             "m) is a jump (a reset), not a motion: evaluated at the state alone, "
                             "the reason in /diagnostics", 1e-6, 100.0, read_only=False),
    "publish_markers": P(True, BOOL, "publish ~/markers (only while subscribed)", read_only=False),
    "marker_rate": P(20.0, NUMBER, "marker arrays per second at most (Hz)", 0.1, 100.0,
                     read_only=False),
    "diagnostics_period": P(1.0, NUMBER, "seconds between /diagnostics messages", 0.1, 3600.0,
                            read_only=False),
}

SOURCE_PARAMETERS = {
    "topic": P("", STRING, "the sensor_msgs/PointCloud2 topic (relative names take the node's "
               "namespace); '' = SOURCE"),
    "point_radius": P(0.0, NUMBER, "each point is a ball of this radius (m)", 0.0, 10.0),
    "voxel_size": P(0.0, NUMBER, "keep the first point of each cube of this size (m); 0 keeps "
                    "every point", 0.0, 10.0),
    "min_range": P(0.0, NUMBER, "points nearer the sensor than this (m) are dropped", 0.0, 1e4),
    "max_range": P(10.0, NUMBER, "points farther from the sensor than this (m) are dropped",
                   0.0, 1e4, low_open=True),
    "source_timeout": P(1.0, NUMBER, "a source whose newest cloud is older than this (s), or "
                        "that sent none for this long, is STALE_SOURCE and not used; 0 = never",
                        0.0, 3600.0),
    "self_filter_padding": P(0.02, NUMBER, "points within this (m) of the robot's own shapes at "
                             "the cloud's stamp are its own image and removed", 0.0, 1.0),
    "bodies": P([""], STRINGS, "bodies checked against the source (names or fnmatch patterns, "
                "qualified or plain); [''] = every robot body (in a kinematic tree with another "
                "body)"),
    "report_distance": P(-1.0, NUMBER, "bodies closer than this (m) to the source are "
                         "published as contacts; -1 = environment_report_distance", -1.0, 100.0),
    "max_points": P(1000000, NUMBER, "a larger cloud is truncated to its first max_points "
                    "points (a warning says so)", 1.0, 1e8),
}
"""Per obstacle source ``SOURCE``: the parameters ``SOURCE.<key>`` (``ros/obstacle_intake.py``)."""


MONITOR_KEYS = ("report_distance", "max_rate", "heartbeat_rate", "joint_state_timeout",
                "joint_forget_timeout", "future_tolerance", "max_stamp_age", "accept_unstamped",
                "continuous", "continuous_max_step")
"""The parameters that are fields of :class:`ambf_collision.monitor.config.MonitorConfig`."""


PAIR_KEYS = ("ignore_pairs", "check_pairs", "padding")
"""The parameters that decide the model's pair list (a change rebuilds it: ``Model.with_overrides``)."""


def parse_padding(entries) -> dict:
    """``['BODY=METRES', ...]`` -> ``{BODY: metres}`` (in order; ConfigError naming the
    parameter and the entry for a malformed one or a value that is not a finite number >= 0).
    Whether each BODY matches a body is checked by the model (``model.body_padding``)."""
    import math

    out = {}
    for text in entries:
        body, sep, value = text.rpartition("=")
        try:
            metres = float(value)
        except ValueError:
            metres = math.nan
        if not sep or not body.strip() or not (math.isfinite(metres) and metres >= 0.0):
            raise ConfigError(f"parameter padding: {text!r} must be BODY=METRES (a body name or "
                              "fnmatch pattern, and a finite number of metres >= 0)")
        out.pop(body.strip(), None)  # a repeated entry moves to the end (later entries win)
        out[body.strip()] = metres
    return out


def check_report_distances(p: dict) -> None:
    """``self_report_distance`` and ``environment_report_distance``: -1 (= report_distance)
    or a distance >= 0 (ConfigError naming the parameter)."""
    for name in ("self_report_distance", "environment_report_distance"):
        if name in p and p[name] != -1.0 and p[name] < 0.0:
            raise ConfigError(f"parameter {name}: must be -1 (use report_distance) or a "
                              f"distance >= 0 m, got {p[name]!r}")


def check_combination(p: dict) -> None:
    """What each value cannot show alone: per-file and per-topic lists that must match the
    files and topics, names that must be well formed (ConfigError naming the parameter)."""
    n_files = len(p["adf_files"])
    if not p["world_frame"].strip("/ ") or p["world_frame"] != p["world_frame"].strip():
        raise ConfigError(f"parameter world_frame: must name a TF frame, got {p['world_frame']!r}")
    roots = p["root_frames"]
    if roots and len(roots) != n_files:
        raise ConfigError(f"parameter root_frames: {len(roots)} entries for {n_files} "
                          "adf_files (one frame per file, '' = none)")
    ns = p["adf_namespaces"]
    if ns and len(ns) != n_files:
        raise ConfigError(f"parameter adf_namespaces: {len(ns)} entries for {n_files} "
                          "adf_files (one per file)")
    bad = [n for n in ns if n and (not n.strip("/ ") or any(c.isspace() for c in n.strip()))]
    if bad:
        raise ConfigError(f"parameter adf_namespaces: {bad[0]!r} is not a namespace such as "
                          "'/psm1/' ('' keeps the file's own)")
    if p["tf_backend"] not in ("auto", "fallback"):
        raise ConfigError(f"parameter tf_backend: must be 'auto' or 'fallback', "
                          f"got {p['tf_backend']!r}")
    if not p["joint_state_topics"]:
        raise ConfigError("parameter joint_state_topics: names no topic")
    files = p["joint_state_files"]
    if files != [-1]:
        if len(files) != len(p["joint_state_topics"]):
            raise ConfigError(f"parameter joint_state_files: {len(files)} entries for "
                              f"{len(p['joint_state_topics'])} joint_state_topics (one per "
                              "topic, or [-1])")
        bad = [f for f in files if not -1 <= f < n_files]
        if bad:
            raise ConfigError(f"parameter joint_state_files: {bad[0]} is not the index of "
                              f"one of the {n_files} adf_files (or -1)")
    check_pairs_syntax(p)
    check_report_distances(p)


def check_pairs_syntax(p: dict) -> None:
    """``ignore_pairs``, ``check_pairs`` ('A:B') and ``padding`` ('BODY=METRES') well formed."""
    from ambf_collision.model.filtering import parse_pair

    for name in ("ignore_pairs", "check_pairs"):
        for text in p[name]:
            try:
                parse_pair(text)
            except ValueError as err:
                raise ConfigError(f"parameter {name}: {err}") from None
    parse_padding(p["padding"])
