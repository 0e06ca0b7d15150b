"""CPU-only tests for fastgemm._arrays, the array adapter at the API boundary.

Nothing here touches a GPU or needs CuPy/PyTorch: CUDA arrays are faked with small objects that
speak __cuda_array_interface__ or DLPack (capsules built by _C._dlpack_test_capsule). The pointers
are made-up integers and are never dereferenced.
"""

from __future__ import annotations

import gc
import re
from typing import ClassVar

import numpy as np
import pytest

from fastgemm import _C
from fastgemm._arrays import Matrix, as_matrix, overlaps

PTR = 0x7F00_0000_1000


# --- fakes -------------------------------------------------------------------------------------


class FakeCAI:
    """An object exporting __cuda_array_interface__ (v2 by default)."""

    def __init__(self, shape, typestr="<f4", strides=None, *, ptr=PTR, readonly=False, version=2, **extra):
        self.iface = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (ptr, readonly),
            "version": version,
            "strides": strides,
            **extra,
        }

    @property
    def __cuda_array_interface__(self):
        return self.iface


class FakeCupyArray(FakeCAI):
    pass


FakeCupyArray.__module__ = "cupy._core.core"


class FakeDLPack:
    """A DLPack producer: __dlpack__ returns a fresh test capsule and records its arguments."""

    def __init__(
        self,
        shape,
        strides=None,
        *,
        code=2,
        bits=32,
        device_type=2,
        device_id=0,
        versioned=True,
        readonly=False,
        ptr=PTR,
        with_device=False,
    ):
        self.args = {
            "ptr": ptr,
            "shape": list(shape),
            "strides": None if strides is None else list(strides),
            "code": code,
            "bits": bits,
            "device_type": device_type,
            "device_id": device_id,
            "versioned": versioned,
            "readonly": readonly,
        }
        self.with_device = with_device
        self.calls = []
        self.capsules = []

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        cap = _C._dlpack_test_capsule(**self.args)
        self.capsules.append(cap)
        return cap

    def __getattr__(self, attr):
        # __dlpack_device__ exists only when asked for, to exercise both code paths.
        if attr == "__dlpack_device__" and self.__dict__.get("with_device"):
            return lambda: (self.args["device_type"], self.args["device_id"])
        raise AttributeError(attr)


class LegacyDLPack(FakeDLPack):
    """A pre-1.0 producer: __dlpack__ takes `stream` only, so max_version=... is a TypeError."""

    def __dlpack__(self, stream=None):
        self.calls.append({"stream": stream})
        cap = _C._dlpack_test_capsule(**{**self.args, "versioned": False})
        self.capsules.append(cap)
        return cap


class FakeTorchDevice:
    def __init__(self, type_, index):
        self.type, self.index = type_, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeTorchDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class FakeTensor:
    """Quacks like torch.Tensor (its module is 'torch'), without torch."""

    def __init__(self, shape, strides, dtype="float32", itemsize=4, device=("cuda", 0), ptr=PTR):
        self.shape, self._strides, self._ptr, self._itemsize = tuple(shape), tuple(strides), ptr, itemsize
        self.dtype = FakeTorchDtype(dtype)
        self.device = FakeTorchDevice(*device)

    def data_ptr(self):
        return self._ptr

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def get_device(self):  # as torch: the device index, -1 on the CPU
        return -1 if self.device.type == "cpu" else self.device.index

    def stride(self):
        return self._strides

    def is_contiguous(self):  # as torch: C order, where an extent of 1 may have any stride
        expected = 1
        for extent, stride in reversed(list(zip(self.shape, self._strides))):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True

    def element_size(self):
        return self._itemsize


FakeTensor.__module__ = "torch"


def mat(shape, strides, itemsize=4, ptr=PTR):
    return Matrix(
        ptr=ptr,
        shape=shape,
        strides=strides,
        dtype="float32",
        itemsize=itemsize,
        device=0,
        stream=None,
        readonly=False,
        library="cai",
        obj=None,
    )


# --- __cuda_array_interface__ ------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 3])
def test_cai_c_contiguous_when_strides_none(version):
    obj = FakeCAI((3, 5), version=version)
    m = as_matrix(obj, "A")
    assert (m.ptr, m.shape, m.strides) == (PTR, (3, 5), (5, 1))
    assert (m.dtype, m.itemsize, m.device, m.stream, m.readonly) == ("float32", 4, None, None, False)
    assert m.library == "cai"
    assert m.obj is obj and m.keepalive is None
    assert m.is_c_contiguous and not m.is_f_contiguous


