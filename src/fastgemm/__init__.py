"""fastgemm: hand-written CUDA GEMM kernels, from the naive loop to tensor cores.

``C = alpha * A @ B + beta * C`` on CUDA arrays (CuPy, PyTorch, anything with
``__cuda_array_interface__`` or DLPack), computed in place by one rung of a kernel ladder that you
pick (``kernel="sgemm_v05_blocktile_2d"``) or that the dispatcher picks for your GPU
(``kernel="auto"``). BLAS semantics: ``beta == 0`` never reads C (NaN/Inf in C do not propagate);
``alpha == 0`` or ``K == 0`` gives ``beta * C`` without reading A or B; ``M == 0`` or ``N == 0`` is a
no-op.

``import fastgemm`` works without a GPU or a driver; only calls that need the GPU fail, with a
clear message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from . import _C as _C
from ._arrays import Matrix, as_matrix
from .dispatch import Selection
from .dispatch import select as _select
from .registry import KernelInfo, kernel_table

__version__: str = _C.__version__
__all__ = [
    "KernelInfo",
    "Selection",
    "__version__",
    "device_count",
    "gemm",
    "hgemm",
    "kernels",
    "reserve_sms",
    "runtime_status",
    "select",
    "sgemm",
]

_DTYPES = ("float32", "float16", "bfloat16")


def device_count() -> int:
    """Number of CUDA devices; 0 without a GPU or driver (see :func:`runtime_status`)."""
    return _C.device_count()


def runtime_status() -> str:
    """``"ok"``, or why the CUDA runtime sees no device."""
    return _C.runtime_status()


def _require_gpu() -> None:
    if _C.device_count() == 0:
        raise RuntimeError(
            f"fastgemm needs a CUDA GPU, and the CUDA runtime found none ({_C.runtime_status()})"
        )


def _device_cc(device: int | None) -> int:
    _require_gpu()
    return _C.device_cc(_C.current_device() if device is None else device)


@contextlib.contextmanager
def reserve_sms(sms: int) -> Iterator[None]:
    """Within the block, GEMMs that this thread launches leave ``sms`` SMs of their GPU to other
    work (communication kernels running beside them, say): persistent grids, split-K shares and
    stream-K groups are sized for the SMs left. ``auto``'s choice of kernel does not change.
    Blocks nest; on leaving, the previous reservation returns."""
    previous = _C.set_reserved_sms(int(sms))
    try:
        yield
    finally:
        _C.set_reserved_sms(previous)


def kernels(dtype: str | None = None) -> list[KernelInfo]:
    """The kernel ladder, ordered by dtype and rung; ``dtype`` filters it.

    Each :class:`KernelInfo` has ``name``, ``dtype``, ``version``, ``min_cc``, ``max_cc``,
    ``alignment``, ``techniques`` and (float32) ``precision``, among others. Any ``name`` can be
    passed as ``kernel=``.
    """
    if dtype is not None and str(dtype) not in _DTYPES:
        raise TypeError(f"unknown dtype {dtype!r}; expected one of {', '.join(_DTYPES)}")
    return [k for k in kernel_table() if dtype is None or k.dtype == str(dtype)]


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
    """Which kernel ``kernel="auto"`` runs for an M x N x K problem, and why.

    ``cc`` (e.g. 80 or 90) answers for another GPU architecture, so no GPU is needed;
    ``alignment`` (bytes) describes the operands (default: fresh contiguous arrays);
    ``precision`` is :func:`sgemm`'s (float32 only); ``order`` the memory orders of A and B
    (``"C"`` row-major, ``"F"`` column-major; default ``"CC"``).
    """
    return _select(M, N, K, dtype, cc=cc, alignment=alignment, precision=precision, order=order)


# --- the GEMM entry points ---------------------------------------------------------------------
# Each is its signature and docstring around one C++ call (csrc/entry.cpp): reading the operands,
# every check, the plan (cached) and the launch happen there, once.

_entry = _C.gemm
_GEMM, _SGEMM, _HGEMM = 0, 1, 2


def sgemm(
    A: Any,
    B: Any,
    C: Any,
    alpha: float = 1.0,
    beta: float = 0.0,
    *,
    kernel: str = "auto",
    stream: Any = None,
    precision: str = "ieee",
) -> Any:
    """Single-precision GEMM: ``C = alpha * A @ B + beta * C``, in place.

    Parameters
    ----------
    A, B, C
        float32 CUDA matrices, M x K, K x N and M x N, on one device. A and B may be C- or
        F-contiguous, or padded views of either (read in place); other strided views are copied
        first. C must be C- or F-ordered with unit stride, writable, and must not overlap A or B.
    alpha, beta
        Scalars. ``beta == 0`` never reads C; ``alpha == 0`` or ``K == 0`` gives ``beta * C``
        without reading A or B.
    kernel
        ``"auto"`` or a name from :func:`kernels` ``("float32")``.
    stream
        An int (``cudaStream_t``), ``cupy.cuda.Stream`` or ``torch.cuda.Stream``; default: torch's
        current stream for torch tensors, else CuPy's current stream.
    precision
        The arithmetic asked for, a floor that ``"auto"`` may exceed but never undercut:
        ``"ieee"`` (default): fp32 products and sums on the CUDA cores; ``"tf32x3"``: three TF32
        tensor-core products per product (each operand split into a tf32 part and a tf32
        residual), fp32-level accuracy at tensor-core speed; ``"tf32"``: one TF32 product
        (operands truncated to 10-bit mantissas). Where no kernel of that precision is preferred
        (small shapes, GPUs before sm_90) ``"auto"`` runs fp32 arithmetic; :func:`select` says
        which. A named ``kernel`` must be at least as accurate as ``precision``.

    Returns
    -------
    C, updated in place.
    """
    return _entry(_SGEMM, A, B, C, alpha, beta, kernel, stream, precision)


def hgemm(
    A: Any,
    B: Any,
    C: Any,
    alpha: float = 1.0,
    beta: float = 0.0,
    *,
    kernel: str = "auto",
    stream: Any = None,
) -> Any:
    """Half-precision GEMM on tensor cores: ``C = alpha * A @ B + beta * C``, in place.

    float16 (or bfloat16) A, B and C; products accumulate in fp32, alpha and beta are applied in
    fp32 and the result is rounded once. Same layouts, semantics, streams and errors as
    :func:`sgemm`.
    """
    return _entry(_HGEMM, A, B, C, alpha, beta, kernel, stream)


def gemm(
    A: Any,
    B: Any,
    C: Any = None,
    alpha: float = 1.0,
    beta: float = 0.0,
    *,
    kernel: str = "auto",
    stream: Any = None,
    precision: str = "ieee",
) -> Any:
    """``C = alpha * A @ B + beta * C`` dispatched on dtype (float32 -> :func:`sgemm`, float16 or
    bfloat16 -> :func:`hgemm`). With ``C=None`` the result is allocated in A's array type (CuPy or
    PyTorch) and ``beta`` must be 0. ``precision`` as for :func:`sgemm` (float32 only)."""
    if C is None:
        a = as_matrix(A, "A")
        if a.dtype not in _DTYPES:
            raise TypeError(f"gemm supports float32, float16 and bfloat16; A is {a.dtype}")
        if beta != 0:
            raise ValueError("gemm: beta must be 0 when C is None (there is no C to scale)")
        C = _allocate_like(A, a, as_matrix(B, "B").shape[1])
    return _entry(_GEMM, A, B, C, alpha, beta, kernel, stream, precision)


def _allocate_like(obj: Any, m: Matrix, n: int) -> Any:
    shape = (m.shape[0], n)
    if m.library == "torch":
        import torch

        return torch.empty(shape, dtype=obj.dtype, device=obj.device)
    try:
        import cupy
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise TypeError(
            "gemm(C=None) allocates the result with CuPy or PyTorch; pass C for other array types"
        ) from exc
    if m.dtype == "bfloat16":
        raise TypeError("gemm(C=None) cannot allocate bfloat16 with CuPy; pass C")
    device = m.device if m.device is not None else _C.pointer_device(m.ptr)
    with cupy.cuda.Device(device):
        return cupy.empty(shape, dtype=m.dtype)
