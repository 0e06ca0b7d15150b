"""The README's code examples, executed: interactive (``>>>``) blocks as doctests on the CPU, other
Python blocks compiled here and run on a GPU (marker ``gpu``). ``text`` and ``bash`` blocks are not
Python. Examples in prose cannot drift from the build this way."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
_FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _blocks() -> list[tuple[int, str]]:
    if not README.exists():
        return []
    text = README.read_text()
    return [(text[: m.start()].count("\n") + 1, m.group(1)) for m in _FENCE.finditer(text)]


DOCTESTS = [(line, code) for line, code in _blocks() if code.lstrip().startswith(">>>")]
SCRIPTS = [(line, code) for line, code in _blocks() if not code.lstrip().startswith(">>>")]


def test_readme_has_examples():
    if not README.exists():
        pytest.skip("not a source checkout")
    assert DOCTESTS and SCRIPTS


@pytest.mark.parametrize("line, code", DOCTESTS, ids=lambda v: f"line{v}" if isinstance(v, int) else "")
def test_doctest_block(line, code):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(code, {}, f"README.md:{line}", str(README), line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out: list[str] = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)


@pytest.mark.parametrize("line, code", SCRIPTS, ids=lambda v: f"line{v}" if isinstance(v, int) else "")
def test_script_block_compiles(line, code):
    compile(code, f"README.md:{line}", "exec")


@pytest.mark.gpu
@pytest.mark.parametrize("line, code", SCRIPTS, ids=lambda v: f"line{v}" if isinstance(v, int) else "")
def test_script_block_runs_on_the_gpu(line, code):
    exec(compile(code, f"README.md:{line}", "exec"), {})  # noqa: S102 - the README example itself


def test_layout_names_every_file():
    # Every source, package and benchmark file appears in the README's layout block by name (rung
    # files as "vNN_*.cu"), so the map cannot miss a file.
    import subprocess

    root = README.parent
    r = subprocess.run(
        ["git", "-C", str(root), "ls-files", "csrc", "src", "benchmarks"],
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0 or not r.stdout.strip():
        pytest.skip("not a git checkout")
    text = README.read_text()
    block = text[text.index("## Layout") :]
    block = block[: block.index("```", block.index("```") + 3)]
    missing = [
        path
        for path in r.stdout.split()
        if not re.fullmatch(r"v\d\d_\w+\.cu", Path(path).name) and Path(path).name not in block
    ]
    assert not missing, f"README.md's layout block does not name {missing}"


def test_contributing_cpp_snippets_match_the_sources():
    # CONTRIBUTING.md's C++ examples are checked against the code they imitate: the struct
    # derives from a configuration that exists, and the registration uses a macro of
    # csrc/registry.h with as many fields as RungInfo has, in the form every rung's file uses.
    root = README.parent
    doc = root / "CONTRIBUTING.md"
    if not doc.exists():
        pytest.skip("not a source checkout")
    blocks = re.findall(r"^ *```cpp\n(.*?)^ *```$", doc.read_text(), re.MULTILINE | re.DOTALL)
    assert len(blocks) == 2
    struct, registration = blocks
    parent = re.search(r"struct V\d+ : (V\d+)", struct)
    assert parent and f"struct {parent.group(1)} " in (root / "csrc/hopper/rungs.h").read_text()
    macro = re.search(r"(FASTGEMM_REGISTER_\w+)\((\w+), \{(.*)\}\)", " ".join(registration.split()))
    assert macro and f"#define {macro.group(1)}(NAME, ...)" in (root / "csrc/registry.h").read_text()
    fields = re.findall(r'"[^"]*"(?:\s*"[^"]*")*|[^,\s][^,]*', macro.group(3))
    registry = (root / "csrc/registry.h").read_text()
    rung_info = registry[
        registry.index("struct RungInfo {") : registry.index("};", registry.index("struct RungInfo {"))
    ]
    # Fields with a default (`= ...`) may be left out: the example states the required ones.
    required = sum(
        len(line.split(";")[0].split(","))
        for line in rung_info.splitlines()[1:]
        if ";" in line and "=" not in line
    )
    assert len(fields) == required == 10, (fields, required)
    real = (root / "csrc/hopper/v20_hoisted_beta.cu").read_text()
    assert f"{macro.group(1)}(hgemm_v20_hoisted_beta, {{20, 90, 90, 16," in real
