"""The command line of ``python -m fastgemm.bench``: the arguments (bad ones exit with status 2),
``main()`` and the three runs it starts, the shape benchmark, the public shape suite (``--suite``)
and the host cost per call (``--overhead``), each of which writes its files and prints its tables.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from collections.abc import Sequence
from typing import Any

from .device import NoGPU, describe_device, describe_device_torch, load_cupy
from .overhead import (
    OVERHEAD_BATCHES,
    OVERHEAD_CALLS,
    OVERHEAD_FIELDS,
    OVERHEAD_MAX_CALLS,
    OVERHEAD_SHAPE,
    OVERHEAD_TOLERANCE,
    OVERHEAD_WARMUP_CALLS,
    forced_kernels,
    measure_overhead,
    overhead_records,
    overhead_specs,
    prepare_case,
)
from .peers import TORCH_MATMUL, cupy_array_lib, load_torch, load_torch_peer, preferred_blas, torch_array_lib
from .plots import plot, plot_suite
from .report import (
    TIMINGS,
    Progress,
    output_paths,
    print_overhead,
    print_suite,
    print_table,
    run_meta,
    warn,
    write_outputs,
)
from .runner import Context, run_dtype, select_candidates
from .shapes import QUICK_SIZES, parse_shapes, resolve_dtype
from .suite import output_prefix, run_suite_dtype, suite_shapes
from .tables import shape_label
from .timing import GPU_WARMUP_S, BrokenContext, Candidate, Prefill, warmup_gpu

DTYPES = ("float32", "float16", "bfloat16")

DEFAULT_ROUNDS = 5
QUICK_ROUNDS = 3
DEFAULT_TARGET_MS = 100.0
# --suite: three candidates x two timings on every shape; these keep an fp16 suite within a few
# minutes of an H100 (rounds of short kernels are short anyway: at most 100 launches a round).
SUITE_ROUNDS = 3
SUITE_TARGET_MS = 20.0

EXIT_WRONG, EXIT_BAD_ARGUMENTS, EXIT_NO_GPU = 1, 2, 3


def _dtype_usable(cp: Any, dtype: str) -> bool:
    """Whether CuPy has `dtype` (bfloat16 needs ml_dtypes); warns and says no otherwise."""
    try:
        resolve_dtype(cp, dtype)
    except Exception as exc:  # noqa: BLE001
        warn(f"skipping {dtype}: {exc}")
        return False
    return True


def _package_version() -> str:
    """fastgemm's version from the installed metadata (no import of the extension)."""
    try:
        from importlib.metadata import version

        return version("fastgemm")
    except Exception:  # noqa: BLE001 - not installed: a source checkout
        return "unknown (not installed)"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m fastgemm.bench",
        description="Time the fastgemm kernel ladder against cuBLAS on this GPU (correctness "
        "checked first, CUDA events, interleaved rounds, median).",
        epilog="Exit status: 0 all measured and correct; 1 a candidate was WRONG or failed; "
        "2 bad arguments; 3 no usable GPU (nothing measured); 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"fastgemm {_package_version()}")
    parser.add_argument(
        "--dtype", default="float32", help="comma list of float32, float16, bfloat16 (default: float32)"
    )
    parser.add_argument("--sizes", help="comma list of square sizes, e.g. 1024,2048")
    parser.add_argument("--shapes", help="comma list of MxNxK, e.g. 4095x4097x4099,16x4096x4096")
    parser.add_argument(
        "--kernels",
        metavar="REGEX",
        help="only kernels whose name matches (re.search); default: every kernel "
        "of the dtype this GPU can run",
    )
    parser.add_argument(
        "--include-auto", action="store_true", help='add a row for kernel="auto" (fastgemm.select\'s choice)'
    )
    parser.add_argument(
        "--rounds",
        type=int,
        help=f"timed rounds per kernel and shape (default {DEFAULT_ROUNDS}, --quick {QUICK_ROUNDS}, "
        f"--suite {SUITE_ROUNDS})",
    )
    parser.add_argument(
        "--target-ms",
        type=float,
        help="device time one round aims at; sets launches per round (default "
        f"{DEFAULT_TARGET_MS:g}, --suite {SUITE_TARGET_MS:g})",
    )
    parser.add_argument(
        "--max-seconds-per-kernel",
        type=float,
        default=3.0,
        help="timing budget per kernel and shape; slow kernels get fewer "
        "launches/rounds, never fewer than one (default 3)",
    )
    parser.add_argument("--out", default="results", help="output directory (default: results)")
    parser.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"sizes {','.join(map(str, QUICK_SIZES))} and {QUICK_ROUNDS} rounds "
        "(explicit --sizes/--shapes/--rounds win)",
    )
    parser.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    parser.add_argument("--seed", type=int, default=0, help="random seed for the inputs")
    parser.add_argument(
        "--pad",
        action="store_true",
        help="pad rows to 16 bytes for every candidate (default: dense operands)",
    )
    parser.add_argument(
        "--no-prefill",
        action="store_true",
        help="do not spin the stream before a round (then host launch overhead "
        "can show in short kernels' times)",
    )
    parser.add_argument(
        "--timing",
        choices=TIMINGS,
        help="device: CUDA events around launches kept back to back by a spin "
        "(default); end-to-end: host clock from synchronize to synchronize around "
        "back-to-back calls, host cost included; both: each, in the same rounds",
    )
    parser.add_argument(
        "--suite",
        action="store_true",
        help=f'run the public shape suite instead: kernel="auto" against cuBLAS and torch.matmul on '
        f"{len(suite_shapes())} shapes ({', '.join(dict.fromkeys(c for c, _ in suite_shapes()))}), device and end-to-end time; writes "
        "suite-<dtype>-<gpu>.json/.csv/.png (takes --dtype, --rounds, --target-ms, "
        "--max-seconds-per-kernel, --no-prefill, --out, --device, --seed, --no-plot)",
    )
    parser.add_argument(
        "--multi-gpu",
        action="store_true",
        help="as the first argument: the multi-GPU benchmark instead (one GEMM over all GPUs, and "
        "the tensor-parallel pair); its own arguments: --multi-gpu --help",
    )
    over = parser.add_argument_group(
        "host cost per call (--overhead; uses --device, --seed and --out, ignores the rest)"
    )
    over.add_argument(
        "--overhead",
        action="store_true",
        help="measure the host cost of one call from Python (fastgemm.hgemm/sgemm "
        "and torch/cupy matmul, torch tensors and CuPy arrays) instead, then exit",
    )
    over.add_argument("--overhead-shape", metavar="MxNxK", help=f"problem size (default {OVERHEAD_SHAPE})")
    over.add_argument(
        "--overhead-batches",
        type=int,
        metavar="R",
        help=f"timed batches per case (default {OVERHEAD_BATCHES})",
    )
    over.add_argument(
        "--overhead-calls",
        type=int,
        metavar="N",
        help=f"back-to-back calls per batch (default {OVERHEAD_CALLS}, at most "
        f"{OVERHEAD_MAX_CALLS}: a batch must not fill the CUDA launch queue)",
    )
    args = parser.parse_args(argv)
    _check_suite_args(parser, args)
    _check_overhead_args(parser, args)

    dtypes = [d.strip() for d in args.dtype.split(",") if d.strip()]
    bad = [d for d in dtypes if d not in DTYPES]
    if bad or not dtypes:
        parser.error(f"--dtype: unknown {', '.join(bad) or '(empty)'}; choose from {', '.join(DTYPES)}")
    args.dtypes = list(dict.fromkeys(dtypes))
    try:
        args.shape_list = (
            [shape for _, shape in suite_shapes()]
            if args.suite
            else parse_shapes(args.sizes, args.shapes, args.quick)
        )
    except ValueError as exc:
        parser.error(str(exc))
    if args.rounds is None:
        args.rounds = SUITE_ROUNDS if args.suite else QUICK_ROUNDS if args.quick else DEFAULT_ROUNDS
    if args.target_ms is None:
        args.target_ms = SUITE_TARGET_MS if args.suite else DEFAULT_TARGET_MS
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    if args.target_ms <= 0:
        parser.error("--target-ms must be > 0")
    if args.max_seconds_per_kernel <= 0:
        parser.error("--max-seconds-per-kernel must be > 0")
    try:
        args.kernel_re = re.compile(args.kernels) if args.kernels else None
    except re.error as exc:
        parser.error(f"--kernels: bad regular expression: {exc}")
    return args


