"""CPU-only checks of the machine code in the built extension (``fastgemm._C``).

Each rung of the ladder claims a technique (vector loads, cp.async, no register spills, ...); these
tests read the SASS that nvcc actually produced and check the claim, per rung and per architecture,
with no GPU. The tools are ``cuobjdump`` and ``nvdisasm`` from the PyPI packages
nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm (the ``test`` extras), or a CUDA toolkit's on PATH.
A missing tool is a failure, not a skip: CI has no GPU, and this file is how it checks the kernels.

The per-rung expectations are keyed by technique (``EXPECTATIONS``) and applied to whatever
``fastgemm.kernels()`` lists, so new rungs are checked without editing this file. They cover the
float32 (SGEMM) ladder and the tensor-core (HGEMM) ladder; a kernel is identified by (name, dtype):
an HGEMM rung's ``<name>_kernel`` template is instantiated for ``__half`` and ``__nv_bfloat16``
(and 4 layout pairs each), and each table row is checked against the instantiations of its dtype.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import fastgemm

SO = fastgemm._C.__file__
ARCHS = sorted({int(a) for a in str(fastgemm._C.cuda_archs).replace(";", ",").split(",") if a.strip()})
FULL_ARCHS = (75, 80, 86, 89, 90)
INSTALL_HINT = (
    "install the test extras (pip install -e '.[test]', or: pip install nvidia-cuda-cuobjdump "
    "nvidia-cuda-nvdisasm), or put a CUDA toolkit's bin/ on PATH"
)


# --- tools -------------------------------------------------------------------------------------


@functools.cache
def _find_tool(name: str) -> str | None:
    """``name`` from a PyPI nvidia-* package (site-packages/nvidia/*/bin/), else from PATH."""
    for entry in sys.path:
        base = entry or os.getcwd()
        for path in sorted(glob.glob(os.path.join(base, "nvidia", "*", "bin", name))):
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    found = shutil.which(name)
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        path = os.path.join(home, "bin", name) if home else ""
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _tool(name: str) -> str:
    path = _find_tool(name)
    if path is None:
        pytest.fail(f"{name} not found (searched sys.path for nvidia/*/bin/{name}, then PATH): "
                    f"{INSTALL_HINT}")
    return path


def _cuobjdump(*args: str) -> str:
    exe = _tool("cuobjdump")
    # cuobjdump -sass runs nvdisasm, which it looks up on PATH.
    nvdisasm_dir = os.path.dirname(_tool("nvdisasm"))
    env = dict(os.environ, PATH=os.pathsep.join([nvdisasm_dir, os.environ.get("PATH", "")]))
    proc = subprocess.run([exe, *args, SO], capture_output=True, text=True, errors="replace", env=env,
                          check=False)
    if proc.returncode != 0:
        pytest.fail(f"`{exe} {' '.join(args)} {SO}` failed ({proc.returncode}):\n{proc.stderr}{proc.stdout}")
    return proc.stdout


@functools.cache
def _embedded(kind: str) -> dict[str, set[str]]:
    """``kind`` "elf" or "ptx": {"sm_80": {"v01_naive", ...}} from ``cuobjdump -lelf``/``-lptx``."""
    out: dict[str, set[str]] = {}
    suffix = "cubin" if kind == "elf" else "ptx"
    line = re.compile(rf"^\s*{kind.upper()} file\s+\d+:\s*(\S+)\.(sm_\d+[a-z]?)\.{suffix}\s*$", re.MULTILINE)
    for m in line.finditer(_cuobjdump(f"-l{kind}")):
        out.setdefault(m.group(2), set()).add(m.group(1))
    return out


_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$", re.MULTILINE)
_INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P(?:T|\d+)\s+)?([A-Z][A-Z0-9_.]*)")


def _parse_sass(text: str) -> dict[str, list[str]]:
    """{mangled function name: its opcodes with modifiers, e.g. "LDG.E.128"} from ``cuobjdump -sass``."""
    parts = _FUNCTION.split(text)
    functions: dict[str, list[str]] = {}
    for name, body in zip(parts[1::2], parts[2::2]):
        functions[name] = _INSTRUCTION.findall(body)
    return functions


