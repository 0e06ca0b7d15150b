"""Host cost per call (``--overhead``): the cases (hgemm / sgemm with ``kernel="auto"``, beta != 0,
F-ordered operands, the rung ``select()`` names forced; the libraries' ``matmul(out=)`` as peers),
each checked once against a float64 NumPy product, warmed up and timed in interleaved batches in a
seeded random order, and its record (median and min host microseconds, ratio to the peer).
"""

from __future__ import annotations

import functools
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .device import _try
from .peers import ArrayLib
from .shapes import Shape
from .tables import AUTO
from .timing import time_batch

OVERHEAD_SHAPE = "64x64x64"
OVERHEAD_BATCHES = 30
OVERHEAD_CALLS = 200
OVERHEAD_WARMUP_CALLS = 200
OVERHEAD_MAX_CALLS = 1000  # a batch must stay below the CUDA launch-queue depth (~1000 launches)
OVERHEAD_TOLERANCE = {"float16": 5e-2, "float32": 1e-2}  # loose: catches wrong results, not rounding

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
