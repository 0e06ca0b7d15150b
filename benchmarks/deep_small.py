"""Deep-K GEMMs on small fp16 outputs: auto, the split-K kernels one by one, and torch.matmul.

    python benchmarks/deep_small.py 110 --seed 5 --out results/sweeps

Random aligned problems: M log-uniform 1-256, N 8-2048 and K 1024-40000 (both multiples of 8),
at most 32 tiles of 64x64; a quarter of the A and of the B operands column-major (transposed
views). Each kernel's output is checked against float64 (largest difference over the largest
output, C poisoned with NaN first) and against a second call (the same bits); device time is CUDA
events around back-to-back calls, median of 3 rounds, operands hot in L2. The split kernels with
no owner (v35, v36) and their rules were fitted to this sweep. Writes
deep-small-v35-v36-float16-<gpu>.json.

    python benchmarks/deep_small.py 120 --seed 7 --unaligned --out results/sweeps

Under-aligned problems instead (M 1-1024, N 4-4096, K 256-40000, any sizes, at most 48 tiles of
64x64, some operand's rows or N not a multiple of 8 elements): auto (v34 or the padded path),
v37 and v38 (which read such operands in place). Their rules were fitted to this sweep. Writes
unaligned-small-v37-v38-float16-<gpu>.json.

    python benchmarks/deep_small.py 160 --seed 9 --unaligned-large --out results/sweeps

Under-aligned problems on larger outputs (M and N 32-16384, more than 48 tiles of 64x64, at most
2^27 outputs, K 8-4096): auto against v39 (element loads, C stored by rows). v39's rule was
fitted to this sweep. Writes unaligned-large-v39-float16-<gpu>.json.

    python benchmarks/deep_small.py 120 --seed 10 --unaligned-short --out results/sweeps

The same below those outputs (M 1-2048, N 4-4096, fewer than 2^17 outputs, K 8-256): auto
against v39. Writes unaligned-short-v39-float16-<gpu>.json.

    python benchmarks/deep_small.py 120 --seed 13 --unaligned-narrow --out results/sweeps

Tall narrow under-aligned outputs (M 128-16384, N 1-160, at most 2^22 outputs, K 64-32768, A of
at most 2^27 elements): auto against v37 and v38 on the transposed problem (C^T = B^T A^T into a
row-major C^T: "^T"), which flipped plans run. Writes unaligned-narrow-v37-v38-float16-<gpu>.json.

    python benchmarks/deep_small.py 120 --seed 21 --unaligned-padded --out results/sweeps

Random shapes as random_shapes.py draws them (at most 2^36 multiply-adds), some operand's rows or
N not a multiple of 8 elements, kept where auto runs the padded path (aligned copies of the
operands): auto against the kernels that read such operands in place (v34, v37, v38, v39, and
v37 / v38 on the transposed problem). A kernel whose second call (the first after its checked
one) takes more than six times auto's time plus 50 us is not timed. Writes
unaligned-padded-float16-<gpu>.json.

    python benchmarks/deep_small.py 150 --seed 17 --hopper --out results/sweeps

Random shapes as random_shapes.py draws them (at most 2^36 multiply-adds), every operand's rows
16-byte aligned, kept where auto runs a wgmma rung: auto against each wgmma rung (v20, v21, v24,
v25, v27-v33; a rung that refuses a problem is left out of its row). Writes
hopper-random-float16-<gpu>.json.

    python benchmarks/deep_small.py 150 --seed 18 --hopper --only hgemm_v24_wgmma_split_k --out results/sweeps

The same, kept where auto runs that rung. Writes hopper-random-<rung>-float16-<gpu>.json.

    python benchmarks/deep_small.py 120 --seed 22 --tall --out results/sweeps

Tall outputs of few columns with a long K: M log-uniform 1024-16384, N 129-1024 and K
2048-32768 (log-uniform, multiples of 8), at most 2^36 multiply-adds, a quarter of the A and of
the B operands column-major, kept where auto runs a wgmma rung: auto against each wgmma rung, to
place v32's 192-column tiles against the 128- and 256-column ones. Writes
hopper-tall-float16-<gpu>.json.

    python benchmarks/deep_small.py 150 --seed 23 --realign --out results/sweeps

Random shapes as --hopper draws them, every operand's rows 16-byte aligned and A's or B's not
128-byte aligned (K, N or M not a multiple of 64), kept where auto runs a wgmma rung: auto with
FASTGEMM_DEV_REALIGN=0 (the operands read in place), =A, =B and =AB (those operands copied into
temporaries with 128-byte rows first, where theirs are not), against torch.matmul. Writes
realign-float16-<gpu>.json.

    python benchmarks/deep_small.py 60 --seed 31 --realign-large --out results/sweeps

Larger problems (2^31-2^36 multiply-adds, sides 512-16384) whose A's or B's rows are 16-byte
aligned and, drawn per operand, 16-, 32-, 64- or 128-byte aligned (not both 128), a quarter of
the A and of the B operands column-major, kept where auto runs a wgmma rung: auto's kernel with
each FASTGEMM_DEV_REALIGN mode (0: in place; A, B, AB: copied first), auto and torch.matmul, in
rounds interleaved across the modes (so that clock drift moves all alike), operands rotated over
up to four input sets (at least 3x the L2 where four suffice; the smallest problems' four sets
hold about the L2). The realign rule (plan.cpp, kRealignMinRowsB) was fitted to it. With --shapes MxNxK,...
the same on those problems (row-major operands) instead. Writes realign-large-float16-<gpu>.json
(realign-shapes-... with --shapes).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
from collections.abc import Callable
from typing import Any

import torch
from random_shapes import _device_us, _shape  # the same timing and shapes (run from benchmarks/)

import fastgemm

UNALIGNED_KERNELS = ["hgemm_v37_split_k_reduce_unaligned", "hgemm_v38_split_k_reduce_wide_unaligned"]
LARGE_KERNELS = ["hgemm_v39_unaligned_row_store"]
NARROW_KERNELS = [n + "^T" for n in UNALIGNED_KERNELS]
PADDED_KERNELS = ["hgemm_v34_split_k_unaligned", *UNALIGNED_KERNELS, *LARGE_KERNELS, *NARROW_KERNELS]
# The wgmma rungs from v20 on that need 16-byte aligned rows (v34 reads under-aligned ones).
HOPPER_KERNELS = [
    k.name
    for k in fastgemm.kernels("float16")
    if k.family == "wgmma" and k.version >= 20 and k.alignment == 16
]
KERNELS = [
    "hgemm_v35_split_k_reduce",
    "hgemm_v36_split_k_reduce_wide",
    "hgemm_v22_split_k",
    "hgemm_v26_split_k_32rows",
    "hgemm_v23_split_k_wide",
    "hgemm_v24_wgmma_split_k",
    "hgemm_v28_split_k_global_narrow",
]


def _under_aligned(M: int, N: int, K: int, a_col: bool, b_col: bool) -> bool:
    """Whether A's, B's or C's rows (fresh operands in these layouts) are not a multiple of 8
    fp16 elements, i.e. not 16-byte aligned."""
    return bool((M if a_col else K) % 8 or (K if b_col else N) % 8 or N % 8)


def _tiles(M: int, N: int) -> int:
    """Output tiles of 64x64."""
    return -(-M // 64) * -(-N // 64)


# The under-aligned families: M, N and K ranges (log-uniform) and which problems qualify.
UNALIGNED_FAMILIES: dict[str, tuple[tuple[int, int], tuple[int, int], tuple[int, int], Any]] = {
    "small": ((1, 1024), (4, 4096), (256, 40000), lambda M, N, K: _tiles(M, N) <= 48),
    "large": (
        (32, 16384),
        (32, 16384),
        (8, 4096),
        lambda M, N, K: _tiles(M, N) > 48 and M * N <= 1 << 27,
    ),
    "short": ((1, 2048), (4, 4096), (8, 256), lambda M, N, K: M * N < 1 << 17),
    "narrow": (
        (128, 16384),
        (1, 160),
        (64, 32768),
        lambda M, N, K: M * N <= 1 << 22 and M * K <= 1 << 27,
    ),
}


def _log_uniform(rng: random.Random, lo: int, hi: int) -> int:
    return int(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _time(fn: Callable[[], Any]) -> float:
    once = _device_us(fn, 1)
    reps = int(max(3, min(100, 10000 / max(once, 1.0))))
    return statistics.median(_device_us(fn, reps) for _ in range(3))


def _operands(
    M: int, N: int, K: int, a_col: bool, b_col: bool, dt: Any, reference: bool = True
) -> tuple[Any, ...]:
    """Fresh random A and B in these layouts (a column-major one as a transposed view), an empty
    C, and (reference) the float64 product and its largest magnitude."""
    A = torch.randn(K, M, device="cuda", dtype=dt).T if a_col else torch.randn(M, K, device="cuda", dtype=dt)
    B = torch.randn(N, K, device="cuda", dtype=dt).T if b_col else torch.randn(K, N, device="cuda", dtype=dt)
    C = torch.empty(M, N, device="cuda", dtype=dt)
    if not reference:
        return A, B, C
    ref = A.double() @ B.double()
    return A, B, C, ref, max(ref.abs().max().item(), 1e-30)


def _off_128(pitch_elements: int) -> bool:
    """Rows (fp16) 16-byte but not 128-byte aligned."""
    return pitch_elements % 8 == 0 and pitch_elements % 64 != 0


def _print_modes(M: int, N: int, K: int, order: str, what: str, row: dict, modes: list, tail: str) -> None:
    """One realign sweep line: the problem, its rows, each mode's microseconds, then `tail`."""
    times = " ".join(f"{m}:{row[m]:.1f}" for m in modes)
    print(f"{M:5d}x{N:5d}x{K:5d} {order} {what} {times} {tail}", flush=True)


