"""Benchmark the fastgemm kernel ladder against cuBLAS on the local GPU.

    python -m fastgemm.bench                       # float32 ladder at 1024^3 .. 8192^3
    python -m fastgemm.bench --quick               # 1024^3 and 2048^3, 3 rounds
    python -m fastgemm.bench --dtype float32,float16 --shapes 4095x4097x4099 --kernels 'v0[5-9]'
    python -m fastgemm.bench --dtype float16 --sizes 1024 --include-auto --timing both
    python -m fastgemm.bench --overhead            # host microseconds per call from Python
    python -m fastgemm.bench --suite --dtype float16   # auto vs cuBLAS and torch.matmul, public shapes

Method
------
For every shape, every candidate (cuBLAS, each runnable kernel of the dtype, and with
``--include-auto`` the ``kernel="auto"`` dispatch) goes through the same steps:

1. **Correctness first.** The output is poisoned with NaN, the candidate runs once on random-normal
   inputs (never zeros) and the result is compared with a float64 reference (CuPy matmul on float64
   copies of the same inputs) by the relative Frobenius error ``||C - ref|| / ||ref||``. Above the
   dtype's bound (float32 1e-4, float16 2e-2, bfloat16 5e-2) the candidate is marked WRONG and not
   timed; an exception marks it ERROR. This launch is also the warm-up (module load, cuBLAS
   heuristics, first-touch allocations).
2. **Adaptive repetitions.** One launch is timed to estimate the kernel's duration ``t``; a round
   then holds ``reps = clamp(target_ms / t, 1, 100)`` back-to-back launches, and ``rounds`` (default
   5) rounds are planned. If ``rounds * reps * t`` exceeds ``--max-seconds-per-kernel``, reps and
   then rounds are cut (never below one timed launch), so the naive rung at 8192^3 costs a few
   seconds, not minutes.
3. **Interleaving.** The timed rounds go round-robin over ``[cuBLAS, kernel_1, ..., kernel_n]``:
   round 1 of every candidate, then round 2 of every candidate, ... so clock and thermal drift hit
   all candidates alike, and every ratio to cuBLAS compares numbers from the same shape, process and
   minutes. Each round visits the candidates in a new (seeded) random order: on a power-limited GPU
   the clock a kernel gets depends on how much power the kernel before it drew, and a fixed order
   would hand every candidate the same neighbour in every round (measured on an H200: one Hopper
   kernel at 686 and 727 TFLOPS in one run, behind a power-hungry and a light neighbour).
4. **CUDA events.** Each round is bracketed by two ``cupy.cuda.Event`` records; its sample is the
   elapsed device time divided by ``reps``. Before each round a one-thread spin kernel holds the
   stream busy for longer than the host takes to enqueue the round, so the launches run
   back-to-back on the device and Python/launch overhead is not what is timed (``--no-prefill``
   turns this off). A kernel's time is the **median** over its rounds.
5. **Cache rotation.** When ``A + B + C`` of one shape is smaller than 3x the L2 cache, several
   independently random input sets (together at least 3x L2) are made and consecutive launches
   cycle through them, so each launch starts from a cold L2 as it would in a real workload.

Timing (``--timing device|end-to-end|both``)
--------------------------------------------
``device`` (the default) is step 4: what the GPU spends per launch, with the host's cost hidden.
``end-to-end`` times what a user's loop sees instead: no spin; the device is synchronised,
``t0 = time.perf_counter()``, ``reps`` calls are made back to back as a user makes them (rotating
the input sets as in step 5), the device is synchronised again, and the sample is
``(time.perf_counter() - t0) / reps`` -- Python call cost, launch gaps and the closing
synchronisation included. ``both`` runs, at every visit of a candidate in the interleaved rounds,
a device round and an end-to-end round back to back. Result records always carry both sets of
fields: ``ms``, ``tflops``, ``pct_cublas``, ``pct_peak`` are device time (null when not measured)
and ``e2e_ms``, ``e2e_tflops``, ``e2e_pct_cublas``, ``e2e_pct_peak`` end-to-end; ``meta.timing``
says which ran. cuBLAS's end-to-end figure is a call through CuPy's thin ``cublas.gemmEx`` binding,
not through ``cupy.matmul`` (``--overhead`` compares the user-level calls).

TFLOPS = 2*M*N*K / t. "% of cuBLAS" divides by cuBLAS's median from the same shape in the same run;
"% of peak" divides by the GPU's peak (datasheet table by GPU name, else SMs x FP32 lanes x 2 x clock
for float32; "n/a" when unknown).

cuBLAS is called through CuPy's ``cublas.gemmEx`` on the very same (row-major, possibly padded)
buffers with ``CUBLAS_COMPUTE_32F``: true FP32 for float32 (TF32 is off: ``CUPY_TF32=0`` and
``NVIDIA_TF32_OVERRIDE=0`` are set before CuPy is imported), fp16/bf16 inputs with fp32
accumulation on tensor cores for the half types. ``cupy.matmul`` is the fallback.

Operands are dense by default, as a user would pass them: for odd shapes that means rows that are
not 16-byte aligned, which the vectorised rungs refuse (reported as ERROR) and which also slow
cuBLAS down. ``--pad`` pads the rows to 16 bytes for every candidate alike instead.

Outputs, under ``--out`` (default ``results/``), per dtype: ``<dtype>-<gpu-slug>.json`` (``meta`` and
``results``), ``.csv`` (the results; the timing columns headed ``device_ms``, ``device_tflops``, ...
and ``e2e_ms``, ...) and ``.png`` (TFLOPS by rung, one line per shape, cuBLAS dashed).
``benchmarks/update_readme.py`` turns the JSON into the README tables.

Host cost per call (``--overhead``)
-----------------------------------
``python -m fastgemm.bench --overhead`` measures instead, and exits after it, what one call from
Python costs the host, in microseconds, on a problem small enough (``--overhead-shape``, default
64x64x64) that the GPU never holds the host up. Cases, each with torch tensors and with CuPy arrays
(a library that cannot be imported is skipped and named in the output): ``hgemm`` fp16 with
``kernel="auto"`` on C-contiguous operands and beta = 0; the same with beta = 0.5; the same on
F-ordered (column-major) A, B and C; the rung ``fastgemm.select(M, N, K, "float16")`` names, forced
with ``kernel=``; the same four for ``sgemm`` float32; and, as peers in the same process,
``torch.matmul(A, B, out=C)`` and ``cupy.matmul(A, B, out=C)`` in fp16 and fp32.

1. **Check.** Each case is called once (C poisoned with NaN when beta = 0) and compared with a
   float64 NumPy product of the same inputs; a relative Frobenius error above 5e-2 (fp16) or 1e-2
   (fp32) marks it WRONG, an exception ERROR, and it is not timed.
2. **Warm-up.** ~200 calls per case.
3. **Batches.** For each of R batches (``--overhead-batches``, default 30): synchronise the device,
   ``t0 = time.perf_counter()``, n back-to-back calls with no synchronisation inside
   (``--overhead-calls``, default 200), ``t1 = time.perf_counter()``; the sample is
   ``(t1 - t0) / n``. n stays well below the CUDA launch-queue depth (~1000 pending launches), so
   the host never waits for the GPU and the sample is host time. Batches are interleaved: batch b
   of every case, then batch b+1, ..., each round in a new seeded random order, so drift hits all
   cases alike.
4. **Report.** Median and min over the batches per case, and the ratio of the median to the same
   library's ``matmul(out=)`` of the same dtype. Outputs: ``overhead-<gpu-slug>.json`` (``meta``
   and one record per case and library) and ``.csv``; ``benchmarks/update_readme.py`` renders the
   JSON between ``<!-- overhead_results -->`` and ``<!-- /overhead_results -->``.

Shape suite (``--suite``)
-------------------------
``python -m fastgemm.bench --suite [--dtype float16]`` runs, instead of the kernel ladder, the public
shape suite of ``fastgemm.bench.suite``: categories of shapes (``square``; ``decode``, M = 1..64
tokens on the linear layers of Llama-3-8B, Qwen2.5-7B and Llama-2-13B; ``prefill``, M = 128..8192
on some of those layers; ``deep_k``; ``narrow_n``; ``misaligned``), each shape in one category.
Per shape three candidates go through steps 1 to 5 above, interleaved, with ``--timing both``:
``kernel="auto"``, cuBLAS (as above) and, when torch can be imported and sees the GPU,
``torch.matmul(A, B, out=C)`` on torch views of the very same buffers, with torch's preferred BLAS
library set to cuBLASLt for the run (``meta.torch_blas`` says what torch used). Both peers and both
timings rotate the input sets as in step 5. Defaults: 3 rounds, ``--target-ms 20`` (both
overridable), so an fp16 suite takes a few minutes on an H100. Per shape the record gives the
medians in microseconds, ``ratio = the faster peer's time / fastgemm's`` (> 1: fastgemm is faster;
device and end-to-end), fastgemm's TFLOPS and, for memory-bound shapes (min(M, N) <= 64), the HBM
bandwidth achieved: (A + B read, C written; beta = 0) bytes / device time, and its share of the
datasheet bandwidth (empty for a GPU the table does not know). Per category and overall: the
geometric mean and the minimum of the ratios. Outputs: ``suite-<dtype>-<gpu-slug>.json`` (``meta``,
``results``: one record per shape with the candidates' own records, ``summary``: one row per
category), ``.csv`` and ``.png`` (the ratio per shape); ``benchmarks/update_readme.py`` renders the
category table between ``<!-- bench:suite:<dtype>:start -->`` and ``<!-- bench:suite:<dtype>:end -->``.
``--suite`` refuses ``--sizes``, ``--shapes``, ``--overhead``, ``--quick``, ``--kernels``,
``--include-auto``, ``--pad`` and a ``--timing`` other than ``both`` (exit status 2).

Exit status: 0 all measured and correct; 1 a candidate was WRONG or failed; 2 bad arguments (argparse);
3 no usable GPU, or fastgemm cannot be imported (nothing measured); 130 interrupted.

Modules
-------
``cli`` the command line and the three runs; ``runner`` the shape benchmark per dtype and shape;
``suite`` the ``--suite`` shapes, records and summary; ``timing`` the check, device and end-to-end
rounds, the probe and the plan; ``overhead`` the ``--overhead`` cases and records; ``shapes`` shape
sets and operands; ``device`` the GPU, CuPy, the peak and HBM tables; ``peers`` cuBLAS via CuPy,
``torch.matmul`` and the torch / CuPy array libraries; ``report`` meta, records, JSON/CSV and the
printed tables; ``tables`` the table renderer ``benchmarks/update_readme.py`` shares; ``plots`` the
PNGs (matplotlib, optional).
"""

from __future__ import annotations

from .cli import main

__all__ = ["main"]
