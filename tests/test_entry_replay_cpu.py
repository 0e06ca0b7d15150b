"""CPU tests that replay the work the C++ entry queues for a call on real numbers.

The `record` runtime hook (see test_entry_cpu.py) logs each allocation, copy, padded copy, scale
and GEMM a call would queue. Here every operand is a fake CUDA array backed by a numpy buffer at
a made-up address; the log is then executed on those buffers (a GEMM by its recorded M, N, K,
pointers, leading dimensions and layouts), and C must come out as alpha A @ B + beta C. So every
path of the entry's copies (strided operands, the F-order swap, the padded path, its work buffer
for C, the copies for 128-byte rows and the transposed runs, alone and together) is checked for
what it computes, not only for the order of its steps.
"""

from __future__ import annotations

import itertools

import pytest

import fastgemm

np = pytest.importorskip("numpy")

ITEMSIZE = {"float32": 4, "float16": 2}
TYPESTR = {"float32": "<f4", "float16": "<f2"}


class Memory:
    """Buffers at made-up device addresses: base address -> float64 elements."""

    def __init__(self, itemsize: int) -> None:
        self.itemsize = itemsize
        self.buffers: dict[int, np.ndarray] = {}
        self.next = 0x1000_0000

    def new(self, elements: int, fill: float = np.nan) -> int:
        base = self.next
        self.next += (elements * self.itemsize + 0xFFFF) // 0x10000 * 0x10000 + 0x10000
        self.buffers[base] = np.full(elements, fill)
        return base

    def at(self, ptr: int) -> tuple[np.ndarray, int]:
        """The buffer holding address ptr, and ptr's element index in it."""
        for base, buf in self.buffers.items():
            if base <= ptr < base + buf.size * self.itemsize:
                assert (ptr - base) % self.itemsize == 0
                return buf, (ptr - base) // self.itemsize
        raise AssertionError(f"address {ptr:#x} is in no buffer")

    def adopt(self, ptr: int, elements: int) -> None:
        """A temporary the log allocated (its address made up by the hook)."""
        self.buffers[ptr] = np.full(elements, np.nan)


class Fake:
    """A CUDA array interface over `elements` of memory at ptr, with element strides."""

    def __init__(self, ptr: int, shape: tuple[int, int], strides: tuple[int, int], dtype: str) -> None:
        size = ITEMSIZE[dtype]
        self.__cuda_array_interface__ = {
            "version": 3,
            "shape": shape,
            "typestr": TYPESTR[dtype],
            "data": (ptr, False),
            "strides": (strides[0] * size, strides[1] * size),
            "stream": None,
        }


def operand(mem: Memory, rows: int, cols: int, order: str, offset: int, pitch: int, rng) -> tuple:
    """A rows x cols operand of random values in a larger buffer: `order` C or F, its leading
    dimension `pitch` elements past the contiguous one, starting `offset` elements in. Returns
    (fake array, element getter (i, j) -> value, numpy matrix of its values)."""
    ld = (cols if order == "C" else rows) + pitch
    lines = rows if order == "C" else cols
    base = mem.new(offset + lines * ld + 8)
    buf, _ = mem.at(base)
    values = rng.standard_normal((rows, cols))
    for i, j in itertools.product(range(rows), range(cols)):
        buf[offset + (i * ld + j if order == "C" else j * ld + i)] = values[i, j]
    strides = (ld, 1) if order == "C" else (1, ld)
    dtype = "float32" if mem.itemsize == 4 else "float16"
    return Fake(base + offset * mem.itemsize, (rows, cols), strides, dtype), values


def replay(mem: Memory, log: list) -> None:
    """Executes the recorded work on mem's buffers."""

    def element(ptr: int, index: int) -> tuple[np.ndarray, int]:
        buf, at = mem.at(ptr)
        return buf, at + index

    for op, _kernel, args in log:
        if op == "reserve" or op == "wait":
            continue
        if op == "alloc":
            ptr, rows, _cols, ld = (int(x) for x in args)
            mem.adopt(ptr, rows * ld)
        elif op == "copy":
            src, rows, cols, rs, cs, dst, dst_ld = (int(x) for x in args)
            for i, j in itertools.product(range(rows), range(cols)):
                sb, si = element(src, i * rs + j * cs)
                db, di = element(dst, i * dst_ld + j)
                db[di] = sb[si]
        elif op == "pad":
            src, rows, cols, rs, dst, dst_ld, dst_rows, dst_cols = (int(x) for x in args)
            for i, j in itertools.product(range(dst_rows), range(dst_cols)):
                db, di = element(dst, i * dst_ld + j)
                if i < rows and j < cols:
                    sb, si = element(src, i * rs + j)
                    db[di] = sb[si]
                else:
                    db[di] = 0.0
        elif op == "scale":
            c, rows, cols, ld, beta = args[:5]
            for i, j in itertools.product(range(int(rows)), range(int(cols))):
                cb, ci = element(int(c), i * int(ld) + j)
                cb[ci] = 0.0 if beta == 0 else beta * cb[ci]
        elif op == "gemm":
            M, N, K, a, lda, a_col, b, ldb, b_col, c, ldc, alpha, beta, _stream, c_col = args
            M, N, K, lda, ldb, ldc = (int(x) for x in (M, N, K, lda, ldb, ldc))

            def read(ptr, ld, col, rows, cols):
                out = np.empty((rows, cols))
                for i, j in itertools.product(range(rows), range(cols)):
                    bb, bi = element(int(ptr), (j * ld + i) if col else (i * ld + j))
                    out[i, j] = bb[bi]
                return out

            product = read(a, lda, a_col, M, K) @ read(b, ldb, b_col, K, N)
            for i, j in itertools.product(range(M), range(N)):
                cb, ci = element(int(c), (j * ldc + i) if c_col else (i * ldc + j))
                cb[ci] = alpha * product[i, j] + (beta * cb[ci] if beta != 0 else 0.0)
        else:
            raise AssertionError(f"unknown operation {op}")


