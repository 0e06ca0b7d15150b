"""Fit the last-round model's constants (csrc/plan.cpp: last_round_cost) to a sweep of v20, v31
and v32 beside auto (benchmarks/sweep.py --prefill --kernels ...).

    python benchmarks/fit_last_round.py results/sweeps/prefill-tile192-float16-*.csv

For each candidate (split cost c, narrow-tile cost e, threshold X), v32 is taken where the model
says 128x192 tiles cost less than X times 128x256 ones and auto took a 128x256 persistent rung
(v20 or v31: the split-K, stream-K and narrow-tile rules come first and keep their shapes). It
prints the geometric mean of auto's time over the time of that choice, the worst shape's ratio,
and how many shapes it moves, best first.
"""

from __future__ import annotations

import collections
import csv
import math
import sys

SMS = 132
WIDE = {"hgemm_v20_hoisted_beta", "hgemm_v31_split_last_round"}


def rounds(m: int, n: int, k: int, tile_n: int, split_cost: float) -> float:
    """Rounds of 128 x tile_n tiles, the last partial one split as hopper/scheduler.cuh: Hybrid."""
    tiles = -(-m // 128) * -(-n // tile_n)
    rest = tiles % SMS
    split = 1 if rest == 0 else min(SMS // rest, 4, max(1, -(-k // 64) // 4))
    return tiles // SMS + (0 if rest == 0 else 1 / split + (split_cost if split > 1 else 0))


def main() -> int:
    us: dict[tuple[int, int, int], dict[str, float]] = collections.defaultdict(dict)
    auto: dict[tuple[int, int, int], str] = {}
    for path in sys.argv[1:]:
        with open(path) as f:
            for row in csv.DictReader(f):
                shape = (int(row["M"]), int(row["N"]), int(row["K"]))
                us[shape][row["candidate"]] = float(row["us"])
                auto[shape] = row["auto_kernel"]
    shapes = [s for s in us if "hgemm_v32_split_last_round_192" in us[s] and "auto" in us[s]]
    fits = []
    for c in (0.0, 0.1, 0.2, 0.3, 0.4):
        for e in (1.0, 1.05, 1.1):
            for x in (0.9, 0.95, 1.0):
                logs, worst, moved = 0.0, (math.inf, None), 0
                for s in shapes:
                    take = auto[s] in WIDE and rounds(*s, 192, c) * 192 * e < x * rounds(*s, 256, c) * 256
                    pick = us[s]["hgemm_v32_split_last_round_192"] if take else us[s]["auto"]
                    ratio = us[s]["auto"] / pick
                    logs += math.log(ratio)
                    worst = min(worst, (ratio, s))
                    moved += take
                fits.append((math.exp(logs / len(shapes)), worst[0], c, e, x, moved, worst[1]))
    for gain, worst_ratio, c, e, x, moved, at in sorted(fits, reverse=True)[:10]:
        print(
            f"gain {gain:.4f}  worst {worst_ratio:.3f}  c={c:.1f} e={e:.2f} x={x:.2f}  moves {moved}  (worst at {at})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
