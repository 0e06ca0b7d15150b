"""Shape-family sweeps for fitting the auto rules: every candidate kernel by name beside auto,
cuBLAS (CuPy) and cuBLASLt (torch.matmul), in one process and interleaved rounds.

Families:
  narrow (default)  outputs with few columns (N from --ns, M x K from --mk), run as they are and as
                    their transpose: the split-K decode kernels by name on C^T = B^T A^T (B.T and
                    A.T as views, a row-major N x M output: the layouts auto's flip gives them,
                    but for C's store order).
  --few-rows        the transposed family: M from --ns, (N, K) from --mk, untransposed (decode
                    GEMMs with a row-major A).
  --deep            deep K: M from --deep-m, N from --deep-n (outputs of at most --deep-max-mn
                    elements), K from --deep-k; the wgmma rungs and split-K kernels by name.
  --prefill         M from --pre-m on the (N, K) of model layers (--pre-nk): the persistent,
                    split-K and stream-K wgmma rungs by name (fp32: v09 and the split-K tile
                    rungs).
  --pad             shapes from --pad-shapes (odd sizes, ragged K): auto as its rule decides
                    beside the --kernels by name, and auto with its padded path off and on
                    (FASTGEMM_DEV_PAD=0 / 1, switched between candidates with the plan cache
                    cleared). --pad-m crosses the (N, K) of --pad-shapes with those rows.
  --pad-modes       any family: auto with its padded path off and on, as --pad, and no kernels
                    by name but --kernels / --flip-kernels.

Device time: CUDA events around back-to-back launches behind a spin, rotating over enough input
sets that A and B are not resident in L2; median over rounds. Every candidate is checked against
cuBLAS first.

    python benchmarks/sweep.py --dtype float16 --out results/sweeps
    python benchmarks/sweep.py --dtype float32 --ns 4,8,16,32,64 --mk 4096x4096
    python benchmarks/sweep.py --dtype float16 --deep --out results/sweeps
    python benchmarks/sweep.py --dtype float16 --deep --deep-m 128,256,384,512,768,1024 \
        --deep-n 256,512,1024 --deep-max-mn 1048576 --rounds 3 --target-ms 4 --tag late-dependents \
        --kernels hgemm_v24_wgmma_split_k,hgemm_v27_split_k_global,hgemm_v28_split_k_global_narrow,hgemm_v33_split_k_n64
    python benchmarks/sweep.py --dtype float16 --prefill --pre-m 256,320,384,448,512 --pre-nk \
        $(python -c "print(','.join(f'{n}x{k}' for n in (2560, 3072, 3584, 4096, 4608, 5120, 6144) \
        for k in (8192, 11008, 14336, 18944, 28672)))") --rounds 3 --target-ms 3 \
        --tag long-k-late-dependents --kernels hgemm_v20_hoisted_beta,hgemm_v24_wgmma_split_k,\
hgemm_v27_split_k_global,hgemm_v28_split_k_global_narrow,hgemm_v30_stream_k_wide,\
hgemm_v31_split_last_round,hgemm_v32_split_last_round_192
      (and in bf16, as results/sweeps/prefill-long-k-check-bfloat16-*: --dtype bfloat16 --kernels
      hgemm_v24_wgmma_split_k,hgemm_v32_split_last_round_192 --tag long-k-check)
    python benchmarks/sweep.py --dtype float16 --prefill --pre-m 256,384,448,512 --pre-nk \
        3584x8192,3584x18944,4096x8192,4096x18944,4608x8192,4608x18944,5120x8192,5120x18944,\
8192x8192,8192x18944 --rounds 3 --target-ms 3 --tag v28-one-tile \
        --kernels hgemm_v24_wgmma_split_k,hgemm_v28_split_k_global_narrow
    python benchmarks/sweep.py --dtype float16 --few-rows --ns 1,8,16,24,32,48,64 --mk \
        $(python -c "print(','.join(f'{n}x{k}' for n in (2048, 3584, 4096, 5120, 6144, 8192, 14336) \
        for k in (2048, 4096, 8192, 14336)))") --rounds 3 --target-ms 3 --tag ring --kernels \
hgemm_v22_split_k,hgemm_v40_split_k_deep_ring,hgemm_v26_split_k_32rows,\
hgemm_v41_split_k_32rows_deep_ring,hgemm_v23_split_k_wide,hgemm_v42_split_k_wide_deep_ring
      (the same with --b-layout F; and v22's two shares on 66-111 tiles, results/sweeps/rows-b2-*:
      --ns 1,16 --mk <N 4224-7104 in steps of 320 x K 2048,4096,8192,14336> --kernels
      hgemm_v22_split_k,hgemm_v40_split_k_deep_ring --tag b2-s0, then with FASTGEMM_DEV_SPLIT_K=2
      (s2) and 3 (s3) and --kernels hgemm_v22_split_k; the check, --tag b2-check: --ns 1,8,16
      --mk <N 4288,4416,4672,4928,5056,5248 x K 2560,3072,3584,5120,11008>, bf16 --b-layout F on
      N 4416,4928 x K 3072,5120,11008, and the narrow family --ns 1,16 with --flip-kernels; and
      transposed, the narrow family: --ns 1,8,16,24,32,48,64
      --mk 2048x4096,4096x4096,8192x4096,4096x14336,14336x4096,5120x5120 --kernels
      hgemm_v24_wgmma_split_k --flip-kernels <the six above>: results/sweeps/*-ring-float16-*)
      v47's stream-K band (results/sweeps/*-sk-a-*, *-sk-check-*; --rounds 3 --target-ms 2 each):
      --few-rows --ns 1,16 --mk <N 2048,
      4096, 5120, 6144, 8448, 12800, 16896, 17408, 18944, 20480, 22016, 24576, 28672, 37888 x K 2048,
      3584,4096,8192,14336> --kernels hgemm_v22_split_k,hgemm_v40_split_k_deep_ring,
      hgemm_v47_split_k_stream --tag sk-a (and --b-layout F on N 4096,12800,17408,18944,22016,28672
      x K 3584,4096,14336); the check, --tag sk-check: --ns 1,4,8,16 --mk <N 16960,17024,17920,
      19456,21504,22528,23040 x K 2560,3072,5120,6144,11008> --kernels hgemm_v22_split_k,
      hgemm_v47_split_k_stream, bf16 --b-layout F --ns 1,16 on N 17024,19456,21504,22528 x K 3072,
      5120,11008, and the narrow family --ns 1,8,16 --mk <M 17408,18944,20480,22016,24576 x K 2048,
      4096,8192> --kernels hgemm_v24_wgmma_split_k --flip-kernels hgemm_v22_split_k,
      hgemm_v47_split_k_stream; v48's (*-sk32-*): --ns 17,24,32 --mk <N 8448,12800,16896,17408,18944,
      20480,22016,23040,24576,28672 x K 2048,4096,8192,14336> --kernels hgemm_v26_split_k_32rows,
      hgemm_v41_split_k_32rows_deep_ring,hgemm_v48_split_k_32rows_stream --tag sk32-a; the check,
      --tag sk32-check: bf16 --b-layout F --ns 20,28 on N 17024,19456,21504,22528 x K 3072,5120,
      11008 (v26, v48), and the narrow family --ns 24,32 --mk <M 17408,19456,22016 x K 3072,8192>
      --kernels hgemm_v24_wgmma_split_k --flip-kernels hgemm_v26_split_k_32rows,
      hgemm_v48_split_k_32rows_stream
    python benchmarks/sweep.py --dtype float32 --pad --out results/sweeps
    python benchmarks/sweep.py --dtype float16 --pad-modes --ns 2,4,6,12,20,36 --mk 1024x4096,\
2048x4096,4096x1024,4096x4096,8192x2048,6144x4096,8192x4096,17408x4096,28672x4096,4096x14336,\
2048x8192 --rounds 3 --target-ms 1 --tag padflip
      (tall narrow outputs with B's and C's rows under 16 bytes: results/sweeps/narrow-padflip-*;
      the check, bf16 --b-layout F --ns 4,20 --mk 2048x4096,4096x4096,8192x4096,17408x4096
      --tag padflip-check)
    python benchmarks/sweep.py --dtype float16 --pad --pad-m 1,16,64,128 --pad-shapes 1x4097x4099 \
        --kernels hgemm_v34_split_k_unaligned
    python benchmarks/sweep.py --dtype float16 --pad --pad-random 72,43,256,4096,512,8192,300 \
        --rounds 3 --target-ms 2 --tag mid-v43 --kernels hgemm_v20_hoisted_beta,\
hgemm_v21_narrow_tile,hgemm_v31_split_last_round,hgemm_v32_split_last_round_192,\
hgemm_v33_split_k_n64,hgemm_v43_cluster_64x128
      (and --pad-random 90,44,128,3072,256,8192,72 --tag mid-v43-b, --dtype bfloat16
      --pad-random 40,45,128,3072,256,8192,72 --tag mid-v43-c, both with --kernels
      hgemm_v21_narrow_tile,hgemm_v24_wgmma_split_k,hgemm_v33_split_k_n64,hgemm_v43_cluster_64x128;
      the checks with --tag mid-v43-check: --pad-random 60,46,128,3072,256,8192,72 (kernels
      v21, v33, v43), --b-layout F --pad-random 50,48,128,3072,256,8192,72 and --dtype bfloat16
      --pad-random 50,49,128,3072,256,8192,72 (kernels v21, v24, v33, v43):
      results/sweeps/pad-*mid-v43-*)
    python benchmarks/sweep.py --dtype float16 --pad --rounds 3 --target-ms 2 --tag unal-rows-v37 \
        --kernels hgemm_v34_split_k_unaligned,hgemm_v37_split_k_reduce_unaligned --pad-shapes \
        $(python -c "
import math, random
rng, out = random.Random(61), []
while len(out) < 20:
    N = int(math.exp(rng.uniform(math.log(1000), math.log(60000))))
    N += rng.choice(range(1, 8)) if N % 8 == 0 else 0
    K = int(math.exp(rng.uniform(math.log(256), math.log(30000))))
    out.append((N, K // 8 * 8 if rng.random() < 0.5 else K))
print(','.join(f'{m}x{n}x{k}' for n, k in out for m in (1, 2, 3, 4, 6, 8, 11, 16)))")
      (decode rows on an under-aligned row-major B; the check: --dtype bfloat16 --tag
      unal-rows-v37-check, seed 62, 12 pairs, rows 2, 5, 9, 16: results/sweeps/pad-unal-rows-v37-*)
    python benchmarks/sweep.py --dtype float16 --pad --pad-random 72,43,256,4096,512,8192,300 \
        --rounds 3 --target-ms 2 --tag mid-v44 --kernels hgemm_v20_hoisted_beta,\
hgemm_v21_narrow_tile,hgemm_v32_split_last_round_192,hgemm_v43_cluster_64x128,hgemm_v44_tile_192x128
      (the wave rules' sweeps, results/sweeps/pad-*mid-v44-*: also --pad-random
      80,71,512,4096,256,6144,300 --tag mid-v44-b; --dtype bfloat16 --pad-random
      50,72,512,4096,256,6144,300 --tag mid-v44-c; --b-layout F --pad-random
      50,73,512,4096,256,6144,300 --tag mid-v44-d; held out, with v43 left out of --kernels:
      --pad-random 90,74,512,6144,256,8192,400 --tag mid-v44-check and --dtype bfloat16
      --b-layout F --pad-random 60,75,512,6144,256,8192,400 --tag mid-v44-check; and the shapes of
      pad-v32-short-k-* that the wave rules move, --pad-shapes <those> --tag v32-short-k-v44 /
      v32-short-k-check-v44 with v20, v21, v32 and v44)
    python benchmarks/sweep.py --dtype float16 --pad --pad-shapes <the shapes of
        results/sweeps/pad-small-r41-float16-*: random outputs of 96-700 rows and columns and at
        most 16 tiles of 128x128, K 640-4096> --rounds 3 --target-ms 2 --tag small-r41 --kernels
        hgemm_v21_narrow_tile,hgemm_v24_wgmma_split_k,hgemm_v28_split_k_global_narrow,\
hgemm_v33_split_k_n64,hgemm_v43_cluster_64x128
      (the small-output v33 rule's sweeps: held out, --dtype bfloat16 --b-layout F with the
      shapes of pad-bcol-small-r41-check-* and --tag small-r41-check; the band v28 rule's, random
      outputs of 60-112 tiles of 128x128 with K 512-4096: --tag band-r41 and, bf16 with a
      column-major B, band-r41-check, each with --kernels hgemm_v20_hoisted_beta,
      hgemm_v21_narrow_tile,hgemm_v24_wgmma_split_k,hgemm_v28_split_k_global_narrow,
      hgemm_v32_split_last_round_192,hgemm_v43_cluster_64x128,hgemm_v44_tile_192x128; and
      pad-worst-r41-* / pad-mid-r41-*, the points of the mid-size sweeps where auto was furthest
      behind the peers and --pad-random 60,81,128,4096,256,8192,300, with those kernels and v29,
      v30, v31; and pad-mid-tiles-r41-*, the v43 rule's sweep: random outputs of 17-66 tiles
      of 128x128 with K 1024-4096, the small-output kernels above)

    python benchmarks/sweep.py --dtype float16 --pad --rounds 3 --target-ms 2 --tag bunal-v45 \
        --kernels hgemm_v20_hoisted_beta,hgemm_v21_narrow_tile,hgemm_v24_wgmma_split_k,\
hgemm_v28_split_k_global_narrow,hgemm_v32_split_last_round_192,hgemm_v43_cluster_64x128,\
hgemm_v44_tile_192x128,hgemm_v45_cluster_128x128 --pad-shapes $(python -c "
import math, random
rng, out, bcol = random.Random(93), set(), False
while len(out) < 120:
    M, N, K = (int(math.exp(rng.uniform(math.log(a), math.log(b))))
               for a, b in ((384, 6144), (256, 5120), (1024, 8192)))
    step = 64 if rng.random() < 0.5 else 8
    M = max(8, M // step * step)
    if bcol:
        N, K = max(64, N // step * step), K // 8 * 8
        K += 8 * rng.randint(1, 7) if K % 64 == 0 else 0
    else:
        K, N = max(64, K // step * step), N // 8 * 8
        N += 8 * rng.randint(1, 7) if N % 64 == 0 else 0
    if 30 <= -(-M // 128) * -(-N // 128) <= 420:
        out.add((M, N, K))
print(','.join(f'{m}x{n}x{k}' for m, n, k in sorted(out)))")
      (v45's rule, B's rows off 128 bytes: also --dtype bfloat16 --b-layout F with seed 94,
      90 shapes and bcol = True; held out, --tag bunal-v45-check: seed 95, 60 shapes, and
      --b-layout F with seed 96, 60 shapes and bcol = True, both fp16:
      results/sweeps/pad-*bunal-v45-*; v45 against v20, v21, v43 and v44 on the random_shapes
      family, --pad-random 80,91,256,6144,256,8192,400 --tag mid-v45 and --dtype bfloat16
      --b-layout F --pad-random 60,92,256,6144,256,8192,400 --tag mid-v45-b; v46's rule, the
      same generator with M and N in 768-12288, at most 2^36 multiply-adds and 66-800 tiles of
      128x256, --target-ms 4, --kernels v20, v21, v31, v32, v44, v45, v46 and v15: --tag
      bunal-wide-v46 with seed 111 (80 shapes) and --dtype bfloat16 --b-layout F with seed 112
      (50, bcol = True), held out --tag bunal-wide-v46-check with seed 113 (50):
      results/sweeps/pad-*bunal-wide-v46-*)

Writes <kind>[-bcol][-<tag>]-<dtype>-<gpu>.csv (kind: narrow, rows, deep, prefill or pad; one row
per shape and candidate) and prints a table of microseconds per launch with the best candidate per
shape marked.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import random
import statistics
import sys
import time

import cupy as cp

import fastgemm
from fastgemm.bench.timing import Prefill, warmup_gpu


def random_shapes(
    count: int, seed: int, mn_lo: int, mn_hi: int, k_lo: int, k_hi: int, max_tiles: int
) -> list:
    """`count` distinct aligned shapes, sorted: M and N log-uniform in [mn_lo, mn_hi], K in
    [k_lo, k_hi], each rounded down to a multiple of 64 or (as often) of 8, kept where the output
    has at most max_tiles tiles of 128x128 (the mid-size family of results/sweeps/pad-mid-*)."""
    rng = random.Random(seed)
    shapes: set = set()
    while len(shapes) < count:
        M, N = (int(math.exp(rng.uniform(math.log(mn_lo), math.log(mn_hi)))) for _ in range(2))
        K = int(math.exp(rng.uniform(math.log(k_lo), math.log(k_hi))))
        step = 64 if rng.random() < 0.5 else 8
        M, N, K = (max(step, x // step * step) for x in (M, N, K))
        if -(-M // 128) * -(-N // 128) <= max_tiles:
            shapes.add((M, N, K))
    return sorted(shapes)


UNFLIPPED = {
    "float16": ["hgemm_v20_hoisted_beta", "hgemm_v21_narrow_tile", "hgemm_v24_wgmma_split_k"],
    "float16-rows": [
        "hgemm_v22_split_k",
        "hgemm_v40_split_k_deep_ring",
        "hgemm_v26_split_k_32rows",
        "hgemm_v41_split_k_32rows_deep_ring",
        "hgemm_v42_split_k_wide_deep_ring",
        "hgemm_v24_wgmma_split_k",
        "hgemm_v21_narrow_tile",
    ],
    "float32-rows": [
        "sgemm_v10_split_k",
        "sgemm_v19_split_k_ring",
        "sgemm_v12_split_k_narrow",
        "sgemm_v18_split_k_multistage",
        "sgemm_v11_split_k_tile",
    ],
    "float32": ["sgemm_v12_split_k_narrow", "sgemm_v18_split_k_multistage", "sgemm_v11_split_k_tile"],
    "float16-deep": [
        "hgemm_v20_hoisted_beta",
        "hgemm_v24_wgmma_split_k",
        "hgemm_v25_wgmma_split_k_wide",
        "hgemm_v27_split_k_global",
        "hgemm_v28_split_k_global_narrow",
        "hgemm_v29_stream_k",
        "hgemm_v30_stream_k_wide",
        "hgemm_v33_split_k_n64",
    ],
    "float16-prefill": [
        "hgemm_v20_hoisted_beta",
        "hgemm_v21_narrow_tile",
        "hgemm_v24_wgmma_split_k",
        "hgemm_v28_split_k_global_narrow",
        "hgemm_v29_stream_k",
        "hgemm_v30_stream_k_wide",
        "hgemm_v31_split_last_round",
        "hgemm_v33_split_k_n64",
    ],
    "float32-deep": [
        "sgemm_v09_cp_async",
        "sgemm_v17_multistage",
        "sgemm_v11_split_k_tile",
        "sgemm_v12_split_k_narrow",
        "sgemm_v15_split_k_global",
        "sgemm_v16_split_k_waves",
        "sgemm_v18_split_k_multistage",
    ],
    "float32-prefill": [
        "sgemm_v09_cp_async",
        "sgemm_v17_multistage",
        "sgemm_v11_split_k_tile",
        "sgemm_v15_split_k_global",
        "sgemm_v16_split_k_waves",
        "sgemm_v18_split_k_multistage",
    ],
}
FLIPPED = {
    "float16": [
        "hgemm_v22_split_k",
        "hgemm_v40_split_k_deep_ring",
        "hgemm_v26_split_k_32rows",
        "hgemm_v41_split_k_32rows_deep_ring",
        "hgemm_v42_split_k_wide_deep_ring",
    ],
    "float32": ["sgemm_v10_split_k", "sgemm_v19_split_k_ring", "sgemm_v12_split_k_narrow"],
}


def set_dev_pad(mode: str | None) -> bool:
    """FASTGEMM_DEV_PAD for the calls that follow (None: unset, the rule decides); plans made
    under another setting are forgotten. True where the setting changed."""
    if os.environ.get("FASTGEMM_DEV_PAD") == mode:
        return False
    if mode is None:
        os.environ.pop("FASTGEMM_DEV_PAD", None)
    else:
        os.environ["FASTGEMM_DEV_PAD"] = mode
    fastgemm._C._clear_plan_cache()
    return True


def _torch_view(torch, x, dt: str):
    """A torch view of CuPy array x (the same memory): bfloat16, which torch cannot read from
    CuPy's interface (CuPy keeps it as 2-byte void), is viewed as int16 and reinterpreted."""
    if dt == "bfloat16":
        return torch.as_tensor(x.view(cp.int16), device="cuda").view(torch.bfloat16)
    return torch.as_tensor(x, device="cuda")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    ap.add_argument("--ns", default="1,8,16,24,32,48,64,96,128", help="output columns N")
    ap.add_argument("--mk", default="4096x4096,16384x4096,8192x8192,2048x2048,14336x4096,4096x14336")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--target-ms", type=float, default=10.0, help="device time per round")
    ap.add_argument("--out", default="results/sweeps")
    ap.add_argument("--few-rows", action="store_true", help="M small, (N, K) from --mk, untransposed")
    ap.add_argument("--deep", action="store_true", help="deep K: --deep-m x --deep-n x --deep-k")
    ap.add_argument("--deep-m", default="256,512,768,1024,1536,2048")
    ap.add_argument("--deep-n", default="512,1024,2048")
    ap.add_argument("--deep-k", default="8192,16384,32768,65536")
    ap.add_argument("--prefill", action="store_true", help="M from --pre-m x (N, K) from --pre-nk")
    ap.add_argument("--pre-m", default="128,256,384,512,768,1024,1536")
    ap.add_argument("--pre-nk", default="4096x4096,6144x4096,4096x14336,14336x4096,3584x18944,5120x5120")
    ap.add_argument("--kernels", default="", help="comma list of candidates (default: the family's)")
    ap.add_argument(
        "--flip-kernels",
        default="",
        help="comma list of candidates run transposed in the narrow family (the default family "
        "only; default: the family's)",
    )
    ap.add_argument(
        "--b-layout", default="C", choices=["C", "F"], help="B row-major (C) or column-major (F: B = W.T)"
    )
    ap.add_argument(
        "--pad", action="store_true", help="odd shapes: --pad-shapes (fp32: padded path off / on)"
    )
    ap.add_argument(
        "--pad-shapes",
        default="767x769x771,1023x1025x1027,1535x1537x1539,2047x2049x2051,3071x3073x3075,"
        "4095x4097x4099,1001x999x1003,255x4097x4099,511x4097x4099,1023x4097x4099,2047x4097x4099,"
        "127x4099x2053,33x12345x777,511x6145x4095,2047x6145x4095,1024x1024x1028,2048x2048x2052,"
        "4096x4096x4100,512x4096x4100,2048x2049x2048,4096x4097x4096,4096x4096x4093,8192x8193x2049",
    )
    ap.add_argument("--pad-m", default="", help="with --pad: these M for each shape's N, K")
    ap.add_argument(
        "--pad-modes",
        action="store_true",
        help="any family: auto with its padded path off and on (FASTGEMM_DEV_PAD=0 / 1) beside "
        "auto, and no candidates by name but --kernels / --flip-kernels",
    )
    ap.add_argument(
        "--pad-random",
        default="",
        help="with --pad, instead of --pad-shapes: COUNT,SEED,MN_LO,MN_HI,K_LO,K_HI,MAX_TILES "
        "(random_shapes)",
    )
    ap.add_argument("--deep-max-mn", type=int, default=2048 * 1024, help="largest M * N of --deep")
    ap.add_argument(
        "--tag", default="", help="inserted in the file name: <kind>[-bcol]-<tag>-<dtype>-<gpu>.csv"
    )
    args = ap.parse_args()

    try:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
    except ImportError:
        torch = None
    dt = args.dtype
    fn = fastgemm.sgemm if dt == "float32" else fastgemm.hgemm
    props = cp.cuda.runtime.getDeviceProperties(0)
    gpu = props["name"].decode()
    l2 = props["l2CacheSize"]
    prefill = Prefill(cp, True)
    warmup_gpu(cp, 1.0)
    rng = cp.random.default_rng(1)
    rows = []
    ints = lambda text: [int(x) for x in text.split(",")]
    if args.deep:
        shapes = [
            (m, n, k)
            for k in ints(args.deep_k)
            for m in ints(args.deep_m)
            for n in ints(args.deep_n)
            if m * n <= args.deep_max_mn
        ]
    elif args.pad:
        shapes = [tuple(int(x) for x in shape.split("x")) for shape in args.pad_shapes.split(",")]
        if args.pad_random:
            shapes = random_shapes(*(int(x) for x in args.pad_random.split(",")))
        if args.pad_m:
            shapes = [(m, n, k) for _, n, k in shapes for m in ints(args.pad_m)]
    elif args.prefill:
        nks = [tuple(int(x) for x in nk.split("x")) for nk in args.pre_nk.split(",")]
        shapes = [(m, n, k) for n, k in nks for m in ints(args.pre_m)]
    else:
        shapes = []
        for mk in args.mk.split(","):
            big, K = (int(x) for x in mk.split("x"))
            shapes += [(small, big, K) if args.few_rows else (big, small, K) for small in ints(args.ns)]
    family = ("float32" if dt == "float32" else "float16") + (
        "-rows" if args.few_rows else "-deep" if args.deep else "-prefill" if args.prefill else ""
    )
    transposed = (
        []
        if args.few_rows or args.deep or args.prefill or args.pad
        else [k.strip() for k in args.flip_kernels.split(",") if k.strip()]
        if args.flip_kernels or args.pad_modes
        else FLIPPED[family]
    )
    for M, N, K in shapes:
        item = 4 if dt == "float32" else 2
        per_set = (M * K + K * N + 2 * M * N) * item
        nsets = max(2, min(16, -(-3 * l2 // per_set)))
        sets = []
        for _ in range(nsets):
            A = rng.standard_normal((M, K), dtype=cp.float32).astype(dt)
            if args.b_layout == "F":
                B = rng.standard_normal((N, K), dtype=cp.float32).astype(dt).T
            else:
                B = rng.standard_normal((K, N), dtype=cp.float32).astype(dt)
            sets.append((A, B, cp.empty((M, N), dt), cp.empty((N, M), dt)))
        ref = cp.matmul(sets[0][0].astype(cp.float32), sets[0][1].astype(cp.float32))
        cands = {"auto": lambda s: fn(s[0], s[1], s[2])}
        # Called before a candidate's calls (the first one and each round's).
        prepare = {"auto": lambda: set_dev_pad(None)}
        if args.pad or args.pad_modes:
            for name, mode in (("auto (no pad)", "0"), ("auto (pad)", "1")):
                cands[name] = lambda s: fn(s[0], s[1], s[2])
                prepare[name] = lambda mode=mode: set_dev_pad(mode)
        by_name = (
            args.kernels.split(",")
            if args.kernels
            else []
            if args.pad or args.pad_modes
            else UNFLIPPED[family]
        )
        for k in by_name:
            cands[k] = lambda s, k=k: fn(s[0], s[1], s[2], kernel=k)
        for k in transposed:
            cands[k + " (C^T)"] = lambda s, k=k: fn(s[1].T, s[0].T, s[3], kernel=k)
        cands["cuBLAS"] = lambda s: cp.matmul(s[0], s[1], out=s[2])
        if torch is not None:
            tsets = [tuple(_torch_view(torch, x, dt) for x in s) for s in sets]
            cands["torch.matmul"] = lambda s, t=tsets: torch.matmul(t[s[4]][0], t[s[4]][1], out=t[s[4]][2])
        sets = [(*s, i) for i, s in enumerate(sets)]
        samples: dict[str, list[float]] = {}
        errors: dict[str, float] = {}
        reps: dict[str, int] = {}
        for name, call in list(cands.items()):
            try:
                prepare.get(name, lambda: set_dev_pad(None))()
                call(sets[0])
                out = sets[0][3].T if name.endswith("(C^T)") else sets[0][2]
                errors[name] = float(cp.linalg.norm(out.astype(cp.float32) - ref) / cp.linalg.norm(ref))
                cp.cuda.Device().synchronize()
                t0 = time.perf_counter()
                for i in range(3):
                    call(sets[i % nsets])
                cp.cuda.Device().synchronize()
                est = (time.perf_counter() - t0) / 3 * 1e3
                reps[name] = int(max(2, min(200, args.target_ms / max(est, 1e-3))))
                samples[name] = []
            except Exception as exc:  # noqa: BLE001
                print(f"  {name} {M}x{N}x{K}: {type(exc).__name__}: {exc}", file=sys.stderr)
                cands.pop(name)
        for _ in range(args.rounds):
            for name, call in cands.items():
                n = reps[name]
                if prepare.get(name, lambda: set_dev_pad(None))():
                    call(sets[0])  # the new plan made outside the timed calls
                prefill(min(0.25, 20e-6 * n + 50e-6))
                start, end = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                for i in range(n):
                    call(sets[i % nsets])
                end.record()
                end.synchronize()
                samples[name].append(cp.cuda.get_elapsed_time(start, end) * 1e3 / n)
        set_dev_pad(None)
        sel = fastgemm.select(M, N, K, dt, order="C" + args.b_layout)
        us = {k: statistics.median(v) for k, v in samples.items()}
        named = [(v, k) for k, v in us.items() if k not in ("cuBLAS", "torch.matmul", "auto")]
        best = min(named)[1] if named else "auto"  # every candidate by name may refuse the shape
        peer = min(v for k, v in us.items() if k in ("cuBLAS", "torch.matmul"))
        hbm = (M * K + K * N + M * N) * item
        line = f"{M}x{N}x{K}: auto={sel.kernel.name}{' (C^T)' if sel.flip else ''}  " + "  ".join(
            f"{k}{'*' if k == best else ''} {v:.1f}" for k, v in us.items()
        )
        print(line, flush=True)
        for k, v in us.items():
            rows.append(
                {
                    "gpu": gpu,
                    "dtype": dt,
                    "M": M,
                    "N": N,
                    "K": K,
                    "candidate": k,
                    "us": round(v, 2),
                    "vs_best_peer": round(peer / v, 3),
                    "gbps": round(hbm / v / 1e3, 1),
                    "rel_error": errors.get(k),
                    "auto_kernel": sel.kernel.name,
                    "auto_flip": sel.flip,
                    "auto_pad": sel.pad,
                }
            )
        del sets, cands
        cp.get_default_memory_pool().free_all_blocks()
    os.makedirs(args.out, exist_ok=True)
    kind = (
        "rows"
        if args.few_rows
        else "deep"
        if args.deep
        else "prefill"
        if args.prefill
        else "pad"
        if args.pad
        else "narrow"
    )
    kind += "-bcol" if args.b_layout == "F" else ""
    kind += f"-{args.tag}" if args.tag else ""
    path = os.path.join(args.out, f"{kind}-{dt}-{gpu.lower().replace(' ', '-')}.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