def _check_suite_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--suite refuses what would change its shapes, candidates, operands or timing (parser.error,
    exit status 2); it always times both ways."""
    if not args.suite:
        return
    given = [
        flag
        for flag, value in (
            ("--sizes", args.sizes),
            ("--shapes", args.shapes),
            ("--overhead", args.overhead),
            ("--quick", args.quick),
            ("--kernels", args.kernels),
            ("--include-auto", args.include_auto),
            ("--pad", args.pad),
        )
        if value not in (None, False)
    ]
    if args.timing not in (None, "both"):
        given.append(f"--timing {args.timing}")
    if given:
        parser.error(
            f'--suite runs its own shapes and candidates (kernel="auto", cuBLAS, torch.matmul) on dense '
            f"operands, timed both ways; it cannot be combined with {', '.join(given)}"
        )
    args.timing = "both"


def _check_overhead_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Validate --overhead* and --timing (parser.error, exit status 2, on a bad value); fills in
    the defaults and args.overhead_mnk."""
    given = [
        f"--{name.replace('_', '-')}"
        for name in ("overhead_shape", "overhead_batches", "overhead_calls")
        if getattr(args, name) is not None
    ]
    if not args.overhead:
        if given:
            parser.error(f"{', '.join(given)} need(s) --overhead")
        args.timing = args.timing or "device"
        return
    if args.timing is not None:
        parser.error("--timing applies to the shape benchmark, not to --overhead")
    text = args.overhead_shape if args.overhead_shape is not None else OVERHEAD_SHAPE
    try:
        shapes = parse_shapes(None, text) if text.strip() else []
    except ValueError as exc:
        parser.error(str(exc).replace("--shapes", "--overhead-shape"))
    if len(shapes) != 1:
        parser.error(f"--overhead-shape: '{text}' is not one MxNxK")
    args.overhead_mnk = shapes[0]
    if args.overhead_batches is None:
        args.overhead_batches = OVERHEAD_BATCHES
    if args.overhead_calls is None:
        args.overhead_calls = OVERHEAD_CALLS
    if args.overhead_batches < 1:
        parser.error("--overhead-batches must be >= 1")
    if not 1 <= args.overhead_calls <= OVERHEAD_MAX_CALLS:
        parser.error(f"--overhead-calls must be between 1 and {OVERHEAD_MAX_CALLS}")