def _realign_sweep(args: argparse.Namespace, rng: random.Random, gpu: str) -> None:
    """--realign: auto with each FASTGEMM_DEV_REALIGN mode that copies something, and with none."""
    dt = torch.float16
    rows: list[dict[str, Any]] = []
    while len(rows) < args.count:
        M, N, K = _shape(rng, 1 << 36)
        a_col, b_col = rng.random() < 0.25, rng.random() < 0.25
        if _under_aligned(M, N, K, a_col, b_col):
            continue
        off_a, off_b = _off_128(M if a_col else K), _off_128(K if b_col else N)
        if not (off_a or off_b):
            continue
        order = ("F" if a_col else "C") + ("F" if b_col else "C")
        os.environ["FASTGEMM_DEV_REALIGN"] = "0"
        fastgemm._C._clear_plan_cache()
        if fastgemm.select(M, N, K, "float16", order=order).kernel.name not in HOPPER_KERNELS:
            continue
        A, B, C, ref, top = _operands(M, N, K, a_col, b_col, dt)
        row: dict[str, Any] = {
            "M": M,
            "N": N,
            "K": K,
            "a_col": a_col,
            "b_col": b_col,
            "off_a": off_a,
            "off_b": off_b,
        }
        modes = (
            ["0"] + (["A"] if off_a else []) + (["B"] if off_b else []) + (["AB"] if off_a and off_b else [])
        )
        for mode in modes:
            os.environ["FASTGEMM_DEV_REALIGN"] = mode
            fastgemm._C._clear_plan_cache()
            row[f"kernel_{mode}"] = fastgemm.select(M, N, K, "float16", order=order).kernel.name
            C.fill_(float("nan"))
            fastgemm.gemm(A, B, C)
            torch.cuda.synchronize()
            row[f"err_{mode}"] = float((C.double() - ref).abs().max() / top)
            row[mode] = _time(lambda A=A, B=B, C=C: fastgemm.gemm(A, B, C))
        del os.environ["FASTGEMM_DEV_REALIGN"]
        fastgemm._C._clear_plan_cache()
        row["auto_kernel"] = fastgemm.select(M, N, K, "float16", order=order).kernel.name
        row["auto"] = _time(lambda A=A, B=B, C=C: fastgemm.gemm(A, B, C))
        C2 = torch.empty_like(C)
        row["torch"] = _time(lambda A=A, B=B, C2=C2: torch.matmul(A, B, out=C2))
        rows.append(row)
        off = f"off {'A' if off_a else '-'}{'B' if off_b else '-'}"
        _print_modes(M, N, K, order, off, row, modes, f"auto {row['auto']:.1f} torch {row['torch']:.1f}")
    path = os.path.join(args.out, f"realign-float16-{gpu}.json")
    os.makedirs(args.out, exist_ok=True)
    meta = {
        "command": f"python benchmarks/deep_small.py {args.count} --seed {args.seed} --realign",
        "gpu": gpu,
    }
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": rows}, f, indent=1)
    print("wrote", path)


