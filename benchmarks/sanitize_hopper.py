"""Run the Hopper rungs, the split-K specialists and sgemm_v17 on small problems in every layout,
for compute-sanitizer.

    compute-sanitizer --tool memcheck  python benchmarks/sanitize_hopper.py [name-filter] [--small]
    compute-sanitizer --tool racecheck python benchmarks/sanitize_hopper.py v12,v14 --small
    compute-sanitizer --tool racecheck python benchmarks/sanitize_hopper.py v18,v19,v20 --small --multi

CuPy's memory pool is off, so out-of-bounds accesses cannot hide inside pooled blocks; each result
is checked against a float64 reference. Every case runs with beta = 0.5 (C read) and beta = 0 (C
NaN-filled and not read; v20 has a separate epilogue for it). Outputs with few columns, which
auto runs transposed on a split-K kernel that the filter keeps (C stored column-major), run last.
"""

import sys

import cupy as cp

import fastgemm

cp.cuda.set_allocator(None)
# v17 (a cp.async ring of its own, not v09's loop) and v09 (edge tiles moved inside the output)
OWN_PIPELINES = {"sgemm_v17_multistage", "sgemm_v09_cp_async"}
# (name, dtype): the Hopper rungs (fp16 rows), the split-K specialists (fp16 and fp32 rows) and
# sgemm_v17.
kernels = [
    (k.name, k.dtype)
    for k in fastgemm.kernels()
    if k.dtype != "bfloat16"
    and (k.copy == "tma" or k.epilogue.startswith("split_k") or k.name in OWN_PIPELINES)
]
precision = {k.name: k.precision for k in fastgemm.kernels("float32")}  # tf32 rungs ask for theirs
names = [n for n, _ in kernels]
split_k = {k.name for k in fastgemm.kernels() if k.epilogue.startswith("split_k")}
if len(sys.argv) > 1:
    kernels = [(n, d) for n, d in kernels if any(p in n for p in sys.argv[1].split(","))]
    names = [n for n, _ in kernels]
# (1800, 2600, 72) has more output tiles (15 x 11) than an H100/H200 has SMs, so persistent blocks
# run several tiles (the rungs that borrow a ring stage hand it back at the next tile); --multi adds it to
# --small.
shapes = [(200, 264, 136), (64, 64, 64)] if "--small" not in sys.argv else [(72, 136, 72)]
if "--small" not in sys.argv or "--multi" in sys.argv:
    shapes.append((1800, 2600, 72))
# The split shapes: decode-like, K long enough for a split of 8 at every split-K kernel's smallest
# share. racecheck walks every shared-memory access of a SIMT loop, so the fp32 tile kernels get
# shorter K: sgemm_v11 1032 (still split 8 ways), sgemm_v12 520 (8 ways) in each of its tilings
# (32x128 / 64x128 for M <= N, 128x32 / 128x64 otherwise); sgemm_v16 two tiles split 2 ways with a
# ragged K.
# The fp32 rungs that take 4-byte aligned operands in place also run a shape with odd extents
# (leading dimensions not a multiple of 4: their 4-byte copies and stores). sgemm_v17 runs a ragged
# K with edge tiles moved back inside the output: by a multiple of 4 (16-byte instantiation) and
# by an odd count (4-byte); sgemm_v09 moves its edge tiles too (whole K).
split_shapes = {
    "sgemm_v10_split_k": [(8, 264, 4104), (9, 263, 4103)],
    "sgemm_v19_split_k_ring": [(8, 264, 4104), (9, 263, 4103), (3, 65, 37)],
    "sgemm_v11_split_k_tile": [(8, 264, 1032), (9, 263, 1031)],
    "sgemm_v15_split_k_global": [(8, 264, 1032)],
    "sgemm_v16_split_k_waves": [(256, 128, 264), (255, 129, 263), (260, 264, 256), (263, 259, 144)],
    "sgemm_v17_multistage": [(260, 264, 139), (263, 259, 141)],
    "sgemm_v09_cp_async": [(260, 264, 144), (263, 259, 144)],
    "sgemm_v18_split_k_multistage": [(8, 264, 520), (264, 8, 520), (9, 263, 519), (263, 259, 1031)],
    # v34: odd extents (rows 2-byte aligned: residue maps with offsets, the copies of A and of a
    # column-major B, element stores of C), K < 8 (residues without rows) and a split decode.
    "hgemm_v34_split_k_unaligned": [(127, 129, 65), (33, 263, 1031), (9, 263, 4103), (5, 67, 3)],
    # K split over the SMs with a second kernel's sum: one tile split ~60 ways, several tiles;
    # v37/v38 on odd extents (element loads, element stores of C), K < 8.
    "hgemm_v35_split_k_reduce": [(8, 264, 4104), (8, 40, 8000)],
    "hgemm_v36_split_k_reduce_wide": [(8, 264, 4104), (56, 192, 8000)],
    # Stream-K on 16x64 and 32x64 tiles: runs of 2-3 k-tiles crossing tiles (several segments a
    # block: the ring refilled after a contribution or an owner's store), one tile's owner adding
    # many runs.
    "hgemm_v47_split_k_stream": [(8, 8448, 520), (8, 64, 8000)],
    "hgemm_v48_split_k_32rows_stream": [(24, 8448, 520), (24, 64, 8000)],
    "hgemm_v37_split_k_reduce_unaligned": [(9, 263, 4103), (5, 67, 3), (7, 41, 8001)],
    "hgemm_v38_split_k_reduce_wide_unaligned": [(33, 263, 1031), (5, 67, 3), (51, 77, 8001)],
    "sgemm_v12_split_k_narrow": [
        (8, 264, 520),
        (264, 8, 520),
        (40, 264, 520),
        (264, 40, 520),
        (9, 263, 519),
        (263, 41, 519),
    ],
}