def run_overhead(fastgemm: Any, args: argparse.Namespace) -> int:
    """--overhead: check, warm up and time every case with every usable array library; write
    overhead-<gpu-slug>.json/.csv and print the table. NoGPU when no library can be used."""
    skipped: dict[str, str] = {}
    cp = torch = None
    try:
        cp = load_cupy(fastgemm)
    except NoGPU as exc:
        skipped["cupy"] = str(exc)
    try:
        torch = load_torch(args.device)
    except NoGPU as exc:
        skipped["torch"] = str(exc)
    if cp is None and torch is None:
        raise NoGPU("; ".join(f"{name}: {why}" for name, why in skipped.items()))
    if cp is not None:
        device = describe_device(cp, args.device, fastgemm)
    else:
        device = describe_device_torch(torch, args.device, fastgemm)
    libs = ([torch_array_lib(torch, args.device)] if torch is not None else []) + (
        [cupy_array_lib(cp, args.device)] if cp is not None else []
    )
    for name, why in skipped.items():
        warn(f"--overhead: {name} skipped: {why}")

    shape = args.overhead_mnk
    forced = forced_kernels(fastgemm, shape)
    for dtype, forced_name in forced.items():
        if forced_name is None:
            warn(f"fastgemm.select({', '.join(map(str, shape))}, {dtype!r}) failed: no forced-kernel case")
    specs = overhead_specs(forced)
    progress = Progress(len(specs) * len(libs))
    print(
        f"fastgemm.bench --overhead: {device.name} (cc {device.cc / 10:.1f}), fastgemm "
        f"{device.meta['fastgemm_version']}, {' and '.join(f'{x.name} {x.version}' for x in libs)}; "
        f"{shape_label(*shape)}, {args.overhead_batches} batches x {args.overhead_calls} calls",
        file=sys.stderr,
        flush=True,
    )
    cases = []
    try:
        for i, (lib, spec) in enumerate(((lib, spec) for lib in libs for spec in specs), 1):
            case = prepare_case(spec, lib, fastgemm, shape, args.seed + i)
            cases.append(case)
            state = (
                f"check ok (rel err {case.rel_error:.1e})"
                if case.status == "ok"
                else f"{case.status.upper()} ({case.error}); not timed"
            )
            progress(i, f"{case.name}: {state}")
        measure_overhead(
            cases, args.overhead_batches, args.overhead_calls, OVERHEAD_WARMUP_CALLS, args.seed, progress.note
        )
    except KeyboardInterrupt:
        print("fastgemm.bench: interrupted; nothing was written.", file=sys.stderr)
        return 130

    records = overhead_records(cases, args.overhead_calls)
    meta = run_meta(device, args)
    meta.update(
        {
            "mode": "overhead",
            "shape": list(shape),
            "batches": args.overhead_batches,
            "calls_per_batch": args.overhead_calls,
            "warmup_calls": OVERHEAD_WARMUP_CALLS,
            "seed": args.seed,
            "torch_version": torch.__version__ if torch is not None else None,
            "cupy_version": getattr(cp, "__version__", None),
            "libraries": [lib.name for lib in libs],
            "skipped_libraries": skipped,
            "forced_kernels": forced,
            "tolerance": OVERHEAD_TOLERANCE,
            "method": "host time per call: per case ~200 warm-up calls, then per batch: synchronize, "
            "perf_counter, n back-to-back calls without synchronisation, perf_counter; "
            "sample = elapsed / n; batches interleaved across cases in a seeded random order "
            "per round; median and min over batches; one checked call per case first",
        }
    )
    paths = write_outputs(args.out, "overhead", device.slug, meta, records, OVERHEAD_FIELDS, {})
    print(f"fastgemm.bench: wrote {paths['json']}, {paths['csv']}", file=sys.stderr, flush=True)
    print_overhead(meta, records)
    bad = sum(1 for r in records if r["status"] != "ok")
    if bad:
        print(f"fastgemm.bench: {bad} overhead case(s) were WRONG or failed; see above.", file=sys.stderr)
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--multi-gpu"]:
        from .multigpu import main as multi_gpu

        return multi_gpu(argv[1:])
    args = parse_args(argv)
    args.argv = argv
    try:
        import fastgemm
    except Exception as exc:  # noqa: BLE001 - e.g. the extension is not built
        print(
            f"fastgemm.bench: cannot import fastgemm ({type(exc).__name__}: {exc}); build and "
            "install the package first (pip install .). Nothing was measured.",
            file=sys.stderr,
        )
        return EXIT_NO_GPU
    run = run_overhead if args.overhead else run_suite if args.suite else run_benchmark
    try:
        return run(fastgemm, args)
    except NoGPU as exc:
        needs = "torch or CuPy" if args.overhead else "CuPy"
        print(
            f"fastgemm.bench: {exc}; the benchmark needs an NVIDIA GPU with a working driver, "
            f"fastgemm's extension and {needs}. Nothing was measured.",
            file=sys.stderr,
        )
        return EXIT_NO_GPU


