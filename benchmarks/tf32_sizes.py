"""precision="tf32" on the smaller outputs: where the tensor cores beat fp32 arithmetic.

    python benchmarks/tf32_sizes.py --out results/sweeps

For M, N in {128, 256, 384, 512, 768, 1024, 1536, 2048} (every pair) and K in {256, 1024,
4096}, row-major operands: device time (CUDA events around back-to-back calls, median of 3
rounds) of auto in fp32 arithmetic (precision "ieee"), of sgemm_v22_wgmma_tf32_regs, of
sgemm_v23_wgmma_tf32_split_k and of torch.matmul with TF32 allowed (cuBLAS TF32), in one
process. Prints a line per shape and writes tf32-sizes-<gpu>.json, which the "tf32" rules
(csrc/plan.cpp) are fitted to. --deep: M, N in {256, 512, 1024, 2048}, K in {8192, 16384,
32768, 65536} (tf32-deep-<gpu>.json).
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
V22 = "sgemm_v22_wgmma_tf32_regs"
V23 = "sgemm_v23_wgmma_tf32_split_k"


def _time(fn) -> float:
    fn()
    once = _device_us(fn, 1)
    reps = int(max(3, min(100, 10000 / max(once, 1.0))))
    return statistics.median(_device_us(fn, reps) for _ in range(3))


def _row(M: int, N: int, K: int) -> dict:
    A = torch.randn(M, K, device="cuda")
    B = torch.randn(K, N, device="cuda")
    C = torch.empty(M, N, device="cuda")

    def cublas_tf32():
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.matmul(A, B, out=C)
        torch.backends.cuda.matmul.allow_tf32 = False

    return {
        "shape": [M, N, K],
        "ieee_auto": fastgemm.select(M, N, K, "float32").kernel.name,
        "ieee_us": _time(lambda: fastgemm.sgemm(A, B, C)),
        "v22_us": _time(lambda: fastgemm.sgemm(A, B, C, kernel=V22, precision="tf32")),
        "v23_us": _time(lambda: fastgemm.sgemm(A, B, C, kernel=V23, precision="tf32")),
        "cublas_tf32_us": _time(cublas_tf32),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="results/sweeps")
    p.add_argument("--deep", action="store_true", help="deep K: K 8192-65536")
    args = p.parse_args()
    sides, depths = (DEEP_SIDES, DEEP_DEPTHS) if args.deep else (SIDES, DEPTHS)
    gpu = torch.cuda.get_device_name().lower().replace(" ", "-")
    rows = []
    for M, N, K in itertools.product(sides, sides, depths):
        row = _row(M, N, K)
        rows.append(row)
        print(
            f"{M}x{N}x{K} ieee {row['ieee_us']:.1f} v22 {row['v22_us']:.1f} v23 {row['v23_us']:.1f} "
            f"cublas-tf32 {row['cublas_tf32_us']:.1f}",
            flush=True,
        )
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"tf32-{'deep' if args.deep else 'sizes'}-{gpu}.json")
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
