"""Device time of one split-K kernel (float32; float16 for an hgemm_* one) at a fixed split, over a
list of shapes: the data the split models are fitted to (csrc/common/split_model.h). FASTGEMM_DEV_SPLIT_K fixes S for the whole
process (it is read once), so run one process per S and one without it (the model's own S):

    SH=128x6144x4096,512x6144x4096,1024x1024x65536
    for S in 1 2 3 4 5 6 8 11 16; do
      FASTGEMM_DEV_SPLIT_K=$S python benchmarks/split_sweep.py sgemm_v16_split_k_waves $SH >> splits.jsonl
    done
    python benchmarks/split_sweep.py sgemm_v16_split_k_waves $SH --cublas >> splits.jsonl

One JSON line per shape: GPU, kernel, S ("auto" without the variable), shape, median
microseconds per launch (CUDA events around back-to-back launches behind a spin, rotating over
enough input sets that A, B and C are not resident in L2; median of 5 rounds) and the largest
error against float64 relative to the largest output; with --cublas also cuBLAS SGEMM's time
(CuPy's matmul) on the same rotation. results/sweeps/sgemm_v16_splits-*.jsonl (3 rounds, before
the GPU and cuBLAS fields) and sgemm_cluster_splits-*.jsonl (v11 and v12) are such runs.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

import cupy as cp

import fastgemm
from fastgemm.bench.timing import Prefill, warmup_gpu


def _median_us(call, sets, prefill) -> float:
    """Median over 5 rounds of the microseconds per call of back-to-back calls on the rotation."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    call(*sets[0])
    start.record()
    call(*sets[0])
    end.record()
    end.synchronize()
    reps = int(max(4, min(200, 5.0 / max(cp.cuda.get_elapsed_time(start, end), 1e-3))))
    times = []
    for _ in range(5):
        prefill(min(0.2, 20e-6 * reps + 50e-6))
        start.record()
        for i in range(reps):
            call(*sets[i % len(sets)])
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e3 / reps)
    return statistics.median(times)


def main() -> int:
    kernel = sys.argv[1]
    shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[2].split(",")]
    with_cublas = "--cublas" in sys.argv[3:]
    gpu = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    split = os.environ.get("FASTGEMM_DEV_SPLIT_K", "auto")
    prefill = Prefill(cp, True)
    warmup_gpu(cp, 0.5)
    rng = cp.random.default_rng(1)
    l2 = cp.cuda.runtime.getDeviceProperties(0)["l2CacheSize"]
    # An hgemm_* kernel runs on float16 operands (fastgemm.hgemm), any other on float32.
    half = kernel.startswith("hgemm_")
    dtype, gemm = (cp.float16, fastgemm.hgemm) if half else (cp.float32, fastgemm.sgemm)
    size = 2 if half else 4
    for M, N, K in shapes:
        nsets = max(2, min(12, -(-3 * l2 // ((M * K + K * N + M * N) * size))))
        sets = [
            (
                rng.standard_normal((M, K), dtype=cp.float32).astype(dtype),
                rng.standard_normal((K, N), dtype=cp.float32).astype(dtype),
                cp.empty((M, N), dtype),
            )
            for _ in range(nsets)
        ]
        A, B, C = sets[0]
        gemm(A, B, C, kernel=kernel)
        ref = A.astype(cp.float64) @ B.astype(cp.float64)
        err = float(cp.abs(C - ref).max() / cp.abs(ref).max())
        line = {"gpu": gpu, "kernel": kernel, "S": split, "shape": f"{M}x{N}x{K}"}
        line["us"] = round(_median_us(lambda a, b, c: gemm(a, b, c, kernel=kernel), sets, prefill), 2)
        line["err"] = err
        if with_cublas:
            line["cublas_us"] = round(_median_us(lambda a, b, c: cp.matmul(a, b, out=c), sets, prefill), 2)
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
