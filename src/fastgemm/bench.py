"""Benchmark the fastgemm kernel ladder against cuBLAS on the local GPU.

    python -m fastgemm.bench                       # float32 ladder at 1024^3 .. 8192^3
    python -m fastgemm.bench --quick               # 1024^3 and 2048^3, 3 rounds
    python -m fastgemm.bench --dtype float32,float16 --shapes 4095x4097x4099 --kernels 'v0[5-9]'

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
``results``), ``.csv`` (the results) and ``.png`` (TFLOPS by rung, one line per shape, cuBLAS dashed).
``benchmarks/update_readme.py`` turns the JSON into the README tables.

Exit status: 0 all measured and correct; 1 a candidate was WRONG or failed; 2 no usable GPU (or bad
arguments); 130 interrupted.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import math
import os
import platform
import random
import re
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
    seen: set = set()
    return [s for s in out if not (s in seen or seen.add(s))]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m fastgemm.bench",
        description="Time the fastgemm kernel ladder against cuBLAS on this GPU (correctness "
        "checked first, CUDA events, interleaved rounds, median).",
    )
    parser.add_argument("--dtype", default="float32",
                        help="comma list of float32, float16, bfloat16 (default: float32)")
    parser.add_argument("--sizes", help="comma list of square sizes, e.g. 1024,2048")
    parser.add_argument("--shapes", help="comma list of MxNxK, e.g. 4095x4097x4099,16x4096x4096")
    parser.add_argument("--kernels", metavar="REGEX",
                        help="only kernels whose name matches (re.search); default: every kernel "
                        "of the dtype this GPU can run")
    parser.add_argument("--include-auto", action="store_true",
                        help='add a row for kernel="auto" (fastgemm.select\'s choice)')
    parser.add_argument("--rounds", type=int,
                        help=f"timed rounds per kernel and shape (default {DEFAULT_ROUNDS}, "
                        f"--quick {QUICK_ROUNDS})")
    parser.add_argument("--target-ms", type=float, default=100.0,
                        help="device time one round aims at; sets launches per round (default 100)")
    parser.add_argument("--max-seconds-per-kernel", type=float, default=3.0,
                        help="timing budget per kernel and shape; slow kernels get fewer "
                        "launches/rounds, never fewer than one (default 3)")
    parser.add_argument("--out", default="results", help="output directory (default: results)")
    parser.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    parser.add_argument("--quick", action="store_true",
                        help=f"sizes {','.join(map(str, QUICK_SIZES))} and {QUICK_ROUNDS} rounds "
                        "(explicit --sizes/--shapes/--rounds win)")
    parser.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    parser.add_argument("--seed", type=int, default=0, help="random seed for the inputs")
    parser.add_argument("--pad", action="store_true",
                        help="pad rows to 16 bytes for every candidate (default: dense operands)")
    parser.add_argument("--no-prefill", action="store_true",
                        help="do not spin the stream before a round (then host launch overhead "
                        "can show in short kernels' times)")
    args = parser.parse_args(argv)

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
        raise NoGPU(f"CuPy is not installed ({exc}); the benchmark uses it for buffers, CUDA events "
                    f"and the cuBLAS baseline: {_cuda_major_hint(fastgemm)}") from None
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
            capture_output=True, text=True, timeout=15, check=True,
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
    dev = Device(index=index, name=name, cc=cc, sm_count=int(props["multiProcessorCount"]),
                 l2_bytes=int(props.get("l2CacheSize", 0) or 0), clock_khz=clock_khz)
    cublas_v = _try(lambda: int(cp.cuda.cublas.getVersion(cp.cuda.device.get_cublas_handle())))
    runtime_v = _try(lambda: int(cp.cuda.runtime.runtimeGetVersion()))
    driver_v = _try(lambda: int(cp.cuda.runtime.driverGetVersion()))
    fg_version = getattr(fastgemm, "__version__", None)
    if fg_version is None:
        fg_version = _try(lambda: __import__("importlib.metadata").metadata.version("fastgemm"))
    dev.meta = {
        "gpu": name,
        "device_index": index,
        "compute_capability": f"{cc // 10}.{cc % 10}",
        "sm_count": dev.sm_count,
        "l2_cache_bytes": dev.l2_bytes,
        "clock_khz": clock_khz,
        "cuda_runtime": _version_str(runtime_v, "cuda"),
        "cuda_driver_api": _version_str(driver_v, "cuda"),
        "driver_version": _nvidia_smi_driver(),
        "cublas_version": _version_str(cublas_v, "cublas"),
        "cublas_version_int": cublas_v,
        "cupy_version": getattr(cp, "__version__", None),
        "fastgemm_version": fg_version or "unknown",
        "python": platform.python_version(),
    }
    return dev


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
    return itemsize * (M * padded_ld(K, itemsize, align_bytes) + K * padded_ld(N, itemsize, align_bytes)
                       + M * padded_ld(N, itemsize, align_bytes))


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


def make_inputs(cp: Any, np_dtype: Any, M: int, N: int, K: int, n_sets: int, seed: int,
                align_bytes: int) -> list[InputSet]:
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
            cublas.gemmEx(handle, op_n, op_n, N, M, K, one.ctypes.data,
                          s.B.data.ptr, dt, s.ldb, s.A.data.ptr, dt, s.lda, zero.ctypes.data,
                          s.C.data.ptr, dt, s.ldc, compute, algo)

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
    samples: list = field(default_factory=list)  # per round: ms per launch
    next_set: int = 0
    host_limited_rounds: int = 0
    selected: str | None = None  # AUTO: the rung select() names
    baseline: str | None = None  # CUBLAS: which call was used

    @property
    def ms(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def label(self) -> str:
        return self.cand.name


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
        trial.launch(s)
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
        trial.launch(sets[(first + i) % n])
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
    values = [s.A.data.ptr, s.B.data.ptr, s.C.data.ptr, s.lda * itemsize, s.ldb * itemsize,
              s.ldc * itemsize]
    align = cap
    while align > 1 and any(v % align for v in values):
        align //= 2
    return align


def selected_kernel(fastgemm: Any, M: int, N: int, K: int, dtype: str, cc: int, alignment: int
                    ) -> str | None:
    """The rung kernel="auto" runs for these operands (None if select() cannot say)."""
    sel = _try(lambda: fastgemm.select(M, N, K, dtype, cc=cc, alignment=alignment))
    if sel is None:
        sel = _try(lambda: fastgemm.select(M, N, K, dtype, cc=cc))
    return getattr(getattr(sel, "kernel", None), "name", None)


def _check_cublas(ctx: Context, dtype: str, trial: Trial, s: InputSet, ref: Any, ref_norm: float,
                  tol: float) -> float | None:
    errors = []
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


def run_shape(ctx: Context, dtype: str, np_dtype: Any, shape: Shape, candidates: list[Candidate]
              ) -> list[Trial]:
    """Check, then time with interleaved rounds, every candidate on one shape (cuBLAS first)."""
    cp, args = ctx.cp, ctx.args
    M, N, K = shape
    label = shape_label(M, N, K)
    align = ROW_ALIGN_BYTES if args.pad else 1
    per_set = set_bytes(M, N, K, np_dtype.itemsize, align)
    n_sets = count_input_sets(per_set, ctx.device.l2_bytes)
    ctx.progress.note(f"--- {dtype} {label}: {n_sets} input set(s) of {per_set / 2**20:.1f} MiB "
                      f"(L2 {ctx.device.l2_bytes / 2**20:.0f} MiB)")
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
            trial.selected = selected_kernel(ctx.fastgemm, M, N, K, dtype, ctx.device.cc,
                                             operand_alignment(sets[0], np_dtype.itemsize))
        unfit = None
        if cand.kind == "kernel":  # a rung that declares an alignment these operands break
            info = next(k for k in ctx.fastgemm.kernels(dtype) if k.name == cand.name)
            unfit = ctx.fastgemm.dispatch.check_runnable(
                info, ctx.device.cc, operand_alignment(sets[0], np_dtype.itemsize))
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
        trial.rounds, trial.reps = plan_reps(trial.est_ms, args.rounds, args.target_ms,
                                             args.max_seconds_per_kernel)
        extra = f" -> {trial.selected}" if trial.selected else ""
        ctx.progress(idx, f"{trial.label}{extra} {label} check ok (rel err {trial.rel_error:.1e}), "
                          f"~{trial.est_ms:.3g} ms/launch: {trial.rounds} round(s) x {trial.reps}")
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
                trial.samples.append(time_kernel(cp, trial, sets, trial.reps, ctx.prefill))
            except Exception as exc:  # noqa: BLE001
                trial.status, trial.error = "error", f"{type(exc).__name__}: {exc}"
                trial.samples.clear()
                _ensure_context(cp, trial.label, exc)
        if max_rounds > 1:
            ctx.progress.note(f"    {label}: round {r + 1}/{max_rounds} done")

    base = trials[0].ms if trials and trials[0].status == "ok" else None
    base_tflops = tflops_of(M, N, K, base)
    for idx, trial in zip(indices, trials):
        if trial.status != "ok":
            continue
        tf = tflops_of(M, N, K, trial.ms)
        pct = f" ({100 * tf / base_tflops:.0f}% cuBLAS)" if tf and base_tflops else ""
        host = (f" [host-limited in {trial.host_limited_rounds}/{len(trial.samples)} rounds]"
                if trial.host_limited_rounds else "")
        ctx.progress(idx, f"{trial.label} {label} ... {fmt_tflops(tf)} TFLOPS{pct}{host}")

    del sets
    _try(lambda: cp.get_default_memory_pool().free_all_blocks())
    return trials


def result_records(trials: list[Trial], dtype: str, peak: float | None) -> list[dict]:
    """The JSON/CSV records of one shape's trials (cuBLAS first in `trials`)."""
    base = next((t for t in trials if t.cand.kind == "cublas"), None)
    base_tflops = tflops_of(base.M, base.N, base.K, base.ms) if base and base.status == "ok" else None
    records = []
    for t in trials:
        ms = t.ms if t.status == "ok" else None
        tf = tflops_of(t.M, t.N, t.K, ms)
        records.append({
            "kernel": t.cand.name,
            "version": t.cand.version,
            "dtype": dtype,
            "M": t.M,
            "N": t.N,
            "K": t.K,
            "ms": round(ms, 6) if ms is not None else None,
            "tflops": round(tf, 3) if tf is not None else None,
            "pct_cublas": round(100 * tf / base_tflops, 2) if tf and base_tflops else None,
            "pct_peak": round(100 * tf / peak, 2) if tf and peak else None,
            "rel_error": t.rel_error,
            "ok": t.status == "ok",
            "status": t.status,
            "techniques": t.baseline if t.cand.kind == "cublas" else t.cand.techniques,
            "rounds": len(t.samples),
            "reps": t.reps if t.samples else 0,
            "host_limited_rounds": t.host_limited_rounds,
            "selected": t.selected,
            "error": t.error or None,
        })
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

