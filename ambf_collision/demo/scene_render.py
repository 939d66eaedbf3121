"""PNG picture of a collision scene (matplotlib, Agg backend: no display needed).

Two 3-D views side by side: the whole scene, and a close-up around the deepest contact (or the
closest pair). Every collision shape is drawn as a surface in world coordinates, coloured by the
smallest signed distance of any checked pair it belongs to: red in contact (< 0), orange within
``near`` metres, yellow within the report distance, green farther, grey when never checked.
Contacts show their witness points and the normal (body_1 -> body_2) as an arrow; tactile probes
are dots coloured by the magnitude of their force (N). Units: metres, world frame.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["render_scene_png", "shape_distances", "shape_surfaces"]

RED, ORANGE, YELLOW, GREEN, GREY = "#d62728", "#ff7f0e", "#f2c12e", "#2ca02c", "#9e9e9e"


def shape_distances(model, result) -> np.ndarray:
    """Per shape ``(S,)`` the smallest signed distance (m) over the checked pairs it is in;
    +inf for shapes in no pair."""
    S = len(model.shapes)
    out = np.full(S, np.inf)
    pairs = np.asarray(model.pairs, dtype=np.intp).reshape(-1, 2)
    if pairs.size:
        d = np.asarray(result.distances, dtype=float)
        np.minimum.at(out, pairs[:, 0], d)
        np.minimum.at(out, pairs[:, 1], d)
    return out


def _colour(d: float, report: float, near: float) -> str:
    if not math.isfinite(d):
        return GREY
    if d < 0.0:
        return RED
    if d < near:
        return ORANGE
    if d < report:
        return YELLOW
    return GREEN


def _frame(axis):
    """Orthonormal ``(e1, e2, e3)`` with ``e3`` along ``axis``."""
    e3 = np.asarray(axis, float)
    n = np.linalg.norm(e3)
    e3 = e3 / n if n > 0 else np.array([0.0, 0.0, 1.0])
    helper = np.array([1.0, 0.0, 0.0]) if abs(e3[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(e3, helper)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(e3, e1), e3


def _revolve(profile_z, profile_r, origin, R, n=40):
    """Surface of revolution about local z of ``R`` (columns e1, e2, e3) placed at ``origin``."""
    th = np.linspace(0.0, 2.0 * np.pi, n)
    z = np.asarray(profile_z, float)[:, None]
    r = np.asarray(profile_r, float)[:, None]
    pts = (r * np.cos(th))[..., None] * R[:, 0] + (r * np.sin(th))[..., None] * R[:, 1] \
        + (z * np.ones_like(th))[..., None] * R[:, 2] + np.asarray(origin, float)
    return pts[..., 0], pts[..., 1], pts[..., 2]


def shape_surfaces(shape, plane_center=None, plane_size=1.6):
    """Drawable pieces of one world-frame shape: a list of ``("surface", X, Y, Z)`` or
    ``("polys", [ (4,3) arrays ])`` (planar quads) or ``("triangles", [ (3,3) arrays ])`` (a
    hull's faces, a mesh's triangles) or ``("points", (k,3))``."""
    kind = shape.kind
    if kind == 0:  # sphere
        ang = np.linspace(-np.pi / 2, np.pi / 2, 20)
        return [("surface",) + _revolve(shape.radius * np.sin(ang), shape.radius * np.cos(ang),
                                        shape.center, np.eye(3))]
    if kind == 1:  # capsule
        a, b = np.asarray(shape.a, float), np.asarray(shape.b, float)
        L = float(np.linalg.norm(b - a))
        e1, e2, e3 = _frame(b - a if L > 0 else [0, 0, 1])
        r = float(shape.radius)
        ang_lo = np.linspace(-np.pi / 2, 0.0, 10)
        ang_hi = np.linspace(0.0, np.pi / 2, 10)
        m = max(2, int(L / max(r, 1e-6) * 3))  # rings along the straight part (smooth clipping)
        ang_lo = np.concatenate([ang_lo, np.zeros(m - 2)])
        ang_hi = np.concatenate([np.zeros(m - 2), ang_hi])
        z = np.concatenate([r * np.sin(ang_lo[:10]), np.linspace(0.0, L, m)[1:-1],
                            L + r * np.sin(ang_hi[-10:])])
        ang_lo, ang_hi = ang_lo[:10], ang_hi[-10:]
        rho = np.concatenate([r * np.cos(ang_lo), np.full(m - 2, r), r * np.cos(ang_hi)])
        return [("surface",) + _revolve(z, rho, a, np.column_stack([e1, e2, e3]))]
    if kind in (3, 4):  # cylinder, cone: axis local z, centred at position
        R = np.asarray(shape.rotation, float)
        h, r = float(shape.height), float(shape.radius)
        if kind == 3:
            z = [-h / 2, -h / 2, h / 2, h / 2]
            rho = [0.0, r, r, 0.0]
        else:
            z = [-h / 2, -h / 2, h / 2]
            rho = [0.0, r, 0.0]
        return [("surface",) + _revolve(z, rho, shape.position, R)]
    if kind == 2:  # box
        R = np.asarray(shape.rotation, float)
        hs = 0.5 * np.asarray(shape.size, float)
        corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * hs
        w = corners @ R.T + np.asarray(shape.position, float)
        faces = [[0, 1, 3, 2], [4, 5, 7, 6], [0, 1, 5, 4], [2, 3, 7, 6], [0, 2, 6, 4], [1, 3, 7, 5]]
        return [("polys", [w[f] for f in faces])]
    if kind == 5:  # plane n . x = offset: a square around the projection of plane_center
        n = np.asarray(shape.normal, float)
        c = np.zeros(3) if plane_center is None else np.asarray(plane_center, float)
        c = c - (n @ c - float(shape.offset)) * n
        e1, e2, _ = _frame(n)
        s = plane_size / 2
        quad = np.array([c + s * (i * e1 + j * e2) for i, j in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
        return [("plane", [quad])]
    if kind == 6:  # convex hull: its faces (its vertices when flat: no solid to draw)
        R = np.asarray(shape.rotation, float)
        v = np.asarray(shape.vertices, float) @ R.T + np.asarray(shape.position, float)
        try:
            from scipy.spatial import ConvexHull, QhullError

            return [("triangles", list(v[ConvexHull(v).simplices]))]
        except (QhullError, ValueError):
            return [("points", v)]
    if kind == 7:  # triangle mesh
        R = np.asarray(shape.rotation, float)
        v = np.asarray(shape.mesh.vertices, float) @ R.T + np.asarray(shape.position, float)
        return [("triangles", list(v[np.asarray(shape.mesh.faces)]))]
    raise ValueError(f"unknown shape kind {kind!r}")


def _subdivide(quad, m):
    """Split a planar quad ``(4,3)`` (corners in order) into ``m x m`` quads."""
    q = np.asarray(quad, float)
    u = np.linspace(0.0, 1.0, m + 1)
    a, b, c, d = q
    grid = ((1 - u)[:, None, None] * ((1 - u)[None, :, None] * a + u[None, :, None] * b)
            + u[:, None, None] * ((1 - u)[None, :, None] * d + u[None, :, None] * c))
    return [np.array([grid[i, j], grid[i, j + 1], grid[i + 1, j + 1], grid[i + 1, j]])
            for i in range(m) for j in range(m)]


def _inside(quads, box):
    """Quads whose centre lies in the axis-aligned ``box = (lo, hi)``."""
    lo, hi = box
    return [q for q in quads if np.all((q.mean(0) >= lo) & (q.mean(0) <= hi))]


def _draw_shape(ax, pieces, colour, clip=False, box=None):
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    for piece in pieces:
        if box is not None and piece[0] in ("polys", "plane"):
            quads = [sq for quad in piece[1] for sq in _subdivide(quad, 30)]
            piece = (piece[0], _inside(quads, box))
            if not piece[1]:
                continue
        if piece[0] == "triangles":  # fine already: clipped whole, drawn as polygons
            piece = ("polys", piece[1] if box is None else _inside(piece[1], box))
            if not piece[1]:
                continue
        if piece[0] == "surface":
            ax.plot_surface(piece[1], piece[2], piece[3], color=colour, alpha=0.55, linewidth=0.15,
                            edgecolor=(0.2, 0.2, 0.2, 0.25), shade=True, **_clip(clip))
        elif piece[0] == "polys":
            edge = (0.2, 0.2, 0.2, 0.6) if box is None else "none"
            ax.add_collection3d(Poly3DCollection(piece[1], facecolor=colour, alpha=0.35,
                                                 edgecolor=edge, linewidth=0.6),
                                **_clip(clip))
        elif piece[0] == "plane":
            edge = (0.4, 0.4, 0.4, 0.4) if box is None else "none"
            ax.add_collection3d(Poly3DCollection(piece[1], facecolor=colour, alpha=0.12,
                                                 edgecolor=edge, linewidth=0.5),
                                **_clip(clip))
        elif piece[0] == "points":
            v = piece[1]
            ax.scatter(v[:, 0], v[:, 1], v[:, 2], color=colour, s=2, **_clip(clip))


def _clip(clip: bool) -> dict:
    """``axlim_clip`` (matplotlib >= 3.10) for the close-up, so shapes stop at the axes box."""
    import matplotlib

    major, minor = (int(x) for x in matplotlib.__version__.split(".")[:2])
    return {"axlim_clip": True} if clip and (major, minor) >= (3, 10) else {}


def _set_equal(ax, lo, hi):
    c = 0.5 * (lo + hi)
    half = 0.5 * float(np.max(hi - lo))
    ax.set_xlim(c[0] - half, c[0] + half)
    ax.set_ylim(c[1] - half, c[1] + half)
    ax.set_zlim(c[2] - half, c[2] + half)
    ax.set_box_aspect((1, 1, 1))


def render_scene_png(path, model, result, probe_result=None, *, time=None, title=None,
                     report_distance=0.05, near=0.01, normal_length=0.08, zoom_size=0.12,
                     elev=22.0, azim=-58.0, dpi=110, size=(13.0, 6.4)):
    """Write a PNG picture of ``model`` posed as in ``result`` (an ``EvaluationResult``:
    ``body_R``, ``body_t``, ``distances``, ``contacts``, ``min_distance``) to ``path``.

    ``probe_result``: optional probe result (``position (N,3)``, ``force (N,3)``,
    ``in_contact``); ``time`` (s) goes into the title. Returns ``path``.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib import cm, colors

    R, t = np.asarray(result.body_R, float), np.asarray(result.body_t, float)
    world = [s.transformed(R[b], t[b]) for s, b in zip(model.shapes, model.shape_body)]
    dist = shape_distances(model, result)
    contacts = list(result.contacts)

    # extents of the bounded shapes (planes excluded) for the overview
    pts = []
    for s in world:
        if s.kind == 5:
            continue
        for piece in shape_surfaces(s):
            if piece[0] == "surface":
                pts.append(np.stack([piece[1].ravel(), piece[2].ravel(), piece[3].ravel()], 1))
            elif piece[0] in ("polys", "triangles"):
                pts.append(np.concatenate(piece[1]))
            else:
                pts.append(piece[1])
    allp = np.concatenate(pts) if pts else np.zeros((1, 3))
    lo, hi = allp.min(0), allp.max(0)
    centre = 0.5 * (lo + hi)
    span = float(np.max(hi - lo))
    for s in world:  # keep planes in view
        if s.kind == 5:
            n = np.asarray(s.normal, float)
            foot = centre - (n @ centre - float(s.offset)) * n
            lo, hi = np.minimum(lo, foot), np.maximum(hi, foot)

    # focus of the close-up: deepest contact, else the probes, else the closest pair
    if contacts:
        focus = np.asarray(contacts[0].position, float)
    elif probe_result is not None and len(probe_result.position):
        focus = np.asarray(probe_result.position, float).mean(0)
    else:
        focus = centre

    fig = plt.figure(figsize=size, dpi=dpi)
    fig.patch.set_facecolor("white")
    axes = [fig.add_subplot(1, 2, 1, projection="3d"), fig.add_subplot(1, 2, 2, projection="3d")]
    fmax = 0.0
    if probe_result is not None and len(probe_result.position):
        fmag = np.linalg.norm(np.asarray(probe_result.force, float), axis=1)
        fmag = np.where(np.isfinite(fmag), fmag, 0.0)
        fmax = float(fmag.max())
    norm = colors.Normalize(vmin=0.0, vmax=max(fmax, 1e-6))
    cmap = matplotlib.colormaps["plasma"]

    for k, ax in enumerate(axes):
        zoom = k == 1
        for s, d in zip(world, dist):
            pieces = shape_surfaces(s, plane_center=focus if zoom else centre,
                                    plane_size=(zoom_size * 1.4 if zoom else max(span * 1.2, 0.5)))
            box = (focus - zoom_size / 2, focus + zoom_size / 2) if zoom else None
            _draw_shape(ax, pieces, _colour(d, report_distance, near), clip=zoom, box=box)
        arrow = normal_length * (0.3 if zoom else 1.0)
        for c in contacts:
            p1, p2 = np.asarray(c.point_1, float), np.asarray(c.point_2, float)
            n = np.asarray(c.normal, float)
            col = RED if c.distance < 0 else "#333333"
            ax.scatter(*np.stack([p1, p2]).T, color="black", s=10 if zoom else 6, depthshade=False,
                       **_clip(zoom))
            ax.plot(*np.stack([p1, p2]).T, color=col, linewidth=1.2, **_clip(zoom))
            pos = np.asarray(c.position, float)
            ax.quiver(*pos, *(n * arrow), color=col, linewidth=1.6, arrow_length_ratio=0.25,
                      **_clip(zoom))
        if probe_result is not None and len(probe_result.position):
            p = np.asarray(probe_result.position, float)
            touching = np.asarray(probe_result.in_contact, bool)
            cols = np.where(touching[:, None], cmap(norm(fmag)), colors.to_rgba("#bdbdbd"))
            ax.scatter(p[:, 0], p[:, 1], p[:, 2], c=cols, s=22 if zoom else 4, depthshade=False,
                       edgecolors="black" if zoom else "none", linewidths=0.3, **_clip(zoom))
        if zoom:
            h = zoom_size / 2
            _set_equal(ax, focus - h, focus + h)
            ax.set_title("close-up", fontsize=10)
        else:
            pad = 0.05 * span
            _set_equal(ax, lo - pad, hi + pad)
        ax.view_init(elev=elev, azim=azim)
        ax.set_xlabel("x (m)", fontsize=8)
        ax.set_ylabel("y (m)", fontsize=8)
        ax.set_zlabel("z (m)", fontsize=8)
        ax.tick_params(labelsize=7)

    md = float(result.min_distance)
    md_text = "none checked" if not math.isfinite(md) else f"{md * 1e3:+.1f} mm"
    head = title or "ambf_collision"
    when = f"t = {time:.2f} s   " if time is not None else ""
    deepest = ""
    if contacts:
        c = contacts[0]
        deepest = (f"   closest: {c.body_1.rsplit('/', 1)[-1]} - {c.body_2.rsplit('/', 1)[-1]}")
    fig.suptitle(f"{head}   {when}min distance {md_text}{deepest}", fontsize=12)

    from matplotlib.patches import Patch

    legend = [Patch(color=RED, label="in contact (< 0)"),
              Patch(color=ORANGE, label=f"< {near * 1e3:.0f} mm"),
              Patch(color=YELLOW, label=f"< {report_distance * 1e3:.0f} mm"),
              Patch(color=GREEN, label="farther")]
    fig.legend(handles=legend, loc="lower left", fontsize=8, ncol=4, frameon=False)
    if probe_result is not None and len(probe_result.position):
        sm = cm.ScalarMappable(norm=norm, cmap=cmap)
        cb = fig.colorbar(sm, ax=axes[1], shrink=0.55, pad=0.08)
        cb.set_label("probe force (N)", fontsize=8)
        cb.ax.tick_params(labelsize=7)
    fig.subplots_adjust(left=0.0, right=0.97, bottom=0.06, top=0.92, wspace=0.02)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
