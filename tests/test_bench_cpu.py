"""CPU tests of the benchmark's pure parts: argument parsing, result records, tables, the --overhead
pipeline on NumPy stand-ins, the --suite shapes, arithmetic, tables and pipeline (NumPy standing in
for CuPy, torch on the CPU for the torch peer), and the README rendering of
benchmarks/update_readme.py.

No GPU, CuPy or torch is needed. The package ``src/fastgemm/bench/`` and
``benchmarks/update_readme.py`` are loaded from the checkout by path (the package under a name of
its own, its modules as submodules of that name): neither imports fastgemm's extension at module
level, so these tests run where ``fastgemm._C`` is not built (run them with ``--noconftest`` there:
the shared conftest imports fastgemm), and never test an installed copy. Only the test that asks the
real ``fastgemm.select`` needs ``_C`` and is skipped without it.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str, path: Path, package: bool = False) -> types.ModuleType:
    """The file at `path` as module `name`; with package=True, `path` is a package's __init__.py and
    its modules import as name.<module> (relative imports resolve within it)."""
    search = [str(path.parent)] if package else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=search)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


bench = _load("fastgemm_bench_under_test", ROOT / "src" / "fastgemm" / "bench" / "__init__.py", package=True)
cli, device, overhead, peers, report, shapes, suite, tables, timing = (
    importlib.import_module(f"{bench.__name__}.{name}")
    for name in ("cli", "device", "overhead", "peers", "report", "shapes", "suite", "tables", "timing")
)
update_readme = _load("fastgemm_update_readme_under_test", ROOT / "benchmarks" / "update_readme.py")


# ----------------------------------------------------------------------------------------------
# Arguments
# ----------------------------------------------------------------------------------------------


def test_defaults_keep_device_timing_and_leave_overhead_off():
    args = cli.parse_args([])
    assert args.timing == "device"
    assert args.overhead is False


@pytest.mark.parametrize("timing", ["device", "end-to-end", "both"])
def test_timing_values(timing):
    assert cli.parse_args(["--timing", timing]).timing == timing


def test_overhead_defaults():
    args = cli.parse_args(["--overhead"])
    assert args.overhead_mnk == (64, 64, 64)
    assert (args.overhead_batches, args.overhead_calls) == (30, 200)


def test_overhead_options():
    args = cli.parse_args(
        ["--overhead", "--overhead-shape", "128x64x32", "--overhead-batches", "5", "--overhead-calls", "50"]
    )
    assert args.overhead_mnk == (128, 64, 32)
    assert (args.overhead_batches, args.overhead_calls) == (5, 50)


@pytest.mark.parametrize(
    "argv",
    [
        ["--timing", "wall"],
        ["--timing", ""],
        ["--overhead", "--overhead-batches", "0"],
        ["--overhead", "--overhead-batches", "many"],
        ["--overhead", "--overhead-calls", "0"],
        ["--overhead", "--overhead-calls", "-5"],
        ["--overhead", "--overhead-calls", str(overhead.OVERHEAD_MAX_CALLS + 1)],
        ["--overhead", "--overhead-shape", "64x64"],
        ["--overhead", "--overhead-shape", "64x64x0"],
        ["--overhead", "--overhead-shape", "64x64x64,128x128x128"],
        ["--overhead", "--overhead-shape", ""],
        ["--overhead-shape", "64x64x64"],  # needs --overhead
        ["--overhead-calls", "100"],
        ["--overhead", "--timing", "both"],  # --timing is the shape benchmark's
    ],
)
def test_bad_arguments_exit_with_status_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.parse_args(argv)
    assert info.value.code == 2
    assert "error:" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------
# End-to-end figures in result records, CSV and tables
# ----------------------------------------------------------------------------------------------


def _trial(name: str, kind: str, device_ms: list, e2e_ms: list, status: str = "ok") -> Any:
    version = None if kind != "kernel" else 20
    cand = timing.Candidate(name, version, "tech", kind)
    trial = timing.Trial(cand, 1024, 1024, 1024, status=status, reps=100)
    trial.samples, trial.e2e_samples = list(device_ms), list(e2e_ms)
    return trial


def _records(device: bool, e2e: bool) -> list[dict]:
    trials = [
        _trial(
            tables.CUBLAS,
            "cublas",
            [0.010, 0.012, 0.011] if device else [],
            [0.020, 0.022, 0.021] if e2e else [],
        ),
        _trial("hgemm_v20_hoisted_beta", "kernel", [0.0110] if device else [], [0.0420] if e2e else []),
        _trial("hgemm_v01_mma", "kernel", [], [], status="wrong"),
    ]
    return report.result_records(trials, "float16", 989.0)


def test_records_carry_device_and_end_to_end_figures():
    base, v20, wrong = _records(device=True, e2e=True)
    flops = 2 * 1024**3
    assert base["ms"] == pytest.approx(0.011) and base["e2e_ms"] == pytest.approx(0.021)
    assert base["tflops"] == pytest.approx(flops / 0.011e-3 / 1e12, rel=1e-3)
    assert base["e2e_tflops"] == pytest.approx(flops / 0.021e-3 / 1e12, rel=1e-3)
    assert base["pct_cublas"] == 100.0 and base["e2e_pct_cublas"] == 100.0
    assert v20["pct_cublas"] == pytest.approx(100.0, abs=0.01)
    assert v20["e2e_pct_cublas"] == pytest.approx(50.0, abs=0.01)  # 0.021 / 0.042
    assert v20["e2e_pct_peak"] == pytest.approx(100 * v20["e2e_tflops"] / 989.0, abs=0.01)
    assert (v20["rounds"], v20["e2e_rounds"], v20["reps"]) == (1, 1, 100)
    for key in ("ms", "tflops", "pct_cublas", "pct_peak", "e2e_ms", "e2e_tflops", "e2e_pct_cublas"):
        assert wrong[key] is None


def test_device_only_records_keep_the_old_fields_and_null_e2e():
    _, v20, _ = _records(device=True, e2e=False)
    old_keys = (
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
        "rel_error",
        "ok",
        "status",
        "techniques",
        "rounds",
        "reps",
        "host_limited_rounds",
        "selected",
        "error",
    )
    assert all(k in v20 for k in old_keys)
    assert v20["tflops"] is not None and v20["e2e_ms"] is None and v20["e2e_tflops"] is None
    assert v20["e2e_rounds"] == 0


def test_end_to_end_only_records():
    _, v20, _ = _records(device=False, e2e=True)
    assert v20["ms"] is None and v20["tflops"] is None and v20["rounds"] == 0
    assert v20["e2e_ms"] == pytest.approx(0.042) and v20["reps"] == 100


def test_csv_headers_name_the_timing(tmp_path):
    results = _records(device=True, e2e=True)
    paths = report.write_outputs(tmp_path, "float16", "gpu", {"timing": "both"}, results)
    with open(paths["csv"], newline="") as f:
        rows = list(csv.DictReader(f))
    assert {
        "device_ms",
        "device_tflops",
        "device_pct_cublas",
        "e2e_ms",
        "e2e_tflops",
        "e2e_pct_cublas",
    } <= set(rows[0])
    assert "ms" not in rows[0] and "tflops" not in rows[0]
    assert float(rows[1]["e2e_ms"]) == pytest.approx(0.042)
    stored = json.loads(paths["json"].read_text())
    assert stored["results"][1]["e2e_ms"] == pytest.approx(0.042)  # JSON keeps the record keys
    assert stored["results"][1]["ms"] == pytest.approx(0.011)


def test_printed_tables_say_which_timing(capsys):
    results = _records(device=True, e2e=True)
    meta = {"gpu": "Fake GPU", "compute_capability": "9.0", "rounds": 3, "timing": "both"}
    report.print_table("float16", meta, results, long=False)
    report.print_table("float16", meta, results, long=True)
    out = capsys.readouterr().out
    assert "1024x1024x1024 device" in out and "1024x1024x1024 e2e" in out
    assert "TFLOPS (device)" in out and "TFLOPS (e2e)" in out and "e2e - device (us/call)" in out
    assert out.count("timing: device time") == 2 and "the e2e columns: end-to-end" in out


def test_device_only_wide_table_is_unchanged():
    results = _records(device=True, e2e=False)
    header = tables.ladder_table(results).splitlines()[0]
    assert "e2e" not in header and "device" not in header
    assert "TFLOPS (device)" in tables.long_table(results).splitlines()[0]


def test_end_to_end_round_times_host_calls():
    calls, syncs = [], []

    class FakeDevice:
        def synchronize(self) -> None:
            syncs.append(len(calls))

    cp = types.SimpleNamespace(cuda=types.SimpleNamespace(Device=FakeDevice))
    trial = _trial("k", "kernel", [], [])
    trial.launch = calls.append
    trial.next_set = 1
    ms = timing.time_end_to_end(cp, trial, ["s0", "s1", "s2"], 4)
    assert calls == ["s1", "s2", "s0", "s1"]  # rotating input sets, as the device rounds do
    assert syncs == [0, 4]  # synchronised before the first and after the last call
    assert trial.next_set == 2 and ms >= 0


# ----------------------------------------------------------------------------------------------
# --overhead on NumPy stand-ins
# ----------------------------------------------------------------------------------------------


def _numpy_lib(name: str) -> Any:
    np = pytest.importorskip("numpy")

    def from_host(a: Any, fortran: bool) -> Any:  # a copy, as a transfer to the device makes
        return np.array(a, order="F" if fortran else "C", copy=True)

    return peers.ArrayLib(
        name, "0.0", from_host, np.asarray, lambda: None, lambda A, B, out: np.matmul(A, B, out=out)
    )


def _fake_fastgemm(wrong_sgemm: bool = False) -> Any:
    np = pytest.importorskip("numpy")
    seen: list = []

    def gemm(A: Any, B: Any, C: Any, alpha: float = 1.0, beta: float = 0.0, *, kernel: str = "auto"):
        seen.append((kernel, beta, C.flags.f_contiguous))
        prod = alpha * (A.astype(np.float64) @ B.astype(np.float64))
        C[...] = prod if beta == 0 else prod + beta * C
        return C

    def sgemm(A: Any, B: Any, C: Any, *args: Any, **kwargs: Any):
        gemm(A, B, C, *args, **kwargs)
        if wrong_sgemm:
            C *= 2
        return C

    def select(M: int, N: int, K: int, dtype: str, **where: Any) -> Any:
        name = "hgemm_v20_hoisted_beta" if dtype == "float16" else "sgemm_v09_cp_async"
        return types.SimpleNamespace(kernel=types.SimpleNamespace(name=name))

    def kernels(dtype: str) -> list:
        name = select(1, 1, 1, dtype).kernel.name
        return [types.SimpleNamespace(name=name, version=20, techniques="fake", min_cc=90, max_cc=None)]

    dispatch = types.SimpleNamespace(PLAN_ALIGN_CAP=128)  # the alignment classes select() reads
    return types.SimpleNamespace(
        hgemm=gemm, sgemm=sgemm, select=select, kernels=kernels, dispatch=dispatch, seen=seen
    )


def _run_overhead_pipeline(fg: Any, libs: list) -> list[dict]:
    shape = (16, 8, 24)
    specs = overhead.overhead_specs(overhead.forced_kernels(fg, shape))
    cases = [
        overhead.prepare_case(spec, lib, fg, shape, seed)
        for seed, (lib, spec) in enumerate((lib, spec) for lib in libs for spec in specs)
    ]
    overhead.measure_overhead(cases, batches=3, calls=4, warmup=2, seed=0)
    return overhead.overhead_records(cases, calls=4)


def test_overhead_cases_and_records():
    fg = _fake_fastgemm()
    records = _run_overhead_pipeline(fg, [_numpy_lib("torch"), _numpy_lib("cupy")])
    assert [r["case"] for r in records[:10]] == [
        "hgemm-auto",
        "hgemm-beta",
        "hgemm-forder",
        "hgemm-forced",
        "sgemm-auto",
        "sgemm-beta",
        "sgemm-forder",
        "sgemm-forced",
        "matmul-float16",
        "matmul-float32",
    ]
    assert [r["library"] for r in records] == ["torch"] * 10 + ["cupy"] * 10
    assert all(r["status"] == "ok" for r in records), [r["error"] for r in records]
    assert all(r["batches"] == 3 and len(r["host_us_samples"]) == 3 for r in records)
    assert all(r["host_us_min"] <= r["host_us_median"] for r in records)
    forced = next(r for r in records if r["case"] == "hgemm-forced")
    assert forced["kernel"] == "hgemm_v20_hoisted_beta"
    assert forced["label"] == "hgemm fp16, kernel=hgemm_v20_hoisted_beta"
    peer = next(r for r in records if r["case"] == "matmul-float16" and r["library"] == "cupy")
    assert peer["ratio_to_peer"] == pytest.approx(1.0) and peer["peer"] == "cupy.matmul"
    auto = next(r for r in records if r["case"] == "sgemm-auto" and r["library"] == "cupy")
    peer32 = next(r for r in records if r["case"] == "matmul-float32" and r["library"] == "cupy")
    assert auto["ratio_to_peer"] == pytest.approx(auto["host_us_median"] / peer32["host_us_median"], rel=1e-2)
    # The calls were made as the cases say: forced kernel, beta, F-ordered C; plus one check,
    # two warm-up and 3 x 4 timed calls per case.
    assert ("hgemm_v20_hoisted_beta", 0.0, False) in fg.seen
    assert ("auto", 0.5, False) in fg.seen and ("auto", 0.0, True) in fg.seen
    assert len(fg.seen) == 8 * 2 * (1 + 2 + 12)


def test_overhead_marks_wrong_cases_and_does_not_time_them():
    records = _run_overhead_pipeline(_fake_fastgemm(wrong_sgemm=True), [_numpy_lib("cupy")])
    by_case = {r["case"]: r for r in records}
    for case in ("sgemm-auto", "sgemm-beta", "sgemm-forder", "sgemm-forced"):
        assert by_case[case]["status"] == "wrong" and by_case[case]["batches"] == 0
        assert by_case[case]["host_us_median"] is None and "relative Frobenius" in by_case[case]["error"]
    assert by_case["hgemm-auto"]["status"] == "ok"
    assert "WRONG (err" in tables.overhead_table(records)


def test_overhead_error_when_select_names_no_kernel():
    fg = _fake_fastgemm()
    fg.select = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("no GPU"))
    records = _run_overhead_pipeline(fg, [_numpy_lib("torch")])
    forced = next(r for r in records if r["case"] == "hgemm-forced")
    assert forced["status"] == "error" and "named no float16 kernel" in forced["error"]
    assert forced["label"].endswith("kernel=?")


def test_interleaved_batches_in_seeded_random_order():
    log: list = []

    def case(name: str) -> Any:
        lib = peers.ArrayLib(name, None, None, None, lambda: None, None)
        c = overhead.OverheadCase(
            overhead.OverheadSpec(name, name, "hgemm", "float16"),
            lib,
            call=lambda: log.append(name),
            status="ok",
        )
        return c

    cases = [case(n) for n in "abcdef"]
    overhead.measure_overhead(cases, batches=4, calls=1, warmup=0, seed=1)
    rounds = [log[i : i + 6] for i in range(0, 24, 6)]
    assert all(sorted(r) == list("abcdef") for r in rounds)  # batch b of every case, then b+1
    assert len({tuple(r) for r in rounds}) > 1  # a new order each round
    log.clear()
    overhead.measure_overhead([case(n) for n in "abcdef"], batches=4, calls=1, warmup=0, seed=1)
    assert [log[i : i + 6] for i in range(0, 24, 6)] == rounds  # seeded


def test_overhead_outputs(tmp_path, capsys):
    records = _run_overhead_pipeline(_fake_fastgemm(), [_numpy_lib("torch")])
    meta = {
        "gpu": "Fake GPU",
        "compute_capability": "9.0",
        "shape": [16, 8, 24],
        "batches": 3,
        "calls_per_batch": 4,
        "skipped_libraries": {"cupy": "CuPy is not installed"},
    }
    paths = report.write_outputs(
        tmp_path, "overhead", "fake-gpu", meta, records, overhead.OVERHEAD_FIELDS, {}
    )
    assert paths["json"].name == "overhead-fake-gpu.json"
    with open(paths["csv"], newline="") as f:
        header = next(csv.reader(f))
    assert header == list(overhead.OVERHEAD_FIELDS)
    report.print_overhead(meta, records)
    out = capsys.readouterr().out
    assert "hgemm fp16, auto, F-ordered A, B, C" in out and "host us/call (median)" in out
    assert "cupy: skipped (CuPy is not installed)" in out


def _fake_torch() -> Any:
    """Just enough of torch for --overhead, on NumPy arrays."""
    np = pytest.importorskip("numpy")

    class Tensor(np.ndarray):
        def to(self, device: Any) -> Any:
            return self.copy()

        def contiguous(self) -> Any:
            return np.ascontiguousarray(self).view(Tensor)

        def cpu(self) -> Any:
            return self

        def numpy(self) -> Any:
            return np.asarray(self)

    props = types.SimpleNamespace(
        major=9, minor=0, name="Fake H100", multi_processor_count=132, L2_cache_size=50 << 20
    )
    cuda = types.SimpleNamespace(
        is_available=lambda: True,
        device_count=lambda: 1,
        set_device=lambda d: None,
        synchronize=lambda d=None: None,
        get_device_properties=lambda i: props,
    )
    return types.SimpleNamespace(
        __version__="9.9.9",
        cuda=cuda,
        version=types.SimpleNamespace(cuda="12.8"),
        device=lambda kind, index: (kind, index),
        from_numpy=lambda a: a.view(Tensor),
        matmul=lambda A, B, out: np.matmul(A, B, out=out),
    )


def test_main_overhead_with_torch_alone(tmp_path, monkeypatch, capsys):
    fg = _fake_fastgemm()
    fg.device_count, fg.runtime_status, fg.__version__ = (lambda: 1), (lambda: "ok"), "0.0-test"
    monkeypatch.setitem(sys.modules, "fastgemm", fg)
    monkeypatch.setitem(sys.modules, "torch", _fake_torch())
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    status = bench.main(
        ["--overhead", "--overhead-batches", "2", "--overhead-calls", "3", "--out", str(tmp_path)]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "cupy skipped: CuPy is not installed" in err
    assert "hgemm fp16, kernel=hgemm_v20_hoisted_beta" in out and "cupy: skipped" in out
    data = json.loads((tmp_path / "overhead-fake-h100.json").read_text())
    meta = data["meta"]
    assert meta["mode"] == "overhead" and meta["gpu"] == "Fake H100" and meta["shape"] == [64, 64, 64]
    assert meta["torch_version"] == "9.9.9" and meta["cupy_version"] is None
    assert meta["libraries"] == ["torch"] and "cupy" in meta["skipped_libraries"]
    assert meta["command"].startswith("python -m fastgemm.bench --overhead")
    assert (
        "git_commit" in meta
        and "git_clean" in meta
        and meta["forced_kernels"]["float32"] == "sgemm_v09_cp_async"
    )
    assert len(data["results"]) == 10 and all(r["status"] == "ok" for r in data["results"])
    assert (tmp_path / "overhead-fake-h100.csv").exists()
    # and the README generator takes the file as it is
    readme = tmp_path / "README.md"
    readme.write_text("<!-- overhead_results -->\n<!-- /overhead_results -->\n")
    assert update_readme.main([str(tmp_path / "overhead-fake-h100.json"), "--readme", str(readme)]) == 0
    assert "| hgemm fp16, auto, F-ordered A, B, C |" in readme.read_text()


def test_main_overhead_without_any_array_library(monkeypatch, capsys):
    fg = _fake_fastgemm()
    fg.device_count, fg.runtime_status = (lambda: 1), (lambda: "ok")
    monkeypatch.setitem(sys.modules, "fastgemm", fg)
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert bench.main(["--overhead"]) == cli.EXIT_NO_GPU == 3  # 2 is for bad arguments
    err = capsys.readouterr().err
    assert "torch is not installed" in err and "CuPy is not installed" in err
    assert "Nothing was measured" in err


def test_real_select_names_a_kernel_to_force():
    fastgemm = pytest.importorskip("fastgemm")  # needs the built extension, not a GPU
    forced = overhead.forced_kernels(
        types.SimpleNamespace(select=lambda M, N, K, dtype: fastgemm.select(M, N, K, dtype, cc=90)),
        (64, 64, 64),
    )
    names = {k.name for k in fastgemm.kernels()}
    assert forced["float16"] in names and forced["float32"] in names


# ----------------------------------------------------------------------------------------------
# README rendering
# ----------------------------------------------------------------------------------------------


def _overhead_json(tmp_path: Path, libraries: tuple = ("torch", "cupy")) -> Path:
    results = []
    for lib in libraries:
        for case, label, us, ratio, status in (
            ("hgemm-auto", "hgemm fp16, auto, beta=0", 12.345, 1.5, "ok"),
            ("hgemm-forced", "hgemm fp16, kernel=hgemm_v20_hoisted_beta", 9.0, 1.1, "ok"),
            ("sgemm-auto", "sgemm fp32, auto, beta=0", None, None, "wrong"),
            ("matmul-float16", "peer: matmul(A, B, out=C), fp16", 8.2, 1.0, "ok"),
        ):
            results.append(
                {
                    "case": case,
                    "label": label,
                    "library": lib,
                    "dtype": "float16",
                    "host_us_median": us,
                    "host_us_min": us,
                    "ratio_to_peer": ratio,
                    "status": status,
                    "ok": status == "ok",
                }
            )
    meta = {
        "mode": "overhead",
        "gpu": "NVIDIA H100 80GB HBM3",
        "compute_capability": "9.0",
        "cuda_runtime": "13.2",
        "cublas_version": "13.1.0",
        "date": "2026-11-23T10:00:00+00:00",
        "torch_version": "2.9.0",
        "cupy_version": "14.2.0",
        "fastgemm_version": "0.1.0",
        "shape": [64, 64, 64],
        "batches": 30,
        "calls_per_batch": 200,
        "skipped_libraries": {} if "cupy" in libraries else {"cupy": "CuPy is not installed"},
    }
    path = tmp_path / "overhead-nvidia-h100-80gb-hbm3.json"
    path.write_text(json.dumps({"meta": meta, "results": results}))
    return path


def test_overhead_markdown(tmp_path):
    data = update_readme.load(_overhead_json(tmp_path))
    assert data["kind"] == "overhead"
    text = update_readme.overhead_markdown(data)
    caption, _, table = text.partition("\n\n")
    assert "NVIDIA H100 80GB HBM3" in caption and "64x64x64" in caption
    assert "median of 30 batches of 200" in caption and "torch 2.9.0" in caption
    lines = table.splitlines()
    assert lines[0] == "| case | torch µs/call | vs torch.matmul | CuPy µs/call | vs cupy.matmul |"
    assert lines[2] == "| hgemm fp16, auto, beta=0 | 12.3 | 1.50x | 12.3 | 1.50x |"
    assert lines[4] == "| sgemm fp32, auto, beta=0 | WRONG | — | WRONG | — |"
    assert lines[5] == "| peer: matmul(A, B, out=C), fp16 | 8.2 | 1.00x | 8.2 | 1.00x |"
    assert len(lines) == 6


def test_overhead_markdown_without_cupy(tmp_path):
    text = update_readme.overhead_markdown(update_readme.load(_overhead_json(tmp_path, ("torch",))))
    assert "CuPy µs/call" not in text and "cupy: not measured (CuPy is not installed)" in text


def test_update_writes_the_overhead_block(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("intro\n\n<!-- overhead_results -->\nstale table\n<!-- /overhead_results -->\n\nend\n")
    assert update_readme.update(readme, [_overhead_json(tmp_path)]) == 0
    text = readme.read_text()
    assert "stale table" not in text and "| hgemm fp16, auto, beta=0 | 12.3 |" in text
    assert text.startswith("intro\n\n<!-- overhead_results -->\nMeasured on NVIDIA H100")
    assert text.endswith("<!-- /overhead_results -->\n\nend\n")
    assert "overhead_results: " in capsys.readouterr().out


def test_update_without_overhead_markers_reports_and_keeps_the_rest(tmp_path, capsys):
    readme = tmp_path / "README.md"
    original = "<!-- bench:float16:start -->\n<!-- bench:float16:end -->\n"
    readme.write_text(original)
    shapes = tmp_path / "float16-gpu.json"
    shapes.write_text(
        json.dumps(
            {
                "meta": {"dtype": "float16", "gpu": "G", "rounds": 3},
                "results": _records(device=True, e2e=False),
            }
        )
    )
    status = update_readme.update(readme, [shapes, _overhead_json(tmp_path)])
    assert status == 1
    err = capsys.readouterr().err
    assert "overhead_results: NOT WRITTEN" in err and "<!-- overhead_results -->" in err
    assert "hgemm_v20_hoisted_beta" in readme.read_text()  # the dtype block was written


def test_update_main_reports_missing_markers_without_a_traceback(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("no markers here\n")
    assert update_readme.main([str(_overhead_json(tmp_path)), "--readme", str(readme)]) == 1
    assert "NOT WRITTEN" in capsys.readouterr().err
    assert readme.read_text() == "no markers here\n"


def _shape_data(device: bool, e2e: bool, timing: str) -> dict:
    return {
        "meta": {"dtype": "float16", "gpu": "G", "rounds": 3, "timing": timing, "peak_tflops": 989.0},
        "results": _records(device=device, e2e=e2e),
        "dtype": "float16",
    }


def test_one_table_renderer_for_the_terminal_and_the_readme():
    # update_readme.py draws with the benchmark's own renderer, this checkout's file
    assert Path(update_readme.tables.__file__).resolve() == Path(tables.__file__).resolve()
    padded = tables.format_table(["a", "bb"], [["x", "1"]], [False, True])
    assert padded.splitlines() == ["| a | bb |", "|---|---:|", "| x |  1 |"]
    compact = tables.format_table(["a", "bb"], [["xyz", "1"]], [False, True], padded=False)
    assert compact.splitlines() == ["| a | bb |", "|---|---:|", "| xyz | 1 |"]


def test_terminal_and_readme_tables_share_row_order_and_cells():
    def rows(table: str) -> list[list[str]]:
        lines = [line for line in table.splitlines() if line.startswith("| ")][1:]  # no header
        return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]

    terminal = [(row[0], row[1]) for row in rows(tables.ladder_table(_records(device=True, e2e=False)))]
    readme = [
        (row[1].strip("`"), row[3])
        for row in rows(update_readme.markdown_table(_shape_data(True, False, "device")))
    ]
    assert (
        terminal
        == readme
        == [
            ("hgemm_v01_mma", "WRONG"),
            ("hgemm_v20_hoisted_beta", "195 (100%)"),
            ("cuBLAS", "195"),
        ]
    )


def test_shape_table_says_device_time_for_old_results():
    data = _shape_data(True, False, "device")
    del data["meta"]["timing"]  # results written before --timing existed
    text = update_readme.markdown_table(data)
    assert "\nTiming: device time" in text and "e2e" not in text


def test_shape_table_with_both_timings_has_e2e_columns():
    text = update_readme.markdown_table(_shape_data(True, True, "both"))
    assert "e2e columns: end-to-end" in text
    header = next(line for line in text.splitlines() if line.startswith("| rung"))
    assert "| 1024³ | 1024³ e2e |" in header
    v20 = next(line for line in text.splitlines() if "hgemm_v20" in line)
    assert "(100%)" in v20 and "(50%)" in v20


def test_shape_table_end_to_end_only():
    text = update_readme.markdown_table(_shape_data(False, True, "end-to-end"))
    assert "Timing: end-to-end" in text and "device time" not in text
    header = next(line for line in text.splitlines() if line.startswith("| rung"))
    assert "| 1024³ e2e |" in header and "e2e, peak" in header
    assert "| error |" not in next(line for line in text.splitlines() if "hgemm_v20" in line)


def test_version_flag(capsys):
    with pytest.raises(SystemExit) as info:
        cli.parse_args(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("fastgemm ")


def test_git_clean_is_a_bool_or_none():
    assert report.git_clean() in (True, False, None)


def test_git_environment_wins_over_the_checkout(monkeypatch):
    # A copy of the tree on a GPU machine may carry a stale .git: the commit passed along wins.
    monkeypatch.setenv("FASTGEMM_GIT_COMMIT", "0" * 40)
    monkeypatch.setenv("FASTGEMM_GIT_CLEAN", "1")
    assert report.git_commit() == "0" * 40 and report.git_clean() is True
    monkeypatch.setenv("FASTGEMM_GIT_CLEAN", "0")
    assert report.git_clean() is False


# ----------------------------------------------------------------------------------------------
# --suite: the shapes, the arithmetic, the arguments, the tables and the pipeline
# ----------------------------------------------------------------------------------------------


def test_suite_shapes_are_well_formed():
    assert list(suite.SUITE) == ["square", "decode", "prefill", "deep_k", "narrow_n", "misaligned"]
    every = []
    for category, members in suite.SUITE.items():
        assert members, f"{category} is empty"
        for shape in members:
            assert len(shape) == 3 and all(type(v) is int and v > 0 for v in shape), (category, shape)
        every += members
    assert len(every) == len(set(every))  # each shape in exactly one category, once
    assert [s for _, s in suite.suite_shapes()] == every and len(every) <= 70
    assert suite.SUITE["square"] == tuple((n, n, n) for n in (256, 512, 1000, 1024, 2048, 4096, 8192))
    family_of = {nk: model for model, layers in suite.MODEL_LAYERS.items() for nk in layers.values()}
    decode = suite.SUITE["decode"]
    assert all(1 <= M <= 64 for M, _, _ in decode)
    assert len({family_of[(N, K)] for _, N, K in decode}) >= 3  # KeyError: not a model layer
    for model, layer in suite.DECODE_SWEPT:  # the swept layers at every decode M
        nk = suite.MODEL_LAYERS[model][layer]
        assert sorted(M for M, N, K in decode if (N, K) == nk) == list(suite.DECODE_M)
    assert len({family_of[(N, K)] for _, N, K in suite.SUITE["prefill"]}) >= 3
    assert all(M >= 128 for M, _, _ in suite.SUITE["prefill"])
    assert set(suite.LAYER_OF) == set(decode) | set(suite.SUITE["prefill"])
    assert suite.LAYER_OF[(1, 4096, 14336)] == "Llama-3-8B down"


def _suite_record(category: str, shape: tuple, ratio: float | None, e2e_ratio: float | None) -> dict:
    M, N, K = shape
    return {"category": category, "M": M, "N": N, "K": K, "ratio": ratio, "e2e_ratio": e2e_ratio}


def test_suite_summary_geomean_and_min():
    records = [
        _suite_record("a", (1, 2, 3), 2.0, 4.0),
        _suite_record("a", (4, 5, 6), 0.5, 1.0),
        _suite_record("a", (7, 8, 9), 1.0, None),  # e2e not measured
        _suite_record("b", (10, 11, 12), 1.5, 0.25),
        _suite_record("b", (13, 14, 15), None, None),  # fastgemm failed
    ]
    a, b, every = suite.summarize(records)
    assert (a["category"], a["shapes"], a["measured"], a["e2e_measured"]) == ("a", 3, 3, 2)
    assert a["geomean_ratio"] == pytest.approx(1.0) and a["e2e_geomean_ratio"] == pytest.approx(2.0)
    assert (a["min_ratio"], a["min_shape"]) == (0.5, "4x5x6")
    assert (a["e2e_min_ratio"], a["e2e_min_shape"]) == (1.0, "4x5x6")
    assert (b["shapes"], b["measured"], b["geomean_ratio"], b["min_shape"]) == (2, 1, 1.5, "10x11x12")
    assert every["category"] == suite.ALL and every["shapes"] == 5 and every["measured"] == 4
    assert every["geomean_ratio"] == pytest.approx(1.5**0.25, abs=1e-4)
    assert every["e2e_geomean_ratio"] == pytest.approx(1.0)  # (4 * 1 * 0.25) ** (1/3)
    assert (every["e2e_min_ratio"], every["e2e_min_shape"]) == (0.25, "10x11x12")
    none = suite.summarize([_suite_record("c", (1, 1, 1), None, None)])[0]
    assert none["geomean_ratio"] is None and none["min_shape"] is None and none["measured"] == 0


def test_suite_bandwidth_arithmetic():
    assert suite.bytes_moved(1, 4096, 14336, 2) == 2 * (14336 + 14336 * 4096 + 4096)
    assert suite.bytes_moved(3, 5, 7, 4) == 4 * (3 * 7 + 7 * 5 + 3 * 5)  # A, B read, C written once
    gbps, pct = suite.bandwidth(335_000_000, 0.1, 3.35)
    assert gbps == pytest.approx(3350.0) and pct == pytest.approx(100.0)
    assert suite.bandwidth(1000, 0.1, None) == (pytest.approx(0.01), None)
    assert suite.bandwidth(1000, None, 3.35) == (None, None)
    assert suite.memory_bound(64, 4096) and suite.memory_bound(8192, 16) and not suite.memory_bound(65, 65)
    for name, tb_s in (
        ("NVIDIA H100 80GB HBM3", 3.35),
        ("NVIDIA H200", 4.8),
        ("NVIDIA A100-SXM4-80GB", 2.039),
        ("NVIDIA H100 PCIe", 2.0),
        ("NVIDIA GH200 480GB", None),
        ("NVIDIA GeForce RTX 4090", None),
    ):
        assert device.hbm_bandwidth(name)[0] == tb_s, name


def _suite_trials(shape: tuple, times: dict) -> list:
    """Trials of one shape: times maps cuBLAS / auto / torch.matmul to (device ms, e2e ms) or to a
    status for a candidate that did not check out."""
    kinds = {tables.CUBLAS: "cublas", tables.AUTO: "auto", peers.TORCH_MATMUL: "torch"}
    trials = []
    for name, value in times.items():
        trial = timing.Trial(timing.Candidate(name, None, "tech", kinds[name]), *shape, reps=10)
        if isinstance(value, str):
            trial.status, trial.error = value, "relative Frobenius error 1 > 0.02"
        else:
            trial.status, trial.samples, trial.e2e_samples = "ok", [value[0]], [value[1]]
        if name == tables.AUTO:
            trial.selected = "hgemm_v21_narrow_tile"
        trials.append(trial)
    return trials


def test_suite_record_of_a_decode_shape():
    trials = _suite_trials(
        (16, 4096, 14336),
        {tables.CUBLAS: (0.050, 0.060), tables.AUTO: (0.040, 0.045), peers.TORCH_MATMUL: (0.044, 0.070)},
    )
    r = suite.shape_record("decode", trials, "float16", 2, 3, 3.35, 989.0)
    assert (r["layer"], r["selected"], r["input_sets"]) == ("Llama-3-8B down", "hgemm_v21_narrow_tile", 3)
    assert (r["fastgemm_us"], r["cublas_us"], r["torch_us"]) == (40.0, 50.0, 44.0)
    assert (r["fastgemm_e2e_us"], r["cublas_e2e_us"], r["torch_e2e_us"]) == (45.0, 60.0, 70.0)
    assert (r["best_peer"], r["ratio"]) == ("torch", 1.1)  # 0.044 / 0.040
    assert (r["e2e_best_peer"], r["e2e_ratio"]) == ("cublas", round(0.060 / 0.045, 4))
    assert r["tflops"] == pytest.approx(2 * 16 * 4096 * 14336 / 40e-6 / 1e12, abs=1e-3)
    nbytes = 2 * (16 * 14336 + 14336 * 4096 + 16 * 4096)
    assert r["memory_bound"] and r["bytes"] == nbytes
    assert r["gbps"] == pytest.approx(nbytes / 40e-6 / 1e9, abs=0.05)
    assert r["pct_hbm"] == pytest.approx(100 * r["gbps"] / 3350, abs=0.05)
    assert r["status"] == "ok" and r["error"] is None
    assert [c["kernel"] for c in r["candidates"]] == [tables.CUBLAS, tables.AUTO, peers.TORCH_MATMUL]


def test_suite_record_with_a_wrong_peer_and_no_torch():
    trials = _suite_trials((4096, 4096, 4096), {tables.CUBLAS: "wrong", tables.AUTO: (0.2, 0.21)})
    r = suite.shape_record("square", trials, "float16", 2, 1, None, None)
    assert r["ratio"] is None and r["e2e_ratio"] is None and r["best_peer"] is None
    assert r["cublas_status"] == "wrong" and r["torch_status"] is None and r["torch_us"] is None
    assert not r["memory_bound"] and r["gbps"] is None and r["pct_hbm"] is None
    assert r["status"] == "wrong" and r["error"].startswith("cuBLAS: relative Frobenius")


def test_suite_arguments():
    args = cli.parse_args(["--suite", "--dtype", "float16"])
    assert args.suite and args.dtypes == ["float16"] and args.timing == "both"
    assert (args.rounds, args.target_ms) == (cli.SUITE_ROUNDS, cli.SUITE_TARGET_MS)
    assert args.shape_list == [shape for _, shape in suite.suite_shapes()]
    args = cli.parse_args(["--suite", "--rounds", "7", "--target-ms", "5", "--timing", "both", "--seed", "3"])
    assert (args.rounds, args.target_ms, args.seed, args.dtypes) == (7, 5.0, 3, ["float32"])
    plain = cli.parse_args([])
    assert not plain.suite and (plain.rounds, plain.target_ms) == (cli.DEFAULT_ROUNDS, cli.DEFAULT_TARGET_MS)


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--sizes", "1024"], "--sizes"),
        (["--shapes", "16x4096x4096"], "--shapes"),
        (["--overhead"], "--overhead"),
        (["--quick"], "--quick"),
        (["--kernels", "v20"], "--kernels"),
        (["--include-auto"], "--include-auto"),
        (["--pad"], "--pad"),
        (["--timing", "device"], "--timing device"),
        (["--sizes", "1024", "--shapes", "1x2x3"], "--sizes, --shapes"),
    ],
)
def test_suite_refuses_other_shapes_and_runs(extra, named, capsys):
    with pytest.raises(SystemExit) as info:
        cli.parse_args(["--suite", *extra])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "error: --suite runs its own shapes" in err and f"cannot be combined with {named}" in err


def _fake_suite_records() -> list[dict]:
    times = {tables.CUBLAS: (0.050, 0.060), tables.AUTO: (0.040, 0.045), peers.TORCH_MATMUL: (0.044, 0.070)}
    decode = suite.shape_record(
        "decode", _suite_trials((16, 4096, 14336), times), "float16", 2, 3, 3.35, 989.0
    )
    times = {tables.CUBLAS: (0.150, 0.155), tables.AUTO: (0.200, 0.21), peers.TORCH_MATMUL: "error"}
    square = suite.shape_record(
        "square", _suite_trials((4096, 4096, 4096), times), "float16", 2, 1, 3.35, 989.0
    )
    return [decode, square]


def test_suite_tables():
    records = _fake_suite_records()
    shape_lines = tables.suite_shape_table(records, padded=False).splitlines()
    assert shape_lines[0] == (
        "| category | shape | auto runs | sets | fastgemm us (device) | fastgemm us (e2e) "
        "| cuBLAS us (device) | cuBLAS us (e2e) | torch.matmul us (device) | torch.matmul us (e2e) "
        "| ratio (device) | ratio (e2e) | TFLOPS (device) | GB/s (device) | % of HBM |"
    )
    assert shape_lines[1] == "|---|---|---|" + "---:|" * 12
    assert shape_lines[2] == (
        "| decode | 16x4096x14336 | hgemm_v21_narrow_tile | 3 | 40.0 | 45.0 | 50.0 | 60.0 | 44.0 | 70.0 "
        "| 1.10x | 1.33x | 47.0 | 2951 | 88% |"
    )
    assert shape_lines[3] == (
        "| square | 4096x4096x4096 | hgemm_v21_narrow_tile | 1 | 200 | 210 | 150 | 155 | ERROR | ERROR "
        "| 0.75x | 0.74x | 687 | - |  |"
    )
    summary = suite.summarize(records)
    category_lines = tables.suite_category_table(summary, padded=False).splitlines()
    assert category_lines == [
        (
            "| category | shapes | geomean (device) | min (device) | min at (device) | geomean (e2e) "
            "| min (e2e) | min at (e2e) |"
        ),
        "|---|---:|---:|---:|---|---:|---:|---|",
        "| decode | 1 | 1.10x | 1.10x | 16x4096x14336 | 1.33x | 1.33x | 16x4096x14336 |",
        "| square | 1 | 0.75x | 0.75x | 4096x4096x4096 | 0.74x | 0.74x | 4096x4096x4096 |",
        "| all | 2 | 0.91x | 0.75x | 4096x4096x4096 | 0.99x | 0.74x | 4096x4096x4096 |",
    ]
    padded = tables.suite_category_table(summary).splitlines()
    assert len({len(line) for line in padded}) == 1  # the terminal's padded layout


def test_suite_shape_table_without_torch_has_no_torch_columns():
    records = _fake_suite_records()
    for r in records:
        r["torch_status"] = None
    assert "torch" not in tables.suite_shape_table(records).splitlines()[0]


def test_torch_launcher_writes_each_set_through_views_of_its_own_buffers():
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    sets = [
        shapes.InputSet(
            rng.standard_normal((3, 5)).astype(np.float16),
            rng.standard_normal((5, 4)).astype(np.float16),
            np.full((3, 4), np.nan, dtype=np.float16),
            5,
            4,
            4,
        )
        for _ in range(3)
    ]
    launch = peers.torch_matmul_launcher(torch, "float16", sets)
    for s in (sets[2], sets[0], sets[1]):
        launch(s)
        want = s.A.astype(np.float64) @ s.B.astype(np.float64)
        assert np.allclose(s.C.astype(np.float64), want, rtol=1e-2, atol=1e-2)


def test_device_rounds_rotate_input_sets_for_every_candidate():
    calls: list = []

    class Event:
        def record(self) -> None:
            self.t = time.perf_counter()

        def synchronize(self) -> None:
            pass

    cp = types.SimpleNamespace(
        cuda=types.SimpleNamespace(Event=Event, get_elapsed_time=lambda a, b: (b.t - a.t) * 1e3)
    )
    off = types.SimpleNamespace(enabled=False)
    for kind in ("cublas", "torch", "auto"):
        calls.clear()
        trial = timing.Trial(timing.Candidate(kind, None, "", kind), 1, 1, 1, launch=calls.append)
        timing.time_kernel(cp, trial, ["s0", "s1", "s2"], 4, off)
        timing.time_kernel(cp, trial, ["s0", "s1", "s2"], 1, off)
        assert calls == ["s0", "s1", "s2", "s0", "s1"] and trial.next_set == 2


def _fake_cupy(l2_bytes: int) -> Any:
    """Just enough of CuPy for the shape benchmark, on NumPy arrays; "device time" is host time."""
    np = pytest.importorskip("numpy")

    class HostArray(np.ndarray):
        @property
        def data(self) -> Any:  # CuPy's MemoryPointer
            return types.SimpleNamespace(ptr=self.ctypes.data)

    def host(a: Any) -> Any:
        return np.asarray(a).view(HostArray)

    class Event:
        def record(self) -> None:
            self.t = time.perf_counter()

        def synchronize(self) -> None:
            pass

    class Device:
        def __init__(self, index: int = 0) -> None:
            pass

        def use(self) -> None:
            pass

        def synchronize(self) -> None:
            pass

    class Rng:
        def __init__(self, seed: int) -> None:
            self.rng = np.random.default_rng(seed)

        def standard_normal(self, shape: tuple, dtype: Any) -> Any:
            return host(self.rng.standard_normal(shape, dtype=dtype))

    props = {
        "name": "Fake H100 80GB HBM3",
        "major": 9,
        "minor": 0,
        "multiProcessorCount": 132,
        "l2CacheSize": l2_bytes,
        "clockRate": 1980000,
    }
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1,
        getDeviceProperties=lambda index: props,
        deviceGetAttribute=lambda attr, index: 1980000,
        runtimeGetVersion=lambda: 12080,
        driverGetVersion=lambda: 12080,
    )
    cuda = types.SimpleNamespace(
        runtime=runtime,
        Device=Device,
        Event=Event,
        get_elapsed_time=lambda start, end: (end.t - start.t) * 1e3,
        get_current_stream=lambda: types.SimpleNamespace(ptr=0),
    )
    return types.SimpleNamespace(
        __version__="0.0-fake",
        cuda=cuda,
        float32=np.float32,
        float64=np.float64,
        random=types.SimpleNamespace(default_rng=Rng),
        empty=lambda shape, dtype: host(np.empty(shape, dtype=dtype)),
        matmul=lambda a, b, out=None: np.matmul(a, b) if out is None else np.matmul(a, b, out=out),
        linalg=np.linalg,
        get_default_memory_pool=lambda: types.SimpleNamespace(free_all_blocks=lambda: None),
    )


def _cpu_torch() -> Any:
    """torch on the CPU, dressed as a CUDA torch for the suite's peer (streams, BLAS preference)."""
    torch = pytest.importorskip("torch")
    preferred = ["cublas"]

    def preferred_blas_library(backend: str | None = None) -> str:
        if backend is not None:
            preferred[0] = backend
        return preferred[0]

    cuda = types.SimpleNamespace(
        is_available=lambda: True,
        device_count=lambda: 1,
        set_device=lambda index: None,
        current_stream=lambda index=None: types.SimpleNamespace(cuda_stream=0),
    )
    matmul_flags = types.SimpleNamespace(
        allow_tf32=False,
        allow_fp16_reduced_precision_reduction=True,
        allow_bf16_reduced_precision_reduction=True,
    )
    return types.SimpleNamespace(
        __version__="9.9.9+cpu",
        cuda=cuda,
        backends=types.SimpleNamespace(
            cuda=types.SimpleNamespace(preferred_blas_library=preferred_blas_library, matmul=matmul_flags)
        ),
        get_float32_matmul_precision=lambda: "highest",
        from_dlpack=torch.from_dlpack,
        matmul=torch.matmul,
        float16=torch.float16,
        float32=torch.float32,
        bfloat16=torch.bfloat16,
        preferred=preferred,
    )


