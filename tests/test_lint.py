"""Lint and types of the source tree, as part of the test suite (so CI's one test command runs them).

ruff (lint and format) and mypy come with the test extras (``pip install '.[test]'``), pinned in
pyproject.toml. Outside a source checkout (an installed package tested on its own) there is nothing
to check and the tests skip.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PATHS = ["src", "tests", "benchmarks"]

pytestmark = pytest.mark.skipif(
    not (ROOT / "pyproject.toml").exists() or not (ROOT / "src" / "fastgemm").is_dir(),
    reason="not a source checkout",
)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


def _require(module: str) -> None:
    if _run(module, "--version").returncode != 0:
        pytest.fail(f"{module} is not installed; pip install '.[test]' brings it")


def test_ruff_check():
    _require("ruff")
    r = _run("ruff", "check", *PATHS)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format():
    _require("ruff")
    r = _run("ruff", "format", "--check", *PATHS)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.skipif(sys.version_info < (3, 10), reason="the pinned mypy runs on Python 3.10 and newer")
def test_mypy():
    _require("mypy")
    r = _run("mypy")  # files and options: [tool.mypy] in pyproject.toml
    assert r.returncode == 0, r.stdout + r.stderr
