"""GPU tests of the tensor-core (HGEMM) ladder, fp16 and bf16, against a float64 reference.

Arrays come from PyTorch (both dtypes) and CuPy (fp16, through __cuda_array_interface__).
Marker ``gpu``: skipped without a GPU, failing instead under ``FASTGEMM_REQUIRE_GPU=1``.
"""

from __future__ import annotations

import itertools

import pytest
from conftest import require

import fastgemm

pytestmark = pytest.mark.gpu

HGEMM = sorted({(k.name, k.dtype) for k in fastgemm.kernels() if k.dtype in ("float16", "bfloat16")})
# Aligned shapes (multiples of 8) off the tile grid, odd shapes for the any-alignment paths.
SHAPES = [
    (8, 8, 8),
    (16, 24, 40),
    (1000, 1000, 1000),
    (1544, 2056, 1032),
    (2048, 4096, 1024),
    (1, 1, 1),
    (127, 129, 65),
    (1, 513, 257),
]
UNIT_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8}
# Half the spacing of the output type's subnormals: the absolute error of rounding a result below
# its smallest normal (fp16: 2^-14), where the relative bound above does not hold.
SUBNORMAL_HALF_SPACING = {"float16": 2.0**-25, "bfloat16": 2.0**-134}


@pytest.fixture
def torch():
    t = require("torch")
    if not t.cuda.is_available():
        pytest.fail("torch cannot see the GPU")
    return t


def _dtype(torch, name):
    return {"float16": torch.float16, "bfloat16": torch.bfloat16}[name]


def _random(torch, rows, cols, dtype, order="C", gen=None):
    x = torch.randn(rows, cols, device="cuda", generator=gen).to(_dtype(torch, dtype))
    return x.t().contiguous().t() if order == "F" else x


def check(torch, A, B, C_out, alpha, beta, C_in=None):
    """|C - ref| <= (2K + 4) u32 (|alpha||A||B| + |beta||C_in|) + u_out |ref| + s_out / 2,
    elementwise.

    Products of fp16/bf16 values are exact in fp32 and accumulate in fp32 (u32); the result is
    rounded once to the output type (u_out; s_out its subnormals' spacing). A missing or extra term, an unwritten (NaN) output or
    a wrong layout fails.
    """
    A64, B64 = A.double(), B.double()
    K = A.shape[1]
    ref = alpha * (A64 @ B64)
    mag = abs(alpha) * (A64.abs() @ B64.abs())
    if C_in is not None and beta != 0:
        ref += beta * C_in.double()
        mag += abs(beta) * C_in.double().abs()
    out = str(C_out.dtype).split(".")[1]
    bound = (2 * K + 4) * 2.0**-24 * mag + UNIT_ROUNDOFF[out] * ref.abs()
    bound += SUBNORMAL_HALF_SPACING[out]
    err = (C_out.double() - ref).abs()
    bad = ~(err <= bound)
    nbad = int(bad.sum())
    if nbad:
        idx = bad.nonzero()[:5].tolist()
        rows = [(i, j, float(C_out[i, j]), float(ref[i, j]), float(bound[i, j])) for i, j in idx]
        raise AssertionError(f"{nbad} of {C_out.numel()} outputs out of bound; first: {rows}")


def _info(name, dtype):
    return next(k for k in fastgemm.kernels(dtype) if k.name == name)


def _skip_if_not_runnable(name, dtype):
    problem = fastgemm.dispatch.check_runnable(_info(name, dtype), fastgemm._device_cc(None), 16)
    if problem:
        pytest.skip(problem)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("kernel,dtype", HGEMM + [("auto", "float16"), ("auto", "bfloat16")], ids=lambda v: v)
def test_shapes_beta0_poisoned(torch, kernel, dtype, shape):
    if kernel != "auto":
        _skip_if_not_runnable(kernel, dtype)
    M, N, K = shape
    A, B = _random(torch, M, K, dtype), _random(torch, K, N, dtype)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=_dtype(torch, dtype))
    need = _info(kernel, dtype).alignment if kernel != "auto" else 2
    try:
        out = fastgemm.hgemm(A, B, C, 1.25, 0.0, kernel=kernel)
    except RuntimeError as exc:  # forced 16-byte rungs refuse rows that are not 16-byte aligned
        assert f"{need}-byte aligned" in str(exc)
        assert fastgemm.dispatch.alignment_of(K * 2, N * 2) < need
        return
    assert out is C
    torch.cuda.synchronize()
    check(torch, A, B, C, 1.25, 0.0)


