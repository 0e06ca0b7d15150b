"""Kernel selection for ``kernel="auto"``: the rules are data, ``select()`` explains each choice.

Each dtype has an ordered list of candidate kernels, fastest first. ``auto`` takes the first
candidate that the GPU and the operands can run: its compute-capability range includes the device
and the operands meet its alignment (base addresses and leading dimensions, in bytes). The last
candidate of every list runs on every supported GPU with any alignment, so ``auto`` always has an
answer; a kernel missing from a build is skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .registry import KernelInfo, kernel_table

__all__ = ["AUTO_RULES", "Selection", "alignment_of", "check_runnable", "select"]

_HGEMM_RULES = [
    ("hgemm_v20_hoisted_beta",
     ("fastest Hopper rung: persistent, warp-specialised wgmma + TMA, 4-stage ring, TMA-store "
      "epilogue through a borrowed stage (beta tested once), programmatic dependent launch "
      "(sm_90a only)"), 0),
    ("hgemm_v09_raster", "fastest mma.sync rung: 128x256x64 tiles, 3-stage cp.async, L2-friendly order",
     1 << 21),
    ("hgemm_v07_multistage",
     "fastest mma.sync rung for small outputs, and within 99 KiB of shared memory (sm_86/89)", 0),
    ("hgemm_v05_reg_prefetch", "fastest tensor-core rung without cp.async (sm_75)", 0),
    ("hgemm_v01_mma", "tensor-core rung without 16-byte vector access", 0),
]
# dtype -> [(kernel name, why it is preferred when it applies, smallest M*N it is preferred for)],
# fastest first. The M*N floor keeps large tiles off outputs too small to fill the GPU with them
# (hgemm_v09's 128x256 tiles: below ~2M outputs, fewer blocks than SMs; measured on an H200 at
# 1024^3, v07 beats v09 by 25%).
AUTO_RULES: dict[str, list[tuple[str, str, int]]] = {
    "float32": [
        ("sgemm_v09_cp_async", "fastest SGEMM rung: warp tiles, double-buffered cp.async copies", 0),
        ("sgemm_v08_warptile", "fastest SGEMM rung without cp.async (pre-sm_80 GPUs)", 0),
        ("sgemm_v05_blocktile_2d", "fastest SGEMM rung without 16-byte vector access", 0),
    ],
    "float16": _HGEMM_RULES,
    "bfloat16": _HGEMM_RULES,
}

# Operands whose rows are not aligned enough for the fastest kernel are copied into padded,
# aligned temporaries when the problem is at least this many multiply-adds: the copy costs
# O(MK + KN + MN) bytes against O(MNK) math, and the fast kernels are 2x (fp32) to 10x (tensor
# cores) faster than the rungs that take any alignment. Below it the extra launches dominate.
PAD_MIN_MACS = 1 << 27


@dataclass(frozen=True)
class Selection:
    """What ``kernel="auto"`` runs for a problem, and why.

    ``pad`` is True when the operands are first copied into 16-byte aligned temporaries (rows
    padded), because the fastest kernel needs more alignment than they have.
    """

    kernel: KernelInfo
    reason: str
    pad: bool = False

    def __str__(self) -> str:
        return f"{self.kernel.name}: {self.reason}"


def alignment_of(*values: int, cap: int = 16) -> int:
    """Largest power of two (at most ``cap``) dividing every value (addresses or byte strides)."""
    g = 0
    for v in values:
        g = math.gcd(g, int(v))
    if g == 0:
        return cap
    return min(cap, g & -g)


# Shared memory a block may opt into, by compute capability (CUDA programming guide, "technical
# specifications"); unknown architectures get the smallest modern figure.
SMEM_PER_BLOCK = {75: 65536, 80: 166912, 86: 101376, 87: 166912, 89: 101376, 90: 232448,
                  100: 232448, 103: 232448, 120: 101376, 121: 101376}
SMEM_PER_BLOCK_DEFAULT = 101376


def _fmt_cc(cc: int) -> str:
    return f"{cc // 10}.{cc % 10}"


def check_runnable(k: KernelInfo, cc: int, alignment: int) -> str | None:
    """Why ``k`` cannot run on compute capability ``cc`` with operands of ``alignment`` bytes."""
    if cc < k.min_cc:
        return f"{k.name} needs compute capability {_fmt_cc(k.min_cc)}; this GPU is {_fmt_cc(cc)}"
    if k.max_cc is not None and cc > k.max_cc:
        return (
            f"{k.name} runs only on compute capability {_fmt_cc(k.min_cc)}"
            f"{'' if k.max_cc == k.min_cc else '-' + _fmt_cc(k.max_cc)}; this GPU is {_fmt_cc(cc)}"
        )
    smem_limit = SMEM_PER_BLOCK.get(cc, SMEM_PER_BLOCK_DEFAULT)
    if k.smem_bytes > smem_limit:
        return (
            f"{k.name} needs {k.smem_bytes} bytes of shared memory per block; compute capability "
            f"{_fmt_cc(cc)} allows {smem_limit}"
        )
    if alignment % k.alignment != 0:
        return (
            f"{k.name} needs {k.alignment}-byte aligned operands (base addresses and leading "
            f"dimensions); these are only {alignment}-byte aligned"
        )
    return None


def select(
    M: int,
    N: int,
    K: int,
    dtype: str,
    *,
    cc: int | None = None,
    alignment: int | None = None,
) -> Selection:
    """The kernel ``kernel="auto"`` would run for ``C[M,N] = A[M,K] @ B[K,N]``, and why.

    Parameters
    ----------
    M, N, K
        Problem shape.
    dtype
        ``"float32"``, ``"float16"`` or ``"bfloat16"``.
    cc
        Compute capability as ``10*major + minor`` (e.g. 90); default: the current GPU's.
    alignment
        Bytes to which all operand addresses and leading dimensions are aligned. Default: that of
        freshly allocated, contiguous row-major operands of this shape.
    """
    from . import _device_cc  # late import: avoids a cycle and needs a GPU only when cc is None

    dtype = str(dtype)
    if dtype not in AUTO_RULES:
        raise TypeError(f"no kernels for dtype {dtype!r}; expected float32, float16 or bfloat16")
    if min(M, N, K) < 0:
        raise ValueError(f"negative problem size M={M}, N={N}, K={K}")
    if cc is None:
        cc = _device_cc(None)
    itemsize = 4 if dtype == "float32" else 2
    if alignment is None:
        alignment = alignment_of(256, K * itemsize, N * itemsize)
    table = {k.name: k for k in kernel_table() if k.dtype == dtype}
    skipped = []
    fastest_for_cc = True  # the first rule this GPU can run at all
    for name, why, min_mn in AUTO_RULES.get(dtype, []):
        k = table.get(name)
        if k is None:
            skipped.append(f"{name} is not in this build")
            continue
        if M * N < min_mn:
            skipped.append(f"{name} is for outputs of at least {min_mn} elements")
            continue
        problem = check_runnable(k, cc, alignment)
        if problem is None:
            note = f" ({'; '.join(skipped)})" if skipped else ""
            return Selection(k, f"{why}; runs on cc {_fmt_cc(cc)} with {alignment}-byte alignment{note}")
        if fastest_for_cc and check_runnable(k, cc, k.alignment) is None:
            fastest_for_cc = False
            if M * N * K >= PAD_MIN_MACS:
                return Selection(
                    k,
                    f"{why}; operands are only {alignment}-byte aligned, so they are copied into "
                    f"{k.alignment}-byte aligned temporaries first (M*N*K >= {PAD_MIN_MACS}: the "
                    f"O(n^2) copy costs less than a slower kernel)",
                    pad=True,
                )
        skipped.append(problem)
    raise RuntimeError(
        f"no {dtype} kernel runs on compute capability {_fmt_cc(cc)}"
        + (f": {'; '.join(skipped)}" if skipped else " in this build")
    )
