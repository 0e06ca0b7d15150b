"""Shared test configuration.

GPU tests carry the ``gpu`` marker. Without a usable GPU they are skipped, unless
``FASTGEMM_REQUIRE_GPU=1``: then every GPU test fails instead, so a GPU run can never pass by
skipping. Tests that need several GPUs also carry ``multi_gpu``: with fewer than two they are
skipped, unless ``FASTGEMM_REQUIRE_GPUS=N`` (N >= 2) says the machine has them: then they fail.
"""

from __future__ import annotations

import os

import pytest

import fastgemm

REQUIRE_GPU = os.environ.get("FASTGEMM_REQUIRE_GPU", "") == "1"


def _gpu_problem() -> str | None:
    if fastgemm.device_count() == 0:
        return f"no CUDA GPU ({fastgemm.runtime_status()})"
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - ImportError or any CUDA error means no usable CuPy
        return f"CuPy is not usable: {exc}"
    return None


REQUIRE_GPUS = int(os.environ.get("FASTGEMM_REQUIRE_GPUS", "0") or 0)


@pytest.fixture(autouse=True)
def _gpu_gate(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("gpu") is None:
        return
    problem = _gpu_problem()
    if problem is None and request.node.get_closest_marker("multi_gpu") is not None:
        count = fastgemm.device_count()
        if count < 2:
            if REQUIRE_GPUS >= 2:
                pytest.fail(f"FASTGEMM_REQUIRE_GPUS={REQUIRE_GPUS} but this machine has {count} GPU(s)")
            pytest.skip(f"needs two GPUs; this machine has {count}")
    if problem is None:
        return
    if REQUIRE_GPU:
        pytest.fail(f"FASTGEMM_REQUIRE_GPU=1 but {problem}")
    pytest.skip(problem)


def require(module: str):
    """Import an optional module a GPU test needs: skip without it, fail under REQUIRE_GPU."""
    try:
        return __import__(module)
    except ImportError as exc:
        if REQUIRE_GPU:
            pytest.fail(f"FASTGEMM_REQUIRE_GPU=1 but {module} is not importable: {exc}")
        pytest.skip(f"{module} is not installed")


@pytest.fixture
def small_chunks(monkeypatch):
    """fastgemm.distributed's chunks small enough that test shapes have several bands, column
    chunks and K slices (the multi-GPU tests and the CPU run of the schedule)."""
    import fastgemm.distributed as fd

    monkeypatch.setattr(fd, "SLICE_K", 40)
    monkeypatch.setattr(fd, "FIRST_SLICE_K", 8)
    monkeypatch.setattr(fd, "FIRST_ROWS", 48)
    monkeypatch.setattr(fd, "CHUNK_COLS", 40)
    monkeypatch.setattr(fd, "TAIL_ROWS", 24)
    monkeypatch.setattr(fd, "TILE_ROWS", 8)
    monkeypatch.setattr(fd, "GATE_SLICE_K", 64)
    monkeypatch.setattr(fd, "GATE_CHUNK_COLS", 256)
    monkeypatch.setattr(fd, "GATE_FIRST_ROWS", 48)
    monkeypatch.setattr(fd, "GATE_BAND_ROWS", 32)
