#!/usr/bin/env python3
"""Refresh the benchmark tables in README.md from `python -m fastgemm.bench` results.

    python benchmarks/update_readme.py results/float32-nvidia-h100-80gb-hbm3.json [more.json ...]
        [--readme README.md] [--dry-run]

For each dtype among the JSON files, the text between

    <!-- bench:<dtype>:start -->
    <!-- bench:<dtype>:end -->

is replaced by one captioned table per file of that dtype (in the order given): one row per rung,
one column per shape ("TFLOPS (% of cuBLAS)"), a "% of peak" column for the largest shape, and the
cuBLAS row last. Missing markers are an error and nothing is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CUBLAS = "cuBLAS"
AUTO = "auto"
REPO_ROOT = Path(__file__).resolve().parent.parent


class UpdateError(Exception):
    pass


def fmt_tflops(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def shape_header(M: int, N: int, K: int) -> str:
    return f"{M}³" if M == N == K else f"{M}x{N}x{K}"


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
    for r in results:
        missing = [k for k in ("kernel", "M", "N", "K", "tflops", "ok") if k not in r]
        if missing:
            raise UpdateError(f"{path}: a result lacks {', '.join(missing)}")
    dtype = data["meta"].get("dtype") or results[0].get("dtype")
    if not dtype:
        raise UpdateError(f"{path}: no dtype in meta or results")
    data["dtype"] = dtype
    return data


def technique_lookup() -> dict:
    """kernel name -> techniques from the installed fastgemm, or {} when it cannot be imported."""
    try:
        import fastgemm

        return {k.name: k.techniques for k in fastgemm.kernels()}
    except Exception:  # noqa: BLE001 - not built, no CUDA runtime, ...: fall back to the JSON
        return {}


def _row_keys(results: list[dict]) -> list[tuple]:
    keys = dict.fromkeys((r["kernel"], r.get("version")) for r in results)

    def order(kv: tuple) -> tuple:
        name, version = kv
        rank = 2 if name == CUBLAS else 1 if name == AUTO else 0
        return (rank, version if version is not None else 0, name)

    return sorted(keys, key=order)


def _cell(r: dict | None, baseline: bool) -> str:
    if r is None:
        return "—"
    status = r.get("status") or ("ok" if r.get("ok") else "error")
    if status == "wrong":
        return "WRONG"
    if status == "n/a":
        return "n/a"
    if status != "ok" or r.get("tflops") is None:
        return "error"
    text = fmt_tflops(r["tflops"])
    if not baseline and r.get("pct_cublas") is not None:
        text += f" ({r['pct_cublas']:.0f}%)"
    return text


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def caption(meta: dict) -> str:
    date = str(meta.get("date", "?"))[:10]
    return (f"Measured on {meta.get('gpu', '?')} (cc {meta.get('compute_capability', '?')}), "
            f"CUDA {meta.get('cuda_runtime', '?')}, cuBLAS {meta.get('cublas_version', '?')}, {date}; "
            f"median of {meta.get('rounds', '?')} rounds; TFLOPS and % of cuBLAS (same process).")


def markdown_table(data: dict, techniques: dict | None = None) -> str:
    """Caption and table for one results file."""
    techniques = techniques or {}
    meta, results = data["meta"], data["results"]
    shapes = list(dict.fromkeys((r["M"], r["N"], r["K"]) for r in results))
    largest = max(shapes, key=lambda s: (s[0] * s[1] * s[2], s))
    index = {(r["kernel"], r["M"], r["N"], r["K"]): r for r in results}
    peak = meta.get("peak_tflops")
    peak_note = f", peak {fmt_tflops(peak)} TFLOPS" if peak else ""
    headers = (["rung", "kernel", "technique"] + [shape_header(*s) for s in shapes]
               + [f"% of peak ({shape_header(*largest)}{peak_note})"])
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join(["---:", "---", "---"] + ["---:"] * (len(shapes) + 1)) + "|"]
    for name, version in _row_keys(results):
        rows = [r for r in results if r["kernel"] == name]
        if name == CUBLAS:
            rung, shown = "—", "cuBLAS"
            tech = next((r.get("techniques") for r in rows if r.get("techniques")), None)
            tech = tech or meta.get("baseline") or "cuBLAS through CuPy"
        elif name == AUTO:
            rung, shown = "auto", '`kernel="auto"`'
            tech = "fastgemm.select() picks the rung per shape"
        else:
            rung, shown = (str(version) if version is not None else "?"), f"`{name}`"
            stored = next((r.get("techniques") for r in rows if r.get("techniques")), "")
            tech = techniques.get(name) or stored
        cells = [_cell(index.get((name, *s)), name == CUBLAS) for s in shapes]
        big = index.get((name, *largest))
        pct_peak = big.get("pct_peak") if big else None
        cells.append(f"{pct_peak:.0f}%" if pct_peak is not None else "n/a")
        lines.append("| " + " | ".join([rung, shown, _escape(tech), *cells]) + " |")
    return caption(meta) + "\n\n" + "\n".join(lines)


def replace_block(text: str, dtype: str, body: str) -> tuple[str, str]:
    """(new text, old block) with the block between dtype's markers replaced by body."""
    start, end = f"<!-- bench:{dtype}:start -->", f"<!-- bench:{dtype}:end -->"
    n_start, n_end = text.count(start), text.count(end)
    if n_start != 1 or n_end != 1:
        raise UpdateError(f"README needs exactly one '{start}' and one '{end}' "
                          f"(found {n_start} and {n_end})")
    i, j = text.index(start) + len(start), text.index(end)
    if j < i:
        raise UpdateError(f"'{end}' comes before '{start}'")
    return text[:i] + "\n" + body + "\n" + text[j:], text[i:j]


def update(readme: Path, json_paths: Sequence[Path], dry_run: bool = False, out: Any = None) -> int:
    out = out or sys.stdout
    by_dtype: dict = {}
    for path in json_paths:
        data = load(path)
        by_dtype.setdefault(data["dtype"], []).append((path, data))
    try:
        text = readme.read_text()
    except OSError as exc:
        raise UpdateError(f"cannot read {readme}: {exc}") from None
    techniques = technique_lookup()
    new = text
    report = []
    for dtype, items in by_dtype.items():
        body = "\n\n".join(markdown_table(data, techniques) for _, data in items)
        new, old = replace_block(new, dtype, body)
        old_lines = len(old.strip().splitlines()) if old.strip() else 0
        sources = ", ".join(str(p) for p, _ in items)
        new_lines = len(body.splitlines())
        state = "unchanged" if old.strip() == body.strip() else f"{old_lines} line(s) -> {new_lines}"
        report.append(f"{readme}: bench:{dtype}: {state} (from {sources})")
    if dry_run:
        print(new, file=out)
    elif new != text:
        readme.write_text(new)
    for line in report:
        print(line, file=sys.stderr if dry_run else out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", nargs="+", type=Path, help="results files from python -m fastgemm.bench")
    parser.add_argument("--readme", type=Path, default=REPO_ROOT / "README.md",
                        help="the file to update (default: the repository's README.md)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the updated README to stdout instead of writing it")
    args = parser.parse_args(argv)
    try:
        return update(args.readme, args.json, args.dry_run)
    except UpdateError as exc:
        print(f"update_readme: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