@pytest.mark.parametrize(
    "byte_strides, elem_strides, c_contig, f_contig",
    [
        ((20, 4), (5, 1), True, False),  # C order, explicit
        ((4, 12), (1, 3), False, True),  # F order
        ((32, 4), (8, 1), False, False),  # row-major with padded rows (ld 8 > 5 columns)
        ((-20, 4), (-5, 1), False, False),  # rows reversed
    ],
)
def test_cai_explicit_byte_strides(byte_strides, elem_strides, c_contig, f_contig):
    m = as_matrix(FakeCAI((3, 5), strides=byte_strides), "B")
    assert m.strides == elem_strides
    assert m.is_c_contiguous is c_contig
    assert m.is_f_contiguous is f_contig


@pytest.mark.parametrize("readonly", [False, True])
def test_cai_readonly_flag(readonly):
    assert as_matrix(FakeCAI((2, 2), readonly=readonly), "A").readonly is readonly


@pytest.mark.parametrize("stream", [None, 1, 2, 0x5555_0000_1230])
def test_cai_v3_stream_passthrough(stream):
    assert as_matrix(FakeCAI((2, 2), version=3, stream=stream), "A").stream == stream


def test_cai_v3_without_stream_key():
    obj = FakeCAI((2, 2), version=3)
    assert "stream" not in obj.iface
    assert as_matrix(obj, "A").stream is None


def test_cai_v3_stream_zero_rejected():
    with pytest.raises(ValueError, match="stream 0 is not allowed"):
        as_matrix(FakeCAI((2, 2), version=3, stream=0), "A")


def test_cai_v2_ignores_stream_key():
    assert as_matrix(FakeCAI((2, 2), version=2, stream=7), "A").stream is None


def test_cai_non_divisible_byte_strides():
    with pytest.raises(ValueError, match=r"A: byte strides \(20, 2\) are not multiples of the item size"):
        as_matrix(FakeCAI((3, 5), strides=(20, 2)), "A")


def test_cai_strides_length_mismatch():
    with pytest.raises(ValueError, match="do not match shape"):
        as_matrix(FakeCAI((3, 5), strides=(4,)), "A")


def test_cai_mask_rejected():
    with pytest.raises(ValueError, match="masked arrays are not supported"):
        as_matrix(FakeCAI((2, 2), mask=object()), "A")


def test_cai_mask_none_accepted():
    assert as_matrix(FakeCAI((2, 2), mask=None), "A").shape == (2, 2)


@pytest.mark.parametrize("version", [0, 1, 4, None])
def test_cai_bad_version(version):
    with pytest.raises(ValueError, match="unsupported __cuda_array_interface__ version"):
        as_matrix(FakeCAI((2, 2), version=version), "A")


@pytest.mark.parametrize("shape", [(6,), (2, 3, 4), ()])
def test_cai_not_2d(shape):
    msg = f"C must be a 2-D matrix, got {len(shape)}-D with shape {shape}"
    with pytest.raises(ValueError, match=re.escape(msg)):
        as_matrix(FakeCAI(shape), "C")


@pytest.mark.parametrize(
    "typestr, dtype, itemsize",
    [
        ("<f4", "float32", 4),
        ("<f2", "float16", 2),
        ("<f8", "float64", 8),
        ("<i4", "int32", 4),
        ("|i1", "int8", 1),
        ("|u1", "uint8", 1),
        ("<c8", "complex64", 8),
    ],
)
def test_cai_typestr_names(typestr, dtype, itemsize):
    m = as_matrix(FakeCAI((2, 2), typestr=typestr), "A")
    assert (m.dtype, m.itemsize) == (dtype, itemsize)
    assert m.strides == (2, 1)


def test_cai_version_as_a_float():
    assert as_matrix(FakeCAI((2, 2), version=3.0), "A").shape == (2, 2)


def test_cai_typestr_numpy_names():
    m = as_matrix(FakeCAI((2, 2), typestr="<M8[ns]"), "A")
    assert (m.dtype, m.itemsize) == ("datetime64[ns]", 8)


def test_cai_big_endian_is_not_reported_as_native():
    m = as_matrix(FakeCAI((2, 2), typestr=">f4"), "A")
    assert m.dtype != "float32" and "float32" in m.dtype and m.itemsize == 4


def test_cai_void2_with_bfloat16_descr():
    m = as_matrix(FakeCAI((2, 2), typestr="<V2", descr=[("bfloat16", "<V2")]), "A")
    assert (m.dtype, m.itemsize) == ("bfloat16", 2)


