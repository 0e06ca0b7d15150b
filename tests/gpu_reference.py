"""Reference checks for GPU tests: float64 products on the GPU and error bounds tied to precision."""

from __future__ import annotations

import numpy as np

# Unit roundoff of the accumulation precision (fp32 accumulators for every kernel).
UNIT_ROUNDOFF = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}


def random_matrix(cp, rows: int, cols: int, dtype: str, order: str = "C", *, seed=None):
    """Fresh standard-normal data (never zeros), in the requested memory order."""
    rng = cp.random.default_rng(seed)
    x = rng.standard_normal((rows, cols), dtype=cp.float32).astype(dtype)
    return cp.asfortranarray(x) if order == "F" else cp.ascontiguousarray(x)


# The unit of a float32 call's arithmetic by precision: fp32 rounding; 3xTF32 (each product within
# ~3 * 2^-24 of a * b, bounded here by 2^-22); tf32 (operands truncated to 10-bit mantissas).
PRECISION_UNIT = {"ieee": 2.0**-24, "tf32x3": 2.0**-22, "tf32": 2.0**-10}


def check_gemm(cp, A, B, C_out, alpha: float, beta: float, C_in=None, *, input_dtype="float32", unit=None):
    """Assert C_out == alpha*A@B + beta*C_in elementwise within a rigorous fp32 bound.

    |C - ref| <= (2K + 4) * u * (|alpha| |A||B| + |beta| |C_in|) + tiny, elementwise, where u is the
    accumulation unit roundoff (or ``unit``: a tensor-core precision's, PRECISION_UNIT): the
    classical worst-case bound for a K-term dot product, so any missing, duplicated or misplaced
    term (typically ~1) or unwritten output (NaN poison) fails. The output-rounding term covers
    fp16/bf16 results.
    """
    A64, B64 = A.astype(cp.float64), B.astype(cp.float64)
    K = A.shape[1]
    ref = alpha * (A64 @ B64)
    mag = abs(alpha) * (cp.abs(A64) @ cp.abs(B64))
    if C_in is not None and beta != 0:
        C64 = C_in.astype(cp.float64)
        ref += beta * C64
        mag += abs(beta) * cp.abs(C64)
    u = UNIT_ROUNDOFF["float32"] if unit is None else unit
    out_u = UNIT_ROUNDOFF[input_dtype]
    bound = (2 * K + 4) * u * mag + out_u * cp.abs(ref) + 1e-30
    got = C_out.astype(cp.float64)
    err = cp.abs(got - ref)
    bad = ~(err <= bound)  # NaN-safe: NaN fails
    nbad = int(bad.sum())
    if nbad:
        idx = np.argwhere(cp.asnumpy(bad))[:5]
        rows = [(int(i), int(j), float(got[i, j]), float(ref[i, j]), float(bound[i, j])) for i, j in idx]
        raise AssertionError(
            f"{nbad} of {got.size} outputs out of bound; first (i, j, got, ref, bound): {rows}"
        )
    fro = float(cp.linalg.norm(got - ref)) / max(float(cp.linalg.norm(ref)), 1e-30)
    return fro
