"""CPU-only checks of the shared-memory swizzle of the tensor-core kernels (common/swizzle.cuh).

``fastgemm._C.swizzle_chunk(chunks_per_row, row, chunk)`` is the same constexpr function that the
HGEMM copies (writers) and ldmatrix (readers) use; here it is checked against a small model of
shared memory:

* 32 banks of 4 bytes; a 16-byte chunk at byte address ``a`` occupies banks ``(a/4) % 32`` to
  ``(a/4) % 32 + 3``, and a set of 16-byte accesses that touches 32 distinct banks is served in one
  wavefront (no conflict);
* a tile is row-major, ``chunks_per_row`` 16-byte chunks per row, and logical chunk ``c`` of row
  ``r`` lives at physical chunk ``swizzle_chunk(chunks_per_row, r, c)`` of that row;
* ldmatrix reads, per 8x8 matrix, one chunk from each of 8 consecutive rows (starting at a multiple
  of 8) at one logical chunk column;
* the 16-byte copies deal chunks in row-major order (chunk ``c`` -> row ``c // chunks_per_row``,
  column ``c % chunks_per_row``), a warp 32 consecutive chunks at a time, and a 16-byte store is
  served one quarter-warp (8 lanes) at a time.

Widths: 4 chunks = 64-byte rows (K-major tiles with BLOCK_K = 32), 8 = 128 bytes, 16 = 256 bytes
(MN-major tiles 128 wide), 32 = 512 bytes (MN-major B tiles 256 wide).
"""

from __future__ import annotations

from collections import Counter

import pytest

from fastgemm import _C

WIDTHS = (4, 8, 16, 32)
ROWS = 64
BANKS, BANK_BYTES, CHUNK = 32, 4, 16


def swizzled(chunks: int, row: int, chunk: int) -> int:
    return _C.swizzle_chunk(chunks, row, chunk)


def identity(chunks: int, row: int, chunk: int) -> int:
    return chunk


# --- the bank model ----------------------------------------------------------------------------


