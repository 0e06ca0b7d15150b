"""GPU tests of the SGEMM ladder: every kernel against a float64 reference on fresh random data.

Marker ``gpu``: skipped without a GPU, failing instead under ``FASTGEMM_REQUIRE_GPU=1``.
"""

from __future__ import annotations

import itertools

import pytest
from conftest import require
from gpu_reference import check_gemm, random_matrix

import fastgemm

pytestmark = pytest.mark.gpu

# The fp32-arithmetic kernels; those on the tensor cores (precision tf32x3 / tf32): test_tf32_gpu.py.
SGEMM = [k.name for k in fastgemm.kernels("float32") if k.precision == "ieee"]
SHAPES = [
    (1, 1, 1),
    (1, 513, 257),
    (127, 129, 65),
    (1000, 1000, 1000),
    (2048, 4096, 1024),
    (1531, 2049, 1277),
    (3, 2, 1000),
]


@pytest.fixture
def cp():
    cupy = require("cupy")
    cupy.cuda.set_allocator(None)  # no pooling: out-of-bounds writes must not hide in pool slack
    return cupy


def _runnable(cp, name: str) -> bool:
    info = next(k for k in fastgemm.kernels() if k.name == name)
    return fastgemm.dispatch.check_runnable(info, fastgemm._device_cc(None), 16) is None


def _poisoned(cp, M, N, order="C"):
    C = cp.full((M, N), cp.nan, dtype=cp.float32)
    return cp.asfortranarray(C) if order == "F" else C


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("kernel", SGEMM + ["auto"])
def test_shapes_beta0_poisoned(cp, kernel, shape):
    if kernel != "auto" and not _runnable(cp, kernel):
        pytest.skip(f"{kernel} does not run on this GPU")
    M, N, K = shape
    A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
    C = _poisoned(cp, M, N)  # beta = 0: the NaNs must neither be read nor survive
    need = next((k.alignment for k in fastgemm.kernels() if k.name == kernel), 4)
    try:
        out = fastgemm.sgemm(A, B, C, 1.5, 0.0, kernel=kernel)
    except RuntimeError as exc:  # a forced 16-byte rung may refuse rows that are not 16-byte aligned
        assert f"{need}-byte aligned" in str(exc)
        assert fastgemm.dispatch.alignment_of(K * 4, N * 4) < need
        return
    assert out is C
    check_gemm(cp, A, B, C, 1.5, 0.0)


LAYOUTS = list(itertools.product("CF", repeat=3))


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda t: "".join(t))
@pytest.mark.parametrize("kernel", SGEMM)
def test_layouts_alpha_beta(cp, kernel, layout):
    if not _runnable(cp, kernel):
        pytest.skip(f"{kernel} does not run on this GPU")
    oa, ob, oc = layout
    info = next(k for k in fastgemm.kernels() if k.name == kernel)
    odd = (127, 129, 65) if info.alignment == 4 else (124, 132, 68)  # 16-byte rungs need ld % 4 == 0
    for M, N, K in [odd, (260, 132, 300)]:
        A, B = random_matrix(cp, M, K, "float32", oa), random_matrix(cp, K, N, "float32", ob)
        C0 = random_matrix(cp, M, N, "float32", oc)
        C = C0.copy(order=oc)
        fastgemm.sgemm(A, B, C, -0.75, 0.5, kernel=kernel)
        check_gemm(cp, A, B, C, -0.75, 0.5, C0)


@pytest.mark.parametrize("kernel", SGEMM + ["auto"])
def test_alpha_zero_does_not_read_ab(cp, kernel):
    M, N, K = 67, 45, 33
    A = cp.full((M, K), cp.nan, dtype=cp.float32)
    B = cp.full((K, N), cp.inf, dtype=cp.float32)
    C0 = random_matrix(cp, M, N, "float32")
    C = C0.copy()
    fastgemm.sgemm(A, B, C, 0.0, 2.0, kernel=kernel)
    cp.testing.assert_array_equal(C, 2.0 * C0)
    C[...] = cp.nan
    fastgemm.sgemm(A, B, C, 0.0, 0.0, kernel=kernel)  # beta = 0: zeros, NaNs gone
    assert int(cp.count_nonzero(C)) == 0


