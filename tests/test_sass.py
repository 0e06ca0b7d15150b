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

Hopper rungs (``max_cc == 90``: wgmma, TMA) are compiled for sm_90a alone, into cubins of their own
that exist only when 90 is in the build's architecture list. ``cuobjdump -sass -arch sm_90`` dumps
the sm_90 and the sm_90a cubins together, so the SASS is split by its ``code for sm_XX`` headers and
kept per cubin architecture: "sm_90" means the portable cubins only, "sm_90a" the Hopper ones.
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
# The cubin architecture of the Hopper rungs (arch-specific features: wgmma, TMA, setmaxnreg).
HOPPER_CC, HOPPER_CUBIN = 90, "sm_90a"
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
        pytest.fail(
            f"{name} not found (searched sys.path for nvidia/*/bin/{name}, then PATH): {INSTALL_HINT}"
        )
    return path


def _cuobjdump(*args: str) -> str:
    exe = _tool("cuobjdump")
    # cuobjdump -sass runs nvdisasm, which it looks up on PATH.
    nvdisasm_dir = os.path.dirname(_tool("nvdisasm"))
    env = dict(os.environ, PATH=os.pathsep.join([nvdisasm_dir, os.environ.get("PATH", "")]))
    proc = subprocess.run(
        [exe, *args, SO], capture_output=True, text=True, errors="replace", env=env, check=False
    )
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


_CODE_FOR = re.compile(r"^\s*code for (sm_\d+[a-z]?)\s*$", re.MULTILINE)
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$", re.MULTILINE)
_INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P(?:T|\d+)\s+)?([A-Z][A-Z0-9_.]*)")


def _parse_sass(text: str) -> dict[str, list[str]]:
    """{mangled function name: its opcodes with modifiers, e.g. "LDG.E.128"} from ``cuobjdump -sass``."""
    parts = _FUNCTION.split(text)
    functions: dict[str, list[str]] = {}
    for name, body in zip(parts[1::2], parts[2::2]):
        functions[name] = _INSTRUCTION.findall(body)
    return functions


def _split_cubins(text: str) -> dict[str, dict[str, list[str]]]:
    """{"sm_90": {function: opcodes}, "sm_90a": {...}} from a ``cuobjdump -sass`` dump, by the
    ``code for sm_XX`` header of each cubin (one dump can hold several architectures)."""
    parts = _CODE_FOR.split(text)
    assert not _FUNCTION.search(parts[0]), "SASS functions before the first `code for sm_XX` header"
    cubins: dict[str, dict[str, list[str]]] = {}
    for cubin, body in zip(parts[1::2], parts[2::2]):
        cubins.setdefault(cubin, {}).update(_parse_sass(body))
    return cubins


def _cubin(arch: int | str) -> str:
    """The cubin architecture name: 80 -> "sm_80"; "sm_90a" as is."""
    return arch if isinstance(arch, str) else f"sm_{arch}"


def _cubin_cc(cubin: str) -> int:
    """The compute capability a cubin runs on: "sm_90a" -> 90."""
    return int(re.fullmatch(r"sm_(\d+)[a-z]?", cubin).group(1))


@functools.cache
def _sass_all() -> dict[str, dict[str, list[str]]]:
    """The SASS of every embedded cubin, by cubin architecture, dumped in parallel once per session.

    ``-arch sm_90`` also dumps the sm_90a cubins; an embedded cubin architecture that the dumps of
    the listed ones did not cover (should cuobjdump ever match architectures exactly) is dumped on
    its own.
    """
    _tool("cuobjdump"), _tool("nvdisasm")  # fail once, clearly, before starting threads

    def dump(cubin: str) -> dict[str, dict[str, list[str]]]:
        return _split_cubins(_cuobjdump("-sass", "-arch", cubin))

    cubins: dict[str, dict[str, list[str]]] = {}

    def merge(dumps) -> None:
        for dumped in dumps:
            for cubin, functions in dumped.items():
                cubins.setdefault(cubin, {}).update(functions)

    with ThreadPoolExecutor(max_workers=max(1, min(len(ARCHS), os.cpu_count() or 1))) as pool:
        merge(pool.map(dump, [_cubin(arch) for arch in ARCHS]))
    merge(dump(cubin) for cubin in sorted(set(_embedded("elf")) - set(cubins)))
    return cubins


def _sass(arch: int | str) -> dict[str, list[str]]:
    """The functions of one cubin architecture: 80 or "sm_80", "sm_90a"."""
    cubin = _cubin(arch)
    functions = _sass_all().get(cubin, {})
    assert functions, f"cuobjdump found no {cubin} SASS in {SO}"
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


# Local-memory instructions (LDL + STL) a kernel may hold (test_no_spills), with the reason there.
SPILLS_ALLOWED = {"hgemm_v44_tile_192x128": 4}


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


