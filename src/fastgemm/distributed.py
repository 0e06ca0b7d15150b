"""GEMMs over several GPUs.

Two ways to outgrow one GPU:

:func:`gemm` — **one large GEMM, one process, a host's GPUs.** ``A``, ``B`` and ``C`` live on one
GPU (home). C is cut by :mod:`fastgemm.partition` (bands of rows or columns, a 2-D grid, or for
float32 a K split, whichever moves the fewest bytes), home keeps a share sized so that it finishes
with the others, and every other GPU computes its piece with ``auto`` on its own streams while
its operands arrive: the piece's first band of rows is computed in column chunks as B's columns
come in, the rest in bands of rows while the finished bands go back into C; in float32 the piece
is computed by slices of K instead (:data:`SLICES`), each slice's product added into its block as
the slice lands. (:data:`GATED`, off by default: fp16/bf16 pieces on Hopper GPUs as a few GEMMs
over the whole K launched at once, whose producers wait before each k-tile until the flags
written after its operands' copies say it has landed.) An input that
several devices need (all of B in a split by rows) leaves home once, a turn of its chunks to
each of them, which pass them on to the others; the copies are queued in turns over the devices
in the order their GEMMs need them, so that every device starts early, and home's leave one at
a time on a stream of their own, each at the links' full rate. The moves are peer
copies on the GPUs' copy engines (``cudaMemcpy2DAsync`` over NVLink or PCIe), strided on both
sides, so they take no SM from the GEMMs beside them; a persistent GEMM kernel holds every SM of
its GPU, and a communication kernel beside it would hold up its blocks. Everything is queued
without a host synchronisation: home's stream (the caller's) waits for the pieces' returns.
Small problems, where the moves would cost more than they save, run on home alone.

:func:`all_gather_gemm` and :func:`gemm_reduce_scatter` — **the tensor-parallel pair, one process
per GPU** (``torchrun``, ``mpirun``), over ``torch.distributed`` with the NCCL backend:
``all_gather(X) @ W`` and ``reduce_scatter(Y @ W)`` over row shards, the communication of one
shard overlapped with the GEMM of another. The shards move between PyTorch's symmetric memory
buffers (``torch.distributed._symmetric_memory``, the peer buffers of PyTorch's asynchronous
tensor parallelism) on the copy engines, which take no SM from the GEMMs (the barriers between
them and the reduce-scatter's final sum are short kernels); their waits trap after
``PEER_WAIT_MS`` (``FASTGEMM_PEER_WAIT_MS``, default 10 minutes) instead of hanging. Where peer
memory is not usable on every rank (one host, peer access between every pair of GPUs, PyTorch's
symmetric memory), over NCCL collectives (broadcasts of the shards; a reduce-scatter per
column chunk of the product), whose kernels do take SMs: while one is in flight the GEMM leaves
``comm_sms`` SMs to it (:func:`fastgemm.reserve_sms`), and NCCL's communicator for these calls
is limited to as many CTAs. ``transport=`` chooses (``"auto"``, ``"symm_mem"``, ``"nccl"``).

NVLink multicast is never used: importing this module sets ``NCCL_NVLS_ENABLE=0``,
``TORCH_SYMM_MEM_DISABLE_MULTICAST=1`` and ``NVSHMEM_DISABLE_NVLS=1`` where they are unset, and
:func:`multicast_off_env` gives the environment for processes you start.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import partition
from ._arrays import Matrix, as_matrix, layout, overlaps

__all__ = [
    "COMM_SMS",
    "TRANSPORTS",
    "all_gather_gemm",
    "gemm",
    "gemm_reduce_scatter",
    "multicast_off_env",
    "plan",
]

MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
for _k, _v in MULTICAST_OFF.items():
    os.environ.setdefault(_k, _v)


def multicast_off_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with NVLink multicast turned off, for a
    process you start: NCCL, PyTorch's symmetric memory and NVSHMEM all told not to use it."""
    env = dict(os.environ if base is None else base)
    env.update(MULTICAST_OFF)
    return env


# --- the cost model that sizes home's share and decides whether to spread at all -------------
# Planning figures, not measurements of this GPU: a sustained GEMM rate per element size
# (tensor-core fp16/bf16; fp32 on the CUDA cores), the peer-copy bandwidth of one direction of a
# GPU's links, and the host's cost of issuing one remote device's work. They only balance the
# shares and pick one device for small problems; results do not depend on them.
RATE = {2: 700e12, 4: 47e12}  # multiply-adds x 2 per second
LINK_BYTES_PER_S = 370e9
ISSUE_S = 250e-6  # the host's issue and a remote pipeline's start (kernel ramps, first events)
SPREAD_GAIN = 0.85  # spread only when the estimate is below this fraction of one device's time
# Chunks of a remote piece, in elements: the first band of rows and the column chunks it is
# computed in (each about one wave of 128 x 256 tiles on a 132-SM GPU, and long enough in K that
# its GEMM outlasts the next chunk's copy).
FIRST_ROWS = 2048
CHUNK_COLS = 2048
# After the first band: one large band (whole tile rows, few partial waves) and a last band of
# about TAIL_ROWS, whose result is the only one that goes back after the GEMMs end.
TAIL_ROWS = 512
TILE_ROWS = 128
# Home's GEMM in waves, per element size: (tile rows, tile columns, tiles per SM at once). fp32's
# large GEMMs (auto's ieee choice, sgemm v17) run 128 x 128 tiles two to an SM: a home share
# whose last wave is partly empty costs that wave whole, so home's rows end on a wave (4 x H100,
# 8192^3 fp32: 2528 rows are five waves, 2688 six, 1.3 ms more). The fp16/bf16 rungs split their
# last round (hgemm v31/v32): their time follows the share.
WAVES = {4: (128, 128, 2)}
SMS = 132  # planning figure where the device's count is not given
# Bands of A rows and chunks of B columns that several remote pieces need (all of B in a split
# by rows) leave home once: each of those devices brings its turn of them from home and the
# others copy them from it as they arrive there (every device has its own links, and home's
# are the bottleneck: 4 x H100, about 390 GB/s out of home to one peer or to three at once).
RELAY = True
# K slices (float32): a remote piece is computed slice by slice of K as its inputs arrive, each
# slice's product added into the piece's block (beta = 1 after the first), so that the work a
# device can do grows with every slice that lands, where a piece over the whole K can start only
# once all of its rows of A are in, and a chunk of B's columns completes only its first band's
# block. The last slice runs in bands of rows whose results go back while the next band
# computes. SLICE_K: elements of K per slice after FIRST_SLICE_K-long ones, one per remote piece
# (4 x H100, 8192^3 fp32: slices of 2048 6.90 ms, of 1024 7.23, of 512 7.78; whole K 7.04).
SLICES = True
SLICE_K = 2048
FIRST_SLICE_K = 512
# A sliced piece's GEMMs against one GEMM over its whole K (beta = 1 after the first slice, the
# short slices): 4 x H100, 8192^3 fp32, home's share 0.25, the remote pieces' slice GEMMs took
# 6.2 ms where home's GEMM of as many rows took 5.7.
SLICED_COST = 1.08
# fp16/bf16 remote pieces as gated GEMMs (beta = 0, ``auto``, Hopper GPUs: hopper/gated.cu): the
# piece's GEMMs over the whole K are queued at once, and each waits inside, before each k-tile,
# for the flags that the copies of its inputs write as they land: a flag per band of A rows and
# per GATE_CHUNK_COLS columns of B counts the slices of GATE_SLICE_K of K that are in. The inputs
# go in the order of the GEMM's tile rounds (the first band's rows of A and the chunks of its first
# round slice by slice, then B's other chunks, then the other bands), so the work that can run
# grows with every slice that lands. The first GEMM covers GATE_FIRST_ROWS rows (a tile round
# of it spans one chunk of B, and B leaves home while it runs), the others about SUM_BAND_ROWS
# each, the last about TAIL_ROWS (its result goes back after the GEMMs end). A flag that never
# comes traps its GEMM after GATE_WAIT_MS. Off: slower than the bands so far (4 x H100, 16384^3
# fp16: 5.6-6.0 ms against 4.5-4.7; benchmarks/NOTES.md, thirty-fourth session): the first GEMM
# waits for B's chunks, which leave home over about 3 ms, and the next bands start after it.
GATED = False
GATE_SLICE_K = 2048
GATE_CHUNK_COLS = 2048
GATE_FIRST_ROWS = 2048
GATE_BAND_ROWS = 1024
GATE_WAIT_MS = int(os.environ.get("FASTGEMM_GATE_WAIT_MS", "20000"))


@dataclass(frozen=True)
class Spread:
    """How :func:`gemm` runs a problem: on which devices (indices into the device list), cut how
    (``partition.Plan``, in the problem as run: ``transposed`` for column pieces, which run as
    row pieces of ``C.T = B.T @ A.T``), and the estimated seconds on one device and spread."""

    plan: partition.Plan
    transposed: bool
    home_share: float
    one_device_s: float
    spread_s: float


def _bands(r0: int, r1: int) -> list[tuple[int, int]]:
    """A remote piece's bands of rows: FIRST_ROWS, then one band of whole tile rows, then the
    last TAIL_ROWS or so (fewer bands when the piece is short)."""
    first = r0 + min(r1 - r0, FIRST_ROWS)
    return [(r0, first)] + ([] if first == r1 else _tail_bands(first, r1))