@pytest.mark.parametrize("order", "CF")
def test_k_zero_scales_c(cp, order):
    M, N = 33, 17
    A = cp.empty((M, 0), dtype=cp.float32)
    B = cp.empty((0, N), dtype=cp.float32)
    C0 = random_matrix(cp, M, N, "float32", order)
    C = C0.copy(order=order)
    fastgemm.sgemm(A, B, C, 1.0, -3.0)
    cp.testing.assert_allclose(C, -3.0 * C0, rtol=1e-7)
    C[...] = cp.nan
    fastgemm.sgemm(A, B, C, 1.0, 0.0)
    assert int(cp.count_nonzero(C)) == 0


def test_m_or_n_zero_is_noop(cp):
    A, B = random_matrix(cp, 5, 7, "float32"), cp.empty((7, 0), dtype=cp.float32)
    C = cp.empty((5, 0), dtype=cp.float32)
    assert fastgemm.sgemm(A, B, C) is C
    A0 = cp.empty((0, 7), dtype=cp.float32)
    B1 = random_matrix(cp, 7, 3, "float32")
    fastgemm.sgemm(A0, B1, cp.empty((0, 3), dtype=cp.float32))


@pytest.mark.parametrize("kernel", SGEMM)
def test_views_padded_strided_misaligned(cp, kernel):
    if not _runnable(cp, kernel):
        pytest.skip(f"{kernel} does not run on this GPU")
    big_a = random_matrix(cp, 300, 260, "float32")
    big_b = random_matrix(cp, 260, 400, "float32")
    # Padded (ld > extent) views: no copy, unit stride.
    A, B = big_a[:200, :128], big_b[:128, :256]
    C = _poisoned(cp, 200, 256)
    fastgemm.sgemm(A, B, C, 1.0, 0.0, kernel=kernel)
    check_gemm(cp, A, B, C, 1.0, 0.0)
    # Non-unit strides in both dimensions: copied to a contiguous temporary.
    A2, B2 = big_a[::2, ::2], big_b[::2, 1::3]
    n2 = B2.shape[1]
    C2 = _poisoned(cp, A2.shape[0], -(-n2 // 4) * 4)[:, :n2]  # padded to 16-byte rows
    info = next(k for k in fastgemm.kernels() if k.name == kernel)
    fastgemm.sgemm(A2, B2, C2, 1.0, 0.0, kernel=kernel)
    check_gemm(cp, A2, B2, C2, 1.0, 0.0)
    # Misaligned (4-byte) views: forced 16-byte kernels refuse, auto picks a kernel that can run.
    A3 = big_a[:, 1:]  # base address 4 bytes past alignment
    B3 = big_b[:259, :]
    C3 = _poisoned(cp, 300, 400)
    if info.alignment > 4:
        with pytest.raises(RuntimeError, match="aligned"):
            fastgemm.sgemm(A3, B3, C3, 1.0, 0.0, kernel=kernel)
    else:
        fastgemm.sgemm(A3, B3, C3, 1.0, 0.0, kernel=kernel)
        check_gemm(cp, A3, B3, C3, 1.0, 0.0)


@pytest.fixture
def dev_pad(monkeypatch):
    """Force the fp32 padded path on (FASTGEMM_DEV_PAD=1) wherever it can run; the plans made
    under it are forgotten before and after."""
    monkeypatch.setenv("FASTGEMM_DEV_PAD", "1")
    fastgemm._C._clear_plan_cache()
    yield
    monkeypatch.delenv("FASTGEMM_DEV_PAD")
    fastgemm._C._clear_plan_cache()


# (M, N, K): odd sizes (every extent grown), an odd K beside odd M and N, K a multiple of 16 (not
# grown), a tile's worth of rows and one. M and N are odd in every case, so that each order has an
# MN-contiguous operand or a C below 16-byte alignment, which is what takes the path (an odd K
# alone leaves only K-contiguous rows under-aligned, and those are read in place).
PAD_SHAPES = [(301, 403, 259), (257, 383, 1001), (201, 301, 512), (65, 2051, 33)]


@pytest.mark.parametrize("shape", PAD_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("orders", ["CCC", "FCC", "CFF", "FFC"])
@pytest.mark.parametrize("beta", [0.0, -0.75])
def test_padded_path_forced(cp, dev_pad, shape, orders, beta):
    M, N, K = shape
    assert fastgemm.select(M, N, K, "float32", order=orders[:2]).pad
    A, B = (
        random_matrix(cp, M, K, "float32", order=orders[0]),
        random_matrix(cp, K, N, "float32", order=orders[1]),
    )
    if beta:
        C0 = random_matrix(cp, M, N, "float32", order=orders[2])
        C = C0.copy(order="K")
    else:
        C0, C = None, _poisoned(cp, M, N, orders[2])
    fastgemm.sgemm(A, B, C, 1.25, beta)
    check_gemm(cp, A, B, C, 1.25, beta, C0)
    first = C.copy()
    if beta == 0.0:  # the same bits on every call
        fastgemm.sgemm(A, B, C, 1.25, beta)
        assert bool((C == first).all())


def test_padded_path_views_and_edges(cp, dev_pad):
    # A view 4 bytes past alignment, B of odd width inside a wider array, C a view whose rows
    # continue past N: the padded copies read only the views, and C outside the view is untouched.
    big_a, big_b = random_matrix(cp, 300, 262, "float32"), random_matrix(cp, 260, 410, "float32")
    A, B = big_a[:, 1:260], big_b[:259, :401]
    host = _poisoned(cp, 300, 408)
    host[:, 401:] = 7.0
    C = host[:, :401]
    fastgemm.sgemm(A, B, C, 1.0, 0.0)
    check_gemm(cp, A, B, C, 1.0, 0.0)
    assert bool((host[:, 401:] == 7.0).all())


def test_padded_path_nonfinite(cp, dev_pad):
    # inf and NaN in A or B reach C as in the unpadded kernels: the zero-filled extents add 0 * 0.
    M, N, K = 130, 131, 133
    A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
    A[3, 5] = cp.inf
    B[7, 9] = cp.nan
    C = _poisoned(cp, M, N)
    fastgemm.sgemm(A, B, C, 1.0, 0.0)
    ref = A.astype(cp.float64) @ B.astype(cp.float64)
    assert bool((cp.isnan(C) == cp.isnan(ref)).all())
    assert bool((cp.isinf(C) == cp.isinf(ref)).all())
    finite = cp.isfinite(ref)
    assert float(cp.abs(C[finite] - ref[finite]).max()) < 1e-3


def test_auto_pads_large_odd_fp32(cp):
    # At this intensity the rule takes the padded path on its own.
    M, N, K = 2047, 2049, 2051
    sel = fastgemm.select(M, N, K, "float32")
    assert sel.pad and "zero-filled" in sel.reason, sel
    A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
    C = _poisoned(cp, M, N)
    fastgemm.sgemm(A, B, C)
    check_gemm(cp, A, B, C, 1.0, 0.0)


def test_auto_misaligned_and_odd(cp):
    # (1000, 1000, 1004): aligned, K a multiple of 4 but not of 16 (v16 split, bounds-checked
    # copies); (1000, 1000, 1001): padded, K odd.
    for M, N, K in [(301, 403, 259), (4095, 4097, 131), (1000, 1000, 1004), (1000, 1000, 1001)]:
        A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
        C = _poisoned(cp, M, N)
        fastgemm.sgemm(A, B, C)
        check_gemm(cp, A, B, C, 1.0, 0.0)


@pytest.mark.parametrize("kernel", ["sgemm_v05_blocktile_2d", "sgemm_v09_cp_async"])
def test_torch_tensors_and_streams(kernel):
    torch = require("torch")
    if not torch.cuda.is_available():
        pytest.fail("torch cannot see the GPU")
    g = torch.Generator(device="cuda").manual_seed(1234)
    A = torch.randn(333, 256, device="cuda", generator=g)
    B = torch.randn(256, 196, device="cuda", generator=g).t().contiguous().t()  # column-major
    C = torch.full((333, 196), float("nan"), device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):  # torch's current stream is the launch stream
        fastgemm.sgemm(A, B, C, 1.0, 0.0, kernel=kernel)
    s.synchronize()
    ref = A.double() @ B.double()
    assert torch.isfinite(C).all()
    assert float((C.double() - ref).norm() / ref.norm()) < 1e-5
    # gemm(C=None) allocates a torch tensor
    D = fastgemm.gemm(A, B)
    assert isinstance(D, torch.Tensor) and D.shape == (333, 196)
    assert float((D.double() - ref).norm() / ref.norm()) < 1e-5


def test_cupy_non_default_stream(cp):
    M, N, K = 1024, 768, 512
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
        C = _poisoned(cp, M, N)
        fastgemm.sgemm(A, B, C)  # CuPy's current stream = s
        C2 = _poisoned(cp, M, N)
    fastgemm.sgemm(A, B, C2, stream=s)  # explicit stream object
    s.synchronize()
    check_gemm(cp, A, B, C, 1.0, 0.0)
    check_gemm(cp, A, B, C2, 1.0, 0.0)


def test_cai_v3_producer_stream_is_waited_on(cp):
    """A CAI v3 object that names a producer stream: the launch waits on an event recorded there."""
    M, N, K = 512, 512, 512
    producer = cp.cuda.Stream(non_blocking=True)
    with producer:
        A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
        C = _poisoned(cp, M, N)

    class Wrapped:
        def __init__(self, arr):
            self.arr = arr
            cai = dict(arr.__cuda_array_interface__)
            cai["version"] = 3
            cai["stream"] = producer.ptr
            self.__cuda_array_interface__ = cai

    consumer = cp.cuda.Stream(non_blocking=True)
    fastgemm.sgemm(Wrapped(A), Wrapped(B), Wrapped(C), stream=consumer)
    consumer.synchronize()
    check_gemm(cp, A, B, C, 1.0, 0.0)


def test_dlpack_operands(cp):
    M, N, K = 200, 300, 100
    A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
    C = _poisoned(cp, M, N)

    class OnlyDLPack:
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kw):
            return self.arr.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    fastgemm.sgemm(OnlyDLPack(A), OnlyDLPack(B), OnlyDLPack(C))
    cp.cuda.get_current_stream().synchronize()
    check_gemm(cp, A, B, C, 1.0, 0.0)


def test_other_device_than_current(cp):
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    with cp.cuda.Device(1):
        A, B = random_matrix(cp, 300, 200, "float32"), random_matrix(cp, 200, 100, "float32")
        C = _poisoned(cp, 300, 100)
    with cp.cuda.Device(0):
        fastgemm.sgemm(A, B, C)
    with cp.cuda.Device(1):
        cp.cuda.Device(1).synchronize()
        check_gemm(cp, A, B, C, 1.0, 0.0)
    with cp.cuda.Device(0):
        A0 = random_matrix(cp, 300, 200, "float32")
        with pytest.raises(ValueError, match="different devices"):
            fastgemm.sgemm(A0, B, C)


BIG = {  # (M, N, K) with one operand past 2^31 elements, and which rows/cols to check
    "C": (46344, 46344, 4),  # M*N > 2^31
    "B": (2, 32772, 65536),  # K*N > 2^31
    "A": (32772, 4, 65536),  # M*K > 2^31
}


@pytest.mark.parametrize("operand", list(BIG))
@pytest.mark.parametrize("kernel", SGEMM)
def test_64bit_offsets(cp, kernel, operand):
    """Global offsets past 2^31 elements in C, B or A: 64-bit index arithmetic everywhere."""
    if not _runnable(cp, kernel):
        pytest.skip(f"{kernel} does not run on this GPU")
    free, _ = cp.cuda.runtime.memGetInfo()
    if free < 20 * 2**30:
        pytest.skip("needs 20 GiB of free GPU memory")
    M, N, K = BIG[operand]
    A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
    C = cp.empty((M, N), dtype=cp.float32)
    C[-3:, :] = cp.nan
    C[:, -3:] = cp.nan
    fastgemm.sgemm(A, B, C, kernel=kernel)
    rows = cp.asarray(sorted({0, 1, M // 2, M - 2, M - 1}))
    cols = cp.asarray(sorted({0, 1, N // 2, N - 2, N - 1}))
    check_gemm(cp, A[rows], B[:, cols], C[rows][:, cols], 1.0, 0.0)
    check_gemm(cp, A[rows[-2:]], B[:, : min(N, 4096)], C[rows[-2:], : min(N, 4096)], 1.0, 0.0)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_copy_rows_any_alignment(cp, dtype):
    # The row copy behind the padded path: every source/destination alignment (element offsets
    # 0..7 into 16-byte lines, odd leading dimensions), row tails shorter than a 16-byte chunk,
    # and nothing written past the last column of a destination row.
    per16 = 16 // cp.dtype(dtype).itemsize
    for rows, cols in [(1, 1), (3, 7), (5, per16), (17, 3 * per16 + 5), (65, 1031)]:
        for src_off, dst_off in [(0, 0), (1, 0), (0, 3), (per16 - 1, 1)]:
            rs, dst_ld = cols + 3, cols + 5
            src = cp.arange(src_off + rows * rs, dtype=cp.float32).astype(dtype)
            dst = cp.full(dst_off + rows * dst_ld, -1, dtype=dtype)
            item = src.itemsize
            fastgemm._C.copy_strided(
                item,
                src.data.ptr + src_off * item,
                rows,
                cols,
                rs,
                1,
                dst.data.ptr + dst_off * item,
                dst_ld,
                0,
                0,
            )
            got = dst[dst_off:].reshape(rows, dst_ld)
            want = src[src_off:].reshape(rows, rs)[:, :cols]
            assert bool((got[:, :cols] == want).all()), (rows, cols, src_off, dst_off)
            assert bool((got[:, cols:] == -1).all()), (rows, cols, src_off, dst_off)
            assert bool((dst[:dst_off] == -1).all())


def test_auto_unaligned_beta_into_misaligned_c(cp):
    # All three operands under-aligned and C read (beta != 0), a tiled and a decode shape: auto's
    # rungs take 4-byte operands in place (no padded copies) and write only inside C's view.
    for M, N, K in [(1023, 1025, 1027), (9, 4097, 4099)]:
        sel = fastgemm.select(M, N, K, "float32", alignment=4)
        assert not sel.pad and sel.kernel.alignment == 4, sel
        A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
        base = random_matrix(cp, M, N + 2, "float32")
        C = base[:, 1 : N + 1]
        C0, edges = C.copy(), base[:, [0, N + 1]].copy()
        fastgemm.sgemm(A, B, C, 0.75, -0.5)
        check_gemm(cp, A, B, C, 0.75, -0.5, C0)
        assert bool((base[:, [0, N + 1]] == edges).all())  # nothing written past the view


# The split-K specialists on shapes they split: sgemm_v10 on decode-like shapes (4- and 16-row
# tiles), sgemm_v11 on few 128x128 tiles with long K (clusters of up to 8 blocks per output
# tile), sgemm_v12 on 64x128 (M <= N) and 128x64 (M > N) tiles, and 32x128 / 128x32 where the
# shorter side is at most 32; rows past M, columns past N and K not a multiple of a block's share
# covered; sgemm_v15 as v11, up to 16 blocks per tile and not a cluster; sgemm_v16 as v15, with
# grids of more blocks than the GPU holds at once.
SPLIT_SHAPES = {
    # v20: few tiles, deep K (up to 128 shares), edge tiles, a share count that is not a multiple
    # of 8 (the reduction's tail), and a split of 1; every tiling (64x128 at 63x78, 128x64, 32x128,
    # 128x32, 128x128) with tails of the narrow side
    "sgemm_v20_split_k_reduce": [
        (63, 78, 17531),
        (256, 128, 21184),
        (300, 260, 4100),
        (8, 8, 64),
        (1, 1, 1),
        (701, 29, 9001),
        (4, 83, 30367),
        (600, 50, 5003),
        (39, 448, 22016),
        (33, 300, 1030),
    ],
    # v21: v20's split on v17's loop; every tiling (64x128 up to 768 rows with M <= N, 128x64,
    # 128x128 past 768) with tails of both sides (a 64-row tile past M clamps A's rows), a ragged
    # K, shares that are not whole multiples, and a split of 1
    "sgemm_v21_split_k_reduce_multistage": [
        (63, 78, 17531),
        (300, 260, 4100),
        (701, 29, 9001),
        (1000, 900, 8200),
        (64, 1000, 14336),
        (33, 300, 1030),
        (8, 8, 64),
        (1, 1, 1),
    ],
    "sgemm_v10_split_k": [(1, 4096, 8192), (3, 1000, 4100), (16, 2056, 14336), (5, 520, 3000), (17, 64, 64)],
    # 4-, 8- and 16-row tiles, split and not, past a wave of blocks (halves of K), tails of N and
    # K inside a quad, several row tiles, fewer stages than the ring holds.
    "sgemm_v19_split_k_ring": [
        (1, 4096, 8192),
        (3, 1000, 4100),
        (16, 2056, 14336),
        (8, 520, 3001),
        (12, 30000, 1030),
        (17, 64, 64),
        (40, 1001, 999),
        (16, 65, 70),
        (2, 7, 3),
    ],
    "sgemm_v11_split_k_tile": [
        (128, 4096, 4096),
        (260, 132, 1000),
        (1000, 1000, 3000),
        (129, 260, 10000),
        (33, 132, 20),
    ],
    # Partial tiles through global memory: S = 4 (32 tiles), 16 (one tile), 2 and 1.
    "sgemm_v15_split_k_global": [
        (128, 4096, 4096),
        (33, 132, 20000),
        (1000, 1000, 3000),
        (129, 260, 10000),
        (33, 132, 20),
    ],
    # Two blocks per SM, S from the round model: 8 (32 tiles), 16 (two tiles), 4 (64 tiles), 3 on
    # 160 tiles (480 blocks: more than one round of resident blocks), 1; a ragged K (not a
    # multiple of 16; 16-byte aligned rows need a multiple of 4), split and not, down to one whole
    # k-tile and four rows past it.
    "sgemm_v16_split_k_waves": [
        (128, 4096, 4096),
        (33, 132, 20000),
        (1000, 1000, 3000),
        (1200, 2000, 2048),
        (33, 132, 20),
        (256, 256, 1000),
        (2048, 2048, 1004),
        (128, 128, 20),
        (512, 384, 4100),
    ],
    # Edge tiles past M: moved inside at 65-191 rows (100: either A; 150: a row-major A, while a
    # column-major A's shift of 86 rows would misalign it; 101: neither for a column-major A), and
    # with a row-major A below one tile the rows past M clamped (5: threads with no row inside).
    "sgemm_v18_split_k_multistage": [
        (64, 4096, 4096),
        (4096, 64, 4096),
        (33, 1000, 3000),
        (1000, 36, 2004),
        (129, 128, 20),
        (128, 128, 4096),
        (512, 384, 4100),
        (65, 64, 8192),
        (100, 4096, 3000),
        (101, 1000, 3001),
        (150, 1000, 2004),
        (5, 1000, 3000),
    ],
    "sgemm_v12_split_k_narrow": [
        (64, 4096, 4096),
        (4096, 64, 4096),
        (33, 1000, 3000),
        (1000, 36, 2004),
        (129, 128, 20),
        (65, 64, 8192),
        (64, 64, 8192),
        (32, 4096, 4096),
        (4096, 32, 4096),
        (17, 1000, 3000),
        (1000, 20, 2004),
        (5, 132, 20),
        (36, 8, 8200),
    ],
}


def _beta0_then_beta(cp, A, B, C_nan, C_in, kernel):
    """beta = 0 into C_nan (NaN-filled: not read), then beta != 0 into C_in, both checked."""
    fastgemm.sgemm(A, B, C_nan, 0.5, 0.0, kernel=kernel)
    check_gemm(cp, A, B, C_nan, 0.5, 0.0)
    C0 = C_in.copy()
    fastgemm.sgemm(A, B, C_in, -1.0, 0.25, kernel=kernel)
    check_gemm(cp, A, B, C_in, -1.0, 0.25, C0)


@pytest.mark.parametrize("layout", ["CC", "CF", "FC", "FF"])
@pytest.mark.parametrize("name", sorted(SPLIT_SHAPES))
def test_split_k_shapes(cp, name, layout):
    if not _runnable(cp, name):
        pytest.skip(f"{name} does not run on this GPU")
    for M, N, K in SPLIT_SHAPES[name]:
        B = random_matrix(cp, K, N, "float32", layout[1])
        if layout[0] == "F":  # column-major A with its leading dimension padded to 16 bytes
            A = random_matrix(cp, K, -(-M // 4) * 4, "float32").T[:M]
        else:
            A = random_matrix(cp, M, K, "float32")
        _beta0_then_beta(cp, A, B, _poisoned(cp, M, N), random_matrix(cp, M, N, "float32"), name)
    if name == "sgemm_v19_split_k_ring":  # auto, for decode
        assert fastgemm.select(1, 4096, 8192, "float32").kernel.name == name


# The rungs that run 4-byte aligned operands in place (4-byte copies and stores, no padded path):
# odd extents (leading dimensions not a multiple of 4), base addresses one element past 16-byte
# alignment, every layout, beta = 0 over NaN and beta != 0; split and unsplit shapes, tails in
# every dimension.
UNALIGNED_SHAPES = {
    # v09, v12, v16: (263, 259, 144), (300, 1001, 1024), (17, 1001, 1024), (1023, 1025, 1024) have a
    # row-major A of 16-byte rows beside an odd N (their A16 instantiations in layouts C*, the
    # 4-byte ones for the offset views)
    "sgemm_v09_cp_async": [
        (301, 403, 259),
        (1001, 999, 1003),
        (5, 7, 3),
        (263, 259, 144),
        (260, 132, 144),
        (300, 1001, 1024),
    ],
    "sgemm_v10_split_k": [(1, 4097, 8195), (3, 1001, 4101), (16, 2057, 14337), (5, 521, 3001)],
    "sgemm_v19_split_k_ring": [(1, 4097, 8195), (7, 1001, 4101), (16, 2057, 14337), (21, 67, 35)],
    "sgemm_v11_split_k_tile": [(129, 261, 10001), (33, 133, 21)],
    "sgemm_v12_split_k_narrow": [
        (33, 1001, 3001),
        (1001, 37, 2005),
        (17, 1001, 3001),
        (1001, 21, 2005),
        (17, 1001, 1024),
    ],
    "sgemm_v18_split_k_multistage": [(33, 1001, 3001), (1001, 37, 2005), (301, 403, 2059), (5, 7, 3)],
    "sgemm_v20_split_k_reduce": [(63, 78, 17531), (1, 83, 30367), (129, 257, 9001), (5, 7, 3)],
    "sgemm_v21_split_k_reduce_multistage": [(63, 79, 17531), (129, 257, 9001), (1001, 999, 3003), (5, 7, 3)],
    "sgemm_v16_split_k_waves": [
        (127, 1029, 2053),
        (1001, 999, 1003),
        (33, 135, 20001),
        (255, 129, 263),
        (263, 259, 144),
        (1023, 1025, 1024),
    ],
    # also odd K with 16-byte aligned N (B and C aligned, A not): v17 takes the 16-byte
    # instantiation there when A is K-contiguous, whose 4-byte copies need no alignment
    "sgemm_v17_multistage": [
        (301, 403, 259),
        (1001, 999, 1003),
        (5, 7, 3),
        (129, 257, 4099),
        (129, 260, 1003),
        (260, 132, 999),
        (263, 259, 144),
    ],
}


def _offset_view(cp, rows, cols, order):
    """A rows x cols view one element past a 16-byte aligned base (odd leading dimension)."""
    if order == "F":
        return random_matrix(cp, cols, rows + 1, "float32").T[1:]
    return random_matrix(cp, rows, cols + 1, "float32")[:, 1:]


@pytest.mark.parametrize("layout", ["CC", "CF", "FC", "FF"])
@pytest.mark.parametrize("name", sorted(UNALIGNED_SHAPES))
def test_unaligned_in_place(cp, name, layout):
    if not _runnable(cp, name):
        pytest.skip(f"{name} does not run on this GPU")
    assert next(k for k in fastgemm.kernels("float32") if k.name == name).alignment == 4
    for M, N, K in UNALIGNED_SHAPES[name]:
        A = random_matrix(cp, M, K, "float32", layout[0])
        B = random_matrix(cp, K, N, "float32", layout[1])
        C = _poisoned(cp, M, N)
        fastgemm.sgemm(A, B, C, 0.5, 0.0, kernel=name)
        check_gemm(cp, A, B, C, 0.5, 0.0)
        # Base addresses 4 bytes past alignment, C too; beta != 0 reads it.
        A2, B2 = _offset_view(cp, M, K, layout[0]), _offset_view(cp, K, N, layout[1])
        base = random_matrix(cp, M, N + 2, "float32")
        C2 = base[:, 1 : N + 1]
        C0, edges = C2.copy(), base[:, [0, N + 1]].copy()
        fastgemm.sgemm(A2, B2, C2, -1.0, 0.25, kernel=name)
        check_gemm(cp, A2, B2, C2, -1.0, 0.25, C0)
        assert bool((base[:, [0, N + 1]] == edges).all())  # nothing written past the view


def _aligned_view(cp, rows, cols, order):
    """A rows x cols view whose leading dimension is rounded up to 4 elements (16-byte rows)."""
    if order == "F":
        return random_matrix(cp, cols, -(-rows // 4) * 4, "float32").T[:rows]
    return random_matrix(cp, rows, -(-cols // 4) * 4, "float32")[:, :cols]


# Ragged K (K % 16 != 0) and whole K (k_mod 0) on 16-byte aligned rows (the 16-byte
# instantiations): v17 lays the partial k-tile first; v09 and v17 move edge tiles back
# inside the output (by a multiple of 4 here, or not at all: M or N - 128 not a multiple of 4
# keeps the checked edge tile). Every layout, the shapes of UNALIGNED_SHAPES (split and unsplit)
# with K moved to each case.
@pytest.mark.parametrize("k_mod", [0, 4, 7, 12, 13])
@pytest.mark.parametrize("layout", ["CC", "CF", "FC", "FF"])
@pytest.mark.parametrize("name", sorted(UNALIGNED_SHAPES))
def test_ragged_k_aligned_rows(cp, name, layout, k_mod):
    if not _runnable(cp, name):
        pytest.skip(f"{name} does not run on this GPU")
    for M, N, K in UNALIGNED_SHAPES[name]:
        K = max(K // 16 * 16 + k_mod, 1)
        A, B = _aligned_view(cp, M, K, layout[0]), _aligned_view(cp, K, N, layout[1])
        C = _aligned_view(cp, M, N, "C")
        C[...] = cp.nan
        _beta0_then_beta(cp, A, B, C, _aligned_view(cp, M, N, "C"), name)


# Outputs with few columns: auto runs the transposed problem C^T = B^T A^T on the split-K decode
# kernel (C written column-major): every operand layout, both C orders, rows and K off the tile.
NARROW = [(4096, 16, 4096), (1000, 12, 1032), (16384, 8, 512), (777, 64, 4100), (3000, 1, 2048)]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda t: "".join(t))
def test_narrow_output_transposed(cp, layout):
    for M, N, K in NARROW:
        A = random_matrix(cp, M, K, "float32", layout[0])
        B = random_matrix(cp, K, N, "float32", layout[1])
        C = _poisoned(cp, M, N, layout[2])
        fastgemm.sgemm(A, B, C, 0.5, 0.0)
        check_gemm(cp, A, B, C, 0.5, 0.0)
        C0 = random_matrix(cp, M, N, "float32", layout[2])
        C = C0.copy()
        fastgemm.sgemm(A, B, C, -1.0, 0.25)
        check_gemm(cp, A, B, C, -1.0, 0.25, C0)
        if 8 <= N <= 16 and M >= 1000:  # (N = 1: B's rows are 4 bytes apart, so no 16-byte path)
            assert fastgemm.select(M, N, K, "float32").flip, (M, N, K)


@pytest.mark.parametrize("kernel", SGEMM + ["auto"])
def test_repeated_calls_same_bits(cp, kernel):
    # The same inputs give the same bits on every call (split-K partial sums in a fixed order):
    # 100 calls per shape; the decode shape splits K across clusters of several blocks.
    if kernel != "auto" and not _runnable(cp, kernel):
        pytest.skip(f"{kernel} does not run on this GPU")
    for M, N, K in [(4, 1024, 16384), (260, 132, 1000), (4096, 8, 8192)]:
        A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
        C = cp.empty((M, N), dtype=cp.float32)
        fastgemm.sgemm(A, B, C, kernel=kernel)
        first = C.copy()
        same = cp.ones((), dtype=cp.bool_)
        for _ in range(99):
            fastgemm.sgemm(A, B, C, kernel=kernel)
            same &= (C.view(cp.int32) == first.view(cp.int32)).all()  # bits, NaN included
        assert bool(same), (kernel, (M, N, K))
