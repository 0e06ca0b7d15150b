"""Probes of ``fastgemm.distributed.gemm`` on all of this host's GPUs, with operands on GPU 0: the
data behind its chunk sizes, its relay and its share model (benchmarks/NOTES.md, sixteenth
session).

    python benchmarks/spread_probe.py shares --dtype float16 --size 16384 --shares 0.30,0.33,0.36
    python benchmarks/spread_probe.py timeline --dtype float16 --size 16384 --share 0.33

``shares``: one GPU's ``auto``, then ``distributed.gemm``'s own plan, then a split by rows over
every GPU at each forced home share, with and without relay, for each (FIRST_ROWS, CHUNK_COLS) of
--chunking, and (float32) with the remote pieces by K slices of each --slice-k; milliseconds per call of back-to-back calls (median of 3 rounds of 4, every GPU
synchronised around a round), the speedup over one GPU, and the model's own share and estimate.
Every result is checked against one GPU's.

``timeline``: one call at a forced share behind three back-to-back ones, with a timing event
after every copy and GEMM on every stream: milliseconds from each remote device's start (its wait
for home's stream) to each event, per stream, and the host's time to queue one call.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import cupy as cp
import torch

import fastgemm
import fastgemm.distributed as fd
from fastgemm import partition
from fastgemm._arrays import as_matrix


def _sync(n: int) -> None:
    for d in range(n):
        torch.cuda.synchronize(d)


def _ms(call: Callable[[], Any], n: int, calls: int = 4, rounds: int = 3) -> float:
    call()
    times = []
    for _ in range(rounds):
        _sync(n)
        t = time.perf_counter()
        for _ in range(calls):
            call()
        _sync(n)
        times.append((time.perf_counter() - t) / calls)
    return statistics.median(times) * 1e3


def _gated(A: Any, n: int) -> bool:
    """fp16/bf16 pieces as gated GEMMs where the kernel runs on every GPU (and fd.GATED)."""
    return A.element_size() == 2 and fd._gate_kernel(tuple(range(n)))


def _forced(A: Any, B: Any, C: Any, n: int, share: float) -> Callable[[], None]:
    """A split by rows over n GPUs with home's share fixed (relay as fd.RELAY says at the call)."""
    M, K = A.shape
    pl = partition.plan(M, B.shape[1], K, n, A.element_size(), False, ["rows"], home_share=share)
    blocks = [fd._Block.of(as_matrix(x, "X")) for x in (A, B, C)]
    home = int(torch.cuda.current_stream(0).cuda_stream)

    def call() -> None:
        with cp.cuda.Device(0):
            fd._Run(cp, fastgemm, list(range(n)), home, "auto", "ieee", 1.0, 0.0, gated).start(*blocks, pl)

    gated = _gated(A, n)
    return call


def _operands(dtype: str, size: int) -> tuple[Any, Any, Any, Any]:
    tdt = getattr(torch, dtype)
    g = torch.Generator(device="cuda:0").manual_seed(0)
    A = torch.randn(size, size, device="cuda:0", dtype=tdt, generator=g)
    B = torch.randn(size, size, device="cuda:0", dtype=tdt, generator=g)
    return A, B, torch.empty_like(A), torch.empty_like(A)


def shares(args: argparse.Namespace, n: int) -> None:
    A, B, C, ref = _operands(args.dtype, args.size)
    S, isz = args.size, A.element_size()
    one = _ms(lambda: fastgemm.gemm(A, B, ref), n)
    spread = fd.plan(S, S, S, n, isz)
    t = _ms(lambda: fd.gemm(A, B, C), n)
    print(
        f"{args.dtype} {S}^3 on {n} GPUs: one GPU {one:.2f} ms; the plan ({spread.plan.strategy}, "
        f"{len(spread.plan.pieces)} GPUs, share {spread.home_share:.3f}, estimate "
        f"{spread.spread_s * 1e3:.2f} ms) {t:.2f} ms = {one / t:.2f}x",
        flush=True,
    )
    default = (fd.FIRST_ROWS, fd.CHUNK_COLS, fd.RELAY, fd.SLICES, fd.SLICE_K, fd.GATED, fd.GATE_FIRST_ROWS)
    runs = [(c, r, 0, 0) for c in args.chunking.split(",") for r in (True, False)]
    if fd._sliced(isz) or isz == 4:
        runs = [(runs[0][0], True, int(k), 0) for k in args.slice_k.split(",")] + runs
    if _gated(A, n):
        runs = [(runs[0][0], True, 0, int(g)) for g in args.gate_first.split(",")] + runs
    for chunking, relay, slice_k, gate_first in runs:
        fd.FIRST_ROWS, fd.CHUNK_COLS = (int(v) for v in chunking.split("x"))
        fd.RELAY, fd.SLICES, fd.SLICE_K = relay, slice_k > 0, max(slice_k, 1)
        fd.GATED, fd.GATE_FIRST_ROWS = gate_first > 0, gate_first or default[6]
        if True:
            what = f"K slices of {slice_k}" if slice_k else f"FIRST_ROWS x CHUNK_COLS {chunking}"
            what = f"gated, first GEMM of {gate_first} rows" if gate_first else what
            line = f"  {what}, relay {int(relay)}:"
            for share in (float(v) for v in args.shares.split(",")):
                C.fill_(float("nan"))
                t = _ms(_forced(A, B, C, n, share), n)
                err = float((C.double() - ref.double()).norm() / ref.double().norm())
                line += f" s{share:.2f} {t:.2f} ({one / t:.2f}x{'' if err < 1e-2 else ' WRONG'})"
            model = fd._plan_on(S, S, S, n, isz, False, "rows", gated=fd.GATED and _gated(A, n))
            print(f"{line} | model: share {model.home_share:.3f}, {model.spread_s * 1e3:.2f} ms", flush=True)
    fd.FIRST_ROWS, fd.CHUNK_COLS, fd.RELAY, fd.SLICES, fd.SLICE_K, fd.GATED, fd.GATE_FIRST_ROWS = default