@functools.cache
def _sass_all() -> dict[int, dict[str, list[str]]]:
    """The SASS of every built architecture, dumped in parallel once per session."""
    _tool("cuobjdump"), _tool("nvdisasm")  # fail once, clearly, before starting threads
    with ThreadPoolExecutor(max_workers=max(1, min(len(ARCHS), os.cpu_count() or 1))) as pool:
        texts = list(pool.map(lambda arch: _cuobjdump("-sass", "-arch", f"sm_{arch}"), ARCHS))
    return {arch: _parse_sass(text) for arch, text in zip(ARCHS, texts)}


def _sass(arch: int) -> dict[str, list[str]]:
    functions = _sass_all()[arch]
    assert functions, f"cuobjdump found no sm_{arch} SASS in {SO}"
    return functions


# --- helpers on opcodes ------------------------------------------------------------------------


def _base(op: str) -> str:
    return op.split(".", 1)[0]


def _has(ops: list[str], base: str) -> bool:
    return any(_base(op) == base for op in ops)


def _has_ffma(ops: list[str]) -> bool:
    return _has(ops, "FFMA")


def _is_load_128(op: str) -> bool:
    """A 128-bit global load: LDG.E.128, LDG.E.128.CONSTANT, LDG.E.LTC128B.128, LDGSTS.E.BYPASS.128, ..."""
    base, *mods = op.split(".")
    return base in ("LDG", "LDGSTS") and "128" in mods


def _global_loads(ops: list[str]) -> list[str]:
    return sorted({op for op in ops if _base(op) in ("LDG", "LDGSTS")})


def _spills(ops: list[str]) -> list[str]:
    return sorted({op for op in ops if _base(op) in ("LDL", "STL")})


def _kernel_functions(functions: dict[str, list[str]], name: str) -> dict[str, list[str]]:
    """The functions that instantiate ``<name>_kernel`` (its Itanium-mangled source name)."""
    ident = f"{name}_kernel"
    mangled = f"{len(ident)}{ident}"
    return {fn: ops for fn, ops in functions.items() if mangled in fn or fn == ident}


def _template_args(fn: str, name: str) -> str | None:
    ident = f"{name}_kernel"
    tail = fn.split(f"{len(ident)}{ident}", 1)[1] if f"{len(ident)}{ident}" in fn else ""
    return tail if tail.startswith("I") else None


# Mangled element-type template arguments of the HGEMM kernels -> dtype.
_ELEMENT_TYPES = {"6__half": "float16", "13__nv_bfloat16": "bfloat16"}
_TEMPLATE = re.compile(r"I(?P<type>6__half|13__nv_bfloat16)?(?P<flags>(?:Lb[01]E)+)E")


def _element_dtype(fn: str, name: str) -> str | None:
    """dtype of an instantiation's element-type template argument; None when it has none."""
    args = _template_args(fn, name)
    m = _TEMPLATE.match(args) if args else None
    return _ELEMENT_TYPES[m.group("type")] if m and m.group("type") else None


def _short(fn: str, name: str) -> str:
    """A readable name for failure messages: ``sgemm_v06_vectorized_kernel<false, true>``,
    ``hgemm_v01_mma_kernel<__half, true, false>``."""
    args = _template_args(fn, name)
    if args is None:
        return f"{name}_kernel"
    m = _TEMPLATE.match(args)
    if m is None:
        return fn
    params = ["true" if b == "1" else "false" for b in re.findall(r"Lb([01])E", m.group("flags"))]
    if m.group("type"):
        params.insert(0, m.group("type").lstrip("0123456789"))
    return f"{name}_kernel<{', '.join(params)}>"


# --- the expectations, keyed by technique ------------------------------------------------------


def _runs_on(k: fastgemm.KernelInfo, arch: int) -> bool:
    return k.min_cc <= arch and (k.max_cc is None or arch <= k.max_cc)


HALF = ("float16", "bfloat16")
# Rungs whose copies are cp.async, by name: the SGEMM one, and HGEMM v06 and every rung built on it.
CP_ASYNC_NAMES = ("cp_async", "multistage", "tuned", "raster")


