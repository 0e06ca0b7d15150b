"""``python -m fastgemm.bench --multi-gpu``: the multi-GPU benchmark.

Two parts, both timed end to end (back-to-back calls from Python, host cost included, until every
GPU is done) in interleaved rounds, median of the rounds:

- **one process** (``fastgemm.distributed.gemm``): each problem with A, B and C on device 0, on
  all of the host's GPUs against one GPU's ``auto`` (``fastgemm.gemm``) and ``torch.matmul`` on
  one GPU, in the same run; speedup, scaling efficiency (speedup / GPUs), and the error of the
  spread result against one GPU's.
- **the tensor-parallel pair**, one process per GPU started here through ``torchrun``
  (``--tp-ranks``): ``all_gather_gemm`` and ``gemm_reduce_scatter`` at a model MLP's shapes against
  the unoverlapped baseline (NCCL ``all_gather_into_tensor`` then ``torch.matmul``;
  ``torch.matmul`` then ``reduce_scatter_tensor``), the time of the slowest rank.

Writes ``multigpu-<gpu>.json`` (``multigpu-<n>gpus-<gpu>.json`` on n != 2 GPUs) and prints a
table. ``--tp-worker`` is the entry of each torchrun process (not for direct use);
``--tp-check`` runs the workers' correctness and error checks only (the multi-GPU tests use it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .tables import multigpu_tables

DEFAULT_SHAPES = {
    "float16": [(16384, 16384, 16384), (8192, 8192, 8192), (8192, 28672, 8192)],
    "bfloat16": [(16384, 16384, 16384)],
    "float32": [(8192, 8192, 8192), (2048, 2048, 65536)],
}
# The tensor-parallel pair: an MLP of a 70B-class model (hidden 8192, intermediate 28672) on
# 8192 tokens, the intermediate dimension split over the ranks.
TP_TOKENS, TP_HIDDEN, TP_INTER = 8192, 8192, 28672
ROUNDS = 7
TOLERANCE = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 4e-2}


def _shape(text: str) -> tuple[int, int, int]:
    parts = text.lower().split("x")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"{text!r} is not MxNxK")
    return (int(parts[0]), int(parts[1]), int(parts[2]))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m fastgemm.bench --multi-gpu", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--dtype", default="float16,bfloat16,float32", help="comma list (default: all three)")
    p.add_argument(
        "--shapes", type=lambda s: [_shape(x) for x in s.split(",")], help="MxNxK list (default per dtype)"
    )
    p.add_argument("--rounds", type=int, default=ROUNDS, help=f"interleaved rounds (default {ROUNDS})")
    p.add_argument("--calls", type=int, default=5, help="back-to-back calls per round (default 5)")
    p.add_argument(
        "--tp-ranks", type=int, default=0, help="GPUs (ranks) for the tensor-parallel pair (default: all)"
    )
    p.add_argument("--no-tp", action="store_true", help="skip the tensor-parallel pair")
    p.add_argument("--tp-tokens", type=int, default=TP_TOKENS)
    p.add_argument("--tp-hidden", type=int, default=TP_HIDDEN)
    p.add_argument("--tp-inter", type=int, default=TP_INTER)
    p.add_argument("--tp-dtype", default="float16,bfloat16")
    p.add_argument(
        "--tp-comm-sms", default="", help="also time the pair with these comm_sms values (comma list)"
    )
    p.add_argument("--out", default="results")
    p.add_argument("--tp-worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--tp-check", action="store_true", help="tensor-parallel correctness and error checks only"
    )
    p.add_argument("--tp-json", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _median_round(call: Callable[[], Any], sync: Callable[[], Any], calls: int) -> float:
    sync()
    t = time.perf_counter()
    for _ in range(calls):
        call()
    sync()
    return (time.perf_counter() - t) / calls


def _interleaved(
    cases: dict[str, Callable[[], Any]], sync: Callable[[], Any], rounds: int, calls: int
) -> dict[str, float]:
    for call in cases.values():  # warm up: plans, pools, peer access, communicators
        _median_round(call, sync, 1)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, call in cases.items():
            times[name].append(_median_round(call, sync, calls))
    return {name: statistics.median(v) for name, v in times.items()}


def _rel_err(torch: Any, x: Any, ref: Any) -> float:
    x, ref = x.double(), ref.double()
    return float((x - ref).norm() / max(ref.norm().item(), 1e-30))


# --- one process, all GPUs ---------------------------------------------------------------------


def single_process(args: argparse.Namespace) -> list[dict]:
    import torch

    import fastgemm
    import fastgemm.distributed as dist_gemm

    n = torch.cuda.device_count()
    if n < 2:
        raise SystemExit(f"--multi-gpu needs at least 2 GPUs; this machine has {n}")

    def sync() -> None:
        for d in range(n):
            torch.cuda.synchronize(d)

    records = []
    torch.backends.cuda.matmul.allow_tf32 = False
    for dtype in [d.strip() for d in args.dtype.split(",") if d.strip()]:
        for M, N, K in args.shapes or DEFAULT_SHAPES.get(dtype, DEFAULT_SHAPES["float16"]):
            records.append(_one_shape(torch, fastgemm, dist_gemm, dtype, (M, N, K), n, args, sync))
            torch.cuda.empty_cache()
    return records


def _one_shape(torch, fastgemm, dist_gemm, dtype, shape, n, args, sync) -> dict:
    M, N, K = shape
    tdt = getattr(torch, dtype)
    g = torch.Generator(device="cuda:0").manual_seed(0)
    A = torch.randn(M, K, device="cuda:0", dtype=tdt, generator=g)
    B = torch.randn(K, N, device="cuda:0", dtype=tdt, generator=g)
    C1, C2, C3 = (torch.empty(M, N, device="cuda:0", dtype=tdt) for _ in range(3))
    spread = dist_gemm.plan(M, N, K, n, A.element_size())
    cases = {
        "fastgemm (1 GPU)": lambda: fastgemm.gemm(A, B, C1),
        "torch.matmul (1 GPU)": lambda: torch.matmul(A, B, out=C2),
        f"fastgemm.distributed ({n} GPUs)": lambda: dist_gemm.gemm(A, B, C3),
    }
    t = _interleaved(cases, sync, args.rounds, args.calls)
    err = _rel_err(torch, C3, C1)
    one, peer, many = (t[k] for k in cases)
    flops = 2.0 * M * N * K
    rec = {
        "dtype": dtype,
        "shape": [M, N, K],
        "gpus": n,
        "strategy": spread.plan.strategy + (" (transposed)" if spread.transposed else ""),
        "pieces": len(spread.plan.pieces),
        "home_share": round(spread.home_share, 4),
        "one_gpu_ms": one * 1e3,
        "torch_one_gpu_ms": peer * 1e3,
        "spread_ms": many * 1e3,
        "spread_tflops": flops / many / 1e12,
        "speedup": one / many,
        "speedup_vs_torch": peer / many,
        "efficiency": one / many / len(spread.plan.pieces),
        "rel_err_vs_one_gpu": err,
        "correct": err <= TOLERANCE[dtype],
    }
    print(
        f"{dtype:9s} {M}x{N}x{K}: 1 GPU {one * 1e3:8.2f} ms, torch {peer * 1e3:8.2f} ms, "
        f"{n} GPUs {many * 1e3:8.2f} ms ({rec['spread_tflops']:.0f} TFLOPS) -> "
        f"{rec['speedup']:.2f}x ({rec['speedup_vs_torch']:.2f}x torch), err {err:.1e}",
        flush=True,
    )
    return rec


# --- the tensor-parallel pair: the workers --------------------------------------------------


def _tp_setup() -> tuple[Any, Any, int, int]:
    import datetime

    import torch
    import torch.distributed as dist

    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group(
        "nccl",
        timeout=datetime.timedelta(seconds=60),
        device_id=torch.device("cuda", torch.cuda.current_device()),
    )
    return torch, dist, rank, size


def _tp_inputs(torch: Any, dtype: Any, T: int, H: int, inter: int, size: int, rank: int) -> dict[str, Any]:
    g = torch.Generator(device="cuda").manual_seed(1234 + rank)
    il = inter // size
    return {
        "x": torch.randn(T // size, H, device="cuda", dtype=dtype, generator=g),
        "w1": torch.randn(H, il, device="cuda", dtype=dtype, generator=g) / H**0.5,
        "y": torch.randn(T, il, device="cuda", dtype=dtype, generator=g),
        "w2": torch.randn(il, H, device="cuda", dtype=dtype, generator=g) / il**0.5,
    }


def _baselines(
    torch: Any, dist: Any, v: dict[str, Any], size: int
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    x, w1, y, w2 = v["x"], v["w1"], v["y"], v["w2"]
    full = torch.empty((x.shape[0] * size, x.shape[1]), dtype=x.dtype, device=x.device)
    h = torch.empty((full.shape[0], w1.shape[1]), dtype=x.dtype, device=x.device)
    part = torch.empty((y.shape[0], w2.shape[1]), dtype=y.dtype, device=y.device)
    z = torch.empty((y.shape[0] // size, w2.shape[1]), dtype=y.dtype, device=y.device)

    def ag() -> Any:
        dist.all_gather_into_tensor(full, x)
        return torch.matmul(full, w1, out=h)

    def rs() -> Any:
        torch.matmul(y, w2, out=part)
        dist.reduce_scatter_tensor(z, part)
        return z

    return ag, rs


def tp_worker(args: argparse.Namespace) -> int:
    """One rank: correctness against the baseline, then (unless --tp-check) interleaved timings;
    rank 0 writes the records to --tp-json."""
    torch, dist, rank, size = _tp_setup()
    import fastgemm.distributed as fd

    records, failures = [], []
    for dname in [d.strip() for d in args.tp_dtype.split(",") if d.strip()]:
        dtype = getattr(torch, dname)
        v = _tp_inputs(torch, dtype, args.tp_tokens, args.tp_hidden, args.tp_inter, size, rank)
        ag_base, rs_base = _baselines(torch, dist, v, size)
        ag_out = fd.all_gather_gemm(v["x"], v["w1"])
        rs_out = fd.gemm_reduce_scatter(v["y"], v["w2"])
        e_ag = _rel_err(torch, ag_out, ag_base())
        e_rs = _rel_err(torch, rs_out, rs_base())
        # Repeated calls give the same bits.
        same = torch.equal(fd.all_gather_gemm(v["x"], v["w1"]), ag_out) and torch.equal(
            fd.gemm_reduce_scatter(v["y"], v["w2"]), rs_out
        )
        tol = TOLERANCE[dname]
        if not (e_ag <= tol and e_rs <= tol and same):
            failures.append(f"{dname}: ag err {e_ag:.2e}, rs err {e_rs:.2e}, repeatable {same}")
        if args.tp_check:
            continue
        extra = [int(c) for c in args.tp_comm_sms.split(",") if c.strip()]
        cases = _tp_cases(fd, v, ag_base, rs_base, torch.empty_like(ag_out), torch.empty_like(rs_out), extra)
        t = _interleaved(cases, torch.cuda.synchronize, args.rounds, args.calls)
        slowest = torch.tensor([t[k] for k in cases], dtype=torch.float64, device="cuda")
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        t = dict(zip(cases, slowest.tolist()))
        records.append(
            {
                "dtype": dname,
                "ranks": size,
                "transport": "symm_mem" if any(fd._peer_spaces.values()) else "nccl",
                "tokens": args.tp_tokens,
                "hidden": args.tp_hidden,
                "intermediate": args.tp_inter,
                "times_ms": {k: s * 1e3 for k, s in t.items()},
                "ag_speedup": t["all_gather + torch.matmul"] / t["all_gather_gemm"],
                "rs_speedup": t["torch.matmul + reduce_scatter"] / t["gemm_reduce_scatter"],
                "pair_speedup": (t["all_gather + torch.matmul"] + t["torch.matmul + reduce_scatter"])
                / (t["all_gather_gemm"] + t["gemm_reduce_scatter"]),
                "ag_rel_err": e_ag,
                "rs_rel_err": e_rs,
            }
        )
    failures += _tp_odd_checks(torch, dist, fd, rank, size)
    failures += _tp_error_checks(torch, dist, fd, rank, size)
    everyone: list[Any] = [None] * size
    dist.all_gather_object(everyone, failures)
    if rank == 0:
        bad = [f"rank {r}: {f}" for r, fs in enumerate(everyone) for f in fs]
        print("TP-CHECK", "FAILED" if bad else "OK", *bad, sep="\n  ", flush=True)
        if args.tp_json:
            Path(args.tp_json).write_text(json.dumps(records, indent=1))
    dist.barrier()
    dist.destroy_process_group()
    return 1 if any(everyone) else 0


def _tp_cases(fd, v, ag_base, rs_base, ag_out, rs_out, extra_sms) -> dict[str, Callable[[], Any]]:
    x, w1, y, w2 = v["x"], v["w1"], v["y"], v["w2"]
    cases = {
        "all_gather + torch.matmul": ag_base,
        "all_gather_gemm": lambda: fd.all_gather_gemm(x, w1, ag_out, check=False),
        "all_gather_gemm (checked)": lambda: fd.all_gather_gemm(x, w1, ag_out),
        "torch.matmul + reduce_scatter": rs_base,
        "gemm_reduce_scatter": lambda: fd.gemm_reduce_scatter(y, w2, rs_out, check=False),
        "gemm_reduce_scatter (checked)": lambda: fd.gemm_reduce_scatter(y, w2, rs_out),
    }

    for sms in [fd.COMM_SMS, *extra_sms]:
        # NCCL's collectives beside the GEMMs, leaving them `sms` SMs
        cases[f"all_gather_gemm (nccl, comm_sms={sms})"] = lambda sms=sms: fd.all_gather_gemm(
            x, w1, ag_out, check=False, comm_sms=sms, transport="nccl"
        )
        cases[f"gemm_reduce_scatter (nccl, comm_sms={sms})"] = lambda sms=sms: fd.gemm_reduce_scatter(
            y, w2, rs_out, check=False, comm_sms=sms, transport="nccl"
        )
    return cases


def _tp_odd_checks(torch: Any, dist: Any, fd: Any, rank: int, size: int) -> list[str]:
    """Shards of different heights (all_gather_gemm), an M that the ranks do not divide and
    several column chunks (gemm_reduce_scatter), against float64 references."""
    from fastgemm import partition

    failures = []
    g = torch.Generator(device="cuda").manual_seed(99 + rank)
    heights = [5 + 3 * r for r in range(size)]
    x = torch.randn(heights[rank], 40, device="cuda", dtype=torch.float16, generator=g)
    w = torch.randn(40, 24, device="cuda", dtype=torch.float16, generator=g)
    padded = torch.zeros(max(heights), 40, device="cuda", dtype=torch.float16)
    padded[: heights[rank]] = x
    every = torch.empty(size * max(heights), 40, device="cuda", dtype=torch.float16)
    dist.all_gather_into_tensor(every, padded)
    full = torch.cat([every[r * max(heights) : r * max(heights) + h] for r, h in enumerate(heights)])
    for transport in ("auto", "nccl"):
        got = fd.all_gather_gemm(x, w, alpha=0.5, transport=transport)
        if _rel_err(torch, got, 0.5 * full.double() @ w.double()) > TOLERANCE["float16"]:
            failures.append(f"all_gather_gemm ({transport}) with shards of different heights: wrong result")
    M, N = 4 * size + 3, 40
    y = torch.randn(M, 16 + 8 * rank, device="cuda", dtype=torch.float16, generator=g)
    w2 = torch.randn(y.shape[1], N, device="cuda", dtype=torch.float16, generator=g)
    ref = y.double() @ w2.double()
    dist.all_reduce(ref)
    lo, hi = partition.split_range(M, size)[rank]
    chunk_cols, fd.RS_CHUNK_COLS = fd.RS_CHUNK_COLS, 16
    try:
        for transport in ("auto", "nccl"):
            got = fd.gemm_reduce_scatter(y, w2, transport=transport)
            again = fd.gemm_reduce_scatter(y, w2, transport=transport)
            if got.shape != (hi - lo, N) or _rel_err(torch, got, ref[lo:hi]) > TOLERANCE["float16"]:
                failures.append(f"gemm_reduce_scatter ({transport}) with M = {M}: wrong result")
            if not torch.equal(got, again):
                failures.append(f"gemm_reduce_scatter ({transport}): repeated calls differ")
    finally:
        fd.RS_CHUNK_COLS = chunk_cols
    return failures


def _tp_error_checks(torch: Any, dist: Any, fd: Any, rank: int, size: int) -> list[str]:
    """Bad input on one rank (another K; a wrong dtype; an out of the wrong height or layout)
    raises ValueError on every rank, for both functions."""
    failures = []
    last = rank == size - 1
    half = torch.float16
    cases = [
        ("a different K on the last rank", 96, half, None),
        ("float64 on the last rank", 64, torch.float64, None),
        ("an out of the wrong height on the last rank", 64, half, "rows"),
        ("a column-major out on the last rank", 64, half, "layout"),
    ]
    for what, k, dtype, bad_out in cases:
        x = torch.ones(8, k if last else 64, device="cuda", dtype=dtype if last else half)
        w = torch.ones(x.shape[1], 32, device="cuda", dtype=x.dtype)
        for name, call, rows in (
            ("all_gather_gemm", fd.all_gather_gemm, 8 * size),
            ("gemm_reduce_scatter", fd.gemm_reduce_scatter, 8 // size if 8 % size == 0 else None),
        ):
            if rows is None or (bad_out is None and k != 64 and name == "gemm_reduce_scatter"):
                continue  # (the reduce-scatter takes a different K on each rank)
            out = None
            if last and bad_out == "rows":
                out = torch.empty(rows + 1, 32, device="cuda", dtype=half)
            elif last and bad_out == "layout":
                out = torch.empty(32, rows, device="cuda", dtype=half).t()
            try:
                call(x, w, out)
                failures.append(f"{name}, {what}: no error")
            except ValueError as exc:
                if "rank" not in str(exc):
                    failures.append(f"{name}, {what}: unclear error {exc}")
    return failures


def launch_tp(ranks: int, args: Sequence[str], timeout: float = 600) -> subprocess.CompletedProcess:
    """The workers through torchrun (one process per GPU), NVLink multicast off in their
    environment."""
    from fastgemm.distributed import multicast_off_env

    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={ranks}",
        "-m",
        "fastgemm.bench.multigpu",
        "--tp-worker",
        *args,
    ]
    return subprocess.run(
        cmd, check=False, env=multicast_off_env(), capture_output=True, text=True, timeout=timeout
    )


def check_tp(ranks: int, dtypes: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """The workers' correctness and error checks only, on small shapes (what the multi-GPU
    tests run); their output says "TP-CHECK" then "OK" or the failures."""
    small = ["--tp-tokens", "256", "--tp-hidden", "192", "--tp-inter", "320"]
    return launch_tp(ranks, ["--tp-check", *small, "--tp-dtype", dtypes], timeout)


# --- the command -------------------------------------------------------------------------------


def _run_meta(argv: Sequence[str]) -> dict:
    """Date, command line and commit, as the other results files say them."""
    import datetime
    import shlex

    from .report import git_clean, git_commit

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join(["python", "-m", "fastgemm.bench", "--multi-gpu", *argv]),
        "git_commit": git_commit(),
        "git_clean": git_clean(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.tp_worker:
        return tp_worker(args)
    import torch

    n = torch.cuda.device_count()
    ranks = args.tp_ranks or n
    if args.tp_check:
        proc = check_tp(ranks, args.tp_dtype)
        print(proc.stdout[-4000:], proc.stderr[-4000:], sep="\n")
        return proc.returncode
    single = single_process(args)
    tp: list[dict] = []
    if not args.no_tp:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        tp_json = out / ".tp-records.json"
        worker_args = [
            "--tp-json",
            str(tp_json),
            "--rounds",
            str(args.rounds),
            "--calls",
            str(args.calls),
            "--tp-tokens",
            str(args.tp_tokens),
            "--tp-hidden",
            str(args.tp_hidden),
            "--tp-inter",
            str(args.tp_inter),
            "--tp-dtype",
            args.tp_dtype,
            "--tp-comm-sms",
            args.tp_comm_sms,
        ]
        proc = launch_tp(ranks, worker_args)
        print(proc.stdout[-3000:], flush=True)
        if proc.returncode != 0:
            print(proc.stderr[-6000:], file=sys.stderr)
            return 1
        tp = json.loads(tp_json.read_text())
        tp_json.unlink()
    gpu = torch.cuda.get_device_name(0)
    from .device import gpu_slug

    data = {
        "meta": {
            "mode": "multigpu",
            "gpu": gpu,
            "gpus": n,
            "torch": torch.__version__,
            "nccl": ".".join(map(str, torch.cuda.nccl.version())),
            **_run_meta(list(sys.argv[1:] if argv is None else argv)),
        },
        "results": [{"part": "one-process", **r} for r in single]
        + [{"part": "tensor-parallel", **r} for r in tp],
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # Two GPUs keep the plain name; other counts name theirs, so that runs on hosts of 2 and 4 GPUs
    # of one kind sit side by side.
    path = out / (f"multigpu-{gpu_slug(gpu)}.json" if n == 2 else f"multigpu-{n}gpus-{gpu_slug(gpu)}.json")
    path.write_text(json.dumps(data, indent=1))
    print(multigpu_tables(data))
    print(f"wrote {path}")
    bad = [r for r in single if not r["correct"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
