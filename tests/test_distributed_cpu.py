"""CPU tests of fastgemm.distributed: how a problem is spread (which devices, which way, home's
share), the bands a remote piece is computed in, the strided blocks handed to the GEMM entry and
the copy engines, the argument checks that need no GPU, the environment that keeps NVLink
multicast off, and the whole one-process schedule (pieces, bands, chunks, K slices, relays, C's
old values) run on host memory against a float64 reference."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_api import FakeCuda, operands

import fastgemm
import fastgemm.distributed as fd
from fastgemm import partition


def _covers_once(M, N, K, pieces):
    count = np.zeros((M, N), dtype=np.int32)
    for p in pieces:
        count[p.rows[0] : p.rows[1], p.cols[0] : p.cols[1]] += 1
    return count


@pytest.mark.parametrize("devices", [2, 3, 4, 8])
@pytest.mark.parametrize("itemsize", [2, 4])
@pytest.mark.parametrize("strategy", [None, "rows", "cols", "grid", "k"])
def test_plan_pieces_cover_c(devices, itemsize, strategy):
    if strategy == "k" and itemsize == 2:
        with pytest.raises(ValueError, match="float32"):
            fd.plan(64, 64, 64, devices, itemsize, strategy=strategy)
        return
    for M, N, K in [(1, 1, 1), (37, 45, 29), (200, 96, 400), (64, 1000, 16)]:
        s = fd.plan(M, N, K, devices, itemsize, strategy=strategy)
        pieces = s.plan.pieces
        assert sorted(p.device for p in pieces) == list(range(len(pieces)))
        if s.plan.strategy == "k":
            assert all(p.rows == (0, M) and p.cols == (0, N) for p in pieces)
            assert min(p.ks for p in pieces)[0] == 0
            assert sum(p.ks[1] - p.ks[0] for p in pieces) == K
        else:  # column pieces are rows of the transposed problem
            rows, cols = (N, M) if s.transposed else (M, N)
            assert (_covers_once(rows, cols, K, pieces) == 1).all(), (M, N, K, s)
            assert all(p.ks == (0, K) for p in pieces)
        if strategy is None:  # small problems are not worth spreading
            assert len(pieces) == 1
        assert 0.0 < s.home_share <= 1.0


def test_plan_spreads_large_problems_and_gives_home_more():
    s = fd.plan(16384, 16384, 16384, 2, 2)
    assert s.plan.strategy == "rows" and len(s.plan.pieces) == 2
    home, other = (p.rows[1] - p.rows[0] for p in s.plan.pieces)
    assert home > other and 0.5 < s.home_share < 0.6
    assert s.spread_s < 0.6 * s.one_device_s
    # fp32 at 8192^3 spreads too; a 4096^3 fp16 problem does not (the moves cost more than half).
    assert len(fd.plan(8192, 8192, 8192, 2, 4).plan.pieces) == 2
    assert len(fd.plan(4096, 4096, 4096, 2, 2).plan.pieces) == 1
    # A wide output is cut by columns, run as rows of the transposed problem.
    wide = fd.plan(8192, 28672, 8192, 2, 2)
    assert wide.transposed and wide.plan.strategy == "cols"
    assert all(p.cols == (0, 8192) for p in wide.plan.pieces)  # C.T's columns: all of M
    # Deep K in fp32: a K split.
    assert fd.plan(2048, 2048, 65536, 2, 4).plan.strategy == "k"


def test_plan_rejects_unknown_strategy():
    with pytest.raises(ValueError, match="strategy 'diagonal'"):
        fd.plan(64, 64, 64, 2, 4, strategy="diagonal")


@pytest.mark.parametrize("rows", [1, 5, 48, 100, 2048, 2049, 3000, 3072, 4000, 7733, 9000])
def test_bands_cover_the_piece(rows):
    for r0 in (0, 17):
        bands = fd._bands(r0, r0 + rows)
        assert bands[0][0] == r0 and bands[-1][1] == r0 + rows
        assert all(a < b for a, b in bands)
        assert all(b0[1] == b1[0] for b0, b1 in zip(bands, bands[1:]))
        assert bands[0][1] - r0 == min(rows, fd.FIRST_ROWS)
        if len(bands) == 3:  # the middle band is whole tile rows, the last about TAIL_ROWS
            assert (bands[1][1] - bands[1][0]) % fd.TILE_ROWS == 0
            assert fd.TAIL_ROWS <= bands[2][1] - bands[2][0] < fd.TAIL_ROWS + fd.TILE_ROWS


def test_split_home_gives_home_its_share():
    for n, parts, q, share in itertools.product((1, 7, 64, 1000, 4099), (2, 3, 8), (1, 8), (0.3, 0.5, 0.7)):
        r = partition.split_home(n, parts, q, share)
        assert r[0][0] == 0 and r[-1][1] == n and all(a < b for a, b in r)
        assert all(x[1] == y[0] and x[1] % q == 0 for x, y in zip(r, r[1:]))
        if len(r) > 1 and n >= 64 * q:
            assert abs((r[0][1] - r[0][0]) / n - share) <= 2 * q / n
    with pytest.raises(ValueError, match="home_share"):
        partition.plan(64, 64, 64, 2, 4, home_share=1.5)


def test_blocks_describe_strided_views():
    row = fd._Block(1000, (6, 10), (16, 1), "float16", 2, False)
    sub = row.sub((2, 5), (4, 9))
    assert sub.ptr == 1000 + (2 * 16 + 4) * 2 and sub.shape == (3, 5)
    assert sub.lines() == (10, 3, 32)  # 5 elements per line, 3 lines, a row pitch of 16
    assert sub.T.shape == (5, 3) and sub.T.col_major and sub.T.lines() == (10, 3, 32)
    col = fd._Block(0, (10, 6), (1, 12), "bfloat16", 2, True)
    assert col.sub((1, 4), (2, 3)).lines() == (6, 1, 24)
    cai = col.__cuda_array_interface__
    assert cai["typestr"] == "<V2" and cai["descr"] == [("bfloat16", "<V2")]
    assert cai["strides"] == (2, 24) and cai["stream"] is None
    # The GEMM entry reads a block as it reads any array.
    from fastgemm._arrays import as_matrix

    m = as_matrix(sub, "A")
    assert (m.ptr, m.shape, m.strides, m.dtype) == (sub.ptr, (3, 5), (16, 1), "float16")


def test_gemm_argument_checks_before_the_gpu():
    A, B, C = operands("float32")
    with pytest.raises(TypeError, match="one dtype"):
        fd.gemm(A, FakeCuda((12, 8), "float16", ptr=B.__cuda_array_interface__["data"][0]), C)
    with pytest.raises(ValueError, match="do not conform"):
        fd.gemm(A, FakeCuda((11, 8), ptr=B.__cuda_array_interface__["data"][0]), C)
    with pytest.raises(ValueError, match="strategy"):
        fd.gemm(A, B, C, strategy="diagonal")
    with pytest.raises(ValueError, match="must live on one GPU"):  # no device owns these addresses
        fd.gemm(A, B, C)


def test_reserve_sms_nests_and_restores():
    assert fastgemm._C.set_reserved_sms(0) == 0
    with fastgemm.reserve_sms(8):
        with fastgemm.reserve_sms(3):
            assert fastgemm._C.set_reserved_sms(3) == 3
        assert fastgemm._C.set_reserved_sms(8) == 8
    assert fastgemm._C.set_reserved_sms(0) == 0
    with pytest.raises(ValueError, match=">= 0"), fastgemm.reserve_sms(-1):
        pass


def test_multicast_stays_off():
    env = fd.multicast_off_env({"NCCL_NVLS_ENABLE": "1", "PATH": "x"})
    assert env == {
        "NCCL_NVLS_ENABLE": "0",
        "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1",
        "PATH": "x",
    }
    clean = {k: v for k, v in os.environ.items() if k not in fd.MULTICAST_OFF}
    code = "import os, fastgemm.distributed; print([os.environ[k] for k in sorted(fastgemm.distributed.MULTICAST_OFF)])"
    out = subprocess.run([sys.executable, "-c", code], env=clean, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['0', '1', '1']"
    # The library itself never asks for multicast.
    here = Path(fd.__file__).parent
    src = (here / "distributed.py").read_text() + (here / "bench" / "multigpu.py").read_text()
    assert "cuMulticastCreate" not in src.replace('"cuMulticastCreate"', "")


def test_transport_names_and_peer_slots():
    assert fd.TRANSPORTS == ("auto", "symm_mem", "nccl")
    for name in fd.TRANSPORTS:
        fd._check_transport(name)
    with pytest.raises(ValueError, match="transport 'ring'"):
        fd._check_transport("ring")
    # Slots of the peer space start on 512-byte boundaries, so that every dtype's element offset
    # is whole and every copy out of a peer's buffer is aligned.
    for rows, cols, item in [(1, 1, 2), (5, 40, 2), (2048, 8192, 2), (7, 3, 4)]:
        slot = fd._slot(rows, cols, item)
        assert slot % 512 == 0 and rows * cols * item <= slot < rows * cols * item + 512
    space = fd._PeerSpace(None, 1000)
    assert space.half == 1024 and space.calls == 0 and space.last is None


@pytest.mark.parametrize(
    "M,N,K",
    [
        (8192, 8192, 8192),
        (12288, 8192, 8192),
        (6144, 6144, 6144),
        (10240, 10240, 10240),
        (2048, 16384, 8192),  # cut by columns: rows of C.T as it runs
        (4096, 16384, 4096),
        (3000, 12000, 5000),
    ],
)
@pytest.mark.parametrize("devices", [2, 3, 4])
def test_fp32_home_rows_end_on_a_wave(M, N, K, devices):
    """fp32: home's GEMM runs in waves of 128 x 128 tiles (two per SM); its rows (of the problem
    as it runs) fill their last wave, so one more tile row would cost one more wave."""
    sms = 132
    s = fd.plan(M, N, K, devices, 4, sms=sms)
    assert s.plan.strategy in ("rows", "cols") and len(s.plan.pieces) == devices, s
    rows, cols = (N, M) if s.transposed else (M, N)  # pieces are rows of C.T for cols
    home = s.plan.pieces[0].rows[1] - s.plan.pieces[0].rows[0]
    tm, tn, per_sm = fd.WAVES[4]
    per_row, wave = -(-cols // tn), per_sm * sms

    def waves(r):
        return -(-(-(-r // tm) * per_row) // wave)

    assert home % tm == 0 and waves(home + tm) > waves(home), (home, s)
    assert s.home_share == pytest.approx(home / rows)
    # no waves for another kernel at home (sms 0): the even-finish share, not on a wave
    assert fd.plan(M, N, K, devices, 4, sms=0).home_share != s.home_share


def test_fp32_8192_cubed_on_four_gpus_leaves_home_four_waves():
    # 132 SMs: 2048 rows are 1024 tiles (four waves of 264); the share the even-finish model asks
    # for (about 0.29, 2400 rows) would take five.
    s = fd.plan(8192, 8192, 8192, 4, 4, sms=132)
    assert s.plan.strategy == "rows" and s.plan.pieces[0].rows == (0, 2048)


@pytest.mark.parametrize("K", [1, 7, 96, 1000, 1536, 3000, 8192, 16384, 65536])
@pytest.mark.parametrize("itemsize", [2, 4])
@pytest.mark.parametrize("lead", [1, 2, 3])
def test_k_slices_cover_k_on_16_byte_boundaries(K, itemsize, lead):
    for k0 in (0, 64):
        slices = fd._k_slices(k0, k0 + K, itemsize, lead)
        assert slices[0][0] == k0 and slices[-1][1] == k0 + K
        assert all(a < b for a, b in slices)
        q = partition._quantum(itemsize)
        assert all(x[1] == y[0] and (x[1] - k0) % q == 0 for x, y in zip(slices, slices[1:]))
        assert len(slices) <= 64 + lead
        if K >= lead * fd.FIRST_SLICE_K + fd.SLICE_K:  # a short slice per piece, then long ones
            assert all(b - a == fd.FIRST_SLICE_K for a, b in slices[:lead])
            assert all(b - a >= fd.SLICE_K for a, b in slices[lead:])


def test_tail_bands_end_in_a_short_band():
    for rows in (1, 100, 1024, 1025, 2048, 5000):
        bands = fd._tail_bands(10, 10 + rows)
        assert bands[0][0] == 10 and bands[-1][1] == 10 + rows
        assert all(x[1] == y[0] for x, y in zip(bands, bands[1:]))
        if len(bands) == 2:
            assert (bands[0][1] - 10) % fd.TILE_ROWS == 0 and bands[1][1] - bands[1][
                0
            ] < fd.TAIL_ROWS + fd.TILE_ROWS


# --- the whole schedule on the host: a stand-in for CuPy whose copies run at once ---------------


class _HostGPUs:
    """Enough of CuPy for :class:`fd._Run` on host memory, with the GPUs' ordering rules: every
    copy, GEMM, event record and event wait goes into its stream's queue, and :meth:`run` then
    runs the queues in an order drawn from ``seed``: of the queues whose next operation may run
    (its wait met), always the one of highest priority, the priorities drawn at random (the
    host queues the whole call before anything runs, and a low stream runs only when nothing
    else can). A missing wait then shows
    up as a wrong result (fresh memory holds NaN), a wait for an event that is never recorded as
    a deadlock. A wait is for the event's last record queued before it, as on the GPU."""

    def __init__(self, seed):
        import collections
        import contextlib
        import random

        self.rng = random.Random(seed)
        self.current = 0  # CuPy's current stream
        self.queues: dict = collections.defaultdict(collections.deque)
        self.memory: list = []  # kept to the end: queued work may still use what a call released
        gpus = self

        class Stream:
            _ids = itertools.count(1)

            def __init__(self, non_blocking=True):
                self.ptr, self.outer = next(self._ids), []

            def __enter__(self):  # CuPy's current stream: where an array's arithmetic is queued
                self.outer.append(gpus.current)
                gpus.current = self.ptr
                return self

            def __exit__(self, *exc):
                gpus.current = self.outer.pop()
                return False

        class Array:  # an fp32 array over device memory (the K split's sums): `+=` is queued
            def __init__(self, shape, dtype, memptr, strides):
                self.block = fd._Block(memptr, shape, [x // 4 for x in strides], "float32", 4, False)

            def __iadd__(self, other):
                a, b = _view(self.block), _view(other.block)
                gpus.queue(gpus.current, lambda: np.add(a, b, out=a))
                return self

        class Event:
            def __init__(self, block=False, disable_timing=True):
                self.ptr, self.queued, self.done = id(self), 0, 0

        class Mem:
            def __init__(self, nbytes):
                self.buf = np.full(nbytes, 0xFF, dtype=np.uint8)  # NaN in fresh memory
                self.ptr = self.buf.ctypes.data
                gpus.memory.append(self)

        events: dict = {}

        class Runtime:
            CUDARuntimeError = RuntimeError

            @staticmethod
            def memcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream):
                import ctypes

                def copy():
                    for r in range(height):
                        ctypes.memmove(dst + r * dpitch, src + r * spitch, width)

                gpus.queues[stream].append((copy, None))

            @staticmethod
            def eventRecord(ev, stream):
                event = events[ev]
                event.queued += 1
                gpus.queues[stream].append((lambda: setattr(event, "done", event.done + 1), None))

            @staticmethod
            def streamWaitEvent(stream, ev, flags):
                event = events[ev]
                if event.queued:
                    gpus.queues[stream].append((None, (event, event.queued)))

            @staticmethod
            def deviceCanAccessPeer(a, b):
                return 1

            @staticmethod
            def deviceEnablePeerAccess(peer):
                pass

            @staticmethod
            def deviceSynchronize():
                pass

            @staticmethod
            def getDevice():
                return 0

            @staticmethod
            def memsetAsync(ptr, value, size, stream):
                import ctypes

                gpus.queues[stream].append((lambda: ctypes.memset(ptr, value, size), None))

        def event(block=False, disable_timing=True):
            e = Event()
            events[e.ptr] = e
            return e

        self.cuda = type(
            "cuda",
            (),
            {
                "Stream": Stream,
                "Event": staticmethod(event),
                "runtime": Runtime,
                "alloc": staticmethod(Mem),
                "Device": staticmethod(lambda d: contextlib.nullcontext()),
                "UnownedMemory": staticmethod(lambda ptr, size, owner: ptr),
                "MemoryPointer": staticmethod(lambda mem, offset: mem + offset),
            },
        )
        self.ndarray = lambda shape, dtype, memptr, strides: Array(shape, dtype, memptr, strides)
        self.float32 = np.float32

    def queue(self, stream, work):
        self.queues[stream].append((work, None))

    def run(self):
        def ready(op):
            if callable(op[1]):  # a gated GEMM: its flags
                return op[1]()
            return op[1] is None or op[1][0].done >= op[1][1]

        rank = {s: self.rng.random() for s in self.queues}  # the streams' priorities, this run's
        while any(self.queues.values()):
            heads = [s for s, q in self.queues.items() if q and ready(q[0])]
            assert heads, "deadlock: every stream waits for an event that is never recorded"
            work, _ = self.queues[max(heads, key=rank.__getitem__)].popleft()
            if work is not None:
                work()


_NP = {"float32": np.float32, "float16": np.float16}


def _view(blk):
    import ctypes

    if 0 in blk.shape:
        return np.zeros(blk.shape, _NP[blk.dtype])
    span = ((blk.shape[0] - 1) * blk.strides[0] + (blk.shape[1] - 1) * blk.strides[1] + 1) * blk.itemsize
    raw = (ctypes.c_char * span).from_address(blk.ptr)
    strides = tuple(s * blk.itemsize for s in blk.strides)
    return np.ndarray(blk.shape, _NP[blk.dtype], buffer=raw, strides=strides)


def _host_gemm(self, a, b, c, beta, stream):
    def gemm():
        out = _view(c)
        acc = self.alpha * (_view(a).astype(np.float64) @ _view(b).astype(np.float64))
        if beta:
            acc += beta * out.astype(np.float64)
        out[...] = acc.astype(out.dtype)

    self.cp.queue(stream, gemm)


class _HostGatedKernel:
    """``fastgemm._C``'s gated GEMM and flag writes on host memory: the GEMM runs (in numpy) once
    every flag it reads holds all of its slices, a flag write sets the int32."""

    def __init__(self, cp):
        self.cp = cp

    @staticmethod
    def _int(ptr):
        import ctypes

        return ctypes.c_int32.from_address(ptr)

    def _gemm_gated(
        self,
        dtype,
        M,
        N,
        K,
        A,
        lda,
        a_col,
        B,
        ldb,
        b_col,
        C,
        ldc,
        alpha,
        flag_a,
        flags_b,
        chunk_cols,
        slice_k,
        timeout_ms,
        stream,
        device,
    ):
        def block(ptr, shape, ld, col):
            return fd._Block(ptr, shape, (1, ld) if col else (ld, 1), dtype, 2, col)

        a, b, c = block(A, (M, K), lda, a_col), block(B, (K, N), ldb, b_col), block(C, (M, N), ldc, False)
        acc = np.zeros((M, N))
        # a product per slice of K and chunk of B's columns, each once its two flags say it is in
        for j in range(-(-K // slice_k)):
            for q in range(-(-N // chunk_cols)):
                ks, cs = slice(j * slice_k, (j + 1) * slice_k), slice(q * chunk_cols, (q + 1) * chunk_cols)

                def landed(j=j, q=q):
                    return self._int(flag_a).value > j and self._int(flags_b + 4 * q).value > j

                def part(ks=ks, cs=cs):
                    acc[:, cs] += _view(a)[:, ks].astype(np.float64) @ _view(b)[ks, cs].astype(np.float64)

                self.cp.queues[stream].append((part, landed))
        self.cp.queue(stream, lambda: _view(c).__setitem__(Ellipsis, (alpha * acc).astype(np.float16)))

    def _write_flag(self, stream, flag, value, device):
        def write():
            assert self._int(flag).value < value, "a flag only grows"
            self._int(flag).value = value

        self.cp.queue(stream, write)


@pytest.mark.parametrize(
    "dtype, sliced, strategy",
    [
        (d, s, w)
        for d, s in (("float32", True), ("float32", False), ("float16", False), ("float16", True))
        for w in ("rows", "cols", "grid")
    ]
    + [("float32", True, "k")],
)
@pytest.mark.parametrize("devices", [2, 3, 4])
def test_schedule_on_the_host_matches_the_reference(
    small_chunks, monkeypatch, dtype, strategy, devices, sliced
):
    """Every remote piece's inputs, bands, chunks and K slices, relayed or not, land where its
    GEMMs read them before they read them, and every result lands in its place in C: the whole
    schedule run on the host (:class:`_HostGPUs`, GEMMs in numpy) in several orders that the
    GPUs' ordering rules allow, against a float64 reference. float16 "sliced": the gated pieces
    (:class:`_HostGatedKernel`, each GEMM run once its flags say its inputs are in)."""
    monkeypatch.setattr(fd, "_streams", {})
    monkeypatch.setattr(fd, "_peers", set())
    monkeypatch.setattr(fd._Run, "gemm", _host_gemm)
    monkeypatch.setattr(fd, "SLICES", sliced)
    gated = dtype == "float16" and sliced
    monkeypatch.setattr(fd, "GATED", gated)
    if gated:  # the first round by slices, the other chunks whole
        monkeypatch.setattr(fd, "SMS", 1)
    rng = np.random.default_rng(7)
    itemsize = np.dtype(_NP[dtype]).itemsize
    for (M, N, K), orders, relay, (alpha, beta) in zip(
        [(200, 328, 96), (131, 264, 160), (256, 160, 520), (96, 120, 20)],  # the last: one K slice
        ["CCC", "FCC", "CFC", "FFC"] if gated else ["CCC", "FCF", "CFC", "CCC"],
        [True, False, True, True],
        [(1.0, 0.0), (0.75, -0.5), (1.5, 1.0), (1.0, 0.5)],
    ):
        monkeypatch.setattr(fd, "RELAY", relay)
        if gated:  # gated pieces only where beta is 0
            beta = 0.0
        mats = [rng.standard_normal(s).astype(_NP[dtype]) for s in ((M, K), (K, N), (M, N))]
        mats = [np.asfortranarray(m) if o == "F" else m for m, o in zip(mats, orders)]
        A, B, C = mats
        if beta == 0:
            C.fill(np.nan)
        ref = alpha * (A.astype(np.float64) @ B.astype(np.float64)) + (
            beta * C.astype(np.float64) if beta else 0
        )
        spread = fd.plan(M, N, K, devices, itemsize, beta != 0, strategy, sms=0, gated=gated)
        assert len(spread.plan.pieces) == devices
        blocks = [
            fd._Block(
                m.ctypes.data,
                m.shape,
                (m.strides[0] // itemsize, m.strides[1] // itemsize),
                dtype,
                itemsize,
                o == "F",
            )
            for m, o in zip(mats, orders)
        ]
        if spread.transposed:
            blocks = [blocks[1].T, blocks[0].T, blocks[2].T]
        C0 = C.copy()
        for seed in range(4):
            C[...] = C0
            cp = _HostGPUs(seed)
            monkeypatch.setattr(fd, "_streams", {})
            fg = type("fg", (), {"_C": _HostGatedKernel(cp)})
            fd._Run(cp, fg, list(range(devices)), 0, "auto", "ieee", alpha, beta, gated).start(
                *blocks, spread.plan
            )
            seen = {}  # what the caller's next work on its stream (0) reads
            cp.queue(0, lambda seen=seen, C=C: seen.setdefault("C", C.copy()))
            cp.run()
            err = np.linalg.norm(seen["C"].astype(np.float64) - ref) / np.linalg.norm(ref)
            assert err <= (2e-6 if dtype == "float32" else 2e-3), (M, N, K, seed, err)