def _is_half(k: fastgemm.KernelInfo) -> bool:
    return k.dtype in HALF


def _uses_cp_async(k: fastgemm.KernelInfo) -> bool:
    if _is_half(k):
        return any(word in k.name for word in CP_ASYNC_NAMES)
    return "cp_async" in k.name


EXPECTATIONS = {
    # technique: (which kernels it applies to, what their SASS must show)
    "fma": (lambda k: k.dtype == "float32", "every instantiation has FFMA"),
    "tensor_cores": (_is_half, "every instantiation has HMMA (mma.sync) and LDSM (ldmatrix)"),
    "vector_loads": (
        lambda k: k.alignment == 16,
        "every instantiation issues 128-bit global loads (LDG.*.128, or LDGSTS.*.128 for cp.async)",
    ),
    "cp_async": (
        _uses_cp_async,
        "LDGSTS on sm_80+ (HGEMM: in every instantiation, both operands are cp.async copies; SGEMM: in "
        + "the kernel, the layout-matching operand only); no LDGSTS in cubins for older architectures",
    ),
    "no_spills": (
        lambda k: _is_half(k) or (k.dtype == "float32" and k.version >= 5),
        "no local-memory LDL/STL",
    ),
    "turing_mma": (
        lambda k: _is_half(k) and _runs_on(k, 75),
        "in the sm_75 cubin: HMMA (m16n8k8 pairs) with register-staged copies, no LDGSTS",
    ),
}

SGEMM = fastgemm.kernels("float32")
HGEMM = [k for k in fastgemm.kernels() if _is_half(k)]
ALL_KERNELS = list(fastgemm.kernels())


def _id(k: fastgemm.KernelInfo) -> str:
    """A test id: the name, plus the dtype where names are shared (HGEMM)."""
    return f"{k.name}[{k.dtype}]" if _is_half(k) else k.name


def _kernels_with(technique: str) -> list[fastgemm.KernelInfo]:
    applies = EXPECTATIONS[technique][0]
    return [k for k in ALL_KERNELS if applies(k)]


def _cases(technique: str, runnable: bool = True) -> list:
    """(arch, kernel) params for the built archs where the kernel can (or cannot) run."""
    return [
        pytest.param(arch, k, id=f"sm_{arch}-{_id(k)}")
        for arch in ARCHS
        for k in _kernels_with(technique)
        if _runs_on(k, arch) == runnable
    ]


def _functions_of(arch: int, k: fastgemm.KernelInfo) -> dict[str, list[str]]:
    """The instantiations of ``k``: of its name and, for HGEMM, of its element type."""
    fns = _kernel_functions(_sass(arch), k.name)
    assert fns, f"no {k.name}_kernel in the sm_{arch} SASS"
    if _is_half(k):
        fns = {fn: ops for fn, ops in fns.items() if _element_dtype(fn, k.name) == k.dtype}
        assert fns, f"no {k.dtype} instantiation of {k.name}_kernel in the sm_{arch} SASS"
    return fns


# --- what the .so embeds -----------------------------------------------------------------------


def test_cuda_archs_attribute():
    assert ARCHS, f"fastgemm._C.cuda_archs is empty: {fastgemm._C.cuda_archs!r}"
    assert all(a >= 75 for a in ARCHS), ARCHS
    if len(ARCHS) > 1:
        missing = sorted(set(FULL_ARCHS) - set(ARCHS))
        assert not missing, f"a full build must cover sm_{FULL_ARCHS}; missing {missing} in {ARCHS}"


def test_cubin_for_every_built_arch():
    cubins = _embedded("elf")
    for arch in ARCHS:
        assert f"sm_{arch}" in cubins, f"no sm_{arch} cubin in {SO}; embedded: {sorted(cubins)}"
    # Every source file is compiled for every listed architecture (sm_90a-only code aside).
    objects = {arch: cubins[f"sm_{arch}"] for arch in ARCHS}
    first = objects[ARCHS[0]]
    for arch, names in objects.items():
        assert names == first, f"sm_{arch} cubins differ from sm_{ARCHS[0]}: {sorted(names ^ first)}"


