"""Auto against torch.matmul(out=) on random shapes: the families the suite does not hold.

    python benchmarks/random_shapes.py float16 150 --seed 1 --out results/sweeps

Shapes are log-uniform (M 1-12000, N 8-20000, K 16-40000; half of them rounded down to
multiples of 64), at most 2^36 multiply-adds (2^34 for float32) and 1.5 GB of operands; a
quarter of the A and of the B operands are column-major (transposed views). For each: the error
of auto and of torch.matmul against float64 (largest difference over the largest output, C
poisoned with NaN first), and device time (CUDA events around back-to-back calls) and end-to-end
time (host clock around the same calls, then a synchronisation), median of 3 rounds, operands
hot in L2 where they fit. Prints a line per shape and the geometric mean and minimum of torch's
time over auto's; writes random-<dtype>-<seed>-<gpu>.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

import fastgemm


def _shape(rng: random.Random, limit: int) -> tuple[int, int, int]:
    while True:
        M = int(math.exp(rng.uniform(0, math.log(12000))))
        N = int(math.exp(rng.uniform(math.log(8), math.log(20000))))
        K = int(math.exp(rng.uniform(math.log(16), math.log(40000))))
        if rng.random() < 0.5:
            M, N, K = (max(64, x // 64 * 64) if x >= 64 else x for x in (M, N, K))
        if M * N * K <= limit and (M * K + K * N + M * N) * 4 < 1.5e9:
            return M, N, K


def _device_us(fn: Callable[[], Any], reps: int) -> float:
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(reps):
        fn()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) * 1e3 / reps


def _e2e_us(fn: Callable[[], Any], reps: int) -> float:
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e6 / reps


def _one(shape: tuple[int, int, int], a_col: bool, b_col: bool, dtype: str) -> dict[str, Any]:
    M, N, K = shape
    dt = getattr(torch, dtype)
    a = torch.randn(K, M, device="cuda", dtype=dt).T if a_col else torch.randn(M, K, device="cuda", dtype=dt)
    b = torch.randn(N, K, device="cuda", dtype=dt).T if b_col else torch.randn(K, N, device="cuda", dtype=dt)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
    c2 = torch.empty(M, N, device="cuda", dtype=dt)
    order = ("F" if a_col else "C") + ("F" if b_col else "C")
    sel = fastgemm.select(M, N, K, dtype, order=order)

    def ours() -> None:
        fastgemm.gemm(a, b, c)

    def peer() -> None:
        torch.matmul(a, b, out=c2)

    ours()
    peer()
    ref = a.double() @ b.double()
    top = max(ref.abs().max().item(), 1e-30)
    r: dict[str, Any] = {"M": M, "N": N, "K": K, "a_col": a_col, "b_col": b_col}
    r.update(kernel=sel.kernel.name, pad=sel.pad)
    r["err"] = float((c.double() - ref).abs().max() / top)
    r["err_torch"] = float((c2.double() - ref).abs().max() / top)
    reps = int(max(3, min(200, 20000 / max(_device_us(ours, 1), 1))))
    times: dict[str, list[float]] = {"dev": [], "dev_torch": [], "e2e": [], "e2e_torch": []}
    for _ in range(3):
        times["dev"].append(_device_us(ours, reps))
        times["dev_torch"].append(_device_us(peer, reps))
        times["e2e"].append(_e2e_us(ours, reps))
        times["e2e_torch"].append(_e2e_us(peer, reps))
    r.update({k: statistics.median(v) for k, v in times.items()})
    print(
        f"{M:5d}x{N:5d}x{K:5d} {order} {r['kernel'] + ('+pad' if r['pad'] else ''):36s} "
        f"device {r['dev']:9.1f} / {r['dev_torch']:9.1f} us = {r['dev_torch'] / r['dev']:.2f}  "
        f"end to end {r['e2e_torch'] / r['e2e']:.2f}  error {r['err']:.1e} ({r['err_torch']:.1e})",
        flush=True,
    )
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dtype", choices=["float16", "bfloat16", "float32"])
    ap.add_argument("count", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    rng = random.Random(args.seed)
    limit = 2**34 if args.dtype == "float32" else 2**36
    out: list[dict[str, Any]] = []
    for _ in range(args.count):
        out.append(_one(_shape(rng, limit), rng.random() < 0.25, rng.random() < 0.25, args.dtype))
    gpu = torch.cuda.get_device_name().lower().replace(" ", "-")
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "seed": args.seed}
    meta["git_commit"] = os.environ.get("FASTGEMM_GIT_COMMIT", "")
    path = os.path.join(args.out, f"random-{args.dtype}-{args.seed}-{gpu}.json")
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": out}, f, indent=1)
    for key in ("dev", "e2e"):
        ratios = [r[key + "_torch"] / r[key] for r in out]
        g = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(
            f"{args.dtype} {'device' if key == 'dev' else 'end to end'}: geometric mean {g:.3f}, "
            f"min {min(ratios):.2f}, below 0.8: {sum(x < 0.8 for x in ratios)} of {len(ratios)}"
        )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
