"""GPU tests of the fp32 kernels on the tensor cores (precision "tf32x3" and "tf32"): every kernel
against a float64 reference within its precision's bound, the accuracy contract of "tf32x3"
against cuBLAS SGEMM on the same data, inf/NaN propagation, and the packing of either layout.

Marker ``gpu``: skipped without a GPU, failing instead under ``FASTGEMM_REQUIRE_GPU=1``.
"""

from __future__ import annotations

import itertools

import pytest
from conftest import require
from gpu_reference import PRECISION_UNIT, check_gemm, random_matrix

import fastgemm

pytestmark = pytest.mark.gpu

TENSOR_CORE = [k for k in fastgemm.kernels("float32") if k.precision != "ieee"]
NAMES = [k.name for k in TENSOR_CORE]
PRECISION = {k.name: k.precision for k in TENSOR_CORE}


@pytest.fixture
def cp():
    cupy = require("cupy")
    cupy.cuda.set_allocator(None)  # no pooling: out-of-bounds writes must not hide in pool slack
    return cupy


def _skip_unless_runnable(name: str) -> None:
    info = next(k for k in TENSOR_CORE if k.name == name)
    problem = fastgemm.dispatch.check_runnable(info, fastgemm._device_cc(None), 16)
    if problem is not None:
        pytest.skip(problem)


def test_tensor_core_kernels_listed():
    assert {k.precision for k in TENSOR_CORE} == {"tf32", "tf32x3"}
    for k in TENSOR_CORE:
        assert k.family == "wgmma" and k.min_cc == 90, k


