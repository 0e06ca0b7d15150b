"""Device and host timing: what is timed (Candidate, Trial), the correctness check that doubles as
warm-up, device rounds (CUDA events around back-to-back launches behind a prefill spin), end-to-end
rounds (host clock from synchronize to synchronize), the probe and the plan of rounds x launches,
the GPU warm-up, and one timed batch of host calls for ``--overhead``.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .device import _try
from .report import warn
from .shapes import InputSet, Launch, relative_error

MAX_REPS = 100  # launches in one round at the most
SLOW_CHECK_MS = 1000.0  # a check launch slower than this doubles as the timing probe
PREFILL_MAX_S = 0.25  # longest spin before one round
GPU_WARMUP_S = 1.0  # cuBLAS work before the first shape, so clocks have ramped up


@dataclass(frozen=True)
class Candidate:
    name: str  # kernel name, AUTO or CUBLAS
    version: int | None
    techniques: str
    kind: str  # "kernel" | "auto" | "cublas" | "torch"
    parent: str = ""  # the rung this one changes (kernels only)
    branch: bool = False  # off the main line: shown as a branch in tables and plots


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


def time_batch(call: Callable[[], Any], sync: Callable[[], Any], calls: int) -> float:
    """Host seconds per call over `calls` back-to-back calls made after a device synchronise."""
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - t0) / calls