CSV_FIELDS = ("kernel", "version", "dtype", "M", "N", "K", "ms", "tflops", "pct_cublas", "pct_peak",
              "rel_error", "ok", "status", "techniques", "rounds", "reps", "host_limited_rounds",
              "selected", "error")


def output_paths(out_dir: str | os.PathLike, dtype: str, slug: str) -> dict:
    base = Path(out_dir) / f"{dtype}-{slug}"
    return {ext: base.with_suffix(f".{ext}") for ext in ("json", "csv", "png")}


def write_outputs(out_dir: str | os.PathLike, dtype: str, slug: str, meta: dict, results: list[dict]
                  ) -> dict:
    """Write <dtype>-<slug>.json and .csv; returns the paths (png included, not written here)."""
    paths = output_paths(out_dir, dtype, slug)
    paths["json"].parent.mkdir(parents=True, exist_ok=True)
    tmp = paths["json"].with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    tmp.replace(paths["json"])
    with open(paths["csv"], "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for r in results:
            writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in CSV_FIELDS})
    return paths


def _shapes_in(results: list[dict]) -> list[Shape]:
    return list(dict.fromkeys((r["M"], r["N"], r["K"]) for r in results))


def plot(path: str | os.PathLike, dtype: str, meta: dict, results: list[dict]) -> bool:
    """TFLOPS by rung, one line per shape, cuBLAS as a dashed line of the same colour."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warn("matplotlib is not installed: no plot (pip install matplotlib, or pass --no-plot)")
        return False
    rungs = sorted({(r["version"], r["kernel"]) for r in results
                    if r["version"] is not None and r["kernel"] not in (CUBLAS, AUTO)})
    if not rungs:
        return False
    fig, ax = plt.subplots(figsize=(10, 6))
    drew = False
    for i, (M, N, K) in enumerate(_shapes_in(results)):
        color = f"C{i % 10}"
        rows = [r for r in results if (r["M"], r["N"], r["K"]) == (M, N, K)]
        by_rung = {r["version"]: r["tflops"] for r in rows
                   if r["kernel"] not in (CUBLAS, AUTO) and r["version"] is not None and r["tflops"]}
        label = f"{M}³" if M == N == K else shape_label(M, N, K)
        if by_rung:  # WRONG/ERROR rungs are gaps in the line
            ys = [by_rung.get(v, float("nan")) for v, _ in rungs]
            ax.plot([v for v, _ in rungs], ys, marker="o", color=color, label=label)
            drew = True
        cub = next((r["tflops"] for r in rows if r["kernel"] == CUBLAS and r["tflops"]), None)
        if cub:
            ax.axhline(cub, color=color, linestyle="--", linewidth=1, label=f"cuBLAS {label}")
            drew = True
    if not drew:
        plt.close(fig)
        return False
    ax.set_yscale("log")
    ax.set_xticks([v for v, _ in rungs])
    ax.set_xticklabels([re.sub(r"^[a-z]+gemm_", "", n) for _, n in rungs], rotation=30, ha="right",
                       fontsize=8)
    ax.set_xlabel("rung")
    ax.set_ylabel("TFLOPS (log scale)")
    ax.set_title(f"fastgemm {dtype} on {meta.get('gpu', '?')} (dashed: cuBLAS, same run)")
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


def _cell(r: dict | None, with_pct: bool) -> str:
    if r is None:
        return "-"
    if r["status"] in ("wrong", "n/a"):
        return r["status"].upper() if r["status"] == "wrong" else "n/a"
    if r["status"] != "ok":
        return "ERROR"
    text = fmt_tflops(r["tflops"])
    if with_pct and r.get("pct_cublas") is not None:
        text += f" ({r['pct_cublas']:.0f}%)"
    return text


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """A pipe table (valid markdown) padded for the terminal."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).rjust(w) if rt else str(c).ljust(w)
                                 for c, w, rt in zip(cells, widths, right)) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if rt else ("-" * (w + 2))
                         for w, rt in zip(widths, right)) + "|"
    return "\n".join([line(headers), sep] + [line(r) for r in rows])


