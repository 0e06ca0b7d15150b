"""What a run reports: progress and warnings on stderr, the meta every results file starts with (the
device, the date, the command line, the git commit), the result records of a shape's trials, the
JSON and CSV files, and the tables printed to stdout (drawn by fastgemm.bench.tables, as the README's
are): the shape benchmark's, ``--overhead``'s and ``--suite``'s.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .device import Device
from .tables import (
    fmt_ratio,
    ladder_table,
    long_table,
    overhead_table,
    shape_label,
    suite_caption,
    suite_category_table,
    suite_shape_table,
    timing_note,
)

if TYPE_CHECKING:  # timing imports this module (warn)
    from .timing import Trial

TIMINGS = ("device", "end-to-end", "both")  # the choices of --timing


def warn(msg: str) -> None:
    print(f"fastgemm.bench: warning: {msg}", file=sys.stderr, flush=True)


class Progress:
    """'[i/total] message' lines on stderr, and plain notes between them."""

    def __init__(self, total: int) -> None:
        self.total, self.width = total, len(str(total))

    def __call__(self, index: int, msg: str) -> None:
        print(f"[{index:>{self.width}}/{self.total}] {msg}", file=sys.stderr, flush=True)

    def note(self, msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)


def _git(where: Path, *args: str) -> str | None:
    try:
        return subprocess.run(
            ["git", "-C", str(where), *args], capture_output=True, text=True, timeout=15, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def _checkout() -> Path | None:
    """The git checkout holding this file, else the working directory's; None if neither is one."""
    for where in (Path(__file__).resolve().parent, Path.cwd()):
        out = _git(where, "rev-parse", "HEAD")
        if out is not None and re.fullmatch(r"[0-9a-f]{40,64}", out):
            return where
    return None


def git_commit() -> str | None:
    """$FASTGEMM_GIT_COMMIT where set (a copy of a checkout on a remote GPU machine, whose .git, if
    any, need not match the files: pass the commit along); else HEAD of the git checkout holding
    this file, else of the working directory; None otherwise."""
    if os.environ.get("FASTGEMM_GIT_COMMIT"):
        return os.environ["FASTGEMM_GIT_COMMIT"]
    where = _checkout()
    return None if where is None else _git(where, "rev-parse", "HEAD")


def git_clean() -> bool | None:
    """$FASTGEMM_GIT_CLEAN ("1" / "0") where set; else whether the checkout has no changes to
    tracked files (untracked files aside); None without a checkout."""
    flag = os.environ.get("FASTGEMM_GIT_CLEAN")
    if flag in ("0", "1"):
        return flag == "1"
    where = _checkout()
    if where is None:
        return None
    status = _git(where, "status", "--porcelain", "--untracked-files=no")
    return None if status is None else status == ""


def run_meta(device: Device, args: argparse.Namespace) -> dict:
    """The meta every output file starts with: the device, date, command line and git commit."""
    meta = dict(device.meta)
    meta.update(
        {
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "command": shlex.join(["python", "-m", "fastgemm.bench", *args.argv]),
            "git_commit": git_commit(),
            "git_clean": git_clean(),
        }
    )
    return meta


def tflops_of(M: int, N: int, K: int, ms: float | None) -> float | None:
    if not ms or ms <= 0:
        return None
    return 2.0 * M * N * K / (ms * 1e-3) / 1e12


def timing_figures(
    M: int, N: int, K: int, ms: float | None, base_ms: float | None, peak: float | None, prefix: str = ""
) -> dict:
    """{prefix}ms, {prefix}tflops, {prefix}pct_cublas, {prefix}pct_peak of one median time (None
    where not measured); base_ms is cuBLAS's median of the same timing and shape."""
    tf, base_tflops = tflops_of(M, N, K, ms), tflops_of(M, N, K, base_ms)
    return {
        f"{prefix}ms": round(ms, 6) if ms is not None else None,
        f"{prefix}tflops": round(tf, 3) if tf is not None else None,
        f"{prefix}pct_cublas": round(100 * tf / base_tflops, 2) if tf and base_tflops else None,
        f"{prefix}pct_peak": round(100 * tf / peak, 2) if tf and peak else None,
    }


def result_records(trials: list[Trial], dtype: str, peak: float | None) -> list[dict]:
    """The JSON/CSV records of one shape's trials (cuBLAS first in `trials`): ms, tflops,
    pct_cublas, pct_peak from device time and the same with the prefix e2e_ from end-to-end time
    (None for a timing that was not measured)."""
    base = next((t for t in trials if t.cand.kind == "cublas" and t.status == "ok"), None)
    records = []
    for t in trials:
        ok = t.status == "ok"
        record: dict[str, Any] = {
            "kernel": t.cand.name,
            "version": t.cand.version,
            "dtype": dtype,
            "M": t.M,
            "N": t.N,
            "K": t.K,
        }
        record.update(timing_figures(t.M, t.N, t.K, t.ms if ok else None, base.ms if base else None, peak))
        record.update(
            {
                "rel_error": t.rel_error,
                "ok": ok,
                "status": t.status,
                "techniques": t.baseline if t.cand.kind == "cublas" else t.cand.techniques,
                "rounds": len(t.samples),
                "reps": t.reps if t.samples or t.e2e_samples else 0,
                "host_limited_rounds": t.host_limited_rounds,
                "selected": t.selected,
                "error": t.error or None,
                "parent": t.cand.parent,
                "branch": t.cand.branch,
            }
        )
        record.update(
            timing_figures(
                t.M, t.N, t.K, t.e2e_ms if ok else None, base.e2e_ms if base else None, peak, "e2e_"
            )
        )
        record["e2e_rounds"] = len(t.e2e_samples)
        records.append(record)
    return records


