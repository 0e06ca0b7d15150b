"""GPU tests of fastgemm.distributed on two or more GPUs: one GEMM spread over the host's GPUs
(every way of cutting, chunked pieces, odd shapes, all dtypes, both layouts, beta != 0 with C's
old values and beta == 0 with NaN in C) against one GPU's result and a float64 reference; the
argument checks; and the tensor-parallel pair in torchrun workers."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import require

import fastgemm
import fastgemm.distributed as fd
from fastgemm import partition

pytestmark = [pytest.mark.gpu, pytest.mark.multi_gpu]

TOL = {"float32": 2e-5, "float16": 5e-3, "bfloat16": 3e-2}


def _operands(torch, M, N, K, dtype, a_f, b_f, c_f, seed):
    g = torch.Generator(device="cuda:0").manual_seed(seed)
    tdt = getattr(torch, dtype)

    def mat(r, c, fortran):
        x = torch.randn(r, c, device="cuda:0", dtype=tdt, generator=g)
        return x.t().contiguous().t() if fortran else x

    A, B = mat(M, K, a_f), mat(K, N, b_f)
    C = mat(M, N, c_f)
    return A, B, C


def _check(torch, A, B, C0, C, alpha, beta, dtype):
    ref = alpha * (A.double() @ B.double()) + (beta * C0.double() if beta else 0)
    err = float((C.double() - ref).norm() / max(ref.norm().item(), 1e-30))
    assert err <= TOL[dtype], err
    assert torch.isfinite(C).all()


SHAPES = [(200, 328, 96), (131, 264, 77), (256, 160, 520), (64, 72, 1000)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("strategy", ["rows", "cols", "grid", "k"])
@pytest.mark.parametrize("layouts", ["CCC", "FCF", "CFC"])
def test_spread_matches_reference(small_chunks, dtype, strategy, layouts):
    torch = require("torch")
    if strategy == "k" and dtype != "float32":
        with pytest.raises(ValueError, match="float32"):
            A, B, C = _operands(torch, 64, 64, 64, dtype, False, False, False, 0)
            fd.gemm(A, B, C, strategy="k")
        return
    for i, (M, N, K) in enumerate(SHAPES):
        for alpha, beta in ((1.0, 0.0), (0.75, -0.5)):
            A, B, C = _operands(torch, M, N, K, dtype, *(c == "F" for c in layouts), seed=i)
            if beta == 0:
                C.fill_(float("nan"))
            C0 = C.clone()
            fd.gemm(A, B, C, alpha, beta, strategy=strategy)
            torch.cuda.synchronize()
            _check(torch, A, B, C0, C, alpha, beta, dtype)
            # The same bits on a second call (beta == 0: C is overwritten).
            if beta == 0:
                again = C.clone().fill_(float("nan"))
                fd.gemm(A, B, again, alpha, beta, strategy=strategy)
                torch.cuda.synchronize()
                assert torch.equal(again, C)


@pytest.mark.parametrize("relay", [True, False])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gated_pieces_match_reference(small_chunks, monkeypatch, dtype, relay):
    # fp16/bf16 remote pieces as gated GEMMs (fd.GATED, off by default; Hopper GPUs): queued before
    # their inputs land, each waits inside for the flags the copies write; both layouts of A and
    # B, pieces of several bands, chunks (some by slices, the others whole: SMS 1) and slices,
    # relayed or not; the same bits on a second call.
    torch = require("torch")
    if not fd._gate_kernel(tuple(range(fastgemm.device_count()))):
        pytest.skip("the gated kernel runs on sm_90 GPUs only")
    monkeypatch.setattr(fd, "GATED", True)
    monkeypatch.setattr(fd, "RELAY", relay)
    monkeypatch.setattr(fd, "SMS", 1)
    launched = []
    gemm_gated = fd._Run.gemm_gated
    monkeypatch.setattr(fd._Run, "gemm_gated", lambda self, *a: launched.append(1) or gemm_gated(self, *a))
    for i, (M, N, K, a_f, b_f) in enumerate([(520, 600, 392, False, False), (344, 1040, 200, True, True)]):
        A, B, C = _operands(torch, M, N, K, dtype, a_f, b_f, False, seed=20 + i)
        C.fill_(float("nan"))
        fd.gemm(A, B, C, 0.5, 0.0, strategy="rows")
        torch.cuda.synchronize()
        _check(torch, A, B, C, C, 0.5, 0.0, dtype)
        again = torch.full_like(C, float("nan"))
        fd.gemm(A, B, again, 0.5, 0.0, strategy="rows")
        torch.cuda.synchronize()
        assert torch.equal(again, C)
    assert launched, "no gated GEMM ran"


@pytest.mark.parametrize("sliced", [False, True])
@pytest.mark.parametrize("strategy", ["rows", "grid"])
def test_relay_gives_the_same_bits_back_to_back(small_chunks, monkeypatch, strategy, sliced):
    # Bands and chunks that several remote pieces share (three or more GPUs) leave home once and
    # are passed on between the remote devices: on the same pieces, the same bits as every device
    # copying its own from home, also over calls queued back to back (memory returns to a pool
    # only after the devices that copy from it are done). The pieces are fixed here: the plan
    # itself may cut differently with relay (fewer bytes leave home). By K slices, a device adds
    # its slices in another order with relay (the ones it brings from home first): the results
    # are checked against the reference, and a second pass of calls gives the same bits.
    torch = require("torch")
    monkeypatch.setattr(fd, "SLICES", sliced)
    import cupy as cp

    from fastgemm._arrays import as_matrix

    M, N, K = 328, 200, 136
    devs = list(range(fastgemm.device_count()))
    pl = partition.plan(M, N, K, len(devs), 4, strategies=[strategy])
    calls = []
    for i in range(4):
        A, B, C = _operands(torch, M, N, K, "float32", False, i % 2 == 1, False, seed=10 + i)
        calls.append((A, B, C.fill_(float("nan"))))
    home = int(torch.cuda.current_stream(0).cuda_stream)
    outs: dict[Any, list] = {}
    for relay in (False, True, "again"):
        monkeypatch.setattr(fd, "RELAY", bool(relay))
        outs[relay] = []
        for A, B, C in calls:
            out = C.clone()
            blocks = [fd._Block.of(as_matrix(x, "X")) for x in (A, B, out)]
            with cp.cuda.Device(0):
                fd._Run(cp, fastgemm, devs, home, "auto", "ieee", 1.0, 0.0).start(*blocks, pl)
            outs[relay].append(out)
        torch.cuda.synchronize()
    for (A, B, C), a, b, again in zip(calls, outs[False], outs[True], outs["again"]):
        _check(torch, A, B, C, a, 1.0, 0.0, "float32")
        _check(torch, A, B, C, b, 1.0, 0.0, "float32")
        assert torch.equal(b, again)
        if not sliced:
            assert torch.equal(a, b)


def test_large_problem_spreads_and_matches_one_gpu():
    torch = require("torch")
    M, N, K = 8192, 8192, 8192
    spread = fd.plan(M, N, K, fastgemm.device_count(), 2)
    assert len(spread.plan.pieces) >= 2, spread
    A, B, C = _operands(torch, M, N, K, "float16", False, False, False, 7)
    one = torch.empty_like(C)
    fastgemm.gemm(A, B, one)
    fd.gemm(A, B, C)
    torch.cuda.synchronize()
    err = float((C.double() - one.double()).norm() / one.double().norm())
    assert err <= 1e-3, err


def test_cupy_arrays_and_a_stream():
    cp = require("cupy")
    torch = require("torch")
    with cp.cuda.Device(0):
        A = cp.random.standard_normal((300, 200), dtype=cp.float32)
        B = cp.random.standard_normal((200, 260), dtype=cp.float32)
        C = cp.full((300, 260), cp.nan, dtype=cp.float32)
        s = cp.cuda.Stream(non_blocking=True)
        fd.gemm(A, B, C, strategy="rows", stream=s)
        s.synchronize()
        ref = A.astype(cp.float64) @ B.astype(cp.float64)
        assert float(cp.linalg.norm(C - ref) / cp.linalg.norm(ref)) < 2e-5
    del torch


def test_one_device_and_degenerate_problems():
    torch = require("torch")
    A, B, C = _operands(torch, 40, 48, 32, "float32", False, False, False, 3)
    C0 = C.clone()
    fd.gemm(A, B, C, devices=[0])
    torch.cuda.synchronize()
    _check(torch, A, B, C0, C, 1.0, 0.0, "float32")
    C.copy_(C0)
    fd.gemm(A, B, C, 0.0, 2.0, strategy="rows")  # alpha == 0: beta * C
    torch.cuda.synchronize()
    assert torch.equal(C, 2 * C0)
    E = torch.empty(0, 48, device="cuda:0")
    fd.gemm(torch.empty(0, 32, device="cuda:0"), B, E, strategy="rows")


def test_argument_errors():
    torch = require("torch")
    A, B, C = _operands(torch, 40, 48, 32, "float32", False, False, False, 3)
    n = fastgemm.device_count()
    with pytest.raises(ValueError, match="more than once"):
        fd.gemm(A, B, C, devices=[0, 1, 1])
    with pytest.raises(ValueError, match="do not exist"):
        fd.gemm(A, B, C, devices=[0, n])
    with pytest.raises(ValueError, match="must include device 0"):
        fd.gemm(A, B, C, devices=[1])
    with pytest.raises(ValueError, match="one GPU"):
        fd.gemm(A, B.to("cuda:1"), C)
    with pytest.raises(ValueError, match="conform"):
        fd.gemm(A, B[:20], C)
    with pytest.raises(TypeError, match="one dtype"):
        fd.gemm(A, B.half(), C)
    with pytest.raises(ValueError, match="overlaps"):
        buf = torch.empty(40 * 48 + 40 * 32, device="cuda:0")
        fd.gemm(buf[: 40 * 32].view(40, 32), B, buf[100 : 100 + 40 * 48].view(40, 48))
    with pytest.raises(ValueError, match="strategy"):
        fd.gemm(A, B, C, strategy="diagonal")


def test_tensor_parallel_pair_in_torchrun():
    require("torch")
    from fastgemm.bench.multigpu import check_tp

    proc = check_tp(fastgemm.device_count(), "float16,bfloat16,float32", timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "TP-CHECK\n  OK" in proc.stdout, proc.stdout[-3000:]


def test_partition_of_plan_covers_c():
    for M, N, K in ((16384, 16384, 16384), (8192, 8192, 8192), (1024, 1024, 65536)):
        for itemsize in (2, 4):
            s = fd.plan(M, N, K, fastgemm.device_count(), itemsize)
            area = sum((p.rows[1] - p.rows[0]) * (p.cols[1] - p.cols[0]) for p in s.plan.pieces)
            assert area == M * N or s.plan.strategy == "k"
            assert partition.bytes_moved(s.plan.strategy, s.plan.pieces, itemsize, False) >= 0
