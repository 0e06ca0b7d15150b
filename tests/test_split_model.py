"""The cluster split model (csrc/common/split_model.h: cluster_split_choice), which sizes the K
split of sgemm v11 and v12, and the cluster capacity it reads from the device; and the grid's
(grid_split_choice), which sizes sgemm v21's.

CPU tests: the model against a re-implementation written from its comment, over a grid, and its
choices on the capacity table of an H100 (measured, results/sweeps/cluster_capacity-*.json)
against the fastest fixed split of a sweep on that GPU. GPU tests (marker ``gpu``): the device's
table is consistent, and v11 / v12 are exact where the model launches with the load-balancing
policy.
"""

from __future__ import annotations

import itertools
import json
import pathlib

import pytest

import fastgemm
from fastgemm import _C

SWEEPS = pathlib.Path(__file__).resolve().parent.parent / "results" / "sweeps"
H100 = json.loads((SWEEPS / "cluster_capacity-nvidia-h100-80gb-hbm3.json").read_text())
CAPACITY = H100["capacity"]

# v12's rates (csrc/sgemm/v12_split_k_narrow.cu: split_rates) and v11's.
WIDE = [1.0, 1.1]
THIN = [1.0, 1.36, 1.48, 1.55]
SQUARE = [1.0]
ADD = 0.25  # csrc/sgemm/split_k_tile.cuh: CLUSTER_ADD


