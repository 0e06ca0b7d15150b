"""fp32 GEMM by precision: fastgemm's "ieee", "tf32x3" and "tf32" against cuBLAS SGEMM (CuPy, TF32
off) and cuBLAS in TF32 mode (torch.matmul with allow_tf32), in one process, on the same data.

Per shape and candidate: device time (CUDA events around back-to-back calls, rounds interleaved
across candidates, median), TFLOPS, and the normalised error ||C - ref||_F / ||ref||_F against a
float64 product of the same operands. It runs in its own process because the package's benchmark
turns TF32 off for the whole process (NVIDIA_TF32_OVERRIDE=0).

    python3 benchmarks/precision.py --sizes 4096,8192 --out results
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ["CUPY_TF32"] = "0"  # cupy.matmul on fp32: true FP32 (cuBLAS SGEMM)
os.environ.pop("NVIDIA_TF32_OVERRIDE", None)

import cupy as cp

import fastgemm


def candidates(A, B, C, torch) -> dict:
    """name -> a call computing C = A @ B (fp32 operands) with that library and precision."""
    out = {
        "cuBLAS SGEMM (CuPy, TF32 off)": lambda: cp.matmul(A, B, out=C),
        "fastgemm ieee (auto)": lambda: fastgemm.sgemm(A, B, C),
        "fastgemm tf32x3 (auto)": lambda: fastgemm.sgemm(A, B, C, precision="tf32x3"),
        "fastgemm tf32 (auto)": lambda: fastgemm.sgemm(A, B, C, precision="tf32"),
    }
    if torch is not None:
        tA, tB, tC = (torch.from_dlpack(x) for x in (A, B, C))

        def tf32_matmul():
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.matmul(tA, tB, out=tC)
            torch.backends.cuda.matmul.allow_tf32 = False

        out["cuBLAS TF32 (torch.matmul, allow_tf32)"] = tf32_matmul
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="4096,8192", help="square sizes")
    ap.add_argument("--shapes", default="", help="extra MxNxK shapes, comma separated")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--out", default="results")
    args = ap.parse_args()
    shapes = [(int(s),) * 3 for s in args.sizes.split(",") if s]
    shapes += [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s]
    try:
        import torch
    except ImportError:
        torch = None
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    gpu = props["name"].decode()
    rows = []
    for M, N, K in shapes:
        rng = cp.random.default_rng(0)
        A = rng.standard_normal((M, K), dtype=cp.float32)
        B = rng.standard_normal((K, N), dtype=cp.float32)
        C = cp.empty((M, N), dtype=cp.float32)
        ref = A.astype(cp.float64) @ B.astype(cp.float64)
        ref_norm = float(cp.linalg.norm(ref))
        cands = candidates(A, B, C, torch)
        errors, times = {}, {name: [] for name in cands}
        for name, fn in cands.items():
            C.fill(cp.nan)
            fn()
            dev.synchronize()
            errors[name] = float(cp.linalg.norm(C.astype(cp.float64) - ref)) / ref_norm
        flops = 2.0 * M * N * K
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        reps = max(1, min(50, int(2e13 / flops)))
        for name, fn in cands.items():  # warm-up: clocks up, plans cached
            for _ in range(3):
                fn()
        dev.synchronize()
        for _ in range(args.rounds):
            for name, fn in cands.items():
                start.record()
                for _ in range(reps):
                    fn()
                stop.record()
                stop.synchronize()
                times[name].append(cp.cuda.get_elapsed_time(start, stop) / reps)
        sgemm_ms = statistics.median(times["cuBLAS SGEMM (CuPy, TF32 off)"])
        for name in cands:
            ms = statistics.median(times[name])
            rows.append(
                {
                    "shape": [M, N, K],
                    "candidate": name,
                    "ms": ms,
                    "tflops": flops / ms / 1e9,
                    "vs_cublas_sgemm": sgemm_ms / ms,
                    "rel_error": errors[name],
                }
            )
            print(
                f"{M}x{N}x{K:<6} {name:42s} {ms:9.3f} ms {flops / ms / 1e9:7.1f} TFLOPS "
                f"{sgemm_ms / ms:5.2f}x SGEMM  err {errors[name]:.2e}",
                flush=True,
            )
    meta = {
        "mode": "precision",
        "gpu": gpu,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
        "torch": getattr(torch, "__version__", None),
        "cupy": cp.__version__,
        "fastgemm": fastgemm.__version__,
        "commit": os.environ.get("FASTGEMM_GIT_COMMIT", ""),
        "rounds": args.rounds,
        "method": "device time: CUDA events around back-to-back calls, rounds interleaved across "
        "candidates, median; error: ||C - ref||_F / ||ref||_F against float64 on the same data",
        "command": "python3 " + " ".join(sys.argv),
    }
    os.makedirs(args.out, exist_ok=True)
    slug = gpu.lower().replace(" ", "-")
    with open(os.path.join(args.out, f"precision-{slug}.json"), "w") as f:
        json.dump({"meta": meta, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