@pytest.mark.parametrize("prefix", ["sgemm_", "hgemm_"])
def test_cubins_hold_every_source(prefix):
    cubins = _embedded("elf")[f"sm_{ARCHS[0]}"]
    ladder = [k for k in ALL_KERNELS if k.name.startswith(prefix)]
    assert ladder, f"no {prefix}* kernels in the table"
    for k in ladder:
        stem = k.name.removeprefix(prefix)  # v06_vectorized.cu -> v06_vectorized.sm_XX.cubin
        assert stem in cubins, f"no cubin for {k.name} ({stem}.cu); cubins: {sorted(cubins)}"


def test_ptx_for_newest_arch():
    ptx = _embedded("ptx")
    newest = max(ARCHS)
    assert f"sm_{newest}" in ptx, f"no sm_{newest} PTX (for JIT on newer GPUs) in {SO}; PTX: {sorted(ptx)}"


# --- per-rung SASS checks ----------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: f"sm_{a}")
@pytest.mark.parametrize("kernel", SGEMM, ids=lambda k: k.name)
def test_kernel_functions_exist(arch, kernel):
    fns = _functions_of(arch, kernel)
    templated = {_template_args(fn, kernel.name) for fn in fns} - {None}
    if templated and all(re.fullmatch(r"ILb[01]ELb[01]EEE.*", t) for t in templated):
        # Templated on (A column-major, B column-major): one instantiation per layout pair.
        layouts = {t[:9] for t in templated}
        assert len(layouts) == 4, f"{kernel.name}: expected 4 layout instantiations, found {sorted(fns)}"


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: f"sm_{a}")
@pytest.mark.parametrize("name", sorted({k.name for k in HGEMM}))
def test_hgemm_instantiations(arch, name):
    # <name>_kernel<T, A K-major, B K-major>: 4 layouts x {__half, __nv_bfloat16}, in every cubin
    # (bf16 ones below sm_80 are stubs the registry never launches, but they are compiled).
    fns = _kernel_functions(_sass(arch), name)
    found = sorted(_short(fn, name) for fn in fns)
    assert len(fns) == 8, f"sm_{arch}: expected 8 instantiations of {name}_kernel, found {found}"
    expected = sorted(
        f"{name}_kernel<{t}, {a}, {b}>"
        for t in ("__half", "__nv_bfloat16") for a in ("false", "true") for b in ("false", "true")
    )
    assert found == expected
    assert {_element_dtype(fn, name) for fn in fns} == set(HALF)


@pytest.mark.parametrize("arch, kernel", _cases("tensor_cores"))
def test_tensor_cores(arch, kernel):
    fns = _functions_of(arch, kernel)
    missing = {
        _short(fn, kernel.name): [base for base in ("HMMA", "LDSM") if not _has(ops, base)]
        for fn, ops in fns.items()
    }
    missing = {fn: m for fn, m in missing.items() if m}
    assert not missing, f"sm_{arch}: {kernel.name} ({kernel.dtype}) instantiations without {missing}"


@pytest.mark.parametrize("arch, kernel", _cases("fma"))
def test_ffma(arch, kernel):
    fns = _functions_of(arch, kernel)
    without = [_short(fn, kernel.name) for fn, ops in fns.items() if not _has_ffma(ops)]
    assert not without, f"sm_{arch}: no FFMA in {without}"


@pytest.mark.parametrize("arch, kernel", _cases("vector_loads"))
def test_vector_loads(arch, kernel):
    bad = {
        _short(fn, kernel.name): _global_loads(ops)
        for fn, ops in _functions_of(arch, kernel).items()
        if not any(_is_load_128(op) for op in ops)
    }
    assert not bad, f"sm_{arch}: no 128-bit global loads in {kernel.name}; global loads found: {bad}"


