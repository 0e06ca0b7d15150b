"""The libraries fastgemm is measured against: cuBLAS through CuPy (``cublasGemmEx`` on the very
buffers the kernels get, ``cupy.matmul`` as the fallback), the shape benchmark's baseline;
``torch.matmul`` on torch views of those buffers with cuBLASLt preferred, the suite's second peer;
and torch and CuPy as the array libraries of ``--overhead``, each with its ``matmul(A, B, out=C)``
as the peer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .device import NoGPU
from .shapes import InputSet, Launch

_CUDA_DATA_TYPE = {"float32": 0, "float16": 2, "bfloat16": 14}  # cudaDataType_t (CUDA_R_*)
# dtype -> (integer type of the same width that CuPy exports through DLPack, torch's dtype name)
_TORCH_VIEW = {
    "float32": ("int32", "float32"),
    "float16": ("int16", "float16"),
    "bfloat16": ("int16", "bfloat16"),
}
TORCH_MATMUL = "torch.matmul"


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


def torch_matmul_launcher(torch: Any, dtype: str, sets: Sequence[InputSet]) -> Launch:
    """``torch.matmul(A, B, out=C)`` on torch views of each input set's CuPy buffers (no copies),
    made once per set, so a call costs what a torch user's call costs. The views go through an
    integer type of the same width because CuPy's DLPack export does not cover every dtype the
    benchmark holds (bfloat16 comes from ml_dtypes). The launcher holds the views, and through
    them the buffers, as long as it lives."""
    int_type, torch_type = _TORCH_VIEW[dtype]
    as_torch = getattr(torch, torch_type)

    def view(x: Any) -> Any:
        return torch.from_dlpack(x.view(int_type)).view(as_torch)

    views = {id(s): (view(s.A), view(s.B), view(s.C)) for s in sets}
    matmul = torch.matmul

    def launch(s: InputSet) -> None:
        A, B, C = views[id(s)]
        matmul(A, B, out=C)

    return launch


@contextlib.contextmanager
def preferred_blas(torch: Any, library: str) -> Iterator[tuple[str, str | None]]:
    """Within the block torch prefers `library` ("cublaslt") for its GEMMs, where this torch
    can; yields (the library torch prefers, why it is not `library` or None), and restores
    torch's previous choice after the block."""
    choose = torch.backends.cuda.preferred_blas_library
    previous = choose()
    why = None
    try:
        choose(library)
    except (RuntimeError, ValueError) as exc:  # e.g. a torch built without cuBLASLt
        why = f"{type(exc).__name__}: {exc}"
    now = choose()
    try:
        yield str(getattr(now, "name", now)).lower(), why
    finally:
        choose(previous)


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


def load_torch_peer(cp: Any, index: int) -> Any:
    """torch for the suite's ``torch.matmul`` peer: importable, seeing CUDA device `index`, and
    launching on the stream CuPy records its timing events on (else the events would not bracket
    torch's kernels); NoGPU with the reason otherwise."""
    torch = load_torch(index)
    torch.cuda.set_device(index)
    ours, theirs = int(cp.cuda.get_current_stream().ptr), int(torch.cuda.current_stream(index).cuda_stream)
    if ours != theirs:
        raise NoGPU(
            f"torch's current stream ({theirs:#x}) is not CuPy's ({ours:#x}), whose events time the rounds"
        )
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
