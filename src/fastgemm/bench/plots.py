"""The PNG of a dtype's results: TFLOPS by rung, one line per shape along the main line, branches
as unconnected hollow markers, cuBLAS dashed. matplotlib is optional (the ``bench`` extra); without
it there is a warning and no plot.
"""

from __future__ import annotations

import os
import re

from .report import TIMING_PREFIX, TIMING_SHORT, timings_of, warn
from .tables import AUTO, CUBLAS, branch_names, cube_label, shapes_in


def plot(path: str | os.PathLike, dtype: str, meta: dict, results: list[dict]) -> bool:
    """TFLOPS by rung, one line per shape, cuBLAS as a dashed line of the same colour (device time;
    end-to-end when only that was measured)."""
    timing = timings_of(meta)[0]
    key = TIMING_PREFIX[timing] + "tflops"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warn("matplotlib is not installed: no plot (pip install matplotlib, or pass --no-plot)")
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