def _run_fake_suite(monkeypatch, tmp_path, torch, shapes, rounds):
    """bench.main(--suite, fp16) on the CPU fakes: fastgemm, CuPy (cuBLAS falls back to
    cupy.matmul), `torch` (a fake, or None for "not installed"), and `shapes` as the suite."""
    fg = _fake_fastgemm()
    fg.device_count, fg.runtime_status, fg.__version__ = (lambda: 1), (lambda: "ok"), "0.0-test"
    monkeypatch.setitem(sys.modules, "fastgemm", fg)
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(l2_bytes=1 << 20))
    monkeypatch.setitem(sys.modules, "cupy_backends", None)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(cli, "GPU_WARMUP_S", 0.0)
    monkeypatch.setattr(suite, "SUITE", shapes)
    argv = ["--suite", "--dtype", "float16", "--no-prefill", "--no-plot", "--rounds", str(rounds)]
    return bench.main([*argv, "--out", str(tmp_path)])


def test_main_suite_on_numpy_and_cpu_torch(tmp_path, monkeypatch, capsys):
    fake_torch = _cpu_torch()
    tiny = {"square": ((64, 64, 64),), "decode": ((1, 96, 80), (16, 96, 80)), "misaligned": ((7, 33, 19),)}
    status = _run_fake_suite(monkeypatch, tmp_path, fake_torch, tiny, rounds=2)
    out, err = capsys.readouterr()
    assert status == 0, err
    assert fake_torch.preferred == ["cublas"]  # torch's choice is restored after the run
    assert "4 shapes in 3 categories" in err and "auto against cuBLAS and torch.matmul" in err
    data = json.loads((tmp_path / "suite-float16-fake-h100-80gb-hbm3.json").read_text())
    meta, records, summary = data["meta"], data["results"], data["summary"]
    assert meta["mode"] == "suite" and meta["dtype"] == "float16" and meta["timing"] == "both"
    assert meta["rounds"] == 2 and meta["target_ms"] == cli.SUITE_TARGET_MS
    assert meta["command"].startswith("python -m fastgemm.bench --suite") and "git_commit" in meta
    assert meta["torch_blas"] == "cublaslt" and meta["peers"] == ["cuBLAS", "torch.matmul"]
    assert meta["hbm_tb_s"] == 3.35 and "rotate" in meta["operands"]
    assert meta["suite"] == {k: [list(s) for s in v] for k, v in tiny.items()}
    assert [(r["category"], r["M"], r["N"], r["K"]) for r in records] == [
        (c, *s) for c, members in tiny.items() for s in members
    ]
    for r in records:
        assert r["status"] == "ok", r["error"]
        assert all(
            r[k] is not None for k in ("fastgemm_us", "cublas_e2e_us", "torch_us", "ratio", "e2e_ratio")
        )
        assert r["selected"] == "hgemm_v20_hoisted_beta" and r["input_sets"] > 1  # small: rotated
        assert [c["kernel"] for c in r["candidates"]] == ["cuBLAS", "auto", "torch.matmul"]
        assert all(c["rounds"] == 2 and c["e2e_rounds"] == 2 for c in r["candidates"])
        assert r["memory_bound"] and r["gbps"] > 0 and r["pct_hbm"] is not None
    assert [row["category"] for row in summary] == ["square", "decode", "misaligned", "all"]
    assert summary[-1]["measured"] == 4
    expected = math.exp(sum(math.log(r["ratio"]) for r in records) / 4)
    assert summary[-1]["geomean_ratio"] == pytest.approx(expected, rel=1e-3)
    with open(tmp_path / "suite-float16-fake-h100-80gb-hbm3.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(suite.SUITE_FIELDS) and len(rows) == 4
    assert "\noperands are dense and row-major; per shape, independent input sets" in out
    assert "rotate across consecutive calls" in out and "(the sets column: how many)" in out
    assert "geomean (device)" in out and "\n| all " in out
    # and the README generator takes the file as it is
    readme = tmp_path / "README.md"
    readme.write_text("<!-- bench:suite:float16:start -->\n<!-- bench:suite:float16:end -->\n")
    path = tmp_path / "suite-float16-fake-h100-80gb-hbm3.json"
    assert update_readme.main([str(path), "--readme", str(readme)]) == 0
    assert "| decode | 2 |" in readme.read_text()


def test_main_suite_without_torch(tmp_path, monkeypatch, capsys):
    assert _run_fake_suite(monkeypatch, tmp_path, None, {"square": ((32, 32, 32),)}, rounds=1) == 0
    out, err = capsys.readouterr()
    assert "torch.matmul not measured: torch is not installed" in err
    assert "torch.matmul: not measured (torch is not installed" in out
    data = json.loads((tmp_path / "suite-float16-fake-h100-80gb-hbm3.json").read_text())
    (r,) = data["results"]
    assert r["torch_status"] is None and r["best_peer"] == "cublas" and r["ratio"] is not None
    assert data["meta"]["peers"] == ["cuBLAS"] and "torch is not installed" in data["meta"]["torch_skipped"]


def _suite_json(tmp_path: Path) -> Path:
    records = _fake_suite_records()
    meta = {
        "mode": "suite",
        "dtype": "float16",
        "gpu": "NVIDIA H100 80GB HBM3",
        "compute_capability": "9.0",
        "cuda_runtime": "13.2",
        "cublas_version": "13.1.0",
        "date": "2026-11-24T10:00:00+00:00",
        "rounds": 3,
        "torch_version": "2.11.0+cu130",
        "torch_blas": "cublaslt",
        "suite": {"decode": [[16, 4096, 14336]], "square": [[4096, 4096, 4096]]},
    }
    path = tmp_path / "suite-float16-nvidia-h100-80gb-hbm3.json"
    path.write_text(json.dumps({"meta": meta, "results": records, "summary": suite.summarize(records)}))
    return path


def test_suite_markdown(tmp_path):
    data = update_readme.load(_suite_json(tmp_path))
    assert (data["kind"], data["dtype"]) == ("suite", "float16")
    caption, _, table = update_readme.suite_markdown(data).partition("\n\n")
    assert caption.startswith(
        "Measured on NVIDIA H100 80GB HBM3 (cc 9.0), CUDA 13.2, cuBLAS 13.1.0, 2026-11-24"
    )
    assert "float16, 2 shapes" in caption and "torch 2.11.0+cu130, cublaslt" in caption
    assert "rotate" in caption and "\nTiming: device time" in caption and "e2e columns" in caption
    assert table == tables.suite_category_table(data["summary"], padded=False)


def test_update_writes_the_suite_block_and_reports_missing_markers(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- bench:suite:float16:start -->\nstale\n<!-- bench:suite:float16:end -->\nb\n")
    assert update_readme.update(readme, [_suite_json(tmp_path)]) == 0
    text = readme.read_text()
    assert "stale" not in text and "| all | 2 | 0.91x | 0.75x | 4096x4096x4096 |" in text
    assert "bench:suite:float16: " in capsys.readouterr().out
    readme.write_text("no markers\n")
    assert update_readme.update(readme, [_suite_json(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "bench:suite:float16: NOT WRITTEN" in err and "<!-- bench:suite:float16:start -->" in err
    assert readme.read_text() == "no markers\n"


def test_precision_summary_reads_the_table():
    # The README's sentence on where tf32x3 and tf32 stand comes from the results file: speed and
    # error against the peer of each precision, at the cubes of 2048 and up only.
    def rec(shape, candidate, ms, err):
        return {"shape": shape, "candidate": candidate, "ms": ms, "rel_error": err}

    rows = []
    for n, (sgemm, x3, tf, tf_peer) in {2048: (2.0, 1.0, 0.5, 0.4), 4096: (16.0, 10.0, 4.0, 3.6)}.items():
        shape = [n, n, n]
        rows += [
            rec(shape, "cuBLAS SGEMM (CuPy, TF32 off)", sgemm, 1e-6),
            rec(shape, "fastgemm tf32x3 (auto)", x3, 5e-7),
            rec(shape, "fastgemm tf32 (auto)", tf, 3e-3),
            rec(shape, "cuBLAS TF32 (torch.matmul, allow_tf32)", tf_peer, 1e-3),
        ]
    rows.append(rec([256, 1024, 4096], "fastgemm tf32x3 (auto)", 99.0, 1.0))  # not a cube >= 2048
    text = update_readme.precision_summary({"results": rows})
    assert text.startswith("At 2048–4096³")
    assert '`"tf32x3"` runs at 1.60–2.00x the speed of cuBLAS SGEMM, with 0.50x its error' in text
    assert '`"tf32"` runs at 0.80–0.90x the speed of cuBLAS TF32, with 3.00x its error' in text
    assert update_readme.precision_summary({"results": rows[-1:]}) == ""


def test_multigpu_results_reach_the_readme(tmp_path):
    # Each committed multi-GPU results file (hosts of 2 GPUs, and of n: multigpu-<n>gpus-*) renders
    # into its README block, both tables, from the one renderer; a README without the markers is
    # reported (exit status 1), as for --overhead.
    srcs = sorted((ROOT / "results").glob("multigpu-*.json"))
    assert srcs
    for src in srcs:
        data = update_readme.load(src)
        assert data["kind"] == "multigpu"
        text = tables.multigpu_tables(data)
        gpus = data["meta"]["gpus"]
        assert (gpus == 2) == ("gpus-" not in src.name), src.name
        assert f"| float16 | 16384x16384x16384 | {gpus} |" in text
        assert "| all_gather + matmul | all_gather_gemm |" in text and tables.MULTIGPU_TIMING in text
        readme = tmp_path / "README.md"
        readme.write_text("x\n<!-- multigpu_results -->\n<!-- /multigpu_results -->\ny\n")
        assert update_readme.main([str(src), "--readme", str(readme)]) == 0
        assert text in readme.read_text()
        readme.write_text("no markers\n")
        assert update_readme.main([str(src), "--readme", str(readme)]) == 1


def test_multi_gpu_flag_reaches_its_own_arguments(capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(["--multi-gpu", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--tp-ranks" in out and "--no-tp" in out