@pytest.fixture
def recording():
    fastgemm._C._set_runtime_hooks(device_count=1, pointer_device=0, cc=90, record=True)
    fastgemm._C._take_recorded()
    yield
    fastgemm._C._set_runtime_hooks()
    fastgemm._C._take_recorded()


def check_call(dtype, M, N, K, orders, offsets, pitches, beta, seed=0):
    """One hgemm / sgemm call on fakes of the given layouts, replayed and compared."""
    rng = np.random.default_rng(seed)
    mem = Memory(ITEMSIZE[dtype])
    fa, va = operand(mem, M, K, orders[0], offsets[0], pitches[0], rng)
    fb, vb = operand(mem, K, N, orders[1], offsets[1], pitches[1], rng)
    fc, vc = operand(mem, M, N, orders[2], offsets[2], pitches[2], rng)
    fn = fastgemm.sgemm if dtype == "float32" else fastgemm.hgemm
    fn(fa, fb, fc, 1.5, beta)
    log = fastgemm._C._take_recorded()
    replay(mem, log)
    ptr = fc.__cuda_array_interface__["data"][0]
    strides = [s // mem.itemsize for s in fc.__cuda_array_interface__["strides"]]
    buf, at = mem.at(ptr)
    got = np.array([[buf[at + i * strides[0] + j * strides[1]] for j in range(N)] for i in range(M)])
    want = 1.5 * va @ vb + (beta * vc if beta else 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    return [op for op, _, _ in log]


@pytest.fixture(params=[None, "1"], ids=["rules", "dev-pad"])
def pad_mode(request, monkeypatch):
    """auto as its rules decide, and with FASTGEMM_DEV_PAD=1 (the padded path wherever an
    operand is under-aligned, also on problems below the rules' size for it)."""
    if request.param is not None:
        monkeypatch.setenv("FASTGEMM_DEV_PAD", request.param)
    fastgemm._C._clear_plan_cache()
    yield request.param
    monkeypatch.delenv("FASTGEMM_DEV_PAD", raising=False)
    fastgemm._C._clear_plan_cache()


@pytest.mark.parametrize("beta", [0.0, 0.5])
@pytest.mark.parametrize("orders", ["CCC", "CFC", "FCC", "CCF", "FFF"])
def test_small_problems_all_layouts(recording, pad_mode, orders, beta):
    check_call("float16", 5, 7, 9, orders, (0, 0, 0), (0, 0, 0), beta)
    check_call("float32", 6, 5, 3, orders, (1, 0, 2), (3, 1, 0), beta)


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_offset_and_pitched_operands(recording, pad_mode, beta):
    # A view one element in (under-aligned), B with a pitch off its width, C with a pitch: in
    # place by the rules, through aligned copies (and C's work buffer) with dev-pad; fp32 grows
    # the problem there.
    ops = check_call("float16", 40, 24, 33, "CCC", (1, 0, 0), (0, 3, 5), beta)
    ops += check_call("float16", 300, 6, 64, "CCC", (0, 0, 0), (0, 2, 0), beta)
    ops += check_call("float32", 17, 9, 40, "FCF", (0, 1, 1), (2, 0, 3), beta)
    if pad_mode:
        assert "copy" in ops or "pad" in ops, ops


@pytest.mark.parametrize("beta", [0.0, 0.5])
@pytest.mark.parametrize("c_order", ["C", "F"])
def test_tall_narrow_unaligned_pad_and_flip(recording, pad_mode, c_order, beta):
    # With dev-pad, the padded flip of a small tall narrow output (the rule's size threshold is
    # millions of elements; the rules read this one in place): B's and C's 6-element rows copied,
    # the decode rung transposed on the copies, C copied back.
    sel = fastgemm.select(300, 6, 64, "float16", cc=90, order="CC")
    assert not pad_mode or (sel.flip and sel.pad), sel
    check_call("float16", 300, 6, 64, "CC" + c_order, (0, 0, 0), (0, 0, 0), beta)
