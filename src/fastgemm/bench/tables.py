"""The table renderer shared by the benchmark's terminal tables (``fastgemm.bench.report``) and the
README tables (``benchmarks/update_readme.py``): the pipe-table layout, the row order (rungs by
version, then ``auto``, then cuBLAS), the shapes of a results list and the cells; and every table and
caption both draw: the ladder (kernels x shapes), the long table of the terminal, the overhead table,
the shape suite's two tables and caption, and the timing note. A parameter ``markdown`` (or, for the
suite's tables, ``padded``) picks the README's form over the terminal's.

Standard library only and no imports from fastgemm: ``benchmarks/update_readme.py`` loads this file
by path, so the README can be regenerated where fastgemm's extension is not built.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

CUBLAS = "cuBLAS"
AUTO = "auto"
BASELINE = "cuBLAS through CuPy"  # the cuBLAS peer's name where a results file's meta names none
TIMING_SHORT = {"device": "device", "end-to-end": "e2e"}
TIMING_PREFIX = {"device": "", "end-to-end": "e2e_"}  # of the result record keys
TIMING_NOTE = {
    "device": "device time (CUDA events around back-to-back launches; host cost hidden)",
    "end-to-end": "end-to-end (host clock from synchronize to synchronize around back-to-back "
    "calls from Python: call cost and launch gaps included)",
}


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


def status_text(r: dict) -> str | None:
    """What stands in a figure's cell of a record that was not measured (None: it was), in the
    terminal's long form: the error of a wrong result, the reason of an n/a."""
    status = status_of(r)
    if status == "ok":
        return None
    if status == "n/a":
        return "n/a (alignment)"
    if status == "wrong":
        err = r.get("rel_error")
        return "WRONG" + (f" (err {err:.1e})" if isinstance(err, (int, float)) else "")
    return "ERROR"


def md_escape(text: object) -> str:
    """Text for a markdown table cell: pipes escaped, one line."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def run_line(meta: dict) -> str:
    """'Measured on <gpu> (cc ..), CUDA .., cuBLAS .., <date> at commit ..': where a README caption
    starts."""
    date = str(meta.get("date", "?"))[:10]
    commit = str(meta.get("git_commit") or "")[:7]
    at = f" at commit {commit}" + ("" if meta.get("git_clean", True) else " (with local changes)")
    return (
        f"Measured on {meta.get('gpu', '?')} (cc {meta.get('compute_capability', '?')}), "
        f"CUDA {meta.get('cuda_runtime', '?')}, cuBLAS {meta.get('cublas_version', '?')}, {date}"
        + (at if commit else "")
    )


def timing_note(timings: Sequence[str], markdown: bool = False) -> str:
    """What the number columns of a table measure, for timings ("device", "end-to-end") in column
    order: a 'timing: ...' line on the terminal, the README's 'Timing: ....' (markdown=True)."""
    if len(timings) > 1:
        e2e = "e2e columns" if markdown else "the e2e columns"
        text = f"{TIMING_NOTE['device']}; {e2e}: {TIMING_NOTE['end-to-end']}"
    else:
        text = TIMING_NOTE[timings[0]]
    return f"Timing: {text}." if markdown else f"timing: {text}"


def rung_cell(name: str, version: int | None, rows: Sequence[dict], kernels: dict) -> str:
    """The rung number; a branch names the rung it branches from. `kernels`: kernel name ->
    {techniques, version, parent, branch}, where known (else the records say)."""
    info = kernels.get(name, {})
    branch = info.get("branch", any(r.get("branch") for r in rows))
    rung = str(version) if version is not None else "?"
    if not branch:
        return rung
    parent = str(info.get("parent") or next((r["parent"] for r in rows if r.get("parent")), ""))
    parent_version = kernels.get(parent, {}).get("version")
    if parent_version is None:
        m = re.match(r"^[a-z]+gemm_v(\d+)_", parent)
        parent_version = int(m.group(1)) if m else None
    return f"{rung} (branch of {parent_version})" if parent_version is not None else f"{rung} (branch)"


def _rung_and_technique(
    name: str, version: int | None, rows: Sequence[dict], kernels: dict, baseline: str | None
) -> tuple[str, str]:
    """The rung and technique cells of a kernel's ladder row (`rows`: its records)."""
    stored = next((str(r["techniques"]) for r in rows if r.get("techniques")), "")
    if name == CUBLAS:
        return "—", stored or baseline or BASELINE
    if name == AUTO:
        return "auto", "fastgemm.select() picks the rung per shape"
    return rung_cell(name, version, rows, kernels), kernels.get(name, {}).get("techniques") or stored


