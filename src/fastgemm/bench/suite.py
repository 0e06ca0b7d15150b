"""The public shape suite (``python -m fastgemm.bench --suite``): fastgemm's ``kernel="auto"`` beside
cuBLAS (``cublasGemmEx`` through CuPy) and ``torch.matmul`` (cuBLASLt preferred, when torch can be
imported) on shapes grouped by category.

The suite is data: ``SUITE`` maps each category to its (M, N, K) shapes, every shape in exactly one
category; the decode and prefill shapes are the linear layers of public models (``MODEL_LAYERS``)
at the token counts of batched decoding and of prompts. Each shape goes through the shape
benchmark's steps (``fastgemm.bench.runner.run_shape``): every candidate is checked against a
float64 reference first, then device and end-to-end rounds run interleaved across the three
candidates in a seeded random order, every round cycling through the shape's input sets (together
at least 3x the L2 cache unless one set alone is), for fastgemm and the peers alike. A shape's
record gives the medians in microseconds, the ratio of the faster peer's time to fastgemm's
(> 1: fastgemm is faster; device and end-to-end), fastgemm's TFLOPS, and for memory-bound shapes
(min(M, N) <= 64) the HBM bandwidth achieved: the bytes a GEMM with beta = 0 must move (A and B
read, C written) over fastgemm's device time, also as a share of the GPU's datasheet bandwidth.
The summary gives per category, and over all shapes, the geometric mean and the minimum of the
ratios.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .device import hbm_bandwidth
from .report import result_records, tflops_of, write_outputs
from .runner import Context, base_meta, input_layout, run_shape
from .shapes import Shape, resolve_dtype
from .tables import SUITE_PEERS, SUITE_TIMINGS, shape_label
from .timing import Candidate, Trial

# (N, K) of the linear layers of public models, as C[M, N] = A[M, K] @ B[K, N] over M tokens: the
# fused q/k/v projection (grouped-query attention where the model has it), the attention output,
# the fused gate and up projections of the MLP, and its down projection.
MODEL_LAYERS: dict[str, dict[str, tuple[int, int]]] = {
    "Llama-3-8B": {
        "qkv": (6144, 4096),
        "o_proj": (4096, 4096),
        "gate_up": (28672, 4096),
        "down": (4096, 14336),
    },
    "Qwen2.5-7B": {
        "qkv": (4608, 3584),
        "o_proj": (3584, 3584),
        "gate_up": (37888, 3584),
        "down": (3584, 18944),
    },
    "Llama-2-13B": {
        "qkv": (15360, 5120),
        "o_proj": (5120, 5120),
        "gate_up": (27648, 5120),
        "down": (5120, 13824),
    },
}
SQUARE_SIZES = (256, 512, 1000, 1024, 2048, 4096, 8192)
DECODE_M = (1, 2, 4, 8, 16, 32, 64)  # tokens per step of batched decoding
DECODE_SWEPT = (("Llama-3-8B", "down"), ("Llama-3-8B", "o_proj"))  # at every M of DECODE_M
DECODE_SPOT_M = (1, 16)  # the M of every other layer
PREFILL_M = (128, 512, 2048, 8192)  # prompt tokens
PREFILL_LAYERS = (
    ("Llama-3-8B", "qkv"),
    ("Llama-3-8B", "down"),
    ("Qwen2.5-7B", "down"),
    ("Llama-2-13B", "qkv"),
)


def _on_layers(
    layers: Sequence[tuple[str, str]], ms: Callable[[tuple[str, str]], Sequence[int]]
) -> list[tuple[Shape, str]]:
    """[((M, N, K), "model layer")] for each layer at each of its M, in order."""
    return [
        ((m, *MODEL_LAYERS[model][layer]), f"{model} {layer}")
        for model, layer in layers
        for m in ms((model, layer))
    ]


_DECODE = _on_layers(
    [(model, layer) for model, layers in MODEL_LAYERS.items() for layer in layers],
    lambda layer: DECODE_M if layer in DECODE_SWEPT else DECODE_SPOT_M,
)
_PREFILL = _on_layers(PREFILL_LAYERS, lambda layer: PREFILL_M)
LAYER_OF: dict[Shape, str] = dict(_DECODE + _PREFILL)  # (M, N, K) -> the model layer it is

SUITE: dict[str, tuple[Shape, ...]] = {
    "square": tuple((n, n, n) for n in SQUARE_SIZES),
    "decode": tuple(shape for shape, _ in _DECODE),
    "prefill": tuple(shape for shape, _ in _PREFILL),
    # long reductions over few output tiles
    "deep_k": ((1024, 1024, 65536), (2048, 2048, 16384), (512, 512, 32768), (1024, 4096, 16384)),
    # tall outputs a few columns wide
    "narrow_n": ((8192, 64, 8192), (8192, 128, 8192), (4096, 16, 4096), (16384, 32, 4096)),
    # sizes that leave dense rows off 16-byte alignment and tiles partly filled
    "misaligned": ((127, 4099, 2053), (33, 12345, 777), (1001, 999, 1003), (4095, 4097, 4099)),
}
ALL = "all"  # the summary row over every shape

MEMORY_BOUND_MAX_MN = 64  # min(M, N) at most this: the GEMM is bound by memory, not math
PREFIX_OF_KIND = {"auto": "fastgemm", "cublas": "cublas", "torch": "torch"}  # record key prefixes
ROTATION_NOTE = (
    "operands are dense and row-major; per shape, independent input sets (together >= 3x the L2 "
    "cache unless one set alone is) rotate across consecutive calls in every device and end-to-end "
    "round, for fastgemm and the peers alike, so a call does not find its operands in L2"
)
SUITE_FIELDS = (
    "category",
    "layer",
    "dtype",
    "M",
    "N",
    "K",
    "selected",
    "input_sets",
    "fastgemm_us",
    "fastgemm_e2e_us",
    "fastgemm_status",
    "cublas_us",
    "cublas_e2e_us",
    "cublas_status",
    "torch_us",
    "torch_e2e_us",
    "torch_status",
    "best_peer",
    "ratio",
    "e2e_best_peer",
    "e2e_ratio",
    "tflops",
    "e2e_tflops",
    "memory_bound",
    "bytes",
    "gbps",
    "pct_hbm",
    "status",
    "error",
)  # the CSV columns: the JSON records hold these and the candidates' own records


def suite_shapes() -> list[tuple[str, Shape]]:
    """(category, shape) for every shape of the suite, in suite order."""
    return [(category, shape) for category, shapes in SUITE.items() for shape in shapes]


def output_prefix(dtype: str) -> str:
    """The results files' prefix: suite-<dtype>-<gpu-slug>.json and so on."""
    return f"suite-{dtype}"


