"""Kernel selection for ``kernel="auto"``, as Python sees it: ``select()`` explains each choice.

The rules and the decision are C++ (``csrc/plan.cpp``): each dtype has an ordered list of candidate
kernels, fastest first, and ``auto`` takes the first candidate that the GPU and the operands can
run -- its compute-capability range includes the device, its shared memory fits, and the operands
meet its alignment (base addresses and leading dimensions, in bytes). The last candidate of every
list runs on every supported GPU with any alignment, so ``auto`` always has an answer; a kernel
missing from a build is skipped. A call decides once per problem class (device, dtype, shape,
layouts, alignment, beta != 0) and caches the plan; ``select()`` without ``cc`` reads that same
cached plan, so the explanation is the decision that runs.

``AUTO_RULES``, ``PAD_MIN_MACS``, ``PLAN_ALIGN_CAP`` and ``SMEM_PER_BLOCK`` are read-only views of the
C++ tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import _C

if TYPE_CHECKING:
    from ._C import Rule
from .registry import KernelInfo, kernel_table

__all__ = [
    "AUTO_RULES",
    "PAD_MIN_MACS",
    "PLAN_ALIGN_CAP",
    "PRECISION_RULES",
    "Selection",
    "alignment_of",
    "check_runnable",
    "select",
]

# dtype -> [(kernel name, why it is preferred when it applies, smallest M*N it is preferred for,
# (tile_m, tile_n, parts) or None: preferred only for outputs of at most SMs / parts such tiles,
# largest M or None: preferred only for outputs of at most that many rows, smallest compute
# capability (10 * major + minor) or None: preferred only on GPUs from there on, smallest K or
# None: preferred only for K of at least that, largest min(M, N) or None: preferred only for
# outputs with at most that many rows or columns, flip: the kernel runs the transposed problem
# C^T = B^T A^T (C written column-major) and the limits before it are read on that N x M
# problem, split cost or None: preferred only where K split over the SMs in
# S = min(16, K // 256, SMs // tiles) >= 2 shares leaves each share at least
# split cost * (S - 1) k-tiles of 64, round split or None: preferred only where the round model
# of csrc/common/split_model.h with these fields (tile_m, tile_n, k_unit, min_units, most,
# max_partials, blocks_per_sm, publish, add, solo) splits K in S >= 2 shares, largest K or None:
# preferred only for K of at most that, last round: preferred only where (tile_m, tile_n) tiles
# fill more than one round of SMs and leave a last round of at most SMs / 2 (parts unused),
# wider tile width or None: preferred only where (tile_m, tile_n) tiles cost less than
# (tile_m, that width) ones by the last-round model (_C.last_round_cost), smallest M or None:
# preferred only for outputs of at least that many rows, smallest N or None: the same for
# columns, B's layout or None: preferred only where the kernel's B is row-major ("C") or
# column-major ("F"; for a flip rule the transposed problem's B, A^T, which is column-major where
# A is row-major), row alignment or None: preferred only where every operand's rows (base address
# and pitch) are aligned to that many bytes (128: a TMA box row), under-aligned operands or None:
# preferred only where the rows of B ("B"), of A or B ("AB"), or of A, B or C ("ABC") are aligned
# to fewer than 16 bytes (a kernel that reads them in place, or stores them), half edge: preferred
# only where min(M, N) ends 1-64 past a multiple of 128, so that 64-wide tiles along it leave 64
# fewer rows or columns as padding than 128-wide ones, unsplit last round: preferred only where
# (tile_m, tile_n) tiles leave no last round of at most SMs / 2 to split, wave rounds: preferred
# only where (tile_m, tile_n) tiles take at most two rounds of SMs and less time than the others
# of 128x128, 192x128 and 128x256 by the wave model (_C.wave_cost; a tie goes to the larger
# tile), B off line or None: preferred only where the kernel's B has rows aligned to at least 16
# and fewer than that many bytes, over parts or None: preferred only for more than
# SMs / over parts tiles of (tile_m, tile_n), largest padding or None: preferred only where
# tile_m-row tiles cover at most that factor more rows than 128-row tiles, in place: where the
# rule runs, no operand is copied to 128-byte rows first, A off line or None: preferred only
# where the kernel's A is MN-major with rows aligned to at least 16 and fewer than that many
# bytes (for a flip rule B^T, from a row-major B; 32: rows that split sectors, where the split
# rungs of at most 32 rows start each block at its own k-tile; 128: rows off whole lines))],
# fastest first.
AUTO_RULES: dict[str, list[Rule]] = {dtype: list(rules) for dtype, rules in _C.auto_rules().items()}

# precision ("tf32x3", "tf32") -> the float32 rules (same tuples) that auto tries for it before
# the ieee rules of AUTO_RULES["float32"], which follow them (at least as accurate).
PRECISION_RULES: dict[str, list[Rule]] = {p: list(_C.auto_rules(p)["float32"]) for p in ("tf32x3", "tf32")}

# Operands whose rows are not aligned enough for the fastest kernel are copied into padded,
# aligned temporaries when the problem is at least this many multiply-adds: the copy costs
# O(MK + KN + MN) bytes against O(MNK) math, and the fast kernels are 2x (fp32) to 10x (tensor
# cores) faster than the rungs that take any alignment. Below it the extra launches dominate.
PAD_MIN_MACS: int = _C.PAD_MIN_MACS
# The widest alignment class (bytes) plans are keyed and rules decided on (a rule may ask for rows
# on 128 bytes, a TMA box row).
PLAN_ALIGN_CAP: int = _C.PLAN_ALIGN_CAP


class _SmemTable(dict[int, int]):
    """Shared memory per block (bytes) that select(cc=...) assumes, by compute capability; a real
    GPU's figure is queried from its driver instead."""

    def __missing__(self, cc: int) -> int:
        return int(_C.documented_smem_per_block(cc))


