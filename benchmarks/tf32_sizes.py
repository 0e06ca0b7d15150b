"""precision="tf32" and "tf32x3" on smaller outputs and deep K: where each tensor-core rung beats
fp32 arithmetic and the other.

    python benchmarks/tf32_sizes.py --out results/sweeps [--deep] [--precision tf32x3]

For M, N in {128, 256, 384, 512, 768, 1024, 1536, 2048} (every pair) and K in {256, 1024,
4096} (--deep: M, N in {256, 512, 1024, 2048}, K in {8192, 16384, 32768, 65536}), row-major
operands: device time (CUDA events around back-to-back calls, median of 3 rounds) of auto in
fp32 arithmetic (precision "ieee"), of the precision's two rungs (tf32: v22 and its split v23;
tf32x3: v14 and its split v24) and of the peer, in one process: cuBLAS TF32 (torch.matmul with
TF32 allowed) for tf32, cuBLAS SGEMM (TF32 off) for tf32x3, whose rows also hold each result's
error against float64 (||C - ref||_F / ||ref||_F). Prints a line per shape and writes
<precision>-<sizes|deep>-<gpu>.json, which the precision's auto rules (csrc/plan.cpp) are
fitted to.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics

import torch
from random_shapes import _device_us

import fastgemm

SIDES = [128, 256, 384, 512, 768, 1024, 1536, 2048]
DEPTHS = [256, 1024, 4096]
DEEP_SIDES = [256, 512, 1024, 2048]
DEEP_DEPTHS = [8192, 16384, 32768, 65536]
RUNGS = {
    "tf32": {"v22": "sgemm_v22_wgmma_tf32_regs", "v23": "sgemm_v23_wgmma_tf32_split_k"},
    "tf32x3": {"v14": "sgemm_v14_wgmma_tf32x3", "v24": "sgemm_v24_wgmma_tf32x3_split_k"},
}


def _time(fn) -> float:
    fn()
    once = _device_us(fn, 1)
    reps = int(max(3, min(100, 10000 / max(once, 1.0))))
    return statistics.median(_device_us(fn, reps) for _ in range(3))


def _row(M: int, N: int, K: int, precision: str = "tf32") -> dict:
    A = torch.randn(M, K, device="cuda")
    B = torch.randn(K, N, device="cuda")
    C = torch.empty(M, N, device="cuda")
    tf32 = precision == "tf32"

    def peer():
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.matmul(A, B, out=C)
        torch.backends.cuda.matmul.allow_tf32 = False

    calls = {"ieee": lambda: fastgemm.sgemm(A, B, C)}
    for short, name in RUNGS[precision].items():
        calls[short] = lambda name=name: fastgemm.sgemm(A, B, C, kernel=name, precision=precision)
    calls["cublas_tf32" if tf32 else "cublas_sgemm"] = peer
    row = {"shape": [M, N, K], "ieee_auto": fastgemm.select(M, N, K, "float32").kernel.name}
    row.update({f"{key}_us": _time(call) for key, call in calls.items()})
    if not tf32:
        ref = A.double() @ B.double()
        for key, call in calls.items():
            call()
            row[f"err_{key}"] = float((C.double() - ref).norm() / ref.norm())
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="results/sweeps")
    p.add_argument("--deep", action="store_true", help="deep K: K 8192-65536")
    p.add_argument("--precision", default="tf32", choices=sorted(RUNGS))
    args = p.parse_args()
    sides, depths = (DEEP_SIDES, DEEP_DEPTHS) if args.deep else (SIDES, DEPTHS)
    gpu = torch.cuda.get_device_name().lower().replace(" ", "-")
    rows = []
    for M, N, K in itertools.product(sides, sides, depths):
        row = _row(M, N, K, args.precision)
        rows.append(row)
        print(
            f"{M}x{N}x{K} "
            + " ".join(f"{k} {v:.3g}" for k, v in row.items() if k[-3:] in ("_us",) or k.startswith("err")),
            flush=True,
        )
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{args.precision}-{'deep' if args.deep else 'sizes'}-{gpu}.json")
    with open(path, "w") as f:
        json.dump(
            {
                "gpu": torch.cuda.get_device_name(),
                "commit": os.environ.get("FASTGEMM_GIT_COMMIT", ""),
                "rows": rows,
            },
            f,
            indent=1,
        )
    print("wrote", path)


if __name__ == "__main__":
    main()