def memory_bound(M: int, N: int) -> bool:
    return min(M, N) <= MEMORY_BOUND_MAX_MN


def bytes_moved(M: int, N: int, K: int, itemsize: int) -> int:
    """What C = A @ B with beta = 0 must move: A and B read, C written (not read)."""
    return itemsize * (M * K + K * N + M * N)


def bandwidth(nbytes: int, ms: float | None, hbm_tb_s: float | None) -> tuple[float | None, float | None]:
    """(GB/s of nbytes moved in ms, that as % of hbm_tb_s); None where a number is missing."""
    if not ms or ms <= 0:
        return None, None
    gbps = nbytes / (ms * 1e-3) / 1e9
    return gbps, (100 * gbps / (hbm_tb_s * 1e3) if hbm_tb_s else None)


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


def _us(ms: float | None) -> float | None:
    return None if ms is None else round(ms * 1e3, 3)


def _medians(t: Trial | None) -> dict[str, float | None]:
    """{timing prefix: median ms} of a trial; None where it did not run or did not check out."""
    if t is None or t.status != "ok":
        return {prefix: None for prefix, _ in SUITE_TIMINGS}
    return {"": t.ms, "e2e_": t.e2e_ms}


def shape_record(
    category: str,
    trials: Sequence[Trial],
    dtype: str,
    itemsize: int,
    input_sets: int,
    hbm_tb_s: float | None,
    peak_tflops: float | None,
) -> dict:
    """One shape's record from its trials (cuBLAS, auto and, where it ran, torch.matmul): see
    SUITE_FIELDS; "candidates" holds the trials' own records (rounds, errors, ...)."""
    by = {PREFIX_OF_KIND[t.cand.kind]: t for t in trials}
    fg = by["fastgemm"]
    M, N, K = fg.M, fg.N, fg.K
    ms = {who: _medians(by.get(who)) for who in ("fastgemm", *(key for key, _ in SUITE_PEERS))}
    record: dict[str, Any] = {
        "category": category,
        "layer": LAYER_OF.get((M, N, K)),
        "dtype": dtype,
        "M": M,
        "N": N,
        "K": K,
        "selected": fg.selected,
        "input_sets": input_sets,
    }
    for who, medians in ms.items():
        t = by.get(who)
        record[f"{who}_us"] = _us(medians[""])
        record[f"{who}_e2e_us"] = _us(medians["e2e_"])
        record[f"{who}_status"] = t.status if t is not None else None
    for prefix, _ in SUITE_TIMINGS:
        mine = ms["fastgemm"][prefix]
        peers = [(v, key) for key, _ in SUITE_PEERS if (v := ms[key][prefix]) is not None]
        best = min(peers) if peers else None
        record[prefix + "best_peer"] = best[1] if best else None
        record[prefix + "ratio"] = round(best[0] / mine, 4) if best and mine else None
    record["tflops"] = _round(tflops_of(M, N, K, ms["fastgemm"][""]), 3)
    record["e2e_tflops"] = _round(tflops_of(M, N, K, ms["fastgemm"]["e2e_"]), 3)
    nbytes = bytes_moved(M, N, K, itemsize)
    gbps, pct = bandwidth(nbytes, ms["fastgemm"][""], hbm_tb_s) if memory_bound(M, N) else (None, None)
    record.update(
        {
            "memory_bound": memory_bound(M, N),
            "bytes": nbytes,
            "gbps": _round(gbps, 1),
            "pct_hbm": _round(pct, 1),
        }
    )
    statuses = [t.status for t in trials]
    record["status"] = (
        "ok" if all(s == "ok" for s in statuses) else "wrong" if "wrong" in statuses else "error"
    )
    record["error"] = "; ".join(f"{t.label}: {t.error}" for t in trials if t.status != "ok") or None
    record["candidates"] = result_records(list(trials), dtype, peak_tflops)
    return record