def _is_half(k: fastgemm.KernelInfo) -> bool:
    return k.dtype in HALF


def _is_hopper(k: fastgemm.KernelInfo) -> bool:
    """A Hopper rung: sm_90a machine code only (TMA copies; wgmma or mma.sync math)."""
    return k.copy == "tma"


def _is_mma_sync(k: fastgemm.KernelInfo) -> bool:
    """A rung of the portable tensor-core ladder (mma.sync + ldmatrix), in every cubin."""
    return k.family == "mma_sync" and not _is_hopper(k)


def _is_hopper_mma_sync(k: fastgemm.KernelInfo) -> bool:
    """A Hopper rung whose math is mma.sync + ldmatrix (TMA copies), not wgmma."""
    return k.family == "mma_sync" and _is_hopper(k)


def _is_wgmma(k: fastgemm.KernelInfo) -> bool:
    return k.family == "wgmma"


def _uses_cp_async(k: fastgemm.KernelInfo) -> bool:
    return k.copy == "cp_async"


def _takes_4_byte_operands(k: fastgemm.KernelInfo) -> bool:
    """The vectorized SGEMM rungs compiled twice per layout: 16-byte and 4-byte accesses."""
    return k.dtype == "float32" and k.version >= 6 and k.family == "simt" and k.alignment == 4


EXPECTATIONS = {
    # technique: (which kernels it applies to, what their SASS must show)
    "fma": (lambda k: k.dtype == "float32", "every instantiation has FFMA"),
    "tensor_cores": (
        lambda k: _is_mma_sync(k) or _is_hopper_mma_sync(k),
        "every instantiation has HMMA (mma.sync) and LDSM (ldmatrix)",
    ),
    "vector_loads": (
        lambda k: (k.alignment == 16 and not _is_hopper(k)) or _takes_4_byte_operands(k),
        "every instantiation for 16-byte aligned operands issues 128-bit global loads (LDG.*.128, "
        + "or LDGSTS.*.128 for cp.async); the SGEMM rungs that take 4-byte aligned operands have "
        + "one such instantiation and one for 4-byte operands (last template flag) per layout",
    ),
    "cp_async": (
        _uses_cp_async,
        "LDGSTS on sm_80+ (HGEMM: in every instantiation, both operands are cp.async copies; SGEMM: in "
        + "the kernel, the layout-matching operand only); no LDGSTS in cubins for older architectures",
    ),
    "no_spills": (
        lambda k: _is_half(k) or (k.dtype == "float32" and k.version >= 5),
        "no local-memory LDL/STL (Hopper rungs: in the sm_90a cubin)",
    ),
    "turing_mma": (
        lambda k: _is_half(k) and _runs_on(k, 75),
        "in the sm_75 cubin: HMMA (m16n8k8 pairs) with register-staged copies, no LDGSTS",
    ),
    "wgmma": (_is_wgmma, "in the sm_90a cubin, every instantiation has HGMMA (wgmma.mma_async)"),
    "tma": (_is_hopper, "in the sm_90a cubin, every instantiation has UTMALDG (TMA tensor loads)"),
    "tma_store": (
        lambda k: k.epilogue == "tma_store",
        "rungs with the TMA-store epilogue: every instantiation stores C with UTMASTG (TMA stores)",
    ),
    "multicast": (
        lambda k: _is_hopper(k) and ("multicast" in k.name or "cluster" in k.name),
        (
            "the cluster rungs (v15, v43, v45, v46): every instantiation loads with UTMALDG.MULTICAST and "
            "meets at cluster barriers (UCGABAR)"
        ),
    ),
}

SGEMM = fastgemm.kernels("float32")
HGEMM = [k for k in fastgemm.kernels() if _is_mma_sync(k)]
HOPPER = [k for k in fastgemm.kernels() if _is_hopper(k)]
ALL_KERNELS = list(fastgemm.kernels())


def _id(k: fastgemm.KernelInfo) -> str:
    """A test id: the name, plus the dtype where names are shared (HGEMM)."""
    return f"{k.name}[{k.dtype}]" if _is_half(k) else k.name


def _kernels_with(technique: str) -> list[fastgemm.KernelInfo]:
    applies = EXPECTATIONS[technique][0]
    return [k for k in ALL_KERNELS if applies(k)]


def _cubins_of(k: fastgemm.KernelInfo) -> list[str]:
    """The cubin architectures that hold ``k``'s machine code in this build: Hopper rungs the
    sm_90a one (when 90 is built), every other kernel one per listed architecture."""
    if _is_hopper(k):
        return [HOPPER_CUBIN] if HOPPER_CC in ARCHS else []
    return [_cubin(arch) for arch in ARCHS]