SHAPES = [(1, 4, 4), (4, 8, 12), (127, 260, 68), (260, 132, 300), (1000, 1000, 1000), (3, 1028, 4100)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", NAMES)
def test_shapes_beta0_poisoned(cp, name, shape):
    _skip_unless_runnable(name)
    M, N, K = shape
    A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
    C = cp.full((M, N), cp.nan, dtype=cp.float32)  # beta = 0: the NaNs must not survive
    out = fastgemm.sgemm(A, B, C, 1.5, 0.0, kernel=name, precision=PRECISION[name])
    assert out is C
    check_gemm(cp, A, B, C, 1.5, 0.0, unit=PRECISION_UNIT[PRECISION[name]])


@pytest.mark.parametrize("layout", list(itertools.product("CF", repeat=3)), ids="".join)
@pytest.mark.parametrize("name", NAMES)
def test_layouts_alpha_beta(cp, name, layout):
    _skip_unless_runnable(name)
    oa, ob, oc = layout
    for M, N, K in [(124, 132, 68), (260, 132, 300), (64, 1024, 2052)]:
        A, B = random_matrix(cp, M, K, "float32", oa), random_matrix(cp, K, N, "float32", ob)
        C0 = random_matrix(cp, M, N, "float32", oc)
        C = C0.copy(order=oc)
        fastgemm.sgemm(A, B, C, -0.75, 0.5, kernel=name, precision=PRECISION[name])
        check_gemm(cp, A, B, C, -0.75, 0.5, C0, unit=PRECISION_UNIT[PRECISION[name]])


@pytest.mark.parametrize("name", NAMES)
def test_views_and_misaligned_operands(cp, name):
    # Strided views are copied by the entry, then packed; a misaligned C goes through the padded
    # path of auto; a named 16-byte kernel refuses it with the alignment message.
    _skip_unless_runnable(name)
    unit = PRECISION_UNIT[PRECISION[name]]
    big = random_matrix(cp, 300, 400, "float32")
    # 100x128 with a row pitch of 800 (read in place, 16-byte aligned), 128x128 strided (copied)
    A, B = big[2:202:2, 4:132], big[4:132, 8:392:3]
    C = cp.empty((100, 128), dtype=cp.float32)
    fastgemm.sgemm(A, B, C, kernel=name, precision=PRECISION[name])
    check_gemm(cp, A, B, C, 1.0, 0.0, unit=unit)
    storage = cp.zeros(1024 * 1024 + 1, dtype=cp.float32)
    Cm = storage[1:].reshape(1024, 1024)  # 4-byte aligned only
    A, B = random_matrix(cp, 1024, 1024, "float32"), random_matrix(cp, 1024, 1024, "float32")
    with pytest.raises(RuntimeError, match="16-byte aligned"):
        fastgemm.sgemm(A, B, Cm, kernel=name, precision=PRECISION[name])
    fastgemm.sgemm(A, B, Cm, precision=PRECISION[name])  # auto: padded temporaries
    check_gemm(cp, A, B, Cm, 1.0, 0.0, unit=unit)


def test_tf32_in_place_equals_packed(cp):
    # precision "tf32" reads a K-major, aligned operand in place (the tensor cores drop its 13 low
    # mantissa bits) and packs any other into truncated copies: both must give the same bits.
    name = next(n for n in NAMES if PRECISION[n] == "tf32")
    _skip_unless_runnable(name)
    M, N, K = 260, 520, 1000
    A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32", "F")
    C1, C2 = cp.empty((M, N), dtype=cp.float32), cp.empty((M, N), dtype=cp.float32)
    fastgemm.sgemm(A, B, C1, kernel=name, precision="tf32")  # both K-major: read in place
    fastgemm.sgemm(cp.asfortranarray(A), cp.ascontiguousarray(B), C2, kernel=name, precision="tf32")
    assert bool((C1.view(cp.int32) == C2.view(cp.int32)).all())


def _relative_error(cp, C, A, B):
    ref = A.astype(cp.float64) @ B.astype(cp.float64)
    return float(cp.linalg.norm(C.astype(cp.float64) - ref) / cp.linalg.norm(ref))


ACCURACY_SHAPES = [(512, 512, 512), (256, 1024, 4096), (1024, 1024, 1024), (128, 256, 16384)]


V14, V24 = "sgemm_v14_wgmma_tf32x3", "sgemm_v24_wgmma_tf32x3_split_k"


def _tf32x3_and_cublas_errors(cp, shape, spread, seeds=(1, 2), name=V14):
    _skip_unless_runnable(name)
    M, N, K = shape
    rng = cp.random.default_rng(7)
    A = random_matrix(cp, M, K, "float32", seed=seeds[0])
    B = random_matrix(cp, K, N, "float32", seed=seeds[1])
    if spread:
        A *= cp.exp2(rng.integers(-spread, spread + 1, (M, K)).astype(cp.float32))
        B *= cp.exp2(rng.integers(-spread, spread + 1, (K, N)).astype(cp.float32))
    ours = cp.empty((M, N), dtype=cp.float32)
    fastgemm.sgemm(A, B, ours, kernel=name, precision="tf32x3")
    cublas = A @ B  # cuBLAS SGEMM: the package's tests run CuPy with TF32 off
    return _relative_error(cp, ours, A, B), _relative_error(cp, cublas, A, B)


@pytest.mark.parametrize(
    "shape", [(2048, 2048, 2048), (4096, 4096, 1024)], ids=lambda s: "x".join(map(str, s))
)
def test_tf32x3_as_accurate_as_cublas_sgemm(cp, shape):
    # The precision contract where it holds today: normalised error against float64 no larger
    # than cuBLAS SGEMM's on the same data, for squares and wide outputs (normal data).
    e_ours, e_cublas = _tf32x3_and_cublas_errors(cp, shape, 0)
    assert e_ours <= e_cublas, (e_ours, e_cublas)


@pytest.mark.parametrize("spread", [0, 30], ids=["normal", "exponents-2^+-30"])
@pytest.mark.parametrize("shape", ACCURACY_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", [V14, V24])
def test_tf32x3_error_within_3x_cublas_sgemm(cp, name, shape, spread):
    # Everywhere else, measured: small outputs, deep K, and exponents spread over 2^-30 .. 2^30
    # stay within 3x of cuBLAS SGEMM's error (cuBLAS splits K on small outputs and sums the
    # shares; v14 sums K in order, one 32-deep chunk at a time; v24's split shares are blocked
    # sums, which brought it to 1.1-2x there, not to cuBLAS's; see benchmarks/NOTES.md).
    e_ours, e_cublas = _tf32x3_and_cublas_errors(cp, shape, spread, name=name)
    assert e_ours <= 3 * e_cublas, (e_ours, e_cublas)


@pytest.mark.parametrize("name", NAMES)
def test_inf_nan_propagate_as_ieee(cp, name):
    # Inf and NaN in A or B give the non-finite outputs IEEE fp32 gives, and only those; B holds
    # small integers (exact in tf32: zero residuals, where a careless split makes inf * 0 = NaN).
    _skip_unless_runnable(name)
    M, N, K = 96, 160, 200
    A = random_matrix(cp, M, K, "float32")
    B = cp.asarray(cp.random.default_rng(3).integers(-4, 5, (K, N)), dtype=cp.float32)
    A[3, 10], A[50, 7], A[70, 0] = cp.inf, -cp.inf, cp.nan
    B[5, 9], B[6, 100] = cp.nan, cp.inf
    C = cp.empty((M, N), dtype=cp.float32)
    fastgemm.sgemm(A, B, C, kernel=name, precision=PRECISION[name])
    ref = A.astype(cp.float64) @ B.astype(cp.float64)
    assert bool((cp.isnan(C) == cp.isnan(ref)).all()), "NaN pattern differs from IEEE"
    assert bool((cp.isposinf(C) == cp.isposinf(ref)).all()), "+inf pattern differs from IEEE"
    assert bool((cp.isneginf(C) == cp.isneginf(ref)).all()), "-inf pattern differs from IEEE"
    finite = cp.isfinite(ref)
    err = cp.abs(C.astype(cp.float64) - ref)[finite]
    mag = (cp.abs(A.astype(cp.float64)) @ cp.abs(B.astype(cp.float64)))[finite]
    assert bool((err <= (2 * K + 4) * PRECISION_UNIT[PRECISION[name]] * mag + 1e-30).all())


@pytest.mark.parametrize("name", NAMES)
def test_repeated_calls_same_bits(cp, name):
    _skip_unless_runnable(name)
    M, N, K = 300, 520, 2000
    A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
    C = cp.empty((M, N), dtype=cp.float32)
    fastgemm.sgemm(A, B, C, kernel=name, precision=PRECISION[name])
    first = C.copy()
    same = cp.ones((), dtype=cp.bool_)
    for _ in range(99):
        fastgemm.sgemm(A, B, C, kernel=name, precision=PRECISION[name])
        same &= (C.view(cp.int32) == first.view(cp.int32)).all()
    assert bool(same)


@pytest.mark.parametrize("precision", ["tf32x3", "tf32"])
def test_auto_within_precision(cp, precision):
    # auto with a precision runs that precision's tensor-core kernel where its rule applies, fp32
    # arithmetic elsewhere; select() says which, and the call meets the precision either way.
    for M, N, K in [(2048, 2048, 512), (8, 256, 64)]:
        sel = fastgemm.select(M, N, K, "float32", precision=precision)
        if fastgemm._device_cc(None) == 90 and M == 2048:
            assert sel.kernel.precision == precision, sel
        if M == 8:
            assert sel.kernel.precision == "ieee", sel
        A, B = random_matrix(cp, M, K, "float32"), random_matrix(cp, K, N, "float32")
        C = cp.full((M, N), cp.nan, dtype=cp.float32)
        fastgemm.sgemm(A, B, C, precision=precision)
        check_gemm(cp, A, B, C, 1.0, 0.0, unit=PRECISION_UNIT[precision])


def test_capture_in_a_cuda_graph(cp):
    # The packed operands are stream-ordered temporaries: a captured call replays correctly.
    name = next(n for n in NAMES if PRECISION[n] == "tf32x3")
    _skip_unless_runnable(name)
    A, B = random_matrix(cp, 256, 512, "float32"), random_matrix(cp, 512, 384, "float32", "F")
    C = cp.empty((256, 384), dtype=cp.float32)
    fastgemm.sgemm(A, B, C, kernel=name, precision="tf32x3")  # warm-up (shared-memory attribute)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        fastgemm.sgemm(A, B, C, kernel=name, precision="tf32x3", stream=stream)
        graph = stream.end_capture()
    C.fill(cp.nan)
    cp.cuda.Device().synchronize()
    for _ in range(3):
        graph.launch(stream)
    stream.synchronize()
    check_gemm(cp, A, B, C, 1.0, 0.0, unit=PRECISION_UNIT["tf32x3"])


@pytest.mark.parametrize("layout", ["CC", "CF", "FC", "FF"])
@pytest.mark.parametrize(
    "name, shape",
    [("sgemm_v22_wgmma_tf32_regs", (1156, 2084, 1036)), ("sgemm_v23_wgmma_tf32_split_k", (388, 260, 9228))],
)
def test_operand_through_registers_every_layout(cp, name, shape, layout):
    # v22 and v23 read an MN-major operand through registers and run a row-major B as the
    # transposed problem (C stored column-major): v22 over several persistent tiles per block,
    # v23 over a few tiles with K split in a cluster; ragged edges on every side (16-byte rows in
    # either layout, no side a multiple of the tile) and a K that ends inside a k-tile, in each
    # layout pair, against float64; the same inputs give the same bits on a second call.
    _skip_unless_runnable(name)
    M, N, K = shape
    A = random_matrix(cp, M, K, "float32", layout[0])
    B = random_matrix(cp, K, N, "float32", layout[1])
    C = cp.full((M, N), cp.nan, dtype=cp.float32)
    fastgemm.sgemm(A, B, C, kernel=name, precision="tf32")
    check_gemm(cp, A, B, C, 1.0, 0.0, unit=PRECISION_UNIT["tf32"])
    again = cp.full((M, N), cp.nan, dtype=cp.float32)
    fastgemm.sgemm(A, B, again, kernel=name, precision="tf32")
    assert bool((C.view(cp.int32) == again.view(cp.int32)).all())
