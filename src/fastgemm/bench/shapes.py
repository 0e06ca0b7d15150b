"""Shapes and their operands: the default and ``--quick`` shape sets, ``--sizes`` / ``--shapes``
parsing, the input sets a shape is timed on (random-normal CuPy buffers, rows optionally padded,
rotated so that together they exceed the L2 cache), the float64 reference and the error against it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_SIZES = (1024, 2048, 4096, 8192)
QUICK_SIZES = (1024, 2048)

L2_FACTOR = 3  # input sets rotate until together they are >= L2_FACTOR x L2
MAX_INPUT_SETS = 64
ROW_ALIGN_BYTES = 16  # leading dimensions are padded to this (the widest alignment any rung needs)

Shape = tuple  # (M, N, K)


def _positive_int(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{what}: '{text}' is not an integer") from None
    if value <= 0:
        raise ValueError(f"{what}: {value} must be positive")
    return value


def parse_shapes(sizes: str | None, shapes: str | None, quick: bool = False) -> list[Shape]:
    """--sizes 1024,2048 (squares) and --shapes 4095x4097x4099,16x4096x4096 (MxNxK), in order,
    duplicates dropped. Neither: the default squares (or the quick ones)."""
    out: list[Shape] = []
    if sizes:
        for item in sizes.split(","):
            if item.strip():
                n = _positive_int(item.strip(), "--sizes")
                out.append((n, n, n))
    if shapes:
        for item in shapes.split(","):
            item = item.strip().lower().replace("*", "x")
            if not item:
                continue
            parts = item.split("x")
            if len(parts) != 3:
                raise ValueError(f"--shapes: '{item}' is not MxNxK")
            out.append(tuple(_positive_int(p, "--shapes") for p in parts))
    if not out:
        out = [(n, n, n) for n in (QUICK_SIZES if quick else DEFAULT_SIZES)]
    return list(dict.fromkeys(out))  # duplicates dropped, order kept


@dataclass
class InputSet:
    A: Any
    B: Any
    C: Any
    lda: int
    ldb: int
    ldc: int


def padded_ld(cols: int, itemsize: int, align_bytes: int) -> int:
    """Smallest leading dimension >= cols whose row size is a multiple of align_bytes."""
    if align_bytes <= itemsize:
        return cols
    q = align_bytes // itemsize
    return -(-cols // q) * q


def set_bytes(M: int, N: int, K: int, itemsize: int, align_bytes: int) -> int:
    return itemsize * (
        M * padded_ld(K, itemsize, align_bytes)
        + K * padded_ld(N, itemsize, align_bytes)
        + M * padded_ld(N, itemsize, align_bytes)
    )


def count_input_sets(bytes_per_set: int, l2_bytes: int) -> int:
    """How many independent input sets keep the L2 from holding them (1 when one set is big)."""
    if l2_bytes <= 0 or bytes_per_set >= L2_FACTOR * l2_bytes:
        return 1
    return max(2, min(MAX_INPUT_SETS, math.ceil(L2_FACTOR * l2_bytes / bytes_per_set)))


def resolve_dtype(cp: Any, dtype: str) -> Any:
    """The numpy dtype CuPy uses for `dtype`; raises if this CuPy cannot hold it."""
    import numpy as np

    if dtype == "bfloat16":
        try:
            import ml_dtypes

            dt = np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            raise RuntimeError("bfloat16 needs the ml_dtypes package and a CuPy that supports it") from None
        cp.zeros(2, dtype=np.float32).astype(dt).astype(np.float64)  # probe: raises if unsupported
        return dt
    return np.dtype(dtype)


def make_inputs(
    cp: Any, np_dtype: Any, M: int, N: int, K: int, n_sets: int, seed: int, align_bytes: int
) -> list[InputSet]:
    """n_sets independent random-normal (A, B) pairs with an output buffer each; rows padded to
    align_bytes (views of the logical shape over the padded storage)."""
    itemsize = np_dtype.itemsize
    rng = cp.random.default_rng(seed)

    def matrix(rows: int, cols: int, fill_random: bool) -> tuple[Any, int]:
        ld = padded_ld(cols, itemsize, align_bytes)
        if fill_random:
            base = rng.standard_normal((rows, ld), dtype=cp.float32)
            if base.dtype != np_dtype:
                base = base.astype(np_dtype)
        else:
            base = cp.empty((rows, ld), dtype=np_dtype)
        return (base if ld == cols else base[:, :cols]), ld

    sets = []
    for _ in range(n_sets):
        A, lda = matrix(M, K, True)
        B, ldb = matrix(K, N, True)
        C, ldc = matrix(M, N, False)
        sets.append(InputSet(A, B, C, lda, ldb, ldc))
    return sets


def reference(cp: Any, s: InputSet) -> tuple[Any, float]:
    """float64 product of the set's inputs and its Frobenius norm."""
    a64 = s.A.astype(cp.float64)
    b64 = s.B.astype(cp.float64)
    ref = cp.matmul(a64, b64)
    del a64, b64
    return ref, float(cp.linalg.norm(ref))


def relative_error(cp: Any, C: Any, ref: Any, ref_norm: float) -> float:
    diff = C.astype(cp.float64)
    diff -= ref
    err = float(cp.linalg.norm(diff))
    return err / ref_norm if ref_norm > 0 else err


Launch = Callable[[InputSet], Any]  # one call of a candidate on one input set


def operand_alignment(s: InputSet, itemsize: int, cap: int = ROW_ALIGN_BYTES) -> int:
    """Largest power of two (<= cap) dividing every base address and row size of the set."""
    values = [s.A.data.ptr, s.B.data.ptr, s.C.data.ptr, s.lda * itemsize, s.ldb * itemsize, s.ldc * itemsize]
    align = cap
    while align > 1 and any(v % align for v in values):
        align //= 2
    return align