def _row_alignment(pitch: int) -> int:
    """Bytes (16-128) to which fp16 rows `pitch` elements apart are aligned."""
    b = pitch * 2
    return 128 if b % 128 == 0 else 64 if b % 64 == 0 else 32 if b % 32 == 0 else 16


def _pitch(rng: random.Random, align: int) -> int:
    """A side of 512-16384 (log-uniform) whose fp16 rows are aligned to exactly `align` bytes."""
    while True:
        v = _log_uniform(rng, 512, 16384) // 8 * 8
        if _row_alignment(v) == align:
            return v


def _realign_large_problems(args: argparse.Namespace, rng: random.Random) -> Any:
    """--realign-large's random problems (M, N, K, a_col, b_col), or --shapes' row-major ones."""
    if args.shapes:
        for text in args.shapes.split(","):
            M, N, K = (int(x) for x in text.split("x"))
            yield M, N, K, False, False
        return
    while True:
        a_col, b_col = rng.random() < 0.25, rng.random() < 0.25
        ca, cb = rng.choice([16, 16, 32, 64, 128]), rng.choice([16, 16, 32, 64, 128])
        if ca == cb == 128:
            continue
        if not a_col and not b_col:  # A's rows are K apart, B's N
            K, N = _pitch(rng, ca), _pitch(rng, cb)
            M = _log_uniform(rng, 512, 16384)
        elif a_col and not b_col:  # A's M, B's N
            M, N = _pitch(rng, ca), _pitch(rng, cb)
            K = _log_uniform(rng, 512, 16384) // 8 * 8
        elif b_col and not a_col:  # both K
            if ca != cb:
                continue
            K = _pitch(rng, ca)
            M, N = _log_uniform(rng, 512, 16384), _log_uniform(rng, 512, 16384) // 8 * 8
        else:  # A's M, B's K
            M, K = _pitch(rng, ca), _pitch(rng, cb)
            N = _log_uniform(rng, 512, 16384) // 8 * 8
        if 1 << 31 <= M * N * K <= 1 << 36:
            yield M, N, K, a_col, b_col