def test_cai_void2_without_descr_keeps_typestr():
    m = as_matrix(FakeCAI((2, 2), typestr="<V2", descr=[("", "<V2")]), "A")
    assert (m.dtype, m.itemsize) == ("<V2", 2)


def test_cai_library_cupy():
    m = as_matrix(FakeCupyArray((2, 2)), "A")
    assert m.library == "cupy"


def test_cai_zero_pointer_empty_array():
    m = as_matrix(FakeCAI((0, 4), ptr=0), "A")
    assert (m.ptr, m.shape) == (0, (0, 4))
    assert m.byte_span() == (0, 0)


def test_cai_not_a_dict():
    class Bad:
        __cuda_array_interface__: ClassVar[list] = [("shape", (2, 2))]

    with pytest.raises(TypeError, match="must be a dict"):
        as_matrix(Bad(), "A")


# --- DLPack ------------------------------------------------------------------------------------


@pytest.mark.parametrize("versioned", [True, False])
def test_dlpack_basic(versioned):
    obj = FakeDLPack((3, 4), versioned=versioned, device_id=1)
    m = as_matrix(obj, "A")
    assert (m.ptr, m.shape, m.strides) == (PTR, (3, 4), (4, 1))
    assert (m.dtype, m.itemsize, m.device, m.stream) == ("float32", 4, 1, None)
    assert m.library == "dlpack"
    assert m.obj is obj and m.keepalive is not None
    assert obj.calls == [{"max_version": (1, 0)}]  # no stream kwarg when dlpack_stream is None


@pytest.mark.parametrize(
    "strides, c_contig, f_contig", [((1, 3), False, True), ((8, 1), False, False), ((4, 1), True, False)]
)
def test_dlpack_explicit_strides(strides, c_contig, f_contig):
    m = as_matrix(FakeDLPack((3, 4), strides=strides), "A")
    assert m.strides == strides
    assert (m.is_c_contiguous, m.is_f_contiguous) == (c_contig, f_contig)


@pytest.mark.parametrize("readonly", [False, True])
def test_dlpack_versioned_readonly(readonly):
    assert as_matrix(FakeDLPack((2, 2), readonly=readonly), "A").readonly is readonly


def test_dlpack_legacy_capsule_is_writable():
    assert as_matrix(FakeDLPack((2, 2), versioned=False), "A").readonly is False


@pytest.mark.parametrize("stream", [1, 2, -1, 0x1234_5670])
def test_dlpack_stream_forwarded(stream):
    obj = FakeDLPack((2, 2))
    as_matrix(obj, "A", dlpack_stream=stream)
    assert obj.calls == [{"max_version": (1, 0), "stream": stream}]


@pytest.mark.parametrize("stream", [None, 2])
def test_dlpack_producer_without_max_version(stream):
    obj = LegacyDLPack((2, 3), device_id=3)
    m = as_matrix(obj, "B", dlpack_stream=stream)
    assert (m.shape, m.strides, m.device, m.dtype) == ((2, 3), (3, 1), 3, "float32")
    assert obj.calls == [{"stream": stream}]


@pytest.mark.parametrize(
    "code, bits, dtype, itemsize",
    [
        (2, 32, "float32", 4),
        (2, 16, "float16", 2),
        (4, 16, "bfloat16", 2),
        (2, 64, "float64", 8),
        (0, 32, "int32", 4),
        (1, 8, "uint8", 1),
        (0, 8, "int8", 1),
        (3, 16, "dlpack(code=3,bits=16)", 2),
    ],
)
def test_dlpack_dtypes(code, bits, dtype, itemsize):
    m = as_matrix(FakeDLPack((2, 2), code=code, bits=bits), "A")
    assert (m.dtype, m.itemsize) == (dtype, itemsize)


def test_dlpack_managed_memory_accepted():
    assert as_matrix(FakeDLPack((2, 2), device_type=13, device_id=2), "A").device == 2


@pytest.mark.parametrize("with_device", [False, True])
@pytest.mark.parametrize("device_type", [1, 3])
def test_dlpack_host_memory_rejected(device_type, with_device):
    obj = FakeDLPack((2, 2), device_type=device_type, with_device=with_device)
    msg = f"A is not in CUDA device memory (DLPack device type {device_type}"
    with pytest.raises(RuntimeError, match=re.escape(msg)) as info:
        as_matrix(obj, "A")
    assert "fastgemm needs CUDA arrays" in str(info.value)
    if device_type == 1:
        assert "CPU" in str(info.value)
    # With __dlpack_device__ the error comes before anything is exported.
    assert len(obj.calls) == (0 if with_device else 1)
    del info
    gc.collect()  # a capsule consumed before the error is released through its keepalive