def _cases(technique: str, runnable: bool = True) -> list:
    """(cubin, kernel) params for the built cubins whose GPUs the kernel can (or cannot) run on."""
    return [
        pytest.param(cubin, k, id=f"{cubin}-{_id(k)}")
        for k in _kernels_with(technique)
        for cubin in _cubins_of(k)
        if _runs_on(k, _cubin_cc(cubin)) == runnable
    ]


def _functions_of(arch: int | str, k: fastgemm.KernelInfo) -> dict[str, list[str]]:
    """The instantiations of ``k`` in one cubin architecture: of its name and, for HGEMM, of its
    element type."""
    cubin = _cubin(arch)
    fns = _kernel_functions(_sass(cubin), k.name)
    assert fns, f"no {k.name}_kernel in the {cubin} SASS"
    if _is_half(k):
        fns = {fn: ops for fn, ops in fns.items() if _element_dtype(fn, k.name) == k.dtype}
        assert fns, f"no {k.dtype} instantiation of {k.name}_kernel in the {cubin} SASS"
    return fns


# --- what the .so embeds -----------------------------------------------------------------------


def test_cuda_archs_attribute():
    assert ARCHS, f"fastgemm._C.cuda_archs is empty: {fastgemm._C.cuda_archs!r}"
    assert all(a >= 75 for a in ARCHS), ARCHS
    # One or two architectures make a development build (FASTGEMM_CUDA_ARCHS="90", "80;90");
    # anything wider is meant to be the full default list, and must be all of it.
    if len(ARCHS) > 2:
        missing = sorted(set(FULL_ARCHS) - set(ARCHS))
        assert not missing, f"a full build must cover sm_{FULL_ARCHS}; missing {missing} in {ARCHS}"


def test_cubin_for_every_built_arch():
    cubins = _embedded("elf")
    for arch in ARCHS:
        assert f"sm_{arch}" in cubins, f"no sm_{arch} cubin in {SO}; embedded: {sorted(cubins)}"
    # Nothing else, but the sm_90a cubins of the Hopper rungs when 90 is listed.
    expected = {_cubin(arch) for arch in ARCHS} | ({HOPPER_CUBIN} if HOPPER_CC in ARCHS else set())
    extra = set(cubins) - expected
    assert not extra, f"cubins for unlisted architectures {sorted(extra)} in {SO} (cuda_archs={ARCHS})"
    # Every portable source file is compiled for every listed architecture (sm_90a-only code aside).
    objects = {arch: cubins[f"sm_{arch}"] for arch in ARCHS}
    first = objects[ARCHS[0]]
    for arch, names in objects.items():
        assert names == first, f"sm_{arch} cubins differ from sm_{ARCHS[0]}: {sorted(names ^ first)}"


def _stem(k: fastgemm.KernelInfo) -> str:
    """The source file of a rung: sgemm_v06_vectorized -> v06_vectorized(.cu), whose cubins are
    v06_vectorized.sm_XX.cubin."""
    return k.name.split("_", 1)[1]


@pytest.mark.parametrize("prefix", ["sgemm_", "hgemm_"])
def test_cubins_hold_every_source(prefix):
    cubins = _embedded("elf")[f"sm_{ARCHS[0]}"]
    ladder = [k for k in ALL_KERNELS if k.name.startswith(prefix) and not _is_hopper(k)]
    assert ladder, f"no {prefix}* kernels in the table"
    for k in ladder:
        stem = _stem(k)
        assert stem in cubins, f"no cubin for {k.name} ({stem}.cu); cubins: {sorted(cubins)}"


def test_hopper_cubins():
    # csrc/hopper/*.cu: sm_90a cubins only, built exactly when 90 is listed; one per Hopper rung
    # (plus kernel-less helpers such as tensor_map.cu), none of them in a portable cubin.
    cubins = _embedded("elf")
    if HOPPER_CC not in ARCHS:
        assert HOPPER_CUBIN not in cubins, f"{HOPPER_CUBIN} cubins without sm_{HOPPER_CC} in {ARCHS}"
        assert not HOPPER, f"Hopper rungs in the table of a build without sm_90: {HOPPER}"
        return
    assert HOPPER_CUBIN in cubins, f"no {HOPPER_CUBIN} cubin in {SO}; embedded: {sorted(cubins)}"
    hopper = cubins[HOPPER_CUBIN]
    for k in HOPPER:
        assert _stem(k) in hopper, f"no {HOPPER_CUBIN} cubin for {k.name}; {HOPPER_CUBIN}: {sorted(hopper)}"
    for arch in ARCHS:
        both = sorted(hopper & cubins[_cubin(arch)])
        assert not both, f"sources compiled for both {HOPPER_CUBIN} and sm_{arch}: {both}"


