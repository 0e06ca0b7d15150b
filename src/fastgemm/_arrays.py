"""How fastgemm reads an array, as a Python object: :func:`as_matrix` and :class:`Matrix`.

The adapter itself is C++ (``csrc/operands.cpp``), and the GEMM entry calls it directly; this
module shows its answer to Python -- for ``gemm(C=None)``, for tests and for anyone who wants to
know how an object will be read. :func:`as_matrix` turns a PyTorch tensor, a CuPy array, any object
with ``__cuda_array_interface__`` (v2 or v3), or any DLPack producer into a :class:`Matrix`: device
address, shape, element strides, dtype name, device, stream, read-only flag, producer library.

It does not check dtypes, layouts or devices against what a kernel supports; it only reports them
faithfully and rejects what cannot be described at all (host arrays, masked arrays, vector dtypes,
anything that is not 2-D).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Matrix", "as_matrix", "layout", "overlaps"]


@dataclass(frozen=True)
class Matrix:
    """A 2-D strided array in CUDA-accessible memory, described without reference to its producer.

    ``strides`` are in elements (never bytes) and may be negative or zero. ``ptr`` is the address of
    element ``(0, 0)``. ``obj`` and ``keepalive`` hold the memory alive for as long as the Matrix is.
    """

    ptr: int
    shape: tuple[int, int]
    strides: tuple[int, int]
    dtype: str
    itemsize: int
    device: int | None
    stream: int | None
    readonly: bool
    library: str
    # Neither compared nor printed: array objects have elementwise __eq__ and costly reprs.
    obj: object = field(compare=False, repr=False)
    keepalive: object = field(default=None, compare=False, repr=False)

    @property
    def size(self) -> int:
        """Number of elements."""
        return self.shape[0] * self.shape[1]

    @property
    def is_c_contiguous(self) -> bool:
        """Row-major and dense: unit column stride, row stride == number of columns.

        A dimension of extent 1 may have any stride (it is never stepped along); an empty matrix
        is contiguous, as in NumPy.
        """
        return _dense(self.shape, self.strides, order=(1, 0))

    @property
    def is_f_contiguous(self) -> bool:
        """Column-major and dense: unit row stride, column stride == number of rows."""
        return _dense(self.shape, self.strides, order=(0, 1))

    def byte_span(self) -> tuple[int, int]:
        """The half-open byte range ``[lo, hi)`` that the matrix's elements occupy.

        Correct for negative strides (``lo`` may then lie below ``ptr``); ``(ptr, ptr)`` when the
        matrix has no elements.
        """
        from . import _C

        return tuple(_C.byte_span(self.ptr, *self.shape, *self.strides, self.itemsize))  # type: ignore[return-value]


def overlaps(a: Matrix, b: Matrix) -> bool:
    """True when the byte ranges of two non-empty matrices intersect (the entry's aliasing rule).

    Conservative: interleaved views that share a range but no element still count as overlapping.
    """
    a_lo, a_hi = a.byte_span()
    b_lo, b_hi = b.byte_span()
    if a_lo == a_hi or b_lo == b_hi:
        return False
    return a_lo < b_hi and b_lo < a_hi


def layout(m: Matrix) -> tuple[bool, int] | None:
    """(col_major, leading dimension) as the entry reads ``m``, or None when it has no unit stride
    (A and B are then copied; C is refused). A dimension of extent 1 has a free stride: its leading
    dimension is the extent rounded up to 16 bytes."""
    from . import _C

    return _C.layout(*m.shape, *m.strides, m.itemsize)


def as_matrix(obj: Any, name: str, *, dlpack_stream: int | None = None) -> Matrix:
    """Describe ``obj`` as the GEMM entry reads it; ``name`` (e.g. ``"A"``) is used in errors.

    Detection order: PyTorch tensor, CuPy array, ``__cuda_array_interface__``, ``__dlpack__``.
    ``dlpack_stream`` is passed to ``__dlpack__(stream=...)``: the consumer stream the producer
    must order its pending work before (DLPack convention: 1 = legacy default stream,
    2 = per-thread default stream, otherwise a ``cudaStream_t`` value; None = do not pass one).

    Raises:
        TypeError: ``obj`` is not a CUDA array (host arrays included), or it has vector lanes.
        RuntimeError: a tensor/DLPack capsule that lives outside CUDA device memory.
        ValueError: not 2-D, masked, byte strides that are not whole elements, or an unsupported
            ``__cuda_array_interface__`` version.
    """
    from . import _C

    d = _C.describe(obj, name, dlpack_stream)
    return Matrix(obj=obj, **d)


def _dense(shape: tuple[int, int], strides: tuple[int, int], order: tuple[int, int]) -> bool:
    """Dense with dimension order[0] varying fastest; extent-1 dimensions may have any stride."""
    if shape[0] == 0 or shape[1] == 0:
        return True
    expected = 1
    for d in order:
        if shape[d] != 1 and strides[d] != expected:
            return False
        expected *= shape[d]
    return True