SMEM_PER_BLOCK = _SmemTable()


@dataclass(frozen=True)
class Selection:
    """What ``kernel="auto"`` runs for a problem, and why.

    ``pad`` is True when the operands are first copied into 16-byte aligned temporaries (rows
    padded), because the fastest kernel needs more alignment than they have, or (fp32 on the CUDA
    cores, large problems) runs slower on them than the copies cost; fp32 then also zero-fills K
    up to a multiple of 16 (the reason says so). ``flip`` is True
    when the kernel runs the transposed problem ``C^T = B^T A^T`` (an output with few columns run
    as one with few rows; C is written column-major); with ``pad`` too, it runs on the aligned
    copies (C through an aligned work buffer).
    """

    kernel: KernelInfo
    reason: str
    pad: bool = False
    flip: bool = False

    def __str__(self) -> str:
        return f"{self.kernel.name}: {self.reason}"


def alignment_of(*values: int, cap: int = 16) -> int:
    """Largest power of two (at most ``cap``) dividing every value (addresses or byte strides)."""
    return int(_C.alignment_of([int(v) for v in values], cap))


def check_runnable(k: KernelInfo, cc: int, alignment: int) -> str | None:
    """Why ``k`` cannot run on compute capability ``cc`` with operands of ``alignment`` bytes
    (shared memory: the documented per-architecture limit), or None if it can."""
    return _C.check_runnable(k.name, k.min_cc, k.max_cc or 0, k.smem_bytes, k.alignment, cc, alignment)


def select(
    M: int,
    N: int,
    K: int,
    dtype: str,
    *,
    cc: int | None = None,
    alignment: int | None = None,
    precision: str = "ieee",
    order: str = "CC",
) -> Selection:
    """The kernel ``kernel="auto"`` would run for ``C[M,N] = A[M,K] @ B[K,N]``, and why.

    Parameters
    ----------
    M, N, K
        Problem shape.
    dtype
        ``"float32"``, ``"float16"`` or ``"bfloat16"``.
    cc
        Compute capability as ``10*major + minor`` (e.g. 90); default: the current GPU, whose
        cached plan for this shape is what a call runs.
    alignment
        Bytes to which all operand addresses and leading dimensions are aligned (16 is all any
        kernel needs; a few rules ask for rows aligned to a 128-byte TMA box row, so classes go up
        to 128). Default: that of freshly allocated, contiguous row-major operands of this shape
        (with N == 1, B and C are columns, which a call runs as the transposed problem of one row:
        so does the answer).
    precision
        float32: ``"ieee"`` (default), ``"tf32x3"`` or ``"tf32"``, as for ``sgemm``.
    order
        The memory orders of A and B, ``"C"`` (row-major) or ``"F"`` (column-major) each, for a
        row-major C (default ``"CC"``). A few rules prefer a kernel for one layout of B: a
        column-major B is ``W.T`` of a row-major weight ``W`` (``x @ W.T``).
    """
    d = _C.select(int(M), int(N), int(K), str(dtype), cc, alignment, str(precision), str(order))
    kernel = next(k for k in kernel_table() if k.name == d["name"] and k.dtype == d["dtype"])
    return Selection(kernel, d["reason"], d["pad"], d["flip"])