def run_benchmark(fastgemm: Any, args: argparse.Namespace) -> int:
    """The shape benchmark (everything but --overhead); NoGPU before anything is measured."""
    cp = load_cupy(fastgemm)
    device = describe_device(cp, args.device, fastgemm)

    plan: list[tuple[str, list[Candidate]]] = []
    for dtype in args.dtypes:
        cands, notes = select_candidates(fastgemm, dtype, device.cc, args.kernel_re, args.include_auto)
        for note in notes:
            warn(note)
        if not cands:
            warn(f"skipping {dtype}: nothing to run")
            continue
        if not _dtype_usable(cp, dtype):
            continue
        plan.append((dtype, cands))
    if not plan:
        print(
            "fastgemm.bench: no kernel to benchmark (see the warnings above). Nothing was measured.",
            file=sys.stderr,
        )
        return 1

    total = sum(len(args.shape_list) * (len(c) + 1) for _, c in plan)
    print(
        f"fastgemm.bench: {device.name} (cc {device.cc / 10:.1f}, {device.sm_count} SMs, "
        f"L2 {device.l2_bytes / 2**20:.0f} MiB), CUDA {device.meta['cuda_runtime']}, cuBLAS "
        f"{device.meta['cublas_version']}, fastgemm {device.meta['fastgemm_version']}; "
        f"{total} (kernel, shape) pairs; timing: {args.timing}",
        file=sys.stderr,
        flush=True,
    )
    ctx = Context(cp, fastgemm, args, device, Prefill(cp, not args.no_prefill), Progress(total))
    done: list[tuple[str, dict, list[dict]]] = []
    status = 0
    try:
        warmup_gpu(cp, GPU_WARMUP_S)
        for dtype, cands in plan:
            meta, results = run_dtype(ctx, dtype, cands)
            done.append((dtype, meta, results))
            paths = output_paths(args.out, dtype, device.slug)
            wrote = [paths["json"], paths["csv"]]
            if not args.no_plot and plot(paths["png"], dtype, meta, results):
                wrote.append(paths["png"])
            print(f"fastgemm.bench: wrote {', '.join(str(p) for p in wrote)}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print("fastgemm.bench: interrupted; finished shapes are in the output files.", file=sys.stderr)
        status = 130
    except BrokenContext as exc:
        print(f"fastgemm.bench: stopping: {exc}. Finished shapes are in the output files.", file=sys.stderr)
        status = 1

    for dtype, meta, results in done:
        print_table(dtype, meta, results, long=False)
    for dtype, meta, results in done:  # the long-format table is the main one: it comes last
        print_table(dtype, meta, results, long=True)
    bad = sum(1 for _, _, results in done for r in results if r["status"] not in ("ok", "n/a"))
    if bad and status == 0:
        print(
            f"fastgemm.bench: {bad} (kernel, shape) pair(s) were WRONG or failed; see above.", file=sys.stderr
        )
        status = 1
    return status


def _suite_torch(cp: Any, args: argparse.Namespace, stack: contextlib.ExitStack) -> tuple[Any, dict]:
    """torch for the suite's torch.matmul peer, preferring cuBLASLt until `stack` closes, or None;
    and what the results' meta says about the peers."""
    info: dict[str, Any] = {
        "peers": ["cuBLAS"],
        "torch_version": None,
        "torch_blas": None,
        "torch_skipped": None,
    }
    try:
        torch = load_torch_peer(cp, args.device)
    except NoGPU as exc:
        warn(f"--suite: torch.matmul not measured: {exc}")
        info["torch_skipped"] = str(exc)
        return None, info
    blas, why = stack.enter_context(preferred_blas(torch, "cublaslt"))
    if why:
        warn(f"--suite: torch.matmul runs with torch's {blas}: cuBLASLt cannot be preferred ({why})")
    matmul = torch.backends.cuda.matmul
    info.update(
        {
            "peers": ["cuBLAS", TORCH_MATMUL],
            "torch_version": str(torch.__version__),
            "torch_blas": blas,
            "torch_blas_note": why,
            "torch_settings": {
                "allow_tf32": bool(matmul.allow_tf32),
                "allow_fp16_reduced_precision_reduction": bool(matmul.allow_fp16_reduced_precision_reduction),
                "allow_bf16_reduced_precision_reduction": bool(matmul.allow_bf16_reduced_precision_reduction),
                "float32_matmul_precision": torch.get_float32_matmul_precision(),
            },
        }
    )
    return torch, info


def run_suite(fastgemm: Any, args: argparse.Namespace) -> int:
    """--suite: kernel="auto" against cuBLAS and torch.matmul on every suite shape, per dtype;
    writes suite-<dtype>-<gpu-slug>.json/.csv/.png and prints the tables. NoGPU before anything
    is measured."""
    cp = load_cupy(fastgemm)
    device = describe_device(cp, args.device, fastgemm)
    dtypes: list[str] = []
    auto: Candidate | None = None
    for dtype in args.dtypes:
        cands, notes = select_candidates(fastgemm, dtype, device.cc, None, include_auto=True)
        found = next((c for c in cands if c.kind == "auto"), None)
        if found is None:
            for note in notes:
                warn(note)
            warn(f"skipping {dtype}: no {dtype} kernel runs on this GPU")
            continue
        if not _dtype_usable(cp, dtype):
            continue
        dtypes.append(dtype)
        auto = found
    if not dtypes or auto is None:
        print(
            "fastgemm.bench: no dtype to run the suite in (see the warnings above). Nothing was measured.",
            file=sys.stderr,
        )
        return 1

    done: list[tuple[dict, list[dict], list[dict]]] = []
    status = 0
    with contextlib.ExitStack() as stack:
        torch, peers = _suite_torch(cp, args, stack)
        candidates = [auto]
        if torch is not None:
            candidates.append(
                Candidate(
                    TORCH_MATMUL,
                    None,
                    "torch.matmul(A, B, out=C) on torch views of the same buffers, preferred BLAS "
                    f"library: {peers['torch_blas']}",
                    "torch",
                )
            )
        shapes = suite_shapes()
        total = len(dtypes) * len(shapes) * (1 + len(candidates))
        print(
            f"fastgemm.bench --suite: {device.name} (cc {device.cc / 10:.1f}, {device.sm_count} SMs, "
            f"L2 {device.l2_bytes / 2**20:.0f} MiB), CUDA {device.meta['cuda_runtime']}, cuBLAS "
            f"{device.meta['cublas_version']}, fastgemm {device.meta['fastgemm_version']}; "
            f"{len(shapes)} shapes in {len({c for c, _ in shapes})} categories x {', '.join(dtypes)}; "
            f"auto against {' and '.join(peers['peers'])}; {args.rounds} rounds of up to "
            f"{args.target_ms:g} ms, device and end-to-end; operands rotate over input sets >= 3x L2",
            file=sys.stderr,
            flush=True,
        )
        ctx = Context(
            cp, fastgemm, args, device, Prefill(cp, not args.no_prefill), Progress(total), torch=torch
        )
        try:
            warmup_gpu(cp, GPU_WARMUP_S)
            for dtype in dtypes:
                meta, records, summary = run_suite_dtype(ctx, dtype, candidates, peers)
                done.append((meta, records, summary))
                paths = output_paths(args.out, output_prefix(dtype), device.slug)
                wrote = [paths["json"], paths["csv"]]
                if not args.no_plot and plot_suite(paths["png"], meta, records):
                    wrote.append(paths["png"])
                print(
                    f"fastgemm.bench: wrote {', '.join(str(p) for p in wrote)}", file=sys.stderr, flush=True
                )
        except KeyboardInterrupt:
            print("fastgemm.bench: interrupted; finished shapes are in the output files.", file=sys.stderr)
            status = 130
        except BrokenContext as exc:
            print(
                f"fastgemm.bench: stopping: {exc}. Finished shapes are in the output files.", file=sys.stderr
            )
            status = 1

    for meta, records, summary in done:
        print_suite(meta, records, summary)
    bad = sum(1 for _, records, _ in done for r in records for c in r["candidates"] if c["status"] != "ok")
    if bad and status == 0:
        print(
            f"fastgemm.bench: {bad} (candidate, shape) pair(s) were WRONG or failed; see above.",
            file=sys.stderr,
        )
        status = 1
    return status
