"""Benchmark the fastgemm kernel ladder against cuBLAS on the local GPU.

    python -m fastgemm.bench                       # float32 ladder at 1024^3 .. 8192^3
    python -m fastgemm.bench --quick               # 1024^3 and 2048^3, 3 rounds
    python -m fastgemm.bench --dtype float32,float16 --shapes 4095x4097x4099 --kernels 'v0[5-9]'
    python -m fastgemm.bench --dtype float16 --sizes 1024 --include-auto --timing both
    python -m fastgemm.bench --overhead            # host microseconds per call from Python

Method
------
For every shape, every candidate (cuBLAS, each runnable kernel of the dtype, and with
``--include-auto`` the ``kernel="auto"`` dispatch) goes through the same steps:

1. **Correctness first.** The output is poisoned with NaN, the candidate runs once on random-normal
   inputs (never zeros) and the result is compared with a float64 reference (CuPy matmul on float64
   copies of the same inputs) by the relative Frobenius error ``||C - ref|| / ||ref||``. Above the
   dtype's bound (float32 1e-4, float16 2e-2, bfloat16 5e-2) the candidate is marked WRONG and not
   timed; an exception marks it ERROR. This launch is also the warm-up (module load, cuBLAS
   heuristics, first-touch allocations).
2. **Adaptive repetitions.** One launch is timed to estimate the kernel's duration ``t``; a round
   then holds ``reps = clamp(target_ms / t, 1, 100)`` back-to-back launches, and ``rounds`` (default
   5) rounds are planned. If ``rounds * reps * t`` exceeds ``--max-seconds-per-kernel``, reps and
   then rounds are cut (never below one timed launch), so the naive rung at 8192^3 costs a few
   seconds, not minutes.
3. **Interleaving.** The timed rounds go round-robin over ``[cuBLAS, kernel_1, ..., kernel_n]``:
   round 1 of every candidate, then round 2 of every candidate, ... so clock and thermal drift hit
   all candidates alike, and every ratio to cuBLAS compares numbers from the same shape, process and
   minutes. Each round visits the candidates in a new (seeded) random order: on a power-limited GPU
   the clock a kernel gets depends on how much power the kernel before it drew, and a fixed order
   would hand every candidate the same neighbour in every round (measured on an H200: one Hopper
   kernel at 686 and 727 TFLOPS in one run, behind a power-hungry and a light neighbour).
4. **CUDA events.** Each round is bracketed by two ``cupy.cuda.Event`` records; its sample is the
   elapsed device time divided by ``reps``. Before each round a one-thread spin kernel holds the
   stream busy for longer than the host takes to enqueue the round, so the launches run
   back-to-back on the device and Python/launch overhead is not what is timed (``--no-prefill``
   turns this off). A kernel's time is the **median** over its rounds.
5. **Cache rotation.** When ``A + B + C`` of one shape is smaller than 3x the L2 cache, several
   independently random input sets (together at least 3x L2) are made and consecutive launches
   cycle through them, so each launch starts from a cold L2 as it would in a real workload.

Timing (``--timing device|end-to-end|both``)
--------------------------------------------
``device`` (the default) is step 4: what the GPU spends per launch, with the host's cost hidden.
``end-to-end`` times what a user's loop sees instead: no spin; the device is synchronised,
``t0 = time.perf_counter()``, ``reps`` calls are made back to back as a user makes them (rotating
the input sets as in step 5), the device is synchronised again, and the sample is
``(time.perf_counter() - t0) / reps`` -- Python call cost, launch gaps and the closing
synchronisation included. ``both`` runs, at every visit of a candidate in the interleaved rounds,
a device round and an end-to-end round back to back. Result records always carry both sets of
fields: ``ms``, ``tflops``, ``pct_cublas``, ``pct_peak`` are device time (null when not measured)
and ``e2e_ms``, ``e2e_tflops``, ``e2e_pct_cublas``, ``e2e_pct_peak`` end-to-end; ``meta.timing``
says which ran. cuBLAS's end-to-end figure is a call through CuPy's thin ``cublas.gemmEx`` binding,
not through ``cupy.matmul`` (``--overhead`` compares the user-level calls).

TFLOPS = 2*M*N*K / t. "% of cuBLAS" divides by cuBLAS's median from the same shape in the same run;
"% of peak" divides by the GPU's peak (datasheet table by GPU name, else SMs x FP32 lanes x 2 x clock
for float32; "n/a" when unknown).

cuBLAS is called through CuPy's ``cublas.gemmEx`` on the very same (row-major, possibly padded)
buffers with ``CUBLAS_COMPUTE_32F``: true FP32 for float32 (TF32 is off: ``CUPY_TF32=0`` and
``NVIDIA_TF32_OVERRIDE=0`` are set before CuPy is imported), fp16/bf16 inputs with fp32
accumulation on tensor cores for the half types. ``cupy.matmul`` is the fallback.

Operands are dense by default, as a user would pass them: for odd shapes that means rows that are
not 16-byte aligned, which the vectorised rungs refuse (reported as ERROR) and which also slow
cuBLAS down. ``--pad`` pads the rows to 16 bytes for every candidate alike instead.

Outputs, under ``--out`` (default ``results/``), per dtype: ``<dtype>-<gpu-slug>.json`` (``meta`` and
``results``), ``.csv`` (the results; the timing columns headed ``device_ms``, ``device_tflops``, ...
and ``e2e_ms``, ...) and ``.png`` (TFLOPS by rung, one line per shape, cuBLAS dashed).
``benchmarks/update_readme.py`` turns the JSON into the README tables.

Host cost per call (``--overhead``)
-----------------------------------
``python -m fastgemm.bench --overhead`` measures instead, and exits after it, what one call from
Python costs the host, in microseconds, on a problem small enough (``--overhead-shape``, default
64x64x64) that the GPU never holds the host up. Cases, each with torch tensors and with CuPy arrays
(a library that cannot be imported is skipped and named in the output): ``hgemm`` fp16 with
``kernel="auto"`` on C-contiguous operands and beta = 0; the same with beta = 0.5; the same on
F-ordered (column-major) A, B and C; the rung ``fastgemm.select(M, N, K, "float16")`` names, forced
with ``kernel=``; the same four for ``sgemm`` float32; and, as peers in the same process,
``torch.matmul(A, B, out=C)`` and ``cupy.matmul(A, B, out=C)`` in fp16 and fp32.

1. **Check.** Each case is called once (C poisoned with NaN when beta = 0) and compared with a
   float64 NumPy product of the same inputs; a relative Frobenius error above 5e-2 (fp16) or 1e-2
   (fp32) marks it WRONG, an exception ERROR, and it is not timed.
2. **Warm-up.** ~200 calls per case.
3. **Batches.** For each of R batches (``--overhead-batches``, default 30): synchronise the device,
   ``t0 = time.perf_counter()``, n back-to-back calls with no synchronisation inside
   (``--overhead-calls``, default 200), ``t1 = time.perf_counter()``; the sample is
   ``(t1 - t0) / n``. n stays well below the CUDA launch-queue depth (~1000 pending launches), so
   the host never waits for the GPU and the sample is host time. Batches are interleaved: batch b
   of every case, then batch b+1, ..., each round in a new seeded random order, so drift hits all
   cases alike.
4. **Report.** Median and min over the batches per case, and the ratio of the median to the same
   library's ``matmul(out=)`` of the same dtype. Outputs: ``overhead-<gpu-slug>.json`` (``meta``
   and one record per case and library) and ``.csv``; ``benchmarks/update_readme.py`` renders the
   JSON between ``<!-- overhead_results -->`` and ``<!-- /overhead_results -->``.

Exit status: 0 all measured and correct; 1 a candidate was WRONG or failed; 2 bad arguments (argparse);
3 no usable GPU, or fastgemm cannot be imported (nothing measured); 130 interrupted.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import functools
import json
import math
import os
import platform
import random
import re
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The float32 baseline must be true FP32. Both variables are read when CuPy/cuBLAS first need
# them, so they are set before anything in this module imports CuPy.
os.environ["CUPY_TF32"] = "0"
os.environ["NVIDIA_TF32_OVERRIDE"] = "0"

DTYPES = ("float32", "float16", "bfloat16")
TOLERANCE = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}
GEMM_FUNCTION = {"float32": "sgemm", "float16": "hgemm", "bfloat16": "hgemm"}
DEFAULT_SIZES = (1024, 2048, 4096, 8192)
QUICK_SIZES = (1024, 2048)
DEFAULT_ROUNDS = 5
QUICK_ROUNDS = 3
CUBLAS = "cuBLAS"
AUTO = "auto"
MAX_REPS = 100
L2_FACTOR = 3  # input sets rotate until together they are >= L2_FACTOR x L2
MAX_INPUT_SETS = 64
ROW_ALIGN_BYTES = 16  # leading dimensions are padded to this (the widest alignment any rung needs)
SLOW_CHECK_MS = 1000.0  # a check launch slower than this doubles as the timing probe
PREFILL_MAX_S = 0.25  # longest spin before one round
GPU_WARMUP_S = 1.0  # cuBLAS work before the first shape, so clocks have ramped up
TIMINGS = ("device", "end-to-end", "both")
TIMING_SHORT = {"device": "device", "end-to-end": "e2e"}
TIMING_PREFIX = {"device": "", "end-to-end": "e2e_"}  # of the result record keys
TIMING_NOTE = {
    "device": "device time (CUDA events around back-to-back launches behind a spin: host cost hidden)",
    "end-to-end": "end-to-end (host clock from synchronize to synchronize around back-to-back calls: "
    "Python call cost and launch gaps included)",
}
# --overhead
OVERHEAD_SHAPE = "64x64x64"
OVERHEAD_BATCHES = 30
OVERHEAD_CALLS = 200
OVERHEAD_WARMUP_CALLS = 200
OVERHEAD_MAX_CALLS = 1000  # a batch must stay below the CUDA launch-queue depth (~1000 launches)
OVERHEAD_TOLERANCE = {"float16": 5e-2, "float32": 1e-2}  # loose: catches wrong results, not rounding

Shape = tuple  # (M, N, K)

# ----------------------------------------------------------------------------------------------
# Peak throughput
# ----------------------------------------------------------------------------------------------

# (regex on the upper-cased GPU name, fp32 TFLOPS, fp16/bf16 dense tensor-core TFLOPS with fp32
# accumulation). Datasheet boost-clock numbers; the first match wins, so variants come first.
PEAK_TABLE: tuple = (
    (r"H100.*PCIE", "H100 PCIe", 51.2, 756.0),
    (r"H100.*NVL", "H100 NVL", 60.0, 835.0),
    (r"H200.*NVL", "H200 NVL", 60.0, 835.0),
    (r"GH200", "GH200", 67.0, 989.0),
    (r"H100", "H100 SXM", 67.0, 989.0),
    (r"H200", "H200 SXM", 67.0, 989.0),
    (r"A100", "A100", 19.5, 312.0),
    (r"\bL4\b", "L4", 30.3, 121.0),
    (r"\bA10\b", "A10", 31.2, 125.0),
    (r"RTX 4090\b", "RTX 4090", 82.6, 165.2),
)


def fp32_lanes_per_sm(cc: int) -> int | None:
    """FP32 FMA lanes per SM by compute capability (None where not known)."""
    if cc in (70, 72, 75, 80):
        return 64
    if cc >= 86:
        return 128
    return None


def peak_tflops(
    gpu_name: str, dtype: str, cc: int, sm_count: int | None, clock_khz: int | None
) -> tuple[float | None, str]:
    """(peak TFLOPS for dtype, where the number comes from); (None, reason) when unknown."""
    upper = gpu_name.upper()
    for pattern, label, fp32, half in PEAK_TABLE:
        if re.search(pattern, upper):
            return (fp32 if dtype == "float32" else half), f"datasheet, {label}"
    if dtype == "float32":
        lanes = fp32_lanes_per_sm(cc)
        if lanes and sm_count and clock_khz:
            value = sm_count * lanes * 2 * clock_khz * 1e3 / 1e12
            return value, f"computed: {sm_count} SMs x {lanes} lanes x 2 x {clock_khz / 1e6:.3f} GHz"
    return None, "unknown"


# ----------------------------------------------------------------------------------------------
# Arguments
# ----------------------------------------------------------------------------------------------


def _positive_int(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{what}: '{text}' is not an integer") from None
    if value <= 0:
        raise ValueError(f"{what}: {value} must be positive")
    return value


def parse_shapes(sizes: str | None, shapes: str | None, quick: bool = False) -> list[Shape]:
    """--sizes 1024,2048 (squares) and --shapes 4095x4097x4099,16x4096x4096 (MxNxK), in order,
    duplicates dropped. Neither: the default squares (or the quick ones)."""
    out: list[Shape] = []
    if sizes:
        for item in sizes.split(","):
            if item.strip():
                n = _positive_int(item.strip(), "--sizes")
                out.append((n, n, n))
    if shapes:
        for item in shapes.split(","):
            item = item.strip().lower().replace("*", "x")
            if not item:
                continue
            parts = item.split("x")
            if len(parts) != 3:
                raise ValueError(f"--shapes: '{item}' is not MxNxK")
            out.append(tuple(_positive_int(p, "--shapes") for p in parts))
    if not out:
        out = [(n, n, n) for n in (QUICK_SIZES if quick else DEFAULT_SIZES)]
    return list(dict.fromkeys(out))  # duplicates dropped, order kept


EXIT_WRONG, EXIT_BAD_ARGUMENTS, EXIT_NO_GPU = 1, 2, 3


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
        help=f"timed rounds per kernel and shape (default {DEFAULT_ROUNDS}, --quick {QUICK_ROUNDS})",
    )
    parser.add_argument(
        "--target-ms",
        type=float,
        default=100.0,
        help="device time one round aims at; sets launches per round (default 100)",
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
    _check_overhead_args(parser, args)

    dtypes = [d.strip() for d in args.dtype.split(",") if d.strip()]
    bad = [d for d in dtypes if d not in DTYPES]
    if bad or not dtypes:
        parser.error(f"--dtype: unknown {', '.join(bad) or '(empty)'}; choose from {', '.join(DTYPES)}")
    args.dtypes = list(dict.fromkeys(dtypes))
    try:
        args.shape_list = parse_shapes(args.sizes, args.shapes, args.quick)
    except ValueError as exc:
        parser.error(str(exc))
    if args.rounds is None:
        args.rounds = QUICK_ROUNDS if args.quick else DEFAULT_ROUNDS
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


# ----------------------------------------------------------------------------------------------
# Environment: fastgemm, CuPy, the device
# ----------------------------------------------------------------------------------------------


class NoGPU(Exception):
    """No usable CUDA GPU; the message says why (printed as one paragraph, exit status 2)."""


def _cuda_major_hint(fastgemm: Any) -> str:
    version = _try(lambda: int(fastgemm._C.runtime_version()))  # private, best effort
    if version and version // 1000 >= 11:
        return f"pip install cupy-cuda{version // 1000}x"
    return "pip install cupy-cuda13x (or cupy-cuda12x for a CUDA 12 driver)"


def load_cupy(fastgemm: Any) -> Any:
    """Import CuPy and make sure it sees a GPU; NoGPU otherwise."""
    try:
        count = int(fastgemm.device_count())
    except Exception as exc:  # noqa: BLE001 - a broken runtime is "no GPU" here, never a traceback
        count, status = 0, f"device_count() failed: {exc}"
    else:
        status = _runtime_status(fastgemm)
    if count == 0:
        raise NoGPU(f"no CUDA GPU available ({status})")
    try:
        import cupy
    except ImportError as exc:
        raise NoGPU(
            f"CuPy is not installed ({exc}); the benchmark uses it for buffers, CUDA events "
            f"and the cuBLAS baseline: {_cuda_major_hint(fastgemm)}"
        ) from None
    except Exception as exc:  # noqa: BLE001 - e.g. a CuPy built for another CUDA
        raise NoGPU(f"CuPy failed to import ({type(exc).__name__}: {exc})") from None
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - CUDARuntimeError and friends
        raise NoGPU(f"CuPy cannot use the GPU ({type(exc).__name__}: {exc})") from None
    if n == 0:
        raise NoGPU("CuPy sees no CUDA device")
    return cupy


def _runtime_status(fastgemm: Any) -> str:
    status = _try(lambda: str(fastgemm.runtime_status()))
    return status if status is not None else "runtime_status() failed"


@dataclass
class Device:
    index: int
    name: str
    cc: int
    sm_count: int
    l2_bytes: int
    clock_khz: int | None
    meta: dict = field(default_factory=dict)

    @property
    def slug(self) -> str:
        return gpu_slug(self.name)


def gpu_slug(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


def _version_str(v: int | None, style: str) -> str | None:
    if v is None:
        return None
    if style == "cuda":  # 12080 -> 12.8
        return f"{v // 1000}.{(v % 1000) // 10}"
    if v >= 10000:  # cuBLAS: 120804 -> 12.8.4
        return f"{v // 10000}.{(v // 100) % 100}.{v % 100}"
    return str(v)


def _try(fn: Callable[[], Any]) -> Any:
    """fn(), or None if it raises: for optional facts (versions, clocks) that must never abort."""
    try:
        return fn()
    except Exception:  # noqa: BLE001
        return None


def _nvidia_smi_driver() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=15,
            check=True,
        ).stdout
        return out.strip().splitlines()[0].strip() or None
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


def describe_device(cp: Any, index: int, fastgemm: Any) -> Device:
    count = cp.cuda.runtime.getDeviceCount()
    if not 0 <= index < count:
        raise NoGPU(f"--device {index} does not exist (this machine has {count} CUDA device(s))")
    cp.cuda.Device(index).use()
    props = cp.cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    cc = int(props["major"]) * 10 + int(props["minor"])
    clock_khz = _try(lambda: int(cp.cuda.runtime.deviceGetAttribute(13, index)))  # ClockRate
    if not clock_khz:
        clock_khz = _try(lambda: int(props["clockRate"])) or None
    dev = Device(
        index=index,
        name=name,
        cc=cc,
        sm_count=int(props["multiProcessorCount"]),
        l2_bytes=int(props.get("l2CacheSize", 0) or 0),
        clock_khz=clock_khz,
    )
    cublas_v = _try(lambda: int(cp.cuda.cublas.getVersion(cp.cuda.device.get_cublas_handle())))
    runtime_v = _try(lambda: int(cp.cuda.runtime.runtimeGetVersion()))
    driver_v = _try(lambda: int(cp.cuda.runtime.driverGetVersion()))
    dev.meta = _device_meta(
        dev,
        fastgemm,
        _version_str(runtime_v, "cuda"),
        _version_str(driver_v, "cuda"),
        cublas_v,
        getattr(cp, "__version__", None),
    )
    return dev


def describe_device_torch(torch: Any, index: int, fastgemm: Any) -> Device:
    """describe_device() through torch, for --overhead in a process without CuPy (the CUDA
    version is torch's; the cuBLAS version is not known)."""
    props = torch.cuda.get_device_properties(index)
    cc = int(props.major) * 10 + int(props.minor)
    dev = Device(
        index=index,
        name=str(props.name),
        cc=cc,
        sm_count=int(props.multi_processor_count),
        l2_bytes=int(getattr(props, "L2_cache_size", 0) or 0),
        clock_khz=None,
    )
    dev.meta = _device_meta(dev, fastgemm, torch.version.cuda, None, None, None)
    return dev


def _device_meta(
    dev: Device,
    fastgemm: Any,
    cuda_runtime: str | None,
    cuda_driver_api: str | None,
    cublas_v: int | None,
    cupy_version: str | None,
) -> dict:
    fg_version = getattr(fastgemm, "__version__", None)
    if fg_version is None:
        fg_version = _try(lambda: __import__("importlib.metadata").metadata.version("fastgemm"))
    return {
        "gpu": dev.name,
        "device_index": dev.index,
        "compute_capability": f"{dev.cc // 10}.{dev.cc % 10}",
        "sm_count": dev.sm_count,
        "l2_cache_bytes": dev.l2_bytes,
        "clock_khz": dev.clock_khz,
        "cuda_runtime": cuda_runtime,
        "cuda_driver_api": cuda_driver_api,
        "driver_version": _nvidia_smi_driver(),
        "cublas_version": _version_str(cublas_v, "cublas"),
        "cublas_version_int": cublas_v,
        "cupy_version": cupy_version,
        "fastgemm_version": fg_version or "unknown",
        "python": platform.python_version(),
    }


def _git(where: Path, *args: str) -> str | None:
    try:
        return subprocess.run(
            ["git", "-C", str(where), *args], capture_output=True, text=True, timeout=15, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def _checkout() -> Path | None:
    """The git checkout holding this file, else the working directory's; None if neither is one."""
    for where in (Path(__file__).resolve().parent, Path.cwd()):
        out = _git(where, "rev-parse", "HEAD")
        if out is not None and re.fullmatch(r"[0-9a-f]{40,64}", out):
            return where
    return None


def git_commit() -> str | None:
    """HEAD of the git checkout holding this file, else of the working directory; else
    $FASTGEMM_GIT_COMMIT (a copy of a checkout without .git, e.g. on a remote GPU machine: pass
    the commit along); None otherwise."""
    where = _checkout()
    if where is None:
        return os.environ.get("FASTGEMM_GIT_COMMIT") or None
    return _git(where, "rev-parse", "HEAD")


def git_clean() -> bool | None:
    """Whether that checkout has no changes to tracked files (untracked files aside); without a
    checkout, $FASTGEMM_GIT_CLEAN ("1" / "0") if set, else None."""
    where = _checkout()
    if where is None:
        flag = os.environ.get("FASTGEMM_GIT_CLEAN")
        return None if flag not in ("0", "1") else flag == "1"
    status = _git(where, "status", "--porcelain", "--untracked-files=no")
    return None if status is None else status == ""


def run_meta(device: Device, args: argparse.Namespace) -> dict:
    """The meta every output file starts with: the device, date, command line and git commit."""
    meta = dict(device.meta)
    meta.update(
        {
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "command": shlex.join(["python", "-m", "fastgemm.bench", *args.argv]),
            "git_commit": git_commit(),
            "git_clean": git_clean(),
        }
    )
    return meta


# ----------------------------------------------------------------------------------------------
# Candidates and inputs
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    name: str  # kernel name, AUTO or CUBLAS
    version: int | None
    techniques: str
    kind: str  # "kernel" | "auto" | "cublas"


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
        if not runnable(info, cc):
            max_cc = getattr(info, "max_cc", None)
            need = f"{info.min_cc / 10:.1f}"
            if max_cc is not None:
                need = f"exactly {need}" if max_cc == info.min_cc else f"{need} to {max_cc / 10:.1f}"
            notes.append(f"skipping {info.name}: needs compute capability {need}, this GPU is {cc / 10:.1f}")
            continue
        chosen.append(Candidate(info.name, int(info.version), str(info.techniques), "kernel"))
    if kernel_re is not None and not chosen:
        notes.append(f"--kernels {kernel_re.pattern!r} matches no runnable {dtype} kernel")
    if include_auto and any(runnable(i, cc) for i in infos):
        chosen.append(Candidate(AUTO, None, "fastgemm.select() picks the rung", "auto"))
    return chosen, notes


@dataclass
class InputSet:
    A: Any
    B: Any
    C: Any
    lda: int
    ldb: int
    ldc: int


def padded_ld(cols: int, itemsize: int, align_bytes: int) -> int:
    """Smallest leading dimension >= cols whose row size is a multiple of align_bytes."""
    if align_bytes <= itemsize:
        return cols
    q = align_bytes // itemsize
    return -(-cols // q) * q


def set_bytes(M: int, N: int, K: int, itemsize: int, align_bytes: int) -> int:
    return itemsize * (
        M * padded_ld(K, itemsize, align_bytes)
        + K * padded_ld(N, itemsize, align_bytes)
        + M * padded_ld(N, itemsize, align_bytes)
    )


def count_input_sets(bytes_per_set: int, l2_bytes: int) -> int:
    """How many independent input sets keep the L2 from holding them (1 when one set is big)."""
    if l2_bytes <= 0 or bytes_per_set >= L2_FACTOR * l2_bytes:
        return 1
    return max(2, min(MAX_INPUT_SETS, math.ceil(L2_FACTOR * l2_bytes / bytes_per_set)))


def resolve_dtype(cp: Any, dtype: str) -> Any:
    """The numpy dtype CuPy uses for `dtype`; raises if this CuPy cannot hold it."""
    import numpy as np

    if dtype == "bfloat16":
        try:
            import ml_dtypes

            dt = np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            raise RuntimeError("bfloat16 needs the ml_dtypes package and a CuPy that supports it") from None
        cp.zeros(2, dtype=np.float32).astype(dt).astype(np.float64)  # probe: raises if unsupported
        return dt
    return np.dtype(dtype)


def make_inputs(
    cp: Any, np_dtype: Any, M: int, N: int, K: int, n_sets: int, seed: int, align_bytes: int
) -> list[InputSet]:
    """n_sets independent random-normal (A, B) pairs with an output buffer each; rows padded to
    align_bytes (views of the logical shape over the padded storage)."""
    itemsize = np_dtype.itemsize
    rng = cp.random.default_rng(seed)

    def matrix(rows: int, cols: int, fill_random: bool) -> tuple[Any, int]:
        ld = padded_ld(cols, itemsize, align_bytes)
        if fill_random:
            base = rng.standard_normal((rows, ld), dtype=cp.float32)
            if base.dtype != np_dtype:
                base = base.astype(np_dtype)
        else:
            base = cp.empty((rows, ld), dtype=np_dtype)
        return (base if ld == cols else base[:, :cols]), ld

    sets = []
    for _ in range(n_sets):
        A, lda = matrix(M, K, True)
        B, ldb = matrix(K, N, True)
        C, ldc = matrix(M, N, False)
        sets.append(InputSet(A, B, C, lda, ldb, ldc))
    return sets


def reference(cp: Any, s: InputSet) -> tuple[Any, float]:
    """float64 product of the set's inputs and its Frobenius norm."""
    a64 = s.A.astype(cp.float64)
    b64 = s.B.astype(cp.float64)
    ref = cp.matmul(a64, b64)
    del a64, b64
    return ref, float(cp.linalg.norm(ref))


def relative_error(cp: Any, C: Any, ref: Any, ref_norm: float) -> float:
    diff = C.astype(cp.float64)
    diff -= ref
    err = float(cp.linalg.norm(diff))
    return err / ref_norm if ref_norm > 0 else err


# ----------------------------------------------------------------------------------------------
# Launchers
# ----------------------------------------------------------------------------------------------

Launch = Callable[[InputSet], Any]


def fastgemm_launcher(fastgemm: Any, dtype: str, kernel: str) -> Launch:
    fn = getattr(fastgemm, GEMM_FUNCTION[dtype], None) or fastgemm.gemm

    def launch(s: InputSet) -> Any:
        return fn(s.A, s.B, s.C, 1.0, 0.0, kernel=kernel)

    return launch


_CUDA_DATA_TYPE = {"float32": 0, "float16": 2, "bfloat16": 14}  # cudaDataType_t (CUDA_R_*)


def cublas_launchers(cp: Any, dtype: str) -> list[tuple[str, Launch]]:
    """[(description, launch)] in order of preference: gemmEx on the exact buffers, then
    cupy.matmul (which copies padded operands, so it is only the fallback)."""
    import numpy as np

    out: list[tuple[str, Launch]] = []
    try:
        from cupy.cuda import cublas
    except ImportError:
        try:
            from cupy_backends.cuda.libs import cublas
        except ImportError:
            cublas = None
    if cublas is not None and hasattr(cublas, "gemmEx"):
        dt = _CUDA_DATA_TYPE[dtype]
        compute = getattr(cublas, "CUBLAS_COMPUTE_32F", 68)
        op_n = getattr(cublas, "CUBLAS_OP_N", 0)
        algo = getattr(cublas, "CUBLAS_GEMM_DEFAULT", -1)
        one = np.ones((), dtype=np.float32)
        zero = np.zeros((), dtype=np.float32)
        handle = cp.cuda.device.get_cublas_handle()

        def gemm_ex(s: InputSet) -> None:
            # Row-major C = A @ B is column-major C^T = B^T @ A^T: swap the operands.
            M, K = s.A.shape
            N = s.B.shape[1]
            cublas.gemmEx(
                handle,
                op_n,
                op_n,
                N,
                M,
                K,
                one.ctypes.data,
                s.B.data.ptr,
                dt,
                s.ldb,
                s.A.data.ptr,
                dt,
                s.lda,
                zero.ctypes.data,
                s.C.data.ptr,
                dt,
                s.ldc,
                compute,
                algo,
            )

        kind = "FP32 (TF32 off)" if dtype == "float32" else f"{dtype} in/out, fp32 accumulation"
        out.append((f"cuBLAS cublasGemmEx via CuPy, CUBLAS_COMPUTE_32F, {kind}", gemm_ex))

    def matmul(s: InputSet) -> None:
        cp.matmul(s.A, s.B, out=s.C)

    out.append(("cuBLAS via cupy.matmul (CUPY_TF32=0)", matmul))
    return out


_SPIN_SOURCE = r"""
extern "C" __global__ void fastgemm_bench_spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
"""


class Prefill:
    """Keeps the stream busy (one thread spinning on the global timer) while the host enqueues a
    round, so the timed launches run back-to-back on the device."""

    def __init__(self, cp: Any, enabled: bool) -> None:
        self.kernel = None
        self.note = "off (--no-prefill)"
        if not enabled:
            return
        try:
            import numpy as np

            kernel = cp.RawKernel(_SPIN_SOURCE, "fastgemm_bench_spin")
            kernel((1,), (1,), (np.uint64(1000),))
            cp.cuda.get_current_stream().synchronize()
            self.kernel, self._u64 = kernel, np.uint64
            self.note = "spin kernel before each round"
        except Exception as exc:  # noqa: BLE001 - no NVRTC, no driver JIT, ...
            self.note = f"off (spin kernel unavailable: {type(exc).__name__}: {exc})"
            warn(f"cannot build the prefill spin kernel ({exc}); short kernels may show host overhead")

    @property
    def enabled(self) -> bool:
        return self.kernel is not None

    def __call__(self, seconds: float) -> None:
        if self.kernel is not None and seconds > 0:
            self.kernel((1,), (1,), (self._u64(int(seconds * 1e9)),))


# ----------------------------------------------------------------------------------------------
# Checking and timing
# ----------------------------------------------------------------------------------------------


@dataclass
class Trial:
    """One candidate on one shape."""

    cand: Candidate
    M: int
    N: int
    K: int
    launch: Launch | None = None
    status: str = "pending"  # ok | wrong | error
    rel_error: float | None = None
    error: str = ""
    est_ms: float = 0.0
    host_s: float = 2e-4  # host seconds to enqueue one launch (updated as we go)
    rounds: int = 0
    reps: int = 0
    samples: list = field(default_factory=list)  # per round: device ms per launch
    e2e_samples: list = field(default_factory=list)  # per round: end-to-end ms per call
    next_set: int = 0
    host_limited_rounds: int = 0
    selected: str | None = None  # AUTO: the rung select() names
    baseline: str | None = None  # CUBLAS: which call was used

    @property
    def ms(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def e2e_ms(self) -> float | None:
        return statistics.median(self.e2e_samples) if self.e2e_samples else None

    @property
    def label(self) -> str:
        return self.cand.name

    def run(self, s: InputSet) -> Any:
        assert self.launch is not None, "run() before the trial's launcher was set"
        return self.launch(s)


class BrokenContext(RuntimeError):
    """A launch left the CUDA context unusable; nothing more can be measured in this process."""


def _ensure_context(cp: Any, what: str, exc: BaseException) -> None:
    try:
        cp.cuda.Device().synchronize()
    except Exception as sync_exc:  # noqa: BLE001
        raise BrokenContext(f"{what} failed ({exc}) and the CUDA context is broken ({sync_exc})") from None


def check(cp: Any, trial: Trial, s: InputSet, ref: Any, ref_norm: float, tol: float) -> float | None:
    """Run the candidate once on poisoned output and compare with the float64 reference. Sets
    trial.status ('ok'/'wrong'/'error') and rel_error; returns the launch's event time (ms)."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    try:
        s.C.fill(float("nan"))
        start.record()
        trial.run(s)
        end.record()
        end.synchronize()
    except Exception as exc:  # noqa: BLE001 - a failing candidate is a result, not a crash
        trial.status, trial.error = "error", f"{type(exc).__name__}: {exc}"
        _ensure_context(cp, trial.label, exc)
        return None
    ms = cp.cuda.get_elapsed_time(start, end)
    err = relative_error(cp, s.C, ref, ref_norm)
    trial.rel_error = err
    if math.isfinite(err) and err <= tol:
        trial.status = "ok"
    else:
        trial.status = "wrong"
        trial.error = f"relative Frobenius error {err:.3g} > {tol:g}"
    return ms


def time_kernel(cp: Any, trial: Trial, sets: list[InputSet], reps: int, prefill: Prefill) -> float:
    """One round: `reps` back-to-back launches (rotating over the input sets) between two CUDA
    events, behind a prefill spin; returns device milliseconds per launch."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    spin_s = 0.0
    if prefill.enabled:
        spin_s = min(PREFILL_MAX_S, 1.5 * trial.host_s * reps + 50e-6)
        prefill(spin_s)
    n = len(sets)
    first = trial.next_set
    t0 = time.perf_counter()
    start.record()
    for i in range(reps):
        trial.run(sets[(first + i) % n])
    end.record()
    host = time.perf_counter() - t0
    end.synchronize()
    trial.next_set = (first + reps) % n
    elapsed_ms = cp.cuda.get_elapsed_time(start, end)
    # The device never waited for the host if every launch was queued before the device finished
    # the spin plus the launches ahead of it; flag the round when that may not have held.
    if prefill.enabled and host > spin_s + elapsed_ms * 1e-3 * (reps - 1) / reps:
        trial.host_limited_rounds += 1
    trial.host_s = max(host / reps, 0.5 * trial.host_s)
    return elapsed_ms / reps


def time_end_to_end(cp: Any, trial: Trial, sets: list[InputSet], reps: int) -> float:
    """One end-to-end round: synchronise, `reps` back-to-back calls as a user makes them (rotating
    over the input sets, no spin), synchronise; returns host milliseconds per call."""
    device = cp.cuda.Device()
    n, first = len(sets), trial.next_set
    device.synchronize()
    t0 = time.perf_counter()
    for i in range(reps):
        trial.run(sets[(first + i) % n])
    device.synchronize()
    elapsed = time.perf_counter() - t0
    trial.next_set = (first + reps) % n
    return elapsed * 1e3 / reps


def probe(cp: Any, trial: Trial, sets: list[InputSet], prefill: Prefill, check_ms: float | None) -> float:
    """Estimated device ms per launch. A check launch over a second is estimate enough (its
    first-call overheads are small beside it); otherwise one timed launch, refined over ~2 ms worth
    of launches when it is short."""
    if check_ms is not None and check_ms >= SLOW_CHECK_MS:
        return check_ms
    ms = time_kernel(cp, trial, sets, 1, prefill)
    if ms < 1.0:
        ms = time_kernel(cp, trial, sets, min(MAX_REPS, max(2, math.ceil(2.0 / max(ms, 1e-3)))), prefill)
    return ms


def plan_reps(est_ms: float, rounds: int, target_ms: float, budget_s: float) -> tuple[int, int]:
    """(rounds, reps per round) for a kernel of est_ms per launch: reps = clamp(target/t, 1, 100),
    then reps and rounds cut until rounds*reps*t fits the budget (at least 1 x 1)."""
    t_ms = max(est_ms, 1e-4)
    reps = int(min(MAX_REPS, max(1, round(target_ms / t_ms))))
    budget_ms = budget_s * 1e3
    if rounds * reps * t_ms > budget_ms:
        reps = max(1, int(budget_ms / (rounds * t_ms)))
        if rounds * reps * t_ms > budget_ms:
            rounds = max(1, int(budget_ms / (reps * t_ms)))
    return rounds, reps


# ----------------------------------------------------------------------------------------------
# Running
# ----------------------------------------------------------------------------------------------


def shape_label(M: int, N: int, K: int) -> str:
    return f"{M}x{N}x{K}"


def tflops_of(M: int, N: int, K: int, ms: float | None) -> float | None:
    if not ms or ms <= 0:
        return None
    return 2.0 * M * N * K / (ms * 1e-3) / 1e12


def fmt_tflops(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def warn(msg: str) -> None:
    print(f"fastgemm.bench: warning: {msg}", file=sys.stderr, flush=True)


class Progress:
    def __init__(self, total: int) -> None:
        self.total, self.width = total, len(str(total))

    def __call__(self, index: int, msg: str) -> None:
        print(f"[{index:>{self.width}}/{self.total}] {msg}", file=sys.stderr, flush=True)

    def note(self, msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)


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


def _setup_trial(ctx: Context, dtype: str, cand: Candidate, shape: Shape) -> Trial:
    M, N, K = shape
    trial = Trial(cand, M, N, K)
    if cand.kind == "cublas":
        return trial  # launch chosen in run_shape (first implementation that checks out)
    trial.launch = fastgemm_launcher(ctx.fastgemm, dtype, AUTO if cand.kind == "auto" else cand.name)
    return trial


def operand_alignment(s: InputSet, itemsize: int, cap: int = ROW_ALIGN_BYTES) -> int:
    """Largest power of two (<= cap) dividing every base address and row size of the set."""
    values = [s.A.data.ptr, s.B.data.ptr, s.C.data.ptr, s.lda * itemsize, s.ldb * itemsize, s.ldc * itemsize]
    align = cap
    while align > 1 and any(v % align for v in values):
        align //= 2
    return align


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
    align = ROW_ALIGN_BYTES if args.pad else 1
    per_set = set_bytes(M, N, K, np_dtype.itemsize, align)
    n_sets = count_input_sets(per_set, ctx.device.l2_bytes)
    ctx.progress.note(
        f"--- {dtype} {label}: {n_sets} input set(s) of {per_set / 2**20:.1f} MiB "
        f"(L2 {ctx.device.l2_bytes / 2**20:.0f} MiB)"
    )
    seed = (args.seed * 1_000_003 + M * 7919 + N * 104729 + K * 1299709) % 2**31
    sets = make_inputs(cp, np_dtype, M, N, K, n_sets, seed, align)
    ref, ref_norm = reference(cp, sets[0])
    tol = TOLERANCE[dtype]

    trials: list[Trial] = []
    indices: list[int] = []
    all_cands = [Candidate(CUBLAS, None, "", "cublas"), *candidates]
    for cand in all_cands:
        ctx.counter += 1
        idx = ctx.counter
        trial = _setup_trial(ctx, dtype, cand, shape)
        if cand.kind == "auto":
            trial.selected = selected_kernel(
                ctx.fastgemm, M, N, K, dtype, ctx.device.cc, operand_alignment(sets[0], np_dtype.itemsize)
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

    del sets
    _try(lambda: cp.get_default_memory_pool().free_all_blocks())
    return trials


def timing_figures(
    M: int, N: int, K: int, ms: float | None, base_ms: float | None, peak: float | None, prefix: str = ""
) -> dict:
    """{prefix}ms, {prefix}tflops, {prefix}pct_cublas, {prefix}pct_peak of one median time (None
    where not measured); base_ms is cuBLAS's median of the same timing and shape."""
    tf, base_tflops = tflops_of(M, N, K, ms), tflops_of(M, N, K, base_ms)
    return {
        f"{prefix}ms": round(ms, 6) if ms is not None else None,
        f"{prefix}tflops": round(tf, 3) if tf is not None else None,
        f"{prefix}pct_cublas": round(100 * tf / base_tflops, 2) if tf and base_tflops else None,
        f"{prefix}pct_peak": round(100 * tf / peak, 2) if tf and peak else None,
    }


def result_records(trials: list[Trial], dtype: str, peak: float | None) -> list[dict]:
    """The JSON/CSV records of one shape's trials (cuBLAS first in `trials`): ms, tflops,
    pct_cublas, pct_peak from device time and the same with the prefix e2e_ from end-to-end time
    (None for a timing that was not measured)."""
    base = next((t for t in trials if t.cand.kind == "cublas" and t.status == "ok"), None)
    records = []
    for t in trials:
        ok = t.status == "ok"
        record: dict[str, Any] = {
            "kernel": t.cand.name,
            "version": t.cand.version,
            "dtype": dtype,
            "M": t.M,
            "N": t.N,
            "K": t.K,
        }
        record.update(timing_figures(t.M, t.N, t.K, t.ms if ok else None, base.ms if base else None, peak))
        record.update(
            {
                "rel_error": t.rel_error,
                "ok": ok,
                "status": t.status,
                "techniques": t.baseline if t.cand.kind == "cublas" else t.cand.techniques,
                "rounds": len(t.samples),
                "reps": t.reps if t.samples or t.e2e_samples else 0,
                "host_limited_rounds": t.host_limited_rounds,
                "selected": t.selected,
                "error": t.error or None,
            }
        )
        record.update(
            timing_figures(
                t.M, t.N, t.K, t.e2e_ms if ok else None, base.e2e_ms if base else None, peak, "e2e_"
            )
        )
        record["e2e_rounds"] = len(t.e2e_samples)
        records.append(record)
    return records


def warmup_gpu(cp: Any, seconds: float) -> None:
    """Bring the clocks up before the first measurement (cuBLAS SGEMMs for ~`seconds`)."""
    if seconds <= 0:
        return
    a = cp.random.default_rng(12345).standard_normal((4096, 4096), dtype=cp.float32)
    c = cp.empty_like(a)
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        for _ in range(4):
            cp.matmul(a, a, out=c)
        cp.cuda.get_current_stream().synchronize()
    del a, c
    _try(lambda: cp.get_default_memory_pool().free_all_blocks())


# ----------------------------------------------------------------------------------------------
# Outputs
# ----------------------------------------------------------------------------------------------

CSV_FIELDS = (
    "kernel",
    "version",
    "dtype",
    "M",
    "N",
    "K",
    "ms",
    "tflops",
    "pct_cublas",
    "pct_peak",
    "e2e_ms",
    "e2e_tflops",
    "e2e_pct_cublas",
    "e2e_pct_peak",
    "rel_error",
    "ok",
    "status",
    "techniques",
    "rounds",
    "e2e_rounds",
    "reps",
    "host_limited_rounds",
    "selected",
    "error",
)
# CSV headers that differ from the record keys: every timing column names its timing.
CSV_HEADERS = {
    "ms": "device_ms",
    "tflops": "device_tflops",
    "pct_cublas": "device_pct_cublas",
    "pct_peak": "device_pct_peak",
    "rounds": "device_rounds",
}


def output_paths(out_dir: str | os.PathLike, prefix: str, slug: str) -> dict:
    """<out_dir>/<prefix>-<slug>.{json,csv,png}; prefix is a dtype or "overhead"."""
    base = Path(out_dir) / f"{prefix}-{slug}"
    return {ext: base.with_suffix(f".{ext}") for ext in ("json", "csv", "png")}


def write_outputs(
    out_dir: str | os.PathLike,
    prefix: str,
    slug: str,
    meta: dict,
    results: list[dict],
    fields: Sequence[str] = CSV_FIELDS,
    headers: dict | None = None,
) -> dict:
    """Write <prefix>-<slug>.json (meta and results) and .csv (the record keys in `fields`, headed
    by headers.get(key, key)); returns the paths (png included, not written here)."""
    headers = CSV_HEADERS if headers is None else headers
    paths = output_paths(out_dir, prefix, slug)
    paths["json"].parent.mkdir(parents=True, exist_ok=True)
    tmp = paths["json"].with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    tmp.replace(paths["json"])
    with open(paths["csv"], "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([headers.get(k, k) for k in fields])
        for r in results:
            writer.writerow(["" if r.get(k) is None else r.get(k) for k in fields])
    return paths


def timings_of(meta: dict) -> list[str]:
    """The timings a run measured, in column order: ["device"], ["end-to-end"] or both."""
    timing = meta.get("timing") or "device"
    return ["device", "end-to-end"] if timing == "both" else [timing]


def _shapes_in(results: list[dict]) -> list[Shape]:
    return list(dict.fromkeys((r["M"], r["N"], r["K"]) for r in results))


def plot(path: str | os.PathLike, dtype: str, meta: dict, results: list[dict]) -> bool:
    """TFLOPS by rung, one line per shape, cuBLAS as a dashed line of the same colour (device time;
    end-to-end when only that was measured)."""
    timing = timings_of(meta)[0]
    key = TIMING_PREFIX[timing] + "tflops"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warn("matplotlib is not installed: no plot (pip install matplotlib, or pass --no-plot)")
        return False
    rungs = sorted(
        {
            (r["version"], r["kernel"])
            for r in results
            if r["version"] is not None and r["kernel"] not in (CUBLAS, AUTO)
        }
    )
    if not rungs:
        return False
    fig, ax = plt.subplots(figsize=(10, 6))
    drew = False
    for i, (M, N, K) in enumerate(_shapes_in(results)):
        color = f"C{i % 10}"
        rows = [r for r in results if (r["M"], r["N"], r["K"]) == (M, N, K)]
        by_rung = {
            r["version"]: r[key]
            for r in rows
            if r["kernel"] not in (CUBLAS, AUTO) and r["version"] is not None and r.get(key)
        }
        label = f"{M}³" if M == N == K else shape_label(M, N, K)
        if by_rung:  # WRONG/ERROR rungs are gaps in the line
            ys = [by_rung.get(v, float("nan")) for v, _ in rungs]
            ax.plot([v for v, _ in rungs], ys, marker="o", color=color, label=label)
            drew = True
        cub = next((r[key] for r in rows if r["kernel"] == CUBLAS and r.get(key)), None)
        if cub:
            ax.axhline(cub, color=color, linestyle="--", linewidth=1, label=f"cuBLAS {label}")
            drew = True
    if not drew:
        plt.close(fig)
        return False
    ax.set_yscale("log")
    ax.set_xticks([v for v, _ in rungs])
    ax.set_xticklabels(
        [re.sub(r"^[a-z]+gemm_", "", n) for _, n in rungs], rotation=30, ha="right", fontsize=8
    )
    ax.set_xlabel("rung")
    ax.set_ylabel("TFLOPS (log scale)")
    ax.set_title(
        f"fastgemm {dtype} on {meta.get('gpu', '?')}, {TIMING_SHORT[timing]} time (dashed: cuBLAS, same run)"
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return True


def _row_order(results: list[dict]) -> list[tuple]:
    """(kernel, version) in table order: rungs by version, then auto, then cuBLAS."""
    seen = dict.fromkeys((r["kernel"], r["version"]) for r in results)

    def key(kv: tuple) -> tuple:
        name, version = kv
        rank = 2 if name == CUBLAS else 1 if name == AUTO else 0
        return (rank, version if version is not None else 0, name)

    return sorted(seen, key=key)


def _cell(r: dict | None, with_pct: bool, prefix: str = "") -> str:
    if r is None:
        return "-"
    if r["status"] in ("wrong", "n/a"):
        return r["status"].upper() if r["status"] == "wrong" else "n/a"
    if r["status"] != "ok":
        return "ERROR"
    text = fmt_tflops(r.get(prefix + "tflops"))
    if with_pct and r.get(prefix + "pct_cublas") is not None:
        text += f" ({r[prefix + 'pct_cublas']:.0f}%)"
    return text


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """A pipe table (valid markdown) padded for the terminal."""
    widths = [
        max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
        for i, h in enumerate(headers)
    ]

    def line(cells: Sequence[str]) -> str:
        return (
            "| "
            + " | ".join(str(c).rjust(w) if rt else str(c).ljust(w) for c, w, rt in zip(cells, widths, right))
            + " |"
        )

    sep = (
        "|" + "|".join(("-" * (w + 1) + ":") if rt else ("-" * (w + 2)) for w, rt in zip(widths, right)) + "|"
    )
    return "\n".join([line(headers), sep] + [line(r) for r in rows])


def wide_table(results: list[dict], timings: Sequence[str] = ("device",)) -> str:
    """kernel | per shape and timing 'TFLOPS (xx%)' | % of peak at the largest shape (first timing).
    Columns of end-to-end time, and all columns when there are two timings, name their timing."""
    shapes = _shapes_in(results)
    largest = max(shapes, key=lambda s: (s[0] * s[1] * s[2], s))
    index = {(r["kernel"], r["M"], r["N"], r["K"]): r for r in results}

    def suffix(timing: str) -> str:
        return f" {TIMING_SHORT[timing]}" if len(timings) > 1 or timing != "device" else ""

    headers = (
        ["kernel"]
        + [shape_label(*s) + suffix(t) for s in shapes for t in timings]
        + [f"% peak @ {shape_label(*largest)}{suffix(timings[0])}"]
    )
    peak_key = TIMING_PREFIX[timings[0]] + "pct_peak"
    rows = []
    for name, _version in _row_order(results):
        cells = [name]
        for s in shapes:
            for t in timings:
                cells.append(_cell(index.get((name, *s)), name != CUBLAS, TIMING_PREFIX[t]))
        big = index.get((name, *largest))
        cells.append(f"{big[peak_key]:.1f}%" if big and big.get(peak_key) is not None else "n/a")
        rows.append(cells)
    return format_table(headers, rows, [False] + [True] * (len(headers) - 1))


def _status_text(r: dict) -> str | None:
    """What stands in a TFLOPS cell of a record that was not measured (None: it was)."""
    if r["status"] == "ok":
        return None
    if r["status"] == "n/a":
        return "n/a (alignment)"
    if r["status"] == "wrong":
        err = r.get("rel_error")
        return "WRONG" + (f" (err {err:.1e})" if isinstance(err, (int, float)) else "")
    return "ERROR"


def long_table(results: list[dict], timings: Sequence[str] = ("device",)) -> str:
    """kernel | shape | per timing: TFLOPS | % of cuBLAS | % of peak, one row per (kernel, shape);
    with both timings also the end-to-end minus the device time per call, in microseconds."""
    order = {kv: i for i, kv in enumerate(_row_order(results))}
    shapes = {s: i for i, s in enumerate(_shapes_in(results))}
    headers = ["kernel", "shape"]
    for t in timings:
        short = TIMING_SHORT[t]
        headers += [f"TFLOPS ({short})", f"% of cuBLAS ({short})", f"% of peak ({short})"]
    both = len(timings) > 1
    if both:
        headers.append("e2e - device (us/call)")
    rows = []
    for r in sorted(
        results, key=lambda r: (shapes[(r["M"], r["N"], r["K"])], order[(r["kernel"], r["version"])])
    ):
        name = r["kernel"] + (f" -> {r['selected']}" if r.get("selected") else "")
        row = [name, shape_label(r["M"], r["N"], r["K"])]
        for t in timings:
            p = TIMING_PREFIX[t]
            row += [
                _status_text(r) or fmt_tflops(r.get(p + "tflops")),
                f"{r[p + 'pct_cublas']:.1f}%" if r.get(p + "pct_cublas") is not None else "-",
                f"{r[p + 'pct_peak']:.1f}%" if r.get(p + "pct_peak") is not None else "n/a",
            ]
        if both:
            ms, e2e = r.get("ms"), r.get("e2e_ms")
            row.append(f"{(e2e - ms) * 1e3:.1f}" if ms is not None and e2e is not None else "-")
        rows.append(row)
    return format_table(headers, rows, [False, False] + [True] * (len(headers) - 2))


def timing_caption(timings: Sequence[str]) -> str:
    """'timing: ...' naming what the number columns of a table measure."""
    if len(timings) > 1:
        return f"timing: {TIMING_NOTE['device']}; the e2e columns: {TIMING_NOTE['end-to-end']}"
    return f"timing: {TIMING_NOTE[timings[0]]}"


def print_table(dtype: str, meta: dict, results: list[dict], long: bool, file: Any = None) -> None:
    """Print one dtype's wide (long=False) or long-format (long=True) table to stdout."""
    file = file or sys.stdout
    if not results:
        return
    peak = meta.get("peak_tflops")
    peak_txt = f"{peak:.1f} TFLOPS ({meta.get('peak_source')})" if peak else "n/a"
    kind = "per kernel and shape" if long else "TFLOPS (% of cuBLAS) by shape"
    timings = timings_of(meta)
    print(
        f"\n## {dtype} on {meta.get('gpu')} (cc {meta.get('compute_capability')}), {kind}; "
        f"median of up to {meta.get('rounds')} rounds; peak {peak_txt}",
        file=file,
    )
    print(timing_caption(timings), file=file)
    print(long_table(results, timings) if long else wide_table(results, timings), file=file, flush=True)
    errors = [r for r in results if r["status"] != "ok"] if long else []
    for r in errors:
        print(
            f"  {r['kernel']} {shape_label(r['M'], r['N'], r['K'])}: {r['status'].upper()}: {r.get('error')}",
            file=file,
        )


# ----------------------------------------------------------------------------------------------
# Host cost per call (--overhead)
# ----------------------------------------------------------------------------------------------

OVERHEAD_FUNCTIONS = (("hgemm", "float16", "fp16"), ("sgemm", "float32", "fp32"))
OVERHEAD_FIELDS = (
    "case",
    "label",
    "library",
    "function",
    "dtype",
    "kernel",
    "beta",
    "layout",
    "host_us_median",
    "host_us_min",
    "ratio_to_peer",
    "peer",
    "batches",
    "calls_per_batch",
    "rel_error",
    "ok",
    "status",
    "error",
)


@dataclass(frozen=True)
class ArrayLib:
    """What --overhead needs from one array library (torch or CuPy)."""

    name: str  # "torch" | "cupy"
    version: str | None
    from_host: Callable[[Any, bool], Any]  # (NumPy array, F-ordered?) -> device array
    to_host: Callable[[Any], Any]  # device array -> NumPy array
    sync: Callable[[], Any]  # synchronise the device
    matmul: Callable[..., Any]  # the peer, called as matmul(A, B, out=C)

    @property
    def peer(self) -> str:
        return f"{self.name}.matmul"


def load_torch(index: int) -> Any:
    """Import torch and make sure it sees CUDA device `index`; NoGPU otherwise."""
    try:
        import torch
    except ImportError as exc:
        raise NoGPU(f"torch is not installed ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - a broken install is "not usable", never a traceback
        raise NoGPU(f"torch failed to import ({type(exc).__name__}: {exc})") from None
    if not torch.cuda.is_available() or not 0 <= index < torch.cuda.device_count():
        raise NoGPU(f"torch sees no CUDA device {index}")
    return torch


def torch_array_lib(torch: Any, index: int) -> ArrayLib:
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)

    def from_host(a: Any, fortran: bool) -> Any:
        t = torch.from_numpy(a.copy(order="C")).to(device)
        return t.T.contiguous().T if fortran else t

    return ArrayLib(
        "torch",
        str(torch.__version__),
        from_host,
        lambda x: x.cpu().numpy(),
        lambda: torch.cuda.synchronize(device),
        torch.matmul,
    )


def cupy_array_lib(cp: Any, index: int) -> ArrayLib:
    def from_host(a: Any, fortran: bool) -> Any:
        with cp.cuda.Device(index):
            return cp.asfortranarray(cp.asarray(a)) if fortran else cp.asarray(a)

    return ArrayLib(
        "cupy",
        getattr(cp, "__version__", None),
        from_host,
        cp.asnumpy,
        lambda: cp.cuda.Device(index).synchronize(),
        cp.matmul,
    )


@dataclass(frozen=True)
class OverheadSpec:
    """One row of the overhead table, run once per array library."""

    case: str  # stable id, e.g. "hgemm-auto"
    label: str
    function: str  # "hgemm" | "sgemm" | "matmul" (the library's own, the peer)
    dtype: str  # "float16" | "float32"
    kernel: str | None = AUTO  # kernel= for fastgemm (None: select() named none); None for matmul
    beta: float = 0.0
    fortran: bool = False  # A, B and C column-major


def overhead_specs(forced: dict[str, str | None]) -> list[OverheadSpec]:
    """The cases in table order; forced maps dtype -> the rung fastgemm.select() names."""
    specs = []
    for fn, dtype, short in OVERHEAD_FUNCTIONS:
        specs += [
            OverheadSpec(f"{fn}-auto", f"{fn} {short}, auto, beta=0", fn, dtype),
            OverheadSpec(f"{fn}-beta", f"{fn} {short}, auto, beta=0.5", fn, dtype, beta=0.5),
            OverheadSpec(f"{fn}-forder", f"{fn} {short}, auto, F-ordered A, B, C", fn, dtype, fortran=True),
            OverheadSpec(
                f"{fn}-forced",
                f"{fn} {short}, kernel={forced.get(dtype) or '?'}",
                fn,
                dtype,
                kernel=forced.get(dtype),
            ),
        ]
    specs += [
        OverheadSpec(f"matmul-{dtype}", f"peer: matmul(A, B, out=C), {short}", "matmul", dtype, kernel=None)
        for _, dtype, short in OVERHEAD_FUNCTIONS
    ]
    return specs


def forced_kernels(fastgemm: Any, shape: Shape) -> dict[str, str | None]:
    """dtype -> .kernel.name of fastgemm.select(M, N, K, dtype) (None where it fails)."""
    out = {}
    for _, dtype, _ in OVERHEAD_FUNCTIONS:
        sel = _try(functools.partial(fastgemm.select, *shape, dtype))
        out[dtype] = getattr(getattr(sel, "kernel", None), "name", None)
    return out


@dataclass
class OverheadCase:
    spec: OverheadSpec
    lib: ArrayLib
    call: Callable[[], Any] | None = None
    status: str = "pending"  # ok | wrong | error
    rel_error: float | None = None
    error: str = ""
    samples: list = field(default_factory=list)  # per batch: host seconds per call

    @property
    def name(self) -> str:
        return f"{self.spec.label} ({self.lib.name})"

    def invoke(self) -> Any:
        assert self.call is not None, "invoke() before prepare_case() set the call"
        return self.call()

    def fail(self, exc: BaseException) -> None:
        self.status, self.error = "error", f"{type(exc).__name__}: {exc}"
        self.samples.clear()


def overhead_call(
    spec: OverheadSpec, lib: ArrayLib, fastgemm: Any, A: Any, B: Any, C: Any
) -> Callable[[], Any]:
    """The call as a user writes it, bound with functools.partial (cheaper than a lambda)."""
    if spec.function == "matmul":
        return functools.partial(lib.matmul, A, B, out=C)
    if spec.kernel is None:
        raise RuntimeError(f"fastgemm.select() named no {spec.dtype} kernel to force")
    args = (A, B, C) if spec.beta == 0 else (A, B, C, 1.0, spec.beta)
    kwargs = {} if spec.kernel == AUTO else {"kernel": spec.kernel}
    return functools.partial(getattr(fastgemm, spec.function), *args, **kwargs)


def prepare_case(spec: OverheadSpec, lib: ArrayLib, fastgemm: Any, shape: Shape, seed: int) -> OverheadCase:
    """Operands and call of one case, checked by one call against a float64 NumPy product (C holds
    NaN when beta = 0): status ok, wrong (error over OVERHEAD_TOLERANCE) or error."""
    import numpy as np

    case = OverheadCase(spec, lib)
    M, N, K = shape
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(spec.dtype)
    b = rng.standard_normal((K, N), dtype=np.float32).astype(spec.dtype)
    c0 = (
        rng.standard_normal((M, N), dtype=np.float32)
        if spec.beta
        else np.full((M, N), np.nan, dtype=np.float32)
    ).astype(spec.dtype)
    try:
        A, B, C = (lib.from_host(x, spec.fortran) for x in (a, b, c0))
        case.call = overhead_call(spec, lib, fastgemm, A, B, C)
        case.invoke()
        lib.sync()
        got = np.asarray(lib.to_host(C), dtype=np.float64)
    except Exception as exc:  # noqa: BLE001 - a failing case is a result, not a crash
        case.fail(exc)
        return case
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if spec.beta:
        ref += spec.beta * c0.astype(np.float64)
    norm = float(np.linalg.norm(ref))
    err = float(np.linalg.norm(got - ref)) / (norm or 1.0)
    case.rel_error = err
    tol = OVERHEAD_TOLERANCE[spec.dtype]
    if math.isfinite(err) and err <= tol:
        case.status = "ok"
    else:
        case.status, case.error = "wrong", f"relative Frobenius error {err:.3g} > {tol:g}"
    return case


def time_batch(call: Callable[[], Any], sync: Callable[[], Any], calls: int) -> float:
    """Host seconds per call over `calls` back-to-back calls made after a device synchronise."""
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - t0) / calls


def measure_overhead(
    cases: Sequence[OverheadCase],
    batches: int,
    calls: int,
    warmup: int,
    seed: int,
    note: Callable[[str], Any] | None = None,
) -> None:
    """Warm up every checked case, then `batches` rounds of one batch per case, each round in a new
    seeded random order; appends one sample per batch to case.samples."""
    for case in cases:
        if case.status == "ok":
            try:
                for _ in range(warmup):
                    case.invoke()
                case.lib.sync()
            except Exception as exc:  # noqa: BLE001
                case.fail(exc)
    rng = random.Random(seed)
    for b in range(batches):
        order = [c for c in cases if c.status == "ok"]
        rng.shuffle(order)
        for case in order:
            try:
                case.samples.append(time_batch(case.invoke, case.lib.sync, calls))
            except Exception as exc:  # noqa: BLE001
                case.fail(exc)
        if note and (b + 1) % 10 == 0 and b + 1 < batches:
            note(f"    batch {b + 1}/{batches} done")


def overhead_records(cases: Sequence[OverheadCase], calls: int) -> list[dict]:
    """One record per case: host microseconds per call (median and min over batches), the ratio of
    the median to the same library's matmul(out=) of the same dtype, and the check."""

    def median_us(c: OverheadCase) -> float | None:
        return statistics.median(c.samples) * 1e6 if c.status == "ok" and c.samples else None

    peers = {(c.lib.name, c.spec.dtype): median_us(c) for c in cases if c.spec.function == "matmul"}
    records = []
    for c in cases:
        med, peer = median_us(c), peers.get((c.lib.name, c.spec.dtype))
        records.append(
            {
                "case": c.spec.case,
                "label": c.spec.label,
                "library": c.lib.name,
                "function": c.spec.function,
                "dtype": c.spec.dtype,
                "kernel": c.spec.kernel,
                "beta": c.spec.beta,
                "layout": "F" if c.spec.fortran else "C",
                "host_us_median": round(med, 3) if med is not None else None,
                "host_us_min": round(min(c.samples) * 1e6, 3) if med is not None else None,
                "ratio_to_peer": round(med / peer, 3) if med is not None and peer else None,
                "peer": c.lib.peer,
                "batches": len(c.samples),
                "calls_per_batch": calls if c.samples else 0,
                "rel_error": c.rel_error,
                "ok": c.status == "ok",
                "status": c.status,
                "error": c.error or None,
                "host_us_samples": [round(x * 1e6, 3) for x in c.samples],
            }
        )
    return records


def overhead_table(records: Sequence[dict]) -> str:
    """case | library | us/call (median) | us/call (min) | median / the peer's median."""
    rows = []
    for r in records:
        if r["status"] == "ok" and r.get("host_us_median") is not None:
            med, low = f"{r['host_us_median']:.2f}", f"{r['host_us_min']:.2f}"
        else:
            err = r.get("rel_error")
            med = r["status"].upper() + (
                f" (err {err:.1e})" if r["status"] == "wrong" and isinstance(err, (int, float)) else ""
            )
            low = "-"
        ratio = f"{r['ratio_to_peer']:.2f}x" if r.get("ratio_to_peer") is not None else "-"
        rows.append([r["label"], r["library"], med, low, ratio])
    return format_table(
        [
            "case",
            "library",
            "host us/call (median)",
            "host us/call (min)",
            "vs matmul(out=) (same library, dtype)",
        ],
        rows,
        [False, False, True, True, True],
    )


def print_overhead(meta: dict, records: Sequence[dict], file: Any = None) -> None:
    file = file or sys.stdout
    M, N, K = meta["shape"]
    print(
        f"\n## Host cost per call from Python on {meta.get('gpu')} (cc "
        f"{meta.get('compute_capability')}), {M}x{N}x{K}: median and min over "
        f"{meta['batches']} batches of {meta['calls_per_batch']} back-to-back calls, no "
        "synchronisation inside a batch",
        file=file,
    )
    print(overhead_table(records), file=file)
    print("ratio: median / the median of the same library's matmul(A, B, out=C) of the same dtype", file=file)
    for name, why in meta.get("skipped_libraries", {}).items():
        print(f"  {name}: skipped ({why})", file=file)
    for r in records:
        if r["status"] != "ok":
            print(f"  {r['label']} ({r['library']}): {r['status'].upper()}: {r['error']}", file=file)
    file.flush()


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


# ----------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------


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


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        import fastgemm
    except Exception as exc:  # noqa: BLE001 - e.g. the extension is not built
        print(
            f"fastgemm.bench: cannot import fastgemm ({type(exc).__name__}: {exc}); build and "
            "install the package first (pip install .). Nothing was measured.",
            file=sys.stderr,
        )
        return EXIT_NO_GPU
    try:
        return run_overhead(fastgemm, args) if args.overhead else run_benchmark(fastgemm, args)
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
        try:
            resolve_dtype(cp, dtype)
        except Exception as exc:  # noqa: BLE001
            warn(f"skipping {dtype}: {exc}")
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


if __name__ == "__main__":
    sys.exit(main())