def wide_table(results: list[dict]) -> str:
    """kernel | one column per shape ('TFLOPS (xx%)') | % of peak at the largest shape."""
    shapes = _shapes_in(results)
    largest = max(shapes, key=lambda s: (s[0] * s[1] * s[2], s))
    index = {(r["kernel"], r["M"], r["N"], r["K"]): r for r in results}
    headers = ["kernel"] + [shape_label(*s) for s in shapes] + [f"% peak @ {shape_label(*largest)}"]
    rows = []
    for name, _version in _row_order(results):
        cells = [name]
        for s in shapes:
            cells.append(_cell(index.get((name, *s)), name != CUBLAS))
        big = index.get((name, *largest))
        cells.append(f"{big['pct_peak']:.1f}%" if big and big.get("pct_peak") is not None else "n/a")
        rows.append(cells)
    return format_table(headers, rows, [False] + [True] * (len(headers) - 1))


def long_table(results: list[dict]) -> str:
    """kernel | shape | TFLOPS | % of cuBLAS | % of peak, one row per (kernel, shape)."""
    order = {kv: i for i, kv in enumerate(_row_order(results))}
    shapes = {s: i for i, s in enumerate(_shapes_in(results))}
    rows = []
    for r in sorted(results, key=lambda r: (shapes[(r["M"], r["N"], r["K"])],
                                            order[(r["kernel"], r["version"])])):
        if r["status"] == "ok":
            tf = fmt_tflops(r["tflops"])
        elif r["status"] == "n/a":
            tf = "n/a (alignment)"
        elif r["status"] == "wrong":
            err = r.get("rel_error")
            tf = "WRONG" + (f" (err {err:.1e})" if isinstance(err, (int, float)) else "")
        else:
            tf = "ERROR"
        name = r["kernel"] + (f" -> {r['selected']}" if r.get("selected") else "")
        rows.append([
            name, shape_label(r["M"], r["N"], r["K"]), tf,
            f"{r['pct_cublas']:.1f}%" if r.get("pct_cublas") is not None else "-",
            f"{r['pct_peak']:.1f}%" if r.get("pct_peak") is not None else "n/a",
        ])
    return format_table(["kernel", "shape", "TFLOPS", "% of cuBLAS", "% of peak"], rows,
                        [False, False, True, True, True])