@pytest.mark.parametrize("layout", list(itertools.product("CF", repeat=3)), ids=lambda t: "".join(t))
@pytest.mark.parametrize("kernel,dtype", HGEMM, ids=lambda v: v)
def test_layouts_alpha_beta(torch, kernel, dtype, layout):
    _skip_if_not_runnable(kernel, dtype)
    oa, ob, oc = layout
    # The last shape has 15 x 11 (128x256) output tiles: persistent blocks run several, with C
    # read (beta != 0) while the next tile's copies land.
    for M, N, K in [(120, 136, 72), (264, 392, 200), (1800, 2600, 72)]:
        A, B = _random(torch, M, K, dtype, oa), _random(torch, K, N, dtype, ob)
        C0 = _random(torch, M, N, dtype, oc)
        C = C0.clone(memory_format=torch.preserve_format)
        assert C.stride() == C0.stride()
        fastgemm.hgemm(A, B, C, -0.5, 0.75, kernel=kernel)
        torch.cuda.synchronize()
        check(torch, A, B, C, -0.5, 0.75, C0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_alpha_zero_and_k_zero(torch, dtype):
    M, N, K = 72, 40, 24
    A = torch.full((M, K), float("nan"), device="cuda", dtype=_dtype(torch, dtype))
    B = torch.full((K, N), float("inf"), device="cuda", dtype=_dtype(torch, dtype))
    C0 = _random(torch, M, N, dtype)
    C = C0.clone()
    fastgemm.hgemm(A, B, C, 0.0, 2.0)
    torch.cuda.synchronize()
    assert torch.equal(C, (2.0 * C0.float()).to(C.dtype))
    C.fill_(float("nan"))
    fastgemm.hgemm(A[:, :0], B[:0, :], C, 1.0, 0.0)  # K = 0, beta = 0: zeros
    torch.cuda.synchronize()
    assert int(torch.count_nonzero(C)) == 0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_misaligned_views_auto_and_forced(torch, dtype):
    big_a = _random(torch, 600, 520, dtype)
    big_b = _random(torch, 520, 700, dtype)
    A, B = big_a[:, 1:], big_b[:519, 3:]  # base addresses 2 and 6 bytes past alignment
    for M in (64, 600):  # small: a rung that takes any alignment; large: aligned temporaries
        C0 = _random(torch, M, B.shape[1] + 1, dtype)[:, 1:]  # C misaligned too
        C = C0.clone()[:, :]
        C_view = torch.empty(M, B.shape[1] + 1, device="cuda", dtype=C0.dtype)[:, 1:]
        C_view.copy_(C0)
        fastgemm.hgemm(A[:M], B, C_view, 1.0, 0.5)
        torch.cuda.synchronize()
        check(torch, A[:M], B, C_view, 1.0, 0.5, C0)
        del C
    with pytest.raises(RuntimeError, match="16-byte aligned"):
        fastgemm.hgemm(A, B, torch.empty(600, 697, device="cuda", dtype=A.dtype), kernel="hgemm_v09_raster")


def _unaligned(torch, rows, cols, dtype, order, off):
    """A rows x cols view in `order` whose base is `off` elements past an allocation's start and
    whose rows (columns for "F") are cols + off (rows + off) elements apart."""
    if order == "F":
        return _random(torch, rows + off, cols, dtype, "F")[off:, :]
    return _random(torch, rows, cols + off, dtype)[:, off:]


V34 = "hgemm_v34_split_k_unaligned"


@pytest.mark.parametrize("layout", list(itertools.product("CF", repeat=3)), ids=lambda t: "".join(t))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_v34_reads_unaligned_rows_in_place(torch, dtype, layout):
    """v34 on views whose bases and pitches are 2-byte aligned only, in every layout: the MN-major
    operand by residue maps (K from 8 up, ragged last k-tile), the K-major one permuted (and both
    copied where K < 8); beta != 0, and the same bits on a second call."""
    _skip_if_not_runnable(V34, dtype)
    cases = [
        ((33, 1235, 777), 1),
        ((127, 409, 2053), 3),
        ((200, 72, 9), 5),
        ((5, 300, 3), 1),
        ((130, 8, 64), 7),
    ]
    _check_unaligned_views(torch, V34, dtype, layout, cases)


def _check_unaligned_views(torch, name, dtype, layout, cases):
    """kernel `name` on views 2-byte aligned only (layout: A, B, C orders; cases: ((M, N, K),
    element offset)), beta != 0, float64-checked, and the same bits on a second call."""
    oa, ob, oc = layout
    for (M, N, K), off in cases:
        A, B = _unaligned(torch, M, K, dtype, oa, off), _unaligned(torch, K, N, dtype, ob, off + 2)
        C0 = _unaligned(torch, M, N, dtype, oc, off)
        C = _unaligned(torch, M, N, dtype, oc, off)
        C.copy_(C0)
        assert fastgemm.dispatch.alignment_of(A.data_ptr(), B.data_ptr(), C.data_ptr()) < 16
        fastgemm.hgemm(A, B, C, -0.5, 0.75, kernel=name)
        torch.cuda.synchronize()
        check(torch, A, B, C, -0.5, 0.75, C0)
        again = C0.clone()
        fastgemm.hgemm(A, B, again, -0.5, 0.75, kernel=name)
        torch.cuda.synchronize()
        assert torch.equal(again, C)


def _check_auto_twice(torch, A, B, dtype, c_order="C"):
    """auto on A @ B into a C of `c_order`, poisoned (beta = 0) and with beta != 0:
    float64-checked, and the same bits on a second call."""
    M, N = A.shape[0], B.shape[1]
    for beta in (0.0, 0.5):
        C0 = _random(torch, M, N, dtype, c_order)
        C = C0.clone() if beta else torch.full_like(C0, float("nan"))  # strides kept
        fastgemm.hgemm(A, B, C, 0.75, beta)
        torch.cuda.synchronize()
        check(torch, A, B, C, 0.75, beta, C0 if beta else None)
        again = C0.clone() if beta else torch.full_like(C, float("nan"))
        fastgemm.hgemm(A, B, again, 0.75, beta)
        torch.cuda.synchronize()
        assert torch.equal(again, C), (M, N, beta)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_auto_deep_small_outputs_split_over_the_sms(torch, dtype):
    """auto's v35 / v36 on deep-K outputs of a few tiles, and v37 / v38 on odd ones (read in
    place), C poisoned or with beta != 0: float64-checked, the same bits on a second call."""
    for (M, N, K), kernel in [
        ((10, 13, 30036), "hgemm_v37_split_k_reduce_unaligned"),
        ((2, 64, 20000), "hgemm_v35_split_k_reduce"),
        ((51, 192, 21440), "hgemm_v36_split_k_reduce_wide"),
        ((131, 77, 12001), "hgemm_v38_split_k_reduce_wide_unaligned"),
    ]:
        assert fastgemm.select(M, N, K, dtype, alignment=2 if (N % 8 or K % 8) else 16).kernel.name == kernel
        A, B = _random(torch, M, K, dtype), _random(torch, K, N, dtype)
        _check_auto_twice(torch, A, B, dtype)


@pytest.mark.parametrize("c_order", ["C", "F"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_auto_tall_narrow_unaligned_runs_transposed(torch, dtype, c_order):
    """auto's v37 / v38 on the transposed problem of tall narrow under-aligned outputs (C^T
    written column-major by the second kernel, or, for an F-ordered C, the swap undone by the
    flip), C poisoned or with beta != 0: float64-checked, the same bits on a second call."""
    for (M, N, K), kernel in [
        ((5000, 33, 399), "hgemm_v38_split_k_reduce_wide_unaligned"),
        ((8198, 7, 1731), "hgemm_v37_split_k_reduce_unaligned"),
        ((3001, 64, 2049), "hgemm_v38_split_k_reduce_wide_unaligned"),
        ((2000, 2, 5003), "hgemm_v37_split_k_reduce_unaligned"),
    ]:
        sel = fastgemm.select(M, N, K, dtype, alignment=2)
        assert sel.kernel.name == kernel and sel.flip and not sel.pad, sel
        A, B = _random(torch, M, K, dtype, "F"), _random(torch, K, N, dtype)
        _check_auto_twice(torch, A, B, dtype, c_order)


@pytest.mark.parametrize("c_order", ["C", "F"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_auto_tall_narrow_unaligned_pads_then_runs_transposed(torch, dtype, c_order):
    """A tall narrow output whose few columns leave B's and C's rows under 16 bytes, on an aligned
    A: auto copies B (and C, through a work buffer) into 128-byte rows and runs a decode rung
    on the transposed problem; C poisoned or with beta != 0: float64-checked, the same bits on a
    second call."""
    for M, N, K in [(17408, 4, 4096), (8192, 12, 2048), (20000, 20, 3072), (4096, 3, 4096)]:
        sel = fastgemm.select(M, N, K, dtype)
        assert sel.flip and sel.pad and sel.kernel.alignment == 16, sel
        A, B = _random(torch, M, K, dtype), _random(torch, K, N, dtype)
        _check_auto_twice(torch, A, B, dtype, c_order)


@pytest.mark.parametrize("layout", list(itertools.product("CF", repeat=3)), ids=lambda t: "".join(t))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "name",
    [
        "hgemm_v37_split_k_reduce_unaligned",
        "hgemm_v38_split_k_reduce_wide_unaligned",
        "hgemm_v39_unaligned_row_store",
    ],
)
def test_element_loads_read_unaligned_views_in_place(torch, name, dtype, layout):
    """v37 / v38 / v39 on views whose bases and pitches are 2-byte aligned only, in every layout:
    (v37, v38) one tile split over the SMs, ragged k-tiles and edges, several tiles, one k-tile;
    (v39) many tiles with a short K, ragged edges on every side, one tile, a K of one element
    and a longer K; beta != 0, and the same bits on a second call."""
    _skip_if_not_runnable(name, dtype)
    cases = (
        [((1000, 1037, 46), 1), ((131, 2050, 133), 3), ((77, 100, 9), 5), ((300, 259, 1), 7)]
        + [((257, 391, 2051), 1)]
        if name == "hgemm_v39_unaligned_row_store"
        else [((10, 13, 30036), 1), ((51, 77, 5003), 3), ((3, 130, 9), 5), ((70, 200, 2051), 7)]
    )
    _check_unaligned_views(torch, name, dtype, layout, cases)


def test_auto_odd_large_pads(torch):
    M, N, K = 4095, 4097, 4099
    A, B = _random(torch, M, K, "float16"), _random(torch, K, N, "float16")
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    sel = fastgemm.select(M, N, K, "float16")
    assert sel.pad and sel.kernel.alignment == 16, sel  # the fastest rung, on aligned copies
    fastgemm.hgemm(A, B, C)
    torch.cuda.synchronize()
    check(torch, A, B, C, 1.0, 0.0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "shape, orders",
    [
        ((7, 40, 2049), "FC"),
        ((8, 8, 1001), "CC"),
        ((256, 123, 1824), "CF"),
        ((1286, 8, 521), "FC"),
        ((10, 13, 9001), "CC"),  # v34's region, but a deep K on one tile: padded (plan.h, kV34PadK)
    ],
)
@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_auto_small_unaligned_pads_or_reads_in_place_on_hopper(torch, dtype, shape, orders, beta):
    # Below PAD_MIN_MACS, where v01 would be the in-place kernel, sm_90 pads (plan.h, kV01MaxK);
    # so it does where v34 would run a deep K on a few tiles (kV34PadK); or, where A or B is the
    # under-aligned operand on few tiles, v37 / v38 read them in place.
    M, N, K = shape
    A, B = _random(torch, M, K, dtype, orders[0]), _random(torch, K, N, dtype, orders[1])
    C0 = _random(torch, M, N, dtype)
    C = C0.clone() if beta else torch.full((M, N), float("nan"), device="cuda", dtype=_dtype(torch, dtype))
    sel = fastgemm.select(M, N, K, dtype, order=orders)
    cc = torch.cuda.get_device_capability()
    if cc == (9, 0):
        in_place = sel.kernel.name in (
            "hgemm_v37_split_k_reduce_unaligned",
            "hgemm_v38_split_k_reduce_wide_unaligned",
        )
        assert (sel.pad and sel.kernel.name != "hgemm_v01_mma") or (in_place and not sel.pad), sel
    fastgemm.hgemm(A, B, C, 1.0, beta)
    torch.cuda.synchronize()
    check(torch, A, B, C, 1.0, beta, C0 if beta else None)
    again = C0.clone() if beta else torch.empty_like(C)
    fastgemm.hgemm(A, B, again, 1.0, beta)
    torch.cuda.synchronize()
    assert torch.equal(again, C)  # the same bits on every call


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gated_gemm_waits_for_its_flags(torch, dtype):
    """_C._gemm_gated, the multi-GPU GEMM's remote pieces (hopper/gated.cu): queued while A and B
    hold NaN, it waits for its flags, which another stream writes after copying in each slice of
    K of A and each slice of each chunk of B's columns (behind a sleep, on the SMs the small grid
    leaves free); the result matches the reference: no k-tile was read before its flag. Tile
    edges in M, a last chunk and a last slice shorter than the others, B column-major."""
    if fastgemm._device_cc(None) != 90:
        pytest.skip("the gated kernel is sm_90 only")
    M, N, K, chunk, slice_k = 1000, 1288, 1000, 512, 256
    gen = torch.Generator(device="cuda").manual_seed(9)
    A0, B0 = _random(torch, M, K, dtype, gen=gen), _random(torch, K, N, dtype, "F", gen=gen)
    A, B = torch.full_like(A0, float("nan")), torch.full_like(B0, float("nan"))
    C = torch.full((M, N), float("nan"), device="cuda", dtype=_dtype(torch, dtype))
    chunks, slices = -(-N // chunk), -(-K // slice_k)
    flags = torch.zeros(1 + chunks, device="cuda", dtype=torch.int32)
    # Load the side stream's kernels (the sleep, the strided copies, the flag write) before the
    # GEMM spins: with lazy module loading, a kernel's first launch waits for the device, so one
    # first launched while the gated GEMM waits for it would time the GEMM out (a trap), as when
    # this test runs alone.
    warm = torch.zeros(1, device="cuda", dtype=torch.int32)
    torch.cuda._sleep(1)
    torch.empty_like(A)[:, :slice_k].copy_(A0[:, :slice_k])
    torch.empty_like(B)[:slice_k, :chunk].copy_(B0[:slice_k, :chunk])
    fastgemm._C._write_flag(torch.cuda.current_stream().cuda_stream, warm.data_ptr(), 1, 0)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())  # the operands' NaN and the zeroed flags
    fastgemm._C._gemm_gated(
        dtype, M, N, K, A.data_ptr(), K, False, B.data_ptr(), K, True, C.data_ptr(), N, 0.5,
        flags.data_ptr(), flags.data_ptr() + 4, chunk, slice_k, 20000,
        torch.cuda.current_stream().cuda_stream, 0,
    )  # fmt: skip
    with torch.cuda.stream(side):
        torch.cuda._sleep(2_000_000)  # the GEMM waits meanwhile
        for j in range(slices):
            ks = slice(j * slice_k, (j + 1) * slice_k)
            A[:, ks].copy_(A0[:, ks])
            fastgemm._C._write_flag(side.cuda_stream, flags.data_ptr(), j + 1, 0)
            for c in range(chunks):
                cs = slice(c * chunk, (c + 1) * chunk)
                B[ks, cs].copy_(B0[ks, cs])
                fastgemm._C._write_flag(side.cuda_stream, flags.data_ptr() + 4 * (1 + c), j + 1, 0)
    torch.cuda.synchronize()
    check(torch, A0, B0, C, 0.5, 0.0)
    with pytest.raises(ValueError, match="timeout_ms"):
        fastgemm._C._gemm_gated(
            dtype, M, N, K, A.data_ptr(), K, False, B.data_ptr(), K, True, C.data_ptr(), N, 0.5,
            flags.data_ptr(), flags.data_ptr() + 4, chunk, slice_k, 0,
            torch.cuda.current_stream().cuda_stream, 0,
        )  # fmt: skip


def test_cupy_fp16_and_streams(torch):
    cp = require("cupy")
    M, N, K = 1032, 776, 520
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        A = cp.random.standard_normal((M, K), dtype=cp.float32).astype(cp.float16)
        B = cp.random.standard_normal((K, N), dtype=cp.float32).astype(cp.float16)
        C = cp.full((M, N), cp.nan, dtype=cp.float16)
        fastgemm.hgemm(A, B, C)  # on CuPy's current stream s
    s.synchronize()
    tA, tB, tC = (torch.as_tensor(x, device="cuda") for x in (A, B, C))
    check(torch, tA, tB, tC, 1.0, 0.0)
    # torch stream
    ts = torch.cuda.Stream()
    A2, B2 = _random(torch, M, K, "bfloat16"), _random(torch, K, N, "bfloat16")
    C2 = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    ts.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(ts):
        fastgemm.gemm(A2, B2, C2)
    ts.synchronize()
    check(torch, A2, B2, C2, 1.0, 0.0)
    D = fastgemm.gemm(A2, B2)  # allocates a torch tensor
    torch.cuda.synchronize()
    assert isinstance(D, torch.Tensor) and D.dtype == torch.bfloat16
    check(torch, A2, B2, D, 1.0, 0.0)


@pytest.mark.parametrize(
    "kernel,dtype",
    [("hgemm_v05_reg_prefetch", "float16"), ("hgemm_v09_raster", "bfloat16"), ("auto", "float16")],
)
def test_cuda_graph_capture(torch, kernel, dtype):
    M, N, K = 512, 384, 256
    A, B = _random(torch, M, K, dtype), _random(torch, K, N, dtype)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=_dtype(torch, dtype))
    fastgemm.hgemm(A, B, C, kernel=kernel)  # warm-up outside the capture (smem attributes)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        fastgemm.hgemm(A, B, C, 2.0, 0.0, kernel=kernel)
    C.fill_(float("nan"))
    A.copy_(_random(torch, M, K, dtype))  # replays read the new inputs
    graph.replay()
    torch.cuda.synchronize()
    check(torch, A, B, C, 2.0, 0.0)


def _dependent_chain(torch, kernel, X, W1, W2, capture):
    """Y = X W1; X = Y W2 + X/2 (read after write of Y, write after read of X); Z = X W1 (read
    after write of X), back to back on one stream or replayed from a CUDA graph, each checked."""
    Y = torch.full((X.shape[0], W1.shape[1]), float("nan"), device="cuda", dtype=X.dtype)
    Z = torch.full_like(Y, float("nan"))

    def chain():
        fastgemm.hgemm(X, W1, Y, kernel=kernel)
        fastgemm.hgemm(Y, W2, X, 1.0, 0.5, kernel=kernel)
        fastgemm.hgemm(X, W1, Z, kernel=kernel)

    X0 = X.clone()
    if capture:
        fastgemm.hgemm(X, W1, Y, kernel=kernel)  # warm-up outside the capture
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=s):
            chain()
        X.copy_(X0)
        Y.fill_(float("nan"))
        Z.fill_(float("nan"))
        graph.replay()
    else:
        chain()
    torch.cuda.synchronize()
    check(torch, X0, W1, Y, 1.0, 0.0)
    check(torch, Y, W2, X, 1.0, 0.5, X0)
    check(torch, X, W1, Z, 1.0, 0.0)


@pytest.mark.parametrize("capture", [False, True], ids=["stream", "graph"])
@pytest.mark.parametrize(
    "kernel",
    [
        "hgemm_v19_dependent_launch",
        "hgemm_v20_hoisted_beta",
        "hgemm_v21_narrow_tile",
        "hgemm_v43_cluster_64x128",
        "hgemm_v44_tile_192x128",
        "hgemm_v45_cluster_128x128",
        "hgemm_v46_cluster_128x256",
    ],
)
def test_dependent_launch_chain(torch, kernel, capture):
    # Back-to-back GEMMs that read the previous one's output (read after write) and overwrite what
    # the previous one reads (write after read): with programmatic dependent launch (v19, v20) the
    # next grid may start before the previous finishes, so this fails if any access precedes
    # griddepcontrol.wait (v21, v43-v46 launch as v20 does). 288 output tiles of v20 (576 of
    # v21's and v43's cluster tiles, 384 of v44's, 288 of v45's, 144 of v46's): persistent blocks run two or more each. The chain mixes beta = 0 and beta = 0.5 (v20's two epilogues).
    _skip_if_not_runnable(kernel, "float16")
    n = 3072
    W = _random(torch, n, n, "float16") * 0.05
    _dependent_chain(torch, kernel, _random(torch, n, n, "float16") * 0.05, W, W, capture)


@pytest.mark.parametrize("capture", [False, True], ids=["stream", "graph"])
@pytest.mark.parametrize(
    "kernel",
    [
        "hgemm_v22_split_k",
        "hgemm_v23_split_k_wide",
        "hgemm_v24_wgmma_split_k",
        "hgemm_v25_wgmma_split_k_wide",
        "hgemm_v27_split_k_global",
        "hgemm_v28_split_k_global_narrow",
        "hgemm_v29_stream_k",
        "hgemm_v30_stream_k_wide",
        "hgemm_v31_split_last_round",
        "hgemm_v32_split_last_round_192",
        "hgemm_v33_split_k_n64",
        "hgemm_v35_split_k_reduce",
        "hgemm_v36_split_k_reduce_wide",
        "hgemm_v40_split_k_deep_ring",
        "hgemm_v41_split_k_32rows_deep_ring",
        "hgemm_v42_split_k_wide_deep_ring",
        "hgemm_v47_split_k_stream",
        "hgemm_v48_split_k_32rows_stream",
    ],
)
def test_dependent_launch_split_chain(torch, kernel, capture):
    # The split-K kernels are dependent launches too (griddepcontrol.wait before any global
    # access): the same chain, whose first and last GEMMs split a deep K 8 ways.
    _skip_if_not_runnable(kernel, "float16")
    m, k = 48, 8192
    X = _random(torch, m, k, "float16") * 0.05
    W1, W2 = _random(torch, k, m, "float16") * 0.05, _random(torch, m, k, "float16") * 0.05
    _dependent_chain(torch, kernel, X, W1, W2, capture)


STREAM_K_SHAPES = [
    (512, 512, 8192),
    (128, 1000, 4104),
    (3, 24, 5000),
    (1032, 1032, 3000),
    (130, 264, 64),
    (520, 6144, 1000),
]

# Split-K specialists on the shapes they are for: decode-like (few rows, long K) for v22, few
# 128x128 tiles and deep K for v24. Each splits K across clusters of up to 8 blocks per output
# tile (v27: up to 16 blocks, not a cluster); rows past M, columns past N and K not a multiple of the tile are all covered.
SPLIT_SHAPES = {
    **{
        name: [
            (1, 4096, 8192),
            (7, 1000, 4104),
            (16, 2056, 14336),
            (17, 520, 3000),
            (3, 64, 64),
            (5, 4544, 4104),  # 71 tiles: v22 takes two shares at two blocks per SM (split_fill)
        ]
        for name in ("hgemm_v22_split_k", "hgemm_v40_split_k_deep_ring")
    },
    **{
        name: [(32, 4096, 8192), (17, 1000, 4104), (24, 2056, 3000), (5, 520, 3000), (33, 64, 64)]
        for name in ("hgemm_v26_split_k_32rows", "hgemm_v41_split_k_32rows_deep_ring")
    },
    # v23's tile with six stages: a 6-stage ring over one k-tile (K = 64), rows past 64.
    "hgemm_v42_split_k_wide_deep_ring": [
        (64, 4096, 8192),
        (33, 1000, 4104),
        (48, 2056, 3000),
        (5, 520, 3000),
        (65, 64, 64),
    ],
    "hgemm_v24_wgmma_split_k": [
        (512, 512, 8192),
        (128, 1000, 4104),
        (200, 264, 1000),
        (3, 24, 5000),
        (130, 136, 64),
    ],
    # v24's split on 128x64 tiles: S = 4 (16 tiles), 2 (one row of 16 tiles), a ragged last
    # column of 8 (N = 1000), rows and columns past the edge, one k-tile.
    "hgemm_v33_split_k_n64": [
        (512, 512, 8192),
        (128, 1000, 4104),
        (200, 264, 1000),
        (3, 24, 5000),
        (130, 72, 64),
        (1024, 1024, 1024),
    ],
    "hgemm_v25_wgmma_split_k_wide": [
        (512, 512, 8192),
        (128, 1000, 4104),
        (200, 520, 1000),
        (3, 24, 5000),
        (130, 264, 64),
    ],
    # Partial tiles through global memory: S = 16 (512 x 512, one row of tiles, one tile), 4,
    # 2 (45 tiles) and 1 (one k-tile).
    "hgemm_v27_split_k_global": [
        (512, 512, 8192),
        (128, 1000, 4104),
        (200, 520, 1000),
        (3, 24, 5000),
        (1032, 1032, 3000),
        (130, 264, 64),
    ],
    # K split over the SMs with no owner (a second kernel sums the partial tiles): one tile with
    # S near the SM count (S = 117 at 7 x 40 x 30000), a ragged last share, two row tiles, many
    # tiles with S = 2, one k-tile (S = 1), rows and columns past the edge.
    "hgemm_v35_split_k_reduce": [
        (7, 40, 30000),
        (16, 64, 65536),
        (3, 24, 5000),
        (17, 520, 3000),
        (1, 4096, 8192),
        (3, 72, 64),
    ],
    # Stream-K on 16x64 tiles (two blocks per SM): runs crossing tiles (272 tiles of 32 k-tiles),
    # runs of one or two k-tiles on one tile (5 x 64 x 65536: every block but the last contributes
    # to one owner), two row tiles (17 rows: groups of two blocks), fewer units than blocks (one
    # k-tile: a block per tile), one unit, a ragged last tile and K.
    "hgemm_v47_split_k_stream": [
        (1, 17408, 4096),
        (16, 4096, 8192),
        (5, 64, 65536),
        (17, 520, 3000),
        (7, 1000, 4104),
        (9, 4544, 104),
        (3, 64, 64),
    ],
    # The same schedule on 32x64 tiles: 17-32 rows, two row tiles at 33 rows.
    "hgemm_v48_split_k_32rows_stream": [
        (32, 17408, 4096),
        (17, 4096, 8192),
        (24, 64, 65536),
        (33, 520, 3000),
        (20, 4544, 104),
        (3, 64, 64),
    ],
    "hgemm_v36_split_k_reduce_wide": [
        (51, 192, 21440),
        (64, 64, 32768),
        (3, 24, 5000),
        (65, 520, 3000),
        (33, 1000, 4104),
        (33, 72, 64),
    ],
    "hgemm_v28_split_k_global_narrow": [
        (512, 512, 32768),
        (128, 1000, 4104),
        (200, 264, 1000),
        (3, 24, 5000),
        (1032, 1032, 3000),
        (130, 136, 64),
    ],
    # Stream-K: runs of a few k-tiles on one tile (3 x 24: 79 blocks of one k-tile each, 78 of
    # them contributions to the last), runs that cross tiles (1032 x 1032), fewer units than SMs
    # (130 x 264 x 64: a block per tile) and many tiles; both tile widths.
    **{name: STREAM_K_SHAPES for name in ("hgemm_v29_stream_k", "hgemm_v30_stream_k_wide")},
    # The last partial round split along K (132 SMs), on the same shapes: outputs of fewer tiles
    # than SMs split 4 ways (4 tiles, 1 tile with a ragged K) and 2 ways (45 tiles), 1 k-tile (no
    # split), a last round too large to split (120 tiles); and a second round of 12 tiles split 2
    # ways (K = 11 k-tiles), a third of 42 split 3 ways, whole rounds only (132 tiles).
    "hgemm_v31_split_last_round": STREAM_K_SHAPES
    + [(1500, 2904, 704), (2100, 4400, 1000), (1536, 2816, 200)],
    # v31's schedule on 128x192 tiles: 4 tiles split 4 ways, 33 x 4 = 132 tiles (whole rounds
    # only), 12 x 12 = 144 (a second round of 12 split 4 ways), a last column of 8 (N = 2120).
    "hgemm_v32_split_last_round_192": STREAM_K_SHAPES
    + [(1500, 2304, 704), (4200, 768, 1000), (1536, 2120, 800)],
}


@pytest.mark.parametrize("layout", ["CC", "CF", "FC", "FF"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(SPLIT_SHAPES))
def test_split_k_shapes(torch, name, dtype, layout):
    _skip_if_not_runnable(name, dtype)
    for M, N, K in SPLIT_SHAPES[name]:
        A, B = _random(torch, M, K, dtype, layout[0]), _random(torch, K, N, dtype, layout[1])
        if layout[0] == "F":  # column-major A with its leading dimension padded to 16 bytes
            A = _random(torch, K, -(-M // 8) * 8, dtype).t()[:M]
        C = torch.full((M, N), float("nan"), device="cuda", dtype=_dtype(torch, dtype))
        fastgemm.hgemm(A, B, C, 0.5, 0.0, kernel=name)
        torch.cuda.synchronize()
        check(torch, A, B, C, 0.5, 0.0)
        C0 = _random(torch, M, N, dtype)
        C = C0.clone()
        fastgemm.hgemm(A, B, C, -1.0, 0.25, kernel=name)
        torch.cuda.synchronize()
        check(torch, A, B, C, -1.0, 0.25, C0)
    if name == "hgemm_v40_split_k_deep_ring":  # auto's choice for decode over at most SMs tiles
        assert fastgemm.select(1, 4096, 8192, dtype).kernel.name == name
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    if name == "hgemm_v22_split_k" and sms < 142 and 1.7 * 71 <= sms:  # 71 tiles: the band
        assert fastgemm.select(1, 4544, 4096, dtype).kernel.name == name


# A padded view of C whose rows end inside a 16-byte unit (100 fp16 columns of a wider array, or
# rows of a taller column-major one): nothing outside the view is written, by any rung. (A TMA
# store bounds its writes at 16-byte units; such a C goes through an aligned work buffer.)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("c_order", ["C", "F"])
def test_padded_c_view_edges_untouched(torch, dtype, c_order):
    names = ["auto"] + [k.name for k in fastgemm.kernels(dtype) if k.epilogue == "tma_store"]
    for name in names:
        if name != "auto" and fastgemm.dispatch.check_runnable(
            _info(name, dtype), fastgemm._device_cc(None), 16
        ):
            continue
        for M, N, K in ((328, 100, 96), (100, 328, 96), (200, 37, 256), (1000, 1100 + 4, 512)):
            # B a padded view too (16-byte rows), so that every rung can run it.
            A, B = _random(torch, M, K, dtype), _random(torch, K, -(-N // 8) * 8 + 8, dtype)[:, :N]
            # C's rows padded to a 16-byte leading dimension with at least 8 more elements.
            if c_order == "C":
                X = torch.full((M, -(-N // 8) * 8 + 8), 7.0, device="cuda", dtype=_dtype(torch, dtype))
                C, outside = X[:, :N], X[:, N:]
            else:
                X = torch.full((N, -(-M // 8) * 8 + 8), 7.0, device="cuda", dtype=_dtype(torch, dtype))
                C, outside = X[:, :M].t(), X[:, M:]
            C0 = _random(torch, M, N, dtype)
            C.copy_(C0)
            fastgemm.hgemm(A, B, C, 0.5, -0.25, kernel=name)
            torch.cuda.synchronize()
            assert bool((outside == 7.0).all()), (name, M, N, K, c_order)
            check(torch, A, B, C, 0.5, -0.25, C0)


# With SMs reserved (fastgemm.reserve_sms, the tensor-parallel pair's overlap), the persistent,
# split and stream-K rungs size their grids for fewer SMs: every tile still computed once.
@pytest.mark.parametrize("reserve", [1, 100, 1000])
@pytest.mark.parametrize(
    "name",
    [
        "hgemm_v20_hoisted_beta",
        "hgemm_v23_split_k_wide",
        "hgemm_v42_split_k_wide_deep_ring",
        "hgemm_v47_split_k_stream",
        "hgemm_v48_split_k_32rows_stream",
        "hgemm_v27_split_k_global",
        "hgemm_v29_stream_k",
        "hgemm_v30_stream_k_wide",
        "hgemm_v31_split_last_round",
        "hgemm_v32_split_last_round_192",
        "hgemm_v43_cluster_64x128",
        "hgemm_v44_tile_192x128",
        "hgemm_v45_cluster_128x128",
        "hgemm_v46_cluster_128x256",
        "auto",
    ],
)
def test_reserved_sms(torch, name, reserve):
    if name != "auto":
        _skip_if_not_runnable(name, "float16")
    for M, N, K in ((256, 1536, 4096), (384, 768, 8192), (1000, 1104, 904)):
        A, B = _random(torch, M, K, "float16"), _random(torch, K, N, "float16")
        C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
        with fastgemm.reserve_sms(reserve):
            fastgemm.hgemm(A, B, C, 0.5, 0.0, kernel=name)
        torch.cuda.synchronize()
        check(torch, A, B, C, 0.5, 0.0)
    assert fastgemm._C.set_reserved_sms(0) == 0


# Outputs with few columns: auto runs the transposed problem C^T = B^T A^T on a split-K decode
# kernel (C written column-major). Rows past the tile, K off the tile, every operand layout and
# both C orders; the shapes of at most 16 columns and many rows must take that path.
NARROW = [(4096, 16, 4096), (1000, 24, 1032), (16384, 8, 512), (777, 64, 4096), (3000, 1, 2048)]


@pytest.mark.parametrize("layout", list(itertools.product("CF", repeat=3)), ids=lambda t: "".join(t))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_output_transposed(torch, dtype, layout):
    for M, N, K in NARROW:
        A, B = _random(torch, M, K, dtype, layout[0]), _random(torch, K, N, dtype, layout[1])
        C = torch.full((N, M), float("nan"), device="cuda", dtype=_dtype(torch, dtype))
        C = C.t() if layout[2] == "F" else C.t().contiguous()  # NaN either way: beta = 0 ignores it
        fastgemm.hgemm(A, B, C, 0.5, 0.0)
        torch.cuda.synchronize()
        check(torch, A, B, C, 0.5, 0.0)
        C0 = _random(torch, M, N, dtype, layout[2])
        C = C0.clone()
        fastgemm.hgemm(A, B, C, -1.0, 0.25)
        torch.cuda.synchronize()
        check(torch, A, B, C, -1.0, 0.25, C0)
        if 8 <= N <= 16 and M >= 1000:  # (N = 1: B's rows are 2 bytes apart, so no 16-byte path)
            assert fastgemm.select(M, N, K, dtype).flip, (M, N, K)


# The decode rungs of at most 32 rows run each block's k-tiles from its own first one where A is
# MN-major with rows that are not whole 32-byte sectors (hgemm.cuh: mainloop_range): a flipped
# narrow problem of 8 or 24 columns (B^T's rows 16 or 48 bytes apart), or a column-major A of 8
# or 24 rows. A ragged last k-tile then lands inside a run, cluster shares and stream-K segments
# rotate within their own k-tiles, and the result must still be every k-tile once, in a fixed
# order: checked against float64 on a NaN-poisoned C (beta = 0) and with beta != 0, twice for
# the same bits.
ROTATED = [
    "hgemm_v22_split_k",
    "hgemm_v26_split_k_32rows",
    "hgemm_v35_split_k_reduce",
    "hgemm_v40_split_k_deep_ring",
    "hgemm_v41_split_k_32rows_deep_ring",
    "hgemm_v47_split_k_stream",
    "hgemm_v48_split_k_32rows_stream",
]


@pytest.mark.parametrize("name", ROTATED)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_decode_rungs_rotated_k_start(torch, name, dtype):
    _skip_if_not_runnable(name, dtype)
    for small, big, K in [(8, 1504, 2056), (24, 3000, 1000), (8, 9000, 4104), (24, 600, 8200)]:
        # C^T = B^T A^T of a big x small output: B^T (small x K) is MN-major, rows 2 * small bytes
        B = _random(torch, K, small, dtype)
        A = _random(torch, big, K, dtype)
        Ct = torch.full((small, big), float("nan"), device="cuda", dtype=_dtype(torch, dtype))
        fastgemm.hgemm(B.t(), A.t(), Ct, 0.5, 0.0, kernel=name)
        first = Ct.clone()
        fastgemm.hgemm(B.t(), A.t(), Ct, 0.5, 0.0, kernel=name)
        torch.cuda.synchronize()
        check(torch, B.t(), A.t(), Ct, 0.5, 0.0)
        assert bool((Ct.view(torch.int16) == first.view(torch.int16)).all()), (name, small, big, K)
        # A column-major A of `small` rows (a decode GEMM's activations stored by columns)
        A2 = _random(torch, small, K, dtype, "F")
        B2 = _random(torch, K, big, dtype)
        C0 = _random(torch, small, big, dtype)
        C = C0.clone()
        fastgemm.hgemm(A2, B2, C, -1.0, 0.25, kernel=name)
        torch.cuda.synchronize()
        check(torch, A2, B2, C, -1.0, 0.25, C0)


@pytest.mark.parametrize("kernel,dtype", HGEMM + [("auto", "float16")], ids=lambda v: v)
def test_repeated_calls_same_bits(torch, kernel, dtype):
    # The same inputs give the same bits on every call: no reduction whose order depends on
    # timing (split-K partial tiles are summed in a fixed order). 100 calls per shape; the decode
    # shape makes the split-K kernel split 8 ways.
    if kernel != "auto":
        _skip_if_not_runnable(kernel, dtype)
    for M, N, K in [(4, 1024, 16384), (264, 392, 1000), (4096, 8, 8192)]:
        A, B = _random(torch, M, K, dtype), _random(torch, K, N, dtype)
        C = torch.empty((M, N), device="cuda", dtype=_dtype(torch, dtype))
        fastgemm.hgemm(A, B, C, kernel=kernel)
        first = C.clone()
        same = torch.ones((), dtype=torch.bool, device="cuda")
        for _ in range(99):
            fastgemm.hgemm(A, B, C, kernel=kernel)
            same &= (C.view(torch.int16) == first.view(torch.int16)).all()  # bits, NaN included
        torch.cuda.synchronize()
        assert bool(same), (kernel, dtype, (M, N, K))


_HOLD = r"""
extern "C" __global__ void hold(long long cycles) {
  extern __shared__ int pad[];
  const long long start = clock64();
  while (clock64() - start < cycles) {}
  if (threadIdx.x == 0) pad[0] = 0;
}
"""


@pytest.mark.parametrize("name", ["hgemm_v27_split_k_global", "hgemm_v28_split_k_global_narrow"])
def test_split_global_on_a_busy_gpu(torch, name):
    # The split through global memory on a GPU shared with other work: a kernel on another stream
    # holds every SM but two (160 KiB of shared memory a block, so no split block fits beside
    # it), so a tile's blocks start far apart and its helpers leave their bands to the last of
    # them to start (split_global.cuh). The launch must complete while the other kernel still
    # runs, and give the bits of a launch on an idle GPU.
    cp = require("cupy")
    _skip_if_not_runnable(name, "float16")
    M, N, K = 512, 512, 16384
    A, B = _random(torch, M, K, "float16"), _random(torch, K, N, "float16")
    idle = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    fastgemm.hgemm(A, B, idle, 0.5, 0.0, kernel=name)
    torch.cuda.synchronize()
    check(torch, A, B, idle, 0.5, 0.0)
    hold = cp.RawKernel(_HOLD, "hold")
    hold.max_dynamic_shared_size_bytes = 160 * 1024
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    busy, mine = cp.cuda.Stream(non_blocking=True), torch.cuda.Stream()
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    with busy:
        hold((sms - 2,), (32,), (cp.int64(4 * 10**8),), shared_mem=160 * 1024)  # ~0.2 s
    fastgemm.hgemm(A, B, C, 0.5, 0.0, kernel=name, stream=mine)
    mine.synchronize()
    overlapped = not busy.done
    busy.synchronize()
    assert overlapped, "the split kernel did not run beside the busy kernel"
    assert bool((C.view(torch.int16) == idle.view(torch.int16)).all()), name


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_other_device_than_current(torch, dtype):
    # Operands on GPU 1 while GPU 0 is current: the launch (and the Hopper path's tensor maps,
    # shared-memory attribute and cluster occupancy, all per device) must follow the operands.
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    M, N, K = 1000, 1032, 520
    A = torch.randn(M, K, device="cuda:1").to(_dtype(torch, dtype))
    B = torch.randn(K, N, device="cuda:1").to(_dtype(torch, dtype))
    C = torch.full((M, N), float("nan"), device="cuda:1", dtype=A.dtype)
    with torch.cuda.device(0):
        fastgemm.hgemm(A, B, C)
        for kernel in [k.name for k in fastgemm.kernels(dtype) if k.copy == "tma"]:
            if fastgemm.dispatch.check_runnable(_info(kernel, dtype), fastgemm._device_cc(1), 16):
                continue
            D = torch.full((M, N), float("nan"), device="cuda:1", dtype=A.dtype)
            fastgemm.hgemm(A, B, D, kernel=kernel)
            torch.cuda.synchronize(1)
            check(torch, A, B, D, 1.0, 0.0)
    torch.cuda.synchronize(1)
    check(torch, A, B, C, 1.0, 0.0)