def test_ptx_for_newest_arch():
    ptx = _embedded("ptx")
    newest = max(ARCHS)
    assert f"sm_{newest}" in ptx, f"no sm_{newest} PTX (for JIT on newer GPUs) in {SO}; PTX: {sorted(ptx)}"


# --- per-rung SASS checks ----------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: f"sm_{a}")
@pytest.mark.parametrize("kernel", [k for k in SGEMM if not _is_hopper(k)], ids=lambda k: k.name)
def test_kernel_functions_exist(arch, kernel):
    fns = _functions_of(arch, kernel)
    templated = {_template_args(fn, kernel.name) for fn in fns} - {None}
    if templated and all(re.fullmatch(r"ILb[01]ELb[01]EEE.*", t) for t in templated):
        # Templated on (A column-major, B column-major): one instantiation per layout pair.
        layouts = {t[:9] for t in templated}
        assert len(layouts) == 4, f"{kernel.name}: expected 4 layout instantiations, found {sorted(fns)}"


def _check_half_instantiations(cubin: str, name: str) -> None:
    """<name>_kernel<T, A K-major, B K-major>: 4 layouts x {__half, __nv_bfloat16} in ``cubin``."""
    fns = _kernel_functions(_sass(cubin), name)
    found = sorted(_short(fn, name) for fn in fns)
    assert len(fns) == 8, f"{cubin}: expected 8 instantiations of {name}_kernel, found {found}"
    expected = sorted(
        f"{name}_kernel<{t}, {a}, {b}>"
        for t in ("__half", "__nv_bfloat16")
        for a in ("false", "true")
        for b in ("false", "true")
    )
    assert found == expected, cubin
    assert {_element_dtype(fn, name) for fn in fns} == set(HALF)


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: f"sm_{a}")
@pytest.mark.parametrize("name", sorted({k.name for k in HGEMM}))
def test_hgemm_instantiations(arch, name):
    # mma.sync rungs: in every cubin (bf16 ones below sm_80 are stubs the registry never launches,
    # but they are compiled).
    _check_half_instantiations(_cubin(arch), name)


# v34 reads A K-major always (the launcher copies a column-major A): <T, B K-major> only.
V34 = "hgemm_v34_split_k_unaligned"


@pytest.mark.parametrize("name", sorted({k.name for k in HOPPER if _is_half(k) and k.name != V34}))
def test_hopper_instantiations(name):
    # Hopper rungs: in the sm_90a cubin, with the same template parameters as the mma.sync rungs.
    _check_half_instantiations(HOPPER_CUBIN, name)


def test_v34_instantiations():
    if not any(k.name == V34 for k in HOPPER):
        pytest.skip("no sm_90 code in this build")
    found = sorted(_short(fn, V34) for fn in _kernel_functions(_sass(HOPPER_CUBIN), V34))
    assert found == sorted(
        f"{V34}_kernel<{t}, {b}>" for t in ("__half", "__nv_bfloat16") for b in ("false", "true")
    )


_SASS_AT = re.compile(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);")
_BRANCH_TO = re.compile(r"\bBRA(?:\.[A-Z.]+)?\s+0x([0-9a-f]+)")


def _shortest_hgmma_loop(body: str) -> tuple[int, int] | None:
    """(instructions, HGMMAs) of the shortest loop of one function's SASS (a backward branch and
    the instructions from its target to it) that holds an HGMMA; None if no loop holds one."""
    code = [(int(a, 16), text) for a, text in _SASS_AT.findall(body)]
    best = None
    for at, text in code:
        m = _BRANCH_TO.search(text)
        if m is None or int(m.group(1), 16) >= at:
            continue
        loop = [t for a, t in code if int(m.group(1), 16) <= a <= at]
        hgmma = sum(t.split()[0 if not t.startswith("@") else 1].startswith("HGMMA") for t in loop)
        if hgmma and (best is None or len(loop) < best[0]):
            best = (len(loop), hgmma)
    return best


# The warp-specialised wgmma rungs (v12 on): their consumers run mainloop.cuh's consume_shared.
WGMMA_CONSUMERS = sorted({k.name for k in HOPPER if _is_wgmma(k) and _is_half(k) and k.version >= 12})


@functools.cache
def _consumer_loops() -> dict[str, tuple[int, int] | None]:
    """{function: _shortest_hgmma_loop} of every fp16 instantiation with HGMMA of the
    WGMMA_CONSUMERS, from one ``cuobjdump -sass -fun`` of them all."""
    functions = _sass(HOPPER_CUBIN)
    fns = sorted(
        fn
        for name in WGMMA_CONSUMERS
        for fn, ops in _kernel_functions(functions, name).items()
        if _element_dtype(fn, name) == "float16" and _has(ops, "HGMMA")
    )
    parts = _FUNCTION.split(_cuobjdump("-sass", "-arch", HOPPER_CUBIN, "-fun", ",".join(fns)))
    loops = {fn: _shortest_hgmma_loop(body) for fn, body in zip(parts[1::2], parts[2::2])}
    assert sorted(loops) == fns, f"cuobjdump -fun dumped {sorted(loops)}, not {fns}"
    return loops