def test_dlpack_device_checked_via_dlpack_device_allows_cuda():
    obj = FakeDLPack((2, 2), with_device=True)
    assert as_matrix(obj, "A").device == 0
    assert len(obj.calls) == 1


@pytest.mark.parametrize("shape", [(5,), (2, 2, 2)])
def test_dlpack_not_2d(shape):
    msg = f"A must be a 2-D matrix, got {len(shape)}-D with shape {shape}"
    with pytest.raises(ValueError, match=re.escape(msg)):
        as_matrix(FakeDLPack(shape), "A")
    gc.collect()


def test_dlpack_vector_lanes_rejected():
    obj = FakeDLPack((2, 2))
    obj.args["lanes"] = 4
    with pytest.raises(TypeError, match="4 lanes"):
        as_matrix(obj, "A")
    gc.collect()


class SameCapsule:
    """A broken producer that hands out one capsule twice."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule


@pytest.mark.parametrize("versioned", [True, False])
def test_dlpack_capsule_marked_used(versioned):
    obj = FakeDLPack((2, 2), versioned=versioned)
    m = as_matrix(obj, "A")
    (capsule,) = obj.capsules
    with pytest.raises(ValueError, match="not a DLPack capsule"):
        as_matrix(SameCapsule(capsule), "A")  # a consumed capsule is never read twice
    assert m.keepalive is not None


@pytest.mark.parametrize("versioned", [True, False])
def test_dlpack_keepalive_releases(versioned):
    obj = FakeDLPack((4, 4), versioned=versioned)
    m = as_matrix(obj, "A")
    keep = m.keepalive
    del m
    gc.collect()
    del keep  # runs the producer's deleter
    gc.collect()
    obj.capsules.clear()  # the (used) capsule itself must not run the deleter again
    gc.collect()


def test_unconsumed_test_capsule_frees_itself():
    for versioned in (True, False):
        cap = _C._dlpack_test_capsule(PTR, [2, 2], None, 2, 32, 2, 0, versioned=versioned)
        del cap
    gc.collect()


# --- PyTorch (duck-typed, no torch import) -----------------------------------------------------


@pytest.mark.parametrize("dtype, itemsize", [("float32", 4), ("float16", 2), ("bfloat16", 2), ("int64", 8)])
def test_torch_cuda_tensor(dtype, itemsize):
    t = FakeTensor((3, 4), (1, 3), dtype=dtype, itemsize=itemsize, device=("cuda", 1))
    m = as_matrix(t, "A")
    assert (m.ptr, m.shape, m.strides, m.dtype, m.itemsize) == (PTR, (3, 4), (1, 3), dtype, itemsize)
    assert (m.device, m.stream, m.readonly, m.library) == (1, None, False, "torch")
    assert m.is_f_contiguous and not m.is_c_contiguous


def test_torch_cpu_tensor_rejected():
    with pytest.raises(RuntimeError, match="A is a PyTorch tensor on device 'cpu'.*CUDA"):
        as_matrix(FakeTensor((2, 2), (2, 1), device=("cpu", None)), "A")


@pytest.mark.parametrize("device", [("xpu", 0), ("mps", 0), ("meta", None)])
def test_torch_tensor_on_another_accelerator_rejected(device):
    with pytest.raises(RuntimeError, match=f"A is a PyTorch tensor on device '{device[0]}"):
        as_matrix(FakeTensor((2, 2), (2, 1), device=device), "A")


def test_torch_not_2d():
    with pytest.raises(ValueError, match=re.escape("B must be a 2-D matrix, got 1-D with shape (4,)")):
        as_matrix(FakeTensor((4,), (1,)), "B")


# --- not CUDA arrays ---------------------------------------------------------------------------


@pytest.mark.parametrize("arr", [np.zeros((2, 2), np.float32), np.zeros(3), np.float32(1.0)])
def test_numpy_rejected_as_host(arr):
    with pytest.raises(TypeError, match=r"A must be a CUDA array \(CuPy, PyTorch.*host memory"):
        as_matrix(arr, "A")


@pytest.mark.parametrize(
    "obj, type_name", [([[1.0, 2.0]], "list"), (None, "NoneType"), (3.0, "float"), ("abc", "str")]
)
def test_other_objects_rejected(obj, type_name):
    msg = f"A must be a CUDA array (CuPy, PyTorch, __cuda_array_interface__ or DLPack), got {type_name}"
    with pytest.raises(TypeError, match=re.escape(msg)):
        as_matrix(obj, "A")


# --- Matrix geometry ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, strides, itemsize, span",
    [
        ((3, 5), (5, 1), 4, (PTR, PTR + 60)),  # C-contiguous
        ((3, 5), (1, 3), 4, (PTR, PTR + 60)),  # F-contiguous
        ((3, 5), (8, 1), 2, (PTR, PTR + 2 * (2 * 8 + 4 + 1))),  # padded rows: last row is short
        ((3, 5), (-5, 1), 4, (PTR - 40, PTR + 20)),  # rows reversed: row 0 is the highest
        ((3, 5), (5, -1), 4, (PTR - 16, PTR + 44)),  # columns reversed
        ((3, 5), (-5, -1), 4, (PTR - 56, PTR + 4)),  # both reversed: (0, 0) is the last element
        ((4, 4), (0, 1), 4, (PTR, PTR + 16)),  # broadcast rows
        ((1, 1), (7, 9), 8, (PTR, PTR + 8)),
        ((0, 5), (5, 1), 4, (PTR, PTR)),  # empty
        ((3, 0), (0, 1), 4, (PTR, PTR)),
    ],
)
def test_byte_span(shape, strides, itemsize, span):
    assert mat(shape, strides, itemsize).byte_span() == span


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (mat((2, 2), (2, 1)), mat((2, 2), (2, 1)), True),  # same buffer
        (mat((2, 2), (2, 1)), mat((2, 2), (2, 1), ptr=PTR + 16), False),  # adjacent, touching
        (mat((2, 2), (2, 1)), mat((2, 2), (2, 1), ptr=PTR + 12), True),  # one shared element
        (mat((2, 2), (2, 1), ptr=PTR + 64), mat((2, 2), (2, 1)), False),  # b below a
        (mat((4, 4), (4, 1)), mat((2, 2), (4, 1), ptr=PTR + 20), True),  # sub-view inside
        (mat((2, 2), (-2, 1), ptr=PTR + 8), mat((1, 2), (2, 1)), True),  # negative stride reaches back
        (mat((2, 2), (-2, 1), ptr=PTR + 16), mat((1, 2), (2, 1)), False),
        (mat((0, 2), (2, 1)), mat((2, 2), (2, 1)), False),  # empty never overlaps
        (mat((2, 2), (2, 1)), mat((2, 0), (1, 1)), False),
    ],
)
def test_overlaps(a, b, expected):
    assert overlaps(a, b) is expected
    assert overlaps(b, a) is expected


@pytest.mark.parametrize(
    "shape, strides, c_contig, f_contig",
    [
        ((3, 4), (4, 1), True, False),
        ((3, 4), (1, 3), False, True),
        ((3, 4), (8, 1), False, False),  # padded rows
        ((3, 4), (1, 6), False, False),  # padded columns
        ((3, 4), (4, 2), False, False),
        ((1, 4), (99, 1), True, True),  # single row: row stride irrelevant; also dense column-major
        ((1, 4), (4, 1), True, True),
        ((1, 4), (1, 1), True, True),
        ((1, 4), (1, 2), False, False),  # single row, but its elements are spaced out
        ((3, 1), (1, 77), True, True),  # single column
        ((3, 1), (2, 1), False, False),
        ((1, 1), (5, 7), True, True),
        ((0, 4), (123, 45), True, True),  # empty, as in NumPy
        ((3, 4), (-4, 1), False, False),
    ],
)
def test_contiguity(shape, strides, c_contig, f_contig):
    m = mat(shape, strides)
    assert m.is_c_contiguous is c_contig
    assert m.is_f_contiguous is f_contig


@pytest.mark.parametrize("order", ["C", "F"])
def test_contiguity_agrees_with_numpy(order):
    a = np.zeros((3, 5), np.float32, order=order)
    for view in (a, a[:, :1], a[:1, :], a[::2], a[:, ::2], a.T, a[::-1]):
        if view.ndim != 2:
            continue
        m = mat(view.shape, tuple(s // view.itemsize for s in view.strides))
        assert m.is_c_contiguous == view.flags.c_contiguous, (view.shape, view.strides)
        assert m.is_f_contiguous == view.flags.f_contiguous, (view.shape, view.strides)


def test_matrix_is_frozen_and_compares_without_obj():
    a, b = mat((2, 2), (2, 1)), mat((2, 2), (2, 1))
    with pytest.raises(AttributeError):
        a.ptr = 0  # type: ignore[misc]
    assert a == b
    assert "obj" not in repr(a)
