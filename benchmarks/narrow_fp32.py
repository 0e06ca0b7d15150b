"""Narrow fp32 outputs with a long K: auto, the split kernels one by one, and torch.matmul.

    python benchmarks/narrow_fp32.py 60 --seed 11 --out results/sweeps

Random problems: one side 8-128, the other 129-4096 (either way round), K 2048-40000, any sizes;
a quarter of the A and of the B operands column-major (transposed views). Each kernel's output is
checked against float64; device time is CUDA events around back-to-back calls (TF32 off for
torch), median of 3 rounds. The rule that sends tall narrow outputs over few tiles to
sgemm_v20_split_k_reduce was fitted to this sweep. Writes narrow-v20-float32-<gpu>.json.

    python benchmarks/narrow_fp32.py 120 --seed 12 --short-k --out results/sweeps

Short K instead: M and N 64-16384 (2^16 to 2^26 outputs), K 8-512, any sizes; auto, the 128x128
rungs (v09, v17) and the 64x128 ones (v12, v18, whose split stays 1 on a short K), and v16.
Writes short-k-float32-<gpu>.json.

    python benchmarks/narrow_fp32.py 200 --seed 14 --tiles --out results/sweeps

Random shapes drawn as random_shapes.py draws them (fp32's 2^34 multiply-adds), kept where auto
runs a tiled rung (v09, v11, v12, v16, v17, v18) on at least 17 rows and columns: auto, those
rungs and v20, against torch.matmul. Writes tiles-float32-<gpu>.json.

    python benchmarks/narrow_fp32.py 150 --seed 15 --tiles-edge --out results/sweeps

Outputs whose shorter side is 65-768 (log-uniform; the other 65-20000 either way round, K
16-40000, at most 2^34 multiply-adds) that auto runs tiled: the same kernels, to place the
64-wide tiles of v18 against the 128-wide ones. Writes tiles-edge-float32-<gpu>.json.

    python benchmarks/narrow_fp32.py 150 --seed 16 --deep --out results/sweeps

A deep K over outputs of 17 rows and columns and more (each side log-uniform 17-8192, K
2048-40000, at most 2^34 multiply-adds) that auto runs on a tiled or split rung: auto, v12, v16,
v17, v18, v20 and v21 (v20's split on v17's loop), against torch.matmul. Writes
deep-s<seed>-float32-<gpu>.json; with --aligned every side is rounded down to a multiple of 64
(so that every operand is 16-byte aligned): deep-aligned-s<seed>-float32-<gpu>.json. With --short
LO-HI the shorter side is drawn from LO-HI (a multiple of 4 when aligned), the other from 1024-16384.

    python benchmarks/narrow_fp32.py 0 --recheck-v21 --out results/sweeps

Every problem of the other committed fp32 sweeps that auto runs on v21 (in the layouts they
took): auto (v21), v12, v16, v18, v20 and torch.matmul. Writes v21-recheck-float32-<gpu>.json.

    python benchmarks/narrow_fp32.py 0 --recheck-v21-rows --out results/sweeps

The same for v21's rules for a shorter side of 33-64: problems of every committed fp32 sweep
(this file's own and the ones its rules were fitted to included) whose shorter side is 33-64 over
at least 17 tiles of 128x128 with K >= 2048 (auto, v12, v16, v18, v20, v21,
torch.matmul). Writes v21-rows-recheck-float32-<gpu>.json. (The H200's file holds the problems
whose operands are all 16-byte aligned, as the region was when it was taken.)

    python benchmarks/narrow_fp32.py 0 --recheck --out results/sweeps

Every problem of the committed fp32 sweeps (results/sweeps/*float32*, in the layouts they took)
with a shorter side of at most 128, a longer one of at most 3072 and K >= 1024: v12, v16, v18,
v19 (also on the transposed problem, "^T", as its rules for few columns run it) and v20 (since v20
takes tiles along the short side), and torch.matmul. Writes short-side-v20-float32-<gpu>.json.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import math
import os
import random
from typing import Any

import torch
from deep_small import _time  # the same CUDA-event timing (run from benchmarks/)
from random_shapes import _shape  # the random suite's shape distribution

import fastgemm

KERNELS = [
    "sgemm_v20_split_k_reduce",
    "sgemm_v12_split_k_narrow",
    "sgemm_v16_split_k_waves",
    "sgemm_v18_split_k_multistage",
]
SHORT_K_KERNELS = [
    "sgemm_v09_cp_async",
    "sgemm_v17_multistage",
    "sgemm_v12_split_k_narrow",
    "sgemm_v18_split_k_multistage",
    "sgemm_v16_split_k_waves",
]
TILED = ["sgemm_v09_cp_async", "sgemm_v11_split_k_tile", "sgemm_v12_split_k_narrow"]
TILED += ["sgemm_v16_split_k_waves", "sgemm_v17_multistage", "sgemm_v18_split_k_multistage"]
TILE_KERNELS = [*TILED, "sgemm_v20_split_k_reduce"]
DEEP_KERNELS = [
    "sgemm_v12_split_k_narrow",
    "sgemm_v16_split_k_waves",
    "sgemm_v17_multistage",
    "sgemm_v18_split_k_multistage",
    "sgemm_v20_split_k_reduce",
    "sgemm_v21_split_k_reduce_multistage",
]
# "^T": the kernel on the transposed problem C^T = B^T A^T into a row-major C^T, as a flipped
# plan runs it (v19's rules for few columns).
RECHECK_KERNELS = [
    "sgemm_v12_split_k_narrow",
    "sgemm_v16_split_k_waves",
    "sgemm_v18_split_k_multistage",
    "sgemm_v19_split_k_ring",
    "sgemm_v19_split_k_ring^T",
    "sgemm_v20_split_k_reduce",
]


def _log_uniform(rng: random.Random, lo: float, hi: float) -> int:
    """An integer drawn log-uniformly from [lo, hi) (one rng.uniform draw, as the sweeps took)."""
    return int(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _sweep_problems() -> set[tuple[int, int, int, bool, bool]]:
    """Every problem of the committed fp32 sweeps, in the layouts they took."""
    here = os.path.dirname(os.path.abspath(__file__))
    found: set[tuple[int, int, int, bool, bool]] = set()
    for path in glob.glob(os.path.join(here, "..", "results", "sweeps", "*float32*")):
        if path.endswith(".csv"):  # the layout by the file's name: rows-bcol-* took B = W^T
            b_col = "-bcol-" in os.path.basename(path)
            with open(path) as f:
                found |= {(int(r["M"]), int(r["N"]), int(r["K"]), False, b_col) for r in csv.DictReader(f)}
        elif path.endswith(".json") and "short-side-v20" not in path:
            with open(path) as f:
                data = json.load(f)
            for r in data["results"] if isinstance(data, dict) else data:
                a_col, b_col = r.get("a_col", r.get("at", False)), r.get("b_col", r.get("bt", False))
                found.add((r["M"], r["N"], r["K"], bool(a_col), bool(b_col)))
    return found


def _recheck_problems() -> list[tuple[int, int, int, bool, bool]]:
    """The problems of the committed fp32 sweeps in v20's short-side region (the docstring)."""

    def region(M: int, N: int, K: int) -> bool:
        return min(M, N) <= 128 and max(M, N) <= 3072 and K >= 1024

    return sorted(p for p in _sweep_problems() if region(*p[:3]))