def print_table(dtype: str, meta: dict, results: list[dict], long: bool, file: Any = None) -> None:
    """Print one dtype's wide (long=False) or long-format (long=True) table to stdout."""
    file = file or sys.stdout
    if not results:
        return
    peak = meta.get("peak_tflops")
    peak_txt = f"{peak:.1f} TFLOPS ({meta.get('peak_source')})" if peak else "n/a"
    kind = "per kernel and shape" if long else "TFLOPS (% of cuBLAS) by shape"
    print(f"\n## {dtype} on {meta.get('gpu')} (cc {meta.get('compute_capability')}), {kind}; "
          f"median of up to {meta.get('rounds')} rounds; peak {peak_txt}", file=file)
    print(long_table(results) if long else wide_table(results), file=file, flush=True)
    errors = [r for r in results if r["status"] != "ok"] if long else []
    for r in errors:
        print(f"  {r['kernel']} {shape_label(r['M'], r['N'], r['K'])}: {r['status'].upper()}: "
              f"{r.get('error')}", file=file)


# ----------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------


def base_meta(device: Device, args: argparse.Namespace, dtype: str, prefill: Prefill) -> dict:
    peak, source = peak_tflops(device.name, dtype, device.cc, device.sm_count, device.clock_khz)
    meta = dict(device.meta)
    meta.update({
        "dtype": dtype,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
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
        "command": " ".join(["python -m fastgemm.bench", *args.argv]),
    })
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
        print(f"fastgemm.bench: cannot import fastgemm ({type(exc).__name__}: {exc}); build and "
              "install the package first (pip install .). Nothing was measured.", file=sys.stderr)
        return 2
    try:
        cp = load_cupy(fastgemm)
        device = describe_device(cp, args.device, fastgemm)
    except NoGPU as exc:
        print(f"fastgemm.bench: {exc}; the benchmark needs an NVIDIA GPU with a working driver, "
              "fastgemm's extension and CuPy. Nothing was measured.", file=sys.stderr)
        return 2

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
        print("fastgemm.bench: no kernel to benchmark (see the warnings above). Nothing was measured.",
              file=sys.stderr)
        return 1

    total = sum(len(args.shape_list) * (len(c) + 1) for _, c in plan)
    print(f"fastgemm.bench: {device.name} (cc {device.cc / 10:.1f}, {device.sm_count} SMs, "
          f"L2 {device.l2_bytes / 2**20:.0f} MiB), CUDA {device.meta['cuda_runtime']}, cuBLAS "
          f"{device.meta['cublas_version']}, fastgemm {device.meta['fastgemm_version']}; "
          f"{total} (kernel, shape) pairs", file=sys.stderr, flush=True)
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
        print(f"fastgemm.bench: stopping: {exc}. Finished shapes are in the output files.",
              file=sys.stderr)
        status = 1

    for dtype, meta, results in done:
        print_table(dtype, meta, results, long=False)
    for dtype, meta, results in done:  # the long-format table is the main one: it comes last
        print_table(dtype, meta, results, long=True)
    bad = sum(1 for _, _, results in done for r in results if r["status"] not in ("ok", "n/a"))
    if bad and status == 0:
        print(f"fastgemm.bench: {bad} (kernel, shape) pair(s) were WRONG or failed; see above.",
              file=sys.stderr)
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
