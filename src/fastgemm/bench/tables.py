"""The table renderer shared by the benchmark's terminal tables (``fastgemm.bench.report``) and the
README tables (``benchmarks/update_readme.py``): the pipe-table layout, the row order (rungs by
version, then ``auto``, then cuBLAS), the shapes of a results list and the TFLOPS cell; and the two
tables of the shape suite (``--suite``), one row per shape and one per category.

Standard library only and no imports from fastgemm: ``benchmarks/update_readme.py`` loads this file
by path, so the README can be regenerated where fastgemm's extension is not built.
"""

from __future__ import annotations

from collections.abc import Sequence

CUBLAS = "cuBLAS"
AUTO = "auto"


def shape_label(M: int, N: int, K: int) -> str:
    return f"{M}x{N}x{K}"


def cube_label(M: int, N: int, K: int) -> str:
    """'1024³' for a cube, else 'MxNxK'."""
    return f"{M}³" if M == N == K else shape_label(M, N, K)


def fmt_tflops(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fmt_us(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def shapes_in(results: Sequence[dict]) -> list[tuple]:
    """The (M, N, K) of the records, in order of first appearance."""
    return list(dict.fromkeys((r["M"], r["N"], r["K"]) for r in results))


def largest_shape(shapes: Sequence[tuple]) -> tuple:
    """The shape with the most multiply-adds (ties: the larger tuple)."""
    return max(shapes, key=lambda s: (s[0] * s[1] * s[2], s))


def by_kernel_and_shape(results: Sequence[dict]) -> dict:
    """(kernel, M, N, K) -> record."""
    return {(r["kernel"], r["M"], r["N"], r["K"]): r for r in results}


def row_order(results: Sequence[dict]) -> list[tuple]:
    """(kernel, version) in table order: rungs by version, then auto, then cuBLAS."""
    seen = dict.fromkeys((r["kernel"], r.get("version")) for r in results)

    def key(kv: tuple) -> tuple:
        name, version = kv
        rank = 2 if name == CUBLAS else 1 if name == AUTO else 0
        return (rank, version if version is not None else 0, name)

    return sorted(seen, key=key)


def branch_names(results: Sequence[dict]) -> set[str]:
    """Kernels whose records say they are branches (experiments off the main line)."""
    return {r["kernel"] for r in results if r.get("branch")}


def kernel_label(name: str, branch: bool) -> str:
    """A kernel's name in a table: a branch says so."""
    return f"{name} (branch)" if branch else name


def status_of(r: dict) -> str:
    """The record's status; records without one (older files) say only ok or not."""
    return r.get("status") or ("ok" if r.get("ok") else "error")


def tflops_cell(
    r: dict | None,
    with_pct: bool,
    prefix: str = "",
    *,
    missing: str = "-",
    failed: str = "ERROR",
    unmeasured: str = "-",
) -> str:
    """'TFLOPS (xx%)' from the record's {prefix}tflops and, with with_pct, {prefix}pct_cublas; WRONG
    or n/a for a record of that status. Without a number: `missing` where there is no record,
    `failed` for any other status than ok, `unmeasured` where an ok record has no figure for this
    timing. The defaults are the terminal tables'."""
    if r is None:
        return missing
    status = status_of(r)
    if status == "wrong":
        return "WRONG"
    if status == "n/a":
        return "n/a"
    if status != "ok":
        return failed
    tflops = r.get(prefix + "tflops")
    if tflops is None:
        return unmeasured
    text = fmt_tflops(tflops)
    if with_pct and r.get(prefix + "pct_cublas") is not None:
        text += f" ({r[prefix + 'pct_cublas']:.0f}%)"
    return text


def format_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool], padded: bool = True
) -> str:
    """A pipe table (valid markdown); `right` says which columns are right-aligned. Padded to the
    column widths for the terminal, or with padded=False the cells as they are and a '---' /
    '---:' rule, as the README has them."""
    widths = [0] * len(headers)  # unpadded: ljust(0) / rjust(0) leave a cell as it is
    if padded:
        widths = [
            max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
            for i, h in enumerate(headers)
        ]

    def line(cells: Sequence[str]) -> str:
        return (
            "| "
            + " | ".join(str(c).rjust(w) if rt else str(c).ljust(w) for c, w, rt in zip(cells, widths, right))
            + " |"
        )

    if padded:
        rule = [("-" * (w + 1) + ":") if rt else ("-" * (w + 2)) for w, rt in zip(widths, right)]
    else:
        rule = ["---:" if rt else "---" for rt in right]
    return "\n".join([line(headers), "|" + "|".join(rule) + "|"] + [line(r) for r in rows])


