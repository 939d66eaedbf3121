"""Every bad parameter, whatever its value or type: one line naming the parameter and the reason,
exit 2, never a traceback (issue 15 #3).

Each case builds the node the way its executable does (``run_node`` with the command line), in
this process, with the output captured at the file-descriptor level (rcl's own log lines
included). The cases are generated from the declared parameter table: for every parameter, values
of every other ROS parameter type and, for numbers, every kind of out-of-range value; then the
checks that need more than one value or the loaded model. A few of them run as the installed
executable in test_node_parameters.py.
"""

from __future__ import annotations

import pytest
from conftest import DEMO_ARM
from ros_harness import next_domain

from ambf_collision.ros.node import CollisionMonitorNode
from ambf_collision.ros.node_parameters import PARAMETERS
from ambf_collision.ros.parameters import BOOL, INTEGERS, NUMBER, STRING, STRINGS
from ambf_collision.ros.run import run_node

# -p values (YAML, as a user types them) of each ROS parameter type
TEXT = {
    "string": "abc", "bool": "true", "integer": "7", "double": "2.5",
    "string list": "['a','b']", "bool list": "[true,false]", "integer list": "[1,2]",
    "double list": "[1.5,2.5]",
}
ACCEPTED = {  # the ROS types each kind takes
    NUMBER: {"integer", "double"}, BOOL: {"bool"}, STRING: {"string"},
    STRINGS: {"string", "string list"}, INTEGERS: {"integer", "integer list"},
}


def _wrong_types():
    for name, spec in PARAMETERS.items():
        for ros_type, text in TEXT.items():
            if ros_type not in ACCEPTED[spec.kind]:
                yield name, text, f"parameter {name}: must be "


def _out_of_range():
    for name, spec in PARAMETERS.items():
        if spec.kind != NUMBER:
            continue
        values = [".nan", ".inf", "-.inf", str(spec.high * 10), str(spec.low - 1.0)]
        if spec.low > 0.0:
            values += ["0.0", "1e-300", str(spec.low / 2)]
        for v in values:
            yield name, v, f"parameter {name}: must be a finite number in "
        # beyond a double: rcl hands the text over as a string
        yield name, "1e400", f"parameter {name}: must be a number, got '1e400'"


OTHER = [
    ("world_frame", "''", "parameter world_frame: must name a TF frame"),
    ("world_frame", "' world'", "parameter world_frame: must name a TF frame"),
    ("joint_state_topics", "['bad topic!']", "parameter joint_state_topics: 'bad topic!' is not a valid"),
    ("joint_state_topics", "['']", "parameter joint_state_topics: names no topic"),
    ("adf_namespaces", f"['bad ns!']", "parameter adf_namespaces: 'bad ns!' is not a namespace"),
    ("ignore_pairs", "['nocolon']", "parameter ignore_pairs: pair 'nocolon'"),
    ("check_pairs", "[':']", "parameter check_pairs: pair ':'"),
    ("required_joints", "['nope']", "parameter required_joints: unknown joint(s) nope"),
    ("couplings", "['garbage']", "couplings[0]"),
    ("root_frames", "['a','b']", "parameter root_frames: 2 entries for 1 adf_files"),
    ("joint_state_files", "[3]", "parameter joint_state_files: 3 is not the index"),
    ("tf_backend", "tf3", "parameter tf_backend: must be 'auto' or 'fallback'"),
    ("adf_files", "['package://ambf_collision/../../etc/passwd']",
     "parameter adf_files: package://ambf_collision/../../etc/passwd: '..' and absolute paths"),
    ("probe_files", "['package://ambf_collision//etc/passwd']",
     "parameter probe_files: package://ambf_collision//etc/passwd: '..' and absolute paths"),
    ("coupling_files", "['package://ambf_collision/config/../../x.yaml']",
     "parameter coupling_files: package://ambf_collision/config/../../x.yaml: '..'"),
]

CASES = list(_wrong_types()) + list(_out_of_range()) + OTHER


@pytest.fixture(scope="module")
def domain():
    """One domain for the module: these nodes stop before they talk to anyone."""
    return next_domain()


def _run(args, monkeypatch, domain):
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
    monkeypatch.setenv("RCUTILS_COLORIZED_OUTPUT", "0")
    return run_node(CollisionMonitorNode, "collision_monitor",
                    ["collision_monitor", "--ros-args", *args], done=lambda node: True)


@pytest.mark.parametrize("name,text,words", CASES, ids=[f"{c[0]}={c[1]}" for c in CASES])
def test_a_bad_value_is_one_line_naming_the_parameter_and_exit_2(name, text, words, capfd,
                                                                    monkeypatch, domain):
    args = ["-p", f"{name}:={text}"]
    if name != "adf_files":
        args += ["-p", f"adf_files:=['{DEMO_ARM}']"]
    code = _run(args, monkeypatch, domain)
    out, err = capfd.readouterr()
    assert code == 2, (code, err)
    assert "Traceback" not in out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("collision_monitor: error: ") and words in lines[0], lines[0]


def test_good_values_of_every_accepted_type_start_the_node(capfd, monkeypatch, domain):
    """The other side of the sweep: integers for numbers, one string for a list, the range
    ends themselves."""
    args = ["-p", f"adf_files:={DEMO_ARM}", "-p", "max_rate:=100000", "-p", "heartbeat_rate:=0.1",
            "-p", "marker_rate:=100", "-p", "diagnostics_period:=3600", "-p",
            "joint_state_files:=-1", "-p", "report_distance:=0", "-p", "accept_unstamped:=true"]
    assert _run(args, monkeypatch, domain) == 0
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and "error" not in err.lower(), err


def test_an_unknown_parameter_is_warned_not_ignored(capfd, monkeypatch, domain, tmp_path):
    """rcl drops parameters a node does not declare, so a misspelt one would silently leave
    the default in force: each gets a warning naming it, with the nearest real name."""
    params = tmp_path / "p.yaml"
    params.write_text("/**:\n  ros__parameters:\n    report_distanse: 0.2\n"
                      "other_node:\n  ros__parameters:\n    whatever: 1\n")
    args = ["-p", f"adf_files:=['{DEMO_ARM}']", "-p", "max_rte:=5.0", "--params-file", str(params)]
    assert _run(args, monkeypatch, domain) == 0
    err = capfd.readouterr().err
    assert "parameter max_rte: not a parameter of this node, ignored; did you mean max_rate?" in err
    assert ("parameter report_distanse: not a parameter of this node, ignored; did you mean "
            "report_distance?") in err
    assert "whatever" not in err  # another node's section
