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

import numbers
from typing import Any

from . import _C
from ._arrays import Matrix, as_matrix, overlaps
from .dispatch import Selection, alignment_of, check_runnable
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


def kernels(dtype: str | None = None) -> list[KernelInfo]:
    """The kernel ladder, ordered by dtype and rung; ``dtype`` filters it.

    Each :class:`KernelInfo` has ``name``, ``dtype``, ``version``, ``min_cc``, ``max_cc``,
    ``alignment`` and ``techniques``. Any ``name`` can be passed as ``kernel=``.
    """
    if dtype is not None and str(dtype) not in _DTYPES:
        raise TypeError(f"unknown dtype {dtype!r}; expected one of {', '.join(_DTYPES)}")
    return [k for k in kernel_table() if dtype is None or k.dtype == str(dtype)]


def select(
    M: int, N: int, K: int, dtype: str, *, cc: int | None = None, alignment: int | None = None
) -> Selection:
    """Which kernel ``kernel="auto"`` runs for an M x N x K problem, and why.

    ``cc`` (e.g. 80 or 90) answers for another GPU architecture, so no GPU is needed;
    ``alignment`` (bytes) describes the operands (default: fresh contiguous arrays).
    """
    return _select(M, N, K, dtype, cc=cc, alignment=alignment)


# --- the GEMM entry points ---------------------------------------------------------------------


def sgemm(
    A: Any, B: Any, C: Any, alpha: float = 1.0, beta: float = 0.0, *, kernel: str = "auto",
    stream: Any = None,
) -> Any:
    """Single-precision GEMM on CUDA cores: ``C = alpha * A @ B + beta * C``, in place.

    Parameters
    ----------
    A, B, C
        float32 CUDA matrices, M x K, K x N and M x N, on one device. A and B may be C- or
        F-contiguous (or padded/strided views, which are copied); C must be C- or F-ordered with
        unit stride, writable, and must not overlap A or B.
    alpha, beta
        Scalars. ``beta == 0`` never reads C; ``alpha == 0`` or ``K == 0`` gives ``beta * C``
        without reading A or B.
    kernel
        ``"auto"`` or a name from :func:`kernels` ``("float32")``.
    stream
        An int (``cudaStream_t``), ``cupy.cuda.Stream`` or ``torch.cuda.Stream``; default: torch's
        current stream for torch tensors, else CuPy's current stream.

    Returns
    -------
    C, updated in place.
    """
    return _gemm("sgemm", ("float32",), A, B, C, alpha, beta, kernel, stream)


def hgemm(
    A: Any, B: Any, C: Any, alpha: float = 1.0, beta: float = 0.0, *, kernel: str = "auto",
    stream: Any = None,
) -> Any:
    """Half-precision GEMM on tensor cores: ``C = alpha * A @ B + beta * C``, in place.

    float16 (or bfloat16) A, B and C; products accumulate in fp32, alpha and beta are applied in
    fp32 and the result is rounded once. Same layouts, semantics, streams and errors as
    :func:`sgemm`.
    """
    return _gemm("hgemm", ("float16", "bfloat16"), A, B, C, alpha, beta, kernel, stream)


def gemm(
    A: Any, B: Any, C: Any = None, alpha: float = 1.0, beta: float = 0.0, *, kernel: str = "auto",
    stream: Any = None,
) -> Any:
    """``C = alpha * A @ B + beta * C`` dispatched on dtype (float32 -> :func:`sgemm`, float16 or
    bfloat16 -> :func:`hgemm`). With ``C=None`` the result is allocated in A's array type (CuPy or
    PyTorch) and ``beta`` must be 0."""
    a = as_matrix(A, "A")
    if a.dtype not in _DTYPES:
        raise TypeError(f"gemm supports float32, float16 and bfloat16; A is {a.dtype}")
    if C is None:
        if beta != 0:
            raise ValueError("gemm: beta must be 0 when C is None (there is no C to scale)")
        C = _allocate_like(A, a, _shape_of(B, "B")[1])
    fn = sgemm if a.dtype == "float32" else hgemm
    return fn(A, B, C, alpha, beta, kernel=kernel, stream=stream)


def _shape_of(obj: Any, name: str) -> tuple[int, int]:
    return as_matrix(obj, name).shape


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
    device = m.device if m.device is not None else _C.pointer_device(m.ptr)
    with cupy.cuda.Device(device):
        dtype = m.dtype if m.dtype != "bfloat16" else None
        if dtype is None:
            raise TypeError("gemm(C=None) cannot allocate bfloat16 with CuPy; pass C")
        return cupy.empty(shape, dtype=dtype)


# --- implementation ------------------------------------------------------------------------------