def ladder_table(
    results: Sequence[dict],
    timings: Sequence[str] = ("device",),
    *,
    markdown: bool = False,
    kernels: dict | None = None,
    baseline: str | None = None,
    peak: float | None = None,
) -> str:
    """The ladder: one row per kernel in row_order, per shape and timing (in `timings` order)
    'TFLOPS (xx%)' (% of cuBLAS), and the % of peak at the largest shape in the first timing.

    On the terminal: padded, shapes as MxNxK, every column named by its timing unless device time
    is the only one, '-' where there is no record and ERROR where there is no number. In the README
    (markdown=True): unpadded, cubes as 1024³, only end-to-end columns named, '—' and 'error',
    kernel names as code. `kernels` (kernel name -> {techniques, version, parent, branch}; may be
    empty) adds the rung and technique columns (a branch then says so in its rung);
    `baseline` is the cuBLAS row's technique where its records name none, `peak` the peak TFLOPS
    the % of peak header names."""
    shapes = shapes_in(results)
    largest = largest_shape(shapes)
    index = by_kernel_and_shape(results)
    label = cube_label if markdown else shape_label
    marks = {"missing": "—", "failed": "error", "unmeasured": "error"} if markdown else {}

    def suffix(timing: str) -> str:
        named = timing != "device" or (len(timings) > 1 and not markdown)
        return f" {TIMING_SHORT[timing]}" if named else ""

    peak_at = label(*largest) + suffix(timings[0]) + (f", peak {fmt_tflops(peak)} TFLOPS" if peak else "")
    headers = ["kernel"] if kernels is None else ["rung", "kernel", "technique"]
    headers += [label(*s) + suffix(t) for s in shapes for t in timings]
    headers.append(f"% of peak ({peak_at})" if markdown else f"% peak @ {peak_at}")
    peak_key = TIMING_PREFIX[timings[0]] + "pct_peak"
    branches = branch_names(results)
    rows = []
    for name, version in row_order(results):
        shown = name
        if markdown and name != CUBLAS:
            shown = '`kernel="auto"`' if name == AUTO else f"`{name}`"
        if kernels is None:
            row = [kernel_label(shown, name in branches)]
        else:
            records = [r for r in results if r["kernel"] == name]
            rung, technique = _rung_and_technique(name, version, records, kernels, baseline)
            row = [rung, shown, md_escape(technique) if markdown else technique]
        for s in shapes:
            row += [
                tflops_cell(index.get((name, *s)), name != CUBLAS, TIMING_PREFIX[t], **marks) for t in timings
            ]
        big = index.get((name, *largest))
        pct_peak = big.get(peak_key) if big else None
        row.append(f"{pct_peak:.{0 if markdown else 1}f}%" if pct_peak is not None else "n/a")
        rows.append(row)
    right = [False] if kernels is None else [True, False, False]
    return format_table(headers, rows, right + [True] * (len(headers) - len(right)), padded=not markdown)


def long_table(results: Sequence[dict], timings: Sequence[str] = ("device",)) -> str:
    """kernel | shape | per timing: TFLOPS | % of cuBLAS | % of peak, one row per (kernel, shape);
    with both timings also the end-to-end minus the device time per call, in microseconds."""
    order = {kv: i for i, kv in enumerate(row_order(results))}
    shapes = {s: i for i, s in enumerate(shapes_in(results))}
    headers = ["kernel", "shape"]
    for t in timings:
        short = TIMING_SHORT[t]
        headers += [f"TFLOPS ({short})", f"% of cuBLAS ({short})", f"% of peak ({short})"]
    both = len(timings) > 1
    if both:
        headers.append("e2e - device (us/call)")
    rows = []
    for r in sorted(
        results, key=lambda r: (shapes[(r["M"], r["N"], r["K"])], order[(r["kernel"], r["version"])])
    ):
        name = kernel_label(r["kernel"], bool(r.get("branch"))) + (
            f" -> {r['selected']}" if r.get("selected") else ""
        )
        row = [name, shape_label(r["M"], r["N"], r["K"])]
        for t in timings:
            p = TIMING_PREFIX[t]
            row += [
                status_text(r) or fmt_tflops(r.get(p + "tflops")),
                f"{r[p + 'pct_cublas']:.1f}%" if r.get(p + "pct_cublas") is not None else "-",
                f"{r[p + 'pct_peak']:.1f}%" if r.get(p + "pct_peak") is not None else "n/a",
            ]
        if both:
            ms, e2e = r.get("ms"), r.get("e2e_ms")
            row.append(f"{(e2e - ms) * 1e3:.1f}" if ms is not None and e2e is not None else "-")
        rows.append(row)
    return format_table(headers, rows, [False, False] + [True] * (len(headers) - 2))


