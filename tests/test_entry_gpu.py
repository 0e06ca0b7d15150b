"""GPU tests of the C++ entry around the kernels: threads, CUDA graphs, the plan cache, streams.

Marker ``gpu``: skipped without a GPU, failing instead under ``FASTGEMM_REQUIRE_GPU=1``.
"""

from __future__ import annotations

import threading
import warnings

import pytest
from conftest import require

import fastgemm

pytestmark = pytest.mark.gpu


@pytest.fixture
def torch():
    t = require("torch")
    if not t.cuda.is_available():
        pytest.fail("torch cannot see the GPU")
    return t


@pytest.fixture
def cp():
    return require("cupy")


def _rel_err(torch, C, A, B, alpha=1.0, beta=0.0, C0=None):
    ref = alpha * (A.double() @ B.double())
    if C0 is not None:
        ref += beta * C0.double()
    return float((C.double() - ref).norm() / max(float(ref.norm()), 1e-30))


TOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}


def _run_threads(n_threads: int, work) -> list:
    """work(t) in n_threads threads at once; the exceptions they raised, with their index."""
    errors: list = []

    def guarded(t: int) -> None:
        try:
            work(t)
        except Exception as exc:  # noqa: BLE001 - reported with the thread's index
            errors.append((t, repr(exc)))

    threads = [threading.Thread(target=guarded, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return errors


def test_threads_on_their_own_streams(torch, cp):
    # 8 threads x 200 calls, each thread on its own stream (torch's thread-local current stream,
    # an explicit stream=, or CuPy's current stream), fp16, bf16 and fp32, beta = 0 and != 0; every
    # output checked. The launches run without the GIL, so the threads' calls interleave.
    n_threads, calls = 8, 200
    results: list = [None] * n_threads
    barrier = threading.Barrier(n_threads, timeout=120)

    def work(t: int) -> None:
        dtype = ["float16", "bfloat16", "float32", "float16"][t % 4]
        tdt = getattr(torch, dtype)
        gen = torch.Generator(device="cuda").manual_seed(t)
        M, N, K = 64 + 8 * t, 96, 40 + 8 * t
        A = torch.randn(M, K, device="cuda", generator=gen).to(tdt)
        B = torch.randn(K, N, device="cuda", generator=gen).to(tdt)
        C0 = torch.randn(M, N, device="cuda", generator=gen).to(tdt)
        outs = [C0.clone() if i % 2 else torch.full_like(C0, float("nan")) for i in range(calls)]
        torch.cuda.synchronize()
        fn = fastgemm.sgemm if dtype == "float32" else fastgemm.hgemm
        barrier.wait()
        if t % 4 == 3:  # CuPy arrays (views of the same memory) on CuPy's current stream
            cA, cB = cp.asarray(A), cp.asarray(B)
            couts = [cp.asarray(o) for o in outs]
            cs = cp.cuda.Stream(non_blocking=True)
            with cs:
                for i in range(calls):
                    fn(cA, cB, couts[i], 1.0 + i, 0.5 * (i % 2))
            cs.synchronize()
        else:  # torch: the thread's current stream, or the same stream passed as stream=
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                for i in range(calls):
                    if t % 2:
                        fn(A, B, outs[i], 1.0 + i, 0.5 * (i % 2))
                    else:
                        fn(A, B, outs[i], 1.0 + i, 0.5 * (i % 2), stream=s)
            s.synchronize()
        worst = max(
            _rel_err(torch, outs[i], A, B, 1.0 + i, 0.5 * (i % 2), C0 if i % 2 else None)
            for i in range(calls)
        )
        results[t] = (dtype, worst)

    errors = _run_threads(n_threads, work)
    assert not errors, errors
    for t, (dtype, worst) in enumerate(results):
        assert worst < TOL[dtype], (t, dtype, worst)


def test_split_k_global_on_concurrent_streams(torch):
    # hgemm_v27 hands partial tiles between its blocks through a scratch buffer of the stream:
    # four threads, each on its own stream, run it at once (4 tiles split 16 ways: four grids of 64
    # blocks, more than the SMs hold together), 50 calls each; every output checked.
    name = "hgemm_v27_split_k_global"
    if not any(k.name == name for k in fastgemm.kernels("float16")):
        pytest.skip(f"{name} is not in this build (no sm_90 code)")
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip(f"{name} runs on sm_90 only")
    n_threads, calls = 4, 50
    worst: list = [None] * n_threads
    barrier = threading.Barrier(n_threads, timeout=120)

    def work(t: int) -> None:
        gen = torch.Generator(device="cuda").manual_seed(100 + t)
        M, N, K = 256, 512 - 8 * t, 8192
        A = torch.randn(M, K, device="cuda", generator=gen).half()
        B = torch.randn(K, N, device="cuda", generator=gen).half()
        outs = [torch.full((M, N), float("nan"), device="cuda").half() for _ in range(calls)]
        s = torch.cuda.Stream()
        torch.cuda.synchronize()
        barrier.wait()
        with torch.cuda.stream(s):
            for i in range(calls):
                fastgemm.hgemm(A, B, outs[i], 1.0 + i, 0.0, kernel=name)
        s.synchronize()
        worst[t] = max(_rel_err(torch, outs[i], A, B, 1.0 + i) for i in range(calls))

    errors = _run_threads(n_threads, work)
    assert not errors, errors
    assert all(w is not None and w < TOL["float16"] for w in worst), worst


def _padded_shape(dtype: str) -> tuple[int, int, int]:
    # Odd extents: 2- or 4-byte aligned rows; enough multiply-adds for auto to pad (fp32: an
    # output large enough for auto to take a tf32x3 rung, which needs 16-byte rows).
    if dtype != "float32":  # past v34's rules (in-place reads of a 2-byte aligned B)
        M = N = K = 1031
    else:
        M, N, K = 2049, 2049, 513
    assert M * N * K >= fastgemm.dispatch.PAD_MIN_MACS
    return M, N, K


@pytest.mark.parametrize("beta", [0.0, 0.5])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_torch_graph_capture_padded_path(torch, dtype, beta):
    # The padded path inside torch.cuda.graph: its temporaries are stream-ordered allocations,
    # which the capture turns into the graph's own memory nodes (allocated and freed on each
    # replay), so replays read the operands as they are at replay time. (fp32: the tensor-core
    # 3xTF32 rungs need 16 bytes; the ieee rungs take 4-byte operands in place.)
    M, N, K = _padded_shape(dtype)
    precision = {"precision": "tf32x3"} if dtype == "float32" else {}
    sel = fastgemm.select(M, N, K, dtype, alignment=2 if dtype != "float32" else 4, **precision)
    assert sel.pad, sel
    tdt = getattr(torch, dtype)
    A = torch.randn(M, K, device="cuda").to(tdt)
    B = torch.randn(K, N, device="cuda").to(tdt)
    C0 = torch.randn(M, N, device="cuda").to(tdt)
    C = C0.clone()
    fn = fastgemm.sgemm if dtype == "float32" else fastgemm.hgemm
    fn(A, B, C, 1.0, beta, **precision)  # warm-up outside the capture
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        fn(A, B, C, 2.0, beta, **precision)
    for _ in range(2):  # new inputs each replay
        A.copy_(torch.randn(M, K, device="cuda").to(tdt))
        C.copy_(C0)
        graph.replay()
        torch.cuda.synchronize()
        assert _rel_err(torch, C, A, B, 2.0, beta, C0) < TOL[dtype]


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_torch_graph_capture_unaligned_in_place(torch, beta):
    # v34 reads an under-aligned B in place and copies an under-aligned A into the stream's
    # scratch: inside a capture that copy is the graph's own (replays read A as it is then).
    M, N, K = 127, 1031, 515
    sel = fastgemm.select(M, N, K, "float16", alignment=2)
    assert sel.kernel.name == "hgemm_v34_split_k_unaligned" and not sel.pad, sel
    A = torch.randn(M, K, device="cuda").half()
    B = torch.randn(K, N, device="cuda").half()
    C0 = torch.randn(M, N, device="cuda").half()
    C = C0.clone()
    fastgemm.hgemm(A, B, C, 1.0, beta)  # warm-up outside the capture
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        fastgemm.hgemm(A, B, C, 2.0, beta)
    for _ in range(2):  # new inputs each replay
        A.copy_(torch.randn(M, K, device="cuda").half())
        C.copy_(C0)
        graph.replay()
        torch.cuda.synchronize()
        assert _rel_err(torch, C, A, B, 2.0, beta, C0) < TOL["float16"]


@pytest.mark.parametrize("padded", [False, True], ids=["aligned", "padded"])
def test_cupy_stream_capture(cp, torch, padded):
    M, N, K = _padded_shape("float32") if padded else (256, 384, 128)
    precision = "tf32x3" if padded else "ieee"  # fp32 pads only for the tensor-core rungs
    assert fastgemm.select(M, N, K, "float32", alignment=4, precision=precision).pad == padded
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        A = cp.random.standard_normal((M, K), dtype=cp.float32)
        B = cp.random.standard_normal((K, N), dtype=cp.float32)
        C = cp.full((M, N), cp.nan, dtype=cp.float32)
        fastgemm.sgemm(A, B, C, precision=precision)  # warm-up
        s.synchronize()
        s.begin_capture()
        fastgemm.sgemm(A, B, C, 1.5, 0.0, precision=precision)
        graph = s.end_capture()
        A[...] = cp.random.standard_normal((M, K), dtype=cp.float32)
        C.fill(cp.nan)
        graph.launch(s)
    s.synchronize()
    tA, tB, tC = (torch.as_tensor(x, device="cuda") for x in (A, B, C))
    assert _rel_err(torch, tC, tA, tB, 1.5) < TOL["float32"]


def test_plan_cache_is_what_select_explains(torch):
    # select() without cc reads the plan that a call of the same problem class runs: after it, a
    # call on fresh row-major operands (beta = 0) adds no plan; a second call adds none either.
    M, N, K = 1000 + fastgemm._C.plan_cache_size(), 776, 520  # a shape no earlier test used
    sel = fastgemm.select(M, N, K, "float16")
    n = fastgemm._C.plan_cache_size()
    A = torch.randn(M, K, device="cuda").half()
    B = torch.randn(K, N, device="cuda").half()
    C = torch.empty(M, N, device="cuda", dtype=torch.float16)
    fastgemm.hgemm(A, B, C)
    fastgemm.hgemm(A, B, C)
    assert fastgemm._C.plan_cache_size() == n, sel
    fastgemm.hgemm(A, B, C, 1.0, 0.5)  # beta != 0 is its own problem class
    assert fastgemm._C.plan_cache_size() == n + 1
    torch.cuda.synchronize()
    assert _rel_err(torch, C, A, B, 1.5, 0.0) < 1e-2  # C = AB + 0.5 AB


def test_default_stream_is_torch_current_stream(torch):
    # Without stream=, a torch call runs on torch's current stream of this thread: work queued
    # there before the call (a long copy into A) is ordered before the GEMM.
    M = N = K = 2048
    A = torch.zeros(M, K, device="cuda", dtype=torch.float16)
    B = torch.randn(K, N, device="cuda").half()
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    src = torch.randn(M, K, device="cuda").half()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # ~tens of ms of GPU time on s before the copy
        A.copy_(src)
        fastgemm.hgemm(A, B, C)
    s.synchronize()
    assert _rel_err(torch, C, src, B) < 2e-3


def test_torch_attributes_read_as_a_lookup_finds_them(torch):
    # The entry reads a torch tensor type's attributes through the descriptors of its class, found
    # once per type (torch.nn.Parameter here: a type of torch's own modules, read as a tensor, not
    # through __cuda_array_interface__): a class patched between calls is read as an attribute
    # lookup finds it.
    Parameter = torch.nn.Parameter
    A = torch.randn(64, 48, device="cuda")
    other = torch.randn(64, 48, device="cuda")
    B = torch.randn(48, 32, device="cuda")
    C = torch.full((64, 32), float("nan"), device="cuda")
    param = Parameter(A, requires_grad=False)  # shares A's storage
    assert fastgemm._C.describe(param, "A")["library"] == "torch"
    for patched in (False, True, False):
        if patched:
            Parameter.data_ptr = lambda self: other.data_ptr()  # A now reads as `other`
        try:
            fastgemm.sgemm(param, B, C)
        finally:
            if patched:
                del Parameter.data_ptr
        torch.cuda.synchronize()
        assert _rel_err(torch, C, other if patched else A, B) < TOL["float32"], patched


@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr"])
def test_sparse_torch_tensor_is_refused_by_layout(torch, layout):
    # A dense tensor's layout is never read; a sparse one, which fails a dense tensor's reads
    # (is_contiguous(), stride() or data_ptr()), is named by its layout, whichever operand it is.
    dense = torch.randn(64, 64, device="cuda").half()
    with warnings.catch_warnings():  # torch calls its CSR support beta
        warnings.simplefilter("ignore", UserWarning)
        sparse = dense.to_sparse() if layout == "sparse_coo" else dense.to_sparse_csr()
    C = torch.empty(64, 64, device="cuda", dtype=torch.float16)
    for args, name in (((sparse, dense, C), "A"), ((dense, sparse, C), "B"), ((dense, dense, sparse), "C")):
        with pytest.raises(
            TypeError, match=f"{name} is a torch.{layout} PyTorch tensor; fastgemm needs dense"
        ):
            fastgemm.hgemm(*args)


@pytest.mark.parametrize("beta", [0.0, 0.5])
@pytest.mark.parametrize("b_order", ["C", "F"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "copied, shape",
    [
        # B's rows off 128 bytes (N = 712 halves; or, column-major, K = 4104) on 3072 rows: B is
        # copied; A's rows, also off 128 bytes, stay as they are.
        ("B", (3072, 712, 4104)),
        # Both operands' rows off 128 bytes on a wide output (6664 columns, 1280 rows): A is copied.
        ("A", (1280, 6664, 3048)),
    ],
)
def test_rows_off_128_bytes_copied_first(torch, dtype, b_order, beta, copied, shape):
    # auto copies the operand into a temporary with 128-byte rows before the TMA rung reads it.
    # Checked against float64, C poisoned where beta = 0, the same bits on a second call.
    M, N, K = shape
    sel = fastgemm.select(M, N, K, dtype, order="C" + b_order)
    assert f"{copied}'s rows are off 128 bytes" in sel.reason, sel.reason
    tdt = getattr(torch, dtype)
    A = torch.randn(M, K, device="cuda").to(tdt)
    B = (
        torch.randn(N, K, device="cuda").to(tdt).T
        if b_order == "F"
        else torch.randn(K, N, device="cuda").to(tdt)
    )
    C0 = (
        torch.randn(M, N, device="cuda").to(tdt)
        if beta
        else torch.full((M, N), float("nan"), device="cuda").to(tdt)
    )
    C = C0.clone()
    fastgemm.hgemm(A, B, C, 1.0, beta)
    torch.cuda.synchronize()
    assert _rel_err(torch, C, A, B, 1.0, beta, C0 if beta else None) < TOL[dtype]
    first = C.clone()
    C.copy_(C0)
    fastgemm.hgemm(A, B, C, 1.0, beta)
    torch.cuda.synchronize()
    assert torch.equal(first, C)