def _realign_large_sweep(args: argparse.Namespace, rng: random.Random, gpu: str) -> None:
    """--realign-large / --shapes: each FASTGEMM_DEV_REALIGN mode in interleaved rounds."""
    dt = torch.float16
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def set_mode(mode: str) -> None:
        if mode == "auto":
            os.environ.pop("FASTGEMM_DEV_REALIGN", None)
        else:
            os.environ["FASTGEMM_DEV_REALIGN"] = mode
        fastgemm._C._clear_plan_cache()

    def rounds_us(fn: Callable[..., Any], sets: list[Any], r: int, reps: int) -> float:
        fn(*sets[0])
        start.record()
        for i in range(reps):
            fn(*sets[(r * reps + i) % len(sets)])
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3 / reps

    rows: list[dict[str, Any]] = []
    for M, N, K, a_col, b_col in _realign_large_problems(args, rng):
        if not args.shapes and len(rows) >= args.count:
            break
        order = ("F" if a_col else "C") + ("F" if b_col else "C")
        set_mode("0")
        kernel = fastgemm.select(M, N, K, "float16", order=order).kernel
        pa, pb = (M if a_col else K), (K if b_col else N)
        if kernel.family != "wgmma" or (pa % 64 == 0 and pb % 64 == 0):
            continue
        nsets = max(1, min(4, 3 * l2 // (2 * (M * K + K * N + M * N)) + 1))
        A, B, C, ref, top = _operands(M, N, K, a_col, b_col, dt)  # checked, and the first set
        sets = [(A, B, C)] + [_operands(M, N, K, a_col, b_col, dt, False) for _ in range(nsets - 1)]
        off_a, off_b = pa % 64 != 0, pb % 64 != 0
        modes = ["0"] + ["A"] * off_a + ["B"] * off_b + ["AB"] * (off_a and off_b) + ["auto"]
        row: dict[str, Any] = {"M": M, "N": N, "K": K, "a_col": a_col, "b_col": b_col}
        row.update(align_a=_row_alignment(pa), align_b=_row_alignment(pb), kernel_0=kernel.name)
        reps: dict[str, int] = {}
        for mode in modes:
            set_mode(mode)
            row[f"kernel_{mode}"] = fastgemm.select(M, N, K, "float16", order=order).kernel.name
            C.fill_(float("nan"))
            fastgemm.gemm(A, B, C)
            torch.cuda.synchronize()
            row[f"err_{mode}"] = float((C.double() - ref).abs().max() / top)
            once = rounds_us(fastgemm.gemm, sets, 0, 1)
            reps[mode] = int(max(3, min(50, 15000 / max(once, 1.0))))
        torch_mm = lambda a, b, c: torch.matmul(a, b, out=c)
        times: dict[str, list[float]] = {m: [] for m in [*modes, "torch"]}
        for r in range(5):
            for mode, samples in times.items():
                if mode != "torch":
                    set_mode(mode)
                fn = torch_mm if mode == "torch" else fastgemm.gemm
                samples.append(rounds_us(fn, sets, r, reps.get(mode, reps["0"])))
        row.update({m: statistics.median(t) for m, t in times.items()})
        rows.append(row)
        _print_modes(
            M,
            N,
            K,
            order,
            f"rows A {row['align_a']:3d} B {row['align_b']:3d}",
            row,
            modes,
            f"torch {row['torch']:.1f} [{row['kernel_0']} / auto {row['kernel_auto']}]",
        )
        del sets, A, B, C, ref
        torch.cuda.empty_cache()
    set_mode("auto")
    name = "realign-shapes" if args.shapes else "realign-large"
    path = os.path.join(args.out, f"{name}-float16-{gpu}.json")
    os.makedirs(args.out, exist_ok=True)
    command = (
        f"python benchmarks/deep_small.py 0 --realign-large --shapes {args.shapes}"
        if args.shapes
        else f"python benchmarks/deep_small.py {args.count} --seed {args.seed} --realign-large"
    )
    with open(path, "w") as f:
        json.dump({"meta": {"command": command, "gpu": gpu}, "results": rows}, f, indent=1)
    print("wrote", path)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("count", type=int)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--out", default="results/sweeps")
    p.add_argument("--unaligned", action="store_true", help="under-aligned problems: v37, v38")
    p.add_argument("--unaligned-large", action="store_true", help="under-aligned larger outputs: v39")
    p.add_argument("--unaligned-short", action="store_true", help="under-aligned, short K: v39")
    p.add_argument("--unaligned-narrow", action="store_true", help="under-aligned tall narrow: v37/v38^T")
    p.add_argument("--unaligned-padded", action="store_true", help="under-aligned, where auto pads")
    p.add_argument("--hopper", action="store_true", help="random aligned shapes on the wgmma rungs")
    p.add_argument("--only", default=None, help="with --hopper: where auto runs this rung")
    p.add_argument("--tall", action="store_true", help="tall outputs of 129-1024 columns, long K")
    p.add_argument("--realign", action="store_true", help="rows off 128 bytes: copies or not")
    p.add_argument("--realign-large", action="store_true", help="the same on 2^31-2^36 multiply-adds")
    p.add_argument("--shapes", default="", help="with --realign-large: these MxNxK instead")
    args = p.parse_args()
    rng = random.Random(args.seed)
    dt = torch.float16
    gpu = torch.cuda.get_device_name().lower().replace(" ", "-")
    flags = {
        "large": args.unaligned_large,
        "short": args.unaligned_short,
        "narrow": args.unaligned_narrow,
        "small": args.unaligned,
    }
    family = next((f for f, on in flags.items() if on), None)
    unaligned = family is not None
    kernels = {"small": UNALIGNED_KERNELS, "narrow": NARROW_KERNELS, None: KERNELS}.get(family, LARGE_KERNELS)
    if args.hopper or args.tall:
        kernels = HOPPER_KERNELS
    if args.unaligned_padded:
        kernels = PADDED_KERNELS
    if args.realign:
        _realign_sweep(args, rng, gpu)
        return
    if args.realign_large:
        _realign_large_sweep(args, rng, gpu)
        return
    rows: list[dict[str, Any]] = []
    while len(rows) < args.count:
        if args.hopper:
            M, N, K = _shape(rng, 1 << 36)
            a_col, b_col = rng.random() < 0.25, rng.random() < 0.25
            if _under_aligned(M, N, K, a_col, b_col):
                continue
            order = ("F" if a_col else "C") + ("F" if b_col else "C")
            picked = fastgemm.select(M, N, K, "float16", order=order).kernel.name
            if picked not in HOPPER_KERNELS or args.only not in (None, picked):
                continue
        elif args.tall:
            M = _log_uniform(rng, 1024, 16384)
            N = _log_uniform(rng, 129, 1024) // 8 * 8
            K = _log_uniform(rng, 2048, 32768) // 8 * 8
            a_col, b_col = rng.random() < 0.25, rng.random() < 0.25
            if a_col:
                M = M // 8 * 8
            if M * N * K > 1 << 36 or N <= 128:
                continue
            order = ("F" if a_col else "C") + ("F" if b_col else "C")
            if fastgemm.select(M, N, K, "float16", order=order).kernel.name not in HOPPER_KERNELS:
                continue
        elif args.unaligned_padded:
            M, N, K = _shape(rng, 1 << 36)
            a_col, b_col = rng.random() < 0.25, rng.random() < 0.25
            if not _under_aligned(M, N, K, a_col, b_col):
                continue
            order = ("F" if a_col else "C") + ("F" if b_col else "C")
            if not fastgemm.select(M, N, K, "float16", order=order).pad:
                continue
        elif family is not None:
            (m_lo, m_hi), (n_lo, n_hi), (k_lo, k_hi), fits = UNALIGNED_FAMILIES[family]
            M, N = _log_uniform(rng, m_lo, m_hi), _log_uniform(rng, n_lo, n_hi)
            K = _log_uniform(rng, k_lo, k_hi)
            if not fits(M, N, K):
                continue
            a_col, b_col = rng.random() < 0.25, rng.random() < 0.25
            if not _under_aligned(M, N, K, a_col, b_col):
                continue
        else:
            M = int(math.exp(rng.uniform(0, math.log(256))))
            N = int(math.exp(rng.uniform(math.log(8), math.log(2048)))) // 8 * 8 or 8
            K = int(math.exp(rng.uniform(math.log(1024), math.log(40000)))) // 8 * 8
            if _tiles(M, N) > 32:
                continue
            a_col, b_col = rng.random() < 0.25, rng.random() < 0.25
            if a_col:
                M = max(8, M // 8 * 8)
        A, B, C, ref, top = _operands(M, N, K, a_col, b_col, dt)
        order = ("F" if a_col else "C") + ("F" if b_col else "C")
        row: dict[str, Any] = {"M": M, "N": N, "K": K, "a_col": a_col, "b_col": b_col}
        sel = fastgemm.select(
            M,
            N,
            K,
            "float16",
            order=order,
            alignment=None if args.unaligned_padded else 2 if unaligned else 16,
        )
        row["auto_kernel"], row["auto_pad"] = sel.kernel.name, sel.pad
        for name in ["auto", *kernels]:
            # "name^T": the kernel on the transposed problem C^T = B^T A^T, into a row-major C^T
            # (as a flipped plan runs it, but with C^T's rows stored contiguously).
            kernel, flipped = name.removesuffix("^T"), name.endswith("^T")
            out = torch.empty(N, M, device="cuda", dtype=dt) if flipped else C
            ops = (B.T, A.T, out) if flipped else (A, B, C)
            fn = lambda kernel=kernel, ops=ops: fastgemm.gemm(*ops, kernel=kernel)
            out.fill_(float("nan"))
            try:
                fn()
            except (RuntimeError, ValueError):
                continue  # a rung that refuses this problem
            torch.cuda.synchronize()
            timed_later = args.unaligned_padded and name != "auto" and "auto" in row
            if timed_later and _device_us(fn, 1) > 6 * row["auto"] + 50:
                continue  # far slower than auto: not timed
            first = out.clone()
            fn()
            torch.cuda.synchronize()
            got = first.T if flipped else first
            row[name + "_err"] = float((got.double() - ref).abs().max() / top)
            row[name + "_same_bits"] = bool(torch.equal(first, out))
            row[name] = _time(fn)
        C2 = torch.empty_like(C)
        row["torch"] = _time(lambda A=A, B=B, C2=C2: torch.matmul(A, B, out=C2))
        rows.append(row)
        best = min((n for n in kernels if n in row), key=lambda n: row[n], default="auto")
        print(
            f"{M:4d}x{N:5d}x{K:5d} {order} auto {row['auto']:6.1f} ({row['auto_kernel']}) "
            f"best {best} {row[best]:6.1f} torch {row['torch']:6.1f}",
            flush=True,
        )
    os.makedirs(args.out, exist_ok=True)
    family = "hopper" if args.hopper else "padded" if args.unaligned_padded else family
    family = "tall" if args.tall else family
    kind, flag = {
        "hopper": (
            "hopper-random" + (f"-{args.only.split('_')[1]}" if args.only else ""),
            " --hopper" + (f" --only {args.only}" if args.only else ""),
        ),
        "tall": ("hopper-tall", " --tall"),
        "large": ("unaligned-large-v39", " --unaligned-large"),
        "short": ("unaligned-short-v39", " --unaligned-short"),
        "narrow": ("unaligned-narrow-v37-v38", " --unaligned-narrow"),
        "small": ("unaligned-small-v37-v38", " --unaligned"),
        "padded": ("unaligned-padded", " --unaligned-padded"),
        None: ("deep-small-v35-v36", ""),
    }[family]
    path = os.path.join(args.out, f"{kind}-float16-{gpu}.json")
    command = f"python benchmarks/deep_small.py {args.count} --seed {args.seed}"
    meta = {"command": command + flag, "gpu": gpu}
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": rows}, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