# The suite's records (fastgemm.bench.suite) hold, per shape, {who}_us, {who}_e2e_us and
# {who}_status for who in "fastgemm" and the peers below (status None: not run).
SUITE_FASTGEMM = ("fastgemm", "fastgemm")
SUITE_PEERS = (("cublas", "cuBLAS"), ("torch", "torch.matmul"))  # (record key prefix, column name)
SUITE_TIMINGS = (("", "device"), ("e2e_", "e2e"))  # (record key prefix, column suffix)


def _suite_us_cell(r: dict, who: str, prefix: str) -> str:
    status = r.get(f"{who}_status")
    if status is None:
        return "-"
    if status != "ok":
        return "WRONG" if status == "wrong" else "ERROR"
    return fmt_us(r.get(f"{who}_{prefix}us"))


def suite_shape_table(records: Sequence[dict], padded: bool = True) -> str:
    """One row per shape: category, shape, the rung auto ran, input sets rotated, microseconds of
    fastgemm and of each peer that ran (device and e2e), the ratio (the faster peer's time /
    fastgemm's, device and e2e), fastgemm's TFLOPS, and for memory-bound shapes GB/s and % of
    the HBM bandwidth."""
    peers = [p for p in SUITE_PEERS if any(r.get(f"{p[0]}_status") is not None for r in records)]
    who = [SUITE_FASTGEMM, *peers]
    headers = ["category", "shape", "auto runs", "sets"]
    headers += [f"{shown} us ({suffix})" for _, shown in who for _, suffix in SUITE_TIMINGS]
    headers += [f"ratio ({suffix})" for _, suffix in SUITE_TIMINGS]
    headers += ["TFLOPS (device)", "GB/s (device)", "% of HBM"]
    rows = []
    for r in records:
        row = [r["category"], shape_label(r["M"], r["N"], r["K"]), r.get("selected") or "?"]
        row.append(str(r["input_sets"]) if r.get("input_sets") is not None else "-")
        row += [_suite_us_cell(r, key, prefix) for key, _ in who for prefix, _ in SUITE_TIMINGS]
        row += [fmt_ratio(r.get(prefix + "ratio")) for prefix, _ in SUITE_TIMINGS]
        row.append(fmt_tflops(r.get("tflops")))
        row.append(f"{r['gbps']:.0f}" if r.get("gbps") is not None else "-")
        row.append(f"{r['pct_hbm']:.0f}%" if r.get("pct_hbm") is not None else "")
        rows.append(row)
    return format_table(headers, rows, [False, False, False] + [True] * (len(headers) - 3), padded)


def suite_category_table(summary: Sequence[dict], padded: bool = True) -> str:
    """One row per category of a suite summary (fastgemm.bench.suite.summarize), the overall row
    last: shapes (measured/all where some were not), per timing the geometric mean of the ratios,
    the smallest ratio and the shape it was measured on."""
    headers = ["category", "shapes"]
    for _, suffix in SUITE_TIMINGS:
        headers += [f"geomean ({suffix})", f"min ({suffix})", f"min at ({suffix})"]
    rows = []
    for row in summary:
        measured, total = row["measured"], row["shapes"]
        cells = [row["category"], str(total) if measured == total else f"{measured}/{total}"]
        for prefix, _ in SUITE_TIMINGS:
            cells += [
                fmt_ratio(row[prefix + "geomean_ratio"]),
                fmt_ratio(row[prefix + "min_ratio"]),
                row[prefix + "min_shape"] or "-",
            ]
        rows.append(cells)
    right = [False, True] + [True, True, False] * len(SUITE_TIMINGS)
    return format_table(headers, rows, right, padded)
