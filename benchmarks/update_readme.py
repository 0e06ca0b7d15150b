#!/usr/bin/env python3
"""Refresh the benchmark tables in README.md from `python -m fastgemm.bench` results.

    python benchmarks/update_readme.py results/float32-nvidia-h100-80gb-hbm3.json [more.json ...]
        [--readme README.md] [--dry-run]

For each dtype among the JSON files, the text between

    <!-- bench:<dtype>:start -->
    <!-- bench:<dtype>:end -->

is replaced by one captioned table per file of that dtype (in the order given): one row per rung,
one column per shape ("TFLOPS (% of cuBLAS)"), a "% of peak" column for the largest shape, and the
cuBLAS row last. The caption's "Timing:" line says what the numbers measure: device time, or
end-to-end time for a run with ``--timing end-to-end``; a ``--timing both`` run gets an extra "e2e"
column after each shape's device-time column. Missing markers are an error and nothing is written.

Results of ``python -m fastgemm.bench --overhead`` (``overhead-<gpu>.json``, ``meta.mode ==
"overhead"``) go between

    <!-- overhead_results -->
    <!-- /overhead_results -->

as one captioned table per file: one row per case, per library the host microseconds per call
(median over the batches) and the ratio to that library's ``matmul(A, B, out=C)``. A README
without these two markers keeps its other blocks updated; the overhead table is then reported as
not written and the exit status is 1.

Results of ``python -m fastgemm.bench --multi-gpu`` (``multigpu-<gpu>.json``, ``meta.mode ==
"multigpu"``) go between ``<!-- multigpu_results -->`` and ``<!-- /multigpu_results -->``: the
one-process table and the tensor-parallel table (``fastgemm.bench.tables.multigpu_tables``).

Results of ``python -m fastgemm.bench --suite`` (``suite-<dtype>-<gpu>.json``, ``meta.mode ==
"suite"``) go between

    <!-- bench:suite:<dtype>:start -->
    <!-- bench:suite:<dtype>:end -->

as one captioned table per file of that dtype: one row per category and one over all shapes, per
timing (device, end-to-end) the geometric mean of the ratios (the faster peer's time /
fastgemm's) and the smallest ratio with its shape. Missing markers are handled as the overhead
ones are.

The tables, the "Timing:" lines and the suite's caption are drawn by ``fastgemm.bench.tables``,
which draws the benchmark's own printed tables too (the README's form: ``markdown=True``). This
checkout's ``src/fastgemm/bench/tables.py`` is loaded by path (standard library only), so neither
an installed fastgemm nor its built extension is needed, and an older installed copy never renders
this README.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

OVERHEAD_START, OVERHEAD_END = "<!-- overhead_results -->", "<!-- /overhead_results -->"
PRECISION_START, PRECISION_END = "<!-- precision_results -->", "<!-- /precision_results -->"
MULTIGPU_START, MULTIGPU_END = "<!-- multigpu_results -->", "<!-- /multigpu_results -->"
RESULT_KEYS = {  # what every record of a results file of that mode must hold
    "overhead": ("case", "label", "library", "status", "host_us_median"),
    "precision": ("shape", "candidate", "ms", "vs_cublas_sgemm", "rel_error"),
    "multigpu": ("part",),
}
SUITE_MARKERS = "<!-- bench:suite:{dtype}:start -->", "<!-- bench:suite:{dtype}:end -->"
REPO_ROOT = Path(__file__).resolve().parent.parent


def _bench_tables() -> ModuleType:
    """fastgemm.bench.tables: this checkout's file, loaded by path; else the installed package's."""
    path = REPO_ROOT / "src" / "fastgemm" / "bench" / "tables.py"
    if not path.is_file():
        from fastgemm.bench import tables as installed

        return installed
    spec = importlib.util.spec_from_file_location("_fastgemm_bench_tables", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tables = _bench_tables()


class UpdateError(Exception):
    pass


def load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UpdateError(f"{path}: cannot read results: {exc}") from None
    if not isinstance(data, dict) or "meta" not in data or "results" not in data:
        raise UpdateError(f"{path}: not a fastgemm.bench results file (needs 'meta' and 'results')")
    results = data["results"]
    if not results:
        raise UpdateError(f"{path}: no results")

    def require(mode: str, keys: tuple[str, ...]) -> None:
        for r in results:
            missing = [k for k in keys if k not in r]
            if missing:
                raise UpdateError(
                    f"{path}: a{'n' if mode[0] in 'aeiou' else ''} {mode} result lacks {', '.join(missing)}"
                )

    mode = data["meta"].get("mode")
    if mode in ("overhead", "precision", "multigpu"):
        require(mode, RESULT_KEYS[mode])
        data["kind"] = mode
        return data
    if mode == "suite":
        require("suite", ("category", "M", "N", "K", "ratio", "e2e_ratio"))
        if not isinstance(data.get("summary"), list) or not data["summary"]:
            raise UpdateError(f"{path}: a suite results file needs its 'summary'")
        if not data["meta"].get("dtype"):
            raise UpdateError(f"{path}: no dtype in meta")
        data["dtype"] = data["meta"]["dtype"]
        data["kind"] = "suite"
        return data
    for r in results:
        missing = [k for k in ("kernel", "M", "N", "K", "tflops", "ok") if k not in r]
        if missing:
            raise UpdateError(f"{path}: a result lacks {', '.join(missing)}")
    dtype = data["meta"].get("dtype") or results[0].get("dtype")
    if not dtype:
        raise UpdateError(f"{path}: no dtype in meta or results")
    data["dtype"] = dtype
    data["kind"] = "shapes"
    return data


def kernel_lookup() -> dict:
    """kernel name -> {techniques, version, parent, branch} from the installed fastgemm, or {}
    when it cannot be imported (the JSON records then say what they hold)."""
    try:
        import fastgemm

        return {
            k.name: {"techniques": k.techniques, "version": k.version, "parent": k.parent, "branch": k.branch}
            for k in fastgemm.kernels()
        }
    except Exception:  # noqa: BLE001 - not built, no CUDA runtime, ...: fall back to the JSON
        return {}


def timing_columns(data: dict) -> list[str]:
    """The timings a shape table shows, in column order: "device" unless the run was end-to-end
    only, then "end-to-end" where end-to-end figures exist."""
    device = (data["meta"].get("timing") or "device") != "end-to-end"
    e2e = any(r.get("e2e_ms") is not None for r in data["results"])
    return (["device"] if device else []) + (["end-to-end"] if e2e or not device else [])


def caption(meta: dict, timings: Sequence[str] = ("device",)) -> str:
    return (
        f"{tables.run_line(meta)}; median of {meta.get('rounds', '?')} rounds; TFLOPS and % of cuBLAS "
        f"(same process).\n{tables.timing_note(timings, markdown=True)}"
    )


def markdown_table(data: dict, kernels: dict | None = None) -> str:
    """Caption and table for one results file; `kernels` (kernel_lookup) adds what the installed
    build says about each rung (techniques, branches)."""
    meta = data["meta"]
    timings = timing_columns(data)
    table = tables.ladder_table(
        data["results"],
        timings,
        markdown=True,
        kernels=kernels or {},
        baseline=meta.get("baseline"),
        peak=meta.get("peak_tflops"),
    )
    return caption(meta, timings) + "\n\n" + table


def overhead_caption(meta: dict) -> str:
    M, N, K = meta.get("shape") or ("?", "?", "?")
    versions = [
        f"{name} {meta[key]}"
        for name, key in (("torch", "torch_version"), ("CuPy", "cupy_version"))
        if meta.get(key)
    ]
    versions.append(f"fastgemm {meta.get('fastgemm_version', '?')}")
    text = (
        f"{tables.run_line(meta)}, {', '.join(versions)}. Host µs per call from Python, {M}x{N}x{K}: "
        f"median of {meta.get('batches', '?')} batches of {meta.get('calls_per_batch', '?')} "
        "back-to-back calls (no synchronisation inside a batch, so the GPU never holds the host "
        "up); ratio to the same library's `matmul(A, B, out=C)` of the same dtype."
    )
    for name, why in (meta.get("skipped_libraries") or {}).items():
        text += f" {name}: not measured ({tables.md_escape(why)})."
    return text


def overhead_markdown(data: dict) -> str:
    """Caption and table for one overhead results file: one row per case, per library µs/call and
    the ratio to the peer."""
    return overhead_caption(data["meta"]) + "\n\n" + tables.overhead_table(data["results"], markdown=True)


def precision_markdown(data: dict) -> str:
    """Caption and table for one benchmarks/precision.py results file: per shape and candidate,
    device time, TFLOPS, speed relative to cuBLAS SGEMM and normalised error."""
    meta = data["meta"]
    text = (
        f"Measured on {meta.get('gpu', '?')}, {meta.get('date', '?')[:10]}, fastgemm "
        f"{meta.get('fastgemm', '?')}{' at ' + meta['commit'] if meta.get('commit') else ''}, CuPy {meta.get('cupy', '?')}, "
        f"torch {meta.get('torch') or '—'}; `{tables.md_escape(meta.get('command', ''))}`. "
        f"{tables.md_escape(meta.get('method', ''))}; median of {meta.get('rounds', '?')} rounds.\n"
        + tables.timing_note(["device"], markdown=True)
    )
    headers = ["M×N×K", "candidate", "ms", "TFLOPS", "speed vs cuBLAS SGEMM", "error vs float64"]
    rows = [
        [
            "x".join(str(x) for x in r["shape"]),
            tables.md_escape(r["candidate"]),
            f"{r['ms']:.3f}",
            f"{r['tflops']:.1f}",
            f"{r['vs_cublas_sgemm']:.2f}x",
            f"{r['rel_error']:.1e}",
        ]
        for r in data["results"]
    ]
    right = [False, False, True, True, True, True]
    return (
        text
        + "\n\n"
        + tables.format_table(headers, rows, right, padded=False)
        + "\n\n"
        + precision_summary(data)
    )


def _span(values: Sequence[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else fmt.format(lo) + "–" + fmt.format(hi)


def precision_summary(data: dict) -> str:
    """Where each precision stands, from the same results: at the cubes of 2048 and up, the speed
    and the error of auto's tf32x3 against cuBLAS SGEMM's and of its tf32 against cuBLAS in TF32
    mode, on the same data."""
    by: dict[tuple, dict[str, dict]] = {}
    for r in data["results"]:
        by.setdefault(tuple(r["shape"]), {})[r["candidate"]] = r
    cubes = sorted(s for s in by if s[0] == s[1] == s[2] and s[0] >= 2048)

    def find(shape: tuple, prefix: str) -> dict | None:
        return next((r for name, r in by[shape].items() if name.startswith(prefix)), None)

    parts = []
    for precision, peer in (("tf32x3", "cuBLAS SGEMM"), ("tf32", "cuBLAS TF32")):
        speed, error = [], []
        for s in cubes:
            mine, ref = find(s, f"fastgemm {precision} "), find(s, peer)
            if mine and ref:
                speed.append(ref["ms"] / mine["ms"])
                error.append(mine["rel_error"] / ref["rel_error"])
        if speed:
            parts.append(
                f'`"{precision}"` runs at {_span(speed, "{:.2f}")}x the speed of {peer}, with '
                f"{_span(error, '{:.2f}')}x its error"
            )
    if not cubes or not parts:
        return ""
    sizes = _span([s[0] for s in cubes], "{}")
    return f"At {sizes}³ (from this table): " + "; ".join(parts) + "."


def suite_markdown(data: dict) -> str:
    """Caption and category table for one suite results file."""
    table = tables.suite_category_table(data["summary"], padded=False)
    return tables.suite_caption(data["meta"], markdown=True) + "\n\n" + table


def replace_block(
    text: str, dtype: str, body: str, markers: tuple[str, str] | None = None
) -> tuple[str, str]:
    """(new text, old block) with the block between dtype's markers (or `markers`, a (start, end)
    pair) replaced by body."""
    start, end = markers or (f"<!-- bench:{dtype}:start -->", f"<!-- bench:{dtype}:end -->")
    n_start, n_end = text.count(start), text.count(end)
    if n_start != 1 or n_end != 1:
        raise UpdateError(f"README needs exactly one '{start}' and one '{end}' (found {n_start} and {n_end})")
    i, j = text.index(start) + len(start), text.index(end)
    if j < i:
        raise UpdateError(f"'{end}' comes before '{start}'")
    return text[:i] + "\n" + body + "\n" + text[j:], text[i:j]


def _change(old: str, body: str) -> str:
    old_lines = len(old.strip().splitlines()) if old.strip() else 0
    return "unchanged" if old.strip() == body.strip() else f"{old_lines} line(s) -> {len(body.splitlines())}"


def update(readme: Path, json_paths: Sequence[Path], dry_run: bool = False, out: Any = None) -> int:
    """Rewrite the README blocks for these results files; 0, or 1 when overhead or suite results
    were given but the README has no markers for them (the other blocks are written all the
    same)."""
    out = out or sys.stdout
    by_dtype: dict = {}
    suites: dict = {}
    overhead: list = []
    precision: list = []
    multigpu: list = []
    for path in json_paths:
        data = load(path)
        if data["kind"] == "overhead":
            overhead.append((path, data))
        elif data["kind"] == "precision":
            precision.append((path, data))
        elif data["kind"] == "multigpu":
            multigpu.append((path, data))
        elif data["kind"] == "suite":
            suites.setdefault(data["dtype"], []).append((path, data))
        else:
            by_dtype.setdefault(data["dtype"], []).append((path, data))
    try:
        text = readme.read_text()
    except OSError as exc:
        raise UpdateError(f"cannot read {readme}: {exc}") from None
    kernels = kernel_lookup() if by_dtype else {}
    new = text
    report = []
    status = 0
    for dtype, items in by_dtype.items():
        body = "\n\n".join(markdown_table(data, kernels) for _, data in items)
        new, old = replace_block(new, dtype, body)
        sources = ", ".join(str(p) for p, _ in items)
        report.append(f"{readme}: bench:{dtype}: {_change(old, body)} (from {sources})")
    optional = [("overhead_results", (OVERHEAD_START, OVERHEAD_END), overhead, overhead_markdown)]
    optional.append(("precision_results", (PRECISION_START, PRECISION_END), precision, precision_markdown))
    optional.append(("multigpu_results", (MULTIGPU_START, MULTIGPU_END), multigpu, tables.multigpu_tables))
    optional += [
        (f"bench:suite:{dtype}", tuple(m.format(dtype=dtype) for m in SUITE_MARKERS), items, suite_markdown)
        for dtype, items in suites.items()
    ]
    for block, (start, end), items, render in optional:
        if not items:
            continue
        sources = ", ".join(str(p) for p, _ in items)
        if start not in new and end not in new:
            report.append(
                f"{readme}: {block}: NOT WRITTEN: the README has no '{start}' ... '{end}' "
                f"markers; put the two lines where the table belongs and run this again (from {sources})"
            )
            status = 1
        else:
            body = "\n\n".join(render(data) for _, data in items)
            new, old = replace_block(new, block, body, (start, end))
            report.append(f"{readme}: {block}: {_change(old, body)} (from {sources})")
    if dry_run:
        print(new, file=out)
    elif new != text:
        readme.write_text(new)
    for line in report:
        print(line, file=sys.stderr if dry_run or "NOT WRITTEN" in line else out)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", nargs="+", type=Path, help="results files from python -m fastgemm.bench")
    parser.add_argument(
        "--readme",
        type=Path,
        default=REPO_ROOT / "README.md",
        help="the file to update (default: the repository's README.md)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the updated README to stdout instead of writing it"
    )
    args = parser.parse_args(argv)
    try:
        return update(args.readme, args.json, args.dry_run)
    except UpdateError as exc:
        print(f"update_readme: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
