"""CPU tests of what the C++ entry queues for a call: operand pointers, layouts, copies, the kernel.

The `record` runtime hook (``fastgemm._C._set_runtime_hooks``) pretends a GPU of a given compute
capability that owns every address, and makes the entry log the work it would queue instead of
queuing it: ``("gemm", kernel, (M, N, K, A, lda, a_col, B, ldb, b_col, C, ldc, alpha, beta,
stream, c_col))``, ``("alloc", "", (ptr, rows, cols, ld))``, ``("copy", "", (src, rows, cols, rs, cs, dst,
dst_ld))``, ``("pad", "", (src, rows, cols, rs, dst, dst_ld, dst_rows, dst_cols))``, ``("scale", "", (C, rows, cols, ld, beta, stream))`` and ``("wait", "", (producer,
consumer))``; a call with temporaries first reserves one allocation for them all, ``("reserve", "",
(bytes, itemsize))``, which the fixture checks against the allocations that follow and leaves out. The arrays are fakes exporting ``__cuda_array_interface__`` with made-up addresses;
nothing is dereferenced, so this runs the same with or without a GPU.
"""

from __future__ import annotations

import pytest

import fastgemm

PTR_A, PTR_B, PTR_C = 0x1000_0000, 0x2000_0000, 0x3000_0000
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}
TYPESTR = {"float32": "<f4", "float16": "<f2"}


class Fake:
    def __init__(self, shape, dtype="float32", ptr=PTR_A, strides=None, stream=None):
        itemsize = ITEMSIZE[dtype]
        self.__cuda_array_interface__ = {
            "version": 3,
            "shape": tuple(shape),
            "typestr": TYPESTR[dtype],
            "data": (ptr, False),
            "strides": None if strides is None else tuple(s * itemsize for s in strides),
            "stream": stream,
        }


def row(shape, dtype="float32", ptr=PTR_A, **kw):
    return Fake(shape, dtype, ptr, None, **kw)


def col(shape, dtype="float32", ptr=PTR_A, **kw):
    return Fake(shape, dtype, ptr, (1, shape[0]), **kw)