def timeline(args: argparse.Namespace, n: int) -> None:
    A, B, C, _ = _operands(args.dtype, args.size)
    fd.SLICE_K = int(args.slice_k.split(",")[0])
    fd.SLICES = fd.SLICE_K > 0
    call = _forced(A, B, C, n, args.share)
    for _ in range(3):
        call()
    _sync(n)
    t = time.perf_counter()
    call()
    issue = time.perf_counter() - t
    _sync(n)
    names = {int(torch.cuda.current_stream(0).cuda_stream): "d0.home"}
    for d, streams in fd._streams.items():
        for name, s in zip(("arrive", "compute", "back", "relay", "out"), streams):
            names[s.ptr] = f"d{d}.{name}"
    log: list[tuple[int, str, str, Any]] = []

    def record(cp_: Any, stream: int, label: str = "copy") -> Any:
        ev = cp.cuda.Event(block=False, disable_timing=False)
        cp.cuda.runtime.eventRecord(ev.ptr, stream)
        log.append((cp.cuda.runtime.getDevice(), names.get(stream, str(stream)), label, ev))
        return ev

    saved = fd._record, fd._Run.gemm, fd._Remote.prepare, fd._SlicedRemote.prepare, fd._Run.gemm_gated

    def gemm(self: Any, a: Any, b: Any, c: Any, beta: float, stream: int) -> None:
        saved[1](self, a, b, c, beta, stream)
        record(cp, stream, f"gemm {a.shape[0]}x{b.shape[1]}x{a.shape[1]}")

    def prepare(self: Any, A_: Any, B_: Any, C_: Any, ready: Any) -> Any:
        with cp.cuda.Device(self.dev):
            cp.cuda.runtime.streamWaitEvent(self.arrive, ready.ptr, 0)
            record(cp, self.arrive, "start")
        return saved[3 if isinstance(self, fd._SlicedRemote) else 2](self, A_, B_, C_, ready)

    def gemm_gated(self: Any, a: Any, b: Any, c: Any, fa: int, fb: int, stream: int) -> None:
        saved[4](self, a, b, c, fa, fb, stream)
        record(cp, stream, f"gated {a.shape[0]}x{b.shape[1]}x{a.shape[1]}")

    fd._record, fd._Run.gemm, fd._Run.gemm_gated = record, gemm, gemm_gated  # type: ignore[method-assign]
    fd._Remote.prepare = fd._SlicedRemote.prepare = prepare  # type: ignore[method-assign]
    saved_gp = fd._GatedRemote.prepare

    def gated_prepare(self: Any, A_: Any, B_: Any, C_: Any, ready: Any) -> Any:
        with cp.cuda.Device(self.dev):
            cp.cuda.runtime.streamWaitEvent(self.arrive, ready.ptr, 0)
            record(cp, self.arrive, "start")
        return saved_gp(self, A_, B_, C_, ready)

    fd._GatedRemote.prepare = gated_prepare  # type: ignore[method-assign]
    try:
        for _ in range(3):
            call()
        log.clear()
        call()
        _sync(n)
    finally:
        fd._record, fd._Run.gemm, fd._Remote.prepare, fd._SlicedRemote.prepare, fd._Run.gemm_gated = saved  # type: ignore[method-assign]
        fd._GatedRemote.prepare = saved_gp  # type: ignore[method-assign]
    print(
        f"{args.dtype} {args.size}^3, home share {args.share}: the host queues a call in {issue * 1e3:.2f} ms"
    )
    first: dict[int, Any] = {}
    for dev, _, _, ev in log:
        first.setdefault(dev, ev)
    for dev, stream, label, ev in sorted(log, key=lambda x: (x[0], x[1])):
        with cp.cuda.Device(dev):
            print(f"  {stream:12s} {label:24s} {cp.cuda.get_elapsed_time(first[dev], ev):8.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["shares", "timeline"])
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    ap.add_argument("--size", type=int, default=16384, help="M = N = K")
    ap.add_argument("--shares", default="0.28,0.31,0.34,0.37", help="home's shares (shares)")
    ap.add_argument("--chunking", default="2048x2048,4096x2048", help="FIRST_ROWSxCHUNK_COLS list")
    ap.add_argument("--slice-k", default="512,1024,2048", help="SLICE_K list where K slices run (shares)")
    ap.add_argument(
        "--gate-first", default="2048", help="GATE_FIRST_ROWS list (fp16/bf16 gated pieces, shares)"
    )
    ap.add_argument("--share", type=float, default=0.33, help="home's share (timeline)")
    args = ap.parse_args()
    n = torch.cuda.device_count()
    if n < 2:
        raise SystemExit(f"needs at least 2 GPUs; this machine has {n}")
    torch.backends.cuda.matmul.allow_tf32 = False
    (shares if args.mode == "shares" else timeline)(args, n)


if __name__ == "__main__":
    main()