def run(kernel, dtype, M, N, K):
    """Every layout of A and B, beta = 0.5 (C read) and 0 (C NaN, not read), against float64."""
    for oa in "CF":
        for ob in "CF":
            A = cp.random.standard_normal((M, K), dtype=cp.float32).astype(dtype)
            B = cp.random.standard_normal((K, N), dtype=cp.float32).astype(dtype)
            A = cp.asfortranarray(A) if oa == "F" else A
            B = cp.asfortranarray(B) if ob == "F" else B
            for beta in (0.5, 0.0):
                C = cp.random.standard_normal((M, N), dtype=cp.float32).astype(dtype)
                if beta == 0.0:
                    C.fill(cp.nan)
                C0 = cp.nan_to_num(C)
                fastgemm.gemm(A, B, C, 1.0, beta, kernel=kernel, precision=precision.get(kernel, "ieee"))
                ref = A.astype(cp.float64) @ B.astype(cp.float64) + beta * C0.astype(cp.float64)
                err = float(cp.abs(C.astype(cp.float64) - ref).max())
                assert err < 0.05 * max(1.0, float(cp.abs(ref).max())), (kernel, M, N, K, oa, ob, beta, err)


# The rungs that split their last round of tiles (a TMA-store epilogue, not a split one): 4
# tiles of 16 k-tiles, each split 4 ways.
hybrid = {
    "hgemm_v31_split_last_round": [(256, 512, 1024)],
    "hgemm_v32_split_last_round_192": [(256, 384, 1024)],
}
for name, dtype in kernels:
    # Split-K kernels also on a decode shape whose K is split across a cluster of several blocks.
    extra = split_shapes.get(name, [(8, 264, 4104)]) if name in split_k else split_shapes.get(name, [])
    for M, N, K in shapes + extra:
        run(name, dtype, M, N, K)
    for M, N, K in hybrid.get(name, []):
        run(name, dtype, M, N, K)
# Outputs with few columns, which auto runs transposed on a split-K kernel (C stored column-major).
flipped = []
for dtype, M, N, K in [("float16", 520, 16, 1032), ("float16", 264, 40, 600), ("float32", 520, 12, 1032)]:
    sel = fastgemm.select(M, N, K, dtype)
    if sel.flip and sel.kernel.name in names:
        run("auto", dtype, M, N, K)
        flipped.append(f"{sel.kernel.name} on {M}x{N}x{K} transposed")
cp.cuda.Device().synchronize()
print("ran", names, "and", flipped)
