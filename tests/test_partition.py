"""CPU tests of the multi-GPU partitioning arithmetic (fastgemm.partition): every shape, device
count and dtype covers C (and, for a K split, every K index of every output) exactly once, with
aligned boundaries, and the chosen way moves no more bytes than any other."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fastgemm import partition
from fastgemm.partition import STRATEGIES, Piece, bytes_moved, check_devices, plan, split_range

ITEMSIZES = {"float32": 4, "float16": 2, "bfloat16": 2}


@pytest.mark.parametrize("quantum", [1, 4, 8])
def test_split_range_properties(quantum):
    for n, parts in itertools.product(range(70), range(1, 10)):
        ranges = split_range(n, parts, quantum)
        if n == 0:
            assert ranges == []
            continue
        units = -(-n // quantum)
        assert len(ranges) == min(parts, units), (n, parts, quantum)
        assert ranges[0][0] == 0 and ranges[-1][1] == n
        for (a, b), (c, _) in zip(ranges, ranges[1:]):
            assert b == c and b % quantum == 0, (n, parts, quantum, ranges)
        sizes = [b - a for a, b in ranges]
        assert min(sizes) > 0
        inner = sizes[:-1] or sizes  # the last range may end on a partial quantum
        assert max(inner) - min(inner) <= quantum, (n, parts, quantum, ranges)


def test_split_range_rejects_bad_arguments():
    with pytest.raises(ValueError, match="must be positive"):
        split_range(10, 0)
    with pytest.raises(ValueError, match="must be positive"):
        split_range(10, 2, 0)


def _coverage(M, N, K, pieces):
    """How many pieces cover each (i, j, k) of the M x N x K iteration space."""
    count = np.zeros((M, N, K), dtype=np.int32)
    for p in pieces:
        count[p.rows[0] : p.rows[1], p.cols[0] : p.cols[1], p.ks[0] : p.ks[1]] += 1
    return count


def _check_aligned(pieces, M, N, K, itemsize):
    q = 16 // itemsize
    for p in pieces:
        assert 0 <= p.rows[0] < p.rows[1] <= M and 0 <= p.cols[0] < p.cols[1] <= N, p
        assert 0 <= p.ks[0] <= p.ks[1] <= K, p
        for lo, hi, end in ((p.rows[0], p.rows[1], M), (p.cols[0], p.cols[1], N), (p.ks[0], p.ks[1], K)):
            assert lo % q == 0 and (hi % q == 0 or hi == end), (p, itemsize)
    assert sorted(p.device for p in pieces) == list(range(len(pieces)))  # devices 0.., once each


SMALL = [(1, 1, 1), (1, 3, 5), (7, 9, 13), (16, 40, 24), (33, 17, 64), (40, 8, 3), (5, 64, 40)]


@pytest.mark.parametrize("dtype", sorted(ITEMSIZES))
@pytest.mark.parametrize("devices", [1, 2, 3, 4, 6, 8])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_covers_c_exactly_once(dtype, devices, strategy):
    itemsize = ITEMSIZES[dtype]
    for M, N, K in SMALL:
        pl = plan(M, N, K, devices, itemsize, strategies=[strategy])
        assert 1 <= len(pl.pieces) <= devices
        assert (_coverage(M, N, K, pl.pieces) == 1).all(), (M, N, K, pl)
        _check_aligned(pl.pieces, M, N, K, itemsize)
        assert pl.bytes_moved == bytes_moved(pl.strategy, pl.pieces, itemsize, False)


@pytest.mark.parametrize("beta_nonzero", [False, True])
@pytest.mark.parametrize("devices", [2, 3, 4, 8])
def test_plan_moves_the_fewest_bytes(devices, beta_nonzero):
    shapes = [
        (16384, 16384, 16384),
        (8192, 8192, 8192),
        (1024, 1024, 65536),
        (16, 4096, 14336),
        (8192, 28672, 8192),
        (8192, 64, 8192),
        (4095, 4097, 4099),
    ]
    for (M, N, K), itemsize in itertools.product(shapes, (2, 4)):
        best = plan(M, N, K, devices, itemsize, beta_nonzero)
        for strategy in STRATEGIES:
            other = plan(M, N, K, devices, itemsize, beta_nonzero, strategies=[strategy])
            assert best.bytes_moved <= other.bytes_moved, (M, N, K, best.strategy, strategy)
        # Large shapes: the pieces tile C (areas add up, no two overlap) and K is whole or split.
        area = sum((p.rows[1] - p.rows[0]) * (p.cols[1] - p.cols[0]) for p in best.pieces)
        if best.strategy == "k":
            assert all(p.rows == (0, M) and p.cols == (0, N) for p in best.pieces)
            assert sum(p.ks[1] - p.ks[0] for p in best.pieces) == K
        else:
            assert area == M * N and all(p.ks == (0, K) for p in best.pieces)
            for a, b in itertools.combinations(best.pieces, 2):
                rows = min(a.rows[1], b.rows[1]) > max(a.rows[0], b.rows[0])
                cols = min(a.cols[1], b.cols[1]) > max(a.cols[0], b.cols[0])
                assert not (rows and cols), (a, b)
        _check_aligned(best.pieces, M, N, K, itemsize)


def test_plan_choices_on_known_shapes():
    # Square, 2 GPUs: a band of rows (ties with columns; rows listed first). Deep K: a K split
    # (A and B halves out, fp32 partial C back). Decode: half of B to the other GPU, by K.
    # Four GPUs on a large square: a 2 x 2 grid moves less than four bands.
    assert plan(16384, 16384, 16384, 2, 2).strategy == "rows"
    assert plan(1024, 1024, 65536, 2, 2).strategy == "k"
    # (A K split moves the same half of B plus half of the small A instead of all of it.)
    assert plan(16, 4096, 14336, 2, 2).strategy == "k"
    assert plan(16384, 16384, 16384, 4, 2).strategy == "grid"
    # Bytes for the square on 2 GPUs: device 1 gets half of A and all of B, returns half of C.
    n = 16384
    assert plan(n, n, n, 2, 2).bytes_moved == 2 * (n // 2 * n + n * n + n // 2 * n)


def test_plan_one_device_or_empty_moves_nothing():
    for args in [(100, 200, 300, 1, 4), (0, 200, 300, 4, 2), (100, 0, 300, 4, 2)]:
        pl = plan(*args)
        assert pl.bytes_moved == 0 and len(pl.pieces) == 1 and pl.pieces[0].device == 0
    pl = plan(10, 20, 0, 2, 4)  # K = 0: C = beta * C, split by rows or columns, no K split
    assert (
        pl.strategy != "k"
        and (_coverage(10, 20, 1, [Piece(p.device, p.rows, p.cols, (0, 1)) for p in pl.pieces]) == 1).all()
    )


def test_plan_rejects_bad_arguments():
    with pytest.raises(ValueError, match="M = -1"):
        plan(-1, 2, 3, 2, 4)
    with pytest.raises(ValueError, match="devices = 0"):
        plan(1, 2, 3, 0, 4)
    with pytest.raises(ValueError, match="itemsize 8"):
        plan(1, 2, 3, 2, 8)
    with pytest.raises(ValueError, match="strategies"):
        plan(1, 2, 3, 2, 4, strategies=["diagonal"])


def test_check_devices():
    assert check_devices([0, 1], 2) == [0, 1]
    assert check_devices((1,), 4) == [1]
    with pytest.raises(ValueError, match="empty"):
        check_devices([], 2)
    with pytest.raises(ValueError, match=r"\[1\] appear more than once"):
        check_devices([0, 1, 1], 2)
    with pytest.raises(ValueError, match=r"\[2\] do not exist \(this machine has 2 GPU"):
        check_devices([0, 2], 2)
    with pytest.raises(ValueError, match="do not exist"):
        check_devices([-1], 2)


def test_module_documents_its_strategies():
    doc = partition.__doc__ or ""
    for strategy in STRATEGIES:
        assert f"``{strategy}``" in doc, strategy


@pytest.mark.parametrize("strategy", ["rows", "cols", "grid", "k"])
@pytest.mark.parametrize("devices", [2, 3, 4, 6])
def test_relay_sends_a_shared_band_from_home_once(strategy, devices):
    # With relay, a band of A rows (B columns) that several remote pieces share is counted once;
    # bands only one piece needs, and the results coming back, are counted as before.
    M, N, K, itemsize = 1000, 776, 520, 2
    pl = plan(M, N, K, devices, itemsize, strategies=[strategy])
    plain = bytes_moved(strategy, pl.pieces, itemsize, False)
    relayed = bytes_moved(strategy, pl.pieces, itemsize, False, relay=True)
    remote = [p for p in pl.pieces if p.device != 0]
    a_once = {(p.rows, p.ks): (p.rows[1] - p.rows[0]) * (p.ks[1] - p.ks[0]) for p in remote}
    b_once = {(p.ks, p.cols): (p.ks[1] - p.ks[0]) * (p.cols[1] - p.cols[0]) for p in remote}
    back = sum((p.rows[1] - p.rows[0]) * (p.cols[1] - p.cols[0]) for p in remote)
    back *= 4 if strategy == "k" else itemsize
    assert relayed == itemsize * (sum(a_once.values()) + sum(b_once.values())) + back
    assert relayed <= plain
    if strategy == "rows" and devices > 2:  # all of B leaves home once, not once per device
        assert plain - relayed == (devices - 2) * itemsize * K * N
    best = plan(M, N, K, devices, itemsize, strategies=[strategy], relay=True)  # may pick another grid
    assert best.bytes_moved == bytes_moved(strategy, best.pieces, itemsize, False, relay=True) <= relayed
