"""A run you can watch: ``testbed animate RUN_DIR -o run.gif`` (or ``.mp4``, ``.html``).

Each frame shows the network at one instant of the run, rebuilt from the run folder
(the topology and its movements from ``spec.json``, the traffic from the ledger, the
deaths and batteries from ``meta.json`` and ``metrics.parquet``):

- nodes where the run's network had them at that instant's epoch (a node's position
  is its epoch's first sample: under the unit disk an epoch lasts while the links stay,
  so a node moves in steps), the query node as a star, a dead node as a grey cross;
- the links up then, thin and grey;
- the traffic of the frame's interval per link: data (every kind but routing) in blue,
  routing control in orange, wider for more hops;
- the route of one flow (the source–destination pair that sent the most data
  messages): the hops of its last message sent by then, in green;
- with batteries, each battery's residual energy as the node's colour (its last
  sample at or before the frame, full to empty), mains-powered nodes in white.

The file is written beside its final name and renamed when complete. ``.gif`` needs
only Pillow (matplotlib's own dependency), ``.html`` is a self-contained page with the
frames embedded, ``.mp4`` needs ffmpeg on the PATH.

>>> frame_times(10.0, 5)
[2.0, 4.0, 6.0, 8.0, 10.0]
"""
from __future__ import annotations

import math
import os
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import networkx as nx
import numpy as np
import pandas as pd
from matplotlib.animation import FFMpegWriter, FuncAnimation, HTMLWriter, PillowWriter
from matplotlib.figure import Figure
from tqdm import tqdm

from analysis import plots
from analysis.loading import run_with_ledger
from experiments.spec import SpecError

#: The formats ``animate`` writes, by suffix.
FORMATS = (".gif", ".mp4", ".html")
DATA, CONTROL, ROUTE = "#1f77b4", "#ff7f0e", "#2ca02c"


class AnimationError(SpecError):
    """What cannot be animated: ``folder or file: what: what was expected`` (a
    :class:`~experiments.spec.SpecError`, so the command line prints it in one line)."""


def frame_times(end: float, frames: int) -> list[float]:
    """The instants of ``frames`` frames over ``(0, end]``, each the end of its interval."""
    return [end * (k + 1) / frames for k in range(frames)]


@dataclass
class _Scene:
    """What every frame reads, gathered once from the run folder."""

    plan: object
    ledger: pd.DataFrame
    deaths: dict
    batteries: pd.DataFrame | None   # (time, node, value) rows of energy_j
    full: dict                       # node -> battery at the start
    flow: pd.DataFrame               # the chosen flow's data hops
    layout: dict | None              # positions when the topology has none


def animate(run_dir, out, *, frames: int = 60, fps: int = 10,
            progress: bool = True) -> Path:
    """Draw the run in ``run_dir`` as ``frames`` frames into ``out`` (see the module
    docstring); returns the path written."""
    run_dir, out = Path(run_dir), Path(out)
    if out.suffix not in FORMATS:
        raise AnimationError(str(out), "--output", f"expected a file ending in "
                                                   f"{', '.join(FORMATS)}")
    if not (isinstance(frames, int) and frames >= 1) or not fps > 0:
        raise AnimationError("animate", "--frames, --fps", f"expected a whole number of "
                             f"frames >= 1 and a rate > 0, got {frames!r} and {fps!r}")
    if out.suffix == ".mp4" and shutil.which("ffmpeg") is None:
        raise AnimationError(str(out), "--output", "writing .mp4 needs ffmpeg on the PATH "
                             "(apt-get install ffmpeg); .gif and .html need nothing more")
    scene = _scene(run_dir)
    end = _end(scene)
    times = frame_times(end, frames)
    with matplotlib.rc_context(plots.STYLE):
        fig = Figure(figsize=(6.4, 6.4), layout="constrained")
        ax = fig.subplots()
        anim = FuncAnimation(fig, lambda k: _draw(ax, scene, times[k], end / frames),
                             frames=len(times), blit=False)
        writer = {".gif": PillowWriter, ".mp4": FFMpegWriter}.get(out.suffix)
        writer = writer(fps=fps) if writer else HTMLWriter(fps=fps, embed_frames=True)
        partial = out.with_name(f".{out.stem}.partial-{os.getpid()}{out.suffix}")
        bar = tqdm(total=len(times), desc=f"animate {run_dir.name}", unit="frame",
                   disable=not progress)
        try:
            anim.save(partial, writer=writer,
                      progress_callback=lambda i, n: bar.update(1))
            partial.replace(out)
        finally:
            bar.close()
            partial.unlink(missing_ok=True)
    return out


