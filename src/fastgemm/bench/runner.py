"""The shape benchmark, one dtype and one shape at a time: the candidates (every runnable rung of
the dtype, optionally ``kernel="auto"``, cuBLAS first; the suite's are ``auto`` and ``torch.matmul``),
each checked against float64 and probed, then timed in interleaved rounds in a seeded random order;
and the meta of a dtype's results file.
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass
from typing import Any

from .device import Device, _try, peak_tflops
from .peers import cublas_launchers, torch_matmul_launcher
from .report import Progress, result_records, run_meta, tflops_of, warn, write_outputs
from .shapes import (
    ROW_ALIGN_BYTES,
    InputSet,
    Launch,
    Shape,
    count_input_sets,
    make_inputs,
    operand_alignment,
    reference,
    resolve_dtype,
    set_bytes,
)
from .tables import AUTO, CUBLAS, fmt_tflops, shape_label
from .timing import (
    Candidate,
    Prefill,
    Trial,
    _ensure_context,
    check,
    plan_reps,
    probe,
    time_end_to_end,
    time_kernel,
)

TOLERANCE = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}
GEMM_FUNCTION = {"float32": "sgemm", "float16": "hgemm", "bfloat16": "hgemm"}


def runnable(info: Any, cc: int) -> bool:
    max_cc = getattr(info, "max_cc", None)
    return info.min_cc <= cc and (max_cc is None or cc <= max_cc)


def select_candidates(
    fastgemm: Any, dtype: str, cc: int, kernel_re: re.Pattern | None, include_auto: bool
) -> tuple[list[Candidate], list[str]]:
    """(candidates in ladder order, notes about skipped kernels). cuBLAS is not in the list."""
    notes: list[str] = []
    try:
        infos = list(fastgemm.kernels(dtype))
    except (TypeError, ValueError, RuntimeError) as exc:
        return [], [f"fastgemm.kernels({dtype!r}) failed: {exc}"]
    if not infos:
        return [], [f"no {dtype} kernels in this build of fastgemm"]
    chosen: list[Candidate] = []
    for info in sorted(infos, key=lambda k: (k.version, k.name)):
        if kernel_re is not None and not kernel_re.search(info.name):
            continue
        if getattr(info, "precision", "") not in ("", "ieee"):
            continue  # fp32 on the tensor cores: benchmarks/precision.py, against cuBLAS in TF32
        if not runnable(info, cc):
            max_cc = getattr(info, "max_cc", None)
            need = f"{info.min_cc / 10:.1f}"
            if max_cc is not None:
                need = f"exactly {need}" if max_cc == info.min_cc else f"{need} to {max_cc / 10:.1f}"
            notes.append(f"skipping {info.name}: needs compute capability {need}, this GPU is {cc / 10:.1f}")
            continue
        chosen.append(
            Candidate(
                info.name,
                int(info.version),
                str(info.techniques),
                "kernel",
                str(getattr(info, "parent", "")),
                bool(getattr(info, "branch", False)),
            )
        )
    if kernel_re is not None and not chosen:
        notes.append(f"--kernels {kernel_re.pattern!r} matches no runnable {dtype} kernel")
    if include_auto and any(runnable(i, cc) for i in infos):
        chosen.append(Candidate(AUTO, None, "fastgemm.select() picks the rung", "auto"))
    return chosen, notes


def fastgemm_launcher(fastgemm: Any, dtype: str, kernel: str) -> Launch:
    fn = getattr(fastgemm, GEMM_FUNCTION[dtype], None) or fastgemm.gemm

    def launch(s: InputSet) -> Any:
        return fn(s.A, s.B, s.C, 1.0, 0.0, kernel=kernel)

    return launch


@dataclass
class Context:
    cp: Any
    fastgemm: Any
    args: argparse.Namespace
    device: Device
    prefill: Prefill
    progress: Progress
    counter: int = 0
    baseline: str | None = None
    torch: Any = None  # for candidates of kind "torch"


def _setup_trial(
    ctx: Context, dtype: str, cand: Candidate, shape: Shape, torch_launch: Launch | None
) -> Trial:
    M, N, K = shape
    trial = Trial(cand, M, N, K)
    if cand.kind == "cublas":
        return trial  # launch chosen in run_shape (first implementation that checks out)
    if cand.kind == "torch":
        trial.launch = torch_launch
        return trial
    trial.launch = fastgemm_launcher(ctx.fastgemm, dtype, AUTO if cand.kind == "auto" else cand.name)
    return trial


def input_layout(ctx: Context, itemsize: int, shape: Shape) -> tuple[int, int, int]:
    """(row alignment in bytes, bytes of one input set, input sets rotated) for one shape."""
    align = ROW_ALIGN_BYTES if ctx.args.pad else 1
    M, N, K = shape
    per_set = set_bytes(M, N, K, itemsize, align)
    return align, per_set, count_input_sets(per_set, ctx.device.l2_bytes)


def selected_kernel(fastgemm: Any, M: int, N: int, K: int, dtype: str, cc: int, alignment: int) -> str | None:
    """The rung kernel="auto" runs for these operands (None if select() cannot say)."""
    sel = _try(lambda: fastgemm.select(M, N, K, dtype, cc=cc, alignment=alignment))
    if sel is None:
        sel = _try(lambda: fastgemm.select(M, N, K, dtype, cc=cc))
    return getattr(getattr(sel, "kernel", None), "name", None)


def _check_cublas(
    ctx: Context, dtype: str, trial: Trial, s: InputSet, ref: Any, ref_norm: float, tol: float
) -> float | None:
    errors: list[str] = []
    for desc, launch in cublas_launchers(ctx.cp, dtype):
        trial.launch, trial.baseline = launch, desc
        trial.status, trial.error, trial.rel_error = "pending", "", None
        ms = check(ctx.cp, trial, s, ref, ref_norm, tol)
        if trial.status == "ok":
            if errors:
                warn(f"cuBLAS baseline fell back to {desc} ({'; '.join(errors)})")
            return ms
        errors.append(f"{desc}: {trial.error}")
    trial.error = "; ".join(errors)
    return None


def run_shape(
    ctx: Context, dtype: str, np_dtype: Any, shape: Shape, candidates: list[Candidate]
) -> list[Trial]:
    """Check, then time with interleaved rounds, every candidate on one shape (cuBLAS first)."""
    cp, args = ctx.cp, ctx.args
    M, N, K = shape
    label = shape_label(M, N, K)
    align, per_set, n_sets = input_layout(ctx, np_dtype.itemsize, shape)
    ctx.progress.note(
        f"--- {dtype} {label}: {n_sets} input set(s) of {per_set / 2**20:.1f} MiB "
        f"(L2 {ctx.device.l2_bytes / 2**20:.0f} MiB)"
    )
    seed = (args.seed * 1_000_003 + M * 7919 + N * 104729 + K * 1299709) % 2**31
    sets = make_inputs(cp, np_dtype, M, N, K, n_sets, seed, align)
    ref, ref_norm = reference(cp, sets[0])
    tol = TOLERANCE[dtype]
    torch_launch = (
        torch_matmul_launcher(ctx.torch, dtype, sets) if any(c.kind == "torch" for c in candidates) else None
    )

    trials: list[Trial] = []
    indices: list[int] = []
    all_cands = [Candidate(CUBLAS, None, "", "cublas"), *candidates]
    for cand in all_cands:
        ctx.counter += 1
        idx = ctx.counter
        trial = _setup_trial(ctx, dtype, cand, shape, torch_launch)
        if cand.kind == "auto":
            trial.selected = selected_kernel(
                ctx.fastgemm,
                M,
                N,
                K,
                dtype,
                ctx.device.cc,
                operand_alignment(sets[0], np_dtype.itemsize, ctx.fastgemm.dispatch.PLAN_ALIGN_CAP),
            )
        unfit = None
        if cand.kind == "kernel":  # a rung that declares an alignment these operands break
            info = next(k for k in ctx.fastgemm.kernels(dtype) if k.name == cand.name)
            unfit = ctx.fastgemm.dispatch.check_runnable(
                info, ctx.device.cc, operand_alignment(sets[0], np_dtype.itemsize)
            )
        if unfit is not None:
            trial.status, trial.error, check_ms = "n/a", unfit, None
        elif cand.kind == "cublas":
            check_ms = _check_cublas(ctx, dtype, trial, sets[0], ref, ref_norm, tol)
            ctx.baseline = trial.baseline
        else:
            check_ms = check(cp, trial, sets[0], ref, ref_norm, tol)
        trials.append(trial)
        indices.append(idx)
        if trial.status == "n/a":
            ctx.progress(idx, f"{trial.label} {label}: n/a ({trial.error})")
            continue
        if trial.status != "ok":
            word = "WRONG" if trial.status == "wrong" else "ERROR"
            ctx.progress(idx, f"{trial.label} {label} check: {word} ({trial.error}); not timed")
            continue
        try:
            trial.est_ms = probe(cp, trial, sets, ctx.prefill, check_ms)
        except Exception as exc:  # noqa: BLE001
            trial.status, trial.error = "error", f"{type(exc).__name__}: {exc}"
            _ensure_context(cp, trial.label, exc)
            ctx.progress(idx, f"{trial.label} {label} probe: ERROR ({trial.error}); not timed")
            continue
        trial.rounds, trial.reps = plan_reps(
            trial.est_ms, args.rounds, args.target_ms, args.max_seconds_per_kernel
        )
        extra = f" -> {trial.selected}" if trial.selected else ""
        ctx.progress(
            idx,
            f"{trial.label}{extra} {label} check ok (rel err {trial.rel_error:.1e}), "
            f"~{trial.est_ms:.3g} ms/launch: {trial.rounds} round(s) x {trial.reps}",
        )
    del ref

    max_rounds = max((t.rounds for t in trials if t.status == "ok"), default=0)
    order_rng = random.Random(seed)
    for r in range(max_rounds):
        order = list(trials)
        order_rng.shuffle(order)  # no candidate keeps the same predecessor round after round
        for trial in order:
            if trial.status != "ok" or r >= trial.rounds:
                continue
            try:
                if args.timing != "end-to-end":
                    trial.samples.append(time_kernel(cp, trial, sets, trial.reps, ctx.prefill))
                if args.timing != "device":
                    trial.e2e_samples.append(time_end_to_end(cp, trial, sets, trial.reps))
            except Exception as exc:  # noqa: BLE001
                trial.status, trial.error = "error", f"{type(exc).__name__}: {exc}"
                trial.samples.clear()
                trial.e2e_samples.clear()
                _ensure_context(cp, trial.label, exc)
        if max_rounds > 1:
            ctx.progress.note(f"    {label}: round {r + 1}/{max_rounds} done")

    base = trials[0] if trials and trials[0].status == "ok" else None
    for idx, trial in zip(indices, trials):
        if trial.status != "ok":
            continue
        figures = []
        for what, ms, base_ms in (
            ("", trial.ms, base.ms if base else None),
            ("e2e ", trial.e2e_ms, base.e2e_ms if base else None),
        ):
            if ms is not None:
                tf, base_tflops = tflops_of(M, N, K, ms), tflops_of(M, N, K, base_ms)
                pct = f" ({100 * tf / base_tflops:.0f}% cuBLAS)" if tf and base_tflops else ""
                figures.append(f"{what}{fmt_tflops(tf)} TFLOPS{pct}")
        host = (
            f" [host-limited in {trial.host_limited_rounds}/{len(trial.samples)} rounds]"
            if trial.host_limited_rounds and trial.samples
            else ""
        )
        ctx.progress(idx, f"{trial.label} {label} ... {', '.join(figures)}{host}")

    for trial in trials:  # the torch launcher holds views of the input sets: let them go
        trial.launch = None
    del sets, torch_launch
    _try(lambda: cp.get_default_memory_pool().free_all_blocks())
    return trials


def base_meta(device: Device, args: argparse.Namespace, dtype: str, prefill: Prefill) -> dict:
    peak, source = peak_tflops(device.name, dtype, device.cc, device.sm_count, device.clock_khz)
    meta = run_meta(device, args)
    meta.update(
        {
            "dtype": dtype,
            "timing": args.timing,
            "peak_tflops": peak,
            "peak_source": source,
            "rounds": args.rounds,
            "target_ms": args.target_ms,
            "max_seconds_per_kernel": args.max_seconds_per_kernel,
            "tolerance": TOLERANCE[dtype],
            "row_alignment_bytes": ROW_ALIGN_BYTES if args.pad else 1,
            "prefill": prefill.note,
            "tf32": False,
            "method": "correctness vs float64 first; CUDA events around each round of back-to-back "
            "launches; warm-up; rounds interleaved across cuBLAS and all kernels; median "
            "over rounds; inputs rotated when A+B+C < 3x L2",
        }
    )
    if args.timing != "device":
        meta["method"] += (
            "; end-to-end rounds: host clock from device synchronize to synchronize "
            "around reps back-to-back calls, no prefill"
            + (", right after each device round" if args.timing == "both" else "")
        )
    return meta


def run_dtype(ctx: Context, dtype: str, candidates: list[Candidate]) -> tuple[dict, list[dict]]:
    cp, args = ctx.cp, ctx.args
    np_dtype = resolve_dtype(cp, dtype)
    meta = base_meta(ctx.device, args, dtype, ctx.prefill)
    meta["shapes"] = [list(s) for s in args.shape_list]
    results: list[dict] = []
    for shape in args.shape_list:
        trials = run_shape(ctx, dtype, np_dtype, shape, candidates)
        meta["baseline"] = ctx.baseline
        results.extend(result_records(trials, dtype, meta["peak_tflops"]))
        write_outputs(args.out, dtype, ctx.device.slug, meta, results)  # partial results survive
    return meta, results
