"""CPU tests of the benchmark's pure parts: argument parsing, result records, tables, the --overhead
pipeline on NumPy stand-ins, and the README rendering of benchmarks/update_readme.py.

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
import sys
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
cli, overhead, peers, report, tables, timing = (
    importlib.import_module(f"{bench.__name__}.{name}")
    for name in ("cli", "overhead", "peers", "report", "tables", "timing")
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
    header = report.wide_table(results).splitlines()[0]
    assert "e2e" not in header and "device" not in header
    assert "TFLOPS (device)" in report.long_table(results).splitlines()[0]


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

    def select(M: int, N: int, K: int, dtype: str) -> Any:
        name = "hgemm_v20_hoisted_beta" if dtype == "float16" else "sgemm_v09_cp_async"
        return types.SimpleNamespace(kernel=types.SimpleNamespace(name=name))

    return types.SimpleNamespace(hgemm=gemm, sgemm=sgemm, select=select, seen=seen)


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
    assert "WRONG (err" in report.overhead_table(records)


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

    terminal = [(row[0], row[1]) for row in rows(report.wide_table(_records(device=True, e2e=False)))]
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