def chunk_banks(addr: int) -> list[int]:
    """The 4 banks a 16-byte access at byte address ``addr`` touches."""
    assert addr % CHUNK == 0, addr
    first = (addr // BANK_BYTES) % BANKS
    return [(first + i) % BANKS for i in range(CHUNK // BANK_BYTES)]


def byte_address(chunks: int, row: int, chunk: int, layout=swizzled, pitch: int | None = None) -> int:
    """Byte address of logical chunk ``chunk`` of ``row`` in a tile of ``chunks`` chunks per row."""
    pitch = chunks * CHUNK if pitch is None else pitch
    return row * pitch + layout(chunks, row, chunk) * CHUNK


def max_multiplicity(addrs) -> int:
    """Most accesses that share one bank: 1 = conflict-free, n = an n-way conflict."""
    counts = Counter(b for a in addrs for b in chunk_banks(a))
    return max(counts.values())


def distinct_banks(addrs) -> int:
    return len({b for a in addrs for b in chunk_banks(a)})


def ldmatrix_groups(chunks: int, rows: int = ROWS):
    """(row0, column, [8 rows' chunk coordinates]) for every 8x8 matrix ldmatrix can read."""
    for row0 in range(0, rows, 8):
        for col in range(chunks):
            yield row0, col, [(row0 + r, col) for r in range(8)]


def store_quarters(chunks: int, rows: int = ROWS):
    """(warp, quarter, [8 chunk coordinates]) as the row-major copy loop deals chunks to lanes."""
    total = rows * chunks
    assert total % 32 == 0
    for w in range(0, total, 32):
        for q in range(4):
            lanes = range(w + 8 * q, w + 8 * q + 8)
            yield w // 32, q, [(c // chunks, c % chunks) for c in lanes]


# --- the model itself --------------------------------------------------------------------------


def test_bank_model():
    assert chunk_banks(0) == [0, 1, 2, 3]
    assert chunk_banks(16) == [4, 5, 6, 7]
    assert chunk_banks(112) == [28, 29, 30, 31]
    assert chunk_banks(128) == [0, 1, 2, 3]
    assert chunk_banks(64 * 3 + 16) == [20, 21, 22, 23]
    # Eight chunks of one 128-byte line: every bank once. Two chunks 128 bytes apart: a conflict.
    assert distinct_banks(range(0, 128, 16)) == 32 and max_multiplicity(range(0, 128, 16)) == 1
    assert max_multiplicity([0, 128]) == 2 and max_multiplicity([0, 256, 512, 1024]) == 4


# --- the swizzle: a permutation of each row ----------------------------------------------------


@pytest.mark.parametrize("chunks", WIDTHS)
def test_bijection_per_row(chunks):
    for row in range(ROWS):
        phys = [swizzled(chunks, row, c) for c in range(chunks)]
        assert sorted(phys) == list(range(chunks)), (chunks, row, phys)


@pytest.mark.parametrize("chunks", WIDTHS)
def test_bijection_over_the_tile(chunks):
    # Hence no two logical chunks of a tile share a physical one, and the tile fills its footprint.
    addrs = {byte_address(chunks, r, c) for r in range(ROWS) for c in range(chunks)}
    assert addrs == set(range(0, ROWS * chunks * CHUNK, CHUNK))


@pytest.mark.parametrize("chunks", WIDTHS)
def test_swizzle_is_periodic_in_rows(chunks):
    # The pattern repeats every 8 rows' worth of 128-byte lines: a tile is many identical groups.
    period = 8 * max(1, 8 // chunks)
    for row in range(ROWS):
        for c in range(chunks):
            assert swizzled(chunks, row, c) == swizzled(chunks, row % period, c)


# --- ldmatrix: 8 rows at one logical chunk column ----------------------------------------------


@pytest.mark.parametrize("chunks", WIDTHS)
def test_ldmatrix_conflict_free(chunks):
    for row0, col, coords in ldmatrix_groups(chunks):
        addrs = [byte_address(chunks, r, c) for r, c in coords]
        assert distinct_banks(addrs) == 32, (
            f"{chunks} chunks/row, rows {row0}-{row0 + 7}, chunk {col}: "
            f"{max_multiplicity(addrs)}-way conflict at {addrs}"
        )


@pytest.mark.parametrize("chunks, ways", [(4, 4), (8, 8), (16, 8), (32, 8)])
def test_ldmatrix_identity_layout_conflicts(chunks, ways):
    # The model catches conflicts: without the swizzle, 64-byte rows put the 8 rows into 2 slots
    # (4-way), rows of 128 bytes or more all into one slot (8-way).
    worst = max(
        max_multiplicity([byte_address(chunks, r, c, identity) for r, c in coords])
        for _, _, coords in ldmatrix_groups(chunks)
    )
    assert worst == ways
    every = {
        max_multiplicity([byte_address(chunks, r, c, identity) for r, c in coords])
        for _, _, coords in ldmatrix_groups(chunks)
    }
    assert every == {ways}  # every matrix, not just one


@pytest.mark.parametrize("chunks", WIDTHS)
def test_ldmatrix_padded_layout_conflict_free(chunks):
    # Smem::padded (hgemm.cuh): rows of the same chunks plus 16 bytes, chunks not permuted.
    pitch = chunks * CHUNK + CHUNK
    for row0, col, coords in ldmatrix_groups(chunks):
        addrs = [byte_address(chunks, r, c, identity, pitch) for r, c in coords]
        assert distinct_banks(addrs) == 32, (chunks, row0, col, addrs)


# --- the copies: 16-byte stores, a quarter-warp at a time --------------------------------------


@pytest.mark.parametrize("chunks", WIDTHS)
def test_stores_conflict_free(chunks):
    for warp, q, coords in store_quarters(chunks):
        addrs = [byte_address(chunks, r, c) for r, c in coords]
        assert distinct_banks(addrs) == 32, (
            f"{chunks} chunks/row, warp {warp}, quarter {q} ({coords}): "
            f"{max_multiplicity(addrs)}-way conflict"
        )


@pytest.mark.parametrize("chunks", WIDTHS)
def test_stores_identity_layout_conflict_free(chunks):
    # Row-major dealing makes plain rows conflict-free for the stores already: the swizzle is
    # for the readers, and must not break the writers.
    for _, _, coords in store_quarters(chunks):
        assert distinct_banks([byte_address(chunks, r, c, identity) for r, c in coords]) == 32


@pytest.mark.parametrize("chunks, ways", [(4, 2), (8, 1), (16, 1), (32, 1)])
def test_stores_padded_layout(chunks, ways):
    # Padding (v03) fixes ldmatrix but not every store: with 64-byte rows a quarter-warp stores
    # two rows 80 bytes apart, and row r+1's last chunk wraps onto row r's first bank group.
    # The swizzle (v04) is conflict-free for both.
    pitch = chunks * CHUNK + CHUNK
    worst = max(
        max_multiplicity([byte_address(chunks, r, c, identity, pitch) for r, c in coords])
        for _, _, coords in store_quarters(chunks)
    )
    assert worst == ways


# --- the XOR pointer stepping of v08/v09 relies on these ---------------------------------------


def test_xor_step_k_major():
    # K-major tiles (BLOCK_K = 32: 4 chunks): the k-step kk chunk is (kk = 0 chunk, 0 or 1) + 2kk,
    # and its physical chunk is the kk = 0 one XOR 2kk.
    chunks = 4
    for row in range(ROWS):
        for c0 in (0, 1):
            for kk in range(chunks // 2):
                assert swizzled(chunks, row, c0 + 2 * kk) == swizzled(chunks, row, c0) ^ (2 * kk)


@pytest.mark.parametrize("chunks", (16, 32))
def test_xor_step_mn_major(chunks):
    # MN-major tiles move 16 rows per k-step: the swizzle of a chunk does not change.
    for row in range(ROWS - 16):
        for c in range(chunks):
            assert swizzled(chunks, row + 16, c) == swizzled(chunks, row, c)


# --- the binding -------------------------------------------------------------------------------


@pytest.mark.parametrize("chunks", [0, 3, 5, 6, 7, 12, 24, 64, -4])
def test_unsupported_width(chunks):
    assert swizzled(chunks, 0, 0) == -1
    assert swizzled(chunks, 5, 1) == -1


@pytest.mark.parametrize("chunks", (1, 2))
def test_narrow_rows_are_valid_permutations(chunks):
    # Widths below 4 are supported too (identity-like permutations of 1 or 2 chunks).
    for row in range(ROWS):
        assert sorted(swizzled(chunks, row, c) for c in range(chunks)) == list(range(chunks))


def test_formula():
    # The documented form: chunk ^ ((row / max(1, 8 / chunks)) % min(chunks, 8)).
    for chunks in (1, 2, 4, 8, 16, 32):
        per_line = max(1, 8 // chunks)
        for row in range(ROWS):
            for c in range(chunks):
                assert swizzled(chunks, row, c) == c ^ ((row // per_line) % min(chunks, 8))


def test_keyword_arguments():
    assert _C.swizzle_chunk(chunks_per_row=8, row=3, chunk=1) == 1 ^ 3