@pytest.mark.parametrize("arch, kernel", _cases("cp_async"))
def test_cp_async(arch, kernel):
    fns = _functions_of(arch, kernel)
    with_ldgsts = [
        _short(fn, kernel.name) for fn, ops in fns.items() if any(_base(op) == "LDGSTS" for op in ops)
    ]
    loads = {_short(fn, kernel.name): _global_loads(ops) for fn, ops in fns.items()}
    assert with_ldgsts, f"sm_{arch}: no LDGSTS (cp.async) in {kernel.name}; global loads found: {loads}"
    if _is_half(kernel):  # both operands are cp.async copies in every layout
        without = {fn: ld for fn, ld in loads.items() if not any(_base(op) == "LDGSTS" for op in ld)}
        assert not without, f"sm_{arch}: {kernel.name} instantiations without LDGSTS: {without}"


@pytest.mark.parametrize("kernel", _kernels_with("cp_async"), ids=_id)
def test_no_cp_async_before_sm80(kernel):
    older = [arch for arch in ARCHS if not _runs_on(kernel, arch)]
    if not older:
        pytest.skip(f"no architecture below {kernel.name}'s in this build "
                    f"(cuda_archs={fastgemm._C.cuda_archs})")
    for arch in older:
        assert arch < 80, "cp.async rungs need sm_80; adjust this test if one gets another lower bound"
        ldgsts = {
            _short(fn, kernel.name): sorted({op for op in ops if _base(op) == "LDGSTS"})
            for fn, ops in _functions_of(arch, kernel).items()
        }
        ldgsts = {fn: ops for fn, ops in ldgsts.items() if ops}
        assert not ldgsts, f"sm_{arch} has no cp.async, yet its cubin holds {ldgsts}"


def test_cp_async_rungs_need_sm80():
    for k in _kernels_with("cp_async"):
        assert k.min_cc >= 80, k


@pytest.mark.parametrize("kernel", _kernels_with("turing_mma"), ids=_id)
def test_turing_mma(kernel):
    if 75 not in ARCHS:
        pytest.skip(f"no sm_75 cubin in this build (cuda_archs={fastgemm._C.cuda_archs})")
    fns = _functions_of(75, kernel)
    bad = {
        _short(fn, kernel.name): {
            "HMMA": sorted({op for op in ops if _base(op) == "HMMA"}),
            "LDGSTS": sorted({op for op in ops if _base(op) == "LDGSTS"}),
        }
        for fn, ops in fns.items()
        if not _has(ops, "HMMA") or _has(ops, "LDGSTS")
    }
    assert not bad, f"sm_75: {kernel.name} ({kernel.dtype}) needs HMMA and no LDGSTS: {bad}"


@pytest.mark.parametrize("arch, kernel", _cases("no_spills"))
def test_no_spills(arch, kernel):
    spills = {
        _short(fn, kernel.name): _spills(ops)
        for fn, ops in _functions_of(arch, kernel).items()
        if _spills(ops)
    }
    assert not spills, (
        f"sm_{arch}: {kernel.name} uses local memory (register spills or a stack array): {spills}"
    )


def _of(technique: str, dtype: str) -> list[fastgemm.KernelInfo]:
    return [k for k in _kernels_with(technique) if k.dtype == dtype]


def test_expectations_cover_the_ladder():
    # The technique table still matches the ladder it was written for.
    assert [k.name for k in _of("vector_loads", "float32")] == [
        "sgemm_v06_vectorized", "sgemm_v07_conflict_free", "sgemm_v08_warptile", "sgemm_v09_cp_async",
    ]
    assert [k.name for k in _of("cp_async", "float32")] == ["sgemm_v09_cp_async"]
    assert [k.version for k in _of("no_spills", "float32")] == [5, 6, 7, 8, 9]
    assert len(_kernels_with("fma")) == len(SGEMM) == 9
    assert not _of("fma", "float16") and not _of("tensor_cores", "float32")


@pytest.mark.parametrize("dtype", HALF)
def test_expectations_cover_the_hgemm_ladder(dtype):
    ladder = fastgemm.kernels(dtype)
    assert [k.version for k in ladder] == list(range(1, 10))
    assert _of("tensor_cores", dtype) == ladder
    assert [k.version for k in _of("vector_loads", dtype)] == list(range(2, 10))
    assert [k.version for k in _of("cp_async", dtype)] == [6, 7, 8, 9]
    assert [k.version for k in _of("no_spills", dtype)] == list(range(1, 10))
    turing = [k.name for k in _of("turing_mma", dtype)]
    if dtype == "float16":
        assert turing == [k.name for k in ladder if k.version <= 5]
        assert "hgemm_v05_reg_prefetch" in turing
    else:  # no bf16 tensor cores on sm_75
        assert turing == []


