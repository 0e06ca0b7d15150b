"""How one GEMM is cut into pieces for several GPUs: the arithmetic of the multi-GPU path.

A problem ``C[M, N] = A[M, K] @ B[K, N]`` whose operands and result live on one GPU (the home
device, index 0 of the device list) is split over ``P`` devices in one of four ways:

- ``rows``: device p computes a band of C's rows; it needs that band of A and all of B.
- ``cols``: device p computes a band of C's columns; it needs all of A and that band of B.
- ``grid``: a ``pr x pc`` grid of C blocks (``pr * pc == P``); each device needs one band of A's
  rows and one band of B's columns.
- ``k``: every device computes all of C over a slice of K (its slices of A's columns and B's
  rows); the fp32 partial products are summed on the home device.

:func:`plan` picks the way that moves the fewest bytes between the home device and the others
(operands to the devices that need them, results or partial sums back, C too when beta != 0),
and :func:`bytes_moved` counts them (with ``relay``, an operand band that several remote pieces
share leaves home once: the remote devices pass it on, device to device). Row, column and K boundaries fall on multiples of 16 bytes,
so a piece of a 16-byte aligned operand, in either layout, is 16-byte aligned too and its rows
end on whole 16-byte units (the fast kernels need both). Pieces are never empty: fewer pieces than devices when the problem is
too small to give every device a boundary-aligned share.

:func:`check_devices` refuses device lists that cannot be meant (duplicates, devices that do not
exist) before anything is allocated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "STRATEGIES",
    "Piece",
    "Plan",
    "bytes_moved",
    "check_devices",
    "plan",
    "split_home",
    "split_range",
]

STRATEGIES = ("rows", "cols", "grid", "k")
ALIGN_BYTES = 16  # column and K boundaries: 16-byte aligned pieces of 16-byte aligned operands
PARTIAL_BYTES = 4  # a K split returns fp32 partial products


@dataclass(frozen=True)
class Piece:
    """Device ``device`` (an index into the device list; 0 is home) computes
    ``C[rows[0]:rows[1], cols[0]:cols[1]]`` over ``K[ks[0]:ks[1]]``."""

    device: int
    rows: tuple[int, int]
    cols: tuple[int, int]
    ks: tuple[int, int]


@dataclass(frozen=True)
class Plan:
    strategy: str  # one of STRATEGIES
    pieces: tuple[Piece, ...]
    bytes_moved: int  # between the home device and the others, in both directions


def split_range(n: int, parts: int, quantum: int = 1) -> list[tuple[int, int]]:
    """``[0, n)`` cut into at most ``parts`` non-empty, contiguous ranges as even as possible,
    every inner boundary a multiple of ``quantum``. Fewer ranges when ``n`` has fewer quanta
    than ``parts``; none when ``n == 0``."""
    if parts < 1 or quantum < 1:
        raise ValueError(f"split_range: parts ({parts}) and quantum ({quantum}) must be positive")
    if n <= 0:
        return []
    units = -(-n // quantum)  # whole quanta, the last one possibly partial
    parts = min(parts, units)
    bounds = [min(n, (units * i // parts) * quantum) for i in range(parts + 1)]
    bounds[-1] = n
    return [(bounds[i], bounds[i + 1]) for i in range(parts)]


def _quantum(itemsize: int) -> int:
    return max(1, ALIGN_BYTES // itemsize)


def _grid_shapes(p: int) -> list[tuple[int, int]]:
    """(pr, pc) with pr * pc == p (p x 1 and 1 x p are the row and column splits)."""
    return [(r, p // r) for r in range(1, p + 1) if p % r == 0]


def split_home(n: int, parts: int, quantum: int, share: float | None) -> list[tuple[int, int]]:
    """:func:`split_range`, or with ``share`` a first range of about ``share * n`` (whole quanta,
    at least one, leaving at least one quantum to each other part that can have one) and the rest
    split evenly."""
    if share is None or parts < 2 or n <= 0:
        return split_range(n, parts, quantum)
    units = -(-n // quantum)
    others = min(parts - 1, units - 1)
    if others < 1:
        return split_range(n, 1, quantum)
    first = min(max(1, round(share * n / quantum)), units - others) * quantum
    return [(0, first)] + [(first + a, first + b) for a, b in split_range(n - first, others, quantum)]


def _pieces(
    strategy: str,
    M: int,
    N: int,
    K: int,
    P: int,
    itemsize: int,
    grid: tuple[int, int],
    home_share: float | None = None,
) -> list[Piece]:
    q = _quantum(itemsize)
    whole_m, whole_n, whole_k = (0, M), (0, N), (0, K)
    if strategy == "rows":
        return [Piece(i, r, whole_n, whole_k) for i, r in enumerate(split_home(M, P, q, home_share))]
    if strategy == "cols":
        return [Piece(i, whole_m, c, whole_k) for i, c in enumerate(split_home(N, P, q, home_share))]
    if strategy == "k":
        return [Piece(i, whole_m, whole_n, k) for i, k in enumerate(split_home(K, P, q, home_share))]
    pr, pc = grid
    blocks = [(r, c) for r in split_range(M, pr, q) for c in split_range(N, pc, q)]
    return [Piece(i, r, c, whole_k) for i, (r, c) in enumerate(blocks)]


def bytes_moved(
    strategy: str, pieces: Sequence[Piece], itemsize: int, beta_nonzero: bool, relay: bool = False
) -> int:
    """Bytes between the home device (index 0) and the others for these pieces: each remote
    device receives its rows of A and columns of B (once each, over its K range) and C's block
    when beta != 0, and sends back its block of C (fp32 partial products for a K split).
    ``relay``: a remote piece whose rows of A (or columns of B) an earlier remote piece already
    receives gets them from that device, not from home (they leave home once)."""
    total = 0
    seen_a: set[tuple[tuple[int, int], tuple[int, int]]] = set()
    seen_b: set[tuple[tuple[int, int], tuple[int, int]]] = set()
    for p in pieces:
        if p.device == 0:
            continue
        m, n, k = p.rows[1] - p.rows[0], p.cols[1] - p.cols[0], p.ks[1] - p.ks[0]
        if not (relay and (p.rows, p.ks) in seen_a):
            total += itemsize * m * k
        if not (relay and (p.ks, p.cols) in seen_b):
            total += itemsize * k * n
        seen_a.add((p.rows, p.ks))
        seen_b.add((p.ks, p.cols))
        if strategy == "k":
            total += PARTIAL_BYTES * m * n  # partial sums back; C is combined at home
        else:
            total += itemsize * m * n * (2 if beta_nonzero else 1)
    return total


def plan(
    M: int,
    N: int,
    K: int,
    devices: int,
    itemsize: int,
    beta_nonzero: bool = False,
    strategies: Sequence[str] = STRATEGIES,
    home_share: float | None = None,
    relay: bool = False,
) -> Plan:
    """The way of cutting ``C[M, N] = A[M, K] @ B[K, N]`` over ``devices`` GPUs that moves the
    fewest bytes (ties: the earlier of ``strategies``), with its pieces. One device, or an empty
    problem: one piece, nothing moved. ``home_share`` (0..1) gives the home device (index 0)
    about that fraction of the split dimension in the ``rows``, ``cols`` and ``k`` ways (the rest
    evenly to the others); by default every device gets an even share. ``relay``: bytes counted
    as :func:`bytes_moved` counts them when remote devices pass shared operands on."""
    if home_share is not None and not 0.0 <= home_share <= 1.0:
        raise ValueError(f"plan: home_share = {home_share} must lie in [0, 1]")
    for name, v in (("M", M), ("N", N), ("K", K)):
        if v < 0:
            raise ValueError(f"plan: {name} = {v} must be >= 0")
    if devices < 1:
        raise ValueError(f"plan: devices = {devices} must be >= 1")
    if itemsize not in (2, 4):
        raise ValueError(f"plan: itemsize {itemsize} is not 2 (fp16/bf16) or 4 (fp32)")
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or not strategies:
        raise ValueError(f"plan: strategies {list(strategies)}; known: {list(STRATEGIES)}")
    if devices == 1 or M == 0 or N == 0:
        return Plan("rows", (Piece(0, (0, M), (0, N), (0, K)),), 0)
    best: Plan | None = None
    for strategy in strategies:
        if strategy == "k" and K == 0:
            continue
        for grid in _grid_shapes(devices) if strategy == "grid" else [(1, devices)]:
            pieces = _pieces(strategy, M, N, K, devices, itemsize, grid, home_share)
            moved = bytes_moved(strategy, pieces, itemsize, beta_nonzero, relay)
            if best is None or moved < best.bytes_moved:
                best = Plan(strategy, tuple(pieces), moved)
    if best is None:  # only "k" asked for, and K == 0: nothing to split
        return Plan("rows", (Piece(0, (0, M), (0, N), (0, K)),), 0)
    return best


def check_devices(devices: Sequence[int], device_count: int) -> list[int]:
    """The device list as ints, or ValueError: empty, duplicates, or devices that do not exist
    (``device_count`` of them, 0 .. device_count - 1)."""
    out = [int(d) for d in devices]
    if not out:
        raise ValueError("devices: the list is empty")
    dup = sorted({d for d in out if out.count(d) > 1})
    if dup:
        raise ValueError(f"devices: {dup} appear more than once in {out}")
    absent = [d for d in out if not 0 <= d < device_count]
    if absent:
        raise ValueError(
            f"devices: {absent} do not exist (this machine has {device_count} GPU(s): 0..{device_count - 1})"
        )
    return out