CSV_FIELDS = (
    "kernel",
    "version",
    "dtype",
    "M",
    "N",
    "K",
    "ms",
    "tflops",
    "pct_cublas",
    "pct_peak",
    "e2e_ms",
    "e2e_tflops",
    "e2e_pct_cublas",
    "e2e_pct_peak",
    "rel_error",
    "ok",
    "status",
    "techniques",
    "rounds",
    "e2e_rounds",
    "reps",
    "host_limited_rounds",
    "selected",
    "error",
    "parent",
    "branch",
)
# CSV headers that differ from the record keys: every timing column names its timing.
CSV_HEADERS = {
    "ms": "device_ms",
    "tflops": "device_tflops",
    "pct_cublas": "device_pct_cublas",
    "pct_peak": "device_pct_peak",
    "rounds": "device_rounds",
}


def output_paths(out_dir: str | os.PathLike, prefix: str, slug: str) -> dict:
    """<out_dir>/<prefix>-<slug>.{json,csv,png}; prefix is a dtype, "overhead" or "suite-<dtype>"."""
    base = Path(out_dir) / f"{prefix}-{slug}"
    return {ext: base.with_suffix(f".{ext}") for ext in ("json", "csv", "png")}


def write_outputs(
    out_dir: str | os.PathLike,
    prefix: str,
    slug: str,
    meta: dict,
    results: list[dict],
    fields: Sequence[str] = CSV_FIELDS,
    headers: dict | None = None,
    extra: dict | None = None,
) -> dict:
    """Write <prefix>-<slug>.json (meta, results and the keys of `extra`) and .csv (the record keys
    in `fields`, headed by headers.get(key, key)); returns the paths (png included, not written
    here)."""
    headers = CSV_HEADERS if headers is None else headers
    paths = output_paths(out_dir, prefix, slug)
    paths["json"].parent.mkdir(parents=True, exist_ok=True)
    tmp = paths["json"].with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"meta": meta, "results": results, **(extra or {})}, indent=2) + "\n")
    tmp.replace(paths["json"])
    with open(paths["csv"], "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([headers.get(k, k) for k in fields])
        for r in results:
            writer.writerow(["" if r.get(k) is None else r.get(k) for k in fields])
    return paths


def timings_of(meta: dict) -> list[str]:
    """The timings a run measured, in column order: ["device"], ["end-to-end"] or both."""
    timing = meta.get("timing") or "device"
    return ["device", "end-to-end"] if timing == "both" else [timing]


def print_table(dtype: str, meta: dict, results: list[dict], long: bool, file: Any = None) -> None:
    """Print one dtype's wide (long=False) or long-format (long=True) table to stdout."""
    file = file or sys.stdout
    if not results:
        return
    peak = meta.get("peak_tflops")
    peak_txt = f"{peak:.1f} TFLOPS ({meta.get('peak_source')})" if peak else "n/a"
    kind = "per kernel and shape" if long else "TFLOPS (% of cuBLAS) by shape"
    timings = timings_of(meta)
    print(
        f"\n## {dtype} on {meta.get('gpu')} (cc {meta.get('compute_capability')}), {kind}; "
        f"median of up to {meta.get('rounds')} rounds; peak {peak_txt}",
        file=file,
    )
    print(timing_note(timings), file=file)
    print(long_table(results, timings) if long else ladder_table(results, timings), file=file, flush=True)
    errors = [r for r in results if r["status"] != "ok"] if long else []
    for r in errors:
        print(
            f"  {r['kernel']} {shape_label(r['M'], r['N'], r['K'])}: {r['status'].upper()}: {r.get('error')}",
            file=file,
        )


def print_overhead(meta: dict, records: Sequence[dict], file: Any = None) -> None:
    file = file or sys.stdout
    M, N, K = meta["shape"]
    print(
        f"\n## Host cost per call from Python on {meta.get('gpu')} (cc "
        f"{meta.get('compute_capability')}), {M}x{N}x{K}: median and min over "
        f"{meta['batches']} batches of {meta['calls_per_batch']} back-to-back calls, no "
        "synchronisation inside a batch",
        file=file,
    )
    print(overhead_table(records), file=file)
    print("ratio: median / the median of the same library's matmul(A, B, out=C) of the same dtype", file=file)
    for name, why in meta.get("skipped_libraries", {}).items():
        print(f"  {name}: skipped ({why})", file=file)
    for r in records:
        if r["status"] != "ok":
            print(f"  {r['label']} ({r['library']}): {r['status'].upper()}: {r['error']}", file=file)
    file.flush()


def print_suite(meta: dict, records: list[dict], summary: list[dict], file: Any = None) -> None:
    """Print the suite's per-shape table, then its per-category table, to stdout."""
    file = file or sys.stdout
    if not records:
        return
    print(
        f"\n## Suite, {meta.get('dtype')} on {meta.get('gpu')} (cc {meta.get('compute_capability')}), "
        f"per shape; median of up to {meta.get('rounds')} rounds",
        file=file,
    )
    print(suite_caption(meta), file=file)
    print(suite_shape_table(records), file=file)
    for r in records:
        if r["status"] != "ok":
            print(
                f"  {shape_label(r['M'], r['N'], r['K'])}: {r['status'].upper()}: {r.get('error')}", file=file
            )
    overall = summary[-1]
    print(
        f"\n## Suite, {meta.get('dtype')} on {meta.get('gpu')}, per category: geometric mean and minimum "
        f"of the ratios (overall: {fmt_ratio(overall['geomean_ratio'])} device, "
        f"{fmt_ratio(overall['e2e_geomean_ratio'])} end-to-end)",
        file=file,
    )
    print(suite_category_table(summary), file=file, flush=True)
