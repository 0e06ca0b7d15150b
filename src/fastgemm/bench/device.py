"""The GPU and the software around it: CuPy loaded (or the reason there is no usable GPU, NoGPU),
the device's properties and versions for the results' meta, its file-name slug, its peak
throughput (datasheet table, else computed) and its HBM bandwidth (datasheet table).
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The float32 baseline must be true FP32. Both variables are read when CuPy/cuBLAS first need
# them, so they are set when this module is imported: before load_cupy below imports CuPy, and
# before --overhead imports torch (fastgemm.bench.peers imports this module).
os.environ["CUPY_TF32"] = "0"
os.environ["NVIDIA_TF32_OVERRIDE"] = "0"

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


# (regex on the upper-cased GPU name, label, HBM bandwidth in TB/s or None where the name does not
# say which memory the part has). Datasheet numbers; the first match wins, so variants come first.
HBM_TABLE: tuple = (
    (r"GH200", "GH200", None),  # sold with HBM3 (4 TB/s) and with HBM3e (4.9 TB/s)
    (r"H100.*PCIE", "H100 PCIe", 2.0),
    (r"H100.*NVL", "H100 NVL", 3.9),
    (r"H200.*NVL", "H200 NVL", 4.8),
    (r"H100", "H100 SXM", 3.35),
    (r"H200", "H200 SXM", 4.8),
    (r"A100.*80GB.*PCIE", "A100 80GB PCIe", 1.935),
    (r"A100.*80GB", "A100 80GB SXM", 2.039),
    (r"A100", "A100 40GB", 1.555),
)


def hbm_bandwidth(gpu_name: str) -> tuple[float | None, str]:
    """(HBM bandwidth in TB/s, where the number comes from); (None, "unknown") for a GPU the
    table does not know."""
    upper = gpu_name.upper()
    for pattern, label, tb_s in HBM_TABLE:
        if re.search(pattern, upper):
            return (tb_s, f"datasheet, {label}") if tb_s is not None else (None, f"unknown ({label})")
    return None, "unknown"


class NoGPU(Exception):
    """No usable CUDA GPU; the message says why (printed as one paragraph, exit status 3)."""


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