@pytest.mark.parametrize("name", WGMMA_CONSUMERS)
def test_wgmma_consumer_k_loop(name):
    # consume_shared builds its wgmma descriptors once and steps them by constants, walks the ring
    # with a wrapping stage counter and runs the first k-tile before its loop: at most 16 SASS
    # instructions per HGMMA in the loop around the HGMMAs, in every fp16 instantiation. Rebuilding
    # every descriptor from the stage's address each k-tile took 25-45 (v21: 112 a k-tile for four
    # HGMMAs), and v21 ran 5-16% slower for it (benchmarks/NOTES.md, forty-second session).
    loops = {
        fn: loop
        for fn, loop in _consumer_loops().items()
        if fn in _kernel_functions(_sass(HOPPER_CUBIN), name)
    }
    assert loops, f"{HOPPER_CUBIN}: no fp16 instantiation of {name} with HGMMA"
    long = {
        _short(fn, name): f"{n} instructions for {h} HGMMA" if loop else "no loop holds its HGMMAs"
        for fn, loop in loops.items()
        for n, h in [loop or (0, 0)]
        if not loop or n > 16 * h
    }
    assert not long, f"{HOPPER_CUBIN}: {name}'s consumer k-loop: {long}"


@pytest.mark.parametrize("name", sorted({k.name for k in HOPPER if k.dtype == "float32"}))
def test_tf32_instantiations(name):
    # fp32 on the tensor cores: tf32 wgmma reads shared-memory operands K-major only (the
    # launcher packs the others), so one instantiation, <float, A K-major, B K-major>; v22 reads
    # an MN-major A through registers and stores a transposed problem's C column-major: <A
    # K-major, C column-major>, all four; v23 (whose split epilogue stores either C): <float, A
    # K-major, true>, both.
    fns = _kernel_functions(_sass(HOPPER_CUBIN), name)
    args = sorted(_template_args(fn, name) or "" for fn in fns)
    if name == "sgemm_v22_wgmma_tf32_regs":
        assert [a[: len("ILb0ELb0EE")] for a in args] == [f"ILb{a}ELb{c}EE" for a in "01" for c in "01"], (
            sorted(fns)
        )
    elif name == "sgemm_v23_wgmma_tf32_split_k":
        assert [a[: len("IfLb0ELb1EE")] for a in args] == ["IfLb0ELb1EE", "IfLb1ELb1EE"], sorted(fns)
    else:
        assert len(args) == 1 and args[0].startswith("IfLb1ELb1EE"), sorted(fns)  # <float, true, true>


def test_hopper_kernels_only_in_sm90a():
    # No Hopper rung in a portable cubin, and nothing but Hopper rungs' kernels in the sm_90a one.
    hopper = sorted({k.name for k in HOPPER})
    portable = sorted({k.name for k in ALL_KERNELS if not _is_hopper(k)})
    for cubin, functions in sorted(_sass_all().items()):
        if cubin == HOPPER_CUBIN:
            stray = {name: sorted(_kernel_functions(functions, name)) for name in portable}
        else:
            stray = {name: sorted(_kernel_functions(functions, name)) for name in hopper}
        stray = {name: fns for name, fns in stray.items() if fns}
        assert not stray, f"{cubin} holds kernels that belong elsewhere: {stray}"


@pytest.mark.parametrize("cubin, kernel", _cases("tensor_cores"))
def test_tensor_cores(cubin, kernel):
    fns = _functions_of(cubin, kernel)
    missing = {
        _short(fn, kernel.name): [base for base in ("HMMA", "LDSM") if not _has(ops, base)]
        for fn, ops in fns.items()
    }
    missing = {fn: m for fn, m in missing.items() if m}
    assert not missing, f"{cubin}: {kernel.name} ({kernel.dtype}) instantiations without {missing}"


@pytest.mark.parametrize("cubin, kernel", _cases("wgmma"))
def test_wgmma(cubin, kernel):
    without = [
        _short(fn, kernel.name) for fn, ops in _functions_of(cubin, kernel).items() if not _has(ops, "HGMMA")
    ]
    assert not without, f"{cubin}: no HGMMA (wgmma) in {kernel.name} ({kernel.dtype}): {without}"


