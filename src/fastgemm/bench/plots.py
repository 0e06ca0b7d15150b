"""The PNGs: of a dtype's results, TFLOPS by rung, one line per shape along the main line, branches
as unconnected hollow markers, cuBLAS dashed; of a suite run, the ratio to the faster peer per
shape. matplotlib is optional (the ``bench`` extra); without it there is a warning and no plot.
"""

from __future__ import annotations

import os
import re
from typing import Any

from .report import timings_of, warn
from .tables import (
    AUTO,
    CUBLAS,
    TIMING_PREFIX,
    TIMING_SHORT,
    branch_names,
    cube_label,
    shape_label,
    shapes_in,
)


def _pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, or None (with a warning) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warn("matplotlib is not installed: no plot (pip install matplotlib, or pass --no-plot)")
        return None
    return plt


def plot(path: str | os.PathLike, dtype: str, meta: dict, results: list[dict]) -> bool:
    """TFLOPS by rung, one line per shape, cuBLAS as a dashed line of the same colour (device time;
    end-to-end when only that was measured)."""
    timing = timings_of(meta)[0]
    key = TIMING_PREFIX[timing] + "tflops"
    plt = _pyplot()
    if plt is None:
        return False
    rungs = sorted(
        {
            (r["version"], r["kernel"])
            for r in results
            if r["version"] is not None and r["kernel"] not in (CUBLAS, AUTO)
        }
    )
    if not rungs:
        return False
    branches = branch_names(results)
    fig, ax = plt.subplots(figsize=(10, 6))
    drew = False
    for i, (M, N, K) in enumerate(shapes_in(results)):
        color = f"C{i % 10}"
        rows = [r for r in results if (r["M"], r["N"], r["K"]) == (M, N, K)]
        by_rung = {
            r["version"]: r[key]
            for r in rows
            if r["kernel"] not in (CUBLAS, AUTO) and r["version"] is not None and r.get(key)
        }
        label = cube_label(M, N, K)
        if by_rung:  # WRONG/ERROR rungs are gaps in the line; branches sit beside it
            main = [v for v, n in rungs if n not in branches]
            ax.plot(main, [by_rung.get(v, float("nan")) for v in main], marker="o", color=color, label=label)
            side = [v for v, n in rungs if n in branches and v in by_rung]
            if side:
                ax.plot(
                    side, [by_rung[v] for v in side], linestyle="none", marker="o", mfc="none", color=color
                )
            drew = True
        cub = next((r[key] for r in rows if r["kernel"] == CUBLAS and r.get(key)), None)
        if cub:
            ax.axhline(cub, color=color, linestyle="--", linewidth=1, label=f"cuBLAS {label}")
            drew = True
    if not drew:
        plt.close(fig)
        return False
    ax.set_yscale("log")
    ax.set_xticks([v for v, _ in rungs])
    ax.set_xticklabels(
        [re.sub(r"^[a-z]+gemm_", "", n) + (" (branch)" if n in branches else "") for _, n in rungs],
        rotation=30,
        ha="right",
        fontsize=8,
    )
    ax.set_xlabel("rung")
    ax.set_ylabel("TFLOPS (log scale)")
    ax.set_title(
        f"fastgemm {dtype} on {meta.get('gpu', '?')}, {TIMING_SHORT[timing]} time (dashed: cuBLAS, same run)"
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return True


def plot_suite(path: str | os.PathLike, meta: dict, records: list[dict]) -> bool:
    """The ratio (the faster peer's time / fastgemm's) per shape on a log scale: device time as
    bars from parity (1) coloured by category, end-to-end as black markers."""
    shown = [r for r in records if r.get("ratio") or r.get("e2e_ratio")]
    if not shown:
        return False
    plt = _pyplot()
    if plt is None:
        return False
    colors = {c: f"C{i % 10}" for i, c in enumerate(dict.fromkeys(r["category"] for r in records))}
    x = list(range(len(shown)))
    fig, ax = plt.subplots(figsize=(max(8.0, 0.22 * len(shown) + 2), 6))
    for category, color in colors.items():
        xs = [i for i, r in zip(x, shown) if r["category"] == category and r.get("ratio")]
        if not xs:
            continue
        ax.bar(xs, [shown[i]["ratio"] - 1.0 for i in xs], bottom=1.0, color=color, label=category)
    e2e = [(i, r["e2e_ratio"]) for i, r in zip(x, shown) if r.get("e2e_ratio")]
    ax.plot(
        [i for i, _ in e2e], [v for _, v in e2e], "k_", markersize=8, linestyle="none", label="end-to-end"
    )
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    for axis_format in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
        axis_format(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.set_xticks(x)
    ax.set_xticklabels([shape_label(r["M"], r["N"], r["K"]) for r in shown], rotation=90, fontsize=6)
    ax.set_xlim(-0.6, len(shown) - 0.4)
    ax.set_ylabel("faster peer's time / fastgemm's (log; > 1: fastgemm faster)")
    peers = meta.get("peers") or ["cuBLAS"]
    against = f"the faster of {' and '.join(peers)}" if len(peers) > 1 else peers[0]
    ax.set_title(
        f'fastgemm kernel="auto" vs {against}, {meta.get("dtype")} on {meta.get("gpu", "?")} '
        "(bars: device time)"
    )
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return True