def _scalar(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def _stream_handle(stream: Any) -> int:
    """An int cudaStream_t from an int, a cupy.cuda.Stream or a torch.cuda.Stream."""
    if isinstance(stream, bool):
        raise TypeError("stream must be an int, a cupy.cuda.Stream or a torch.cuda.Stream")
    if isinstance(stream, numbers.Integral):
        return int(stream)
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        handle = getattr(stream, attr, None)
        if isinstance(handle, numbers.Integral):
            return int(handle)
    raise TypeError(
        f"stream must be an int, a cupy.cuda.Stream or a torch.cuda.Stream, got {type(stream).__name__}"
    )


def _default_stream(objs: tuple[Any, ...]) -> int:
    """torch's current stream for torch inputs, else CuPy's current stream, else the default."""
    for obj in objs:
        if type(obj).__module__.startswith("torch") and hasattr(obj, "device"):
            import torch

            return int(torch.cuda.current_stream(obj.device).cuda_stream)
    for obj in objs:
        if type(obj).__module__.startswith("cupy"):
            import cupy

            return int(cupy.cuda.get_current_stream(obj.device.id).ptr)
    return 0


def _layout(m: Matrix) -> tuple[bool, int] | None:
    """(col_major, leading dimension) when ``m`` has unit stride along one dimension, else None.

    Padded views (leading dimension > extent) qualify: BLAS-style ``ld`` covers them. A dimension of
    extent 1 is never stepped along, so its stride is free; the leading dimension is then chosen
    as the extent rounded up to 16 bytes, which keeps vector kernels eligible.
    """
    rows, cols = m.shape
    rs, cs = m.strides
    per16 = max(1, 16 // m.itemsize)

    def padded(extent: int) -> int:
        return -(-max(extent, 1) // per16) * per16

    if rows == 0 or cols == 0:  # no elements: every stride is free (NumPy/CuPy report 0s)
        return False, padded(cols)
    if cols == 1 or cs == 1:
        if rows == 1:
            return False, padded(cols)
        if rs >= max(cols, 1):
            return False, rs
    if rows == 1 or rs == 1:
        if cols == 1:
            return True, padded(rows)
        if cs >= max(rows, 1):
            return True, cs
    return None


def _device_of(m: Matrix) -> int:
    if m.device is not None:
        return m.device
    device = _C.pointer_device(m.ptr)
    if device < 0:
        raise RuntimeError(
            f"{m.obj.__class__.__name__} operand is not in CUDA device memory (address 0x{m.ptr:x})"
        )
    return device


def _gemm(
    fn: str, dtypes: tuple[str, ...], A: Any, B: Any, C: Any, alpha: Any, beta: Any, kernel: str,
    stream: Any,
) -> Any:
    alpha_f, beta_f = _scalar(alpha, "alpha"), _scalar(beta, "beta")
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a str ('auto' or a name from kernels()), got {kernel!r}")
    launch_stream = _stream_handle(stream) if stream is not None else None
    dlpack_stream = launch_stream if launch_stream not in (None, 0) else 1
    a = as_matrix(A, "A", dlpack_stream=dlpack_stream)
    b = as_matrix(B, "B", dlpack_stream=dlpack_stream)
    c = as_matrix(C, "C", dlpack_stream=dlpack_stream)

    # Types, shapes, layouts: all checked before anything touches the GPU.
    for name, m in (("A", a), ("B", b), ("C", c)):
        if m.dtype not in dtypes:
            hint = " (use hgemm)" if m.dtype in ("float16", "bfloat16") else ""
            hint = " (use sgemm)" if m.dtype == "float32" and fn == "hgemm" else hint
            raise TypeError(f"{fn} needs {' or '.join(dtypes)} operands; {name} is {m.dtype}{hint}")
    if not (a.dtype == b.dtype == c.dtype):
        raise TypeError(f"{fn}: A, B and C must share one dtype; got {a.dtype}, {b.dtype}, {c.dtype}")
    (M, K), (K2, N) = a.shape, b.shape
    if K2 != K:
        raise ValueError(f"{fn}: inner dimensions differ: A is {M}x{K}, B is {K2}x{N}")
    if c.shape != (M, N):
        raise ValueError(f"{fn}: C must be {M}x{N} for A {M}x{K} @ B {K2}x{N}; C is {c.shape[0]}x{c.shape[1]}")
    if c.readonly:
        raise ValueError(f"{fn}: C is read-only")
    c_layout = _layout(c)
    if c_layout is None:
        raise ValueError(
            f"{fn}: C must be row- or column-major with unit stride; its strides are {c.strides} elements"
        )
    for name, m in (("A", a), ("B", b)):
        if c.size and m.size and overlaps(c, m):
            raise ValueError(f"{fn}: C overlaps {name}; the output must not alias an input")
    if kernel != "auto":
        same_name = [k for k in kernel_table() if k.name == kernel]
        if not same_name:
            names = ", ".join(k.name for k in kernel_table() if k.dtype == c.dtype) or "none"
            raise ValueError(f"unknown kernel {kernel!r}; {c.dtype} kernels: {names}")
        if all(k.dtype != c.dtype for k in same_name):
            kinds = " or ".join(d for d in _DTYPES if any(k.dtype == d for k in same_name))
            raise ValueError(f"kernel {kernel!r} is a {kinds} kernel; operands are {c.dtype}")

    # The GPU from here on.
    _require_gpu()
    if M == 0 or N == 0:
        return C
    # Empty operands (A and B when K == 0) may own no memory at all (CuPy gives them address 0).
    devices = {name: _device_of(m) for name, m in (("A", a), ("B", b), ("C", c)) if m.size}
    if len(set(devices.values())) != 1:
        raise ValueError(f"{fn}: operands are on different devices: {devices}")
    device = devices["C"]
    if launch_stream is None:
        launch_stream = _default_stream((A, B, C))
    for m in (a, b, c):  # CAI v3 producer streams: wait on an event, never a device sync
        if m.stream is not None and m.stream != launch_stream:
            _C.stream_wait(m.stream, launch_stream, device)
    c_col, ldc = c_layout
    if K == 0 or alpha_f == 0.0:
        _C.scale(c.dtype, c.ptr, *((N, M) if c_col else (M, N)), ldc, beta_f, launch_stream, device)
        return C

    keep: list[Any] = []  # temporaries must outlive the (stream-ordered) launch enqueue

    def aligned_copy(ptr: int, rows: int, cols: int, rs: int, cs: int) -> tuple[int, int]:
        """A row-major copy with 16-byte aligned rows; returns (pointer, leading dimension)."""
        dst, ld = _scratch(keep, rows, cols, c.itemsize, launch_stream, device)
        _C.copy_strided(c.itemsize, ptr, rows, cols, rs, cs, dst, ld, launch_stream, device)
        return dst, ld

    operands = []
    for m in (a, b):
        layout = _layout(m)
        if layout is None:  # arbitrary strides: one row-major copy with aligned rows
            operands.append((*aligned_copy(m.ptr, *m.shape, *m.strides), False))
        else:
            operands.append((m.ptr, layout[1], layout[0]))
    (pa, lda, a_col), (pb, ldb, b_col) = operands
    if c_col:  # C^T = B^T A^T with a row-major C^T: swap the operands and flip their layouts
        M, N = N, M
        (pa, lda, a_col), (pb, ldb, b_col) = (pb, ldb, not b_col), (pa, lda, not a_col)
    pc = c.ptr
    size = c.itemsize
    alignment = alignment_of(pa, pb, pc, lda * size, ldb * size, ldc * size)
    cc = _C.device_cc(device)
    if kernel == "auto":
        sel = _select(M, N, K, c.dtype, cc=cc, alignment=alignment)
        info = sel.kernel
        if sel.pad:  # copy the under-aligned operands into aligned temporaries
            if alignment_of(pa, lda * size) < info.alignment:
                rows, cols = (K, M) if a_col else (M, K)
                pa, lda = aligned_copy(pa, rows, cols, lda, 1)
            if alignment_of(pb, ldb * size) < info.alignment:
                rows, cols = (N, K) if b_col else (K, N)
                pb, ldb = aligned_copy(pb, rows, cols, ldb, 1)
            if alignment_of(pc, ldc * size) < info.alignment:
                if beta_f != 0:
                    pc, ldc_work = aligned_copy(pc, M, N, ldc, 1)
                else:  # beta = 0 never reads C
                    pc, ldc_work = _scratch(keep, M, N, size, launch_stream, device)
                _C.gemm(info.name, c.dtype, M, N, K, pa, lda, a_col, pb, ldb, b_col, pc, ldc_work,
                        alpha_f, beta_f, launch_stream, device)
                _C.copy_strided(size, pc, M, N, ldc_work, 1, c.ptr, ldc, launch_stream, device)
                return C
    else:
        info = next(k for k in kernel_table() if k.name == kernel and k.dtype == c.dtype)
        problem = check_runnable(info, cc, alignment)
        if problem is not None:
            raise RuntimeError(problem)
    _C.gemm(info.name, c.dtype, M, N, K, pa, lda, a_col, pb, ldb, b_col, pc, ldc, alpha_f, beta_f,
            launch_stream, device)
    return C  # `keep` (the temporaries) is released after the stream-ordered launches are queued


def _scratch(keep: list[Any], rows: int, cols: int, itemsize: int, stream: int, device: int
             ) -> tuple[int, int]:
    """An uninitialised row-major buffer with 16-byte aligned rows: (pointer, leading dimension)."""
    per16 = 16 // itemsize
    ld = -(-cols // per16) * per16
    buf = _C.DeviceBuffer(rows * ld * itemsize, stream, device)
    keep.append(buf)
    return buf.ptr, ld