def _model(cap, rates, sms, tiles, k_units, min_units, most, add):
    """cluster_split_choice, written out again from its comment."""
    per_sm = len(rates)

    def fits(s, n, b):
        return sms * n if s == 1 else cap[b][n][s]

    def time(s, b):
        most_at_once = fits(s, per_sm, b)
        if most_at_once <= 0:
            return float("inf")
        share = -(-k_units // s)
        rounds = -(-tiles // most_at_once)
        n = per_sm
        if rounds == 1:  # one round: the fewest blocks per SM that hold it; more: per_sm each
            n = next(n for n in range(1, per_sm + 1) if n == per_sm or fits(s, n, b) >= tiles)
        return rounds * share * n / rates[n - 1] + (s - 1) * add

    if tiles <= 0 or sms <= 0:
        return (1, False)
    top = min(most, 8, k_units // max(min_units, 1))
    best, best_time = (1, False), time(1, 0)
    for s in range(2, top + 1):
        for b in (0, 1):
            t = time(s, b)
            if t < best_time * (1 - 1e-9):
                best, best_time = (s, bool(b)), t
    return best if best_time < float("inf") else (1, False)


def _synthetic(sms: int, gpc: list[int]) -> list:
    """A capacity table of GPCs of the given SM counts: clusters never cross a GPC."""
    assert sum(gpc) == sms
    table = [[[0] * 9 for _ in range(5)] for _ in range(2)]
    for b, n, s in itertools.product(range(2), range(1, 5), range(2, 9)):
        table[b][n][s] = sum(g * n // s for g in gpc)
    return table


@pytest.mark.parametrize(
    "cap,sms",
    [(CAPACITY, 132), (_synthetic(132, [18] * 6 + [16, 8]), 132), (_synthetic(108, [16] * 6 + [12]), 108)],
    ids=["h100", "gpc18", "gpc16"],
)
@pytest.mark.parametrize("rates", [WIDE, THIN, SQUARE], ids=["wide", "thin", "square"])
def test_model_matches_its_description(cap, sms, rates):
    for tiles in (1, 2, 7, 15, 16, 30, 31, 32, 33, 45, 64, 66, 67, 100, 132, 133, 200, 264, 500, 4096):
        for k_units in (1, 2, 3, 7, 16, 63, 64, 100, 256, 512, 896, 4096):
            for min_units, add in ((2, 1.0), (8, 0.0), (1, 4.0)):
                args = (cap, rates, sms, tiles, k_units, min_units, 8, add)
                assert _C.cluster_split_choice(*args) == _model(*args), args


def test_no_clusters_no_split():
    zero = [[[0] * 9 for _ in range(5)] for _ in range(2)]
    assert _C.cluster_split_choice(zero, WIDE, 132, 4, 4096, 2, 8, 1.0) == (1, False)
    assert _C.cluster_split_choice(CAPACITY, WIDE, 132, 0, 4096, 2, 8, 1.0) == (1, False)
    assert _C.cluster_split_choice(CAPACITY, WIDE, 132, 4, 3, 2, 8, 1.0) == (1, False)  # K too short
    with pytest.raises(ValueError, match="rates"):
        _C.cluster_split_choice(CAPACITY, [], 132, 4, 4096, 2, 8, 1.0)


def _sweep() -> dict:
    """(kernel, shape) -> {S: microseconds} of the committed fixed-split sweep."""
    out: dict = {}
    for line in (SWEEPS / "sgemm_cluster_splits-nvidia-h100-80gb-hbm3.jsonl").read_text().splitlines():
        row = json.loads(line)
        out.setdefault((row["kernel"], row["shape"]), {})[row["S"]] = row["us"]
    return out


def _tiling(kernel: str, M: int, N: int):
    """v11's or v12's tile for an output (csrc/sgemm/v12_split_k_narrow.cu) and its rates."""
    if "v11" in kernel:
        return (128, 128), SQUARE
    if M <= N:
        return ((32, 128), THIN) if M <= 32 else ((64, 128), WIDE)
    return ((128, 32), THIN) if N <= 32 else ((128, 64), WIDE)


def test_h100_choices_are_near_the_best_split():
    """On the H100's table the model's S, for every shape of the sweep, ran within 6% of the
    fastest fixed S (fixed splits 2..8 of v11 and v12, timed by benchmarks/split_sweep.py); the
    farthest is 8192x96x4096, 5% (S = 2 where 4 is faster: 96 columns are 1.5 tiles of 64)."""
    sweep = _sweep()
    assert len(sweep) >= 20
    checked = 0
    for (kernel, shape), times in sweep.items():
        M, N, K = (int(x) for x in shape.split("x"))
        (tm, tn), rates = _tiling(kernel, M, N)
        tiles = -(-M // tm) * -(-N // tn)
        s, _ = _C.cluster_split_choice(CAPACITY, rates, 132, tiles, -(-K // 16), 2, 8, ADD)
        if str(s) not in times:  # S = 1: not among the fixed splits
            continue
        best = min(v for k, v in times.items() if k != "auto")
        assert times[str(s)] <= 1.06 * best, (kernel, shape, s, times)
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize(
    "shape,rates,tile,choice",
    [
        # 64 tiles of 128x64, two blocks per SM: S = 4 fits one round only under load balancing
        # (66 clusters against 62); S = 2 runs every block alone, S = 3 doubles 60 SMs up.
        ((8192, 64, 8192), WIDE, (128, 64), (4, True)),
        # 32 tiles: S = 7 is the most that fits one round at two blocks per SM.
        ((4096, 64, 8192), WIDE, (128, 64), (7, False)),
        ((64, 4096, 14336), WIDE, (64, 128), (7, False)),
        ((32, 4096, 14336), THIN, (32, 128), (7, False)),
        # 128 tiles: S = 2 at two blocks per SM.
        ((16384, 64, 4096), WIDE, (128, 64), (2, False)),
        # v11, one block per SM: 16 tiles take S = 6, the most that fits one round (17 >= 16).
        ((512, 512, 8192), SQUARE, (128, 128), (6, False)),
        # Short K on a small output: shares of two k-tiles, as deep as one round allows (the
        # reduction's cost per share is small: 8 ways ran 256^3 in 6.8 us against 8.5 at 4).
        ((256, 256, 256), WIDE, (64, 128), (8, False)),
        ((512, 512, 512), WIDE, (64, 128), (7, False)),
        # 40 tiles: S = 5 holds them in one round at two blocks per SM; S = 8 (30 at once) took
        # two rounds, the second as slow as the first: 358 us against 292 at S = 5.
        ((64, 5120, 13824), WIDE, (64, 128), (5, False)),
    ],
)
def test_h100_choices(shape, rates, tile, choice):
    M, N, K = shape
    tiles = -(-M // tile[0]) * -(-N // tile[1])
    assert _C.cluster_split_choice(CAPACITY, rates, 132, tiles, -(-K // 16), 2, 8, ADD) == choice


@pytest.mark.gpu
def test_device_capacity_is_consistent():
    from conftest import require

    cp = require("cupy")
    device = _C.current_device()
    cap = _C.cluster_capacity(device)
    if fastgemm._device_cc(None) < 90:  # no cluster launch: no split
        assert all(v == 0 for b in cap for n in b for v in n)
        return
    sms = cp.cuda.Device(device).attributes["MultiProcessorCount"]
    for b, n, s in itertools.product(range(2), range(1, 5), range(2, 9)):
        v = cap[b][n][s]
        assert 0 < v and v * s <= sms * n, (b, n, s, v)
        assert s == 2 or v <= cap[b][n][s - 1], (b, n, s)  # larger clusters: fewer at once
        assert n == 1 or v >= cap[b][n - 1][s], (b, n, s)  # more blocks per SM: more at once
    assert cap[0][1][2] > 0 and cap[0][2][2] >= cap[0][1][2]


@pytest.mark.gpu
@pytest.mark.parametrize(
    "kernel,shape",
    [
        ("sgemm_v12_split_k_narrow", (8192, 64, 1024)),  # S = 4 under load balancing on an H100
        ("sgemm_v12_split_k_narrow", (4096, 64, 999)),
        ("sgemm_v12_split_k_narrow", (32, 4096, 3001)),
        ("sgemm_v11_split_k_tile", (512, 512, 4097)),
    ],
)
def test_split_choices_are_exact(kernel, shape):
    from conftest import require
    from gpu_reference import check_gemm, random_matrix

    cp = require("cupy")
    M, N, K = shape
    A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
    C = cp.full((M, N), cp.nan, dtype=cp.float32)
    fastgemm.sgemm(A, B, C, 1.0, 0.0, kernel=kernel)
    check_gemm(cp, A, B, C, 1.0, 0.0)
    first = C.copy()
    fastgemm.sgemm(A, B, C, 1.0, 0.0, kernel=kernel)
    assert bool((C == first).all())


# sgemm v21's rates (csrc/sgemm/v21_split_k_reduce_multistage.cu: split_rates) and partial cost
# (csrc/sgemm/split_k_tile.cuh: REDUCE_PARTIAL, REDUCE_MOST; v21's MIN_KTILES).
V21_RATES = {"wide": [1.0, 1.1, 1.15], "square": [1.0, 1.3]}
PARTIAL, MOST, MIN_KTILES = 0.002, 256, 8


def _grid_model(rates, sms, tiles, k_units, min_units, most, partial):
    """grid_split_choice, written out again from its comment: tiles x S blocks in rounds of sms x
    per_sm, a single round at the fewest blocks per SM that hold it, every round of several at
    per_sm; each partial tile costs `partial`."""
    per_sm = len(rates)

    def time(s):
        blocks = tiles * s
        rounds = -(-blocks // (sms * per_sm))
        n = (
            per_sm
            if rounds > 1
            else next(n for n in range(1, per_sm + 1) if n == per_sm or sms * n >= blocks)
        )
        return rounds * -(-k_units // s) * n / rates[n - 1] + blocks * partial

    if tiles <= 0 or sms <= 0:
        return 1
    top = max(1, min(most, k_units // max(min_units, 1)))
    best, best_time = 1, time(1)
    for s in range(2, top + 1):
        if time(s) < best_time * (1 - 1e-9):
            best, best_time = s, time(s)
    return best


@pytest.mark.parametrize("rates", sorted(V21_RATES), ids=str)
def test_grid_split_matches_its_description(rates):
    r = V21_RATES[rates]
    for sms, tiles, k_units in itertools.product(
        (108, 132), (1, 2, 6, 9, 24, 32, 56, 64, 131, 132, 133, 264, 424), (1, 7, 8, 64, 128, 442, 1024, 4096)
    ):
        got = _C.grid_split_choice(r, sms, tiles, k_units, MIN_KTILES, MOST, PARTIAL)
        assert got == _grid_model(r, sms, tiles, k_units, MIN_KTILES, MOST, PARTIAL), (sms, tiles, k_units)


def test_grid_split_fills_the_block_slots():
    # Forced splits of v21 (FASTGEMM_DEV_SPLIT_K, H100, benchmarks/NOTES.md) ran fastest where the
    # split fills the slots of three 64x128 blocks per SM: 9 tiles of 442 k-tiles (158x330x7071)
    # at 44 shares (the model: the fewest shares of that length, 11 k-tiles, 41), 32 tiles
    # (64x4096x14336) at 12; a deep K over one tile takes as many shares as allowed.
    wide = V21_RATES["wide"]
    s = _C.grid_split_choice(wide, 132, 9, 442, MIN_KTILES, MOST, PARTIAL)
    assert 9 * s > 2 * 132 and -(-442 // s) == -(-442 // 44), s
    assert _C.grid_split_choice(wide, 132, 32, 896, MIN_KTILES, MOST, PARTIAL) == 12
    assert _C.grid_split_choice(wide, 132, 1, 4096, MIN_KTILES, MOST, PARTIAL) == 256
    assert _C.grid_split_choice(wide, 132, 1, 64, MIN_KTILES, MOST, PARTIAL) == 8  # shares of 8