def _chunks(c0: int, c1: int) -> list[tuple[int, int]]:
    """The column chunks a remote piece's first band is computed in: about CHUNK_COLS wide
    (16-element boundaries), or one chunk for a piece of at most 2 CHUNK_COLS columns."""
    cols = c1 - c0
    parts = max(1, cols // CHUNK_COLS) if cols > 2 * CHUNK_COLS else 1
    return [(c0 + lo, c0 + hi) for lo, hi in partition.split_range(cols, parts, 16)]


def _sliced(itemsize: int) -> bool:
    """Whether remote pieces run by K slices (:data:`SLICES`): the slices' sums are kept in the
    operands' dtype, so float32 only."""
    return SLICES and itemsize == 4


def _gated(itemsize: int, beta_nonzero: bool, gated: bool) -> bool:
    """Whether remote pieces run as gated GEMMs (:data:`GATED`): fp16/bf16 with beta = 0 where
    ``gated`` (the gated kernel on every device, ``auto``)."""
    return GATED and gated and itemsize == 2 and not beta_nonzero


def _gate_bands(r0: int, r1: int) -> list[tuple[int, int]]:
    """A gated piece's GEMMs' rows: GATE_FIRST_ROWS, then bands of about GATE_BAND_ROWS (whole
    tile rows), the last about TAIL_ROWS."""
    first = r0 + min(r1 - r0, GATE_FIRST_ROWS)
    rest = r1 - first
    if rest <= GATE_BAND_ROWS + TAIL_ROWS:
        return [(r0, first)] + ([(first, r1)] if rest else [])
    head = (rest - TAIL_ROWS) // TILE_ROWS * TILE_ROWS
    parts = max(1, round(head / GATE_BAND_ROWS))
    cuts = [first + head * i // parts // TILE_ROWS * TILE_ROWS for i in range(parts)] + [first + head]
    return [(r0, first)] + [(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if hi > lo] + [(first + head, r1)]


def _k_slices(k0: int, k1: int, itemsize: int, lead: int = 1) -> list[tuple[int, int]]:
    """A remote piece's K slices, on 16-byte boundaries: ``lead`` slices of about FIRST_SLICE_K
    (each device sharing the slices starts with its own: its first GEMM waits only for a short
    slice from home), then the rest in slices of about SLICE_K. Where that leaves less than one
    SLICE_K after the short ones, K in at most ``lead`` even slices instead (one for a short K)."""
    q = partition._quantum(itemsize)
    n = k1 - k0
    first = min(n, max(q, FIRST_SLICE_K // q * q) * max(lead, 0))
    if n - first < max(SLICE_K, 1):  # too little left for a full slice: even slices
        parts = max(1, min(n // max(1, min(SLICE_K, FIRST_SLICE_K)), max(lead, 1), 64))
        return [(k0 + lo, k0 + hi) for lo, hi in partition.split_range(n, parts, q)]
    head = partition.split_range(first, max(lead, 1), q) if first else []
    rest = partition.split_range(n - first, max(1, min((n - first) // max(1, SLICE_K), 64)), q)
    return [(k0 + lo, k0 + hi) for lo, hi in head] + [(k0 + first + lo, k0 + first + hi) for lo, hi in rest]


def _tail_bands(r0: int, r1: int) -> list[tuple[int, int]]:
    """Rows r0..r1 as one band of whole tile rows and a last band of about TAIL_ROWS, whose
    result is the only one that goes back after the GEMMs end (one band for a short range): a
    piece's bands after its first, and the bands of a sliced piece's last slice."""
    rest = r1 - r0
    big = (rest - TAIL_ROWS) // TILE_ROWS * TILE_ROWS if rest > 2 * TAIL_ROWS else 0
    return [(r0, r0 + big), (r0 + big, r1)] if big > 0 else [(r0, r1)]


def _first_chunk_bytes(rows: int, cols: int, K: int, itemsize: int, sliced: bool) -> tuple[int, int, int]:
    """Bytes of A and of B that a remote device needs before its first GEMM, and its last
    result's bytes (``sliced``: a piece by K slices, :class:`_SlicedRemote`)."""
    if sliced:
        k0, k1 = _k_slices(0, K, itemsize)[0]
        bands = _tail_bands(0, rows)
        return (
            itemsize * rows * (k1 - k0),
            itemsize * (k1 - k0) * cols,
            itemsize * (rows - bands[-1][0]) * cols,
        )
    bands, chunks = _bands(0, rows), _chunks(0, cols)
    # a piece of one band returns it chunk by chunk: its last result is one chunk
    last_cols = cols if len(bands) > 1 else chunks[-1][1] - chunks[-1][0]
    last = (rows - bands[-1][0]) * last_cols
    return itemsize * bands[0][1] * K, itemsize * K * chunks[0][1], itemsize * last


def _flipped(pl: partition.Plan) -> partition.Plan:
    """A plan's pieces as pieces of the transposed problem (rows and columns swapped)."""
    pieces = tuple(partition.Piece(p.device, p.cols, p.rows, p.ks) for p in pl.pieces)
    return partition.Plan(pl.strategy, pieces, pl.bytes_moved)


def _start_bytes(pl: partition.Plan, a_first: int, b_first: int) -> int:
    """The bytes on home's links before the last remote device can start, for the pieces as they
    run: every remote device's first band of A and first chunk of B that come from home, all at
    once (each device's own first chunk comes from home, :func:`_share_out`, where its group has
    a chunk for each device), then one more first band where a device has it from another (a
    band that several remote pieces share)."""
    if pl.strategy == "k":  # K slices, each device's copied whole in turn (the first one counted)
        return a_first + b_first
    bands = {(p.rows, p.ks) for p in pl.pieces[1:]} if RELAY else range(len(pl.pieces) - 1)
    relayed = len(bands) < len(pl.pieces) - 1
    return len(bands) * a_first + (len(pl.pieces) - 1) * b_first + (a_first if relayed else 0)


def _wave_share(
    share: float,
    rows: int,
    cols: int,
    P: int,
    itemsize: int,
    sms: int,
    one: float,
    latency: float,
    cost: float = 1.0,
) -> tuple[float, float]:
    """Home's share of ``rows`` (the pieces as they run) and its estimated seconds, where its GEMM
    runs in waves (:data:`WAVES`): of the most rows that fit in the waves the share needs and in
    one wave fewer, whichever the estimate finishes sooner (home's whole waves against the
    others' start and their even shares of the rest). Other element sizes, or ``sms`` 0 (another
    kernel than auto's ieee one at home): the share, unchanged."""
    if itemsize not in WAVES or sms <= 0 or rows <= 0 or cols <= 0:
        return share, share * one
    tm, tn, per_sm = WAVES[itemsize]
    wave = per_sm * sms  # tiles
    per_row = -(-cols // tn)  # tiles in one tile row

    def waves(r: int) -> int:  # of the GEMM over r rows
        return -(-(-(-r // tm) * per_row) // wave)

    wave_s = one / waves(rows)  # one device's time is whole waves too
    needed = waves(round(share * rows))
    best = (float("inf"), share, share * one)
    for w in (needed - 1, needed):
        r = min(rows, w * wave // per_row * tm)
        if r < tm or rows - r < (P - 1) * partition._quantum(itemsize):  # a quantum each
            continue
        home = waves(r) * wave_s
        est = max(home, latency + cost * (rows - r) / rows * one / (P - 1))
        if est < best[0]:
            best = (est, r / rows, home)
    return best[1], best[2]


@functools.cache
def _gate_kernel(devices: tuple[int, ...]) -> bool:
    """Whether the gated kernel (``_C._gemm_gated``, sm_90 only) runs on every device."""
    from . import _C

    return hasattr(_C, "_gemm_gated") and all(_C.device_cc(d) == 90 for d in devices)


@functools.cache
def _sm_count(device: int) -> int:
    return int(_load_cupy().cuda.runtime.getDeviceProperties(device)["multiProcessorCount"])


def _check_strategy(strategy: str | None, itemsize: int) -> None:
    if strategy is not None and strategy not in partition.STRATEGIES:
        raise ValueError(f"strategy {strategy!r}; expected one of {', '.join(partition.STRATEGIES)}")
    if strategy == "k" and itemsize != 4:
        raise ValueError("strategy 'k' sums fp32 partial products: float32 operands only")


def plan(
    M: int,
    N: int,
    K: int,
    devices: int,
    itemsize: int,
    beta_nonzero: bool = False,
    strategy: str | None = None,
    sms: int = SMS,
    gated: bool = False,
) -> Spread:
    """How :func:`gemm` would spread an M x N x K problem over up to ``devices`` GPUs (home
    first): the way that moves the fewest bytes, or ``strategy``, on the first d of the devices
    for the d the estimate finds fastest (every device where ``strategy`` is given: every
    remote device's inputs leave home over home's links, once even where relayed, so past a few
    devices a smaller set can finish sooner); one device where spreading is not estimated to pay
    (unless ``strategy`` is given). ``sms``: home's SM count (its GEMM's waves, :data:`WAVES`;
    0: no waves, for another kernel than auto's ieee one at home). ``gated``: fp16/bf16 pieces may
    run as gated GEMMs (:func:`_gated`).
    Decided once per problem class (cached: a repeated call costs a dictionary lookup)."""
    _check_strategy(strategy, itemsize)
    key = (
        M,
        N,
        K,
        devices,
        itemsize,
        bool(beta_nonzero),
        strategy,
        sms,
        gated,
        FIRST_ROWS,
        CHUNK_COLS,
        TAIL_ROWS,
        TILE_ROWS,
        RELAY,
        SLICES,
        SLICE_K,
        FIRST_SLICE_K,
        SLICED_COST,
        GATED,
        GATE_SLICE_K,
    )
    return _plan(*key)


@functools.lru_cache(maxsize=256)
def _plan(
    M: int,
    N: int,
    K: int,
    devices: int,
    itemsize: int,
    beta_nonzero: bool,
    strategy: str | None,
    sms: int,
    gated: bool,
    *_chunking: int,  # the chunk sizes the estimate used (part of the cache key)
) -> Spread:
    if strategy is not None:
        return _plan_on(M, N, K, devices, itemsize, beta_nonzero, strategy, sms, gated)
    options = [
        _plan_on(M, N, K, d, itemsize, beta_nonzero, None, sms, gated)
        for d in range(min(devices, 2), devices + 1)
    ]
    return min(options, key=lambda s: (s.spread_s, -len(s.plan.pieces)))


def _plan_on(
    M: int,
    N: int,
    K: int,
    devices: int,
    itemsize: int,
    beta_nonzero: bool,
    strategy: str | None,
    sms: int = SMS,
    gated: bool = False,
) -> Spread:
    """The plan on exactly ``devices`` devices (one where spreading is not estimated to pay)."""
    one = 2.0 * M * N * K / RATE[itemsize]
    strategies: Sequence[str] = partition.STRATEGIES if itemsize == 4 else ("rows", "cols", "grid")
    if strategy is not None:
        strategies = (strategy,)
    whole = partition.plan(M, N, K, 1, itemsize)
    if devices < 2 or min(M, N, K) == 0:
        return Spread(whole, False, 1.0, one, one)
    even = partition.plan(M, N, K, devices, itemsize, beta_nonzero, strategies, relay=RELAY)
    P = len(even.pieces)
    if P < 2:
        return Spread(whole, False, 1.0, one, one)
    p1 = even.pieces[1]
    rows, cols = p1.rows[1] - p1.rows[0], p1.cols[1] - p1.cols[0]
    transposed = even.strategy == "cols"
    if transposed:
        rows, cols = cols, rows
    sliced = _sliced(itemsize) and even.strategy != "k"  # a K split runs _remote_k
    # gated pieces start, like sliced ones, on their first slices, at one GEMM's cost
    gate = _gated(itemsize, beta_nonzero, gated) and even.strategy == "rows"
    a_first, b_first, last = _first_chunk_bytes(rows, cols, p1.ks[1] - p1.ks[0], itemsize, sliced or gate)
    run = _flipped(even) if transposed else even  # the pieces as they run (rows of C.T for cols)
    latency = (_start_bytes(run, a_first, b_first) + last) / LINK_BYTES_PER_S + ISSUE_S
    # Home finishes with the others: s0 T = L + (1 - s0) T / (P - 1). Where that leaves home
    # nearly all of it, spreading does not pay: a forced way then gets even shares.
    # ... where a remote piece's GEMMs take `cost` times its share of one device's time (K slices)
    cost = SLICED_COST if sliced else 1.0
    share = min(1.0, ((P - 1) * latency / one + cost) / (P - 1 + cost)) if one > 0 else 1.0
    if share > 0.9:
        if strategy is None:
            return Spread(whole, False, 1.0, one, one + latency)
        share = 1.0 / P
    home_s = share * one
    if even.strategy in ("rows", "cols"):
        R, Cc = (N, M) if transposed else (M, N)
        share, home_s = _wave_share(share, R, Cc, P, itemsize, sms, one, latency, cost)
    if even.strategy in ("rows", "cols", "k"):
        cut = partition.plan(
            M, N, K, devices, itemsize, beta_nonzero, [even.strategy], home_share=share, relay=RELAY
        )
    else:
        cut, share = even, 1.0 / P
        home_s = share * one
    if transposed:
        cut = _flipped(cut)
    remote = cost * (1.0 - share) / (P - 1) * one
    back = sum((p.rows[1] - p.rows[0]) * (p.cols[1] - p.cols[0]) for p in cut.pieces[1:])
    back *= partition.PARTIAL_BYTES if cut.strategy == "k" else itemsize
    moved = max(cut.bytes_moved - back, back) / LINK_BYTES_PER_S  # the links are full duplex
    # back-to-back calls: the host queues a call while the GPUs run the one before
    spread = max(home_s, latency + remote, moved, ISSUE_S * (P - 1))
    if strategy is None and spread > SPREAD_GAIN * one:
        return Spread(whole, False, 1.0, one, spread)
    return Spread(cut, transposed, share, one, spread)


# --- strided blocks of a matrix, as the GEMM entry and the copy engines see them --------------

_TYPESTR = {"float32": "<f4", "float16": "<f2", "bfloat16": "<V2"}


class _Block:
    """A strided 2-D block in device memory, exported through ``__cuda_array_interface__`` (no
    stream: the caller orders the work) so that the GEMM entry reads it like any array."""

    __slots__ = ("col_major", "dtype", "itemsize", "owner", "ptr", "shape", "strides")

    def __init__(self, ptr, shape, strides, dtype, itemsize, col_major, owner=None):
        self.ptr, self.shape, self.strides = int(ptr), tuple(shape), tuple(strides)
        self.dtype, self.itemsize, self.col_major, self.owner = dtype, itemsize, col_major, owner

    @classmethod
    def of(cls, m: Matrix) -> _Block:
        lay = layout(m)
        return cls(m.ptr, m.shape, m.strides, m.dtype, m.itemsize, bool(lay and lay[0]), m.obj)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        cai: dict[str, Any] = {
            "shape": self.shape,
            "strides": tuple(s * self.itemsize for s in self.strides),
            "typestr": _TYPESTR[self.dtype],
            "data": (self.ptr, False),
            "version": 3,
            "stream": None,
        }
        if self.dtype == "bfloat16":
            cai["descr"] = [("bfloat16", "<V2")]
        return cai

    @property
    def T(self) -> _Block:
        return _Block(
            self.ptr,
            self.shape[::-1],
            self.strides[::-1],
            self.dtype,
            self.itemsize,
            not self.col_major,
            self.owner,
        )

    def sub(self, rows: tuple[int, int], cols: tuple[int, int]) -> _Block:
        ptr = self.ptr + (rows[0] * self.strides[0] + cols[0] * self.strides[1]) * self.itemsize
        shape = (rows[1] - rows[0], cols[1] - cols[0])
        return _Block(ptr, shape, self.strides, self.dtype, self.itemsize, self.col_major, self.owner)

    @property
    def ld(self) -> int:
        """Elements between the starts of two contiguous lines (rows, or columns if col_major)."""
        return self.strides[1] if self.col_major else self.strides[0]

    def lines(self) -> tuple[int, int, int]:
        """(bytes per contiguous line, number of lines, pitch in bytes) for a 2-D copy."""
        if self.col_major:
            return self.shape[0] * self.itemsize, self.shape[1], self.ld * self.itemsize
        return self.shape[1] * self.itemsize, self.shape[0], self.ld * self.itemsize


def _copy(cp: Any, dst: _Block, src: _Block, stream: int) -> None:
    """A 2-D copy between blocks of one shape and orientation, on any devices (peer copies go
    over the copy engines)."""
    if dst.shape != src.shape:
        raise AssertionError(f"copy of {src.shape} into {dst.shape}")
    if 0 in src.shape:
        return
    width, height, spitch = src.lines()
    _, _, dpitch = dst.lines()
    if src.col_major != dst.col_major:
        raise AssertionError("copy between blocks of different orientations")
    cp.cuda.runtime.memcpy2DAsync(
        dst.ptr, max(dpitch, width), src.ptr, max(spitch, width), width, height, 4, stream
    )


def _new_block(cp: Any, shape: tuple[int, int], like: _Block, keep: list[Any]) -> _Block:
    """A dense block of ``shape`` in ``like``'s orientation, from CuPy's pool on the current
    device and stream (``keep`` holds the memory)."""
    mem = cp.cuda.alloc(max(1, shape[0] * shape[1] * like.itemsize))
    keep.append(mem)
    strides = (1, shape[0]) if like.col_major else (shape[1], 1)
    return _Block(mem.ptr, shape, strides, like.dtype, like.itemsize, like.col_major, mem)


# --- per-device state: streams, peer access ---------------------------------------------------

_lock = threading.Lock()
_streams: dict[int, tuple[Any, Any, Any, Any, Any]] = {}
_peers: set[tuple[int, int]] = set()


def _device_streams(cp: Any, device: int) -> tuple[Any, Any, Any, Any, Any]:
    """(pool, compute, returns, arrivals from other remote devices) streams of a remote device,
    and the stream of its copies out as home, made once."""
    with _lock:
        if device not in _streams:
            with cp.cuda.Device(device):
                _streams[device] = tuple(cp.cuda.Stream(non_blocking=True) for _ in range(5))
        return _streams[device]


def _enable_peer(cp: Any, a: int, b: int) -> None:
    with _lock:
        for x, y in ((a, b), (b, a)):
            if (x, y) in _peers:
                continue
            with cp.cuda.Device(x):
                if cp.cuda.runtime.deviceCanAccessPeer(x, y):
                    try:
                        cp.cuda.runtime.deviceEnablePeerAccess(y)
                    except cp.cuda.runtime.CUDARuntimeError as exc:  # already enabled
                        if "PeerAccessAlreadyEnabled" not in str(exc):
                            raise
            _peers.add((x, y))


def _load_cupy() -> Any:
    try:
        import cupy
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("fastgemm.distributed.gemm needs CuPy (streams, events, peer copies)") from exc
    return cupy


def _resolve_stream(stream: Any, library: str, device: int) -> int:
    """The caller's stream on home (``cudaStream_t`` as an int), by the GEMM entry's rule:
    ``stream=``, else torch's current stream for torch tensors, else CuPy's."""
    if stream is None:
        if library == "torch":
            import torch

            return int(torch.cuda.current_stream(device).cuda_stream)
        import cupy

        with cupy.cuda.Device(device):
            return int(cupy.cuda.get_current_stream().ptr)
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)


def _record(cp: Any, stream: int) -> Any:
    """An event recorded on ``stream`` (of the current device)."""
    ev = cp.cuda.Event(block=False, disable_timing=True)
    cp.cuda.runtime.eventRecord(ev.ptr, stream)
    return ev


def _wait(cp: Any, stream: int, ev: Any) -> None:
    cp.cuda.runtime.streamWaitEvent(stream, ev.ptr, 0)


# --- one GEMM over a host's GPUs ---------------------------------------------------------------


def _check_operands(a: Matrix, b: Matrix, c: Matrix) -> int:
    if not (a.dtype == b.dtype == c.dtype) or a.dtype not in _TYPESTR:
        raise TypeError(
            f"distributed.gemm: A, B and C must share one dtype of float32, float16, bfloat16; "
            f"got {a.dtype}, {b.dtype}, {c.dtype}"
        )
    (M, K), (K2, N) = a.shape, b.shape
    if K2 != K or c.shape != (M, N):
        raise ValueError(f"distributed.gemm: shapes do not conform: A {a.shape}, B {b.shape}, C {c.shape}")
    from . import _C

    where = [m.device if m.device is not None else _C.pointer_device(m.ptr) for m in (a, b, c)]
    if len(set(where)) != 1 or where[0] < 0:
        raise ValueError(
            "distributed.gemm: A, B and C must live on one GPU (home); they are on devices "
            + ", ".join(map(str, where))
        )
    if c.readonly:
        raise ValueError("distributed.gemm: C is read-only")
    for name, m in (("A", a), ("B", b), ("C", c)):
        if m.size and layout(m) is None:
            raise ValueError(
                f"distributed.gemm: {name} must have a unit stride in one dimension (strides {m.strides})"
            )
    if c.size and (overlaps(c, a) or overlaps(c, b)):
        raise ValueError("distributed.gemm: C overlaps A or B")
    return where[0]


def _devices(devices: Sequence[int] | None, home: int, count: int) -> list[int]:
    if devices is None:
        return [home] + [d for d in range(count) if d != home]
    out = partition.check_devices(devices, count)
    if home not in out:
        raise ValueError(f"devices {out} must include device {home}, which holds A, B and C")
    return [home] + [d for d in out if d != home]


def gemm(
    A: Any,
    B: Any,
    C: Any,
    alpha: float = 1.0,
    beta: float = 0.0,
    *,
    devices: Sequence[int] | None = None,
    kernel: str = "auto",
    precision: str = "ieee",
    stream: Any = None,
    strategy: str | None = None,
) -> Any:
    """``C = alpha * A @ B + beta * C`` over several GPUs of this host, in place.

    A, B and C (float32, float16 or bfloat16, one dtype) live on one GPU, home; ``devices``
    (default: every GPU, home first) lists the GPUs that may compute and must include home; the
    plan may use only the first few of them, where its estimate finds that faster (every
    remote device's inputs leave home over home's links; an input that several devices need
    leaves once and is passed on between them).
    ``alpha``/``beta`` semantics and ``stream`` (home's) as for :func:`fastgemm.gemm`; A, B and C
    row- or column-major, padded views included (other strided views: copy them first);
    every piece runs ``kernel`` (default ``auto``) with ``precision`` (float32). The call returns
    once the work is queued: home's stream waits for every piece, as after one GPU's GEMM.
    One device, an empty problem, ``alpha == 0`` or ``K == 0``, or a problem too small to gain:
    one GPU's :func:`fastgemm.gemm`. ``strategy`` (``"rows"``, ``"cols"``, ``"grid"``, or
    ``"k"`` for float32) forces a way of cutting, and spreading, where the plan (:func:`plan`)
    would choose otherwise.
    """
    import fastgemm

    _check_strategy(strategy, 4)  # the name first, before anything is read
    a, b, c = as_matrix(A, "A"), as_matrix(B, "B"), as_matrix(C, "C")
    home = _check_operands(a, b, c)
    _check_strategy(strategy, a.itemsize)
    devs = _devices(devices, home, fastgemm.device_count())
    M, K = a.shape
    N = b.shape[1]

    def one_gpu() -> Any:
        return fastgemm.gemm(A, B, C, alpha, beta, kernel=kernel, stream=stream, precision=precision)

    if len(devs) == 1 or M == 0 or N == 0 or K == 0 or alpha == 0:
        return one_gpu()
    blocks = [_Block.of(m) for m in (a, b, c)]
    # fp16/bf16 pieces as gated GEMMs (GATED): auto's, on Hopper GPUs, a row-major C, dimensions
    # whole 16-byte units (the pieces' blocks are then aligned as the kernel's TMA needs)
    gated = (
        GATED
        and beta == 0
        and kernel == "auto"
        and a.itemsize == 2
        and M % 8 == N % 8 == K % 8 == 0
        and not blocks[2].col_major
        and _gate_kernel(tuple(devs))
    )
    spread = plan(M, N, K, len(devs), a.itemsize, beta != 0, strategy, gated=gated)
    if len(spread.plan.pieces) < 2:
        return one_gpu()
    cp = _load_cupy()  # spreading needs CuPy (one GPU does not): then home's own SM count
    sms = _sm_count(home) if kernel == "auto" and precision == "ieee" else 0
    if sms != SMS:
        spread = plan(M, N, K, len(devs), a.itemsize, beta != 0, strategy, sms, gated)
        if len(spread.plan.pieces) < 2:
            return one_gpu()
    home_stream = _resolve_stream(stream, c.library, home)
    if spread.transposed:  # column pieces run as row pieces of C.T = B.T @ A.T
        blocks = [blocks[1].T, blocks[0].T, blocks[2].T]
    run = _Run(cp, fastgemm, devs, home_stream, kernel, precision, float(alpha), float(beta), gated)
    run.start(blocks[0], blocks[1], blocks[2], spread.plan)
    return C


def _share_out(cp: Any, remotes: list[_Remote]) -> None:
    """Which device brings each band of A rows and each chunk of B columns from home: among the
    remote devices that need the same band (chunk), in turn by its index, so that each leaves
    home once, spread over home's links to all of them (RELAY); the others copy it from that
    device as it arrives there. Without RELAY every device brings all of its own."""
    for operand in ("a", "b"):
        groups: dict[Any, list[_Remote]] = {}
        for r in remotes:
            shared = (r.piece.rows, r.piece.ks) if operand == "a" else (r.piece.ks, r.piece.cols)
            groups.setdefault(shared if RELAY else id(r), []).append(r)
        for group in groups.values():
            for pos, r in enumerate(group):
                items = len(getattr(r, operand + "_items"))
                src = [group[i % len(group)] for i in range(items)]
                setattr(r, operand + "_src", [None if x is r else x for x in src])
                if operand == "b":  # its own chunks first: its first GEMM waits for no other device
                    r.b_order = [(pos + i) % items for i in range(items)] if items else []
                for x in {id(x): x for x in src if x is not r}.values():
                    _enable_peer(cp, x.dev, r.dev)


class _Remote:
    """A block of C over all of K on a remote device: its first band of rows in column chunks
    (each chunk copied into its columns of the piece's B), the other bands over the whole
    piece's B; each result goes back into C as soon as it is done. Inputs come from home on
    home's ``out`` stream and from other remote devices on ``relay``; the piece's memory comes
    from the pool on ``arrive``. ``a``/``b`` hold each band's
    (chunk's) block and the event after its copy, for the GEMMs here and for the devices that
    copy it from here (``readers``: events after their last copy); ``c`` each GEMM's result
    block and, where beta != 0, the event after C's old values were copied into it."""

    def __init__(self, run: _Run, piece: partition.Piece, dev: int) -> None:
        cp = run.cp
        self.run, self.cp, self.piece, self.dev = run, cp, piece, dev
        self.arrive, self.compute, self.back, self.relay, _ = (s.ptr for s in _device_streams(cp, dev))
        self.a_items: list[Any] = _bands(*piece.rows)  # what each input is (subclasses: theirs)
        self.b_items: list[Any] = _chunks(*piece.cols)
        self.a_src: list[_Remote | None] = []
        self.b_src: list[_Remote | None] = []
        self.b_order: list[int] = []
        self.b_local: _Block | None = None
        self.a_blocks: list[_Block] = []
        self.b_blocks: list[_Block] = []
        self.a: list[Any] = [None] * len(self.a_items)
        self.b: list[Any] = [None] * len(self.b_items)
        self.c: list[Any] = []
        self.keep: list[Any] = []
        self.readers: list[Any] = []
        self.finished: Any = None

    def source(self, operand: str, i: int) -> _Remote | None:
        """The remote device this input comes from (None: home)."""
        return None if operand == "c" else getattr(self, operand + "_src")[i]

    def prepare(self, A: _Block, B: _Block, C: _Block, ready: Any) -> list[tuple[str, int]]:
        """Allocates the piece's blocks (from the pool on ``arrive``, also ours on ``relay``
        from here on) and returns its inputs in the order its GEMMs need them."""
        cp, K = self.cp, A.shape[1]
        (c0, c1) = self.piece.cols
        with cp.cuda.Device(self.dev), _on(cp, self.dev):
            _wait(cp, self.arrive, ready)
            b_local = self.b_local = _new_block(cp, (K, c1 - c0), B.sub((0, K), (c0, c1)), self.keep)
            self.a_blocks = [_new_block(cp, (hi - lo, K), A, self.keep) for lo, hi in self.a_items]
            self.b_blocks = [b_local.sub((0, K), (lo - c0, hi - c0)) for lo, hi in self.b_items]
            self.c = [(_new_block(cp, C.sub(*self._out(t)).shape, C, self.keep), None) for t in self._tasks()]
            allocated = _record(cp, self.arrive)
            _wait(cp, self.relay, allocated)
        with cp.cuda.Device(self.run.devs[0]):
            _wait(cp, self.run.out, allocated)
        return self._order()

    def _tasks(self) -> list[tuple[int, int | None]]:
        """The GEMMs in order, as (band of A, chunk of B or None for the piece's whole B): the
        first band by chunks in ``b_order``, then the other bands."""
        first: list[tuple[int, int | None]] = [(0, j) for j in self.b_order]
        return first + [(i, None) for i in range(1, len(self.a_items))]

    def _out(self, task: tuple[int, int | None]) -> tuple[tuple[int, int], tuple[int, int]]:
        """The rows and columns of C that a GEMM computes."""
        i, j = task
        return self.a_items[i], self.piece.cols if j is None else self.b_items[j]

    def _order(self) -> list[tuple[str, int]]:
        """The order the inputs are copied in, on each stream: A's first band, then for each GEMM
        the input that completes its inputs (B's chunks in ``b_order``, then A's other bands)
        and, where beta != 0, its block of C's old values."""
        order: list[tuple[str, int]] = [("a", 0)]
        for t, (i, j) in enumerate(self._tasks()):
            order.append(("a", i) if j is None else ("b", j))
            if self.run.beta != 0:
                order.append(("c", t))
        return order

    def copy_in(self, operand: str, i: int, A: _Block, B: _Block, C: _Block) -> None:
        """Queues the copy of one input: on home's ``out`` stream from home, or on ``relay``
        from the device that brings it (after its copy, whose event it waits for)."""
        cp = self.cp
        dst, at_home = self._endpoints(operand, i, A, B, C)
        src = self.source(operand, i)
        if src is None:
            with cp.cuda.Device(self.run.devs[0]):
                _copy(cp, dst, at_home, self.run.out)
                self._landed(operand, i, dst, _record(cp, self.run.out))
            return
        blk, ev = getattr(src, operand)[i]
        with cp.cuda.Device(self.dev):
            _wait(cp, self.relay, ev)
            _copy(cp, dst, blk, self.relay)
            self._landed(operand, i, dst, _record(cp, self.relay))

    def _endpoints(self, operand: str, i: int, A: _Block, B: _Block, C: _Block) -> tuple[_Block, _Block]:
        """Where input ``i`` of ``operand`` lands here, and where it is at home."""
        K = A.shape[1]
        if operand == "a":
            return self.a_blocks[i], A.sub(self.a_items[i], (0, K))
        if operand == "b":
            return self.b_blocks[i], B.sub((0, K), self.b_items[i])
        return self.c[i][0], C.sub(*self._out(self._tasks()[i]))  # C's old values (beta != 0)

    def _landed(self, operand: str, i: int, dst: _Block, ev: Any) -> None:
        """Input ``i`` of ``operand`` is in ``dst`` once ``ev`` has happened."""
        getattr(self, operand)[i] = (dst, ev)

    def relayed(self) -> None:
        """After its last copy from other devices: they may reuse the memory it copied from."""
        sources = {id(x): x for x in self.a_src + self.b_src if x is not None}
        if sources:
            with self.cp.cuda.Device(self.dev):
                done = _record(self.cp, self.relay)
            for src in sources.values():
                src.readers.append(done)

    def compute_and_return(self, C: _Block) -> None:
        cp, run = self.cp, self.run
        with cp.cuda.Device(self.dev):
            for (i, j), (out, c_ev) in zip(self._tasks(), self.c):
                a_blk, a_ev = self.a[i]
                b_blk: Any
                if j is None:  # the band against the piece's whole B
                    b_blk, events = self.b_local, [a_ev] + [ev for _, ev in self.b]
                else:
                    b_blk, b_ev = self.b[j]
                    events = [a_ev, b_ev]
                for ev in events + ([c_ev] if c_ev is not None else []):
                    _wait(cp, self.compute, ev)
                run.gemm(a_blk, b_blk, out, run.beta, self.compute)
                _wait(cp, self.back, _record(cp, self.compute))
                _copy(cp, C.sub(*self._out((i, j))), out, self.back)
            self.finished = _record(cp, self.back)

    def release(self) -> None:
        cp = self.cp
        with cp.cuda.Device(self.dev):
            _wait(cp, self.arrive, self.finished)  # the pool hands `keep` out again on `arrive` only
            for ev in self.readers:
                _wait(cp, self.arrive, ev)
        # Drop every reference to the memory now (the devices refer to each other: left to the
        # cycle collector, the memory would return to the pool late, and the next call would
        # allocate afresh).
        self.keep, self.a, self.b, self.c, self.readers = [], [], [], [], []
        self.a_src, self.b_src, self.a_blocks, self.b_blocks = [], [], [], []
        self.b_local = None


class _SlicedRemote(_Remote):
    """A block of C over all of K, computed K slice by K slice (:data:`SLICES`): slice j's rows
    of A (``a``) and rows of B (``b``), each from home or, where other pieces share them (B's
    rows with every piece of these columns, A's with every piece of these rows), a turn of them
    from home and the others from the devices that bring them (:func:`_share_out`),
    multiplied into the piece's block ``part`` (beta = 1 after the first slice; C's old values
    copied into it first where beta != 0), in ``b_order`` (from its own first B slice on). The last
    slice runs in bands of rows (:func:`_tail_bands`), each band's result going back into C as
    soon as it is done."""

    def __init__(self, run: _Run, piece: partition.Piece, dev: int) -> None:
        super().__init__(run, piece, dev)
        slices = _k_slices(*piece.ks, run.itemsize, run.lead)
        self.a_items, self.b_items = slices, slices
        self.a, self.b = [None] * len(slices), [None] * len(slices)
        self.part: _Block | None = None
        self.c_old: Any = None  # the event after C's old values were copied into part

    def prepare(self, A: _Block, B: _Block, C: _Block, ready: Any) -> list[tuple[str, int]]:
        cp = self.cp
        rows, cols = self.piece.rows, self.piece.cols
        with cp.cuda.Device(self.dev), _on(cp, self.dev):
            _wait(cp, self.arrive, ready)
            self.a_blocks = [_new_block(cp, A.sub(rows, ks).shape, A, self.keep) for ks in self.a_items]
            self.b_blocks = [_new_block(cp, B.sub(ks, cols).shape, B, self.keep) for ks in self.b_items]
            self.part = _new_block(cp, C.sub(rows, cols).shape, C, self.keep)
            allocated = _record(cp, self.arrive)
            _wait(cp, self.relay, allocated)
        with cp.cuda.Device(self.run.devs[0]):
            _wait(cp, self.run.out, allocated)
        order: list[tuple[str, int]] = []
        for t, j in enumerate(self.b_order):
            order += [("a", j), ("b", j)]
            if t == 0 and self.run.beta != 0:  # needed by the first GEMM, after its inputs
                order.append(("c", 0))
        return order

    def _endpoints(self, operand: str, i: int, A: _Block, B: _Block, C: _Block) -> tuple[_Block, _Block]:
        rows, cols = self.piece.rows, self.piece.cols
        if operand == "c":  # C's old values into part (beta != 0)
            assert self.part is not None
            return self.part, C.sub(rows, cols)
        ks = self.a_items[i]
        if operand == "a":
            return self.a_blocks[i], A.sub(rows, ks)
        return self.b_blocks[i], B.sub(ks, cols)

    def _landed(self, operand: str, i: int, dst: _Block, ev: Any) -> None:
        if operand == "c":
            self.c_old = ev
        else:
            super()._landed(operand, i, dst, ev)

    def compute_and_return(self, C: _Block) -> None:
        cp, run, part = self.cp, self.run, self.part
        assert part is not None
        r0, cols = self.piece.rows[0], self.piece.cols
        with cp.cuda.Device(self.dev):
            if self.c_old is not None:
                _wait(cp, self.compute, self.c_old)
            for t, j in enumerate(self.b_order):
                (a_blk, a_ev), (b_blk, b_ev) = self.a[j], self.b[j]
                _wait(cp, self.compute, a_ev)
                _wait(cp, self.compute, b_ev)
                beta = run.beta if t == 0 else 1.0
                if t + 1 < len(self.b_order):
                    run.gemm(a_blk, b_blk, part, beta, self.compute)
                    continue
                for lo, hi in _tail_bands(*self.piece.rows):
                    band = (lo - r0, hi - r0)
                    out = part.sub(band, (0, part.shape[1]))
                    run.gemm(a_blk.sub(band, (0, a_blk.shape[1])), b_blk, out, beta, self.compute)
                    _wait(cp, self.back, _record(cp, self.compute))
                    _copy(cp, C.sub((lo, hi), cols), out, self.back)
            self.finished = _record(cp, self.back)

    def release(self) -> None:
        super().release()
        self.part, self.c_old = None, None


def _share_chunks(remotes: list[_Remote]) -> None:
    """Gated pieces (rows, all of B): B's chunk c comes from home to the c-th of the devices in
    turn, every slice of it, and the others copy it from there slice by slice, so that a chunk's
    slices land in order on one stream and its flag only grows (:func:`_share_out` enabled peer
    access between every pair of them). Without RELAY every device brings all of B from home."""
    for r in remotes:
        assert isinstance(r, _GatedRemote)
        src = [remotes[c % len(remotes)] if RELAY else r for c, _, _ in r.b_items]
        r.b_src = [None if x is r else x for x in src]


class _GatedRemote(_Remote):
    """A block of C over all of K as gated GEMMs (:data:`GATED`): the piece's rows of A land in
    ``a_all`` band by band (:func:`_gate_bands`) and slice by slice of K, its B in ``b_all``
    chunk by chunk (GATE_CHUNK_COLS) and slice by slice (GATE_SLICE_K), in the order the GEMMs'
    tile rounds read them (:meth:`prepare`); after each copy this device's ``flag`` stream waits for
    it and writes the count of the item's slices landed into ``flags`` (one int32 per band, then
    one per chunk). The GEMMs, one per band, are queued at once on ``compute``: each waits inside
    for its flags; each band's result goes back into C as soon as its GEMM is done."""

    def __init__(self, run: _Run, piece: partition.Piece, dev: int) -> None:
        super().__init__(run, piece, dev)
        (k0, k1), (c0, c1) = piece.ks, piece.cols
        self.bands = _gate_bands(*piece.rows)
        self.slices = [(k, min(k + GATE_SLICE_K, k1)) for k in range(k0, k1, GATE_SLICE_K)]
        self.chunks = [(c, min(c + GATE_CHUNK_COLS, c1)) for c in range(c0, c1, GATE_CHUNK_COLS)]
        # The first GEMM's first tile round (a tile per SM) spans this many chunks of B: its inputs
        # go slice by slice, every other input whole (each copy costs the host tens of us).
        tile_rows = -(-GATE_FIRST_ROWS // 128)  # the same on every device: they share B's items
        round_cols = -(-SMS // tile_rows) * 256  # 128 x 256 tiles
        self.round_chunks = min(len(self.chunks), -(-round_cols // GATE_CHUNK_COLS))
        n = len(self.slices)
        # items: (band or chunk, first slice, end slice); its flag holds the end slice once landed
        self.a_items = [(0, j, j + 1) for j in range(n)] + [(b, 0, n) for b in range(1, len(self.bands))]
        self.b_items = [(c, j, j + 1) for c in range(self.round_chunks) for j in range(n)]
        self.b_items += [(c, 0, n) for c in range(self.round_chunks, len(self.chunks))]
        self.a, self.b = [None] * len(self.a_items), [None] * len(self.b_items)
        # home's stream of copies out where this device is home (calls with another home then
        # share it: an ordering between calls, never a wrong result)
        self.flag = _device_streams(run.cp, dev)[4].ptr
        self.flags = 0
        self.a_all: _Block | None = None
        self.b_all: _Block | None = None
        self.res: _Block | None = None

    def prepare(self, A: _Block, B: _Block, C: _Block, ready: Any) -> list[tuple[str, int]]:
        cp, (rows, ks, cols) = self.cp, (self.piece.rows, self.piece.ks, self.piece.cols)
        with cp.cuda.Device(self.dev), _on(cp, self.dev):
            _wait(cp, self.arrive, ready)
            self.a_all = _new_block(cp, A.sub(rows, ks).shape, A, self.keep)
            self.b_all = _new_block(cp, B.sub(ks, cols).shape, B, self.keep)
            self.res = _new_block(cp, C.sub(rows, cols).shape, C, self.keep)
            nbytes = 4 * (len(self.bands) + len(self.chunks))
            mem = cp.cuda.alloc(nbytes)
            self.keep.append(mem)
            self.flags = mem.ptr
            cp.cuda.runtime.memsetAsync(self.flags, 0, nbytes, self.arrive)
            allocated = _record(cp, self.arrive)
            for stream in (self.relay, self.flag, self.compute):
                _wait(cp, stream, allocated)
        with cp.cuda.Device(self.run.devs[0]):
            _wait(cp, self.run.out, allocated)
        n, first = len(self.slices), self.round_chunks
        order: list[tuple[str, int]] = []
        for j in range(n):  # the first band and the first round's chunks, slice by slice
            order += [("a", j)] + [("b", c * n + j) for c in range(first)]
        order += [("b", i) for i in range(first * n, len(self.b_items))]  # the other chunks
        order += [("a", i) for i in range(n, len(self.a_items))]  # the other bands
        return order

    def _endpoints(self, operand: str, i: int, A: _Block, B: _Block, C: _Block) -> tuple[_Block, _Block]:
        assert self.a_all is not None and self.b_all is not None
        r0, k0, c0 = self.piece.rows[0], self.piece.ks[0], self.piece.cols[0]
        item, j0, j1 = getattr(self, operand + "_items")[i]
        kl, kh = self.slices[j0][0], self.slices[j1 - 1][1]
        if operand == "a":
            lo, hi = self.bands[item]
            return self.a_all.sub((lo - r0, hi - r0), (kl - k0, kh - k0)), A.sub((lo, hi), (kl, kh))
        cl, ch = self.chunks[item]
        return self.b_all.sub((kl - k0, kh - k0), (cl - c0, ch - c0)), B.sub((kl, kh), (cl, ch))

    def _landed(self, operand: str, i: int, dst: _Block, ev: Any) -> None:
        super()._landed(operand, i, dst, ev)
        item, _, end = getattr(self, operand + "_items")[i]
        slot = item if operand == "a" else len(self.bands) + item
        with self.cp.cuda.Device(self.dev):
            _wait(self.cp, self.flag, ev)
            self.run.write_flag(self.flag, self.flags + 4 * slot, end)

    def compute_and_return(self, C: _Block) -> None:
        cp, run, res = self.cp, self.run, self.res
        assert self.a_all is not None and self.b_all is not None and res is not None
        r0, cols, n_cols = self.piece.rows[0], self.piece.cols, res.shape[1]
        with cp.cuda.Device(self.dev):
            for b, (lo, hi) in enumerate(self.bands):
                band = (lo - r0, hi - r0)
                out = res.sub(band, (0, n_cols))
                a = self.a_all.sub(band, (0, self.a_all.shape[1]))
                run.gemm_gated(
                    a, self.b_all, out, self.flags + 4 * b, self.flags + 4 * len(self.bands), self.compute
                )
                _wait(cp, self.back, _record(cp, self.compute))
                _copy(cp, C.sub((lo, hi), cols), out, self.back)
            self.finished = _record(cp, self.back)

    def release(self) -> None:
        super().release()
        self.a_all, self.b_all, self.res = None, None, None


class _Run:
    """One call of :func:`gemm`: home's piece on home's stream (``hs``), the remote pieces on
    their devices' streams, and ``hs`` joined to every piece's return. Streams are
    ``cudaStream_t`` values. Each device's temporaries come from CuPy's pool on its ``arrive``
    stream, which waits for the call's last use of them before they can be handed out again."""

    def __init__(self, cp, fg, devs, hs, kernel, precision, alpha, beta, gated=False):
        self.cp, self.fg, self.devs, self.hs = cp, fg, devs, hs
        self.kernel, self.precision, self.alpha, self.beta = kernel, precision, alpha, beta
        self.gated = gated  # fp16/bf16 pieces may run as gated GEMMs (_gated)
        self.out = 0  # home's stream of copies out (start)
        self.itemsize = 0  # the operands' element size (start)
        self.lead = 1  # the remote pieces: short K slices at the start, one each (start)

    def gemm(self, a: _Block, b: _Block, c: _Block, beta: float, stream: int) -> None:
        self.fg.gemm(a, b, c, self.alpha, beta, kernel=self.kernel, stream=stream, precision=self.precision)

    def gemm_gated(self, a: _Block, b: _Block, c: _Block, flag_a: int, flags_b: int, stream: int) -> None:
        """c = alpha * a @ b on the current device (row-major c), each k-tile's copies issued once
        ``flag_a`` (a's slices of GATE_SLICE_K landed) and ``flags_b`` (one flag per
        GATE_CHUNK_COLS columns of b) say it is in (``_C._gemm_gated``)."""
        (M, K), N = a.shape, b.shape[1]
        self.fg._C._gemm_gated(
            a.dtype, M, N, K, a.ptr, a.ld, a.col_major, b.ptr, b.ld, b.col_major, c.ptr, c.ld,
            self.alpha, flag_a, flags_b, GATE_CHUNK_COLS, GATE_SLICE_K, GATE_WAIT_MS, stream,
            self.cp.cuda.runtime.getDevice(),
        )  # fmt: skip

    def write_flag(self, stream: int, flag: int, value: int) -> None:
        """The int32 at ``flag`` = value on ``stream`` (current device), after its earlier work."""
        self.fg._C._write_flag(stream, flag, value, self.cp.cuda.runtime.getDevice())

    def start(self, A: _Block, B: _Block, C: _Block, pl: partition.Plan) -> None:
        cp, hs = self.cp, self.hs
        home = self.devs[0]
        p0 = pl.pieces[0]
        with cp.cuda.Device(home):
            ready = _record(cp, hs)
            self.gemm(A.sub(p0.rows, p0.ks), B.sub(p0.ks, p0.cols), C.sub(p0.rows, p0.cols), self.beta, hs)
        for piece in pl.pieces[1:]:
            _enable_peer(cp, home, self.devs[piece.device])
        if pl.strategy == "k":
            partials = [self._remote_k(p, self.devs[p.device], A, B, C, ready) for p in pl.pieces[1:]]
            with cp.cuda.Device(home):
                self._sum_partials(C, partials)
            return
        # Home's copies out leave one at a time, on a stream of their own, each at the links'
        # full rate, in the order they are queued (on the remote devices' streams they ran side
        # by side and shared the links: every device's first input came later).
        self.out = _device_streams(cp, home)[4].ptr
        self.itemsize, self.lead = A.itemsize, len(pl.pieces) - 1
        kind: type[_Remote] = _SlicedRemote if _sliced(A.itemsize) else _Remote
        if _gated(A.itemsize, self.beta != 0, self.gated) and pl.strategy == "rows" and not C.col_major:
            kind = _GatedRemote
        remotes = [kind(self, p, self.devs[p.device]) for p in pl.pieces[1:]]
        _share_out(cp, remotes)
        if kind is _GatedRemote:
            _share_chunks(remotes)
        try:
            self._queue(remotes, A, B, C, ready)
        except BaseException:
            # Work queued so far may still read or write this call's memory: let it finish
            # before the memory goes back to the pools.
            for dev in {home} | {r.dev for r in remotes}:  # home's copies out included
                with cp.cuda.Device(dev):
                    cp.cuda.runtime.deviceSynchronize()
            raise
        for r in remotes:  # a device's memory returns to its pool after its readers' copies
            r.release()
        with cp.cuda.Device(home):
            for r in remotes:
                _wait(cp, hs, r.finished)

    def _queue(self, remotes: list[_Remote], A: _Block, B: _Block, C: _Block, ready: Any) -> None:
        """The remote devices' copies in, GEMMs and copies back. The copies are queued in turns
        over the devices, each device's in the order its GEMMs need them (links and copy engines
        serve copies about in the order they are queued), so that every device starts early; a
        copy from another device comes right after that device's own copy (whose event it waits
        for) is queued."""
        wanted = [r.prepare(A, B, C, ready) for r in remotes]
        queued: set[tuple[int, str, int]] = set()
        for turn in range(max(map(len, wanted))):
            for r, items in zip(remotes, wanted):
                if turn >= len(items):
                    continue
                operand, i = items[turn]
                src = r.source(operand, i)
                for x in (src, r) if src is not None else (r,):  # a source brings it from home
                    if (id(x), operand, i) not in queued:
                        x.copy_in(operand, i, A, B, C)
                        queued.add((id(x), operand, i))
        for r in remotes:
            r.relayed()
        for r in remotes:
            r.compute_and_return(C)

    def _remote_k(self, piece, dev, A, B, C, ready) -> tuple[Any, _Block, list[Any]]:
        """alpha * A[:, ks] @ B[ks, :] on ``dev`` (float32), summed over K chunks as they arrive,
        then copied into a block on home (from home's pool on its ``arrive`` stream)."""
        cp = self.cp
        arrive, compute, back, _, _ = (s.ptr for s in _device_streams(cp, dev))
        M, N = C.shape
        keep: list[Any] = []
        k0, k1 = piece.ks
        with cp.cuda.Device(dev), _on(cp, dev):
            _wait(cp, arrive, ready)
            part = _new_block(cp, (M, N), C, keep)
            for i, (lo, hi) in enumerate(partition.split_range(k1 - k0, max(1, (k1 - k0) // 4096), 4)):
                ks = (k0 + lo, k0 + hi)
                a_src, b_src = A.sub((0, M), ks), B.sub(ks, (0, N))
                a_blk = _new_block(cp, a_src.shape, a_src, keep)
                b_blk = _new_block(cp, b_src.shape, b_src, keep)
                _copy(cp, a_blk, a_src, arrive)
                _copy(cp, b_blk, b_src, arrive)
                _wait(cp, compute, _record(cp, arrive))
                self.gemm(a_blk, b_blk, part, 0.0 if i == 0 else 1.0, compute)
            computed = _record(cp, compute)
        home = self.devs[0]
        with cp.cuda.Device(home), _on(cp, home):
            landing_keep: list[Any] = []
            landing = _new_block(cp, (M, N), C, landing_keep)
            # The pool hands `landing` out in home's `arrive` order: the copy into it comes after
            # whatever that stream queued before (the last user of this memory, if any).
            handed_out = _record(cp, _on(cp, home).ptr)
        with cp.cuda.Device(dev):
            _wait(cp, back, computed)
            _wait(cp, back, handed_out)
            _copy(cp, landing, part, back)
            finished = _record(cp, back)
            _wait(cp, arrive, finished)
        return finished, landing, landing_keep

    def _sum_partials(self, C, partials) -> None:
        """C += each remote partial, in device order (the same bits every call), on home's
        ``arrive`` stream (whose pool holds the partials), then joined to ``hs``."""
        cp, hs = self.cp, self.hs
        home = self.devs[0]
        arrive = _device_streams(cp, home)[0]
        _wait(cp, arrive.ptr, _record(cp, hs))
        with arrive:
            c = _as_cupy(cp, C)
            for finished, landing, _keep in partials:
                _wait(cp, arrive.ptr, finished)
                c += _as_cupy(cp, landing)
        _wait(cp, hs, _record(cp, arrive.ptr))


def _on(cp: Any, device: int) -> Any:
    """The device's ``arrive`` stream as CuPy's current stream: allocations from the pool
    belong to it."""
    return _device_streams(cp, device)[0]


def _as_cupy(cp: Any, blk: _Block) -> Any:
    span = ((blk.shape[0] - 1) * blk.strides[0] + (blk.shape[1] - 1) * blk.strides[1] + 1) * blk.itemsize
    mem = cp.cuda.UnownedMemory(blk.ptr, max(span, 1), blk.owner)
    strides = tuple(s * blk.itemsize for s in blk.strides)
    return cp.ndarray(blk.shape, dtype=cp.float32, memptr=cp.cuda.MemoryPointer(mem, 0), strides=strides)


# --- the tensor-parallel pair: one process per GPU, torch.distributed with NCCL ----------------

COMM_SMS = 8  # SMs left to NCCL while a transfer runs beside a GEMM (and NCCL's CTA limit)
# gemm_reduce_scatter's column chunks: each chunk's reduce-scatter runs beside the next chunk's
# GEMM, and the last one's after every GEMM.
RS_CHUNK_COLS = 1024

_tp_groups: dict[tuple[Any, int], tuple[Any, Any]] = {}


def _tp_group(dist: Any, group: Any, comm_sms: int) -> tuple[Any, Any]:
    """Communicators over ``group``'s ranks, made once (collectively: every rank calls this at the
    same point): NCCL, whose kernels use at most ``comm_sms`` CTAs, and gloo for the host-side
    argument check (no GPU synchronisation)."""
    key = (group, comm_sms)
    if key not in _tp_groups:
        ranks = dist.get_process_group_ranks(group if group is not None else dist.group.WORLD)
        options = None
        if comm_sms > 0:
            options = dist.ProcessGroupNCCL.Options()
            options.config.max_ctas = comm_sms
            options.config.min_ctas = 1
        # Only the group's ranks take part (a tensor-parallel group of a larger job).
        nccl = dist.new_group(ranks=ranks, backend="nccl", pg_options=options, use_local_synchronization=True)
        gloo = dist.new_group(ranks=ranks, backend="gloo", use_local_synchronization=True)
        _tp_groups[key] = (nccl, gloo)
    return _tp_groups[key]


TRANSPORTS = ("auto", "symm_mem", "nccl")
# How long a peer-memory barrier waits for a peer before its kernel traps (a rank that failed,
# instead of a hang); FASTGEMM_PEER_WAIT_MS overrides it.
PEER_WAIT_MS = int(os.environ.get("FASTGEMM_PEER_WAIT_MS", "600000"))


class _PeerSpace:
    """A buffer in PyTorch's symmetric memory (``torch.distributed._symmetric_memory``) on every
    rank of a group: each rank maps its peers' buffers, and a copy out of a peer's buffer goes over
    NVLink on a copy engine, taking no SM from the GEMMs beside it. Two halves, used by
    alternate calls: a rank writes a half again only two calls later, after every peer has been
    through a barrier that comes after its last read of it. That holds because each call's reads
    are joined into the call's stream, and every call waits for the previous call's end
    (``last``, an event), whatever stream either was made on.

    Made in two steps so that a failure on any rank is agreed on before the collective
    rendezvous: :meth:`allocate` (local), then :meth:`join`."""

    def __init__(self, torch: Any, half_bytes: int) -> None:
        self.half = -(-half_bytes // 512) * 512
        self.torch = torch
        self.buf: Any = None
        self.hdl: Any = None
        self.side: Any = None
        self.last: Any = None
        self.calls = 0

    def allocate(self) -> bool:
        import torch.distributed._symmetric_memory as symm_mem

        torch = self.torch
        device = torch.device("cuda", torch.cuda.current_device())
        try:
            self.buf = symm_mem.empty(2 * self.half, dtype=torch.uint8, device=device)
        except RuntimeError:  # out of memory included
            return False
        self.side = torch.cuda.Stream(device=device)
        return True

    def join(self, group: Any) -> None:
        import torch.distributed._symmetric_memory as symm_mem

        with warnings.catch_warnings():  # needed by older PyTorch releases, deprecated by newer
            warnings.simplefilter("ignore")
            if hasattr(symm_mem, "enable_symm_mem_for_group"):
                symm_mem.enable_symm_mem_for_group(group.group_name)
        self.hdl = symm_mem.rendezvous(self.buf, group)

    def begin(self, cur: Any) -> int:
        """The half this call uses; ``cur`` (the call's stream) waits for the previous call."""
        if self.last is not None:
            cur.wait_event(self.last)
        self.calls += 1
        return self.calls % 2

    def end(self, cur: Any) -> None:
        self.last = self.torch.cuda.Event()
        self.last.record(cur)

    def view(self, rank: int, half: int, offset: int, shape: tuple[int, ...], dtype: Any) -> Any:
        """``shape`` elements of ``dtype`` at byte ``offset`` of ``half`` of ``rank``'s buffer."""
        item = dtype.itemsize
        return self.hdl.get_buffer(rank, shape, dtype, (half * self.half + offset) // item)


# group -> its peer space (None: symmetric memory is unavailable on some rank of the group)
_peer_spaces: dict[Any, _PeerSpace | None] = {}
_retired: list[_PeerSpace] = []  # outgrown spaces: a peer may still be reading them


def _symm_mem_works(torch: Any) -> bool:
    """Whether PyTorch's symmetric memory is there and this CUDA device is of compute capability
    8.0 or newer (the peers' reachability is agreed separately)."""
    try:
        import torch.distributed._symmetric_memory as symm_mem
    except ImportError:
        return False
    return hasattr(symm_mem, "rendezvous") and torch.cuda.get_device_capability()[0] >= 8


def _check_transport(transport: str) -> None:
    if transport not in TRANSPORTS:
        raise ValueError(f"transport {transport!r}; expected one of {', '.join(TRANSPORTS)}")


def _all_agree(torch: Any, dist: Any, gloo: Any, values: list[int]) -> list[list[int]]:
    """Every rank's ``values`` (a host all-gather over gloo)."""
    mine = torch.tensor(values, dtype=torch.int64)
    every = [torch.empty_like(mine) for _ in range(dist.get_world_size(gloo))]
    dist.all_gather(every, mine, group=gloo)
    return [t.tolist() for t in every]


class _Board:
    """The argument check's exchange where every rank of a group is on this host: a page of
    shared memory that every rank maps, a slot per rank (``fastgemm._C.board_exchange``,
    csrc/board.h), instead of an all-gather over gloo's sockets (hundreds of microseconds a
    call on four ranks). Exchanges are numbered in call order, the same on every rank."""

    def __init__(self, mapping: Any, ranks: int, rank: int) -> None:
        import ctypes

        self.mapping = mapping
        self.anchor = ctypes.c_char.from_buffer(mapping)  # pins the mapping while it is used
        self.page = ctypes.addressof(self.anchor)
        self.ranks, self.rank, self.seq = ranks, rank, 0

    def exchange(self, values: list[int]) -> list[list[int]]:
        from . import _C

        self.seq += 1
        return _C.board_exchange(self.page, self.ranks, self.rank, self.seq, values, PEER_WAIT_MS)


# gloo group -> its board (None: some rank is elsewhere, or could not map the page)
_boards: dict[Any, _Board | None] = {}


def _new_board(torch: Any, dist: Any, gloo: Any) -> _Board | None:
    """A board made collectively over ``gloo``: rank 0 makes a zero-filled file in /dev/shm under
    a random name, every rank maps it, and once all have tried (agreed over gloo) the name is
    removed, so that nothing is left behind whatever happens later. ``None`` on every rank
    where the ranks are on several hosts or some rank could not map it."""
    import mmap
    import secrets
    import socket

    from . import _C

    rank, ranks = dist.get_rank(gloo), dist.get_world_size(gloo)
    size = _C.board_bytes(ranks)
    token = secrets.randbits(62)
    mine = f"/dev/shm/fastgemm-board-{token:x}"
    made = 0
    try:
        if rank == 0:
            try:
                fd = os.open(mine, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
                made = 1
                try:
                    # Allocated now (a full /dev/shm fails here, not with SIGBUS at the first write).
                    os.posix_fallocate(fd, 0, size)
                finally:
                    os.close(fd)
            except OSError:
                made = -1 if made else 0  # -1: made, but unusable
        host = zlib.crc32(socket.gethostname().encode())
        every = _all_agree(torch, dist, gloo, [host, made, token])
        path = f"/dev/shm/fastgemm-board-{every[0][2]:x}"
        mapping = None
        if len({r[0] for r in every}) == 1 and every[0][1] == 1:
            try:
                fd = os.open(path, os.O_RDWR)
                try:
                    mapping = mmap.mmap(fd, size)
                finally:
                    os.close(fd)
            except (OSError, ValueError):
                mapping = None
        mapped = _all_agree(torch, dist, gloo, [int(mapping is not None)])
    finally:
        if made:  # every rank has mapped it or given up by now (or the setup failed)
            with contextlib.suppress(OSError):
                os.unlink(mine)
    if not all(r[0] for r in mapped):
        return None
    return _Board(mapping, ranks, rank)


def _new_space(torch: Any, dist: Any, pg: Any, gloo: Any, half_bytes: int) -> _PeerSpace | None:
    """A peer space made collectively, or ``None`` on every rank where some rank cannot make one:
    symmetric memory present, every rank on this host with peer access to every other rank's
    GPU, and the buffer allocated, all agreed over gloo before the rendezvous."""
    import socket

    ok = _symm_mem_works(torch)
    me = torch.cuda.current_device() if ok else -1
    host = zlib.crc32(socket.gethostname().encode())
    every = _all_agree(torch, dist, gloo, [int(ok), host, me])
    if not all(r[0] for r in every) or len({r[1] for r in every}) != 1:
        return None
    peers_ok = all(r[2] == me or torch.cuda.can_device_access_peer(me, r[2]) for r in every)
    space = _PeerSpace(torch, half_bytes)
    made = peers_ok and space.allocate()
    if not all(r[0] for r in _all_agree(torch, dist, gloo, [int(made)])):
        return None
    space.join(pg)
    return space


def _peer_space(
    torch: Any, dist: Any, pg: Any, gloo: Any, transport: str, half_bytes: int
) -> _PeerSpace | None:
    """The group's peer space, grown (collectively) to ``half_bytes`` a half; ``None`` for the
    NCCL transport, or under ``"auto"`` where some rank cannot use peer memory. Every rank
    decides alike: availability is agreed over gloo, and the sizes come from shapes that every
    rank knows."""
    if transport == "nccl":
        return None
    if pg not in _peer_spaces:
        _peer_spaces[pg] = _new_space(torch, dist, pg, gloo, half_bytes)
    space = _peer_spaces[pg]
    if space is not None and space.half < half_bytes:
        grown = _new_space(torch, dist, pg, gloo, max(half_bytes, 2 * space.half))
        if grown is not None:
            grown.calls, grown.last = space.calls, space.last
            _retired.append(space)
        _peer_spaces[pg] = space = grown
    if space is None and transport == "symm_mem":
        raise RuntimeError("transport 'symm_mem': PyTorch's symmetric memory is not usable on every rank")
    return space


_DTYPE_CODES = {"torch.float32": 1, "torch.float16": 2, "torch.bfloat16": 3}


def _agree(
    torch: Any, dist: Any, gloo: Any, local: list[int], problem: str | None, what: str
) -> list[list[int]]:
    """Every rank's ``local`` description (and whether its own checks passed), through one small
    exchange on the host (the group's board where the group is on one host, else an all-gather
    over gloo), so that a bad input raises on every rank instead of leaving the others waiting."""
    if gloo not in _boards:
        _boards[gloo] = _new_board(torch, dist, gloo)
    board = _boards[gloo]
    values = [0 if problem is None else 1, *local]
    rows = board.exchange(values) if board is not None else _all_agree(torch, dist, gloo, values)
    bad = [r for r, row in enumerate(rows) if row[0]]
    if bad:
        mine_txt = f" (this rank: {problem})" if problem else ""
        raise ValueError(f"{what}: rank(s) {bad} were given bad input{mine_txt}")
    return [row[1:] for row in rows]


def _local_problem(x: Any, w: Any, torch: Any) -> str | None:
    if not (isinstance(x, torch.Tensor) and isinstance(w, torch.Tensor)):
        return "operands must be torch tensors"
    if x.dim() != 2 or w.dim() != 2:
        return f"operands must be 2-D; got {tuple(x.shape)} and {tuple(w.shape)}"
    if x.dtype != w.dtype or str(x.dtype) not in _DTYPE_CODES:
        return f"dtypes must match and be float32, float16 or bfloat16; got {x.dtype}, {w.dtype}"
    if x.shape[1] != w.shape[0]:
        return f"inner dimensions differ: {tuple(x.shape)} @ {tuple(w.shape)}"
    if not (x.is_cuda and w.is_cuda and x.device == w.device):
        return "operands must be on this rank's GPU"
    return None


def _out_problem(out: Any, x: Any, n: int, torch: Any) -> str | None:
    """What is wrong with ``out`` that this rank alone can see (its rows are checked against
    every rank's shapes after the check's all-gather)."""
    if out is None:
        return None
    if not isinstance(out, torch.Tensor) or out.dim() != 2:
        return "out must be a 2-D torch tensor"
    if out.dtype != x.dtype or out.device != x.device:
        return f"out is {out.dtype} on {out.device}; expected {x.dtype} on {x.device}"
    if out.shape[1] != n or not out.is_contiguous():
        return f"out must be a contiguous (row-major) tensor of {n} columns; it is {tuple(out.shape)}"
    return None


def all_gather_gemm(
    x: Any,
    w: Any,
    out: Any = None,
    *,
    group: Any = None,
    alpha: float = 1.0,
    check: bool = True,
    comm_sms: int = COMM_SMS,
    transport: str = "auto",
) -> Any:
    """``out = alpha * all_gather(x) @ w`` on every rank of ``group``: each rank holds a band of
    rows ``x`` (m_r x K, in rank order) and its own ``w`` (K x N); ``out`` is (sum m_r) x N.

    The GEMM of this rank's own band runs while the other shards arrive, and each other band's
    as soon as its shard is in, so the all-gather hides behind the GEMMs. ``transport``:
    ``"symm_mem"`` copies every shard out of its owner's symmetric-memory buffer on the copy
    engines; ``"nccl"`` broadcasts every shard from its rank (all queued at once; the GEMMs
    leave ``comm_sms`` SMs to NCCL while one is in flight); ``"auto"`` (default) takes the first
    where every rank of the group supports it. ``check`` (default)
    compares shapes and dtypes across ranks first (one small exchange on the host, through
    shared memory where the group is on one host, else over gloo; no GPU synchronisation): a mismatch, or a bad input on any rank, raises ValueError on every rank.
    Without it, ranks must agree, and the bands must all have x's rows. ``out`` (optional) is a
    contiguous tensor; ``group``, ``comm_sms`` and ``transport`` must be the same on every rank
    of the group.
    """
    import torch
    import torch.distributed as dist

    import fastgemm

    size, rank = dist.get_world_size(group), dist.get_rank(group)
    problem = _local_problem(x, w, torch) or _out_problem(out, x, w.shape[1], torch)
    out_rows = -1 if out is None else int(out.shape[0])
    _check_transport(transport)
    local = (
        [int(x.shape[0]), int(x.shape[1]), int(w.shape[1]), _DTYPE_CODES.get(str(x.dtype), 0), out_rows]
        if problem is None
        else [0, 0, 0, 0, 0]
    ) + [TRANSPORTS.index(transport)]
    pg, gloo = _tp_group(dist, group, comm_sms)
    if check:
        every = _agree(torch, dist, gloo, local, problem, "all_gather_gemm")
        if len({tuple(r[1:4]) for r in every}) != 1:
            raise ValueError(f"all_gather_gemm: ranks disagree on (K, N, dtype): {[r[1:4] for r in every]}")
        if len({r[5] for r in every}) != 1:
            raise ValueError(
                f"all_gather_gemm: ranks disagree on transport: {[TRANSPORTS[r[5]] for r in every]}"
            )
        heights = [r[0] for r in every]
        bad_out = [r for r, row in enumerate(every) if row[4] not in (-1, sum(heights))]
        if bad_out:
            raise ValueError(f"all_gather_gemm: out on rank(s) {bad_out} does not have {sum(heights)} rows")
    elif problem is not None:
        raise ValueError(f"all_gather_gemm: {problem}")
    else:
        heights = [int(x.shape[0])] * size
    starts = [sum(heights[:r]) for r in range(size)]
    N = w.shape[1]
    if out is None:
        out = torch.empty((sum(heights), N), dtype=x.dtype, device=x.device)
    elif out.shape[0] != sum(heights):
        raise ValueError(f"all_gather_gemm: out has {out.shape[0]} rows; expected {sum(heights)}")
    mine = x.contiguous()
    half_bytes = _slot(max(heights), x.shape[1], x.element_size())
    space = _peer_space(torch, dist, pg, gloo, transport, half_bytes) if size > 1 else None
    if space is not None:
        _all_gather_gemm_peer(torch, fastgemm, space, mine, w, out, heights, starts, alpha)
        return out
    # Every shard is broadcast from its rank, in rank order on every rank (collectives must
    # match), all queued before the first GEMM: a collective queued after a GEMM would wait for it.
    shards: dict[int, Any] = {}
    works: dict[int, Any] = {}
    for src in range(size if size > 1 else 0):
        if heights[src] == 0:
            continue
        buf = mine if src == rank else torch.empty((heights[src], x.shape[1]), dtype=x.dtype, device=x.device)
        works[src] = dist.broadcast(buf, dist.get_global_rank(pg, src), group=pg, async_op=True)
        shards[src] = buf
    # This rank's own band first (its shard is in hand), then the others as they arrive; a GEMM
    # leaves comm_sms SMs to NCCL while a broadcast after its shard's is still in flight.
    own = (starts[rank], starts[rank] + heights[rank])
    with fastgemm.reserve_sms(comm_sms if works else 0):
        fastgemm.gemm(mine, w, out[own[0] : own[1]], alpha)
    for src in sorted(works):
        if src == rank:
            continue
        works[src].wait()
        with fastgemm.reserve_sms(comm_sms if max(works) > src else 0):
            fastgemm.gemm(shards[src], w, out[starts[src] : starts[src] + heights[src]], alpha)
    if rank in works:
        works[rank].wait()  # the caller may overwrite x once the call returns
    return out


def gemm_reduce_scatter(
    y: Any,
    w: Any,
    out: Any = None,
    *,
    group: Any = None,
    alpha: float = 1.0,
    check: bool = True,
    comm_sms: int = COMM_SMS,
    transport: str = "auto",
) -> Any:
    """``out = reduce_scatter(alpha * y @ w)`` over ``group``: every rank holds ``y`` (M x K_r, its
    slice of the inner dimension) and ``w`` (K_r x N); rank r receives rows
    ``partition.split_range(M, size)[r]`` of the sum over ranks, (m_r x N).

    ``transport`` as for :func:`all_gather_gemm`. ``"symm_mem"``: each rank computes the other
    ranks' bands first, each into its symmetric-memory buffer, and its owner copies it out on
    the copy engines while the next GEMMs run; the owner's band comes last, and the partial
    products are summed in one reduction with fp32 accumulation, in rank order (the same bits
    every call). ``"nccl"``: the product is computed in column chunks of about
    ``RS_CHUNK_COLS``, each reduce-scattered by NCCL (summed in the operands' dtype, as
    ``reduce_scatter_tensor`` does, in NCCL's fixed order) while the next chunk's GEMM runs.
    ``check``, ``out``, ``group`` and ``comm_sms`` as for :func:`all_gather_gemm` (M, N and dtype
    must agree; K_r may differ).
    """
    import torch
    import torch.distributed as dist

    import fastgemm

    size, rank = dist.get_world_size(group), dist.get_rank(group)
    problem = _local_problem(y, w, torch) or _out_problem(out, y, w.shape[1], torch)
    out_rows = -1 if out is None else int(out.shape[0])
    _check_transport(transport)
    local = (
        [int(y.shape[0]), int(w.shape[1]), _DTYPE_CODES.get(str(y.dtype), 0), out_rows]
        if problem is None
        else [0, 0, 0, 0]
    ) + [TRANSPORTS.index(transport)]
    pg, gloo = _tp_group(dist, group, comm_sms)
    M, N = y.shape[0], w.shape[1]
    bands = partition.split_range(M, size)
    bands += [(M, M)] * (size - len(bands))
    if check:
        every = _agree(torch, dist, gloo, local, problem, "gemm_reduce_scatter")
        if len({tuple(r[:3]) for r in every}) != 1:
            raise ValueError(
                f"gemm_reduce_scatter: ranks disagree on (M, N, dtype): {[r[:3] for r in every]}"
            )
        if len({r[4] for r in every}) != 1:
            raise ValueError(
                f"gemm_reduce_scatter: ranks disagree on transport: {[TRANSPORTS[r[4]] for r in every]}"
            )
        bad_out = [r for r, row in enumerate(every) if row[3] not in (-1, bands[r][1] - bands[r][0])]
        if bad_out:
            raise ValueError(f"gemm_reduce_scatter: out on rank(s) {bad_out} does not have its band's rows")
    elif problem is not None:
        raise ValueError(f"gemm_reduce_scatter: {problem}")
    mine = bands[rank]
    if out is None:
        out = torch.empty((mine[1] - mine[0], N), dtype=y.dtype, device=y.device)
    elif out.shape[0] != mine[1] - mine[0]:
        raise ValueError(f"gemm_reduce_scatter: out has {out.shape[0]} rows; expected {mine[1] - mine[0]}")
    if size == 1:
        fastgemm.gemm(y, w, out, alpha)
        return out
    tall = max(b[1] - b[0] for b in bands)
    space = _peer_space(torch, dist, pg, gloo, transport, size * _slot(tall, N, y.element_size()))
    if space is not None:
        _gemm_reduce_scatter_peer(torch, fastgemm, space, y, w, out, bands, alpha)
        return out
    # Column chunks: chunk j's partial product (all M rows, its columns) is reduce-scattered by
    # NCCL while chunk j + 1's GEMM runs. Bands of unequal height are padded to the tallest in
    # the chunk's buffer (the padding rows are summed and dropped).
    even = all(b[1] - b[0] == tall for b in bands)
    pending: list[tuple[Any, Any, tuple[int, int]]] = []
    for j, (c0, c1) in enumerate(partition.split_range(N, max(1, N // RS_CHUNK_COLS), 16)):
        part = torch.empty((size * tall, c1 - c0), dtype=y.dtype, device=y.device)
        with fastgemm.reserve_sms(comm_sms if j > 0 else 0):
            if even:
                fastgemm.gemm(y, w[:, c0:c1], part, alpha)
            else:
                for r, (r0, r1) in enumerate(bands):
                    if r1 > r0:
                        fastgemm.gemm(y[r0:r1], w[:, c0:c1], part[r * tall : r * tall + r1 - r0], alpha)
        mine_part = torch.empty((tall, c1 - c0), dtype=y.dtype, device=y.device)
        work = dist.reduce_scatter_tensor(mine_part, part, group=pg, async_op=True)
        pending.append((work, mine_part, (c0, c1)))
    for work, mine_part, (c0, c1) in pending:
        work.wait()
        out[:, c0:c1].copy_(mine_part[: out.shape[0]])
    return out


def _slot(rows: int, cols: int, itemsize: int) -> int:
    """Bytes of a rows x cols block in a peer space, rounded up to 512."""
    return -(-rows * cols * itemsize // 512) * 512


def _all_gather_gemm_peer(torch, fastgemm, space, x, w, out, heights, starts, alpha) -> None:
    """all_gather_gemm over peer memory: this rank's shard is copied into its half of the space,
    a barrier, and every other shard is copied out of its owner's space on the copy engines
    (on ``space.side``, the next rank's first), while this rank's own band's GEMM runs; each
    other band's GEMM waits for its own shard's copy only. (One GEMM over the bands after this
    rank's and one over those before was slower on 4 ranks: it waits for more copies.) The own
    band's GEMM leaves one SM to the barrier's kernel.

    The copy into the space runs on the caller's stream, before the GEMM: a copy within one GPU
    is a kernel, and beside the GEMM it had the one SM left over (4 x H100: 0.3 ms for a 32 MiB
    shard, which held up every peer's first copy and so its second GEMM)."""
    size, rank, K = len(heights), space.hdl.rank, x.shape[1]
    cur, side = torch.cuda.current_stream(), space.side
    half = space.begin(cur)
    if heights[rank]:
        space.view(rank, half, 0, (heights[rank], K), x.dtype).copy_(x)
    others = [src for src in ((rank + step) % size for step in range(1, size)) if heights[src]]
    # The shards land in one buffer from the caller's stream's pool; the caller's stream waits
    # for the side stream (queued before the buffer is freed, also where the call raises), so
    # the pool hands it out again only after the copies into it (a buffer per shard made on the
    # side stream cost 0.1 ms of host time each: the pool held them until the caller's stream
    # was done with them).
    landed = torch.empty((sum(heights[src] for src in others), K), dtype=x.dtype, device=x.device)
    side.wait_stream(cur)
    try:
        arrived = []
        with torch.cuda.stream(side):
            space.hdl.barrier(channel=0, timeout_ms=PEER_WAIT_MS)
            row = 0
            for src in others:
                shard = landed[row : row + heights[src]]
                row += heights[src]
                shard.copy_(space.view(src, half, 0, (heights[src], K), x.dtype))
                done = torch.cuda.Event()
                done.record(side)
                arrived.append((src, shard, done))
        with fastgemm.reserve_sms(1):
            fastgemm.gemm(x, w, out[starts[rank] : starts[rank] + heights[rank]], alpha)
        for src, shard, done in arrived:
            cur.wait_event(done)
            fastgemm.gemm(shard, w, out[starts[src] : starts[src] + heights[src]], alpha)
    finally:  # queued before `landed` is freed, also where the call raises
        cur.wait_stream(side)
    space.end(cur)


def _gemm_reduce_scatter_peer(torch, fastgemm, space, y, w, out, bands, alpha) -> None:
    """gemm_reduce_scatter over peer memory: this rank computes the other ranks' bands first,
    each into its slot of this rank's half of the space, with a barrier after each; after the
    barrier, this rank copies its own band's partial product out of the rank that computed it
    at that step, on the copy engines (on ``space.side``), while the next GEMM runs; its own
    band's product comes last. The partial products are summed in one reduction (fp32
    accumulation, in rank order: the same bits every call) into ``out``.

    The barriers sit on the caller's stream between the GEMMs. A kernel that spins waiting on a
    peer must never be queued on another stream ahead of this rank's own work that a peer waits
    for: streams can share a hardware queue, and such waits then form a cycle across the GPUs."""
    size, rank = len(bands), space.hdl.rank
    N, tall = w.shape[1], max(b[1] - b[0] for b in bands)
    slot = _slot(tall, N, y.element_size())
    cur, side = torch.cuda.current_stream(), space.side
    half = space.begin(cur)
    parts = torch.empty((size, tall, N), dtype=y.dtype, device=y.device)
    mine = bands[rank][1] - bands[rank][0]
    side.wait_stream(cur)
    for step in range(size - 1):
        lo, hi = bands[(rank + 1 + step) % size]
        if hi > lo:
            dst = (rank + 1 + step) % size
            fastgemm.gemm(y[lo:hi], w, space.view(rank, half, dst * slot, (hi - lo, N), y.dtype), alpha)
        space.hdl.barrier(channel=0, timeout_ms=PEER_WAIT_MS)
        src = (rank - 1 - step) % size  # the rank that computed this rank's band at this step
        if mine:
            side.wait_stream(cur)
            with torch.cuda.stream(side):
                parts[src, :mine].copy_(space.view(src, half, rank * slot, (mine, N), y.dtype))
    lo, hi = bands[rank]
    if mine:
        fastgemm.gemm(y[lo:hi], w, parts[rank, :mine], alpha)
    cur.wait_stream(side)
    space.end(cur)
    if mine:
        torch.sum(parts[:, :mine], dim=0, out=out)