def _take_checked():
    """The logged work, its reservation (if any) checked to be the sum of the temporaries' 256-byte
    rounded sizes and left out."""
    log = fastgemm._C._take_recorded()
    at = [i for i, (op, _, _) in enumerate(log) if op == "reserve"]
    assert len(at) <= 1
    if at:
        (_, _, (nbytes, itemsize)) = log.pop(at[0])
        # after the waits on producer streams, before the temporaries it holds
        assert all(op == "wait" for op, _, _ in log[: at[0]])
        allocs = [args for op, _, args in log[at[0] :] if op == "alloc"]
        assert allocs and all(op != "alloc" for op, _, _ in log[: at[0]])
        assert nbytes == sum(-(-rows * ld * itemsize // 256) * 256 for _, rows, _, ld in allocs)
    return log


@pytest.fixture
def recorded():
    """Pretend one sm_90 GPU owning every address; returns a function giving the logged work."""
    fastgemm._C._set_runtime_hooks(device_count=1, pointer_device=0, cc=90, record=True)
    fastgemm._C._take_recorded()
    yield _take_checked
    fastgemm._C._set_runtime_hooks()
    fastgemm._C._take_recorded()


def auto(M, N, K, dtype, alignment, order="CC"):
    return fastgemm.select(M, N, K, dtype, cc=90, alignment=alignment, order=order)


_M, _N, _K = 4, 8, 12
# (A, B, C layouts) -> the kernel's problem and operands: (M, N, K, A, lda, a_col, B, ldb, b_col,
# C, ldc). An F-ordered C is C^T = B^T A^T with a row-major C^T: the kernel sees an N x M problem,
# B first, both operands read transposed.
LAYOUTS = {
    "row-row-row": (_M, _N, _K, PTR_A, _K, 0, PTR_B, _N, 0, PTR_C, _N),
    "row-row-col": (_N, _M, _K, PTR_B, _N, 1, PTR_A, _K, 1, PTR_C, _M),
    "col-col-col": (_N, _M, _K, PTR_B, _K, 0, PTR_A, _M, 0, PTR_C, _M),
    "col-col-row": (_M, _N, _K, PTR_A, _M, 1, PTR_B, _K, 1, PTR_C, _N),
}


@pytest.mark.parametrize("layouts", sorted(LAYOUTS))
def test_layouts(recorded, layouts):
    a, b, c = ({"row": row, "col": col}[x] for x in layouts.split("-"))
    fastgemm.sgemm(a((_M, _K), ptr=PTR_A), b((_K, _N), ptr=PTR_B), c((_M, _N), ptr=PTR_C), 2.0, 0.5)
    expected = LAYOUTS[layouts]
    # the kernel's problem and layouts (its A and B column-major flags) decide the plan
    name = auto(*expected[:3], "float32", 16, "CF"[expected[5]] + "CF"[expected[8]]).kernel.name
    assert recorded() == [("gemm", name, (*expected, 2, 0.5, 0, 0))]


def test_explicit_stream_and_forced_kernel(recorded):
    M, N, K = 4, 8, 12
    fastgemm.sgemm(
        row((M, K), ptr=PTR_A),
        row((K, N), ptr=PTR_B),
        row((M, N), ptr=PTR_C),
        kernel="sgemm_v01_naive",
        stream=0x77,
    )
    assert recorded() == [
        ("gemm", "sgemm_v01_naive", (M, N, K, PTR_A, K, 0, PTR_B, N, 0, PTR_C, N, 1, 0, 0x77, 0))
    ]


def test_temporaries_share_one_reservation():
    # The padded path's three temporaries (A, B, C's work buffer) come out of one reservation.
    fastgemm._C._set_runtime_hooks(device_count=1, pointer_device=0, cc=90, record=True)
    try:
        fastgemm._C._take_recorded()
        M = N = K = 1031
        fastgemm.hgemm(
            row((M, K), "float16", PTR_A), row((K, N), "float16", PTR_B), row((M, N), "float16", PTR_C)
        )
        log = fastgemm._C._take_recorded()
        # Each temporary's rows are 128 bytes apart at least (1031 fp16 columns: a pitch of 1088).
        assert log[0] == ("reserve", "", (3 * -(-1031 * 1088 * 2 // 256) * 256, 2))
        assert [op for op, _, _ in log].count("alloc") == 3
    finally:
        fastgemm._C._set_runtime_hooks()
        fastgemm._C._take_recorded()


def test_reservation_follows_the_waits():
    # A producer stream is waited on before the temporaries' one allocation is made, so that a
    # capture the wait joins owns that allocation too.
    fastgemm._C._set_runtime_hooks(device_count=1, pointer_device=0, cc=90, record=True)
    try:
        fastgemm._C._take_recorded()
        M = N = K = 1031
        A = row((M, K), "float16", PTR_A, stream=0x55)
        fastgemm.hgemm(A, row((K, N), "float16", PTR_B), row((M, N), "float16", PTR_C), stream=0x77)
        ops = [op for op, _, _ in fastgemm._C._take_recorded()]
        assert ops[:3] == ["wait", "reserve", "alloc"], ops
    finally:
        fastgemm._C._set_runtime_hooks()
        fastgemm._C._take_recorded()


def test_strided_input_is_copied_row_major(recorded):
    M, N, K = 4, 8, 12
    A = Fake((M, K), ptr=PTR_A, strides=(2 * K, 2))  # every other column of a wider matrix
    fastgemm.sgemm(A, row((K, N), ptr=PTR_B), row((M, N), ptr=PTR_C))
    log = recorded()
    assert [op for op, _, _ in log] == ["alloc", "copy", "gemm"]
    tmp, rows, cols, ld = log[0][2]
    assert (rows, cols, ld) == (M, K, 32)  # 12 floats = 48 bytes: rows 128 bytes apart
    assert log[1][2] == (PTR_A, M, K, 2 * K, 2, tmp, ld)
    assert log[2][2][3:6] == (tmp, ld, 0)


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_padded_path(recorded, beta):
    # Odd extents: 2-byte aligned rows. auto runs the fastest rung on 16-byte aligned copies of
    # A and B, into an aligned work buffer (a copy of C only when beta != 0), copied back to C.
    M = N = K = 1031
    sel = auto(M, N, K, "float16", 2)
    assert sel.pad, sel
    fastgemm.hgemm(
        row((M, K), "float16", PTR_A), row((K, N), "float16", PTR_B), row((M, N), "float16", PTR_C), 1.0, beta
    )
    log = recorded()
    ops = [op for op, _, _ in log]
    ld = 1088  # 1031 halves rounded up to 128 bytes
    a_tmp, b_tmp = log[0][2][0], log[2][2][0]
    assert log[0][2] == (a_tmp, M, K, ld) and log[1][2] == (PTR_A, M, K, K, 1, a_tmp, ld)
    assert log[2][2] == (b_tmp, K, N, ld) and log[3][2] == (PTR_B, K, N, N, 1, b_tmp, ld)
    work = log[4][2][0]
    if beta:
        assert ops == ["alloc", "copy", "alloc", "copy", "alloc", "copy", "gemm", "copy"]
        assert log[5][2] == (PTR_C, M, N, N, 1, work, ld)
    else:  # beta = 0 never reads C
        assert ops == ["alloc", "copy", "alloc", "copy", "alloc", "gemm", "copy"]
    gemm = log[-2]
    assert gemm[1] == sel.kernel.name
    assert gemm[2][:11] == (M, N, K, a_tmp, ld, 0, b_tmp, ld, 0, work, ld)
    assert log[-1][2] == (work, M, N, ld, 1, PTR_C, N)


def test_padded_path_column_major_a_keeps_its_layout(recorded):
    M = N = K = 1031
    fastgemm.hgemm(
        col((M, K), "float16", PTR_A), row((K, N), "float16", PTR_B), row((M, N), "float16", PTR_C)
    )
    log = recorded()
    a_tmp = log[0][2][0]
    assert log[0][2] == (a_tmp, K, M, 1088)  # stored as K rows of M, 128 bytes apart at least
    assert log[1][2] == (PTR_A, K, M, M, 1, a_tmp, 1088)
    gemm = next(e for e in log if e[0] == "gemm")
    assert gemm[2][3:6] == (a_tmp, 1088, 1)


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_f32_padded_path_grows_the_problem(recorded, beta):
    # fp32, odd extents, large: A and B copied zero-filled to 4096 x 4112 and 4112 x 4100, the
    # kernel runs the grown problem into a work buffer (zero-filled copy of C only when beta != 0),
    # whose M x N corner is copied back to C.
    M, N, K = 4095, 4097, 4099
    sel = auto(M, N, K, "float32", 4)
    assert sel.pad and "4096x4100x4112" in sel.reason
    fastgemm.sgemm(row((M, K), ptr=PTR_A), row((K, N), ptr=PTR_B), row((M, N), ptr=PTR_C), 1.0, beta)
    log = recorded()
    ops = [op for op, _, _ in log]
    a_tmp, b_tmp, work = log[0][2][0], log[2][2][0], log[4][2][0]
    ld = 4128  # each temporary's rows 128 bytes apart at least: 4112 and 4100 floats round up to 4128
    assert log[0][2] == (a_tmp, 4096, 4112, ld) and log[1][2] == (PTR_A, M, K, K, a_tmp, ld, 4096, 4112)
    assert log[2][2] == (b_tmp, 4112, 4100, ld) and log[3][2] == (PTR_B, K, N, N, b_tmp, ld, 4112, 4100)
    assert log[4][2] == (work, 4096, 4100, ld)
    if beta:
        assert ops == ["alloc", "pad", "alloc", "pad", "alloc", "pad", "gemm", "copy"]
        assert log[5][2] == (PTR_C, M, N, N, work, ld, 4096, 4100)
    else:
        assert ops == ["alloc", "pad", "alloc", "pad", "alloc", "gemm", "copy"]
    gemm = log[-2]
    assert gemm[1] == sel.kernel.name
    assert gemm[2][:11] == (4096, 4100, 4112, a_tmp, ld, 0, b_tmp, ld, 0, work, ld)
    assert log[-1][2] == (work, M, N, ld, 1, PTR_C, N)


def test_f32_padded_path_column_major_a(recorded):
    # A column-major (M-contiguous, 4095 rows: under-aligned) is stored as K rows of M: it grows to
    # 4112 rows of 4096; C aligned and not grown is written in place.
    M, N, K = 4095, 4096, 4096
    fastgemm.sgemm(col((M, K), ptr=PTR_A), row((K, N), ptr=PTR_B), row((M, N), ptr=PTR_C))
    log = recorded()
    a_tmp = log[0][2][0]
    assert log[0][2] == (a_tmp, 4096, 4096, 4096) and log[1][2] == (PTR_A, K, M, M, a_tmp, 4096, 4096, 4096)
    gemm = next(e for e in log if e[0] == "gemm")
    assert gemm[2][:6] == (4096, 4096, 4096, a_tmp, 4096, 1)
    assert [op for op, _, _ in log][-2:] == ["gemm", "copy"]  # M grew: C through the work buffer


def test_f32_k_contiguous_under_aligned_runs_in_place(recorded):
    # An odd K leaves a row-major A 4-byte aligned, but the CUDA-core rungs copy a K-contiguous
    # operand 4 bytes at a time anyway: no padded path.
    M, N, K = 4096, 4096, 4093
    fastgemm.sgemm(row((M, K), ptr=PTR_A), row((K, N), ptr=PTR_B), row((M, N), ptr=PTR_C))
    log = recorded()
    assert [op for op, _, _ in log] == ["gemm"]
    assert log[0][2][:6] == (M, N, K, PTR_A, K, 0)


@pytest.mark.parametrize("c_order", ["C", "F"])
def test_alpha_zero_scales_c(recorded, c_order):
    M, N, K = 4, 8, 12
    C = row((M, N), ptr=PTR_C) if c_order == "C" else col((M, N), ptr=PTR_C)
    fastgemm.sgemm(row((M, K), ptr=PTR_A), row((K, N), ptr=PTR_B), C, 0.0, 3.0)
    rows, cols = (M, N) if c_order == "C" else (N, M)
    assert recorded() == [("scale", "", (PTR_C, rows, cols, cols, 3, 0))]


def test_k_zero_scales_c(recorded):
    fastgemm.sgemm(row((4, 0), ptr=0), row((0, 8), ptr=0), row((4, 8), ptr=PTR_C), 1.0, 0.0)
    assert recorded() == [("scale", "", (PTR_C, 4, 8, 8, 0, 0))]


def test_empty_output_queues_nothing(recorded):
    fastgemm.sgemm(row((0, 12)), row((12, 8), ptr=PTR_B), row((0, 8), ptr=PTR_C))
    assert recorded() == []


def test_producer_streams_are_waited_on(recorded):
    M, N, K = 4, 8, 12
    A = row((M, K), ptr=PTR_A, stream=5)
    B = row((K, N), ptr=PTR_B, stream=9)  # the launch stream itself: nothing to wait for
    fastgemm.sgemm(A, B, row((M, N), ptr=PTR_C), stream=9)
    log = recorded()
    assert log[0] == ("wait", "", (5, 9))
    assert [op for op, _, _ in log] == ["wait", "gemm"]


def test_forced_kernel_checked_before_any_work(recorded):
    with pytest.raises(RuntimeError, match="needs 16-byte aligned operands"):
        fastgemm.hgemm(
            row((64, 63), "float16", PTR_A),
            row((63, 64), "float16", PTR_B),
            row((64, 64), "float16", PTR_C),
            kernel="hgemm_v09_raster",
        )
    assert recorded() == []


def test_forced_kernel_on_an_older_gpu():
    fastgemm._C._set_runtime_hooks(device_count=1, pointer_device=0, cc=75, record=True)
    try:
        with pytest.raises(RuntimeError, match="needs compute capability 8.0; this GPU is 7.5"):
            fastgemm.sgemm(
                row((4, 12)), row((12, 8), ptr=PTR_B), row((4, 8), ptr=PTR_C), kernel="sgemm_v09_cp_async"
            )
        assert fastgemm._C._take_recorded() == []
    finally:
        fastgemm._C._set_runtime_hooks()


def test_plan_cached_and_select_reads_it(recorded):
    # select() without cc answers from the plan a call of this problem class runs; the call
    # then finds it in the cache, and a repeated call adds nothing.
    M, N, K = 96, 160, 64
    before = fastgemm._C.plan_cache_size()
    sel = fastgemm.select(M, N, K, "float32")
    assert fastgemm._C.plan_cache_size() == before + 1
    for _ in range(3):
        fastgemm.sgemm(row((M, K), ptr=PTR_A), row((K, N), ptr=PTR_B), row((M, N), ptr=PTR_C))
    assert fastgemm._C.plan_cache_size() == before + 1
    assert {e[1] for e in recorded()} == {sel.kernel.name}


class TorchLikeStream:
    cuda_stream = 0x51


class CupyLikeStream:
    ptr = 0x52


@pytest.mark.parametrize(
    "stream, handle", [(TorchLikeStream(), 0x51), (CupyLikeStream(), 0x52), (0x53, 0x53), (None, 0)]
)
def test_stream_objects(recorded, stream, handle):
    import numpy as np

    fastgemm.sgemm(
        row((4, 12)),
        row((12, 8), ptr=PTR_B),
        row((4, 8), ptr=PTR_C),
        np.float32(2.0),
        np.float64(0.25),
        stream=stream,
    )
    ((op, _, args),) = recorded()
    assert op == "gemm" and args[-4:-1] == (2, 0.25, handle)


def test_alpha_below_fp32_range_still_reads_a_and_b(recorded):
    # alpha == 0 (not reading A and B) is decided on the value passed, before it becomes fp32.
    fastgemm.sgemm(row((4, 12)), row((12, 8), ptr=PTR_B), row((4, 8), ptr=PTR_C), 1e-300, 1.0)
    assert [op for op, _, _ in recorded()] == ["gemm"]


@pytest.mark.parametrize(
    "dtype, M, N, kernel",
    [
        ("float16", 4096, 16, "hgemm_v40_split_k_deep_ring"),
        ("float16", 16384, 32, "hgemm_v26_split_k_32rows"),
        ("float16", 8192, 64, "hgemm_v42_split_k_wide_deep_ring"),
        ("float32", 4096, 8, "sgemm_v19_split_k_ring"),
    ],
)
def test_narrow_output_runs_transposed(recorded, dtype, M, N, kernel):
    # A flip rule runs C^T = B^T A^T: B^T first (B read transposed), then A^T, C written
    # column-major (c_col = 1) with C's own leading dimension.
    K = 4096
    sel = auto(M, N, K, dtype, 16)
    if sel.kernel.name != kernel:
        pytest.skip(f"{kernel} is not in this build's sm_90 rules for {M}x{N}x{K}")
    assert sel.flip and "transposed problem" in sel.reason
    fastgemm.gemm(row((M, K), dtype, PTR_A), row((K, N), dtype, PTR_B), row((M, N), dtype, PTR_C), 1.5, 0.0)
    assert recorded() == [("gemm", kernel, (N, M, K, PTR_B, N, 1, PTR_A, K, 1, PTR_C, N, 1.5, 0, 0, 1))]
    # An F-ordered C: the swap makes it a row-major C^T (N x M, few rows), so no flip is needed.
    fastgemm.gemm(row((M, K), dtype, PTR_A), row((K, N), dtype, PTR_B), col((M, N), dtype, PTR_C))
    ((_op, _name, args),) = recorded()
    assert args[:3] == (N, M, K) and args[-1] == 0


@pytest.mark.parametrize(
    "dtype, kernel", [("float16", "hgemm_v40_split_k_deep_ring"), ("float32", "sgemm_v19_split_k_ring")]
)
def test_one_column_runs_as_one_row(recorded, dtype, kernel):
    # Contiguous B (K x 1) and C (M x 1), strides (1, 1): columns, their leading dimensions padded
    # to 16 bytes (not the unit row stride, which would make them 1-element aligned); C
    # column-major makes it C^T = B^T A^T, a 1 x M decode problem.
    M, K = 4096, 4104
    if fastgemm.select(M, 1, K, dtype, cc=90).kernel.name != kernel:
        pytest.skip(f"{kernel} is not in this build's sm_90 rules")
    per16 = 16 // (4 if dtype == "float32" else 2)
    fastgemm.gemm(
        row((M, K), dtype, PTR_A), Fake((K, 1), dtype, PTR_B, (1, 1)), Fake((M, 1), dtype, PTR_C, (1, 1))
    )
    ld_b = -(-K // per16) * per16
    assert recorded() == [("gemm", kernel, (1, M, K, PTR_B, ld_b, 0, PTR_A, K, 1, PTR_C, M, 1.0, 0, 0, 0))]


def test_flip_gives_way_to_padding(recorded):
    # Operands aligned below a flip kernel's 16 bytes (v22's): where the large operand is itself
    # under-aligned (alignment=2 is every operand's), or holds fewer than 2^24 elements, no plan
    # both pads and flips; on sm_90 the under-aligned rules that flip (v37 / v38 transposed) read
    # such operands in place instead.
    sel = auto(4097, 8, 4096, "float16", 2)
    assert sel.flip and not sel.pad and sel.kernel.name == "hgemm_v37_split_k_reduce_unaligned"
    for shape in [(4097, 1, 4096), (100, 8, 4096), (8192, 16, 8192), (33, 12345, 777), (2048, 6, 8184)]:
        sel = auto(*shape, "float16", 2 if shape[1] != 6 else None)
        assert not (sel.pad and sel.flip), (shape, sel)
        assert not sel.flip or sel.kernel.alignment == 2, (shape, sel)


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_tall_narrow_unaligned_pads_then_flips(recorded, beta):
    # A tall narrow output on an aligned A whose 4 columns leave B's and C's rows 8 bytes: B is
    # copied into 128-byte rows, C goes through a work buffer of 128-byte rows (a copy of C only
    # when beta != 0), and the decode rung runs C^T = B^T A^T on them (B's copy read transposed,
    # A in place, the work buffer written column-major), then the buffer is copied back to C.
    M, N, K = 17408, 4, 4096
    sel = auto(M, N, K, "float16", None)
    assert sel.pad and sel.flip and sel.kernel.alignment == 16, sel
    assert "copied first into temporaries with 128-byte rows" in sel.reason
    fastgemm.hgemm(
        row((M, K), "float16", PTR_A), row((K, N), "float16", PTR_B), row((M, N), "float16", PTR_C), 1.0, beta
    )
    log = recorded()
    ops = [op for op, _, _ in log]
    b_tmp, work = log[0][2][0], log[2][2][0]
    assert log[0][2] == (b_tmp, K, N, 64) and log[1][2] == (PTR_B, K, N, N, 1, b_tmp, 64)
    assert log[2][2] == (work, M, N, 64)
    if beta:
        assert ops == ["alloc", "copy", "alloc", "copy", "gemm", "copy"]
        assert log[3][2] == (PTR_C, M, N, N, 1, work, 64)
    else:
        assert ops == ["alloc", "copy", "alloc", "gemm", "copy"]
    gemm = log[-2]
    assert gemm[1] == sel.kernel.name
    assert gemm[2] == (N, M, K, b_tmp, 64, 1, PTR_A, K, 1, work, 64, 1.0, beta, 0, 1)
    assert log[-1][2] == (work, M, N, 64, 1, PTR_C, N)


def test_tall_narrow_unaligned_c_alone_goes_through_a_work_buffer(recorded):
    # B column-major (K contiguous, aligned): only C's 8-byte rows are copied, through a work
    # buffer the transposed run writes column-major.
    M, N, K = 17408, 4, 4096
    sel = auto(M, N, K, "float16", None, order="CF")
    assert sel.pad and sel.flip, sel
    fastgemm.gemm(row((M, K), "float16", PTR_A), col((K, N), "float16", PTR_B), row((M, N), "float16", PTR_C))
    log = recorded()
    assert [op for op, _, _ in log] == ["alloc", "gemm", "copy"]
    work = log[0][2][0]
    assert log[0][2] == (work, M, N, 64)
    assert log[1][1] == sel.kernel.name
    assert log[1][2][:11] == (N, M, K, PTR_B, K, 0, PTR_A, K, 1, work, 64)
    assert log[2][2] == (work, M, N, 64, 1, PTR_C, N)


def _row_major_call(recorded, M, N, K):
    """fp16 hgemm on row-major A, B and C at PTR_A, PTR_B, PTR_C: auto's selection for the
    problem (its reason) and the recorded work of the call."""
    sel = auto(M, N, K, "float16", None)
    fastgemm.hgemm(
        row((M, K), "float16", PTR_A), row((K, N), "float16", PTR_B), row((M, N), "float16", PTR_C)
    )
    return sel, recorded()


def test_rows_off_128_bytes_copied_where_it_pays(recorded):
    # fp16 4096x1000x4096, row-major: B's rows (1000 halves, 2000 bytes) are 16- but not 128-byte
    # aligned, and the output has 4096 rows: auto copies B into a temporary whose rows are 1024
    # halves apart before the TMA rung reads it; A's rows (8192 bytes) stay as they are.
    M, N, K = 4096, 1000, 4096
    sel, log = _row_major_call(recorded, M, N, K)
    assert not sel.pad and "B's rows are off 128 bytes" in sel.reason, sel.reason
    assert [op for op, _, _ in log] == ["alloc", "copy", "gemm"]
    b_tmp = log[0][2][0]
    assert log[0][2] == (b_tmp, K, N, 1024) and log[1][2] == (PTR_B, K, N, N, 1, b_tmp, 1024)
    assert log[2][1] == sel.kernel.name
    assert log[2][2][:11] == (M, N, K, PTR_A, K, 0, b_tmp, 1024, 0, PTR_C, N)


@pytest.mark.parametrize(
    "M, N, K, pitch",
    [
        # fp16 3000^3: B's rows (6000 bytes) are only 16-byte aligned, and the output has 3000
        # rows: B is copied. A's rows are 16-byte aligned too, but 3000 columns are too few for
        # A's copy.
        (3000, 3000, 3000, 3008),
        # fp16 3000x3080x3000: both operands' rows are only 16-byte aligned (6000 and 6160
        # bytes) on 3080 columns, enough for A's copy alone. B is copied; A is not (with B
        # copied, A's copy cost more than it saved on every point of
        # results/sweeps/realign-large-* and realign-shapes-*).
        (3000, 3080, 3000, 3136),
    ],
)
def test_rows_off_128_bytes_copies_b_alone_from_2048_rows(recorded, M, N, K, pitch):
    sel, log = _row_major_call(recorded, M, N, K)
    assert "B's rows are off 128 bytes, so it is" in sel.reason, sel.reason
    assert "A's rows are" not in sel.reason and "A's and B's" not in sel.reason, sel.reason
    assert [op for op, _, _ in log] == ["alloc", "copy", "gemm"]
    b_tmp = log[0][2][0]
    assert log[0][2] == (b_tmp, K, N, pitch) and log[1][2] == (PTR_B, K, N, N, 1, b_tmp, pitch)
    assert log[2][2][:11] == (M, N, K, PTR_A, K, 0, b_tmp, pitch, 0, PTR_C, N)


def test_rows_off_128_bytes_column_major_b_keeps_its_layout(recorded):
    # B = W^T of a 1000 x 4104 weight (K-contiguous rows of 8208 bytes): copied as N rows of K,
    # 4160 halves apart.
    M, N, K = 4096, 1000, 4104
    fastgemm.hgemm(
        row((M, K), "float16", PTR_A), col((K, N), "float16", PTR_B), row((M, N), "float16", PTR_C)
    )
    log = recorded()
    ops = [op for op, _, _ in log]
    assert ops.count("copy") == 1 and ops[-1] == "gemm", ops  # A's rows, off 128 bytes too, stay
    tmp = log[ops.index("alloc")][2][0]
    assert log[ops.index("alloc")][2] == (tmp, N, K, 4160)
    assert log[-1][2][6:9] == (tmp, 4160, 1)


def test_rows_off_128_bytes_wide_output_copies_a(recorded):
    # A wide output (6664 columns) where both operands' rows are off 128 bytes (K = 3048: 6096-byte
    # rows of A; N = 6664: 13328-byte rows of B): A, the small operand, is copied (3072 halves
    # apart); B is not (1280 rows).
    M, N, K = 1280, 6664, 3048
    sel, log = _row_major_call(recorded, M, N, K)
    assert "A's rows are off 128 bytes" in sel.reason, sel.reason
    assert [op for op, _, _ in log] == ["alloc", "copy", "gemm"]
    a_tmp = log[0][2][0]
    assert log[0][2] == (a_tmp, M, K, 3072) and log[1][2] == (PTR_A, M, K, K, 1, a_tmp, 3072)
    assert log[2][2][:11] == (M, N, K, a_tmp, 3072, 0, PTR_B, N, 0, PTR_C, N)


@pytest.mark.parametrize(
    "M, N, K, dtype",
    [
        (1536, 1000, 8192, "float16"),  # B off 128 bytes, but 1536 rows: the copy costs too much
        (4000, 4000, 4000, "float16"),  # rows of 8000 bytes, 64-byte aligned: read at full speed
        (6000, 6000, 6000, "float16"),  # rows of 12000 bytes, 32-byte aligned: whole sectors
        (1280, 6000, 3024, "float16"),  # A's rows 32-byte aligned (6048 bytes): not copied
        (3072, 1000, 2048, "float16"),  # fewer than 2^33 multiply-adds
        (4096, 1000, 4096, "float32"),  # the CUDA-core rungs read 16-byte rows at full speed
        (4096, 1024, 4096, "float16"),  # every row on 128 bytes
        (1280, 6656, 3048, "float16"),  # only A's rows off 128 bytes: they cost little alone
    ],
)
def test_rows_off_128_bytes_left_in_place(recorded, M, N, K, dtype):
    assert "temporary with 128-byte rows" not in auto(M, N, K, dtype, None).reason
    fn = fastgemm.hgemm if dtype == "float16" else fastgemm.sgemm
    fn(row((M, K), dtype, PTR_A), row((K, N), dtype, PTR_B), row((M, N), dtype, PTR_C))
    assert [op for op, _, _ in recorded()] == ["gemm"]


def test_rows_off_128_bytes_dev_switch(recorded, monkeypatch):
    # FASTGEMM_DEV_REALIGN=0 (sweeps) runs the operands in place; the plan cache is cleared between.
    monkeypatch.setenv("FASTGEMM_DEV_REALIGN", "0")
    fastgemm._C._clear_plan_cache()
    try:
        assert "temporary with 128-byte rows" not in auto(4096, 1000, 4096, "float16", None).reason
        fastgemm.hgemm(
            row((4096, 4096), "float16", PTR_A),
            row((4096, 1000), "float16", PTR_B),
            row((4096, 1000), "float16", PTR_C),
        )
        assert [op for op, _, _ in recorded()] == ["gemm"]
    finally:
        monkeypatch.delenv("FASTGEMM_DEV_REALIGN")
        fastgemm._C._clear_plan_cache()
