"""The kernel table as Python objects (read from the one table in ``csrc/registry.cpp``, to which
each rung's ``.cu`` file adds its rows)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

__all__ = ["KernelInfo", "kernel_table"]


@dataclass(frozen=True)
class KernelInfo:
    """One kernel of the ladder.

    Attributes
    ----------
    name : str
        What ``kernel=`` takes, e.g. ``"sgemm_v05_blocktile_2d"``.
    dtype : str
        ``"float32"``, ``"float16"`` or ``"bfloat16"``.
    version : int
        Its rung in the ladder (1 = naive).
    min_cc, max_cc : int, int or None
        Compute capabilities it runs on (``10*major + minor``); ``max_cc`` None = no upper bound.
    alignment : int
        Bytes to which operand addresses and leading dimensions must be aligned.
    techniques : str
        What the rung does, in one line.
    smem_bytes : int
        Dynamic shared memory per block (0 for kernels with only static shared memory, which
        fits every supported GPU).
    family : str
        The math: ``"simt"`` (CUDA cores), ``"mma_sync"`` or ``"wgmma"`` (tensor cores).
    copy : str
        How tiles reach shared memory: ``"ldg"`` (through registers), ``"cp_async"`` or ``"tma"``.
    epilogue : str
        How C is written: ``"registers"`` (straight from registers), ``"row_stores"`` (staged
        in shared memory a warp at a time, stored row by row by element stores), ``"tma_store"``
        (staged in shared memory, stored by TMA), ``"split_k"`` (the fp32 partial tiles of blocks that split
        K, summed in a fixed order across a thread-block cluster, then stored) or
        ``"split_k_global"`` (the same partial tiles handed to the tile's last blocks through a
        scratch buffer in global memory, summed there in a fixed order, a band of the tile each).
    parent : str
        The rung this one changes (``""`` for the first of a ladder).
    branch : bool
        An experiment off the main line: selectable and measured, but not an improvement on
        its parent.
    precision : str
        float32 kernels: the arithmetic, ``"ieee"`` (fp32 on the CUDA cores), ``"tf32x3"`` or
        ``"tf32"`` (tensor cores); ``""`` for float16/bfloat16 kernels.
    """

    name: str
    dtype: str
    version: int
    min_cc: int
    max_cc: int | None
    alignment: int
    techniques: str
    smem_bytes: int = 0
    family: str = ""
    copy: str = ""
    epilogue: str = ""
    parent: str = ""
    branch: bool = False
    precision: str = ""


@lru_cache(maxsize=1)
def kernel_table() -> tuple[KernelInfo, ...]:
    from . import _C

    rows = [KernelInfo(**row) for row in _C.kernels()]
    return tuple(sorted(rows, key=lambda k: (k.dtype, k.version, k.name)))