def _v21_problems() -> list[tuple[int, int, int, bool, bool]]:
    """The problems of the committed fp32 sweeps that auto runs on v21 (--recheck-v21)."""

    def runs_v21(M: int, N: int, K: int, a_col: bool, b_col: bool) -> bool:
        order = ("F" if a_col else "C") + ("F" if b_col else "C")
        align = 4 if (K % 4 or N % 4 or M % 4) else 16
        name = fastgemm.select(M, N, K, "float32", order=order, alignment=align).kernel.name
        return name == "sgemm_v21_split_k_reduce_multistage"

    skip = ("deep-aligned-", "v21-recheck-", "v21-rows-recheck-")  # its own sweeps
    here = os.path.dirname(os.path.abspath(__file__))
    own = set()
    for path in glob.glob(os.path.join(here, "..", "results", "sweeps", "*float32*.json")):
        if any(os.path.basename(path).startswith(x) for x in skip):
            with open(path) as f:
                own |= {(r["M"], r["N"], r["K"], r["a_col"], r["b_col"]) for r in json.load(f)["results"]}
    return sorted(p for p in _sweep_problems() - own if runs_v21(*p))


def _v21_rows_problems() -> list[tuple[int, int, int, bool, bool]]:
    """The committed fp32 sweeps' problems in the 33-64 region (--recheck-v21-rows)."""

    def region(M: int, N: int, K: int, a_col: bool, b_col: bool) -> bool:
        tiles = -(-M // 128) * -(-N // 128)
        return 33 <= min(M, N) <= 64 and tiles >= 17 and K >= 2048

    return sorted(p for p in _sweep_problems() if region(*p))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("count", type=int)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--out", default="results/sweeps")
    p.add_argument("--short-k", action="store_true", help="short K on larger outputs")
    p.add_argument("--tiles", action="store_true", help="random shapes that auto runs tiled")
    p.add_argument("--tiles-edge", action="store_true", help="the same, shorter side 65-768")
    p.add_argument("--deep", action="store_true", help="a deep K over outputs of 17 rows and more")
    p.add_argument("--aligned", action="store_true", help="with --deep: sides multiples of 64")
    p.add_argument("--short", default=None, help="with --deep: the shorter side in LO-HI (e.g. 33-128)")
    p.add_argument("--recheck", action="store_true", help="the sweeps' problems in v20's region")
    p.add_argument("--recheck-v21", action="store_true", help="the sweeps' problems auto runs on v21")
    p.add_argument("--recheck-v21-rows", action="store_true", help="the sweeps' problems at 33-64")
    args = p.parse_args()
    tiles = args.tiles or args.tiles_edge
    recheck = (
        _recheck_problems()
        if args.recheck
        else _v21_problems()
        if args.recheck_v21
        else _v21_rows_problems()
        if args.recheck_v21_rows
        else []
    )
    rechecking = args.recheck or args.recheck_v21 or args.recheck_v21_rows
    if rechecking:
        args.count = len(recheck)
    modes = {
        "tiles": args.tiles,
        "tiles-edge": args.tiles_edge,
        "short-k": args.short_k,
        "deep": args.deep,
        "recheck": args.recheck,
        "recheck-v21": args.recheck_v21,
        "recheck-v21-rows": args.recheck_v21_rows,
    }
    kind = next((m for m, on in modes.items() if on), "narrow-v20")
    kernels = {
        "recheck": RECHECK_KERNELS,
        "short-k": SHORT_K_KERNELS,
        "narrow-v20": KERNELS,
        "deep": DEEP_KERNELS,
        "recheck-v21": DEEP_KERNELS,
        "recheck-v21-rows": [k for k in DEEP_KERNELS if k != "sgemm_v17_multistage"],
    }.get(kind, TILE_KERNELS)
    torch.backends.cuda.matmul.allow_tf32 = False
    rng = random.Random(args.seed)
    gpu = torch.cuda.get_device_name().lower().replace(" ", "-")
    rows: list[dict[str, Any]] = []
    while len(rows) < args.count:
        if rechecking:
            M, N, K, a_col, b_col = recheck[len(rows)]
        elif args.tiles:
            M, N, K = _shape(rng, 1 << 34)
        elif args.tiles_edge:
            M = _log_uniform(rng, 65, 768)
            N = _log_uniform(rng, M, 20000)
            K = _log_uniform(rng, 16, 40000)
            if rng.random() < 0.5:
                M, N = N, M
            if M * N * K > 1 << 34:
                continue
        elif args.deep:  # the draws in this order, as the committed sweeps took them
            short = [int(x) for x in args.short.split("-")] if args.short else None
            M = _log_uniform(rng, short[0], short[1] + 1) if short else _log_uniform(rng, 17, 8192)
            N = _log_uniform(rng, 1024, 16384) if short else _log_uniform(rng, 17, 8192)
            K = _log_uniform(rng, 2048, 40000)
            if args.aligned and short:
                M, N, K = max(short[0], M // 4 * 4), N // 64 * 64, K // 64 * 64
            elif args.aligned:
                M, N, K = (max(64, x // 64 * 64) for x in (M, N, K))
            if short and rng.random() < 0.5:
                M, N = N, M
            if M * N * K > 1 << 34:
                continue
        elif args.short_k:
            M = _log_uniform(rng, 64, 16384)
            N = _log_uniform(rng, 64, 16384)
            K = _log_uniform(rng, 8, 512)
            if not 1 << 16 <= M * N <= 1 << 26:
                continue
        else:
            M = _log_uniform(rng, 129, 4096)
            N = _log_uniform(rng, 8, 128)
            K = _log_uniform(rng, 2048, 40000)
            if rng.random() < 0.5:
                M, N = N, M
        if not rechecking:
            a_col, b_col = rng.random() < 0.25, rng.random() < 0.25
        order = ("F" if a_col else "C") + ("F" if b_col else "C")
        align = 4 if (K % 4 or N % 4 or M % 4) else 16
        row: dict[str, Any] = {"M": M, "N": N, "K": K, "a_col": a_col, "b_col": b_col}
        row["auto_kernel"] = fastgemm.select(M, N, K, "float32", order=order, alignment=align).kernel.name
        if tiles and (row["auto_kernel"] not in TILED or min(M, N) < 17):
            continue
        if args.deep and row["auto_kernel"] not in DEEP_KERNELS:
            continue
        A = torch.randn(K, M, device="cuda").T if a_col else torch.randn(M, K, device="cuda")
        B = torch.randn(N, K, device="cuda").T if b_col else torch.randn(K, N, device="cuda")
        C = torch.empty(M, N, device="cuda")
        ref = A.double() @ B.double()
        top = max(ref.abs().max().item(), 1e-30)
        for name in ["auto", *kernels]:
            kernel, flipped = name.removesuffix("^T"), name.endswith("^T")
            out = torch.empty(N, M, device="cuda") if flipped else C
            ops = (B.T, A.T, out) if flipped else (A, B, C)
            fn = lambda kernel=kernel, ops=ops: fastgemm.gemm(*ops, kernel=kernel)
            try:
                out.fill_(float("nan"))
                fn()
                torch.cuda.synchronize()
            except (RuntimeError, ValueError):
                row[name] = None  # a kernel that cannot run this alignment
                continue
            got = out.T if flipped else out
            row[name + "_err"] = float((got.double() - ref).abs().max() / top)
            row[name] = _time(fn)
        C2 = torch.empty_like(C)
        row["torch"] = _time(lambda A=A, B=B, C2=C2: torch.matmul(A, B, out=C2))
        rows.append(row)
        print(
            f"{M:5d}x{N:5d}x{K:5d} {order} auto {row['auto']:7.1f} ({row['auto_kernel']}) torch {row['torch']:7.1f}"
        )
    os.makedirs(args.out, exist_ok=True)
    flag = "" if kind == "narrow-v20" else " --" + kind
    if args.deep:  # one file per seed
        kind = f"deep-aligned-s{args.seed}" if args.aligned else f"deep-s{args.seed}"
        flag = " --deep --aligned" if args.aligned else " --deep"
        if args.short:
            kind, flag = kind.replace("deep", f"deep-short{args.short}"), flag + f" --short {args.short}"
    kind = {
        "recheck": "short-side-v20",
        "recheck-v21": "v21-recheck",
        "recheck-v21-rows": "v21-rows-recheck",
    }.get(kind, kind)
    path = os.path.join(args.out, f"{kind}-float32-{gpu}.json")
    command = f"python benchmarks/narrow_fp32.py {args.count} --seed {args.seed}{flag}"
    meta = {"command": command, "gpu": gpu}
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": rows}, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
