"""The dVRK patient cart as one monitored world: the cart file, and the node parameters from it.

``dvrk.launch.py`` reads a cart file (``config/dvrk_cart.yaml``) and runs one
``collision_monitor`` over every chosen arm, so that the arms' contacts with each other are
seen. No ROS import: the launch file and the ``cart_frames`` executable use it, and the tests
call it directly.

A cart file::

    world_frame: world
    kinds:                         # one entry per kind of arm
      PSM:
        adf: blender-psm.yaml      # AMBF's file: absolute, package://, or relative to the
                                   # launch argument ambf_models (AMBF's robots folder)
        couplings: [package://ambf_collision/config/couplings/blender-psm.yaml, 'c = -1 * b']
                                   # (files, and rule strings in the file's plain names)
        aliases: ['outer_yaw=base link-yaw link', ...]   # CRTK joint names -> the file's
    arms:
      PSM1:
        kind: PSM
        measured_js: /PSM1/measured_js        # its CRTK joint states (actuated joints)
        base_frame: PSM1_base                 # TF frame placing the arm's ADF world
        placement: {xyz: [x, y, z], rpy: [r, p, y]}   # static, in world_frame (m, rad), or
                                              # {pose_topic: /SUJ/PSM1/measured_cp}, or 'tf'

Each arm is loaded under its own namespace (``/PSM1/``): its bodies and joints are
``/PSM1/<name>``, its joint-state topic names its file's joints only (``joint_state_files``),
its couplings are written with qualified names (two PSMs of one file would make the plain
names ambiguous), and its root bodies are placed by ``base_frame``:
``T_world = T_world<-base_frame * T_location`` (the ADF ``location`` of each root body).

Errors are :class:`CartError` naming the file, the entry and the key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ambf_collision.model.couplings import couplings_from, load_couplings
from ambf_collision.model.names import ambf_name
from ambf_collision.ros.paths import resolve_package_path

__all__ = ["Arm", "Cart", "CartError", "load_cart", "monitor_parameters", "coupling_rules"]


class CartError(ValueError):
    """A cart file or an arm choice that cannot be used (names file, entry and key)."""


@dataclass(frozen=True)
class Arm:
    """One arm of the cart. ``placement``: ``('static', xyz (3,), rpy (3,))`` (m, rad; the base
    frame in ``world_frame``), ``('topic', name)`` (a geometry_msgs/PoseStamped topic: the base
    frame in the message's frame) or ``('tf',)`` (someone else publishes the base frame)."""

    name: str
    kind: str
    measured_js: str
    base_frame: str
    placement: tuple


@dataclass(frozen=True)
class Cart:
    """A cart file: ``world_frame``, ``kinds`` (``{kind: {adf, couplings, aliases}}``) and
    ``arms`` (``{name: Arm}``, in file order); ``path`` for error messages."""

    path: str
    world_frame: str
    kinds: dict
    arms: dict = field(default_factory=dict)


def _fail(path, entry, key, why) -> CartError:
    where = f"{path}: {entry}" + (f": {key}" if key else "")
    return CartError(f"{where}: {why}")


def _string(value, path, entry, key) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, entry, key, f"must be a non-empty string, got {value!r}")
    return value.strip()


def _vector(value, path, entry, key) -> tuple:
    ok = isinstance(value, (list, tuple)) and len(value) == 3 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        for v in value)
    if not ok:
        raise _fail(path, entry, key, f"must be three finite numbers, got {value!r}")
    return tuple(float(v) for v in value)


def _placement(value, path, entry) -> tuple:
    if value == "tf":
        return ("tf",)
    if isinstance(value, dict) and set(value) == {"pose_topic"}:
        return ("topic", _string(value["pose_topic"], path, entry, "placement.pose_topic"))
    if isinstance(value, dict) and set(value) <= {"xyz", "rpy"}:
        return ("static", _vector(value.get("xyz", [0, 0, 0]), path, entry, "placement.xyz"),
                _vector(value.get("rpy", [0, 0, 0]), path, entry, "placement.rpy"))
    raise _fail(path, entry, "placement", "must be {xyz: [..], rpy: [..]}, {pose_topic: TOPIC} "
                f"or 'tf', got {value!r}")