@pytest.mark.parametrize("cubin, kernel", _cases("tma"))
def test_tma_loads(cubin, kernel):
    without = {
        _short(fn, kernel.name): _global_loads(ops)
        for fn, ops in _functions_of(cubin, kernel).items()
        if not _has(ops, "UTMALDG")
    }
    assert not without, (
        f"{cubin}: no UTMALDG (TMA load) in {kernel.name} ({kernel.dtype}); global loads found: {without}"
    )


@pytest.mark.parametrize("cubin, kernel", _cases("tma_store"))
def test_tma_stores(cubin, kernel):
    without = [
        _short(fn, kernel.name)
        for fn, ops in _functions_of(cubin, kernel).items()
        if not _has(ops, "UTMASTG")
    ]
    assert not without, f"{cubin}: no UTMASTG (TMA store) in {kernel.name} ({kernel.dtype}): {without}"


@pytest.mark.parametrize("cubin, kernel", _cases("multicast"))
def test_cluster_multicast(cubin, kernel):
    without = [
        _short(fn, kernel.name)
        for fn, ops in _functions_of(cubin, kernel).items()
        if not (
            any(_base(op) == "UTMALDG" and "MULTICAST" in op.split(".") for op in ops)
            and _has(ops, "UCGABAR_WAIT")
        )
    ]
    assert not without, (
        f"{cubin}: no multicast TMA load or cluster barrier in {kernel.name} ({kernel.dtype}): {without}"
    )


@pytest.mark.parametrize("cubin, kernel", _cases("fma"))
def test_ffma(cubin, kernel):
    fns = _functions_of(cubin, kernel)
    without = [_short(fn, kernel.name) for fn, ops in fns.items() if not _has_ffma(ops)]
    assert not without, f"{cubin}: no FFMA in {without}"


def _template_flags(fn: str, name: str) -> list[str]:
    """The bool template flags of an SGEMM instantiation, in order ("0" / "1")."""
    flags = re.findall(r"Lb([01])E", _template_args(fn, name) or "")
    assert flags, f"{fn}: no template flags"
    return flags


def _vec_flag(fn: str, name: str) -> bool:
    """The last template flag of an instantiation: 16-byte accesses (true) or 4-byte ones."""
    return _template_flags(fn, name)[-1] == "1"


# Rungs that copy a K-contiguous operand 4 bytes at a time, straight into its transposed shared
# tile (cp.async), whatever its alignment: only their instantiations with an MN-contiguous operand
# must hold 128-bit loads.
TRANSPOSING_COPIES = {
    "sgemm_v17_multistage",
    "sgemm_v18_split_k_multistage",
    "sgemm_v21_split_k_reduce_multistage",
}


def _layout_flags(fn: str, name: str) -> tuple[str, str]:
    """(A column-major, B column-major) template flags of an SGEMM instantiation."""
    flags = _template_flags(fn, name)
    assert len(flags) >= 2, f"{fn}: no layout flags"
    return flags[0], flags[1]


# Rungs with an instantiation for a row-major A of 16-byte rows beside an under-aligned B or C
# (sgemm/common.cuh: with_kernel's a16; the flag before VEC): one per layout of B (and tiling),
# whose A loads are 128-bit.
A16_RUNGS = {
    "sgemm_v09_cp_async",
    "sgemm_v12_split_k_narrow",
    "sgemm_v16_split_k_waves",
    "sgemm_v20_split_k_reduce",
}


@pytest.mark.parametrize("cubin, kernel", _cases("vector_loads"))
def test_vector_loads(cubin, kernel):
    fns = _functions_of(cubin, kernel)
    if _takes_4_byte_operands(kernel):
        vec = [fn for fn in fns if _vec_flag(fn, kernel.name)]
        a16 = []
        if kernel.name in A16_RUNGS:
            a16 = [fn for fn in fns if _template_flags(fn, kernel.name)[-2:] == ["1", "0"]]
            assert a16 and 2 * len(a16) == len(vec), f"{cubin}: {kernel.name}: {sorted(fns)}"
            assert all(_layout_flags(fn, kernel.name)[0] == "0" for fn in a16), sorted(a16)
        assert vec and 2 * len(vec) + len(a16) == len(fns), f"{cubin}: {kernel.name}: {sorted(fns)}"
        fns = {fn: fns[fn] for fn in vec + a16}
    if kernel.name in TRANSPOSING_COPIES:
        # both operands K-contiguous (row-major A, column-major B): 4-byte copies only, by design
        fns = {fn: ops for fn, ops in fns.items() if _layout_flags(fn, kernel.name) != ("0", "1")}
        assert fns, f"{cubin}: {kernel.name}: no instantiation with an MN-contiguous operand"
    bad = {
        _short(fn, kernel.name): _global_loads(ops)
        for fn, ops in fns.items()
        if not any(_is_load_128(op) for op in ops)
    }
    assert not bad, f"{cubin}: no 128-bit global loads in {kernel.name}; global loads found: {bad}"