def _scene(run_dir: Path) -> _Scene:
    from analysis.energy_section import plan_of

    run = run_with_ledger(run_dir, AnimationError, "there is no traffic to draw")
    plan = plan_of(run)
    if plan is None:
        raise AnimationError(str(run_dir), "topology", "the run's topology cannot be "
                             "rebuilt (a file its spec names is not beside the folder or "
                             "the shipped specs)")
    # in time order, so that a frame's interval is a slice (a frame scanned every row)
    ledger = run.ledger.sort_values("time", kind="stable").reset_index(drop=True)
    energy = run.meta.get("backend_info", {}).get("energy", {})
    deaths = {int(u): float(t) for u, t in energy.get("deaths", {}).items()}
    batteries, full = None, {}
    if run.has_table("metrics"):
        m = run.metrics
        rows = m[(m["metric"] == "energy_j") & (m["source"] == "network")]
        if len(rows):
            batteries = rows[["time", "node", "value"]].sort_values("time")
            full = batteries.groupby("node")["value"].first().to_dict()
    graph = plan.dynamics.snapshot(0.0)
    layout = None
    if any("pos" not in data for _, data in graph.nodes(data=True)):
        layout = nx.spring_layout(graph, seed=0)      # no positions: one fixed layout
    return _Scene(plan, ledger, deaths, batteries, full, _busiest_flow(ledger), layout)


def _busiest_flow(ledger: pd.DataFrame) -> pd.DataFrame:
    """The data hops of the (src, dst) pair that sent the most data messages."""
    data = ledger[ledger["kind"] != "routing"]
    if data.empty:
        return data
    firsts = data.drop_duplicates("msg_id")
    (src, dst), _ = Counter(zip(firsts["src"], firsts["dst"])).most_common(1)[0]
    return data[(data["src"] == src) & (data["dst"] == dst)]


def _end(scene: _Scene) -> float:
    last = float(scene.ledger["time"].max()) if len(scene.ledger) else 0.0
    return max(float(scene.plan.duration), last)


def _positions(scene: _Scene, graph: nx.Graph) -> dict:
    if scene.layout is not None:
        return scene.layout
    return {u: data["pos"] for u, data in graph.nodes(data=True)}


def _draw(ax, scene: _Scene, t: float, span: float) -> None:
    """Frame at ``t``: the traffic of ``(t - span, t]``."""
    ax.clear()
    graph = scene.plan.dynamics.snapshot(t)
    pos = _positions(scene, graph)
    dead = {u for u, at in scene.deaths.items() if at <= t}
    for u, v in graph.edges:
        if u in dead or v in dead:      # the plan's epochs do not know of batteries
            continue
        (x0, y0), (x1, y1) = pos[u], pos[v]
        ax.plot([x0, x1], [y0, y1], color="0.85", linewidth=0.6, zorder=1)
    first, last = np.searchsorted(scene.ledger["time"].to_numpy(), [t - span, t],
                                  side="right")
    window = scene.ledger.iloc[first:last]
    for routing, color in ((False, DATA), (True, CONTROL)):
        hops = window[(window["kind"] == "routing") == routing]
        for (u, v), count in Counter(zip(hops["hop_u"], hops["hop_v"])).items():
            if u in pos and v in pos:
                (x0, y0), (x1, y1) = pos[u], pos[v]
                ax.plot([x0, x1], [y0, y1], color=color, alpha=0.7, zorder=2,
                        linewidth=1.0 + 1.5 * math.log1p(count))
    sent = scene.flow[scene.flow["time"] <= t]
    if len(sent):
        last = sent[sent["msg_id"] == sent["msg_id"].iloc[-1]]
        for u, v in zip(last["hop_u"], last["hop_v"]):
            (x0, y0), (x1, y1) = pos[u], pos[v]
            ax.annotate("", (x1, y1), (x0, y0), zorder=3,
                        arrowprops={"arrowstyle": "->", "color": ROUTE, "linewidth": 2})
    _draw_nodes(ax, scene, pos, dead, t)
    batteries = ("\nnode colour: battery left (yellow full, purple empty; white: "
                 "mains); x: dead" if scene.batteries is not None else "")
    ax.set_title(f"t = {t:.2f}: data (blue), control (orange), one flow's route (green)"
                 f"{batteries}", fontsize=9)
    ax.set_aspect("equal")
    ax.set_axis_off()


def _draw_nodes(ax, scene: _Scene, pos: dict, dead: set, t: float) -> None:
    query = scene.plan.query.node
    level = _battery_levels(scene, t)
    cmap = matplotlib.colormaps["viridis"]
    for u, (x, y) in pos.items():
        if u in dead:
            ax.plot(x, y, marker="x", color="0.5", markersize=7, zorder=4)
            continue
        # no battery samples: mains-powered (white) or a run without batteries
        face = cmap(level[u]) if u in level else (
            "white" if scene.batteries is not None else "#9ecae1")
        ax.plot(x, y, marker="*" if u == query else "o", markersize=14 if u == query else 7,
                markerfacecolor=face, markeredgecolor="black", zorder=5)


def _battery_levels(scene: _Scene, t: float) -> dict:
    """node -> residual energy over its first sample (0 empty, 1 full), at or before t."""
    if scene.batteries is None:
        return {}
    seen = scene.batteries[scene.batteries["time"] <= t]
    last = seen.groupby("node")["value"].last()
    return {int(u): float(np.clip(v / scene.full[u], 0.0, 1.0)) if scene.full[u] > 0
            else 0.0 for u, v in last.items()}