def load_cart(path) -> Cart:
    """Read a cart file (module docstring)."""
    path = str(path)
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise CartError(f"{path}: cannot be read: {err}") from None
    if not isinstance(doc, dict):
        raise CartError(f"{path}: must be a mapping with 'kinds' and 'arms'")
    kinds = {}
    for kind, spec in (doc.get("kinds") or {}).items():
        entry = f"kinds.{kind}"
        if not isinstance(spec, dict):
            raise _fail(path, entry, "", "must be a mapping with 'adf'")
        aliases = spec.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise _fail(path, entry, "aliases", f"must be a list of 'ALIAS=JOINT', got {aliases!r}")
        couplings = spec.get("couplings") or []
        couplings = [couplings] if isinstance(couplings, str) else couplings
        if not isinstance(couplings, list) or not all(isinstance(c, str) for c in couplings):
            raise _fail(path, entry, "couplings", "must be a list of couplings files and rule "
                        f"strings, got {couplings!r}")
        kinds[str(kind)] = {"adf": _string(spec.get("adf"), path, entry, "adf"),
                            "couplings": list(couplings), "aliases": list(aliases)}
    arms = {}
    for name, spec in (doc.get("arms") or {}).items():
        entry = f"arms.{name}"
        if not isinstance(spec, dict):
            raise _fail(path, entry, "", "must be a mapping")
        kind = _string(spec.get("kind"), path, entry, "kind")
        if kind not in kinds:
            raise _fail(path, entry, "kind", f"{kind!r} is not one of kinds: {sorted(kinds)}")
        arms[str(name)] = Arm(str(name), kind,
                              _string(spec.get("measured_js"), path, entry, "measured_js"),
                              _string(spec.get("base_frame"), path, entry, "base_frame"),
                              _placement(spec.get("placement", "tf"), path, entry))
    if not arms:
        raise CartError(f"{path}: arms: no arm")
    world = _string(doc.get("world_frame", "world"), path, "world_frame", "")
    return Cart(path, world, kinds, arms)


def chosen_arms(cart: Cart, arms) -> list:
    """The arms named in ``arms`` (a comma-separated string or a list), in the cart's order."""
    names = [a.strip() for a in (arms.split(",") if isinstance(arms, str) else arms) if a.strip()]
    unknown = [n for n in names if n not in cart.arms]
    if unknown or not names:
        raise CartError(f"arms: {', '.join(unknown) or 'none'} not among the cart's arms "
                        f"({', '.join(cart.arms)}) in {cart.path}")
    return [a for a in cart.arms.values() if a.name in names]


def _adf_path(cart: Cart, kind: str, ambf_models: str, overrides: dict) -> str:
    given = (overrides or {}).get(kind) or cart.kinds[kind]["adf"]
    candidate = Path(given).expanduser()
    if not candidate.is_absolute() and not given.startswith("package://") and ambf_models:
        candidate = Path(ambf_models).expanduser() / given
    resolved = resolve_package_path(str(candidate))
    if not Path(resolved).is_file():
        raise CartError(f"{cart.path}: kinds.{kind}: adf: {given!r} not found (looked at "
                        f"{resolved}; give the launch argument ambf_models:=<AMBF's robots "
                        f"folder> or {kind.lower()}_file:=<path>)")
    return str(resolved)


def coupling_rules(entries, namespace: str) -> list:
    """Couplings files and rule strings (an entry with ``=``) as rule strings with the joints
    qualified by ``namespace`` (``'/PSM1/'``): ``'/PSM1/a = 1.0 * /PSM1/b + 0.0075'``."""
    rules = []
    couplings = []
    for entry in entries:
        couplings += (couplings_from([entry]) if "=" in entry
                      else load_couplings(resolve_package_path(entry)))
    for c in couplings:
        offset = (f" + {c.offset!r}" if c.offset > 0 else f" - {-c.offset!r}" if c.offset < 0
                  else "")
        rules.append(f"{namespace}{c.joint} = {c.multiplier!r} * {namespace}{c.source}{offset}")
    return rules


def monitor_parameters(cart: Cart, arms, ambf_models: str = "", adf_overrides=None,
                       extra_files=()) -> dict:
    """The collision_monitor parameters of the chosen arms (plus ``extra_files``: environment
    ADF files, each with its own namespace and placed by its own ``location``).

    ``adf_overrides``: ``{kind: path}`` replacing a kind's ``adf``. Returns a dict of
    parameter values: ``adf_files``, ``adf_namespaces``, ``root_frames``, ``world_frame``,
    ``joint_state_topics``, ``joint_state_files``, ``joint_aliases``, ``couplings``,
    ``required_joints``: every chosen arm's aliased (actuated) joints, so that nothing is
    evaluated, and the status says which arm is missing, until each arm has published its
    ``measured_js`` once (an arm left at its ADF pose would look clear when it is not)."""
    chosen = chosen_arms(cart, arms)
    files = [_adf_path(cart, a.kind, ambf_models, adf_overrides) for a in chosen]
    extra = [str(resolve_package_path(f)) for f in extra_files if str(f).strip()]
    aliases, couplings, required = [], [], []
    for a in chosen:
        spec = cart.kinds[a.kind]
        aliases += [x for x in spec["aliases"] if x not in aliases]
        required += [f"/{a.name}/{ambf_name(x.split('=', 1)[1])}" for x in spec["aliases"]]
        couplings += coupling_rules(spec["couplings"], f"/{a.name}/")
    return {
        "adf_files": files + extra,
        "adf_namespaces": [f"/{a.name}/" for a in chosen] + [""] * len(extra),
        "root_frames": [a.base_frame for a in chosen] + [""] * len(extra),
        "world_frame": cart.world_frame,
        "joint_state_topics": [a.measured_js for a in chosen],
        "joint_state_files": list(range(len(chosen))),
        "joint_aliases": aliases or [""],
        "couplings": couplings or [""],
        "required_joints": required or [""],
    }
