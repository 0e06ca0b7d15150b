"""Launch the named fp16 kernels once on an n x n x n problem, for ncu.

    ncu --clock-control none --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum \
        -k regex:'hgemm_v0[349]' python benchmarks/profile_hgemm.py hgemm_v03_padded,hgemm_v09_raster 4096
"""

import sys

import cupy as cp

import fastgemm

n = int(sys.argv[2])
names = sys.argv[1].split(",")
A = cp.random.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
B = cp.random.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
C = cp.empty((n, n), cp.float16)
for k in names:
    fastgemm.hgemm(A, B, C, kernel=k)
cp.cuda.Device().synchronize()
