"""The host board of fastgemm.distributed (csrc/board.h): a few integers exchanged between
processes through a shared page, CPU only."""

from __future__ import annotations

import mmap
import multiprocessing as mp
import random
import time

import pytest

from fastgemm import _C


def _page(mapping: mmap.mmap) -> int:
    import ctypes

    return ctypes.addressof(ctypes.c_char.from_buffer(mapping))


def _rank(mapping, ranks, rank, rounds, seed, out) -> None:
    rng = random.Random(seed * 1000 + rank)
    page = _page(mapping)
    seen = []
    for seq in range(1, rounds + 1):
        if rng.random() < 0.1:
            time.sleep(rng.random() * 1e-3)  # ranks arrive out of step
        values = [seq, rank, *range(rank % 5)]
        seen.append(_C.board_exchange(page, ranks, rank, seq, values, 20_000))
    out.put((rank, seen))


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_every_rank_sees_every_rank_values_of_each_exchange(ranks):
    mapping = mmap.mmap(-1, _C.board_bytes(ranks))  # anonymous and shared: inherited by fork
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    rounds = 300
    procs = [ctx.Process(target=_rank, args=(mapping, ranks, r, rounds, 7, out)) for r in range(ranks)]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    for rank in range(ranks):
        for seq, rows in enumerate(results[rank], start=1):
            assert rows == [[seq, r, *range(r % 5)] for r in range(ranks)], (rank, seq)


def test_a_missing_rank_times_out_with_its_name():
    mapping = mmap.mmap(-1, _C.board_bytes(3))
    page = _page(mapping)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"rank\(s\) 1, 2 did not reach the argument check within 200 ms"):
        _C.board_exchange(page, 3, 0, 1, [5], 200)
    assert time.monotonic() - start < 5


def test_a_rank_that_gave_up_breaks_every_later_exchange():
    # Rank 1 times out waiting for rank 0 and marks the page; rank 0, arriving late, and rank 1
    # again both fail at once instead of pairing their calls with the abandoned one.
    mapping = mmap.mmap(-1, _C.board_bytes(2))
    page = _page(mapping)
    with pytest.raises(RuntimeError, match="did not reach"):
        _C.board_exchange(page, 2, 1, 1, [1], 100)
    for rank, seq in ((0, 1), (1, 2)):
        start = time.monotonic()
        with pytest.raises(RuntimeError, match="rank 1 gave up waiting"):
            _C.board_exchange(page, 2, rank, seq, [1], 20_000)
        assert time.monotonic() - start < 1


@pytest.mark.parametrize(
    "args, match",
    [
        ((3, 3, 1, [1]), "rank 3 of 3"),
        ((2, 0, 0, [1]), "numbered from 1"),
        ((2, 0, 1, list(range(16))), "at most 15 values"),
    ],
)
def test_bad_arguments_are_refused(args, match):
    mapping = mmap.mmap(-1, _C.board_bytes(4))
    with pytest.raises(ValueError, match=match):
        _C.board_exchange(_page(mapping), *args, 100)