# The libraries of the --overhead records (fastgemm.bench.overhead), in the README's column order.
OVERHEAD_LIBRARIES = (("torch", "torch"), ("cupy", "CuPy"))  # (record value, column name)


def _overhead_cells(r: dict | None, markdown: bool) -> list[str]:
    """Host µs per call (the median; on the terminal also the minimum) and the ratio to the peer of
    one (case, library) record; one that was not timed says why."""
    none = "—" if markdown else "-"
    if r is None:
        return [none, none]
    median, ratio = r.get("host_us_median"), r.get("ratio_to_peer")
    if status_of(r) != "ok" or median is None:
        if markdown:
            return ["WRONG" if status_of(r) == "wrong" else "error", none]
        return [status_text(r) or "ERROR", none, none]
    ratio_text = f"{ratio:.2f}x" if ratio is not None else none
    if markdown:
        return [fmt_us(median), ratio_text]
    return [f"{median:.2f}", f"{r['host_us_min']:.2f}", ratio_text]


def overhead_table(records: Sequence[dict], markdown: bool = False) -> str:
    """Host cost per call of the --overhead records. On the terminal one row per record: case |
    library | µs/call median and min | median / the peer's median. In the README (markdown=True)
    one row per case and per library (OVERHEAD_LIBRARIES order, those with records) µs/call and
    the ratio to that library's matmul(out=)."""
    if not markdown:
        headers = ["case", "library", "host us/call (median)", "host us/call (min)"]
        headers.append("vs matmul(out=) (same library, dtype)")
        rows = [[r["label"], r["library"], *_overhead_cells(r, False)] for r in records]
        return format_table(headers, rows, [False, False, True, True, True])
    libs = [(key, shown) for key, shown in OVERHEAD_LIBRARIES if any(r["library"] == key for r in records)]
    index = {(r["case"], r["library"]): r for r in records}
    labels: dict = {}
    for r in records:
        labels.setdefault(r["case"], r["label"])
    headers = ["case"]
    for key, shown in libs:
        headers += [f"{shown} µs/call", f"vs {key}.matmul"]
    rows = []
    for case, text in labels.items():
        cells = [c for key, _ in libs for c in _overhead_cells(index.get((case, key)), True)]
        rows.append([md_escape(text), *cells])
    return format_table(headers, rows, [False] + [True] * (len(headers) - 1), padded=False)


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


def suite_caption(meta: dict, markdown: bool = False) -> str:
    """What the suite's tables show: the peers, the ratio and the timings. On the terminal a line
    each, with the TFLOPS and bandwidth columns and the operands; in the README (markdown=True)
    the run line, the suite's size and the operands' rotation, then the Timing line."""
    code = "`" if markdown else ""  # names of code in the README
    peers = [str(meta.get("baseline") or BASELINE)]
    if meta.get("torch_version"):
        blas = meta.get("torch_blas") if markdown else f"BLAS library {meta.get('torch_blas')}"
        peers.append(f"{code}torch.matmul{code} (torch {meta['torch_version']}, {blas})")
    against = f'fastgemm {code}kernel="auto"{code} against {" and ".join(peers)}'
    ratio = "the faster peer's time / fastgemm's (> 1: fastgemm is faster)"
    timing = timing_note(["device", "end-to-end"], markdown)
    if markdown:
        shapes = sum(len(v) for v in (meta.get("suite") or {}).values())
        return (
            f"{run_line(meta)}; `python -m fastgemm.bench --suite`, {meta.get('dtype')}, {shapes} shapes; "
            f"{against} in the same process; median of {meta.get('rounds', '?')} rounds; operands "
            "rotate over input sets of at least 3x the L2 cache, so no call finds its operands in L2. "
            f"Ratio = {ratio}: geometric mean and minimum per category.\n{timing}"
        )
    hbm = meta.get("hbm_tb_s")
    hbm_txt = f"{hbm:g} TB/s, {meta.get('hbm_source')}" if hbm else f"{meta.get('hbm_source')}: no % column"
    lines = [
        f"{against}, in the same process",
        (
            f"ratio = {ratio}; TFLOPS: fastgemm, device time; GB/s and % of HBM ({hbm_txt}) for "
            f"memory-bound shapes ({meta.get('memory_bound')})"
        ),
        f"{meta.get('operands')} (the sets column: how many)",
        timing,
    ]
    if meta.get("torch_skipped"):
        lines.append(f"torch.matmul: not measured ({meta['torch_skipped']})")
    return "\n".join(lines)