def _ratio_stats(records: Sequence[dict], key: str) -> tuple[float | None, float | None, str | None, int]:
    """(geometric mean, minimum, shape of the minimum, how many) of the records' `key` values."""
    values = [(r[key], shape_label(r["M"], r["N"], r["K"])) for r in records if r.get(key)]
    if not values:
        return None, None, None, 0
    geomean = math.exp(sum(math.log(v) for v, _ in values) / len(values))
    low, at = min(values, key=lambda v: v[0])  # ties: the first in suite order
    return geomean, low, at, len(values)


def summarize(records: Sequence[dict]) -> list[dict]:
    """Per category (in the records' order) and then over all records (category ALL): shapes,
    and per timing how many shapes have a ratio ({prefix}measured), their geometric mean
    ({prefix}geomean_ratio), the smallest ({prefix}min_ratio) and its shape ({prefix}min_shape),
    with prefix "" for device time and "e2e_" for end-to-end."""
    categories = list(dict.fromkeys(r["category"] for r in records))
    groups = [(c, [r for r in records if r["category"] == c]) for c in categories] + [(ALL, list(records))]
    rows = []
    for category, members in groups:
        row: dict[str, Any] = {"category": category, "shapes": len(members)}
        for prefix, _ in SUITE_TIMINGS:
            geomean, low, at, count = _ratio_stats(members, prefix + "ratio")
            row.update(
                {
                    prefix + "measured": count,
                    prefix + "geomean_ratio": _round(geomean, 4),
                    prefix + "min_ratio": low,
                    prefix + "min_shape": at,
                }
            )
        rows.append(row)
    return rows


def suite_meta(ctx: Context, dtype: str, peers: dict) -> dict:
    """The meta of a suite results file: the shape benchmark's, and what the suite adds (its
    shapes, the peers, the HBM bandwidth the % column divides by, the definitions)."""
    meta = base_meta(ctx.device, ctx.args, dtype, ctx.prefill)
    hbm, hbm_source = hbm_bandwidth(ctx.device.name)
    meta.update(
        {
            "mode": "suite",
            "suite": {category: [list(s) for s in shapes] for category, shapes in SUITE.items()},
            "layers": {shape_label(*s): layer for s, layer in LAYER_OF.items()},
            "hbm_tb_s": hbm,
            "hbm_source": hbm_source,
            "operands": ROTATION_NOTE,
            "ratio": "the faster peer's median time / fastgemm's (> 1: fastgemm is faster), per timing",
            "memory_bound": f"min(M, N) <= {MEMORY_BOUND_MAX_MN}; GB/s = (A + B read, C written; "
            "beta = 0) / fastgemm's device time",
        }
    )
    meta.update(peers)
    return meta


def run_suite_dtype(
    ctx: Context, dtype: str, candidates: list[Candidate], peers: dict
) -> tuple[dict, list[dict], list[dict]]:
    """Every suite shape for one dtype: (meta, records, summary). The files are rewritten after
    every shape, so an interrupted run keeps what it measured."""
    np_dtype = resolve_dtype(ctx.cp, dtype)
    meta = suite_meta(ctx, dtype, peers)
    records: list[dict] = []
    summary: list[dict] = []
    for category, shape in suite_shapes():
        trials = run_shape(ctx, dtype, np_dtype, shape, candidates)
        meta["baseline"] = ctx.baseline
        _, _, n_sets = input_layout(ctx, np_dtype.itemsize, shape)
        records.append(
            shape_record(
                category, trials, dtype, np_dtype.itemsize, n_sets, meta["hbm_tb_s"], meta["peak_tflops"]
            )
        )
        summary = summarize(records)
        write_outputs(
            ctx.args.out,
            output_prefix(dtype),
            ctx.device.slug,
            meta,
            records,
            SUITE_FIELDS,
            {},
            extra={"summary": summary},
        )
    return meta, records, summary