# --- the parser, on a fixed sample (no tools needed) -------------------------------------------

_SAMPLE = """
	code for sm_80
		Function : _ZN8fastgemm4_GLOBAL__N_121sgemm_v06_demo_kernelILb0ELb1EEEvv
	.headerflags	@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   MOV R1, c[0x0][0x28] ;                        /* 0x00000a0000017a02 */
                                                                                 /* 0x000fe40000000f00 */
        /*0010*/              @!P0 LDG.E.128.CONSTANT R4, [R2.64] ;              /* 0x0000000402047981 */
        /*0020*/               @P1 LDG.E.LTC128B R8, [R2.64+0x10] ;              /* 0x0000000402047981 */
        /*0030*/                   FFMA R0, R4, R5, R0 ;                         /* 0x0000000504007223 */
        /*0040*/             @!UPT LDGSTS.E.BYPASS.128.ZFILL [R7], [R2.64] ;     /* 0x0000000002077fae */
        /*0050*/                   STL.64 [R1], R4 ;                             /* 0x0000000401007387 */
		..........
		Function : _ZN8fastgemm4_GLOBAL__N_116other_v01_kernelEv
        /*0000*/                   EXIT ;                                        /* 0x000000000000794d */
"""


def test_parser_on_sample():
    fns = _parse_sass(_SAMPLE)
    assert list(fns) == [
        "_ZN8fastgemm4_GLOBAL__N_121sgemm_v06_demo_kernelILb0ELb1EEEvv",
        "_ZN8fastgemm4_GLOBAL__N_116other_v01_kernelEv",
    ]
    ops = fns["_ZN8fastgemm4_GLOBAL__N_121sgemm_v06_demo_kernelILb0ELb1EEEvv"]
    assert ops == [
        "MOV", "LDG.E.128.CONSTANT", "LDG.E.LTC128B", "FFMA", "LDGSTS.E.BYPASS.128.ZFILL", "STL.64",
    ]
    assert [_is_load_128(op) for op in ops] == [False, True, False, False, True, False]
    assert _has_ffma(ops) and _spills(ops) == ["STL.64"]
    demo = next(iter(fns))
    assert list(_kernel_functions(fns, "sgemm_v06_demo")) == [demo]
    assert _kernel_functions(fns, "sgemm_v06_dem") == {}  # no prefix matches
    assert _kernel_functions(fns, "v06_demo") == {}  # no suffix matches
    assert _short(demo, "sgemm_v06_demo") == "sgemm_v06_demo_kernel<false, true>"
    assert fns["_ZN8fastgemm4_GLOBAL__N_116other_v01_kernelEv"] == ["EXIT"]


def test_hgemm_names_on_sample():
    prefix, params = "_ZN8fastgemm4_GLOBAL__N_120hgemm_v01_mma_kernel", "vNS_5hgemm7OperandIT_EES6_PS5_lff"
    fp16 = f"{prefix}I6__halfLb1ELb0EEE{params}"
    bf16 = f"{prefix}I13__nv_bfloat16Lb0ELb1EEE{params}"
    fns = {fp16: ["HMMA.16816.F32"], bf16: ["HMMA.16816.F32.BF16"]}
    assert set(_kernel_functions(fns, "hgemm_v01_mma")) == {fp16, bf16}
    assert _element_dtype(fp16, "hgemm_v01_mma") == "float16"
    assert _element_dtype(bf16, "hgemm_v01_mma") == "bfloat16"
    assert _short(fp16, "hgemm_v01_mma") == "hgemm_v01_mma_kernel<__half, true, false>"
    assert _short(bf16, "hgemm_v01_mma") == "hgemm_v01_mma_kernel<__nv_bfloat16, false, true>"
    sgemm = "_ZN8fastgemm4_GLOBAL__N_121sgemm_v06_demo_kernelILb0ELb1EEEvv"
    assert _element_dtype(sgemm, "sgemm_v06_demo") is None