# --- the multi-GPU benchmark (python -m fastgemm.bench --multi-gpu) ---------------------------

MULTIGPU_TIMING = (
    "Timing: end to end, the median over rounds of back-to-back calls from Python, until every "
    "GPU is done (host cost included)."
)


def multigpu_tables(data: dict) -> str:
    """The one-process table (one GEMM over the host's GPUs against one GPU) and the
    tensor-parallel table (the overlapped pair against the unoverlapped baseline, slowest rank),
    in Markdown, captioned with the GPU, the commit and the timing."""
    meta = data["meta"]
    single = [r for r in data["results"] if r.get("part") == "one-process"]
    tp = [r for r in data["results"] if r.get("part") == "tensor-parallel"]
    commit = meta.get("git_commit") or "unknown"
    lines = [
        (
            f"{meta.get('gpus', '?')} x {md_escape(meta.get('gpu', '?'))}, NCCL {meta.get('nccl', '?')}, "
            f"commit `{commit}`{'' if meta.get('git_clean', True) else ' (with local changes)'}, "
            f"{meta.get('date', '')}. {MULTIGPU_TIMING}"
        ),
    ]
    if single:
        lines += [
            "",
            (
                "One process, A, B and C on GPU 0 (`fastgemm.distributed.gemm`), against one GPU's `auto` "
                "and `torch.matmul` on one GPU:"
            ),
            "",
            (
                "| dtype | M x N x K | GPUs | used | way | 1 GPU auto (ms) | torch.matmul, 1 GPU (ms) | spread (ms) "
                "| TFLOPS | speedup | efficiency (speedup / used) |"
            ),
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in single:
            lines.append(
                f"| {r['dtype']} | {shape_label(*r['shape'])} | {r['gpus']} | {r.get('pieces', r['gpus'])} | "
                f"{r['strategy']} | "
                f"{r['one_gpu_ms']:.2f} | {r['torch_one_gpu_ms']:.2f} | {r['spread_ms']:.2f} | "
                f"{r['spread_tflops']:.0f} | {r['speedup']:.2f}x | {r['efficiency']:.0%} |"
            )
    if tp:
        lines += [
            "",
            (
                "Tensor-parallel pair, one process per GPU (`all_gather_gemm`, `gemm_reduce_scatter`, "
                "`check=False`), the slowest rank, against NCCL's collective and `torch.matmul` one after "
                "the other (ms); `checked`: the same calls with the default `check=True`:"
            ),
            "",
            (
                "| dtype | ranks | transport | tokens x hidden x intermediate | all_gather + matmul "
                "| all_gather_gemm | matmul + reduce_scatter | gemm_reduce_scatter | pair speedup "
                "| pair speedup, checked |"
            ),
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in tp:
            t = r["times_ms"]
            base = t["all_gather + torch.matmul"] + t["torch.matmul + reduce_scatter"]
            checked = t.get("all_gather_gemm (checked)", 0.0) + t.get("gemm_reduce_scatter (checked)", 0.0)
            lines.append(
                f"| {r['dtype']} | {r['ranks']} | {r.get('transport', 'nccl ring')} | "
                f"{r['tokens']} x {r['hidden']} x {r['intermediate']} | "
                f"{t['all_gather + torch.matmul']:.3f} | {t['all_gather_gemm']:.3f} | "
                f"{t['torch.matmul + reduce_scatter']:.3f} | {t['gemm_reduce_scatter']:.3f} | "
                f"{r['pair_speedup']:.3f}x | " + (f"{base / checked:.3f}x |" if checked else "- |")
            )
    return "\n".join(lines)