@pytest.mark.parametrize("cubin, kernel", _cases("cp_async"))
def test_cp_async(cubin, kernel):
    fns = _functions_of(cubin, kernel)
    with_ldgsts = [
        _short(fn, kernel.name) for fn, ops in fns.items() if any(_base(op) == "LDGSTS" for op in ops)
    ]
    loads = {_short(fn, kernel.name): _global_loads(ops) for fn, ops in fns.items()}
    assert with_ldgsts, f"{cubin}: no LDGSTS (cp.async) in {kernel.name}; global loads found: {loads}"
    if _is_half(kernel):  # both operands are cp.async copies in every layout
        without = {fn: ld for fn, ld in loads.items() if not any(_base(op) == "LDGSTS" for op in ld)}
        assert not without, f"{cubin}: {kernel.name} instantiations without LDGSTS: {without}"


@pytest.mark.parametrize("kernel", _kernels_with("cp_async"), ids=_id)
def test_no_cp_async_before_sm80(kernel):
    older = [arch for arch in ARCHS if not _runs_on(kernel, arch)]
    if not older:
        pytest.skip(
            f"no architecture below {kernel.name}'s in this build (cuda_archs={fastgemm._C.cuda_archs})"
        )
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


@pytest.mark.parametrize("cubin, kernel", _cases("no_spills"))
def test_no_spills(cubin, kernel):
    # One exception, counted: v44's producer warpgroup runs on 32 registers (setmaxnreg; its three
    # consumer warpgroups take the rest of a 512-thread block's), and ptxas keeps one or two
    # words of its tile loop in local memory (in the SASS of this change: a store before the loop
    # and a load once per output tile, none in the k-loop). The test counts the local-memory
    # instructions of each instantiation against SPILLS_ALLOWED; more fail as everywhere else.
    allowed = SPILLS_ALLOWED.get(kernel.name, 0)
    spills = {
        _short(fn, kernel.name): _spills(ops)
        for fn, ops in _functions_of(cubin, kernel).items()
        if _spills(ops) and sum(_base(op) in ("LDL", "STL") for op in ops) > allowed
    }
    assert not spills, (
        f"{cubin}: {kernel.name} uses local memory (register spills or a stack array): {spills}"
    )


def _of(technique: str, dtype: str) -> list[fastgemm.KernelInfo]:
    return [k for k in _kernels_with(technique) if k.dtype == dtype]


def test_expectations_cover_the_ladder():
    # The technique table still matches the ladder it was written for.
    assert [k.name for k in _of("vector_loads", "float32")] == [
        "sgemm_v06_vectorized",
        "sgemm_v07_conflict_free",
        "sgemm_v08_warptile",
        "sgemm_v09_cp_async",
        "sgemm_v10_split_k",
        "sgemm_v11_split_k_tile",
        "sgemm_v12_split_k_narrow",
        "sgemm_v15_split_k_global",
        "sgemm_v16_split_k_waves",
        "sgemm_v17_multistage",
        "sgemm_v18_split_k_multistage",
        "sgemm_v19_split_k_ring",
        "sgemm_v20_split_k_reduce",
        "sgemm_v21_split_k_reduce_multistage",
    ]
    assert [k.name for k in _of("cp_async", "float32")] == [
        "sgemm_v09_cp_async",
        "sgemm_v11_split_k_tile",
        "sgemm_v12_split_k_narrow",
        "sgemm_v15_split_k_global",
        "sgemm_v16_split_k_waves",
        "sgemm_v17_multistage",
        "sgemm_v18_split_k_multistage",
        "sgemm_v19_split_k_ring",
        "sgemm_v20_split_k_reduce",
        "sgemm_v21_split_k_reduce_multistage",
    ]
    # tf32, tf32x3, tf32 with an A through registers, its split-K, tf32x3's (sm_90a only)
    tensor_core = [13, 14, 22, 23, 24] if HOPPER_CC in ARCHS else []
    assert [k.version for k in _of("no_spills", "float32")] == [
        5,
        6,
        7,
        8,
        9,
        10,
        11,
        12,
        *tensor_core[:2],
        15,
        16,
        17,
        18,
        19,
        20,
        21,
        *tensor_core[2:],
    ]
    assert len(_kernels_with("fma")) == len(SGEMM) == 19 + len(tensor_core)
    assert not _of("fma", "float16") and not _of("tensor_cores", "float32")
    assert [k.version for k in _of("wgmma", "float32")] == tensor_core
    assert [k.version for k in _of("tma", "float32")] == tensor_core


