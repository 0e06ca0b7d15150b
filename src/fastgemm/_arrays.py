"""The one array adapter at fastgemm's API boundary.

:func:`as_matrix` turns whatever the caller hands in -- a PyTorch tensor, a CuPy array, any object
with ``__cuda_array_interface__`` (v2 or v3), or any DLPack producer -- into a :class:`Matrix`: a
plain, immutable description (device address, shape, element strides, dtype name, device, stream,
read-only flag, producer library). Everything downstream (dispatch, layout canonicalisation,
aliasing checks) works on that description and never looks at the original object again, except
to keep its memory alive.

Policy lives elsewhere: this module does not check dtypes, layouts or devices against what a
kernel supports; it only reports them faithfully and rejects what cannot be described at all
(host arrays, masked arrays, vector dtypes, anything that is not 2-D).

No array library is imported here at module import time; ``fastgemm._C`` is imported lazily, and
only for DLPack producers, so this module imports even when the extension cannot be loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Matrix", "as_matrix", "overlaps"]

# DLPack device types (DLDeviceType) that fastgemm can read and write.
_DL_CPU = 1
_DL_CUDA = 2
_DL_CUDA_HOST = 3
_DL_CUDA_MANAGED = 13
_DL_ACCEPTED_DEVICES = (_DL_CUDA, _DL_CUDA_MANAGED)

# DLPack type codes (DLDataTypeCode).
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_COMPLEX, _DL_BOOL = 0, 1, 2, 4, 5, 6

_KINDS = "CuPy, PyTorch, __cuda_array_interface__ or DLPack"


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
        if self.shape[0] == 0 or self.shape[1] == 0:
            return (self.ptr, self.ptr)
        lo = hi = 0
        for extent, stride in zip(self.shape, self.strides):
            reach = (extent - 1) * stride
            if reach < 0:
                lo += reach
            else:
                hi += reach
        return (self.ptr + lo * self.itemsize, self.ptr + (hi + 1) * self.itemsize)


def overlaps(a: Matrix, b: Matrix) -> bool:
    """True when the byte ranges of two non-empty matrices intersect.

    Conservative: interleaved views that share a range but no element still count as overlapping.
    """
    a_lo, a_hi = a.byte_span()
    b_lo, b_hi = b.byte_span()
    if a_lo == a_hi or b_lo == b_hi:
        return False
    return a_lo < b_hi and b_lo < a_hi


def as_matrix(obj: Any, name: str, *, dlpack_stream: int | None = None) -> Matrix:
    """Describe ``obj`` as a :class:`Matrix`; ``name`` (e.g. ``"A"``) is used in error messages.

    Detection order: PyTorch tensor, ``__cuda_array_interface__``, ``__dlpack__``.
    ``dlpack_stream`` is passed to ``__dlpack__(stream=...)``: the consumer stream the producer
    must order its pending work before (DLPack convention: 1 = legacy default stream,
    2 = per-thread default stream, otherwise a ``cudaStream_t`` value; None = do not pass one).

    Raises:
        TypeError: ``obj`` is not a CUDA array (host arrays included), or it has vector lanes.
        RuntimeError: a tensor/DLPack capsule that lives outside CUDA device memory.
        ValueError: not 2-D, masked, byte strides that are not whole elements, or an unsupported
            ``__cuda_array_interface__`` version.
    """
    module = type(obj).__module__ or ""
    if module.startswith("torch") and hasattr(obj, "data_ptr"):
        return _from_torch(obj, name)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_cai(obj, cai, name, module)
    if module.startswith("numpy"):
        # NumPy arrays speak DLPack too, but a host array deserves a clearer error than a
        # DLPack device-type complaint.
        raise TypeError(
            f"{name} must be a CUDA array ({_KINDS}), got {type(obj).__name__}: a NumPy array lives "
            f"in host memory; copy it to the GPU first (e.g. cupy.asarray or torch.from_numpy(...).cuda())"
        )
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj, name, dlpack_stream)
    raise TypeError(f"{name} must be a CUDA array ({_KINDS}), got {type(obj).__name__}")


# --- producers ---------------------------------------------------------------------------------


def _from_torch(t: Any, name: str) -> Matrix:
    device = t.device
    if device.type != "cuda":
        raise RuntimeError(
            f"{name} is a PyTorch tensor on device '{device}'; fastgemm needs CUDA arrays "
            f"(move it with .cuda() or .to('cuda'))"
        )
    layout = str(getattr(t, "layout", "torch.strided"))
    if layout != "torch.strided":
        raise TypeError(f"{name} is a {layout} PyTorch tensor; fastgemm needs dense (strided) tensors")
    shape = tuple(int(s) for s in t.shape)
    _check_2d(name, shape)
    return Matrix(
        ptr=int(t.data_ptr()),
        shape=shape,  # type: ignore[arg-type]
        strides=tuple(int(s) for s in t.stride()),  # type: ignore[arg-type]
        dtype=str(t.dtype).removeprefix("torch."),
        itemsize=int(t.element_size()),
        device=device.index,
        stream=None,
        readonly=False,
        library="torch",
        obj=t,
    )


def _from_cai(obj: Any, cai: Any, name: str, module: str) -> Matrix:
    if not isinstance(cai, dict):
        raise TypeError(
            f"{name}.__cuda_array_interface__ must be a dict, got {type(cai).__name__}"
        )
    version = cai.get("version")
    if version not in (2, 3):
        raise ValueError(
            f"{name}: unsupported __cuda_array_interface__ version {version!r} (fastgemm reads 2 and 3)"
        )
    shape = tuple(int(s) for s in cai["shape"])
    _check_2d(name, shape)
    if cai.get("mask") is not None:
        raise ValueError(f"{name}: masked arrays are not supported")

    typestr = str(cai["typestr"])
    dtype, itemsize = _cai_dtype(typestr, cai.get("descr"), name)
    if dtype == typestr and itemsize == 2 and str(getattr(obj, "dtype", "")) == "bfloat16":
        # CuPy exports bfloat16 (an ml_dtypes type) as a bare 2-byte void; its own dtype says what
        # the bytes are.
        dtype = "bfloat16"

    byte_strides = cai.get("strides")
    if byte_strides is None:
        strides = (shape[1], 1)
    else:
        byte_strides = tuple(int(s) for s in byte_strides)
        if len(byte_strides) != len(shape):
            raise ValueError(
                f"{name}: __cuda_array_interface__ strides {byte_strides} do not match shape {shape}"
            )
        if any(s % itemsize for s in byte_strides):
            raise ValueError(
                f"{name}: byte strides {byte_strides} are not multiples of the item size "
                f"({itemsize} bytes for {dtype})"
            )
        strides = tuple(s // itemsize for s in byte_strides)

    stream = cai.get("stream") if version >= 3 else None
    if stream is not None:
        stream = int(stream)
        if stream == 0:
            # The CUDA Array Interface forbids 0: it is ambiguous between the legacy and the
            # per-thread default stream.
            raise ValueError(
                f"{name}: __cuda_array_interface__ stream 0 is not allowed (use 1 for the legacy "
                f"default stream or 2 for the per-thread default stream)"
            )

    ptr, readonly = cai["data"]
    return Matrix(
        ptr=int(ptr),
        shape=shape,  # type: ignore[arg-type]
        strides=strides,  # type: ignore[arg-type]
        dtype=dtype,
        itemsize=itemsize,
        device=None,
        stream=stream,
        readonly=bool(readonly),
        library="cupy" if module.startswith("cupy") else "cai",
        obj=obj,
    )


def _cai_dtype(typestr: str, descr: Any, name: str) -> tuple[str, int]:
    """(dtype name, itemsize) for a CAI typestr such as '<f4'."""
    import numpy

    try:
        dt = numpy.dtype(typestr)
    except (TypeError, ValueError):
        dt = None
    if dt is None or dt.kind == "V":
        # No standard typestr exists for bfloat16: producers use a 2-byte void, some with a
        # descr naming it.
        if _descr_says_bfloat16(descr):
            return "bfloat16", 2
        itemsize = dt.itemsize if dt is not None else _typestr_itemsize(typestr)
        if itemsize is None:
            raise ValueError(f"{name}: cannot read the item size of typestr {typestr!r}")
        return typestr, itemsize
    if dt.byteorder not in ("=", "|"):  # numpy normalises the native order to "="
        return f"{dt.name} (non-native byte order {typestr})", dt.itemsize
    return dt.name, dt.itemsize


def _descr_says_bfloat16(descr: Any) -> bool:
    try:
        return any("bfloat16" in str(entry[0]).lower() for entry in descr)
    except (TypeError, IndexError, KeyError):
        return False


def _typestr_itemsize(typestr: str) -> int | None:
    digits = typestr[2:]
    return int(digits) if digits.isdigit() and int(digits) > 0 else None


def _from_dlpack(obj: Any, name: str, dlpack_stream: int | None) -> Matrix:
    device_fn = getattr(obj, "__dlpack_device__", None)
    if device_fn is not None:
        # Reject host memory before consuming anything (__dlpack__ may copy or synchronise).
        device_type, _ = device_fn()
        _check_dlpack_device(name, int(device_type))

    kwargs: dict[str, Any] = {}
    if dlpack_stream is not None:
        kwargs["stream"] = dlpack_stream
    try:
        capsule = obj.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError:
        # Producers older than DLPack 1.0 / the 2023 array API do not take max_version.
        capsule = obj.__dlpack__(**kwargs)

    from fastgemm import _C

    info, keepalive = _C.dlpack_take(capsule)
    # From here on `keepalive` owns the tensor: if we raise, dropping it runs the deleter.
    _check_dlpack_device(name, int(info["device_type"]))
    code, bits, lanes = int(info["dtype_code"]), int(info["dtype_bits"]), int(info["dtype_lanes"])
    if lanes != 1:
        raise TypeError(
            f"{name} has a vector DLPack dtype ({lanes} lanes of code {code}, {bits} bits); "
            f"fastgemm needs scalar elements"
        )
    shape = tuple(int(s) for s in info["shape"])
    _check_2d(name, shape)
    raw_strides = info["strides"]
    strides = (shape[1], 1) if raw_strides is None else tuple(int(s) for s in raw_strides)
    return Matrix(
        ptr=int(info["ptr"]),
        shape=shape,  # type: ignore[arg-type]
        strides=strides,  # type: ignore[arg-type]
        dtype=_dlpack_dtype(code, bits),
        itemsize=(bits + 7) // 8,
        device=int(info["device_id"]),
        stream=None,
        readonly=bool(info["readonly"]),
        library="dlpack",
        obj=obj,
        keepalive=keepalive,
    )


def _check_dlpack_device(name: str, device_type: int) -> None:
    if device_type not in _DL_ACCEPTED_DEVICES:
        where = {_DL_CPU: " (CPU)", _DL_CUDA_HOST: " (CUDA pinned host memory)"}.get(device_type, "")
        raise RuntimeError(
            f"{name} is not in CUDA device memory (DLPack device type {device_type}{where}); "
            f"fastgemm needs CUDA arrays"
        )


def _dlpack_dtype(code: int, bits: int) -> str:
    if code == _DL_FLOAT:
        return f"float{bits}"
    if code == _DL_BFLOAT and bits == 16:
        return "bfloat16"
    if code == _DL_INT:
        return f"int{bits}"
    if code == _DL_UINT:
        return f"uint{bits}"
    if code == _DL_COMPLEX:
        return f"complex{bits}"
    if code == _DL_BOOL and bits == 8:
        return "bool"
    return f"dlpack(code={code},bits={bits})"


# --- helpers -----------------------------------------------------------------------------------


def _check_2d(name: str, shape: tuple[int, ...]) -> None:
    if len(shape) != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got {len(shape)}-D with shape {shape}")


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
