"""The table renderer shared by the benchmark's terminal tables (``fastgemm.bench.report``) and the
README tables (``benchmarks/update_readme.py``): the pipe-table layout, the row order (rungs by
version, then ``auto``, then cuBLAS), the shapes of a results list and the TFLOPS cell.

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