@pytest.mark.parametrize("dtype", HALF)
def test_expectations_cover_the_hgemm_ladder(dtype):
    portable = [k for k in fastgemm.kernels(dtype) if not _is_hopper(k)]
    ladder = [k for k in portable if not k.branch]
    specialists = [k for k in portable if k.branch]  # mma.sync shape specialists, sm_80+
    hopper = [k for k in fastgemm.kernels(dtype) if _is_hopper(k)]
    assert [k.version for k in ladder] == list(range(1, 10))
    assert [k.version for k in specialists] == [22, 23, 26, 35, 36, 37, 38, 39, 40, 41, 42, 47, 48, 49]
    mma_sync_on_hopper = [k for k in hopper if _is_hopper_mma_sync(k)]
    # Hopper rungs exist only in builds with sm_90 in the arch list.
    assert [k.version for k in mma_sync_on_hopper] == ([17] if hopper else [])
    assert _of("tensor_cores", dtype) == ladder + mma_sync_on_hopper + specialists
    # The specialists that copy 16-byte vectors, all by cp.async (the element-load ones do not).
    vector_specialists = [22, 23, 26, 35, 36, 40, 41, 42, 47, 48, 49]
    assert [k.version for k in _of("vector_loads", dtype)] == [*range(2, 10), *vector_specialists]
    assert [k.version for k in _of("cp_async", dtype)] == [6, 7, 8, 9, *vector_specialists]
    by_version = sorted(ladder + hopper + specialists, key=lambda k: k.version)
    assert _of("no_spills", dtype) == by_version
    # Hopper rungs: TMA loads (checked in the sm_90a cubin); wgmma in all but the mma.sync one.
    assert _of("tma", dtype) == hopper
    assert _of("wgmma", dtype) == [k for k in hopper if k not in mma_sync_on_hopper]
    assert all(k.version >= 10 for k in hopper), hopper
    assert [k.version for k in _of("multicast", dtype)] == ([15, 43, 45, 46] if hopper else [])
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
        "MOV",
        "LDG.E.128.CONSTANT",
        "LDG.E.LTC128B",
        "FFMA",
        "LDGSTS.E.BYPASS.128.ZFILL",
        "STL.64",
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


_SAMPLE_CUBINS = """
Fatbin elf code:
================
arch = sm_90a
identifier = /work/main/csrc/hopper/tensor_map.cu

	code for sm_90a
	.target	sm_90a


Fatbin elf code:
================
arch = sm_90a
identifier = /work/main/csrc/hopper/v10_demo.cu

	code for sm_90a
	.target	sm_90a

		Function : _ZN8fastgemm4_GLOBAL__N_121hgemm_v10_demo_kernelI6__halfLb1ELb0EEEv14CUtensorMap_stS3_PT_llllff
	.headerflags	@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0550*/                   @!UP0 SYNCS.EXCH.64 URZ, [UR6], UR4 ;  /* 0x00000004063f85b2 */
        /*0b90*/                   UTMALDG.2D [UR8], [UR14] ;  /* 0x000000080e0075b4 */
        /*0fd0*/                   HGMMA.64x128x16.F32 R24, gdesc[UR36].tnspB, R24 ;  /* 0x61e00000241879f0 */
		..........

Fatbin elf code:
================
arch = sm_90
identifier = /work/main/csrc/hgemm/v01_mma.cu

	code for sm_90
	.target	sm_90

		Function : _ZN8fastgemm4_GLOBAL__N_120hgemm_v01_mma_kernelI6__halfLb1ELb0EEEvv
        /*0000*/                   HMMA.16816.F32 R4, R8, R12, R4 ;  /* 0x0000000c0804723c */
"""


def test_split_cubins_on_sample():
    cubins = _split_cubins(_SAMPLE_CUBINS)
    assert sorted(cubins) == ["sm_90", "sm_90a"]
    hopper = "_ZN8fastgemm4_GLOBAL__N_121hgemm_v10_demo_kernelI6__halfLb1ELb0EEEv14CUtensorMap_stS3_PT_llllff"
    assert cubins["sm_90a"] == {hopper: ["SYNCS.EXCH.64", "UTMALDG.2D", "HGMMA.64"]}
    assert list(cubins["sm_90"]) == ["_ZN8fastgemm4_GLOBAL__N_120hgemm_v01_mma_kernelI6__halfLb1ELb0EEEvv"]
    ops = cubins["sm_90a"][hopper]
    assert _has(ops, "HGMMA") and _has(ops, "UTMALDG") and not _spills(ops)
    assert _short(hopper, "hgemm_v10_demo") == "hgemm_v10_demo_kernel<__half, true, false>"
    assert _element_dtype(hopper, "hgemm_v10_demo") == "float16"
    assert (_cubin(90), _cubin("sm_90a")) == ("sm_90", "sm_90a")
    assert (_cubin_cc("sm_90a"), _cubin_cc("sm_80")) == (90, 80)
