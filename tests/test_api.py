"""CPU-only tests of fastgemm's public API: the kernel table, ``select()``, and argument validation.

Nothing here needs a GPU, CuPy or PyTorch, and everything also passes on a machine with one: CUDA
arrays are faked with small objects that export ``__cuda_array_interface__`` (v3) with made-up
pointers that are never dereferenced. Every validation error is raised before any GPU work, so it
is the same with or without a GPU; only the final "all arguments are valid" cases differ (no GPU:
"needs a CUDA GPU"; a GPU: the fake pointers are not device memory), and both are RuntimeErrors
that mention CUDA.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import fastgemm
from fastgemm import dispatch
from fastgemm._arrays import as_matrix, layout

CCS = (75, 80, 86, 89, 90)
DTYPES = ("float32", "float16", "bfloat16")
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}

# Far-apart fake device addresses: the small matrices below never overlap unless a test says so.
PTR_A, PTR_B, PTR_C = 0x1000_0000, 0x2000_0000, 0x3000_0000

M, N, K = 4, 8, 12


# --- fakes -------------------------------------------------------------------------------------


_TYPESTR = {"float32": "<f4", "float16": "<f2", "float64": "<f8", "int32": "<i4"}


class FakeCuda:
    """A CUDA array as far as fastgemm can tell: ``__cuda_array_interface__`` v3, nothing else."""

    def __init__(self, shape, dtype="float32", *, ptr=PTR_A, strides=None, readonly=False):
        if dtype == "bfloat16":  # no standard typestr: a 2-byte void with a descr naming it
            typestr, descr = "<V2", [("bfloat16", "<V2")]
        else:
            typestr, descr = _TYPESTR[dtype], [("", _TYPESTR[dtype])]
        self.__cuda_array_interface__ = {
            "version": 3,
            "shape": tuple(shape),
            "typestr": typestr,
            "descr": descr,
            "data": (ptr, readonly),
            "strides": strides,  # bytes; None = C-contiguous
            "stream": None,
        }


def operands(dtype="float32", m=M, n=N, k=K):
    """Valid, non-overlapping fake A (m x k), B (k x n) and C (m x n)."""
    return (
        FakeCuda((m, k), dtype, ptr=PTR_A),
        FakeCuda((k, n), dtype, ptr=PTR_B),
        FakeCuda((m, n), dtype, ptr=PTR_C),
    )


@pytest.fixture
def runtime_hooks():
    """Set the C++ runtime hooks (fastgemm._C._set_runtime_hooks) for one test; reset afterwards."""
    yield fastgemm._C._set_runtime_hooks
    fastgemm._C._set_runtime_hooks()


@pytest.fixture
def cpu_only(runtime_hooks):
    """Any device query from the C++ entry raises AssertionError: proves that a check came first."""
    runtime_hooks(forbid=True)


# --- import and module surface -----------------------------------------------------------------


def test_import_and_all():
    for name in fastgemm.__all__:
        assert hasattr(fastgemm, name), name
    assert isinstance(fastgemm.__version__, str) and fastgemm.__version__


def test_device_count_and_status():
    n = fastgemm.device_count()
    assert isinstance(n, int) and not isinstance(n, bool) and n >= 0
    status = fastgemm.runtime_status()
    assert isinstance(status, str) and status
    if n > 0:
        assert status == "ok"
    else:
        assert status != "ok"


# --- the kernel table --------------------------------------------------------------------------


def test_kernel_info_fields():
    ks = fastgemm.kernels()
    assert ks, "the kernel table is empty"
    for k in ks:
        assert isinstance(k, fastgemm.KernelInfo)
        assert isinstance(k.name, str) and k.name, k
        assert k.dtype in DTYPES, k
        assert type(k.version) is int and k.version >= 1, k
        assert type(k.min_cc) is int and k.min_cc >= 75, k
        assert k.max_cc is None or (type(k.max_cc) is int and k.max_cc >= k.min_cc), k
        assert type(k.alignment) is int and k.alignment > 0, k
        assert k.alignment & (k.alignment - 1) == 0, f"{k.name}: alignment {k.alignment} is not a power of 2"
        assert k.alignment >= ITEMSIZE[k.dtype], k
        assert isinstance(k.techniques, str) and k.techniques.strip(), k


def test_kernel_identities_unique():
    # A kernel is identified by (name, dtype): the fp16 and bf16 rows of an HGEMM rung share a name.
    ids = [(k.name, k.dtype) for k in fastgemm.kernels()]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_shared_names_only_across_half_dtypes():
    # Only the half-precision ladders share names; an SGEMM name means one kernel.
    by_name: dict[str, set[str]] = {}
    for k in fastgemm.kernels():
        by_name.setdefault(k.name, set()).add(k.dtype)
    for name, dtypes in by_name.items():
        assert len(dtypes) == 1 or dtypes == {"float16", "bfloat16"}, (name, dtypes)


def test_kernels_ordered_by_dtype_and_version():
    ks = fastgemm.kernels()
    assert ks == sorted(ks, key=lambda k: (k.dtype, k.version, k.name))


@pytest.mark.parametrize("dtype", DTYPES)
def test_kernels_filter(dtype):
    ks = fastgemm.kernels(dtype)
    assert all(k.dtype == dtype for k in ks)
    assert ks == [k for k in fastgemm.kernels() if k.dtype == dtype]


def test_sgemm_ladder():
    ks = fastgemm.kernels("float32")
    ladder = [k for k in ks if not k.branch]
    assert [k.version for k in ladder] == list(range(1, 10))
    # Shape specialists (fp32 arithmetic): branches numbered after the ladder; then, where sm_90
    # is built, the tensor-core precisions (tf32, tf32x3).
    ieee_branches = [k.version for k in ks if k.branch and k.precision == "ieee"]
    assert ieee_branches[:3] == [10, 11, 12], ieee_branches
    tensor_cores = {k.version: k.precision for k in ks if k.precision != "ieee"}
    expected = {13: "tf32", 14: "tf32x3", 22: "tf32", 23: "tf32", 24: "tf32x3"}
    assert tensor_cores == (expected if str(HOPPER_CC) in BUILT_ARCHS else {})
    # Together they number on from the ladder without a gap (the tensor-core rungs need sm_90).
    after_ladder = sorted(ieee_branches + list(expected))
    assert after_ladder == list(range(10, 10 + len(after_ladder))), after_ladder
    for k in ks:
        assert k.name.startswith(f"sgemm_v{k.version:02d}_"), k.name
        assert k.branch or k.precision == "ieee", k
        assert (k.precision == "ieee") == (k.family == "simt"), k


def test_precision_field():
    for k in fastgemm.kernels():
        expected = {"ieee", "tf32x3", "tf32"} if k.dtype == "float32" else {""}
        assert k.precision in expected, k


HALF = ("float16", "bfloat16")

# Hopper rungs: sm_90a machine code (wgmma, TMA), compiled only when 90 is in the build's
# architecture list, and runnable on compute capability 9.0 alone (max_cc == 90).
HOPPER_CC = 90
BUILT_ARCHS = {a.strip() for a in str(fastgemm._C.cuda_archs).replace(";", ",").split(",") if a.strip()}


def _is_hopper(k: fastgemm.KernelInfo) -> bool:
    return k.copy == "tma"  # the table's own word for it; its cc range is checked below


def _hopper(dtype: str | None = None) -> list[fastgemm.KernelInfo]:
    return [k for k in fastgemm.kernels(dtype) if _is_hopper(k)]


@pytest.mark.parametrize("dtype", HALF)
def test_hgemm_ladder(dtype):
    ks = fastgemm.kernels(dtype)
    portable = [k for k in ks if k.max_cc is None]  # mma.sync: every GPU from its min_cc on
    hopper = _hopper(dtype)
    assert sorted(portable + hopper, key=lambda k: k.version) == ks, (
        "a half-precision kernel is neither an mma.sync nor a Hopper rung"
    )
    ladder = [k for k in portable if k.version < 10]
    assert [k.version for k in ladder] == list(range(1, 10))
    # Shape specialists that run on every GPU from sm_80 are branches numbered after the rungs
    # before them, Hopper rungs included (v10, v11, ... with no gaps in a build with sm_90).
    specialists = [k for k in portable if k.version >= 10]
    for k in specialists:
        # v37 / v38 read rows aligned to their 2-byte elements (element loads).
        assert k.branch and k.min_cc == 80 and k.alignment == (2 if k.copy == "ldg" else 16), k
        assert k.name.startswith(f"hgemm_v{k.version:02d}_"), k.name
    if hopper:
        after_ladder = sorted(k.version for k in hopper + specialists)
        assert after_ladder == list(range(10, 10 + len(after_ladder)))
    for k in ladder:
        assert k.name.startswith(f"hgemm_v{k.version:02d}_"), k.name
        assert k.alignment == (2 if k.version == 1 else 16), k
        if dtype == "float16":  # sm_75 tensor cores until cp.async
            assert k.min_cc == (75 if k.version <= 5 else 80), k
        else:  # no bf16 tensor cores before sm_80
            assert k.min_cc == 80, k
    # Hopper rungs continue the ladder: v10, v11, ... (their specialists are numbered after the
    # portable ones, which the check above covers).
    hopper_line = [k for k in hopper if k.version < 22]
    assert [k.version for k in hopper_line] == list(range(10, 10 + len(hopper_line)))
    for k in hopper:
        assert k.name.startswith(f"hgemm_v{k.version:02d}_"), k.name
        assert (k.min_cc, k.max_cc) == (HOPPER_CC, HOPPER_CC), k
        # TMA: 16-byte aligned addresses and row pitches; v34 reads any rows by residue maps.
        assert k.alignment == (2 if k.name == "hgemm_v34_split_k_unaligned" else 16), k
        assert k.smem_bytes > 0, k  # dynamic shared memory for the TMA tiles


FAMILIES = {"simt", "mma_sync", "wgmma"}
COPIES = {"ldg", "cp_async", "tma"}
EPILOGUES = {"registers", "row_stores", "tma_store", "split_k", "split_k_global"}


@pytest.mark.parametrize("dtype", ["float32", *HALF])
def test_table_structure_fields(dtype):
    # Every row says what it is (family, copy path, epilogue) and which rung it changes; a
    # ladder has one root, parents are earlier rungs of the same dtype, and the main line (rows
    # that are not branches) is a chain: each main-line rung's parent is the previous one.
    ks = fastgemm.kernels(dtype)
    by_name = {k.name: k for k in ks}
    for k in ks:
        assert k.family in FAMILIES and k.copy in COPIES and k.epilogue in EPILOGUES, k
        # fp32: CUDA cores, or the tensor cores at a precision below ieee
        assert (k.family == "simt") == (dtype == "float32" and k.precision == "ieee"), k
        assert (k.copy == "tma") == (k.max_cc == HOPPER_CC), k
        if k.parent:
            assert k.parent in by_name and by_name[k.parent].version < k.version, k
    roots = [k for k in ks if not k.parent]
    assert [k.version for k in roots] == [1], roots
    main = [k for k in ks if not k.branch]
    for prev, k in zip(main, main[1:]):
        assert k.parent == prev.name, (k.name, k.parent, prev.name)
    for k in ks:
        if k.branch:  # off the main line, or a step along such a branch: its parents lead back to it
            root = k
            while root.branch:
                assert root.parent, root
                root = by_name[root.parent]
            assert root in main, (k.name, root.name)


@pytest.mark.parametrize("dtype", HALF)
def test_hopper_rungs_iff_sm90_is_built(dtype):
    names = [k.name for k in _hopper(dtype)]
    if str(HOPPER_CC) in BUILT_ARCHS:
        assert "hgemm_v10_wgmma_tma" in names, (fastgemm._C.cuda_archs, names)
    else:
        assert not names, f"Hopper rungs in a build without sm_90 (cuda_archs={fastgemm._C.cuda_archs})"
    # fp32 Hopper rungs: only the tensor-core precisions
    assert all(k.precision in ("tf32", "tf32x3") for k in _hopper("float32"))


@pytest.mark.parametrize("cc", [75, 80, 86, 89, 100, 120])
def test_hopper_rungs_run_only_on_sm90(cc):
    for k in _hopper():
        assert dispatch.check_runnable(k, HOPPER_CC, 16) is None, k
        problem = dispatch.check_runnable(k, cc, 16)
        assert problem is not None and k.name in problem, (k, cc)


def test_hgemm_names_shared_by_fp16_and_bf16():
    f16, bf16 = fastgemm.kernels("float16"), fastgemm.kernels("bfloat16")
    assert [k.name for k in f16] == [k.name for k in bf16]
    for a, b in zip(f16, bf16):
        assert (a.version, a.alignment, a.techniques) == (b.version, b.alignment, b.techniques), (a, b)


@pytest.mark.parametrize("dtype", ["int8", "float64", "", "float"])
def test_kernels_unknown_dtype(dtype):
    with pytest.raises(TypeError, match="unknown dtype"):
        fastgemm.kernels(dtype)


# --- select() ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cc", CCS)
def test_select_default_alignment(cc):
    sel = fastgemm.select(1024, 1024, 1024, "float32", cc=cc)
    assert isinstance(sel, fastgemm.Selection)
    # 1024^2 is 64 tiles of 128x128: on sm_90 the round model splits K four ways (v16), elsewhere
    # the ladder's top
    expected = _first_runnable_rule("float32", cc, 1024, 1024, 1024, 16)
    assert expected == {90: "sgemm_v16_split_k_waves", 75: "sgemm_v08_warptile"}.get(cc, "sgemm_v09_cp_async")
    assert sel.kernel.name == expected
    assert sel.kernel == next(k for k in fastgemm.kernels() if k.name == expected)
    assert isinstance(sel.reason, str) and sel.reason
    assert f"cc {cc // 10}.{cc % 10}" in sel.reason
    assert "16-byte" in sel.reason
    assert str(sel).startswith(f"{expected}: ")


def test_select_sm75_says_why_not_cp_async():
    reason = fastgemm.select(256, 256, 256, "float32", cc=75).reason
    assert "sgemm_v09_cp_async needs compute capability 8.0" in reason


@pytest.mark.parametrize("cc", CCS)
def test_select_alignment_4(cc):
    # Below PAD_MIN_MACS: the first rule whose rung takes 4-byte operands runs on them as they are:
    # from sm_80 the cp.async rungs (4-byte copies), on sm_75 v05.
    sel = fastgemm.select(256, 256, 256, "float32", cc=cc, alignment=4)
    assert 256**3 < dispatch.PAD_MIN_MACS
    expected = _first_runnable_rule("float32", cc, 256, 256, 256, 4)
    assert expected == (
        "sgemm_v05_blocktile_2d" if cc < 80 else _first_runnable_rule("float32", cc, 256, 256, 256, 16)
    )
    assert sel.kernel.name == expected and sel.kernel.alignment == 4
    assert not sel.pad
    assert "with 4-byte alignment" in sel.reason
    if cc < 80:
        assert "16-byte" in sel.reason  # why the vectorized rungs were passed over


@pytest.mark.parametrize("cc", CCS)
def test_select_alignment_4_large(cc):
    # At or above PAD_MIN_MACS: the fastest rung for the GPU; on padded 16-byte aligned copies
    # only where it needs them (sm_75: v08), in place where it takes 4-byte operands.
    sel = fastgemm.select(1024, 1024, 1024, "float32", cc=cc, alignment=4)
    assert 1024**3 >= dispatch.PAD_MIN_MACS
    assert sel.kernel.name == _first_runnable_rule("float32", cc, 1024, 1024, 1024, 16)
    assert sel.pad == (sel.kernel.alignment == 16) == (cc < 80)
    if sel.pad:
        assert "4-byte" in sel.reason and "16-byte aligned temporaries" in sel.reason
    else:
        assert "with 4-byte alignment" in sel.reason and "temporaries" not in sel.reason


@pytest.mark.parametrize("cc", CCS)
@pytest.mark.parametrize("shape", [(128, 128, 127), (128, 127, 128), (128, 130, 128), (64, 64, 6)])
def test_select_unaligned_shapes(cc, shape):
    m, n, k = shape
    sel = fastgemm.select(m, n, k, "float32", cc=cc)
    assert sel.kernel.name == _first_runnable_rule("float32", cc, m, n, k, 4)
    assert sel.kernel.alignment == 4 and not sel.pad
    assert re.search(r"\b[48]-byte alignment", sel.reason), sel.reason
    if cc < 80:
        assert sel.kernel.name == "sgemm_v05_blocktile_2d"
        assert "16-byte aligned" in sel.reason


@pytest.mark.parametrize("cc", CCS)
def test_select_m_does_not_matter_for_alignment(cc):
    # M sets no leading dimension of row-major A (ld = K), B (N) or C (N).
    assert "with 16-byte alignment" in fastgemm.select(127, 128, 128, "float32", cc=cc).reason


def test_select_alignment_larger_than_needed():
    assert fastgemm.select(128, 64, 64, "float32", cc=80, alignment=256).kernel.name == "sgemm_v09_cp_async"


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_has_kernels(dtype):
    assert fastgemm.kernels(dtype), dtype


@pytest.mark.parametrize("cc", CCS)
def test_select_float16(cc):
    sel = fastgemm.select(4096, 4096, 4096, "float16", cc=cc)
    expected = "hgemm_v05_reg_prefetch" if cc < 80 else _best_half("float16", cc)
    assert sel.kernel.name == expected and sel.kernel.dtype == "float16"
    assert not sel.pad
    assert f"cc {cc // 10}.{cc % 10}" in sel.reason and "16-byte" in sel.reason
    if cc < 80:
        assert "hgemm_v09_raster needs compute capability 8.0" in sel.reason


def _best_mma_sync(cc: int, m: int = 4096, n: int = 4096) -> str:
    # v08/v09 need 144 KiB of shared memory per block: sm_80 and sm_90 have it, sm_86/89 (99 KiB)
    # take the 4-stage 128x128 rung, as do outputs too small for v09's 128x256 tiles.
    return "hgemm_v07_multistage" if cc in (86, 89) or m * n < 1 << 21 else "hgemm_v09_raster"


# SMs that select(..., cc=) assumes for an architecture without its GPU (plan.cpp).
DOCUMENTED_SMS = {90: 132, 80: 108}


def _round_split(r: dict, m: int, n: int, k_depth: int, sms: int) -> int:
    """S of the round model (csrc/common/split_model.h), written out again from its comment."""
    tiles = -(-m // r["tile_m"]) * -(-n // r["tile_n"])
    units = -(-k_depth // r["k_unit"])
    top = min(r["most"], units // r["min_units"], 1 + r["max_partials"] // max(tiles, 1))
    slots = sms * r["blocks_per_sm"]

    def time(s: int) -> float:
        full, rest = divmod(tiles * s, slots)
        share = -(-units // s) + (r["publish"] if s > 1 else 0)
        lone = r["solo"] if r["blocks_per_sm"] > 1 and rest <= sms else 1
        return full * share + (lone * share if rest else 0) + (s - 1) * r["add"]

    if tiles <= 0 or sms <= 0 or top <= 1:
        return 1
    best = 1
    for s in range(2, top + 1):
        if time(s) < time(best) * (1 - 1e-9):
            best = s
    return best


V44 = "hgemm_v44_tile_192x128"
WAVE_WHY = "fill at most two rounds of the SMs"  # in the why of the wave rules (v44, v21)
# In the why of the rules fitted to results/sweeps/pad-*small-r41-* (v33), pad-*band-r41-* (v28, two
# bands of K) and pad-mid-tiles-r41-* (v43).
SMALL_WHY = "at most SMs/8 tiles of 128x128 with 1024 <= K <= 4096"
BAND_WHY = "at most SMs/1.15 tiles of 128x128 with 2304 <= K < 4096"
MID_WHY = "more than SMs/5 and at most SMs/2 tiles of 128x128 with 2048 <= K <= 3584"  # (v43)
BAND_LOW_WHY = "at most SMs/1.57 tiles of 128x128 with 1200 <= K < 2304"  # (v28)


# In the why of the rules fitted to results/sweeps/pad-*bunal-v45-* (v45) and
# pad-*bunal-wide-v46-* (v46): B's rows off 128 bytes, shared by the CTAs of a cluster.
SHARES_B_WHY = "2-CTA clusters sharing B: for a B whose rows are"
V45, V46 = "hgemm_v45_cluster_128x128", "hgemm_v46_cluster_128x256"
V47 = "hgemm_v47_split_k_stream"
V48 = "hgemm_v48_split_k_32rows_stream"


def _v45_rule(sel: fastgemm.Selection) -> bool:
    """Whether a selection is v45's or v46's rule: the older sweeps did not time them, so their
    tests skip the points they take (their own sweeps check them:
    test_select_half_v45_follows_its_sweeps, test_select_half_v46_follows_its_sweeps)."""
    return sel.kernel.name in (V45, V46) and SHARES_B_WHY in sel.reason.split(";")[0]


def _r41_rule(sel: fastgemm.Selection) -> bool:
    """Whether a selection is one of the four rules fitted to the r41 sweeps."""
    why, name = sel.reason.split(";")[0], sel.kernel.name
    small = SMALL_WHY in why and name == "hgemm_v33_split_k_n64"
    band = (BAND_WHY in why or BAND_LOW_WHY in why) and name == "hgemm_v28_split_k_global_narrow"
    mid = MID_WHY in why and name == "hgemm_v43_cluster_64x128"
    return small or band or mid


# The fields of one AUTO_RULES tuple (dispatch.py documents them), in order.
RULE_FIELDS = (
    "name",
    "why",
    "min_mn",
    "few",
    "max_m",
    "min_cc",
    "min_k",
    "max_short",
    "flip",
    "split_cost",
    "rounds",
    "max_k",
    "last_round",
    "vs_n",
    "min_m",
    "min_n",
    "b_order",
    "row_align",
    "unaligned",
    "half_edge",
    "unsplit_last_round",
    "wave_rounds",
    "b_off_line",
    "over_parts",
    "max_pad",
    "in_place",
    "a_off_line",
)


def _last_round_cost(m: int, n: int, k_depth: int, tile_m: int, tile_n: int, sms: int) -> float:
    """The last-round model of csrc/plan.h, written out again from its comment."""
    tiles = -(-m // tile_m) * -(-n // tile_n)
    rest, k_tiles = tiles % sms, -(-k_depth // 64)
    split = 1 if rest == 0 else min(sms // rest, 4, max(1, k_tiles // 4))
    rounds = tiles // sms + (0 if rest == 0 else 1 / split + (0.2 if split > 1 else 0))
    return rounds * tile_n * (1.05 if tile_n < 256 else 1.0)


def _wave_cost(m: int, n: int, tile_m: int, tile_n: int, sms: int) -> float:
    """The wave model of csrc/plan.h, written out again from its comment."""
    tiles = -(-m // tile_m) * -(-n // tile_n)
    return -(-tiles // sms) * tile_m * tile_n / (128 * 128)


def _wave_applies(m: int, n: int, tile_m: int, tile_n: int, sms: int) -> bool:
    """AutoRule::wave_rounds: at most two rounds, and less than the other two tiles (a tie goes
    to the larger tile)."""
    tiles = -(-m // tile_m) * -(-n // tile_n)
    mine = _wave_cost(m, n, tile_m, tile_n, sms)
    for tm, tn in ((128, 128), (192, 128), (128, 256)):
        if (tm, tn) != (tile_m, tile_n):
            other = _wave_cost(m, n, tm, tn, sms)
            if mine > other or (mine == other and tm * tn > tile_m * tile_n):
                return False
    return tiles <= 2 * sms


def test_wave_cost_matches_the_model():
    shapes = [(1152, 2048, 1664), (2368, 1600, 384), (4096, 4096, 4096), (100, 100, 100), (3160, 520, 1)]
    for m, n, _ in shapes:
        for tile_m, tile_n in ((128, 128), (192, 128), (128, 256)):
            assert fastgemm._C.wave_cost(m, n, tile_m, tile_n, 132) == pytest.approx(
                _wave_cost(m, n, tile_m, tile_n, 132)
            )
    assert _wave_applies(1152, 2048, 192, 128, 132) and not _wave_applies(1152, 2048, 128, 128, 132)
    assert _wave_applies(2368, 1600, 128, 128, 132) and not _wave_applies(4096, 4096, 192, 128, 132)


def test_last_round_cost_matches_the_model():
    shapes = [(512, 6144, 4096), (1536, 6144, 4096), (8704, 512, 8192), (100, 100, 100), (4096, 28672, 1024)]
    for m, n, k_depth in shapes:
        for tile_n in (192, 256):
            assert fastgemm._C.last_round_cost(m, n, k_depth, 128, tile_n, 132) == pytest.approx(
                _last_round_cost(m, n, k_depth, 128, tile_n, 132)
            )


def _first_runnable_rule(
    dtype: str,
    cc: int,
    m: int,
    n: int,
    k_depth: int,
    alignment: int,
    order: str = "CC",
    rules: list | None = None,
    whole: bool = False,
):
    """The first AUTO_RULES candidate (or of ``rules``) that is in the table, is meant for an
    m x n x k_depth problem with A and B in ``order`` and runs on ``cc`` with ``alignment``-byte
    aligned operands: its kernel's name, or (whole) the rule."""
    a_col, b_col = order[0] == "F", order[1] == "F"
    table = {k.name: k for k in fastgemm.kernels(dtype)}
    sms = DOCUMENTED_SMS.get(cc, 0)
    for rule in dispatch.AUTO_RULES[dtype] if rules is None else rules:
        (
            name,
            _why,
            min_mn,
            few,
            max_m,
            min_cc,
            min_k,
            max_short,
            flip,
            split_cost,
            rounds,
            max_k,
            last_round,
            vs_n,
            min_m,
            min_n,
            b_order,
            row_align,
            unaligned,
            half_edge,
            unsplit_last_round,
            wave_rounds,
            b_off_line,
            over_parts,
            max_pad,
            _in_place,
            a_off_line,
        ) = rule  # RULE_FIELDS, in order
        k = table.get(name)
        rm, rn = (n, m) if flip else (m, n)  # a flip rule reads the transposed problem
        if b_order is not None and (b_order == "F") != (not a_col if flip else b_col):
            continue
        if row_align is not None and alignment < row_align:
            continue
        if unaligned is not None and alignment >= 16:  # one alignment stands for A, B and C
            continue
        if (max_m is not None and rm > max_m) or (min_cc is not None and cc < min_cc):
            continue
        if (min_m is not None and rm < min_m) or (min_n is not None and rn < min_n):
            continue
        if max_short is not None and min(rm, rn) > max_short:
            continue
        if min_k is not None and k_depth < min_k:
            continue
        if max_k is not None and k_depth > max_k:
            continue
        if half_edge and not 0 < min(rm, rn) % 128 <= 64:
            continue
        if b_off_line is not None and not 16 <= alignment < b_off_line:  # one alignment for A, B, C
            continue
        # One alignment stands for every operand here; C++ reads the kernel's A alone (B's for a
        # flip rule), so a problem whose K (A's pitch) is less aligned than B's rows can differ
        # (as with b_off_line).
        if a_off_line is not None and not (
            ((order[1] == "C") if flip else a_col) and 16 <= alignment < a_off_line
        ):
            continue
        if (
            max_pad is not None
            and few is not None
            and -(-rm // few[0]) * few[0] > max_pad * (-(-rm // 128) * 128)
        ):
            continue
        tiles = (-(-rm // few[0])) * (-(-rn // few[1])) if few is not None else 0
        if over_parts is not None and over_parts * tiles <= sms:
            continue
        if last_round:
            if tiles <= sms or tiles % sms == 0 or 2 * (tiles % sms) > sms:
                continue
        elif few is not None and few[2] * tiles > sms:
            continue
        if vs_n is not None and not (
            _last_round_cost(rm, rn, k_depth, few[0], few[1], sms)
            < _last_round_cost(rm, rn, k_depth, few[0], vs_n, sms)
        ):
            continue
        if unsplit_last_round and tiles % sms != 0 and 2 * (tiles % sms) <= sms:
            continue
        if wave_rounds and not _wave_applies(rm, rn, few[0], few[1], sms):
            continue
        if split_cost is not None:
            k_tiles = -(-k_depth // 64)
            split = max(1, min(16, k_tiles // 4, sms // tiles))
            if split < 2 or k_tiles < split_cost * split * (split - 1):
                continue
        if (
            rounds is not None
            and _round_split(rounds, rm, rn, k_depth, sms) < 2
            and k_depth % rounds["k_unit"] == 0
        ):
            continue
        if k is not None and m * n >= min_mn and dispatch.check_runnable(k, cc, alignment) is None:
            return rule if whole else name
    raise AssertionError(f"no {dtype} rule runs on cc {cc} with {alignment}-byte alignment")


def _rule_applies(rule: tuple, m: int, n: int, k: int, alignment: int, order: str = "CC") -> bool:
    """Whether this fp32 rule is meant for the problem and runs on sm_90 (_first_runnable_rule)."""
    try:
        return _first_runnable_rule("float32", 90, m, n, k, alignment, order, [rule]) == rule[0]
    except AssertionError:  # no rule of [rule] runs there
        return False


def _best_half(
    dtype: str, cc: int, m: int = 4096, n: int = 4096, k: int = 4096, alignment: int | None = None
) -> str:
    """What auto takes for a half-precision m x n output on operands aligned to ``alignment``
    bytes (default: fresh contiguous ones), or their aligned copies, on cc >= 80. cc 80/86/89 never get a Hopper rung: the mma.sync rung, by name.
    cc 90: the first rule that runs, which is a Hopper rung when the build and the rules have one."""
    if alignment is None:  # fresh contiguous operands: rows aligned as their pitches allow
        alignment = dispatch.alignment_of(256, 2 * k, 2 * n, cap=dispatch.PLAN_ALIGN_CAP)
    if cc != HOPPER_CC:
        return _best_mma_sync(cc, m, n)
    name = _first_runnable_rule(dtype, cc, m, n, k, alignment)
    hopper = {k.name for k in _hopper(dtype)}
    if not hopper & {rule[0] for rule in dispatch.AUTO_RULES[dtype]}:
        assert name == _best_mma_sync(cc, m, n)  # no Hopper rule applies in this build
    return name


@pytest.mark.parametrize("dtype", HALF)
def test_select_split_through_global_memory(dtype):
    # The splits through global memory go to deep K on a few tiles (v27 on wide tiles, v28 on
    # 128x128 ones), never to an output whose K gives no split (S = 1: a 256^3 or a 1024^3 output),
    # and not to a prefill of 128 rows, where the cluster split (v24, v33) reduces for less.
    if not any(k.epilogue == "split_k_global" for k in fastgemm.kernels(dtype)):
        pytest.skip("no sm_90 code in this build")
    unsplit = [(256, 256, 256), (1024, 1024, 1024), (128, 3584, 18944), (8192, 128, 8192), (4096, 4096, 4096)]
    pick = {
        s: fastgemm.select(*s, dtype, cc=HOPPER_CC).kernel
        for s in [(1024, 1024, 65536), (512, 512, 32768), *unsplit]
    }
    assert pick[(1024, 1024, 65536)].name == "hgemm_v27_split_k_global"
    assert pick[(512, 512, 32768)].name == "hgemm_v28_split_k_global_narrow"
    for shape in unsplit:
        assert pick[shape].epilogue != "split_k_global", (shape, pick[shape].name)
    why = fastgemm.select(1000, 1000, 2048, dtype, cc=HOPPER_CC).reason
    assert "hgemm_v27_split_k_global is for K shares of at least 22" in why


def _csv_sweep_points(pattern: str) -> dict[tuple[int, int, int], dict[str, float]]:
    """Microseconds per (M, N, K) and kernel named in the CSV sweeps under results/sweeps/ that
    match `pattern` (sweep.py's rows; the peers and auto left out)."""
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    points: dict[tuple[int, int, int], dict[str, float]] = {}
    for path in sorted(sweeps.glob(pattern)):
        for row in csv.DictReader(path.read_text().splitlines()):
            if row["candidate"].startswith("hgemm_"):
                shape = (int(row["M"]), int(row["N"]), int(row["K"]))
                points.setdefault(shape, {})[row["candidate"]] = float(row["us"])
    return points


def _csv_sweep_file(
    path: Path,
) -> tuple[dict[tuple[int, int, int], dict[str, float]], dict[tuple[int, int, int], str]]:
    """One CSV sweep of sweep.py: microseconds per (M, N, K) and candidate (auto and the peers
    included), and what auto ran on each shape when the sweep was taken ("+pad": on padded
    copies)."""
    times: dict[tuple[int, int, int], dict[str, float]] = {}
    ran: dict[tuple[int, int, int], str] = {}
    for row in csv.DictReader(path.read_text().splitlines()):
        shape = (int(row["M"]), int(row["N"]), int(row["K"]))
        times.setdefault(shape, {})[row["candidate"]] = float(row["us"])
        ran[shape] = row["auto_kernel"] + ("+pad" if row["auto_pad"] == "True" else "")
    return times, ran


def test_select_fp16_deep_split_follows_the_sweep():
    # Deep K on a few tiles (results/sweeps/deep-late-dependents-float16-*: M 128-1024 x N
    # 256-1024 x K 8192-65536, the split rungs v24, v27, v28 and v33 by name, H100, operands out
    # of L2, v27 and v28 with the next launch's blocks placed once theirs have left). Where auto
    # runs v28 it was within 5% of the fastest of the four; where it runs another of them, within
    # 13% (384 x 256 x 32768: v24 at 1.12x v28's time, on a share of 2.1 (S - 1) k-tiles, below
    # v28's threshold of 4, where v28 lost on as many points as it won).
    if not any(k.epilogue == "split_k_global" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    points = _csv_sweep_points("deep-late-dependents-float16-*.csv")
    assert len(points) >= 70
    v28, on_v28, on_split = "hgemm_v28_split_k_global_narrow", 0, 0
    for shape, times in points.items():
        name = fastgemm.select(*shape, "float16", cc=90).kernel.name
        if name not in times:
            continue  # v35 / v36 (at most 16 tiles of 64x64), not timed here
        on_split += 1
        on_v28 += name == v28
        assert times[name] <= (1.05 if name == v28 else 1.13) * min(times.values()), (shape, times)
    assert on_v28 >= 35 and on_split >= 60


# The decode rungs with six ring stages, and the four-stage rung each branches from.
DEEP_RINGS = {
    "hgemm_v40_split_k_deep_ring": "hgemm_v22_split_k",
    "hgemm_v41_split_k_32rows_deep_ring": "hgemm_v26_split_k_32rows",
    "hgemm_v42_split_k_wide_deep_ring": "hgemm_v23_split_k_wide",
}


def test_select_fp16_deep_rings_follow_the_sweeps():
    # results/sweeps/{rows,rows-bcol,narrow}-ring-float16-* (H100 and H200): 1-64 rows on the
    # (N, K) of model layers with a row-major and a column-major B, and 1-64 columns transposed;
    # v22, v26, v23 and their six-stage branches by name. Per sweep (a GPU, a layout), where auto
    # runs a six-stage rung: against the rung it branches from, 1.04-1.05x faster on the H200 in
    # the geometric mean, 1.01-1.02x on the H100 with a column-major B or transposed, level with
    # a row-major B (0.99-1.01x per rung); at most 10% slower on any point (v42 at 64x2048x14336
    # with a row-major B on the H100: 0.903x; the bound is 0.88); where auto keeps v22 or v26 (more tiles than SMs, where
    # they run two blocks per SM), the six-stage branch was at most 2% faster in the geometric
    # mean (the transposed points kept, of 14336 rows: 0.97-1.06x). v23 is auto's no more. The
    # narrow sweeps' flipped outputs of 8, 24 and 40-56 columns over more than SMs/2 tiles go to
    # v22, v26, v48 and v49 since the a_off_line rules (narrow-fit*-*, H200), which leaves 27
    # six-stage points in each narrow sweep (the bound there: 25).
    sweeps = sorted((Path(__file__).resolve().parents[1] / "results" / "sweeps").glob("*-ring-float16-*.csv"))
    assert len(sweeps) >= 6
    for path in sweeps:
        points: dict[tuple[int, int, int], dict[str, float]] = {}
        for row in csv.DictReader(path.read_text().splitlines()):
            points.setdefault((int(row["M"]), int(row["N"]), int(row["K"])), {})[row["candidate"]] = float(
                row["us"]
            )
        order = "CF" if "-bcol-" in path.name else "CC"
        gains, kept = [], []
        for shape, times in points.items():
            sel = fastgemm.select(*shape, "float16", cc=90, order=order)
            # The narrow sweep timed the rungs transposed only: what auto runs there (one column
            # runs as one row without the flag).
            suffix = " (C^T)" if path.name.startswith("narrow-") else ""
            name = sel.kernel.name
            assert name != "hgemm_v23_split_k_wide", (path.name, shape)
            if name in DEEP_RINGS or name in DEEP_RINGS.values():
                assert sel.flip == bool(suffix) or shape[1] == 1, (path.name, shape, sel)
            if name in DEEP_RINGS:
                ratio = times[DEEP_RINGS[name] + suffix] / times[name + suffix]
                assert ratio >= 0.88, (path.name, shape, name, times)
                gains.append(ratio)
            elif "two shares a tile" in str(sel).split(";")[0]:
                continue  # v22's band between SMs/2 and SMs/1.7 tiles: timed by the b2 sweeps
            elif name in ("hgemm_v22_split_k", "hgemm_v26_split_k_32rows"):
                deep = next(d for d, base in DEEP_RINGS.items() if base == name)
                kept.append(times[name + suffix] / times[deep + suffix])
        least = 25 if path.name.startswith("narrow-") else 30
        assert _faster(gains, least, 1.03 if "-h200" in path.name else 0.99), (path.name, len(gains))
        assert not kept or math.prod(kept) ** (1 / len(kept)) <= 1.02, (path.name, kept)


def test_select_fp16_prefill_long_k_follows_the_sweep():
    # 256-512 rows on 72-96 tiles of 128x128 with K >= 8192 (results/sweeps/prefill-long-k-late-
    # dependents-float16-*: M 256-512 x N 2560-6144 x K 8192-28672, the wgmma rungs by name, H100):
    # v32 where v24 ran one block per tile on 72-96 of the 132 SMs. Where the rule runs v32 it was
    # 1.13x faster than v24 in the geometric mean (0.98x at worst) and within 14% of the fastest
    # rung timed; on 108-128 tiles v32 was 0.70-0.85x of v24, and v28 runs there (the next test).
    if not any(k.name == "hgemm_v32_split_last_round_192" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    points = _csv_sweep_points("prefill-long-k-late-dependents-float16-*.csv")
    assert len(points) >= 170
    v24, v32, gains = "hgemm_v24_wgmma_split_k", "hgemm_v32_split_last_round_192", []
    for shape, times in points.items():
        sel = fastgemm.select(*shape, "float16", cc=90)
        tiles = -(-shape[0] // 128) * -(-shape[1] // 128)
        if 66 < tiles <= 99:  # 132 SMs: more than SMs/2, at most 3 SMs/4 (all M 256-512, K >= 8192)
            assert sel.kernel.name == v32 and "at most 3 SMs/4 tiles" in sel.reason, shape
            assert times[v32] <= 1.14 * min(times.values()), (shape, times)
            gains.append(times[v24] / times[v32])
        elif 99 < tiles <= 128:  # v28's rule below it
            assert sel.kernel.name == "hgemm_v28_split_k_global_narrow", shape
    assert len(gains) >= 60
    assert math.exp(sum(math.log(g) for g in gains) / len(gains)) >= 1.1 and min(gains) >= 0.95


def test_select_fp16_v28_about_one_tile_per_sm_follows_the_sweeps():
    # 256-512 rows over more than 3 SMs/4 and at most SMs tiles of 128x128 with K >= 8192, where
    # v24 ran one block per tile: v28 (its split through global memory) on every such point of
    # results/sweeps/prefill-long-k-late-dependents-* (H100: 40 points, 1.022x over v24 in the
    # geometric mean, 1.00-1.07x) and prefill-v28-one-tile-* (H200: 14 points, 1.027x,
    # 1.02-1.04x; M 256-512 x N 3584-8192 x K 8192 and 18944, v24 and v28 by name).
    if not any(k.name == "hgemm_v28_split_k_global_narrow" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    v24, v28 = "hgemm_v24_wgmma_split_k", "hgemm_v28_split_k_global_narrow"
    for pattern, least, geomean in (
        ("prefill-long-k-late-dependents-float16-*.csv", 40, 1.02),
        ("prefill-v28-one-tile-float16-*.csv", 14, 1.02),
    ):
        gains = []
        for shape, times in _csv_sweep_points(pattern).items():
            tiles = -(-shape[0] // 128) * -(-shape[1] // 128)
            name = fastgemm.select(*shape, "float16", cc=90).kernel.name
            if 99 < tiles <= 132 and 256 <= shape[0] <= 512 and shape[2] >= 8192:
                assert name == v28, (pattern, shape)
                gains.append(times[v24] / times[v28])
                assert gains[-1] >= 0.99, (pattern, shape, times)
            else:
                assert name != v28 or tiles <= 66, (pattern, shape, name)
        assert _faster(gains, least, geomean), (pattern, gains)


def test_select_fp16_v32_short_k_follows_the_sweep():
    # results/sweeps/pad-v32-short-k-float16-* (H200): (M, N) of 1024-7168 where v32's rule takes
    # K = 2048, at K = 768 and 1536, v20, v21 and v32 by name. With 768 <= K < 2048 auto runs v32
    # where its 128x192 tiles leave no last round to split (1.15-1.23x over v20 there, level at
    # 640 tiles), and v20 where v32 would split a last round of 24-60 tiles (mostly 0.78-0.97x).
    # v44 takes most of the points v32 ran since, where its wave model wins, and 4 of the 16 split
    # ones (1024x4608, 1280x3584: pad-v32-short-k-*v44-*).
    if not any(k.name == "hgemm_v32_split_last_round_192" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    v20, v32 = "hgemm_v20_hoisted_beta", "hgemm_v32_split_last_round_192"
    points = _csv_sweep_points("pad-v32-short-k-float16-*.csv")
    assert len(points) >= 40
    gains: list[float] = []
    lost: list[float] = []
    for shape, times in points.items():
        tiles = -(-shape[0] // 128) * -(-shape[1] // 192)
        name = fastgemm.select(*shape, "float16", cc=90).kernel.name
        split = tiles % 132 != 0 and 2 * (tiles % 132) <= 132
        if name == V44:  # v44 since: test_select_half_v44_follows_the_wave_sweeps
            assert _wave_applies(shape[0], shape[1], 192, 128, 132), shape
            continue
        assert name == (v20 if split else v32), (shape, name)
        (lost if split else gains).append(times[v20] / times[v32])
        assert split or gains[-1] > 0.97, (shape, times)
    assert _faster(gains, 6, 1.08), gains  # what v44 leaves to v32: 4 at 1.15-1.17x, 2 of 640 tiles level
    # 1024x4608 and 1280x3584 (last rounds of 60 and 58 tiles) ran 1.08-1.27x on v32 too; the
    # other 12 split points 0.78-0.97x (v44 takes the first two since)
    assert len(lost) >= 12 and math.prod(lost) ** (1 / len(lost)) < 0.95, lost
    # Checked on other (M, N) at K = 1024 and 1792, bf16, on an H100 (pad-v32-short-k-check-*):
    # every point the rule moves at least level with v20.
    check = _csv_sweep_points("pad-v32-short-k-check-bfloat16-*.csv")
    moved = []
    for shape, times in check.items():
        if fastgemm.select(*shape, "bfloat16", cc=90).kernel.name == v32:
            moved.append(times[v20] / times[v32])
            assert moved[-1] > 0.97, (shape, times)
    assert _faster(moved, 16, 1.12), moved  # 18 of the 34 it moved: v44 takes the others since


def test_select_fp16_realign_follows_the_sweeps():
    # results/sweeps/realign-large-* (random problems of 2^31-2^36 multiply-adds whose A's or B's
    # rows are 16-byte aligned and off 128 bytes; each FASTGEMM_DEV_REALIGN mode timed in
    # interleaved rounds, rows only 16-byte aligned read through 128-byte L2 promotion) and
    # realign-shapes-* (squares and model-like shapes): B copied where its rows are only 16-byte
    # aligned from 2048 rows; otherwise A where its rows are only 16-byte aligned from 3072
    # columns with B's at most 32-byte aligned. Against the previous rule (any rows off 128 bytes,
    # B from 3072 rows, A from 3072 columns where B's are off too) on each sweep: no slower in the
    # geometric mean, faster on the shapes (4000^3 in place: 64-byte rows).
    rows_by_file: dict[str, list[dict]] = {}
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    for path in sorted(sweeps.glob("realign-*-float16-*.json")):
        if path.name.startswith(("realign-large", "realign-shapes")):
            rows_by_file[path.name] = json.loads(path.read_text())["results"]
    assert len(rows_by_file) >= 3

    def mode(sel) -> str:
        text = sel.reason
        if "A's and B's rows are off 128 bytes" in text:
            return "AB"
        return "A" if "A's rows are off 128 bytes" in text else "B" if "B's rows are off" in text else "0"

    def previous(r: dict) -> str:
        large = r["M"] * r["N"] * r["K"] >= 1 << 33
        off_a, off_b = r["align_a"] < 128, r["align_b"] < 128
        b = off_b and r["M"] >= 3072 and large
        a = off_a and off_b and r["N"] >= 3072 and large
        return ("A" if a else "") + ("B" if b else "") or "0"

    for name, rows in rows_by_file.items():
        now, before = [], []
        for r in rows:
            m = mode(_select_row(r, "float16"))
            assert m in r, (name, r, m)
            now.append(r["0"] / r[m])
            before.append(r["0"] / r[previous(r)])
        g_now, g_before = math.prod(now) ** (1 / len(now)), math.prod(before) ** (1 / len(before))
        # One point loses more than 5% on the H200: 2928x4304x1000, B copied (1.08x on the H100).
        worst = min(x for x, r in zip(now, rows) if (r["M"], r["N"], r["K"]) != (2928, 4304, 1000))
        assert g_now >= g_before - 0.005 and worst > 0.95 and min(now) > 0.9, (name, g_now, worst)
        if "shapes" in name:
            assert g_now > g_before + 0.05, (name, g_now, g_before)


def test_select_fp16_v43_follows_the_mid_sweeps():
    # results/sweeps/pad-mid-v43-* (H200; random aligned shapes of up to 300 and of up to 72
    # tiles of 128x128, fp16 and bf16; v43 timed beside v21, v24, v33 and auto as it then was).
    # auto now runs v43 on at most SMs/2 such tiles where it ran v21, and where it ran v33 with
    # 768 <= K <= 1536 on at least 12 x 128 x 128 output elements or 768 <= K <= 960 on fewer:
    # per sweep at least 1.15x faster than what auto ran there (geometric mean), no point below
    # 0.95x; every other point keeps the kernel auto ran. The other three sweeps
    # (pad-*mid-v43-check-*: other seeds, a column-major B; auto ran v43's first rules, with K <=
    # 1536 at any size), against the faster of v21 and v33 by name: at least 1.1x, no point
    # below 0.88x; and the edges of the bands, where those sweeps found v33 faster.
    if not any(k.name == "hgemm_v43_cluster_64x128" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    sweeps = sorted((Path(__file__).resolve().parents[1] / "results" / "sweeps").glob("pad-*mid-v43-*.csv"))
    assert len(sweeps) == 6
    v43, moved_all = "hgemm_v43_cluster_64x128", 0
    for path in sweeps:
        dtype = "bfloat16" if "bfloat16" in path.name else "float16"
        check = "-check-" in path.name
        points, ran = _csv_sweep_file(path)
        gains = []
        for shape, times in points.items():
            sel = fastgemm.select(*shape, dtype, cc=90, order="CF" if "-bcol-" in path.name else "CC")
            assert not sel.pad and not sel.flip, (shape, sel)
            if _v45_rule(sel):
                continue
            if sel.kernel.name != ran[shape] and _r41_rule(sel):
                # moved since (pad-*-r41-*, whose worst points were 0.88-0.97x): here v33 at
                # 1664x128x4032 and 904x248x2584 took 1.05x and 1.07x v24's time
                if sel.kernel.name in times:
                    assert times[sel.kernel.name] < 1.1 * times["auto"], (path.name, shape, times)
                continue
            if sel.kernel.name == v43 and check:
                gains.append(min(times["hgemm_v21_narrow_tile"], times["hgemm_v33_split_k_n64"]) / times[v43])
                assert gains[-1] > 0.88, (path.name, shape, times)
            elif sel.kernel.name == v43:
                assert ran[shape] in ("hgemm_v21_narrow_tile", "hgemm_v33_split_k_n64"), (shape, ran[shape])
                gains.append(times["auto"] / times[v43])
                assert gains[-1] > 0.95, (path.name, shape, times)
            elif not check and sel.kernel.name != ran[shape]:  # moved since by the wave rules
                assert sel.kernel.name in (V44, "hgemm_v21_narrow_tile"), (path.name, shape, sel)
                assert WAVE_WHY in sel.reason.split(";")[0], (path.name, shape, sel)
        assert len(gains) >= 12, (path.name, len(gains))
        geo = math.exp(sum(math.log(x) for x in gains) / len(gains))
        assert geo >= (1.1 if check else 1.15), (path.name, geo)
        moved_all += len(gains)
    assert moved_all >= 140  # 150 before the small-output v33 rule (pad-*small-r41-*) took some
    edges = {
        (576, 640, 832): v43,  # 368640 elements, K <= 1536
        (256, 128, 832): v43,  # fewer, K <= 960
        (384, 128, 1472): "hgemm_v33_split_k_n64",  # fewer, 960 < K
        (576, 192, 1280): "hgemm_v33_split_k_n64",
        (768, 192, 1664): "hgemm_v33_split_k_n64",  # 1536 < K
        (1024, 1024, 2048): "hgemm_v33_split_k_n64",
    }
    for shape, name in edges.items():
        assert fastgemm.select(*shape, "float16", cc=90).kernel.name == name, shape


@pytest.mark.parametrize(
    "sweep, why, kernel, least, gain, worst",
    [
        ("pad-small-r41-float16", SMALL_WHY, "hgemm_v33_split_k_n64", 60, 1.1, 0.9),
        ("pad-bcol-small-r41-check-bfloat16", SMALL_WHY, "hgemm_v33_split_k_n64", 45, 1.1, 0.88),
        ("pad-band-r41-float16", BAND_WHY, "hgemm_v28_split_k_global_narrow", 21, 1.04, 0.96),
        ("pad-bcol-band-r41-check-bfloat16", BAND_WHY, "hgemm_v28_split_k_global_narrow", 14, 1.02, 0.96),
        ("pad-mid-tiles-r41-float16", MID_WHY, "hgemm_v43_cluster_64x128", 25, 1.06, 0.95),
        ("pad-band-r41-float16", BAND_LOW_WHY, "hgemm_v28_split_k_global_narrow", 3, 1.04, 0.95),
        ("pad-v45-float16", BAND_LOW_WHY, "hgemm_v28_split_k_global_narrow", 8, 1.04, 0.95),
    ],
)
def test_select_half_r41_rules_follow_their_sweeps(sweep, why, kernel, least, gain, worst):
    # results/sweeps/pad-{,bcol-}{small,band}-r41-* (H200; fp16 row-major B fitted, bf16
    # column-major B held out; random outputs of at most 16, and of 60-112, tiles of 128x128)
    # and pad-mid-tiles-r41-* (fp16, 17-66 tiles): where auto now runs v33 (at most SMs/8 tiles,
    # 1024 <= K <= 4096), v28 (more than SMs/2 and at most SMs/1.15 tiles, 2304 <= K < 4096) or
    # v43 (more than SMs/5 and at most SMs/2 tiles, 2048 <= K <= 3584) in place of what it ran,
    # and v28 again over at most SMs/1.57 tiles with 1200 <= K < 2304 (pad-band-r41-* and
    # pad-v45-*, which timed shapes of the other sweeps again beside more kernels),
    # the geometric mean over the points the sweep's rule moved is at least `gain` and no point
    # falls below `worst`; a point another of these rules moved is no more than 5% slower;
    # every other point keeps the kernel it ran. Points with B's rows off 128 bytes that v45's
    # later rule takes are skipped (not timed here; fewer points per rule since, v28's bands
    # the most: pad-*bunal-v45-* timed v45 against v28 on such points).
    if not any(k.name == kernel for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    (path,) = (Path(__file__).resolve().parents[1] / "results" / "sweeps").glob(f"{sweep}-*.csv")
    times, ran = _csv_sweep_file(path)
    dtype = "bfloat16" if "bfloat16" in path.name else "float16"
    gains = []
    for shape, t in times.items():
        sel = fastgemm.select(*shape, dtype, cc=90, order="CF" if "-bcol-" in path.name else "CC")
        assert not sel.pad and not sel.flip, (shape, sel)
        if _v45_rule(sel):
            continue
        if sel.kernel.name != ran[shape] and sel.kernel.name == kernel and why in sel.reason.split(";")[0]:
            gains.append(t[ran[shape]] / t[kernel])
            assert gains[-1] > worst, (path.name, shape, t)
        elif sel.kernel.name != ran[shape]:  # by another of the r41 rules
            assert _r41_rule(sel), (shape, sel)
            assert t[ran[shape]] / t[sel.kernel.name] > 0.95, (path.name, shape, t)
    assert _faster(gains, least, gain), (len(gains), gains)


@pytest.mark.parametrize(
    "sweep, why, kernel, others, least, gain, worst",
    [
        ("pad-small-r41-final-float16", SMALL_WHY, "hgemm_v33_split_k_n64", ("v43", "v24"), 30, 1.06, 0.85),
        ("pad-band-r41-final-float16", BAND_WHY, "hgemm_v28_split_k_global_narrow", ("v21",), 10, 1.04, 0.97),
        (
            "pad-bcol-mid-tiles-r41-check-bfloat16",
            MID_WHY,
            "hgemm_v43_cluster_64x128",
            ("v24",),
            28,
            1.06,
            0.95,
        ),
        (
            "pad-bcol-band-low-r41-check-bfloat16",
            BAND_LOW_WHY,
            "hgemm_v28_split_k_global_narrow",
            ("v21",),
            18,
            1.03,
            0.93,
        ),
    ],
)
def test_select_half_r41_rules_hold_where_they_ran(sweep, why, kernel, others, least, gain, worst):
    # Sweeps taken with the r41 rules in auto (H200; fresh random points of each rule's family,
    # the last two bf16 with a column-major B): where the rule runs its kernel, that kernel is
    # faster than the one the rule displaced (the faster of `others`) by `gain` in the geometric
    # mean, and no point falls below `worst` (points v45's later rule takes are skipped).
    if not any(k.name == kernel for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    (path,) = (Path(__file__).resolve().parents[1] / "results" / "sweeps").glob(f"{sweep}-*.csv")
    times, ran = _csv_sweep_file(path)
    dtype = "bfloat16" if "bfloat16" in path.name else "float16"
    names = {
        "v21": "hgemm_v21_narrow_tile",
        "v24": "hgemm_v24_wgmma_split_k",
        "v43": "hgemm_v43_cluster_64x128",
    }
    gains = []
    for shape, t in times.items():
        sel = fastgemm.select(*shape, dtype, cc=90, order="CF" if "-bcol-" in path.name else "CC")
        if _v45_rule(sel):
            continue
        if sel.kernel.name != ran[shape]:  # taken before the later r41 rules: moved since by one
            assert _r41_rule(sel) and "final" in path.name, (shape, sel)
            continue
        if sel.kernel.name == kernel and why in sel.reason.split(";")[0]:
            gains.append(min(t[names[o]] for o in others) / t[kernel])
            assert gains[-1] > worst, (path.name, shape, t)
    assert _faster(gains, least, gain), (len(gains), gains)


def test_select_half_v45_follows_its_sweeps():
    # results/sweeps/pad-*bunal-v45-* (H200; random outputs of 30-420 tiles of 128x128 with K of
    # 1024-8192 and B's rows 16- but not 128-byte aligned; v20, v21, v24, v28, v32, v43, v44 and
    # v45 by name beside auto as it was before v45's rule): where auto now runs v45, at least 1.1x
    # faster than what auto ran there (geometric mean per sweep, the copy of B to 128-byte rows
    # included where auto made it), no point below 0.9x; the fitted sweeps (fp16 row-major B,
    # bf16 column-major B) and the held-out checks (-check-: other seeds, fp16 both layouts) alike.
    # And pad-*mid-v45-* (random shapes as random_shapes draws them): v45 takes no point whose
    # B rows are on 128 bytes.
    v45 = "hgemm_v45_cluster_128x128"
    if not any(k.name == v45 for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    paths = sorted(sweeps.glob("pad-*bunal-v45-*.csv"))
    assert len(paths) == 4
    for path in paths:
        dtype = "bfloat16" if "bfloat16" in path.name else "float16"
        times, ran = _csv_sweep_file(path)
        gains = []
        for shape, t in times.items():
            sel = fastgemm.select(*shape, dtype, cc=90, order="CF" if "-bcol-" in path.name else "CC")
            if sel.kernel.name == v45:
                assert _v45_rule(sel) and "copied first" not in sel.reason, (shape, sel)
                gains.append(t["auto"] / t[v45])
                assert gains[-1] > 0.9, (path.name, shape, t)
            elif sel.kernel.name == V46:  # v46's later rule (not timed here)
                assert _v45_rule(sel), (shape, sel)
            else:
                assert sel.kernel.name == ran[shape], (path.name, shape, sel)
        assert _faster(gains, 11, 1.1), (path.name, len(gains), gains)
    for path in sorted(sweeps.glob("pad-*mid-v45-*.csv")):
        dtype = "bfloat16" if "bfloat16" in path.name else "float16"
        times, _ = _csv_sweep_file(path)
        for (m, n, k), t in times.items():
            sel = fastgemm.select(m, n, k, dtype, cc=90, order="CF" if "-bcol-" in path.name else "CC")
            b_pitch = 2 * (k if "-bcol-" in path.name else n)
            assert (sel.kernel.name == v45) <= (b_pitch % 128 != 0), (path.name, (m, n, k), sel)
            if sel.kernel.name == v45:
                assert t["auto"] / t[v45] > 0.95, (path.name, (m, n, k), t)
    # B's rows on 128 bytes, the rows of 256-row cluster tiles padded past 6%, one round of
    # clusters exceeded, too few clusters, or K below 1088: another kernel.
    assert fastgemm.select(3328, 592, 2176, "float16", cc=90).kernel.name == v45
    assert fastgemm.select(3328, 640, 2176, "float16", cc=90).kernel.name != v45  # B on 128 bytes
    assert fastgemm.select(3328, 592, 2176, "float16", cc=90, order="CF").kernel.name != v45
    assert fastgemm.select(640, 1752, 2176, "float16", cc=90).kernel.name != v45  # 5 row tiles
    assert fastgemm.select(4160, 4168, 2176, "float16", cc=90).kernel.name != v45  # 17 x 33 clusters
    assert fastgemm.select(1024, 1000, 2176, "float16", cc=90).kernel.name != v45  # 32 clusters
    assert fastgemm.select(3328, 592, 1024, "float16", cc=90).kernel.name != v45  # K < 1088
    assert fastgemm.select(3328, 592, 8200, "float16", cc=90).kernel.name != v45  # K > 8192
    # Where decide() would copy B to 128-byte rows (2^33 multiply-adds, 2048 rows), v45 reads it
    # in place: pad-bcol-bunal-v45-* timed it 1.09-1.29x over the copy and v24 on such points.
    sel = fastgemm.select(3880, 464, 5336, "bfloat16", cc=90, order="CF")
    assert sel.kernel.name == v45 and "copied first" not in sel.reason, sel


def test_select_half_v46_follows_its_sweeps():
    # results/sweeps/pad-*bunal-wide-v46-* (H200; random outputs of 66-800 tiles of 128x256, K of
    # 1024-8192, B's rows off 128 bytes; v20, v21, v31, v32, v44, v45, v46 and v15 by name beside
    # auto as it was before v46's rule): where auto now runs v46 (only where v20 ran, on a B only
    # 16-byte aligned that is not copied to 128-byte rows), no point below 0.99x of what auto
    # ran and at least 1.08x in the geometric mean per sweep; where such a B is copied, v20 runs
    # on the copy as before; every other point keeps its kernel. And v46 by name against v20:
    # at least 1.1x over the points whose B rows are only 16-byte aligned on an even count of
    # 128-row tiles, and no faster where the rows are 32- or 64-byte aligned.
    if not any(k.name == V46 for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    v20 = "hgemm_v20_hoisted_beta"
    paths = sorted(
        (Path(__file__).resolve().parents[1] / "results" / "sweeps").glob("pad-*bunal-wide-v46-*.csv")
    )
    assert len(paths) == 3
    by_align: dict[bool, list[float]] = {True: [], False: []}
    for path in paths:
        dtype = "bfloat16" if "bfloat16" in path.name else "float16"
        bcol = "-bcol-" in path.name
        times, ran = _csv_sweep_file(path)
        gains = []
        for (m, n, k), t in times.items():
            sel = fastgemm.select(m, n, k, dtype, cc=90, order="CF" if bcol else "CC")
            if sel.kernel.name == V46:
                assert _v45_rule(sel) and ran[(m, n, k)] == v20, ((m, n, k), sel)
                gains.append(t["auto"] / t[V46])
                assert gains[-1] > 0.99, (path.name, (m, n, k), t)
            else:
                assert sel.kernel.name == ran[(m, n, k)], (path.name, (m, n, k), sel)
            pitch = 2 * (k if bcol else n)
            if -(-m // 128) % 2 == 0:
                by_align[pitch % 32 != 0].append(t[v20] / t[V46])
        assert _faster(gains, 3, 1.08), (path.name, gains)
    assert _faster(by_align[True], 40, 1.1), by_align[True]
    assert math.exp(sum(math.log(x) for x in by_align[False]) / len(by_align[False])) < 1.02
    assert fastgemm.select(2224, 1656, 1616, "float16", cc=90).kernel.name == V46
    assert fastgemm.select(2224, 1648, 1616, "float16", cc=90).kernel.name != V46  # 32-byte rows
    assert fastgemm.select(2224, 1664, 1616, "float16", cc=90).kernel.name != V46  # 128-byte rows
    assert fastgemm.select(1472, 2696, 8256, "float16", cc=90).kernel.name != V46  # K > 8192
    sel = fastgemm.select(3640, 4576, 3816, "bfloat16", cc=90, order="CF")  # 2^33, 2048 rows: B copied
    assert sel.kernel.name == v20 and "copied first" in sel.reason, sel


def test_select_half_v47_follows_its_sweeps():
    # The fit, results/sweeps/rows-sk-a-* and rows-bcol-sk-a-* (H200, fp16, 1 and 16 rows, N
    # 2048-37888 x K 2048-14336, B row- and column-major; v22, v40 and v47 by name beside auto as
    # it was before v47's rules): where auto now runs v47 (265-356 tiles of 16x64 on 132 SMs),
    # no point below 0.99x of what auto ran (v22) and at least 1.1x in the geometric mean; every
    # other point keeps its kernel. The held-out check, *-sk-check-* (auto running these rules:
    # 1-16 rows on other N and K in fp16, bf16 with a column-major B, and 1-16 columns run
    # transposed): where auto runs v47, no point below 0.99x of v22 by name and at least 1.08x in
    # the geometric mean per sweep.
    if not any(k.name == V47 for k in fastgemm.kernels("float16")):
        pytest.skip("no v47 in this build")
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    fitted = sorted(sweeps.glob("rows-*sk-a-*.csv"))
    checks = sorted(sweeps.glob("*-sk-check-*.csv"))
    assert len(fitted) == 2 and len(checks) == 3
    for path in fitted + checks:
        dtype = "bfloat16" if "bfloat16" in path.name else "float16"
        order = "CF" if "-bcol-" in path.name else "CC"
        narrow = path.name.startswith("narrow-")
        v22, v47 = ("hgemm_v22_split_k (C^T)", V47 + " (C^T)") if narrow else ("hgemm_v22_split_k", V47)
        times, ran = _csv_sweep_file(path)
        gains = []
        for shape, t in times.items():
            sel = fastgemm.select(*shape, dtype, cc=90, order=order)
            if path in checks:
                assert sel.kernel.name == ran[shape], (path.name, shape, sel)
            if sel.kernel.name == V47:
                gains.append((t["auto"] if path in fitted else t[v22]) / t[v47])
                assert gains[-1] > 0.99, (path.name, shape, t)
            elif path in fitted:
                assert sel.kernel.name == ran[shape], (path.name, shape, sel)
        assert _faster(gains, 12, 1.1 if path in fitted else 1.08), (path.name, gains)
    # The band: more than 2 x SMs and at most 2.7 x SMs tiles, 2048 <= K <= 14336, 16 rows.
    assert fastgemm.select(16, 16896, 4096, "float16", cc=90).kernel.name != V47  # 264 tiles
    assert fastgemm.select(16, 22784, 4096, "float16", cc=90).kernel.name == V47  # 356 tiles
    assert fastgemm.select(16, 22848, 4096, "float16", cc=90).kernel.name != V47  # 357 tiles
    assert fastgemm.select(1, 18944, 1024, "float16", cc=90).kernel.name != V47
    assert fastgemm.select(1, 18944, 16384, "float16", cc=90).kernel.name != V47
    assert fastgemm.select(17, 18944, 4096, "float16", cc=90).kernel.name != V47
    sel = fastgemm.select(18944, 8, 3584, "bfloat16", cc=90)
    assert sel.kernel.name == V47 and sel.flip, sel
    assert fastgemm.select(1, 18944, 3584, "float16", cc=80).kernel.name != V47  # measured on sm_90


def test_select_half_v48_follows_its_sweeps():
    # results/sweeps/rows-sk32-a-* (the fit: H200, fp16, 17, 24 and 32 rows, N 8448-28672 x K
    # 2048-14336; v26, v41 and v48 by name beside auto as it was before v48's rules, running v26
    # or v41), rows-bcol-sk32-check-* (bf16, 20 and 28 rows, a column-major B) and
    # narrow-sk32-check-* (24 and 32 columns, run transposed), both held out and taken before the
    # rules too: where auto now runs v48 (265-396 tiles of 32x64 on 132 SMs), no point below
    # 1.04x of v26 by name, at least 1.15x in the geometric mean per sweep; every other point
    # keeps the kernel auto ran.
    if not any(k.name == V48 for k in fastgemm.kernels("float16")):
        pytest.skip("no v48 in this build")
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    paths = sorted(sweeps.glob("*-sk32-*.csv"))
    assert len(paths) == 3
    for path in paths:
        dtype = "bfloat16" if "bfloat16" in path.name else "float16"
        order = "CF" if "-bcol-" in path.name else "CC"
        narrow = path.name.startswith("narrow-")
        v26, v48 = (
            ("hgemm_v26_split_k_32rows (C^T)", V48 + " (C^T)")
            if narrow
            else ("hgemm_v26_split_k_32rows", V48)
        )
        times, ran = _csv_sweep_file(path)
        gains = []
        for shape, t in times.items():
            sel = fastgemm.select(*shape, dtype, cc=90, order=order)
            if sel.kernel.name == V48:
                gains.append(t[v26] / t[v48])
                assert gains[-1] > 1.04, (path.name, shape, t)
            else:
                assert sel.kernel.name == ran[shape], (path.name, shape, sel)
        assert _faster(gains, 12, 1.15), (path.name, gains)
    assert fastgemm.select(24, 16896, 4096, "float16", cc=90).kernel.name != V48  # 264 tiles
    assert fastgemm.select(32, 25344, 4096, "float16", cc=90).kernel.name == V48  # 396 tiles
    assert fastgemm.select(32, 25408, 4096, "float16", cc=90).kernel.name != V48  # 397 tiles
    assert fastgemm.select(16, 17408, 4096, "float16", cc=90).kernel.name == V47  # 16 rows: v47
    assert fastgemm.select(33, 17408, 4096, "float16", cc=90).kernel.name != V48
    assert fastgemm.select(24, 18944, 1024, "float16", cc=90).kernel.name != V48
    sel = fastgemm.select(17408, 24, 3072, "float16", cc=90)
    assert sel.kernel.name == V48 and sel.flip, sel


def test_select_half_v44_follows_the_wave_sweeps():
    # results/sweeps/pad-*mid-v44-{,b,c,d}* (H200; random aligned shapes of up to 300 tiles of
    # 128x128, fp16, bf16 and a column-major B; v20, v21, v32, v43 and v44 by name beside auto as
    # it then was): where auto now runs v44, or v21 by the wave rules, in place of what it ran,
    # every point is faster (1.04-1.52x) and the geometric mean at least 1.15x. On v32's short-K
    # family (pad-v32-short-k-v44-*, the shapes of pad-v32-short-k-* that v44 now takes), v44
    # is level with the faster of v20 and v32 (at least 1.03x in the geometric mean, no point
    # below 0.97x); on the held-out check sweeps (pad-*mid-v44-check-*, other seeds, up to 400
    # tiles, auto running these rules), where auto runs v44 it beats the faster of v20 and v32
    # by 1.05x, no point below 0.94x.
    if not any(k.name == V44 for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    v21, v20, v32 = "hgemm_v21_narrow_tile", "hgemm_v20_hoisted_beta", "hgemm_v32_split_last_round_192"
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"

    def selection(path: Path, shape: tuple[int, int, int]) -> fastgemm.Selection:
        dtype = "bfloat16" if "bfloat16" in path.name else "float16"
        return fastgemm.select(*shape, dtype, cc=90, order="CF" if "-bcol-" in path.name else "CC")

    def select(path: Path, shape: tuple[int, int, int]) -> str:
        return selection(path, shape).kernel.name

    fitted = [p for p in sorted(sweeps.glob("pad-*mid-v44-*.csv")) if "-check-" not in p.name]
    assert len(fitted) == 4
    gains: list[float] = []
    for path in fitted:
        times, ran = _csv_sweep_file(path)
        for shape, t in times.items():
            name = select(path, shape)
            if _v45_rule(selection(path, shape)):
                continue
            if name != ran[shape] and _r41_rule(selection(path, shape)):
                continue  # moved since by the rules of pad-*small-r41-* / pad-*band-r41-*
            if name != ran[shape]:
                assert name in (V44, v21) and _wave_applies(
                    shape[0], shape[1], *((192, 128) if name == V44 else (128, 128)), 132
                ), (path.name, shape, name)
                gains.append(t["auto"] / t[name])
                assert gains[-1] > 1.0, (path.name, shape, t)
    assert _faster(gains, 40, 1.15), gains
    level: list[float] = []
    for path in sorted(sweeps.glob("pad-v32-short-k-*v44-*.csv")):
        times, _ = _csv_sweep_file(path)
        for shape, t in times.items():
            if select(path, shape) == V44:
                level.append(min(t[v20], t[v32]) / t[V44])
                assert level[-1] > 0.97, (path.name, shape, t)
    assert _faster(level, 40, 1.03), level
    for path in sorted(sweeps.glob("pad-*mid-v44-check-*.csv")):
        times, ran = _csv_sweep_file(path)
        held: list[float] = []
        for shape, t in times.items():
            if _r41_rule(selection(path, shape)) or _v45_rule(selection(path, shape)):
                continue  # moved since (pad-*small-r41-* / pad-*band-r41-*, pad-*bunal-v45-*)
            assert select(path, shape) == ran[shape], (path.name, shape)
            if ran[shape] == V44:
                held.append(min(t[v20], t[v32]) / t[V44])
                assert held[-1] > 0.94, (path.name, shape, t)
        assert _faster(held, 15, 1.05), (path.name, held)
    # Suite-sized problems keep v20: one round of 128x256 tiles, or many rounds.
    for shape in ((2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (2048, 6144, 4096)):
        assert fastgemm.select(*shape, "float16", cc=90).kernel.name == v20, shape
    assert fastgemm.select(1152, 2048, 1664, "float16", cc=90).kernel.name == V44
    assert fastgemm.select(2368, 1600, 384, "float16", cc=90).kernel.name == v21


def test_select_fp16_128x64_tiles_match_the_sweep():
    # v33 (v24's split on 128x64 tiles) where the tiles number at most the SMs: 112-128 rows with
    # K >= 768, more rows with 768 <= K <= 2048, at most 8 tiles with K >= 8192. Fitted to
    # results/sweeps/*-v33*-float16-* (H100, 132 SMs; v33 beside v20, v21, v24, v27 and v28 by
    # name, and auto as it then was): where auto now runs v33 it was the fastest kernel timed, or
    # within 1% of it; v33 was more than 3% faster than auto's pick on a few shapes it does not
    # take (M = 96-100 and 240-256 with K = 4096-12288, 2048 x 128-192 x 4096), where it was up to
    # 1.6x slower on their neighbours (M = 96-100 x 5120 x 8192, 136-224 rows).
    if not any(k.name == "hgemm_v33_split_k_n64" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    points = _csv_sweep_points("*-v33*-float16-*.csv")
    assert len(points) >= 190
    v33 = "hgemm_v33_split_k_n64"
    on_v33 = 0
    for shape, times in points.items():
        name = fastgemm.select(*shape, "float16", cc=90).kernel.name
        rows = dispatch.alignment_of(256, 2 * shape[1], 2 * shape[2], cap=dispatch.PLAN_ALIGN_CAP)
        assert name == _first_runnable_rule("float16", 90, *shape, rows)
        if name == v33:
            on_v33 += 1
            # (the rule fitted later to hopper-random-* for 2048 < K <= 4096: within 3% here)
            later = "2048 < K <= 4096" in fastgemm.select(*shape, "float16", cc=90).reason
            assert times[v33] <= (1.03 if later else 1.01) * min(times.values()), (shape, times)
    assert on_v33 >= 45
    # Rows not on 128-byte TMA box rows (pitches of 2000 and 2016 bytes: partial boxes along K and
    # N) cost v33 more L2 traffic: 1000^3 took 15.8 us against 10.3 at 1024^3 (ncu, H100), v21
    # 13.2 and 11.6; back to back 1000^3 13.4 against v21's 9.9, 1008^3 9.0 against 8.1.
    # (With K = size, v43 now runs both: test_select_fp16_v43_follows_the_mid_sweeps.)
    for size in (1000, 1008):
        sel = fastgemm.select(size, size, 2000, "float16", cc=90)
        assert (
            sel.kernel.name != v33 and "v33_split_k_n64 is for operands whose rows are 128-byte" in sel.reason
        )
    assert fastgemm.select(1000, 1000, 2000, "float16", cc=90, alignment=128).kernel.name == v33
    # The default alignment reads each operand's pitch in its order: a column-major A of 1000
    # rows has 2000-byte rows, whatever K is.
    assert fastgemm.select(1000, 1024, 2048, "float16", cc=90).kernel.name == v33
    assert fastgemm.select(1000, 1024, 2048, "float16", cc=90, order="FC").kernel.name != v33


def test_select_fp16_v33_k_up_to_4096_follows_the_random_sweeps():
    # v33 for outputs of more than 128 rows and columns over at most SMs tiles of 128x64 with
    # 2048 < K <= 4096 (rows on 128 bytes), fitted to results/sweeps/hopper-random-* (random
    # aligned shapes, every wgmma rung timed): against v24, which auto ran there, 1.11x faster
    # over 34 points (geometric mean), 14% slower at worst.
    if not any(k.name == "hgemm_v33_split_k_n64" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    v24, v33, gains = "hgemm_v24_wgmma_split_k", "hgemm_v33_split_k_n64", []
    for r in _sweep_rows("hopper-random*-float16-*.json"):
        sel = _select_row(r, "float16")
        if sel.kernel.name == v33 and "2048 < K <= 4096" in sel.reason:
            assert 2048 < r["K"] <= 4096 and min(r["M"], r["N"]) > 128, r
            gains.append(r[v24] / r[v33])
            assert gains[-1] > 0.85, r
    assert _faster(gains, 30, 1.1)


def test_select_fp16_unaligned_b_matches_the_sweep():
    # v34 (v24 reading an under-aligned B in place) against auto's padded path as it was, on
    # 1-4095 rows x 10 (N, K) with odd extents, B row-major and column-major (results/sweeps/
    # pad-v34-*float16-*, H100). Where auto now runs v34 it was at most 3% slower than the padded
    # path it replaces (1.0-1.8x faster on most rows of a row-major B, and 4-29x faster than v01,
    # which ran the problems too small for the padded path).
    if not any(k.name == "hgemm_v34_split_k_unaligned" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    v34, on_v34, faster = "hgemm_v34_split_k_unaligned", 0, 0
    for path in sorted(sweeps.glob("pad-v34-*float16-*.csv")):
        order = "CF" if "-bcol-" in path.name else "CC"
        points: dict[tuple[int, int, int], dict[str, float]] = {}
        for row in csv.DictReader(path.read_text().splitlines()):
            points.setdefault((int(row["M"]), int(row["N"]), int(row["K"])), {})[row["candidate"]] = float(
                row["us"]
            )
        assert len(points) >= 100
        for shape, times in points.items():
            if fastgemm.select(*shape, "float16", cc=90, order=order).kernel.name == v34:
                on_v34 += 1
                assert times[v34] <= 1.03 * times["auto"], (order, shape, times)
                faster += times[v34] < times["auto"]
    # v37 / v38 (their own sweeps, below) take the smallest of these outputs since, and v37 the
    # rows of a decode with K >= 512 (results/sweeps/pad-unal-rows-v37-*).
    assert on_v34 >= 45 and faster >= 0.9 * on_v34


@pytest.mark.parametrize("dtype", HALF)
def test_select_stream_k(dtype):
    # Stream-K and the split last round (results/sweeps/prefill-*): v30 where v20's one wide tile
    # per block leaves many of the 132 SMs idle for a long K (84-112 tiles, K >= 12288); v32 where
    # 128x192 tiles fill the rounds better than 128x256 ones (96 wide tiles but 128 narrow ones
    # for 512 x 6144; 192 wide, 256 narrow for 1024 x 6144); v31 where v20's last round of wide
    # tiles holds at most half the SMs (160 tiles for 1024 x 5120, 136 for 8704 x 512, 1728 for
    # 4096 x 13824); v20 itself for a round of tiles that fills the SMs, a short K, or a last
    # round of more than half the SMs.
    if not any(k.name == "hgemm_v32_split_last_round_192" for k in fastgemm.kernels(dtype)):
        pytest.skip("no sm_90 code in this build")
    expect = {
        (768, 4096, 14336): "hgemm_v30_stream_k_wide",  # 96 wide tiles
        (1024, 3584, 18944): "hgemm_v30_stream_k_wide",  # 112
        (1024, 4096, 14336): "hgemm_v20_hoisted_beta",  # 128: a full round
        (512, 6144, 4096): "hgemm_v32_split_last_round_192",  # 96 wide, 128 narrow
        (1024, 6144, 4096): "hgemm_v32_split_last_round_192",  # 192 wide, 256 narrow
        (1024, 6144, 2048): "hgemm_v32_split_last_round_192",
        (1024, 5120, 5120): "hgemm_v31_split_last_round",  # 160 wide: a last round of 28
        (8704, 512, 8192): "hgemm_v31_split_last_round",  # 136: 4
        (4096, 13824, 5120): "hgemm_v31_split_last_round",  # 1728: 12
        (1024, 5120, 2048): V44,  # 160, K short of 3072: v44 (240 of 192x128, two rounds)
        (1536, 5120, 5120): "hgemm_v20_hoisted_beta",  # 240: a last round of 108
        (2048, 6144, 4096): "hgemm_v20_hoisted_beta",  # 384: 120
        (1536, 2816, 8192): "hgemm_v20_hoisted_beta",  # 132: whole rounds
        # Outputs of few columns keep v21.
        (10000, 128, 16384): "hgemm_v21_narrow_tile",
    }
    for (m, n, k), name in expect.items():
        sel = fastgemm.select(m, n, k, dtype, cc=HOPPER_CC)
        assert sel.kernel.name == name, ((m, n, k), sel)
    why = fastgemm.select(1536, 5120, 5120, dtype, cc=HOPPER_CC).reason
    assert (
        "hgemm_v31_split_last_round is for outputs of more than one round of 132 tiles of 128x256 "
        "whose last round holds at most 66; this one has 240 (a last round of 108)" in why
    )


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("cc", [80, 90])
def test_select_small_output_takes_smaller_tiles(dtype, cc):
    # 128x256 tiles leave most SMs idle below ~2M outputs: the 128x128 rung is preferred there.
    small = fastgemm.select(1024, 1024, 1024, dtype, cc=cc)
    assert small.kernel.name == _best_half(dtype, cc, 1024, 1024, 1024)
    if small.kernel.name == "hgemm_v07_multistage":
        assert "hgemm_v09_raster is for outputs of at least" in small.reason
    wide = fastgemm.select(2048, 2048, 64, dtype, cc=cc)
    assert wide.kernel.name == _best_half(dtype, cc, 2048, 2048, 64)
    if cc == 80:
        assert (small.kernel.name, wide.kernel.name) == ("hgemm_v07_multistage", "hgemm_v09_raster")


def test_select_respects_shared_memory_per_block():
    v09 = next(k for k in fastgemm.kernels("float16") if k.name == "hgemm_v09_raster")
    assert v09.smem_bytes > dispatch.SMEM_PER_BLOCK[86]
    problem = dispatch.check_runnable(v09, 86, 16)
    assert problem is not None and "shared memory" in problem and "8.6" in problem
    assert dispatch.check_runnable(v09, 90, 16) is None


@pytest.mark.parametrize("cc", [c for c in CCS if c >= 80])
def test_select_bfloat16(cc):
    sel = fastgemm.select(4096, 4096, 4096, "bfloat16", cc=cc)
    assert sel.kernel.name == _best_half("bfloat16", cc) and sel.kernel.dtype == "bfloat16"
    assert not sel.pad


@pytest.mark.parametrize("shape", [(1024, 1024, 1024), (64, 64, 64), (4096, 4096, 4096), (0, 0, 0)])
def test_select_bfloat16_sm75(shape):
    # Turing has fp16 tensor cores only: no bf16 kernel runs there, whatever the problem.
    with pytest.raises(RuntimeError, match="no bfloat16 kernel runs on compute capability 7.5") as info:
        fastgemm.select(*shape, "bfloat16", cc=75)
    assert "needs compute capability 8.0" in str(info.value)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("cc", [80, 86, 89, 90])
def test_select_half_unaligned_large_pads(dtype, cc):
    sel = fastgemm.select(4096, 4096, 4096, dtype, cc=cc, alignment=2)
    # The fastest rung for the GPU, run on aligned copies (rows 128 bytes apart). The rules that
    # read the rows' alignment (row_align, b_off_line) read the operands as given, 2 bytes: none
    # of them runs, as none would on 4096^3 with rows on 128 bytes.
    assert sel.kernel.name == _best_half(dtype, cc, alignment=128) and sel.kernel.dtype == dtype
    assert sel.pad is True
    assert "aligned temporaries" in sel.reason and "2-byte" in sel.reason


def test_select_float16_unaligned_large_pads_sm75():
    sel = fastgemm.select(4096, 4096, 4096, "float16", cc=75, alignment=2)
    assert sel.kernel.name == "hgemm_v05_reg_prefetch" and sel.pad is True
    assert "aligned temporaries" in sel.reason


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("cc", [80, 86, 89, 90])
def test_select_half_unaligned_small(dtype, cc):
    sel = fastgemm.select(64, 64, 64, dtype, cc=cc, alignment=2)
    if cc == HOPPER_CC:  # a short K read in place (v39); a longer one, v34's 2-byte aligned rows
        assert sel.kernel.name == _first_runnable_rule(dtype, cc, 64, 64, 64, 2)
        assert sel.kernel.name == "hgemm_v39_unaligned_row_store"
        longer = fastgemm.select(64, 64, 200, dtype, cc=cc, alignment=2)
        assert longer.kernel.name == "hgemm_v34_split_k_unaligned" and not longer.pad
    else:
        assert sel.kernel.name == "hgemm_v01_mma"
    assert sel.kernel.dtype == dtype
    assert sel.pad is False
    assert "2-byte alignment" in sel.reason and "aligned temporaries" not in sel.reason


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "shape, order, v01",
    [
        ((7, 40, 16384), "FC", False),  # deep K: v01 takes ~5 us per 32 of K
        ((8, 8, 1001), "CC", False),
        ((451, 2868, 16), "CF", False),  # a short K on at least 2 rows: v39
        ((15, 3977, 8), "CF", False),
        ((30, 192, 33), "FC", False),
        ((1, 3977, 8), "CF", True),  # one k-step on one row: v01 is faster
        ((1, 192, 31), "FC", True),
        ((1, 192, 33), "FC", False),
    ],
)
def test_select_half_unaligned_below_pad_threshold_on_hopper(dtype, shape, order, v01):
    # Below PAD_MIN_MACS, where only v01 runs the operands in place, sm_90 pads them instead unless
    # v01 is faster (one 32-deep k-step, at most 2^16 outputs), or v37 / v38 read them in place
    # (few tiles, K >= 256), or v39 does (K <= 128, at least 2 rows).
    assert shape[0] * shape[1] * shape[2] < dispatch.PAD_MIN_MACS
    sel = fastgemm.select(*shape, dtype, cc=HOPPER_CC, order=order)
    if v01:
        assert sel.kernel.name == "hgemm_v01_mma" and not sel.pad
    elif shape[2] <= 128 and shape[0] >= 2:
        assert sel.kernel.name == "hgemm_v39_unaligned_row_store" and not sel.pad
    elif shape[2] >= 256:
        assert sel.kernel.name == "hgemm_v37_split_k_reduce_unaligned" and not sel.pad
    else:
        assert sel.pad and sel.kernel.name != "hgemm_v01_mma"
        assert "v01 would run them in place" in sel.reason
    # Ampere was not measured: v01 as before.
    assert fastgemm.select(*shape, dtype, cc=80, order=order).kernel.name in (
        "hgemm_v01_mma",
        "hgemm_v07_multistage",
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_select_v34_gives_way_to_padding_on_deep_k_over_few_tiles(dtype):
    # An under-aligned row-major B: v34 reads it in place, except from K = 7168 on at most 8 tiles
    # of 128x128, where the padded path's split kernels were faster (plan.h, kV34PadK); where they
    # apply (few tiles), v37 / v38 read it in place first.
    for shape in [(10, 13, 30036), (1, 18, 18627), (21, 110, 28242), (10, 13, 7167)]:
        sel = fastgemm.select(*shape, dtype, cc=HOPPER_CC, order="CC")
        assert not sel.pad and sel.kernel.name in (
            "hgemm_v37_split_k_reduce_unaligned",
            "hgemm_v38_split_k_reduce_wide_unaligned",
        ), (shape, sel)
        sel = fastgemm.select(*shape, dtype, cc=HOPPER_CC, order="CC", alignment=16)
        assert not sel.pad
    for shape in [(100, 1001, 7168), (250, 510, 9001)]:  # too many tiles for v37 / v38
        sel = fastgemm.select(*shape, dtype, cc=HOPPER_CC, order="CC")
        assert sel.pad and sel.kernel.name != "hgemm_v34_split_k_unaligned", (shape, sel)
    for shape in [(1, 2786, 8306), (127, 4099, 2053), (100, 1025, 7168)]:
        sel = fastgemm.select(*shape, dtype, cc=HOPPER_CC, order="CC")
        assert sel.kernel.name == "hgemm_v34_split_k_unaligned" and not sel.pad, (shape, sel)


def test_select_float16_unaligned_small_sm75():
    sel = fastgemm.select(64, 64, 64, "float16", cc=75, alignment=2)
    assert sel.kernel.name == "hgemm_v01_mma" and sel.pad is False


@pytest.mark.parametrize("shape", [(128, 128, 127), (128, 130, 128), (64, 64, 6)])
def test_select_half_unaligned_shapes(shape):
    # Default alignment: odd K or N leave 2- to 8-byte aligned rows; small problems take v01.
    sel = fastgemm.select(*shape, "float16", cc=80)
    assert sel.kernel.name == "hgemm_v01_mma" and not sel.pad


def test_select_pad_threshold():
    # pad applies from PAD_MIN_MACS multiply-adds on, for every dtype.
    n = round(dispatch.PAD_MIN_MACS ** (1 / 3))
    assert n**3 == dispatch.PAD_MIN_MACS
    # (fp32 from sm_80 runs its cp.async rungs on 4-byte operands in place: sm_75 pads for v08)
    for dtype, cc, align in (("float32", 75, 4), ("float16", 80, 2), ("bfloat16", 80, 2)):
        assert fastgemm.select(n, n, n, dtype, cc=cc, alignment=align).pad, dtype
        assert not fastgemm.select(n, n, n - 1, dtype, cc=cc, alignment=align).pad, dtype


def test_select_float32_unaligned_large_pads():
    # The CUDA-core rungs run 4-byte operands in place, but on sm_90 a problem of at least
    # kF32PadIntensity multiply-adds per element copied runs grown and aligned.
    big = fastgemm.select(4096, 4096, 4096, "float32", cc=90, alignment=4)
    assert big.kernel.name == "sgemm_v17_multistage" and big.pad is True
    assert "zero-filled to 4096x4096x4096, C through an aligned work buffer" in big.reason
    assert "1024 multiply-adds per element copied >= 500" in big.reason
    odd = fastgemm.select(4095, 4097, 4099, "float32", cc=90)
    assert odd.pad is True and "zero-filled to 4096x4100x4112" in odd.reason
    # Below that intensity, and before sm_90 (not measured there), in place.
    for shape in [(1001, 999, 1003), (127, 4099, 2053), (33, 12345, 777)]:
        sel = fastgemm.select(*shape, "float32", cc=90)
        assert sel.pad is False and "with 4-byte alignment" in sel.reason, shape
    assert fastgemm.select(4096, 4096, 4096, "float32", cc=80, alignment=4).pad is False
    small = fastgemm.select(64, 64, 64, "float32", cc=90, alignment=4)
    assert small.kernel.alignment == 4 and small.pad is False
    # So does the decode rung (v19), whose B is the large operand.
    decode = fastgemm.select(8, 4097, 4099, "float32", cc=90)
    assert decode.kernel.name == "sgemm_v19_split_k_ring" and decode.pad is False
    gemv = fastgemm.select(1, 4097, 4099, "float32", cc=90, order="CF")  # x @ W.T
    assert gemv.kernel.name == "sgemm_v19_split_k_ring" and gemv.pad is False


def test_selection_pad_defaults_false():
    k = fastgemm.kernels("float32")[0]
    assert fastgemm.Selection(k, "why").pad is False


@pytest.mark.parametrize("order", ["", "C", "CCC", "cf", "RC", 3])
def test_select_order_checked(order):
    with pytest.raises(ValueError, match="order must be two of 'C' \\(row-major\\) and 'F'"):
        fastgemm.select(8, 8, 8, "float32", cc=90, order=str(order))


def test_select_order_names_b_layout():
    # A rule may be for one layout of B: 17-32 rows over many tiles take v19 with B = W^T
    # (column-major) and v12 with a row-major B, and the reason says why v19 was passed over; a
    # flip rule reads the transposed problem's B (A^T).
    col = fastgemm.select(24, 6144, 4096, "float32", cc=90, order="CF")
    row = fastgemm.select(24, 6144, 4096, "float32", cc=90)
    assert col.kernel.name == "sgemm_v19_split_k_ring" and "with a column-major B" in col.reason
    assert row.kernel.name == "sgemm_v12_split_k_narrow"
    assert "sgemm_v19_split_k_ring is for a column-major (K-contiguous) B" in row.reason
    assert fastgemm.select(24, 6144, 4096, "float32", cc=90, order="FF").kernel.name == col.kernel.name
    assert fastgemm.select(24, 6144, 4096, "float32", cc=90, order="FC").kernel.name == row.kernel.name


def test_select_order_of_rows_and_columns():
    # A one-row or one-column operand is read by its shape, whatever its order (as a call reads
    # it): with K == 1, B is a row (row-major), so "CF" answers as "CC".
    assert fastgemm.select(24, 6144, 1, "float32", cc=90, order="CF").kernel.name == (
        fastgemm.select(24, 6144, 1, "float32", cc=90).kernel.name
    )
    assert fastgemm.select(24, 6144, 2, "float32", cc=90, order="CF").kernel.name != (
        fastgemm.select(24, 6144, 2, "float32", cc=90).kernel.name
    )


@pytest.mark.parametrize("shape", [(-1, 8, 8), (8, -1, 8), (8, 8, -1)])
def test_select_negative_sizes(shape):
    with pytest.raises(ValueError, match="negative problem size"):
        fastgemm.select(*shape, "float32", cc=80)


@pytest.mark.parametrize("dtype", ["int8", "float64", "complex64"])
def test_select_unknown_dtype(dtype):
    with pytest.raises(TypeError, match=f"no kernels for dtype '{dtype}'"):
        fastgemm.select(8, 8, 8, dtype, cc=80)


def test_select_zero_sizes():
    # An empty output has at most 16 rows: the decode specialist where it is preferred (sm_90),
    # the tiled rung elsewhere (nothing is launched for it either way).
    assert fastgemm.select(0, 0, 0, "float32", cc=80).kernel.name == "sgemm_v09_cp_async"
    assert fastgemm.select(0, 0, 0, "float32", cc=90).kernel.name == "sgemm_v19_split_k_ring"


def _lowest_cc(dtype):
    """The lowest compute capability on which any ``dtype`` kernel runs."""
    return min(k.min_cc for k in fastgemm.kernels(dtype))


def test_lowest_cc_per_dtype():
    assert {d: _lowest_cc(d) for d in DTYPES} == {"float32": 75, "float16": 75, "bfloat16": 80}


def _hopper_rule_name(name: str, dtype: str = "float16") -> bool:
    """A rule naming a Hopper rung: by the table where the build has it; a name the build lacks
    can only be one (builds without sm_90 have every other kernel)."""
    k = next((k for k in fastgemm.kernels(dtype) if k.name == name), None)
    return _is_hopper(k) if k is not None else True


def test_auto_rules_refer_to_kernels():
    table = {(k.name, k.dtype): k for k in fastgemm.kernels()}
    assert set(dispatch.AUTO_RULES) == set(DTYPES)
    for dtype, rules in dispatch.AUTO_RULES.items():
        assert dtype in DTYPES
        assert rules, f"no rules for {dtype}"
        for rule in rules:
            r = dict(zip(RULE_FIELDS, rule, strict=True))
            name, why, min_mn, few, flip, last = (
                r[f] for f in ("name", "why", "min_mn", "few", "flip", "last_round")
            )
            max_m, min_cc, min_k, max_short, max_k = (
                r[f] for f in ("max_m", "min_cc", "min_k", "max_short", "max_k")
            )
            split_cost, rounds, vs_n = r["split_cost"], r["rounds"], r["vs_n"]
            assert isinstance(min_mn, int) and min_mn >= 0, name
            assert isinstance(flip, bool), name
            if flip and (name, dtype) in table:  # the epilogues that write a column-major C
                k = table[(name, dtype)]
                assert k.epilogue == "split_k" or (
                    k.epilogue == "split_k_global" and k.family == "mma_sync"
                ), name
            assert max_short is None or (isinstance(max_short, int) and max_short > 0), name
            min_m, min_n = r["min_m"], r["min_n"]
            assert min_m is None or (
                isinstance(min_m, int) and 0 < min_m and (max_m is None or min_m <= max_m)
            ), name
            assert min_n is None or (isinstance(min_n, int) and min_n > 0), name
            assert min_k is None or (isinstance(min_k, int) and min_k > 0), name
            assert max_k is None or (isinstance(max_k, int) and max_k > 0 and (min_k or 0) <= max_k), name
            wave = r["wave_rounds"]
            assert few is None or (
                len(few) == 3 and min(few[:2]) > 0 and (few[2] > 0 or last or vs_n or wave or r["max_pad"])
            ), name
            assert not last or few is not None, name
            assert not wave or (
                few is not None and (few[0], few[1]) in ((128, 128), (192, 128), (128, 256))
            ), name
            assert vs_n is None or (few is not None and vs_n > few[1]), name
            assert split_cost is None or (few is not None and split_cost > 0), name
            assert rounds is None or (
                min(rounds[f] for f in ("tile_m", "tile_n", "k_unit", "min_units", "most", "blocks_per_sm"))
                > 0
                and rounds["max_partials"] > 0
                and 0 < rounds["solo"] <= 1
            ), name
            assert max_m is None or (isinstance(max_m, int) and max_m > 0), name
            assert min_cc is None or (isinstance(min_cc, int) and min_cc >= 75), name
            if (name, dtype) not in table and str(HOPPER_CC) not in BUILT_ARCHS:
                continue  # a Hopper rung: only in builds with sm_90, and skipped by auto elsewhere
            assert (name, dtype) in table, (
                f"AUTO_RULES[{dtype!r}] names {name!r}, which is not a {dtype} kernel in the table"
            )
            assert isinstance(why, str) and why.strip(), name
        # The last candidate is the fallback: any alignment, every GPU that runs this dtype at all.
        last = table[(rules[-1][0], dtype)]
        assert last.alignment == ITEMSIZE[dtype], last
        assert last.min_cc <= _lowest_cc(dtype) and last.max_cc is None, last
        for cc in CCS:
            if cc >= _lowest_cc(dtype):
                assert dispatch.check_runnable(last, cc, ITEMSIZE[dtype]) is None


@pytest.mark.parametrize(
    "dtype, alignment",
    [(d, a) for d in sorted(dispatch.AUTO_RULES) for a in (2, 4, 8, 16, 32) if a >= ITEMSIZE[d]],
)
@pytest.mark.parametrize("cc", CCS)
@pytest.mark.parametrize("size", [96, 4096])
def test_auto_always_has_an_answer(dtype, cc, alignment, size):
    if cc < _lowest_cc(dtype):
        with pytest.raises(RuntimeError, match=f"no {dtype} kernel runs on compute capability"):
            fastgemm.select(size, size, size, dtype, cc=cc, alignment=alignment)
        return
    sel = fastgemm.select(size, size, size, dtype, cc=cc, alignment=alignment)
    assert sel.kernel.dtype == dtype
    if sel.pad:  # runs on the 16-byte aligned copies
        assert dispatch.check_runnable(sel.kernel, cc, 16) is None
        # a kernel that needs more alignment, or an fp32 CUDA-core rung whose 16-byte copies pay
        assert alignment % sel.kernel.alignment != 0 or (dtype == "float32" and alignment < 16)
    else:
        assert dispatch.check_runnable(sel.kernel, cc, alignment) is None


SHAPES_SWEEP = [
    (64, 64, 64),
    (96, 96, 96),
    (1024, 1024, 1024),
    (2048, 2048, 64),
    (4096, 4096, 4096),
    (128, 130, 128),
    (4096, 4096, 4095),
    (0, 0, 0),
]


def _never_hopper_below_sm90():
    for dtype in HALF:
        for cc in (80, 86, 89):
            for shape in SHAPES_SWEEP:
                for alignment in (None, 2, 4, 8, 16, 32):
                    sel = fastgemm.select(*shape, dtype, cc=cc, alignment=alignment)
                    assert not _is_hopper(sel.kernel), (dtype, cc, shape, alignment, str(sel))
                    assert sel.kernel.max_cc is None, sel


def test_select_never_takes_a_hopper_rung_below_sm90():
    _never_hopper_below_sm90()


def test_hopper_rules_never_run_below_sm90_any_build():
    # As if every build had every rung the rules name: a Hopper-only kernel (cc 9.0 only) is never
    # runnable on cc 8.x, whatever its alignment, so auto cannot pick one there.
    for dtype in HALF:
        for name, *_ in dispatch.AUTO_RULES[dtype]:
            if not _hopper_rule_name(name):
                continue
            k = fastgemm.KernelInfo(name, dtype, 99, HOPPER_CC, HOPPER_CC, 16, "as built", 1024)
            assert dispatch.check_runnable(k, HOPPER_CC, 16) is None
            for cc in (75, 80, 86, 89, 100, 120):
                for alignment in (2, 16, 256):
                    assert dispatch.check_runnable(k, cc, alignment) is not None, (name, cc)


# --- check_runnable and alignment_of -----------------------------------------------------------


def _kernel(name, dtype=None):
    """The kernel named ``name`` (for an HGEMM rung, of ``dtype``: names are shared)."""
    matches = [k for k in fastgemm.kernels() if k.name == name and dtype in (None, k.dtype)]
    assert len(matches) == 1, (name, dtype, matches)
    return matches[0]


def test_check_runnable_cc_too_low():
    msg = dispatch.check_runnable(_kernel("sgemm_v09_cp_async"), 75, 16)
    assert msg == "sgemm_v09_cp_async needs compute capability 8.0; this GPU is 7.5"


def test_check_runnable_alignment():
    msg = dispatch.check_runnable(_kernel("sgemm_v06_vectorized"), 80, 4)
    assert msg is not None
    assert "sgemm_v06_vectorized" in msg and "16-byte" in msg and "4-byte" in msg


def test_check_runnable_ok():
    assert dispatch.check_runnable(_kernel("sgemm_v09_cp_async"), 90, 16) is None
    assert dispatch.check_runnable(_kernel("sgemm_v06_vectorized"), 75, 32) is None
    assert dispatch.check_runnable(_kernel("sgemm_v01_naive"), 75, 4) is None


def test_check_runnable_half_per_dtype():
    # One name, two rows: the fp16 rung runs on sm_75, the bf16 one does not.
    assert dispatch.check_runnable(_kernel("hgemm_v01_mma", "float16"), 75, 2) is None
    msg = dispatch.check_runnable(_kernel("hgemm_v01_mma", "bfloat16"), 75, 2)
    assert msg == "hgemm_v01_mma needs compute capability 8.0; this GPU is 7.5"
    assert dispatch.check_runnable(_kernel("hgemm_v01_mma", "bfloat16"), 80, 2) is None
    msg = dispatch.check_runnable(_kernel("hgemm_v02_vectorized", "float16"), 80, 8)
    assert msg is not None and "16-byte" in msg and "8-byte" in msg


def test_check_runnable_max_cc():
    k = fastgemm.KernelInfo("x_v01_demo", "float16", 1, 80, 86, 16, "demo")
    assert dispatch.check_runnable(k, 86, 16) is None
    msg = dispatch.check_runnable(k, 90, 16)
    assert msg is not None and "runs only on compute capability 8.0-8.6; this GPU is 9.0" in msg
    only = fastgemm.KernelInfo("x_v02_demo", "float16", 2, 90, 90, 16, "demo")
    assert "runs only on compute capability 9.0; this GPU is 10.0" in dispatch.check_runnable(only, 100, 16)


@pytest.mark.parametrize(
    "values, expected",
    [
        ((), 16),
        ((0,), 16),
        ((0, 0), 16),
        ((256, 4096), 16),
        ((0x1000_0000, 16, 48), 16),
        ((0x1000_0004,), 4),
        ((256, 4, 8), 4),
        ((6,), 2),
        ((3,), 1),
        ((256, 1020), 4),
        ((0, 8), 8),
    ],
)
def test_alignment_of(values, expected):
    assert dispatch.alignment_of(*values) == expected


def test_alignment_of_cap():
    assert dispatch.alignment_of(1024, cap=128) == 128
    assert dispatch.alignment_of(1024, cap=8) == 8
    assert dispatch.alignment_of(24, cap=128) == 8


# --- argument validation: everything is rejected before any GPU work --------------------------

GEMMS = [
    pytest.param(fastgemm.sgemm, "float32", id="sgemm"),
    pytest.param(fastgemm.hgemm, "float16", id="hgemm"),
    pytest.param(fastgemm.gemm, "float32", id="gemm-f32"),
    pytest.param(fastgemm.gemm, "float16", id="gemm-f16"),
]


@pytest.mark.parametrize("fn, dtype", GEMMS)
@pytest.mark.parametrize("which", [0, 1, 2])
def test_numpy_operand_is_host(cpu_only, fn, dtype, which):
    args = list(operands(dtype))
    args[which] = np.zeros(args[which].__cuda_array_interface__["shape"], dtype=dtype)
    with pytest.raises(TypeError, match="host memory"):
        fn(*args)


@pytest.mark.parametrize("fn, dtype", GEMMS)
@pytest.mark.parametrize("bad", [[[1.0, 2.0]], None, 3.0, "A"])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_not_an_array(cpu_only, fn, dtype, bad, which):
    args = list(operands(dtype))
    if fn is fastgemm.gemm and which == 2 and bad is None:
        return  # gemm(C=None) allocates C: see test_gemm_c_none_needs_beta_zero
    args[which] = bad
    with pytest.raises(TypeError, match="must be a CUDA array"):
        fn(*args)


@pytest.mark.parametrize(
    "fn, dtype, expected",
    [
        (fastgemm.sgemm, "float32", "sgemm needs float32 operands"),
        (fastgemm.hgemm, "float16", "hgemm needs float16 or bfloat16 operands"),
    ],
)
@pytest.mark.parametrize("which", [0, 1, 2])
def test_float64_operand(cpu_only, fn, dtype, expected, which):
    args = list(operands(dtype))
    args[which] = FakeCuda(args[which].__cuda_array_interface__["shape"], "float64", ptr=0x4000_0000)
    with pytest.raises(TypeError, match=f"{expected}; {'ABC'[which]} is float64$"):
        fn(*args)


def test_gemm_float64(cpu_only):
    _, B, C = operands()
    with pytest.raises(TypeError, match="gemm supports float32, float16 and bfloat16; A is float64"):
        fastgemm.gemm(FakeCuda((M, K), "float64"), B, C)
    with pytest.raises(TypeError, match="A is int32"):
        fastgemm.gemm(FakeCuda((M, K), "int32"), B, C)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_to_sgemm_suggests_hgemm(cpu_only, dtype):
    with pytest.raises(TypeError, match=rf"sgemm needs float32 operands; A is {dtype} \(use hgemm\)"):
        fastgemm.sgemm(*operands(dtype))


def test_float32_to_hgemm_suggests_sgemm(cpu_only):
    pattern = r"hgemm needs float16 or bfloat16 operands; A is float32 \(use sgemm\)"
    with pytest.raises(TypeError, match=pattern):
        fastgemm.hgemm(*operands("float32"))


def test_mixed_half_dtypes(cpu_only):
    A, B, C = operands("float16")
    B = FakeCuda((K, N), "bfloat16", ptr=PTR_B)
    with pytest.raises(TypeError, match="must share one dtype; got float16, bfloat16, float16"):
        fastgemm.hgemm(A, B, C)
    with pytest.raises(TypeError, match="must share one dtype"):
        fastgemm.gemm(A, B, C)


def test_mixed_float32_and_half(cpu_only):
    A, _, C = operands("float32")
    B = FakeCuda((K, N), "float16", ptr=PTR_B)
    with pytest.raises(TypeError, match=r"B is float16 \(use hgemm\)"):
        fastgemm.sgemm(A, B, C)
    with pytest.raises(TypeError, match=r"B is float16"):
        fastgemm.gemm(A, B, C)


@pytest.mark.parametrize("fn, dtype", GEMMS)
@pytest.mark.parametrize("which", [0, 1, 2])
@pytest.mark.parametrize("shape", [(K,), (1, M, K), ()])
def test_not_2d(cpu_only, fn, dtype, which, shape):
    args = list(operands(dtype))
    args[which] = FakeCuda(shape, dtype, ptr=0x4000_0000)
    with pytest.raises(ValueError, match=f"{'ABC'[which]} must be a 2-D matrix"):
        fn(*args)


@pytest.mark.parametrize("fn, dtype", GEMMS)
def test_inner_dimension_mismatch(cpu_only, fn, dtype):
    A, _, C = operands(dtype)
    B = FakeCuda((K + 1, N), dtype, ptr=PTR_B)
    with pytest.raises(ValueError, match=rf"inner dimensions differ: A is {M}x{K}, B is {K + 1}x{N}"):
        fn(A, B, C)


@pytest.mark.parametrize("fn, dtype", GEMMS)
@pytest.mark.parametrize("cshape", [(M, N + 1), (M + 1, N), (N, M), (1, N)])
def test_c_wrong_shape(cpu_only, fn, dtype, cshape):
    A, B, _ = operands(dtype)
    C = FakeCuda(cshape, dtype, ptr=PTR_C)
    with pytest.raises(ValueError, match=rf"C must be {M}x{N} .*; C is {cshape[0]}x{cshape[1]}"):
        fn(A, B, C)


@pytest.mark.parametrize("fn, dtype", GEMMS)
def test_c_read_only(cpu_only, fn, dtype):
    A, B, _ = operands(dtype)
    C = FakeCuda((M, N), dtype, ptr=PTR_C, readonly=True)
    with pytest.raises(ValueError, match="C is read-only"):
        fn(A, B, C)


def test_read_only_inputs_are_fine(cpu_only):
    # Read-only A and B are accepted: the call gets as far as the first device query.
    A = FakeCuda((M, K), ptr=PTR_A, readonly=True)
    B = FakeCuda((K, N), ptr=PTR_B, readonly=True)
    C = FakeCuda((M, N), ptr=PTR_C)
    with pytest.raises(AssertionError, match=REACHED):
        fastgemm.sgemm(A, B, C)


@pytest.mark.parametrize("fn, dtype", GEMMS)
@pytest.mark.parametrize("elem_strides", [(2 * N, 2), (2, 2 * M), (-N, 1), (N, -1), (0, 1)])
def test_c_without_unit_stride(cpu_only, fn, dtype, elem_strides):
    A, B, _ = operands(dtype)
    itemsize = ITEMSIZE[dtype]
    ptr = PTR_C + 0x10000  # room for negative strides
    C = FakeCuda((M, N), dtype, ptr=ptr, strides=tuple(s * itemsize for s in elem_strides))
    with pytest.raises(ValueError, match="C must be row- or column-major with unit stride"):
        fn(A, B, C)


@pytest.mark.parametrize("fn, dtype", GEMMS)
def test_c_overlaps_a(cpu_only, fn, dtype):
    A, B, _ = operands(dtype)
    with pytest.raises(ValueError, match="C overlaps A"):
        fn(A, B, FakeCuda((M, N), dtype, ptr=PTR_A))


@pytest.mark.parametrize("fn, dtype", GEMMS)
def test_c_overlaps_b_partially(cpu_only, fn, dtype):
    A, B, _ = operands(dtype)
    last_row_of_b = PTR_B + (K - 1) * N * ITEMSIZE[dtype]
    with pytest.raises(ValueError, match="C overlaps B"):
        fn(A, B, FakeCuda((M, N), dtype, ptr=last_row_of_b))


def test_a_and_b_may_alias(cpu_only):
    # A @ A: inputs may share memory; only the output must not alias them.
    A = FakeCuda((K, K), ptr=PTR_A)
    C = FakeCuda((K, K), ptr=PTR_C)
    with pytest.raises(AssertionError, match=REACHED):
        fastgemm.sgemm(A, A, C)


def test_unknown_kernel_lists_float32_kernels(cpu_only):
    with pytest.raises(ValueError, match="unknown kernel 'sgemm_v99_nope'; float32 kernels: ") as info:
        fastgemm.sgemm(*operands(), kernel="sgemm_v99_nope")
    for k in fastgemm.kernels("float32"):
        assert k.name in str(info.value)


def test_unknown_kernel_lists_half_kernels(cpu_only):
    for dtype in HALF:
        with pytest.raises(ValueError, match=f"unknown kernel 'hgemm_v99_nope'; {dtype} kernels: ") as info:
            fastgemm.hgemm(*operands(dtype), kernel="hgemm_v99_nope")
        for k in fastgemm.kernels(dtype):
            assert k.name in str(info.value)
        assert "sgemm_" not in str(info.value)


def test_float32_kernel_on_half_operands(cpu_only):
    pattern = "'sgemm_v05_blocktile_2d' is a float32 kernel; operands are float16"
    with pytest.raises(ValueError, match=pattern):
        fastgemm.hgemm(*operands("float16"), kernel="sgemm_v05_blocktile_2d")
    with pytest.raises(ValueError, match="is a float32 kernel; operands are bfloat16"):
        fastgemm.gemm(*operands("bfloat16"), kernel="sgemm_v09_cp_async")


@pytest.mark.parametrize("name", ["hgemm_v01_mma", "hgemm_v09_raster"])
def test_half_kernel_on_float32_operands(cpu_only, name):
    pattern = f"kernel '{name}' is a float16 or bfloat16 kernel; operands are float32"
    with pytest.raises(ValueError, match=pattern):
        fastgemm.sgemm(*operands("float32"), kernel=name)
    with pytest.raises(ValueError, match=pattern):
        fastgemm.gemm(*operands("float32"), kernel=name)


def test_hgemm_float32_operands_with_hgemm_kernel(cpu_only):
    # The operand type is checked first: hgemm on float32 says to use sgemm, whatever the kernel.
    pattern = r"hgemm needs float16 or bfloat16 operands; A is float32 \(use sgemm\)"
    with pytest.raises(TypeError, match=pattern):
        fastgemm.hgemm(*operands("float32"), kernel="hgemm_v09_raster")


@pytest.mark.parametrize("fn, dtype", GEMMS)
@pytest.mark.parametrize("param", ["alpha", "beta"])
@pytest.mark.parametrize("bad", ["1.0", True, False, None, 1 + 2j, [1.0]])
def test_bad_scalars(cpu_only, fn, dtype, param, bad):
    with pytest.raises(TypeError, match=f"{param} must be a real number"):
        fn(*operands(dtype), **{param: bad})


@pytest.mark.parametrize("fn, dtype", GEMMS)
@pytest.mark.parametrize("bad", ["0", True, 1.5, object()])
def test_bad_stream(cpu_only, fn, dtype, bad):
    with pytest.raises(TypeError, match="stream must be an int, a cupy.cuda.Stream or a torch.cuda.Stream"):
        fn(*operands(dtype), stream=bad)


@pytest.mark.parametrize("fn, dtype", GEMMS)
@pytest.mark.parametrize("bad", [5, None, b"auto", fastgemm.kernels("float32")[0]])
def test_kernel_not_a_str(cpu_only, fn, dtype, bad):
    with pytest.raises(TypeError, match="kernel must be a str"):
        fn(*operands(dtype), kernel=bad)


def test_gemm_c_none_needs_beta_zero(cpu_only):
    A, B, _ = operands()
    with pytest.raises(ValueError, match="beta must be 0 when C is None"):
        fastgemm.gemm(A, B, None, beta=1.0)
    with pytest.raises(ValueError, match="beta must be 0 when C is None"):
        fastgemm.gemm(A, B, beta=-0.5)


REACHED = "validation touched the GPU before rejecting the arguments"


class FakeDLPackC:
    """A float32 DLPack producer on a given device (test capsules, never dereferenced)."""

    def __init__(self, shape, device_id=0, ptr=PTR_C):
        self.shape, self.device_id, self.ptr = shape, device_id, ptr

    def __dlpack__(self, **kwargs):
        return fastgemm._C._dlpack_test_capsule(self.ptr, list(self.shape), None, 2, 32, 2, self.device_id)


# --- valid fake arguments: the first GPU-dependent step fails ---------------------------------


def test_validation_then_gpu_check(cpu_only):
    # With every check passed, the next step is the first device query.
    with pytest.raises(AssertionError, match=REACHED):
        fastgemm.sgemm(*operands(), 2.0, 0.5, kernel="sgemm_v01_naive", stream=7)


VALID_CALLS = [
    pytest.param(lambda: fastgemm.sgemm(*operands()), id="sgemm"),
    pytest.param(
        lambda: fastgemm.sgemm(*operands(), kernel="sgemm_v05_blocktile_2d", stream=0), id="sgemm-kernel"
    ),
    pytest.param(lambda: fastgemm.gemm(*operands(), alpha=0.0, beta=2), id="gemm-alpha0"),
    pytest.param(lambda: fastgemm.sgemm(*operands(k=0)), id="sgemm-K0"),
    pytest.param(
        lambda: fastgemm.sgemm(*operands(), alpha=np.float32(2), beta=np.float64(0)), id="numpy-scalars"
    ),
    pytest.param(lambda: fastgemm.hgemm(*operands("float16")), id="hgemm"),
    pytest.param(lambda: fastgemm.gemm(*operands("bfloat16")), id="gemm-bf16"),
    pytest.param(lambda: fastgemm.hgemm(*operands("float16"), kernel="hgemm_v01_mma"), id="hgemm-kernel"),
    pytest.param(
        lambda: fastgemm.hgemm(*operands("bfloat16"), kernel="hgemm_v09_raster"), id="hgemm-bf16-kernel"
    ),
]


@pytest.mark.parametrize("call", VALID_CALLS)
def test_valid_fakes_fail_on_the_gpu_step(call):
    # No GPU: "needs a CUDA GPU". A GPU: the fake pointers are not CUDA device memory.
    pattern = "needs a CUDA GPU" if fastgemm.device_count() == 0 else "CUDA"
    with pytest.raises(RuntimeError, match=pattern):
        call()


def test_valid_fakes_without_gpu(runtime_hooks):
    runtime_hooks(device_count=0)
    with pytest.raises(RuntimeError, match="fastgemm needs a CUDA GPU, and the CUDA runtime found none"):
        fastgemm.sgemm(*operands())


def test_valid_fakes_not_device_memory(runtime_hooks):
    # As on a GPU machine, whatever this one has: the fake addresses are not device memory.
    runtime_hooks(device_count=1, pointer_device=-1)
    with pytest.raises(
        RuntimeError, match=r"FakeCuda operand is not in CUDA device memory \(address 0x[0-9a-f]+\)$"
    ):
        fastgemm.sgemm(*operands())


def test_operands_on_different_devices(runtime_hooks):
    runtime_hooks(device_count=2, pointer_device=1)
    A, B, _ = operands()
    C = FakeDLPackC((M, N), device_id=0)
    with pytest.raises(ValueError, match=r"operands are on different devices: \{'A': 1, 'B': 1, 'C': 0\}"):
        fastgemm.sgemm(A, B, C)


@pytest.mark.parametrize("m, n", [(0, N), (M, 0), (0, 0)])
@pytest.mark.parametrize("zero_strides", [False, True])
def test_empty_output(m, n, zero_strides):
    A, B, C = operands(m=m, n=n)
    if zero_strides:  # what NumPy/CuPy report for an empty C-contiguous array
        C = FakeCuda((m, n), ptr=PTR_C, strides=(0, 0))
    try:
        out = fastgemm.sgemm(A, B, C)
    except RuntimeError as exc:
        assert "CUDA" in str(exc)
    else:  # pragma: no cover - only if empty outputs ever skip the device lookup
        assert out is C


# --- _layout: how C (and A, B) are canonicalised --------------------------------------------------


def _matrix(shape, elem_strides=None, dtype="float32"):
    itemsize = ITEMSIZE[dtype]
    strides = None if elem_strides is None else tuple(s * itemsize for s in elem_strides)
    return as_matrix(FakeCuda(shape, dtype, ptr=PTR_A + 0x10000, strides=strides), "X")


@pytest.mark.parametrize(
    "shape, elem_strides, expected",
    [
        ((4, 8), None, (False, 8)),  # row-major, dense
        ((4, 8), (8, 1), (False, 8)),
        ((4, 8), (16, 1), (False, 16)),  # row-major, padded ld
        ((4, 8), (1, 4), (True, 4)),  # column-major, dense
        ((4, 8), (1, 6), (True, 6)),  # column-major, padded ld
        ((1, 5), (999, 1), (False, 8)),  # one row: its stride is free, ld padded to 16 bytes
        ((1, 5), (0, 1), (False, 8)),
        ((5, 1), (999, 1), (False, 999)),  # one column, row-major view with a padded ld
        ((1, 1), (7, 9), (False, 4)),
        ((1, 5), (1, 2), (True, 2)),  # one row with a stride of 2: column-major, ld 2
        ((4, 8), (16, 2), None),  # non-unit stride in both dimensions
        ((4, 8), (2, 16), None),
        ((4, 8), (4, 1), None),  # rows overlap: ld < number of columns
        ((4, 8), (-8, 1), None),  # negative row stride
        ((4, 8), (0, 1), None),  # broadcast rows
        ((4, 0), (0, 1), (False, 4)),  # empty: any strides (NumPy and CuPy report 0s)
        ((4, 0), (0, 0), (False, 4)),
        ((0, 0), (0, 0), (False, 4)),
        ((0, 6), (0, 0), (False, 8)),
    ],
)
def test_layout(shape, elem_strides, expected):
    assert layout(_matrix(shape, elem_strides)) == expected


@pytest.mark.parametrize(
    "shape, elem_strides",
    [
        ((5, 1), (1, 999)),
        ((5, 1), (1, 1)),
        ((5, 1), (1, 0)),
        ((1, 5), (1, 1)),
        ((1, 5), (0, 1)),
        ((1, 1), (0, 0)),
        ((3, 4), (4, 1)),
        ((3, 4), (1, 3)),
        ((3, 4), (7, 1)),
        ((1, 4), (3, 2)),
    ],
)
def test_layout_addresses_every_element(shape, elem_strides):
    # Whatever layout _layout picks for a vector, it must address the same elements.
    m = _matrix(shape, elem_strides)
    col, ld = layout(m)
    rows, cols = shape
    assert ld >= (rows if col else cols)
    for i in range(rows):
        for j in range(cols):
            expected = i * elem_strides[0] + j * elem_strides[1]
            assert (j * ld + i if col else i * ld + j) == expected, (i, j, col, ld)


def test_layout_half_padding():
    # 16 bytes = 8 halves.
    assert layout(_matrix((1, 5), (3, 1), "float16")) == (False, 8)
    assert layout(_matrix((1, 9), (3, 1), "float16")) == (False, 16)
    assert layout(_matrix((4, 8), (1, 4), "float16")) == (True, 4)


def test_rungs_are_named_only_by_their_own_files():
    # A rung registers itself at the end of its .cu file: the table's sources name none of them,
    # so adding a rung touches its file (and, for a configured ladder, its config header) alone.
    root = Path(__file__).resolve().parents[1] / "csrc"
    for name in ("registry.h", "registry.cpp", "bindings.cpp"):
        code = re.sub(r"//[^\n]*", "", (root / name).read_text())  # examples in comments are fine
        assert not re.search(r"\b[sh]gemm_v\d\d_", code), name
    for k in fastgemm.kernels():
        sub = "hopper" if k.copy == "tma" else ("sgemm" if k.dtype == "float32" else "hgemm")
        files = list((root / sub).glob(f"{k.name.split('_', 1)[1]}.cu"))
        assert len(files) == 1 and "FASTGEMM_REGISTER_" in files[0].read_text(), (k.name, files)
        assert f"({k.name}," in files[0].read_text(), (k.name, files)


@pytest.mark.parametrize("dtype", DTYPES)
def test_decode_specialists_only_where_measured(dtype):
    # The split-K specialists split K only where clusters exist and were fitted on sm_90: auto
    # prefers them there for few rows, and says why it passes them over elsewhere.
    # (16384 columns: more tiles of 16x64 than SMs, where v22 keeps its 4-stage ring.)
    name = "sgemm_v19_split_k_ring" if dtype == "float32" else "hgemm_v22_split_k"
    assert fastgemm.select(16, 16384, 14336, dtype, cc=90).kernel.name == name
    sel = fastgemm.select(16, 16384, 14336, dtype, cc=80)
    assert sel.kernel.name != name
    assert f"{name} is preferred from compute capability 9.0 on" in sel.reason
    assert fastgemm.select(33, 16384, 14336, dtype, cc=90).kernel.name != name


V18_ROWS = "sgemm_v18_split_k_multistage"
V20 = "sgemm_v20_split_k_reduce"
SHORT_SIDE = "wide tiles along the short side"  # the words of v20's short-side rules
V16_UNDER_ALIGNED = "v18's 64-wide tiles save no padding"  # v16's rule for under-aligned 65-128
V21 = "sgemm_v21_split_k_reduce_multistage"
V21_ROWS = "shorter side is 33-64"  # the words of v21's rule for a short side of 33-64


def _v21_rows_retimed(m: int, n: int, k: int, order: str = "CC", alignment: int | None = None) -> bool:
    """Whether auto runs v21 here by its rule for a shorter side of 33-64, which the older sweeps
    did not time: results/sweeps/v21-rows-recheck-* times those problems anew."""
    sel = fastgemm.select(m, n, k, "float32", cc=90, order=order, alignment=alignment)
    return sel.kernel.name == V21 and V21_ROWS in sel.reason


def _v20_retimed(
    m: int, n: int, k: int, order: str = "CC", alignment: int | None = None, timed: bool = True
) -> bool:
    """Whether auto runs v20 here where an older sweep's v20 time does not stand for it: on tiles
    along a short side of at most 64 (128x128 ones when that sweep ran), or where the sweep did not
    time v20 at all (timed=False). results/sweeps/short-side-v20-* times those problems anew."""
    sel = fastgemm.select(m, n, k, "float32", cc=90, order=order, alignment=alignment)
    return sel.kernel.name == V20 and (min(m, n) <= 64 or not timed)


def test_select_fp32_short_side_v20_follows_the_recheck():
    # results/sweeps/short-side-v20-float32-*: every problem of the older fp32 sweeps with a short
    # side of at most 128, a long one of at most 3072 and K >= 1024, in the layouts they took,
    # with v12, v16, v18, v19 (also transposed, as its few-column rules run it) and v20 timed anew.
    # Where v20's short-side rules run it, against what the rules before them ran (the same walk
    # without them; a flip rule's kernel on the transposed problem), by band of the short side:
    # 1.98x at up to 16, 1.61x at 17-32, 1.36x at 33-64, 1.09x at 65-128 (geometric means), never
    # more than 4% slower. Where older v20 rules run it on its new tiles (a short side of at most
    # 64), against the fastest other kernel timed: 3.1x / 2.5x / 1.7x at up to 16 / 17-32 / 33-64,
    # never 9% slower. "Before them" leaves out the rule fitted after them that they precede
    # (v16 for under-aligned outputs with a short side of 65-128): against it, on the 12 points
    # where it would apply, v20 was 1.11x faster (geometric mean), 9% slower on one.
    rows = _sweep_rows("short-side-v20-float32-*.json")
    assert len(rows) >= 450
    later = [rule for rule in dispatch.AUTO_RULES["float32"] if V16_UNDER_ALIGNED in rule[1]]
    assert len(later) == 1
    before_rules = [
        rule for rule in dispatch.AUTO_RULES["float32"] if SHORT_SIDE not in rule[1] and rule not in later
    ]
    bands: dict[int, list[float]] = {16: [], 32: [], 64: [], 128: []}
    older: dict[int, list[float]] = {16: [], 32: [], 64: []}
    against_later: list[float] = []
    for r in rows:
        m, n, k, order, align = r["M"], r["N"], r["K"], _order(r), _sweep_alignment(r)
        sel = fastgemm.select(m, n, k, "float32", cc=90, order=order, alignment=align)
        if sel.kernel.name != V20:
            continue
        if _rule_applies(later[0], m, n, k, align, order):
            against_later.append(r[later[0][0]] / r[V20])
            assert r[later[0][0]] / r[V20] > 0.9, r
        before = _first_runnable_rule("float32", 90, m, n, k, align, order, before_rules, whole=True)
        band = next(b for b in bands if min(m, n) <= b)
        if before[0] != V20:
            assert SHORT_SIDE in sel.reason, r
            was = r[before[0] + ("^T" if before[8] else "")]  # RULE_FIELDS: flip is field 8
            bands[band].append(was / r[V20])
            assert was / r[V20] > 0.95, (before[0], r)
        elif band in older:
            others = [v for c, v in r.items() if c.startswith("sgemm_") and c != V20 and "_err" not in c]
            best = min(v for v in others if v)
            older[band].append(best / r[V20])
            assert best / r[V20] > 0.91, r
    assert _faster(bands[16], 20, 1.8) and _faster(bands[32], 20, 1.45)
    assert _faster(bands[64], 30, 1.25) and _faster(bands[128], 60, 1.05)
    assert all(_faster(older[b], 10, 1.5) for b in older)
    assert _faster(against_later, 10, 1.05)


@pytest.mark.parametrize(
    "m, n, k, name, why",
    [
        (17, 8192, 4096, "sgemm_v12_split_k_narrow", ""),  # 17-32 rows over many tiles (v19 on few)
        (32, 8192, 4096, "sgemm_v12_split_k_narrow", ""),
        (33, 4096, 4096, V21, "33-64 over at most"),  # 32 tiles: v21 (up to SMs/3 tiles, K >= 2048)
        (64, 14336, 4096, V18_ROWS, "33-64 rows"),
        (48, 32, 1024, "sgemm_v12_split_k_narrow", ""),  # 32 columns: v12's 32-wide tiles
        (4096, 24, 4096, "sgemm_v12_split_k_narrow", ""),
        (16384, 64, 4096, V18_ROWS, "33-192 columns"),  # v18's 128x64 tiles on many rows
        (1024, 64, 1024, "sgemm_v19_split_k_ring", "33-64 columns"),  # v19 on C^T over few tiles
        (64, 6144, 4096, V18_ROWS, "33-64 rows"),
    ],
)
def test_select_narrow_fp32(m, n, k, name, why):
    # Outputs with at most 64 rows or columns (past v10's 16 rows) go to the half-size tiles on
    # sm_90 (v18's three-stage loop for 33-64 rows, v21's over 25 to SMs/3 tiles of 128x128 when
    # aligned, and v18's for 33-192 columns on at least 2048 rows),
    # and the explanation names the rule; 68 (the next 16-byte aligned width) goes elsewhere. K
    # below 2048 where the other side is at most 3072: v20 takes those from there on.
    sel = fastgemm.select(m, n, k, "float32", cc=90)
    assert sel.kernel.name == name, sel
    assert (why or "at most 64 rows or columns") in sel.reason
    wider = fastgemm.select(max(m, 68), max(n, 68), k, "float32", cc=90)
    # (68x68: one tile of 128x128, which v20 splits from K = 1024 on, before v12's rules)
    assert wider.kernel.name != "sgemm_v12_split_k_narrow" or "tiles of 128x128 with K <=" in wider.reason
    few = wider.kernel.name == "sgemm_v20_split_k_reduce" and "SMs/33 tiles" in wider.reason
    if not few and ("columns" not in (why or "columns") or m < 2048):
        assert "sgemm_v12_split_k_narrow is for outputs of at most 64 rows or columns" in wider.reason
    assert fastgemm.select(m, n, k, "float32", cc=80).kernel.name == "sgemm_v09_cp_async"


def test_select_fp32_v17_from_2048x2048():
    # v17's four-warp blocks where tiles fill the SMs twice over and K is long; v09's eight-warp
    # ones below, where a block may run alone on an SM or the three-stage prologue weighs (sm_90;
    # v16's round model does not split these), and v16 with a K of at most 512 and an
    # under-aligned operand (its sweep).
    for m, n, k in [(2048, 2048, 2048), (4096, 4096, 1024), (8192, 2048, 4096)]:
        assert fastgemm.select(m, n, k, "float32", cc=90).kernel.name == "sgemm_v17_multistage"
    for m, n, k, why, kernel in [
        (2048, 2048, 768, "sgemm_v17_multistage is for K of at least 1024", "v09"),
        (4096, 2048, 1000, "sgemm_v17_multistage is for K of at least 1024", "v09"),
        (1024, 2048, 256, "sgemm_v17_multistage is for outputs of at least 4194304", "v09"),
        (4096, 2048, 512, "sgemm_v17_multistage is for K of at least 1024", "v09"),
        (1024, 2047, 256, "sgemm_v17_multistage is for outputs of at least 4194304", "v16"),
        (4096, 2048, 511, "sgemm_v17_multistage is for K of at least 1024", "v16"),
    ]:
        sel = fastgemm.select(m, n, k, "float32", cc=90)
        assert sel.kernel.name.startswith("sgemm_" + kernel), sel
        assert why in sel.reason, sel.reason


@pytest.mark.parametrize(
    "m, n, k, split",
    [
        (256, 2048, 8192, True),  # 32 tiles: a prefill of few rows
        (512, 3584, 18944, True),  # 112 tiles and a deep K
        (1024, 1024, 65536, True),  # deep K
        (8192, 256, 8192, True),  # narrow output, 128 tiles
        (2048, 3584, 18944, True),  # 448 tiles: a last round of 184 whole tiles
        (2048, 2048, 2048, False),  # 256 tiles: one full round
        (4096, 4096, 4096, False),
        (8192, 8192, 8192, False),
    ],
)
def test_select_fp32_round_model(m, n, k, split):
    # sgemm_v16 where its round model splits K (sm_90, 132 SMs), v17 where whole tiles fill the
    # rounds (v09 before sm_90); the explanation says which, and the test's own copy of the model
    # agrees.
    sel = fastgemm.select(m, n, k, "float32", cc=90)
    rule = next(
        r for r in dispatch.AUTO_RULES["float32"] if r[0] == "sgemm_v16_split_k_waves" and r[10] is not None
    )
    assert (_round_split(rule[10], m, n, k, 132) > 1) == split
    if split:
        assert sel.kernel.name == "sgemm_v16_split_k_waves", sel
        assert "model" in sel.reason
    else:
        assert sel.kernel.name == "sgemm_v17_multistage", sel
        assert "sgemm_v16_split_k_waves is for outputs whose K its round model splits" in sel.reason
    assert fastgemm.select(m, n, k, "float32", cc=80).kernel.name == "sgemm_v09_cp_async"


@pytest.mark.parametrize(
    "m, n, k, name",
    [
        (128, 128, 256, "sgemm_v12_split_k_narrow"),  # one tile: v12's half tiles, split 8 ways
        (512, 512, 512, "sgemm_v12_split_k_narrow"),  # 16 tiles of 128x128, K <= 2048
        (256, 1024, 1024, "sgemm_v12_split_k_narrow"),
        (512, 512, 2048, V21),  # from 129 rows and columns with K >= 2048: v21 (v21-recheck-*)
        (256, 256, 4096, V21),
        (384, 256, 4096, V21),
        (512, 256, 4096, V21),
        (256, 256, 1024, "sgemm_v20_split_k_reduce"),  # 4 tiles, K >= 1024 (tiles-float32-*)
        (384, 256, 1024, "sgemm_v12_split_k_narrow"),  # at most 16 tiles, K <= 2048
        (768, 768, 512, "sgemm_v11_split_k_tile"),  # 36 tiles, K <= 512
        (1024, 1024, 512, "sgemm_v11_split_k_tile"),  # 64 tiles, K <= 512
        (1024, 1024, 1024, "sgemm_v16_split_k_waves"),
        (256, 2048, 1024, "sgemm_v16_split_k_waves"),  # 32 tiles
    ],
)
def test_select_fp32_small_outputs(m, n, k, name):
    # Fitted to results/sweeps/small-float32-*.csv (benchmarks/sweep.py --deep over small outputs);
    # v21's rule came later (test_select_fp32_v21_follows_the_sweeps).
    sel = fastgemm.select(m, n, k, "float32", cc=90)
    assert sel.kernel.name == name, sel
    assert _first_runnable_rule("float32", 90, m, n, k, 16) == name


def _v19_sweeps(pattern: str) -> dict[tuple[int, int, int], dict[str, float]]:
    """Device times (us) of v10, v12 and v19 on outputs of at most 16 rows or columns from the
    committed sweeps of one kind; a transposed candidate (few columns) is filed under its
    kernel's name, and only transposed candidates race there."""
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    points: dict[tuple[int, int, int], dict[str, float]] = {}
    for path in sorted(sweeps.glob(pattern)):
        for row in csv.DictReader(path.read_text().splitlines()):
            shape = (int(row["M"]), int(row["N"]), int(row["K"]))
            name = row["candidate"]
            if min(shape[:2]) > 64 or not name.startswith("sgemm_"):
                continue
            if shape[0] > 64 and not name.endswith(" (C^T)"):
                continue
            points.setdefault(shape, {})[name.removesuffix(" (C^T)")] = float(row["us"])
    return points


def _auto_within(points, alignment: int | None, bound, order: str = "CC") -> None:
    """auto's pick (sm_90, 132 SMs) on every swept shape is the kernel the rule table's mirror
    names, and its time is within bound(m) of the fastest kernel swept there. alignment None:
    select()'s, that of fresh row-major operands of the shape (the sweeps' own)."""
    for (m, n, k), times in points.items():
        name = fastgemm.select(m, n, k, "float32", cc=90, order=order).kernel.name
        align = alignment or dispatch.alignment_of(256, 4 * k, 4 * n, cap=dispatch.PLAN_ALIGN_CAP)
        assert name == _first_runnable_rule("float32", 90, m, n, k, align, order)
        best = min(us for kernel, us in times.items() if kernel.startswith("sgemm_"))
        assert times[name] <= bound(m) * best, ((m, n, k), name, times)


@pytest.mark.parametrize(
    "pattern, order, slack",
    [
        # v19 at 1-16 rows (v10 up to 7% faster at 1-4 rows on a few layer shapes), v19 or v12 at
        # 17-32 (v12 up to 1% faster on one point of the cut: 32x3584x3584)
        ("rows-m1-64-v19-cluster-*.csv", "CC", {4: 1.08, 8: 1.001, 16: 1.001, 32: 1.01, 64: 1.001}),
        # B = W^T at 33-64 rows: v18 over many tiles, where v19 was up to 3% faster on three
        ("rows-bcol-m1-64-v19-cluster-*.csv", "CF", {4: 1.04, 8: 1.02, 16: 1.001, 32: 1.001, 64: 1.04}),
        ("narrow-n1-16-v19-cluster-*.csv", "CC", {4: 1.04, 8: 1.02, 16: 1.001}),  # few columns
    ],
)
def test_select_fp32_decode_matches_the_sweep(pattern, order, slack):
    # Auto's pick for at most 32 rows or 16 columns (v19; v19 or v12 at 17-32 rows) against the
    # fastest of v10, v12, v18 and v19 on every measured shape (H100, 132 SMs; N or M
    # 1024-28672, K 3584-14336), within the slack of its band of rows (columns).
    points = _v19_sweeps(pattern)
    assert len(points) >= 12
    checked = 0
    for (m, n, k), times in points.items():
        if n == 1 and m > 1:  # one column: runs as one row (select's reading), v19 as transposed
            assert (
                fastgemm.select(m, n, k, "float32", cc=90, order=order).kernel.name
                == "sgemm_v19_split_k_ring"
            )
            continue
        short = min(m, n)
        band = slack.get(next(b for b in (4, 8, 16, 32, 64, 1 << 62) if short <= b))
        if band is None:
            continue  # a band this sweep was not taken for (v19 then had no 32-row tiles)
        if _v20_retimed(m, n, k, order, timed=V20 in times):
            continue  # test_select_fp32_short_side_v20_follows_the_recheck
        if _v21_rows_retimed(m, n, k, order, 16):
            continue  # test_select_fp32_v21_rows_follows_the_sweeps
        _auto_within({(m, n, k): times}, 16, lambda _, band=band: band, order)
        checked += 1
    assert checked >= 12


def _v12_v16_v18_sweeps() -> dict[tuple[int, int, int], dict[str, float]]:
    """Device times (us) of v12, v16 and v18 (and v20) on 33-192 rows and on prefills of 128-1024
    rows, and deep K over few tiles (deep-v20-*). v18's
    times count from the sweeps taken since its 64-wide tiles run three blocks per SM up to 768
    rows (rows-v18-blocks3-*, rows-v18-wide-*), and from the older ones at 33-64 rows only (its
    rule there stayed and three blocks made it faster still) and past 768 rows (its 128x128
    tile, unchanged)."""
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    points: dict[tuple[int, int, int], dict[str, float]] = {}
    patterns = (
        "rows-m33-127-*.csv",
        "rows-m96-127-*.csv",
        "prefill-v18-*.csv",
        "prefill-m144-176-float32-*.csv",
        "rows-m80-192-float32-*.csv",
        "prefill-m129-192-float32-*.csv",
        "rows-m72-128-v18-float32-*.csv",
        "rows-m65-191-inside-float32-*.csv",
        "rows-m65-160-inside-float32-*.csv",
        "rows-v18-blocks3-m33-64-float32-*.csv",
        "rows-v18-blocks3-m65-192-float32-*.csv",
        "rows-v18-blocks3-deep-m96-192-float32-*.csv",
        "rows-v18-wide-m256-1024-float32-*.csv",
        "deep-v20-float32-*.csv",  # v20 beside v12, v16 and v18 (its 65-row and larger points)
    )
    for pattern in patterns:
        for path in sorted(sweeps.glob(pattern)):
            for row in csv.DictReader(path.read_text().splitlines()):
                shape = (int(row["M"]), int(row["N"]), int(row["K"]))
                if not row["candidate"].startswith("sgemm_"):
                    continue
                if path.name.startswith("deep-v20-") and shape[0] < 65:
                    continue  # 33-64 rows: auto's v19 there was not a candidate of that sweep
                if (
                    row["candidate"] == "sgemm_v18_split_k_multistage"
                    and 64 < min(shape[:2]) <= 768
                    and "-blocks3-" not in path.name
                    and "-wide-" not in path.name
                ):
                    continue
                points.setdefault(shape, {})[row["candidate"]] = float(row["us"])
    return points


def test_select_fp32_deep_few_tiles_runs_v20_where_the_sweep_says():
    # results/sweeps/deep-v20-float32-*: wherever auto runs a kernel that sweep timed, it is within
    # 2% of the fastest timed there, and on every point of at most 4 tiles of 128x128 with at least
    # 33 rows and columns that is v20 (its split of up to 256 shares).
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    points: dict[tuple[int, int, int], dict[str, float]] = {}
    for path in sorted(sweeps.glob("deep-v20-float32-*.csv")):
        for row in csv.DictReader(path.read_text().splitlines()):
            if row["candidate"].startswith("sgemm_"):
                points.setdefault((int(row["M"]), int(row["N"]), int(row["K"])), {})[row["candidate"]] = (
                    float(row["us"])
                )
    assert len(points) >= 60
    checked = few = on_v21 = 0
    for (m, n, k), times in points.items():
        name = fastgemm.select(m, n, k, "float32", cc=90).kernel.name
        if -(-m // 128) * -(-n // 128) <= 4 and min(m, n) >= 33:
            assert name == "sgemm_v20_split_k_reduce", (m, n, k)
            few += 1
        if name in times and not _v20_retimed(m, n, k):
            assert times[name] <= 1.02 * min(times.values()), ((m, n, k), name, times)
            checked += 1
        elif name == V21:  # not timed here: test_select_fp32_v21_follows_the_sweeps
            on_v21 += 1
    assert checked >= 30 and few >= 20 and checked + on_v21 >= 45


def test_select_fp32_six_tiles_follow_the_sweeps():
    # The rules for at most SMs/22 tiles of 128x128 (H200 sweeps, results/sweeps/pad-*half-edge-
    # deep-float32-*, pad-*six-tiles-*): v20 for at least 129 rows and columns with K >= 2048
    # (fitted to half-edge-deep, K >= 4096, v18 before, and six-tiles-short-k, K 1080-3728, v12
    # before; checked on six-tiles-check-* and -check-b-*), and before it v21 for 257-384 rows by
    # 129-192 columns with K >= 6144 (fitted to six-tiles-tall; on six-tiles-tall-check-*, taken
    # with the rule, at least 1.1x faster than v20 wherever it runs). Every point they move is of
    # their family and at least 1.1x faster on the kernel it now runs (1.2x for v20); every other
    # point keeps what auto ran when the sweep was taken; on the other check sweeps v20 is at
    # least 1.1x faster than v18 wherever it runs (1.35x in the geometric mean).
    if not any(k.name == "sgemm_v20_split_k_reduce" for k in fastgemm.kernels("float32")):
        pytest.skip("no sm_90 code in this build")
    v20 = "sgemm_v20_split_k_reduce"
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    paths = sorted(sweeps.glob("pad-*half-edge-deep-float32-*.csv")) + sorted(
        sweeps.glob("pad-*six-tiles-*float32-*.csv")
    )
    assert len(paths) == 10
    gains: dict[str, list[float]] = {v20: [], V21: []}
    held: list[float] = []
    tall: list[float] = []
    for path in paths:
        times, ran = _csv_sweep_file(path)
        order = "CF" if "-bcol-" in path.name else "CC"
        for (m, n, k), t in times.items():
            name = fastgemm.select(m, n, k, "float32", cc=90, order=order).kernel.name
            was = ran[(m, n, k)]
            if name != was:
                assert -(-m // 128) * -(-n // 128) <= 6 and min(m, n) >= 129, (m, n, k)
                if name == V21:
                    assert was == v20 and 257 <= m <= 384 and n <= 192 and k >= 6144, (m, n, k)
                else:
                    assert name == v20 and was in (V18_ROWS, "sgemm_v12_split_k_narrow"), (m, n, k)
                    assert k >= 2048, (m, n, k)
                gains[name].append(t[was] / t[name])
                assert gains[name][-1] > (1.1 if name == V21 else 1.2), (path.name, (m, n, k), t)
            if "-tall-check-" in path.name:
                sel = fastgemm.select(m, n, k, "float32", cc=90, order=order)
                if "129-192 columns over at most SMs/22 tiles" in sel.reason:
                    tall.append(t[v20] / t[V21])
                    assert tall[-1] > 1.1, ((m, n, k), t)
            elif "-check-" in path.name and name == v20:
                held.append(t[V18_ROWS] / t[name])
                assert held[-1] > 1.1, ((m, n, k), t)
    assert _faster(gains[v20], 20, 1.35), gains
    assert _faster(gains[V21], 15, 1.15), gains
    assert _faster(held, 40, 1.35), held
    assert _faster(tall, 10, 1.15), tall
    # The v21 rule states its rows, three rows of tiles (read from the table: select() takes no
    # SM count), so that on 114 SMs (SMs/33 = 3 tiles) the 2x2 outputs of 193-256 rows stay v20's
    # (236x138x7904: v21 at 0.87x on the H200).
    (rule,) = [r for r in dispatch.AUTO_RULES["float32"] if "129-192 columns over at most SMs/22" in r[1]]
    assert (rule[RULE_FIELDS.index("min_m")], rule[RULE_FIELDS.index("max_m")]) == (257, 384), rule


def _sweep_rows(pattern: str) -> list[dict]:
    """The rows of the JSON sweeps under results/sweeps/ named by `pattern`."""
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    return [r for p in sorted(sweeps.glob(pattern)) for r in json.loads(p.read_text())["results"]]


def _order(row: dict) -> str:
    """A sweep row's operand layouts as select()'s order: "C" row-major, "F" column-major."""
    return ("F" if row["a_col"] else "C") + ("F" if row["b_col"] else "C")


def _select_row(row: dict, dtype: str, **kw):
    """select() on sm_90 for a sweep row's problem and operand layouts."""
    return fastgemm.select(row["M"], row["N"], row["K"], dtype, cc=90, order=_order(row), **kw)


def _faster(gains: list[float], least: int, geomean: float) -> bool:
    """At least `least` points, whose time ratios have at least this geometric mean."""
    return len(gains) >= least and math.prod(gains) ** (1 / len(gains)) >= geomean


def test_select_fp16_deep_small_outputs_follow_the_v35_v36_sweep():
    # results/sweeps/deep-small-v35-v36-*: on the points that auto now sends to v35 or v36, the
    # kernel it runs is 1.2x faster than the one it ran before (the sweep's "auto", geometric
    # mean) and never more than 10% slower; from K = 16384 on few tiles it is one of them.
    rows = _sweep_rows("deep-small-v35-v36-float16-*.json")
    assert len(rows) >= 100
    gains = []
    for r in rows:
        name = _select_row(r, "float16").kernel.name
        if r["K"] >= 16384 and -(-r["M"] // 64) * -(-r["N"] // 64) <= 8:
            assert name in ("hgemm_v35_split_k_reduce", "hgemm_v36_split_k_reduce_wide"), r
        if name in ("hgemm_v35_split_k_reduce", "hgemm_v36_split_k_reduce_wide"):
            gains.append(r["auto"] / r[name])
            assert gains[-1] > 0.9, (name, r)
    assert _faster(gains, 25, 1.2)
    # The suite's decode and deep-K shapes keep their kernels.
    assert fastgemm.select(1, 4096, 14336, "float16", cc=90).kernel.name == "hgemm_v40_split_k_deep_ring"
    assert fastgemm.select(512, 512, 32768, "float16", cc=90).kernel.name == "hgemm_v28_split_k_global_narrow"


def test_select_fp16_decode_band_follows_the_split_fill_sweep():
    # results/sweeps/rows-b2-*, rows-bcol-b2-* (H200, 132 SMs): decode outputs of 66-111 tiles of
    # 16x64, v40 (s0) against v22 with two shares forced (s2, what split_fill gives it there),
    # and the check on other shapes (b2-check: v22 by name, split_fill's two shares). Where auto
    # now sends them to v22 it runs 1.05x faster than v40 (geometric mean), never more than 3%
    # slower; v40 keeps the rest, where v22 was not faster overall.
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"

    def times(name: str, kernel: str) -> dict:
        with open(sweeps / name, newline="") as f:
            return {
                (int(r["M"]), int(r["N"]), int(r["K"])): float(r["us"])
                for r in csv.DictReader(f)
                if r["candidate"] == kernel
            }

    gains, kept = [], []
    for v40_file, v22_file, order, dtype in (
        ("rows-b2-s0-float16", "rows-b2-s2-float16", "CC", "float16"),
        ("rows-bcol-b2-s0-float16", "rows-bcol-b2-s2-float16", "CF", "float16"),
        ("rows-b2-check-float16", "rows-b2-check-float16", "CC", "float16"),
        ("rows-bcol-b2-check-bfloat16", "rows-bcol-b2-check-bfloat16", "CF", "bfloat16"),
    ):
        v40 = times(f"{v40_file}-nvidia-h200.csv", "hgemm_v40_split_k_deep_ring")
        two = times(f"{v22_file}-nvidia-h200.csv", "hgemm_v22_split_k")
        assert len(v40) >= 12 and v40.keys() == two.keys()
        for (M, N, K), t in v40.items():
            name = fastgemm.select(M, N, K, dtype, cc=90, order=order).kernel.name
            assert name in ("hgemm_v22_split_k", "hgemm_v40_split_k_deep_ring"), (M, N, K, name)
            if name == "hgemm_v22_split_k":
                gains.append(t / two[(M, N, K)])
                assert gains[-1] > 0.97, (M, N, K)
            else:
                kept.append(t / two[(M, N, K)])
    assert _faster(gains, 60, 1.05)
    assert math.prod(kept) ** (1 / len(kept)) < 1.0


def test_select_fp16_unaligned_small_outputs_follow_the_v37_v38_sweep():
    # results/sweeps/unaligned-small-v37-v38-*: on the under-aligned points that auto sends to v37
    # or v38 (read in place), the kernel it runs is 1.3x faster than what auto ran before (v34 or
    # the padded path; geometric mean), on at least 90 of the 120 points.
    rows = _sweep_rows("unaligned-small-v37-v38-float16-*.json")
    assert len(rows) >= 100
    gains = []
    for r in rows:
        sel = _select_row(r, "float16", alignment=2)
        if sel.kernel.name in (
            "hgemm_v37_split_k_reduce_unaligned",
            "hgemm_v38_split_k_reduce_wide_unaligned",
        ):
            assert not sel.pad, r
            gains.append(r["auto"] / r[sel.kernel.name])
    assert _faster(gains, 90, 1.3)
    # Aligned operands never take them; the suite's misaligned shapes keep their kernels.
    assert fastgemm.select(10, 16, 30080, "float16", cc=90).kernel.name == "hgemm_v35_split_k_reduce"
    for shape in ((127, 4099, 2053), (33, 12345, 777), (1001, 999, 1003)):
        assert (
            fastgemm.select(*shape, "float16", cc=90, alignment=2).kernel.name
            == "hgemm_v34_split_k_unaligned"
        )


def test_select_half_v37_decode_rows_follow_the_sweep():
    # results/sweeps/pad-unal-rows-v37-* (H200): 1-16 rows on (N, K) with N off a multiple of 8
    # (an under-aligned row-major B), v34 and v37 by name beside auto as it was (v34, or the
    # padded path past SMs tiles). Where auto now runs v37 on points the sweep's auto ran
    # otherwise, v37 is 1.25x faster in the geometric mean and never more than 5% slower; where it
    # keeps v34 on 2-16 rows (K < 512), v34 is within 12% of v37 (one row of at most 3072 columns
    # keeps v34 by the H100 sweep of the rules above, unaligned-small-v37-v38-*).
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    v34, v37 = "hgemm_v34_split_k_unaligned", "hgemm_v37_split_k_reduce_unaligned"
    gains: list[float] = []
    kept = 0
    for path, dtype in (
        (sweeps / "pad-unal-rows-v37-float16-nvidia-h200.csv", "float16"),
        (sweeps / "pad-unal-rows-v37-check-bfloat16-nvidia-h200.csv", "bfloat16"),
    ):
        points, before = _csv_sweep_file(path)
        assert len(points) >= 48
        for shape, times in points.items():
            sel = fastgemm.select(*shape, dtype, cc=90)
            assert not sel.pad and sel.kernel.name in (v34, v37), (shape, sel)
            if sel.kernel.name == v37 and before[shape] != v37:
                assert shape[2] >= 512 and (shape[0] > 1 or shape[1] > 3072), shape
                assert times[v37] <= 1.05 * times["auto"], (shape, times)
                gains.append(times["auto"] / times[v37])
            elif sel.kernel.name == v34 and shape[0] > 1:  # one row below 3073 columns: H100's
                kept += 1
                assert times[v34] <= 1.12 * times[v37], (shape, times)
    assert _faster(gains, 90, 1.25) and kept >= 20, (len(gains), kept)


def test_select_fp16_unaligned_narrow_follows_the_v37_v38_sweep():
    # results/sweeps/unaligned-narrow-v37-v38-*: auto runs tall narrow under-aligned outputs of
    # 2-64 columns transposed on v37 / v38 (where v34, padded v21 / v24 ran them), 1.8x faster
    # (geometric mean of the "^T" times against the sweep's auto) on at least 40 of 120 points.
    rows = _sweep_rows("unaligned-narrow-v37-v38-float16-*.json")
    assert len(rows) >= 100
    gains = []
    for r in rows:
        sel = _select_row(r, "float16", alignment=2)
        if sel.flip:
            assert 2 <= r["N"] <= 64 and not sel.pad, (r, sel)
            assert sel.kernel.name == (
                "hgemm_v37_split_k_reduce_unaligned"
                if r["N"] <= 16
                else "hgemm_v38_split_k_reduce_wide_unaligned"
            )
            gains.append(r["auto"] / r[sel.kernel.name + "^T"])
    assert _faster(gains, 40, 1.7)
    # Aligned ones keep the decode rungs transposed, one column keeps what it ran.
    assert fastgemm.select(4096, 16, 4096, "float16", cc=90).kernel.name == "hgemm_v40_split_k_deep_ring"
    assert not fastgemm.select(5000, 1, 399, "float16", cc=90, alignment=2).flip


def test_select_fp16_in_place_where_the_padded_path_ran():
    # results/sweeps/unaligned-padded-*: random under-aligned shapes that auto padded, with the
    # in-place kernels timed beside the padded path. Where auto now reads them in place (v37 for
    # 2-16 rows with an under-aligned B; v34 below the padded path's size with an under-aligned C
    # and an aligned B; v39 for K of 129-288 with an under-aligned B, from 129 rows and columns
    # over at most SMs/1.25 tiles past K = 176) it is faster on every such point (select's
    # default alignment: each fresh operand's own, as the sweep's operands were). Where it still
    # pads, 15 of the 100 points had an in-place kernel more than 1.1x faster (not fitted yet).
    if not any(k.name == "hgemm_v34_split_k_unaligned" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    rows = _sweep_rows("unaligned-padded-float16-*.json")
    assert len(rows) >= 100 and all(r["auto_pad"] for r in rows)
    gains: dict[str, list[float]] = {}
    for r in rows:
        sel = _select_row(r, "float16")
        if sel.pad:
            continue
        name = sel.kernel.name + ("^T" if sel.flip else "")
        gains.setdefault(sel.kernel.name, []).append(r["auto"] / r[name])
        assert gains[sel.kernel.name][-1] > 1.1, (r, sel)
    assert _faster(gains.pop("hgemm_v37_split_k_reduce_unaligned"), 4, 1.9)
    assert _faster(gains.pop("hgemm_v34_split_k_unaligned"), 10, 1.5)
    assert _faster(gains.pop("hgemm_v39_unaligned_row_store"), 6, 1.25)
    assert not gains
    # Only A under-aligned on a decode shape: its copy is small and the padded path stays.
    assert fastgemm.select(7, 6704, 19574, "float16", cc=90).pad


@pytest.mark.parametrize("kind, least, gain", [("large", 70, 1.7), ("short", 80, 1.5)])
def test_select_fp16_unaligned_short_k_follows_the_v39_sweeps(kind, least, gain):
    # results/sweeps/unaligned-{large,short}-v39-*: auto sends the under-aligned points with
    # K <= 128 and at least 2 rows to v39 (read and stored in place), faster than what it ran
    # before (the padded path, v34 or v01; geometric mean); the others keep their kernels. With
    # K of 129-288 v39's later rules (fitted to unaligned-padded-*) take some that the rules
    # before them leave: here never more than 5% slower than what ran.
    rows = _sweep_rows(f"unaligned-{kind}-v39-float16-*.json")
    assert len(rows) >= 100
    gains, later = [], []
    for r in rows:
        sel = _select_row(r, "float16", alignment=2)
        if sel.kernel.name == "hgemm_v39_unaligned_row_store":
            assert not sel.pad and r["K"] <= 288 and r["M"] >= 2, r
            if r["K"] <= 128:
                gains.append(r["auto"] / r[sel.kernel.name])
            else:
                assert "K of 129-176" in sel.reason or "K of 177-288" in sel.reason, (r, sel)
                later.append(r["auto"] / r[sel.kernel.name])
                assert later[-1] > 0.95, r
        else:  # or, later, a narrow output run transposed (its own sweep)
            assert r["K"] > 128 or r["M"] == 1, r
            # or v32 on the padded copies' short K (its later rule: pad-v32-short-k-*), or v43 on
            # few of their tiles (its later rules: pad-mid-v43-*), or v44 / v21 by the wave rules
            # (pad-*mid-v44-*)
            short_v32 = "leave no last round to split" in sel.reason
            wave = sel.kernel.name in (V44, "hgemm_v21_narrow_tile") and WAVE_WHY in sel.reason.split(";")[0]
            moved = short_v32 or wave or sel.kernel.name == "hgemm_v43_cluster_64x128" or _r41_rule(sel)
            assert sel.kernel.name == r["auto_kernel"] or sel.flip or moved, (r, sel)
    assert _faster(gains, least, gain) and len(later) >= 3


def test_select_fp32_short_k_follows_the_v16_sweep():
    # results/sweeps/short-k-float32-*: the points with K <= 512 and an under-aligned operand
    # that auto ran on v09 now run v16, 1.5x faster (geometric mean); the others keep their
    # kernels (v09 where every operand is 16-byte aligned).
    rows = _sweep_rows("short-k-float32-*.json")
    assert len(rows) >= 100
    gains = []
    for r in rows:
        sel = _select_row(r, "float32")
        lds = (r["M"] if r["a_col"] else r["K"], r["K"] if r["b_col"] else r["N"], r["N"])
        if sel.kernel.name == V18_ROWS and r["auto_kernel"] != V18_ROWS:
            # the half-edge rule (tiles-edge-float32-*), which came after: faster here too
            assert _half_edge(r) and r[V18_ROWS] < r[r["auto_kernel"]], (r, sel)
            if r["auto_kernel"] == "sgemm_v09_cp_async":
                gains.append(r["sgemm_v09_cp_async"] / r[V18_ROWS])
        elif r["auto_kernel"] == "sgemm_v09_cp_async" and any(ld % 4 for ld in lds):
            assert sel.kernel.name == "sgemm_v16_split_k_waves" and not sel.pad, (r, sel)
            gains.append(r["sgemm_v09_cp_async"] / r[sel.kernel.name])
        else:
            assert sel.kernel.name == r["auto_kernel"], (r, sel)
    assert _faster(gains, 60, 1.5)


def _half_edge(row: dict) -> bool:
    """The half-edge rule's shapes: a shorter side of at most 768 that ends 1-64 past a multiple
    of 128, and K >= 256."""
    side = min(row["M"], row["N"])
    return side <= 768 and 0 < side % 128 <= 64 and row["K"] >= 256


def _sweep_alignment(row: dict) -> int:
    """The alignment narrow_fp32.py passed to select() for a row: 4 bytes where M, N or K is not
    a multiple of 4 elements, else 16."""
    return 4 if (row["K"] % 4 or row["N"] % 4 or row["M"] % 4) else 16


def test_select_fp32_tiles_follow_the_sweep():
    # results/sweeps/tiles-float32-* (random shapes that auto ran on a tiled rung, before the
    # rules below): the points auto now sends elsewhere go to v20 (at most 4 tiles of 128x128 with
    # K >= 1024) or v18 (the half-edge rule), each faster than what ran before; 1.35x on the 17
    # not decided by v20's short-side rules (whose v20 times here are of its 128x128 tiles).
    rows = _sweep_rows("tiles-float32-*.json")
    assert len(rows) >= 150
    gains = []
    for r in rows:
        sel = _select_row(r, "float32", alignment=_sweep_alignment(r))
        name = sel.kernel.name
        if _v20_retimed(r["M"], r["N"], r["K"], _order(r), _sweep_alignment(r)):
            continue  # test_select_fp32_short_side_v20_follows_the_recheck
        if name == V21:
            continue  # not timed here: test_select_fp32_v21_follows_the_sweeps
        if name != r["auto_kernel"]:
            tiles = -(-r["M"] // 128) * -(-r["N"] // 128)
            if name == V20:
                few = tiles <= 4 and r["K"] >= 1024 and min(r["M"], r["N"]) >= 33
                assert few or SHORT_SIDE in sel.reason, r
            else:
                assert (name == V18_ROWS and _half_edge(r)) or V16_UNDER_ALIGNED in sel.reason, (name, r)
            gains.append(r[r["auto_kernel"]] / r[name])
            assert gains[-1] > 1, (name, r)
    assert _faster(gains, 15, 1.3)


def test_select_fp32_half_edge_follows_the_sweep():
    # results/sweeps/tiles-edge-float32-* (shorter side 65-768, auto with the half-edge rule):
    # where auto runs v18 by that rule (35 points), it is 1.19x faster than the fastest of the
    # 128-wide rungs v09, v16 and v17 on each point (geometric mean), and at most 12% slower on
    # any (deep K on few tiles).
    rows = _sweep_rows("tiles-edge-float32-*.json")
    assert len(rows) >= 100
    gains = []
    for r in rows:
        sel = _select_row(r, "float32", alignment=_sweep_alignment(r))
        if "shorter side, at most 768, ends 1-64" in sel.reason:  # the rule's words
            assert sel.kernel.name == V18_ROWS and _half_edge(r), (r, sel)
            wide = min(
                r[k] for k in ("sgemm_v09_cp_async", "sgemm_v16_split_k_waves", "sgemm_v17_multistage")
            )
            gains.append(wide / r[V18_ROWS])
            assert gains[-1] > 0.88, r
    assert _faster(gains, 30, 1.15)


def test_select_fp32_tall_narrow_follows_the_v20_sweep():
    # results/sweeps/narrow-v20-float32-* (v20 on tiles along the short side; auto as before its
    # rules for 16 and for 17-128 rows or columns): where auto now runs v20 on an output that it
    # ran another kernel on, v20 was faster on every point (23 points, 1.68x geometric mean). The
    # later v16 rule for under-aligned outputs with a short side of 65-128 moved two more (1.05x
    # and 0.93x: test_select_fp32_v16_under_aligned_follows_the_sweeps).
    rows = _sweep_rows("narrow-v20-float32-*.json")
    assert len(rows) >= 50
    gains = []
    for r in rows:
        sel = _select_row(r, "float32", alignment=_sweep_alignment(r))
        name = sel.kernel.name
        if _v21_rows_retimed(r["M"], r["N"], r["K"], _order(r), _sweep_alignment(r)):
            continue  # not timed here: test_select_fp32_v21_rows_follows_the_sweeps
        if name != r["auto_kernel"]:
            assert name == V20 or V16_UNDER_ALIGNED in sel.reason, (name, r)
            assert r[name] < (1 if name == V20 else 1.08) * r["auto"], (name, r)
            gains.append(r["auto"] / r[name])
    assert _faster(gains, 20, 1.5)


def test_select_fp32_v21_follows_the_sweeps():
    # v21 for outputs whose shorter side is 129-768 over at most SMs/4.7 tiles of 128x128 with K >=
    # 2048, every operand 16-byte aligned. Fitted to results/sweeps/deep-aligned-s18-* (random
    # aligned shapes with a deep K; auto as before the rule): 1.19x faster than auto's kernel on
    # the 21 points it takes (geometric mean), 12% slower at worst. Checked on the problems of the
    # other committed fp32 sweeps that it takes (v21-recheck-*: 55 points, v12, v16, v18, v20 and
    # v21 timed anew): 1.17x faster than the kernel the rules without it run, 7% slower at worst,
    # and the fastest timed or within 7% everywhere.
    rule = next(r for r in dispatch.AUTO_RULES["float32"] if r[0] == V21)
    before = [r for r in dispatch.AUTO_RULES["float32"] if r is not rule]
    fitted = []
    for r in _sweep_rows("deep-aligned-s18-float32-*.json"):
        sel = _select_row(r, "float32", alignment=_sweep_alignment(r))
        if sel.kernel.name == V21 and V21_ROWS not in sel.reason:  # the 33-64 rule: its own test
            fitted.append(r["auto"] / r[V21])
            assert fitted[-1] > 0.85, r
    assert _faster(fitted, 20, 1.15)
    rechecked = []
    for r in _sweep_rows("v21-recheck-float32-*.json"):
        m, n, k, order, align = r["M"], r["N"], r["K"], _order(r), _sweep_alignment(r)
        sel = _select_row(r, "float32", alignment=align)
        assert sel.kernel.name == V21, r
        was = r[_first_runnable_rule("float32", 90, m, n, k, align, order, before)]
        rechecked.append(was / r[V21])
        assert rechecked[-1] > 0.9, r
        others = [v for c, v in r.items() if c.startswith("sgemm_") and "_err" not in c and v]
        assert r[V21] <= 1.08 * min(others), r
    assert _faster(rechecked, 50, 1.12)


def test_select_fp32_v21_rows_follows_the_sweeps():
    # v21 for outputs whose shorter side is 33-64 over 25 to SMs/3 tiles of 128x128 (past v20's
    # short-side rule) with K >= 2048, every operand 16-byte aligned, or up to SMs/2.4 tiles with
    # an under-aligned one. Against the kernel the rules without them run (v18, or v12 on tall
    # outputs with K < 4096), on the points they take: aligned, deep-short33-128-aligned-s19-*
    # (H100) 1.11x over 24 points, deep-aligned-s18-* (H100) 1.06x over 7, and the problems of
    # every committed fp32 sweep in the region timed again (v21-rows-recheck-*; about half of
    # them are the fitted sweeps' own problems) 1.11x over 52 on an H200 and 1.09x over 52 on an
    # H100; under-aligned, deep-short33-64-s20-* (H100) 1.09x over 17, deep-s16-* / deep-s17-*
    # 1.10x over 14, and the recheck (H100) 1.08x over 47. 11% slower at worst. Over more tiles
    # they were level with v18 or slower and are not taken.
    rules = [r for r in dispatch.AUTO_RULES["float32"] if r[0] == V21 and V21_ROWS in r[1]]
    assert len(rules) == 2
    before = [r for r in dispatch.AUTO_RULES["float32"] if r not in rules]
    for pattern, least, geomean in (
        ("deep-short33-128-aligned-s19-float32-*.json", 20, 1.08),
        ("deep-aligned-s18-float32-*.json", 5, 1.03),
        ("v21-rows-recheck-float32-*.json", 140, 1.07),
        ("deep-short33-64-s20-float32-*.json", 15, 1.06),
        ("deep-s1[67]-float32-*.json", 12, 1.06),
    ):
        gains = []
        for r in _sweep_rows(pattern):
            m, n, k, order, align = r["M"], r["N"], r["K"], _order(r), _sweep_alignment(r)
            if not _v21_rows_retimed(m, n, k, order, align):
                continue
            tiles = -(-m // 128) * -(-n // 128)
            assert 33 <= min(m, n) <= 64 and 24 < tiles <= 132 / (3 if align == 16 else 2.4) and k >= 2048, r
            was = _first_runnable_rule("float32", 90, m, n, k, align, order, before)
            gains.append(r[was] / r[V21])
            assert gains[-1] > 0.88, (was, r)
        assert _faster(gains, least, geomean), (pattern, gains)
    # The suite's 64-row decode shapes with K = 4096 and 14336 over 32 tiles.
    for k in (4096, 14336):
        assert fastgemm.select(64, 4096, k, "float32", cc=90).kernel.name == V21


def test_select_fp32_v16_under_aligned_follows_the_sweeps():
    # v16 for under-aligned outputs whose shorter side is 65-128 (K >= 4096, at most SMs/2 tiles of
    # 128x128), fitted to results/sweeps/deep-s16-* and deep-s17-*: on every problem of the
    # committed fp32 sweeps that it takes and that timed v16 and the kernel the rules without it
    # run (22 points), 1.12x faster (geometric mean), 7% slower at worst.
    rule = next(r for r in dispatch.AUTO_RULES["float32"] if V16_UNDER_ALIGNED in r[1])
    before = [r for r in dispatch.AUTO_RULES["float32"] if r is not rule]
    v16, gains, seen = "sgemm_v16_split_k_waves", [], set()
    for path in sorted((Path(__file__).resolve().parents[1] / "results" / "sweeps").glob("*float32*.json")):
        data = json.loads(path.read_text())
        for r in data["results"] if isinstance(data, dict) else data:
            if "a_col" not in r:
                continue
            m, n, k, order, align = r["M"], r["N"], r["K"], _order(r), _sweep_alignment(r)
            if V16_UNDER_ALIGNED not in _select_row(r, "float32", alignment=align).reason:
                continue
            was = _first_runnable_rule("float32", 90, m, n, k, align, order, before)
            if (m, n, k, order) in seen or not r.get(v16) or not r.get(was):
                continue
            seen.add((m, n, k, order))
            gains.append(r[was] / r[v16])
            assert gains[-1] > 0.9, r
    assert _faster(gains, 20, 1.08)


def test_select_fp32_rows_33_192_matches_the_sweep():
    # v18 (64x128 tiles at three blocks per SM up to 192 rows) for 33-64 rows, and for 65-192 rows
    # with at least 1024 columns and K >= 1024 (v16 at 65-128 rows over at most 16 tiles with K >=
    # 16384): the fastest of v12, v16 and v18 on every point timed (within 0.5%), but at 128 rows
    # with K >= 12288, where v16's unpadded 128-row tile was up to 9% faster on 4 points (and v18
    # up to 6% on 4 others). Elsewhere at 65-192 rows auto (v12 or v16) is within 2% of the
    # fastest; past 192 rows within 0.5% where it runs v18 (193-768 rows), 13% elsewhere.
    v18 = "sgemm_v18_split_k_multistage"
    points = {
        shape: t for shape, t in _v12_v16_v18_sweeps().items() if not _v20_retimed(*shape, timed=V20 in t)
    }
    picks = {shape: fastgemm.select(*shape, "float32", cc=90).kernel.name for shape in points}
    # auto runs v18 where no sweep timed it at three blocks per SM: left out
    # (nor v21, which took some later: test_select_fp32_v21_follows_the_sweeps)
    missing = {shape for shape in points if picks[shape] not in points[shape]}
    assert all(picks[shape] in (v18, V21) for shape in missing), missing
    for shape in missing:
        del points[shape]
    assert len(points) >= 100
    on_v18 = {shape: times for shape, times in points.items() if picks[shape] == v18 and shape[0] <= 192}
    # (at 33-64 rows over 25 to SMs/3 tiles v21 took 7 of v18's points: test_select_fp32_v21_rows_...)
    assert (
        sum(65 <= shape[0] <= 192 for shape in on_v18) >= 55 and sum(shape[0] <= 64 for shape in on_v18) >= 15
    )
    deep = {shape: on_v18.pop(shape) for shape in list(on_v18) if shape[0] == 128 and shape[2] >= 12288}
    assert len(deep) >= 6
    _auto_within(deep, None, lambda m: 1.095)
    _auto_within(on_v18, None, lambda m: 1.005)
    mid = {shape: times for shape, times in points.items() if 65 <= shape[0] <= 192 and picks[shape] != v18}
    assert len(mid) >= 5
    _auto_within(mid, None, lambda m: 1.02)
    rest = {shape: times for shape, times in points.items() if shape[0] > 192}
    # 193-768 rows with N >= 3584 and 4096 <= K < 16384: v18's 64-wide tiles, the fastest
    wide = {shape: times for shape, times in rest.items() if picks[shape] == v18}
    assert len(wide) >= 20 and all(m <= 768 for m, _, _ in wide)
    _auto_within(wide, None, lambda m: 1.005)
    _auto_within(rest, None, lambda m: 1.13)


@pytest.mark.parametrize(
    "dtype, name, n",
    [
        ("float32", "sgemm_v19_split_k_ring", 16),
        ("float32", "sgemm_v19_split_k_ring", 4),
        ("float16", "hgemm_v40_split_k_deep_ring", 16),
        ("float16", "hgemm_v41_split_k_32rows_deep_ring", 32),
    ],
)
def test_select_narrow_transposed(dtype, name, n):
    # Few columns: the transposed problem (few rows) on a split-K kernel, and the reason says so;
    # no flip before sm_90 (where those kernels are not preferred) or for a square output.
    sel = fastgemm.select(4096, n, 4096, dtype, cc=90)
    assert sel.kernel.name == name and sel.flip, sel
    assert f"runs the transposed problem C^T = B^T A^T ({n}x4096, C written column-major)" in sel.reason
    assert not fastgemm.select(4096, n, 4096, dtype, cc=80).flip
    assert not fastgemm.select(n, 4096, 4096, dtype, cc=90).flip
    assert not fastgemm.select(4096, 4096, 4096, dtype, cc=90).flip


def test_select_prefill_long_k():
    # A prefill of a few hundred rows with a long K (about one 128x128 tile per SM): v24's tiles
    # from K = 4096, v28's split from K = 8192; a short K keeps v21, more tiles take v32's 128x192
    # ones (128 of them for 512 x 6144).
    sel = fastgemm.select(512, 4096, 6144, "float16", cc=90)
    assert sel.kernel.name == "hgemm_v24_wgmma_split_k", sel
    assert "K >= 4096" in sel.reason
    sel = fastgemm.select(512, 4096, 14336, "float16", cc=90)
    assert sel.kernel.name == "hgemm_v28_split_k_global_narrow", sel
    assert "where v24 runs one block per tile" in sel.reason
    assert fastgemm.select(512, 4096, 2048, "float16", cc=90).kernel.name == "hgemm_v21_narrow_tile"
    assert fastgemm.select(512, 6144, 4096, "float16", cc=90).kernel.name == "hgemm_v32_split_last_round_192"


@pytest.mark.parametrize(
    "dtype, name", [("float16", "hgemm_v40_split_k_deep_ring"), ("float32", "sgemm_v19_split_k_ring")]
)
def test_select_one_column(dtype, name):
    # N = 1: contiguous B and C are columns, so a call runs C^T = B^T A^T, one row (decode); the
    # answer says so. An explicit alignment keeps the plain reading.
    sel = fastgemm.select(4096, 1, 4096, dtype, cc=90)
    assert sel.kernel.name == name and not sel.flip, sel
    assert sel.reason.startswith("an output of one column runs as its transpose, one row of 4096: ")
    unit = 4 if dtype == "float32" else 2
    assert "one column" not in fastgemm.select(4096, 1, 4096, dtype, cc=90, alignment=unit).reason


def _flipped_sweep_points(*patterns: str):
    """(dtype, (M, N, K), microseconds per rung by name) of the narrow sweeps under
    results/sweeps/ matching each pattern (sweep.py's rows; a rung run on C^T counts as itself)."""
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    for pattern in patterns:
        paths = sorted(sweeps.glob(pattern))
        assert paths, pattern
        for path in paths:
            dtype = "bfloat16" if "bfloat16" in path.name else "float16"
            for shape, times in _csv_sweep_file(path)[0].items():
                yield dtype, shape, {c.split(" ")[0]: t for c, t in times.items() if c.startswith("hgemm_v")}


def test_select_flipped_split_sector_narrow_follows_the_sweep():
    # Flipped outputs of 8, 16 and 24 columns over SMs/2 to SMs tiles of the transposed output
    # (results/sweeps/narrow-fit8-*, narrow-fit24-* fp16 and narrow-check8-*, narrow-check24-*
    # bf16; H200, the decode rungs by name on C^T): auto's pick is within 11% of the fastest of
    # them on every such point up to 128 tiles, and 1.1x faster than the one-block-per-SM v40 /
    # v41 in the geometric mean over the points where it takes v22, v26 or v48 instead.
    if not any(k.name == "hgemm_v48_split_k_32rows_stream" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    gains = []
    for dtype, (m, n, k_depth), by_name in _flipped_sweep_points(
        "narrow-fit8-*.csv", "narrow-fit24-*.csv", "narrow-check8-*.csv", "narrow-check24-*.csv"
    ):
        if not 66 < -(-m // 64) <= 128:
            continue
        pick = fastgemm.select(m, n, k_depth, dtype, cc=HOPPER_CC)
        assert pick.flip, (m, n, k_depth)
        assert by_name[pick.kernel.name] <= 1.11 * min(by_name.values()), (
            m,
            n,
            k_depth,
            pick.kernel.name,
        )
        one_block = "hgemm_v40_split_k_deep_ring" if n <= 16 else "hgemm_v41_split_k_32rows_deep_ring"
        if pick.kernel.name != one_block:
            gains.append(by_name[one_block] / by_name[pick.kernel.name])
    assert len(gains) >= 40 and math.exp(sum(map(math.log, gains)) / len(gains)) > 1.1, gains
    # The 8-column rules read B^T's rows: 16 columns (32-byte rows) and a column-major B (B^T
    # K-major, rows of K = 8200 only 16-byte aligned) keep v40 over 80 tiles.
    v40 = "hgemm_v40_split_k_deep_ring"
    assert fastgemm.select(5120, 16, 8192, "float16", cc=HOPPER_CC).kernel.name == v40
    assert fastgemm.select(5120, 8, 8200, "float16", cc=HOPPER_CC, order="CF").kernel.name == v40
    assert fastgemm.select(5120, 8, 8192, "float16", cc=HOPPER_CC).kernel.name == "hgemm_v22_split_k"


def test_select_v49_for_narrow_rows_off_lines_follows_the_sweep():
    # Flipped outputs of 40-56 columns (B^T's rows off whole 128-byte lines) from 4096 rows with
    # K >= 4096 (results/sweeps/narrow-fit49-*, narrow-check49-*, narrow-check56-*; H200): auto
    # takes v49 on every such point measured, and there v49 is within 12% of the fastest rung
    # by name, at most 3% slower than v42 anywhere and 1.3x faster in the geometric mean. 64
    # columns (whole lines) keep v42 / v21; a column-major B (B^T K-major) and K below 4096 keep
    # the rules after it.
    if not any(k.name == "hgemm_v49_split_k_wide_stream" for k in fastgemm.kernels("float16")):
        pytest.skip("no sm_90 code in this build")
    v49, v42 = "hgemm_v49_split_k_wide_stream", "hgemm_v42_split_k_wide_deep_ring"
    gains = []
    for dtype, (m, n, k_depth), by_name in _flipped_sweep_points(
        "narrow-fit49-*.csv", "narrow-check49-*.csv", "narrow-check56-*.csv"
    ):
        pick = fastgemm.select(m, n, k_depth, dtype, cc=HOPPER_CC).kernel.name
        if n in (40, 48, 56) and m >= 4096 and k_depth >= 4096 and -(-m // 64) <= 227:
            assert pick == v49, (m, n, k_depth, pick)
            assert by_name[v49] <= 1.12 * min(by_name.values()), (m, n, k_depth)
            assert by_name[v49] < 1.03 * by_name[v42], (m, n, k_depth)
            gains.append(by_name[v42] / by_name[v49])
        elif n == 64:
            assert pick != v49, (m, n, k_depth)
    assert len(gains) >= 40 and math.exp(sum(map(math.log, gains)) / len(gains)) > 1.3, gains
    # A column-major B whose rows (K = 8200: 16400 bytes) are as off-line as B^T's would be: only
    # B^T's order (K-major) keeps v49 out.
    assert fastgemm.select(8192, 48, 8200, "float16", cc=HOPPER_CC, order="CF").kernel.name != v49
    assert fastgemm.select(8192, 48, 2048, "float16", cc=HOPPER_CC).kernel.name != v49


def test_select_narrow_hgemm_many_tiles():
    # 33..64 columns over many rows: 128x128 tiles (v21) fill the SMs, the transposed v42 (v23's
    # tile) only for few tiles; up to 128 columns v21 rather than v20's half-empty 128x256 tile.
    assert fastgemm.select(16384, 64, 4096, "float16", cc=90).kernel.name == "hgemm_v21_narrow_tile"
    sel = fastgemm.select(8192, 64, 8192, "float16", cc=90)
    assert sel.kernel.name == "hgemm_v42_split_k_wide_deep_ring" and sel.flip
    sel = fastgemm.select(16384, 128, 4096, "float16", cc=90)
    assert sel.kernel.name == "hgemm_v21_narrow_tile", sel
    assert "at most 128 rows or columns" in sel.reason


# --- precision (fp32 on the tensor cores) --------------------------------------------------------


def test_precision_argument_checked(cpu_only):
    with pytest.raises(ValueError, match="precision must be 'ieee', 'tf32x3' or 'tf32', got 'fp64'"):
        fastgemm.sgemm(*operands("float32"), precision="fp64")
    with pytest.raises(TypeError, match="precision must be a str"):
        fastgemm.sgemm(*operands("float32"), precision=3)
    with pytest.raises(ValueError, match="precision 'tf32' is for float32 operands"):
        fastgemm.gemm(*operands("float16"), precision="tf32")
    with pytest.raises(ValueError, match="precision 'tf32x3' is for float32"):
        fastgemm.select(64, 64, 64, "bfloat16", precision="tf32x3")


def test_named_kernel_less_accurate_than_asked_is_refused(cpu_only):
    below = [k for k in fastgemm.kernels("float32") if k.precision != "ieee"]
    if not below:
        pytest.skip("no tensor-core fp32 kernels in this build (sm_90 not built)")
    for k in below:
        with pytest.raises(
            ValueError, match=rf"computes in {k.precision} precision.*precision='{k.precision}'"
        ):
            fastgemm.sgemm(*operands("float32"), kernel=k.name)
    tf32x3 = next(k for k in below if k.precision == "tf32x3")
    with pytest.raises(ValueError, match="computes in tf32x3 precision"):
        fastgemm.sgemm(*operands("float32"), kernel=tf32x3.name, precision="ieee")


def test_precision_rules_refer_to_kernels_of_that_precision():
    table = {k.name: k for k in fastgemm.kernels("float32")}
    assert set(dispatch.PRECISION_RULES) == {"tf32x3", "tf32"}
    for precision, rules in dispatch.PRECISION_RULES.items():
        assert rules, precision
        for name, why, *_ in rules:
            assert why.strip(), name
            if name in table:  # a build without sm_90 lacks them
                assert table[name].precision == precision, (precision, name)


@pytest.mark.parametrize(
    "precision, m, n, k, tensor_cores",
    [
        # test_select_tf32_follows_the_tf32_sweeps, test_select_tf32x3_follows_the_tf32x3_sweeps;
        # 2048x2048x512 from results/precision-*.json (H100).
        ("tf32x3", 1024, 1024, 1024, True),
        ("tf32x3", 768, 1024, 1024, False),
        ("tf32x3", 256, 1024, 4096, False),
        ("tf32x3", 1024, 1024, 65536, False),
        ("tf32x3", 2048, 2048, 256, False),
        ("tf32x3", 2048, 2048, 512, True),
        ("tf32x3", 4096, 4096, 1024, True),
        ("tf32", 512, 512, 512, True),
        ("tf32", 256, 1024, 4096, True),
        ("tf32", 256, 256, 4096, False),
        ("tf32", 256, 256, 8192, True),
        ("tf32", 384, 512, 128, False),
        ("tf32", 1024, 1024, 1024, True),
        ("tf32", 1024, 1024, 65536, True),
    ],
)
def test_select_precision_sizes(precision, m, n, k, tensor_cores):
    if str(HOPPER_CC) not in BUILT_ARCHS:
        pytest.skip("sm_90 not built")
    sel = fastgemm.select(m, n, k, "float32", cc=90, precision=precision)
    assert (sel.kernel.precision == precision) == tensor_cores, sel


def _tensor_core_sweep_picks(precision: str) -> dict[str, list[dict]]:
    """The rows of results/sweeps/<precision>-*-*.json (benchmarks/tf32_sizes.py) by the kernel
    that auto's `precision` runs on sm_90 ("ieee" for fp32 arithmetic)."""
    if str(HOPPER_CC) not in BUILT_ARCHS:
        pytest.skip("sm_90 not built")
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    rows = [
        r for p in sorted(sweeps.glob(f"{precision}-*-*.json")) for r in json.loads(p.read_text())["rows"]
    ]
    assert len(rows) >= 250
    picked: dict[str, list[dict]] = {}
    for r in rows:
        m, n, k = r["shape"]
        kernel = fastgemm.select(m, n, k, "float32", cc=90, precision=precision).kernel
        picked.setdefault(kernel.name if kernel.precision == precision else "ieee", []).append(r)
    return picked


def test_select_tf32_follows_the_tf32_sweeps():
    # results/sweeps/tf32-sizes-* (every pair of sides 128-2048, K 256-4096) and tf32-deep-*
    # (sides 256-2048, K 8192-65536), row-major operands, H100: where auto's "tf32" runs v23 (at
    # most SMs tiles of 128x128) it was 2.2x faster than v22 and 2.9x than fp32 arithmetic in the
    # geometric mean (three points at 0.52-0.63x, isolated among their neighbours: timed again
    # in the same way, v23 ran 128x1536x4096 in 25.1 us, 1536x256x1024 in 16.2 and 128x2048x1024
    # in 19.6, against 47.3, 30.7 and 20.2 in fp32 arithmetic); where it runs
    # v22, at least 3x fp32 arithmetic; where it keeps fp32 arithmetic, the faster tf32 rung was
    # slower in the geometric mean.
    picked = _tensor_core_sweep_picks("tf32")
    v23 = picked["sgemm_v23_wgmma_tf32_split_k"]
    assert all(-(-r["shape"][0] // 128) * -(-r["shape"][1] // 128) <= 132 for r in v23)
    assert _faster([r["v22_us"] / r["v23_us"] for r in v23], 150, 2.0)
    assert _faster([r["ieee_us"] / r["v23_us"] for r in v23], 150, 2.5)
    assert sum(r["ieee_us"] < r["v23_us"] for r in v23) <= 3
    v22 = picked["sgemm_v22_wgmma_tf32_regs"]
    assert len(v22) >= 10 and all(r["ieee_us"] / r["v22_us"] > 3 for r in v22)
    kept = [r["ieee_us"] / min(r["v22_us"], r["v23_us"]) for r in picked["ieee"]]
    assert len(kept) >= 40 and math.prod(kept) ** (1 / len(kept)) < 1.0


def test_select_tf32x3_follows_the_tf32x3_sweeps():
    # results/sweeps/tf32x3-sizes-* and tf32x3-deep-* (the tf32 sweeps' shapes, row-major
    # operands, H100, with each result's error against float64): where auto's "tf32x3" runs v24
    # (at most SMs tiles of 128x128, 2^20 elements, 1024 <= K <= 32768) it was faster than fp32
    # arithmetic on every point (1.22x geometric mean) and than v14 in the geometric mean (1.2x);
    # where it runs v14, faster than fp32 arithmetic on every point; where it keeps fp32
    # arithmetic the faster tf32x3 rung was slower in the geometric mean (0.69x). The error of the
    # rung auto runs: 0.65x cuBLAS SGEMM's (v24) and 0.52x (v14) in the geometric mean, 1.34x at
    # worst.
    picked = _tensor_core_sweep_picks("tf32x3")
    v24, v14 = picked["sgemm_v24_wgmma_tf32x3_split_k"], picked["sgemm_v14_wgmma_tf32x3"]
    assert len(v24) >= 30 and all(r["ieee_us"] > r["v24_us"] for r in v24)
    assert _faster([r["v14_us"] / r["v24_us"] for r in v24], 30, 1.15)
    assert len(v14) >= 10 and all(r["ieee_us"] > r["v14_us"] for r in v14)
    kept = [r["ieee_us"] / min(r["v14_us"], r["v24_us"]) for r in picked["ieee"]]
    assert len(kept) >= 150 and math.prod(kept) ** (1 / len(kept)) < 0.8
    errors = [r["err_v24"] / r["err_cublas_sgemm"] for r in v24] + [
        r["err_v14"] / r["err_cublas_sgemm"] for r in v14
    ]
    assert math.prod(errors) ** (1 / len(errors)) < 0.7 and max(errors) < 1.5


@pytest.mark.parametrize("precision", ["tf32x3", "tf32"])
def test_select_precision(precision):
    # auto tries the precision's tensor-core rule, then the ieee rules (at least as accurate).
    if str(HOPPER_CC) not in BUILT_ARCHS:
        pytest.skip("sm_90 not built")
    big = fastgemm.select(4096, 4096, 4096, "float32", cc=90, precision=precision)
    assert big.kernel.precision == precision, big
    for small in (
        fastgemm.select(64, 64, 64, "float32", cc=90, precision=precision),
        fastgemm.select(4096, 4096, 4096, "float32", cc=80, precision=precision),
    ):
        assert small.kernel.precision == "ieee", small
        assert f"no {precision} kernel is preferred here" in small.reason, small
    assert fastgemm.select(4096, 4096, 4096, "float32", cc=90).kernel.precision == "ieee"
    # misaligned: the tensor-core kernel with padded temporaries, as for ieee
    padded = fastgemm.select(4096, 4096, 4096, "float32", cc=90, alignment=4, precision=precision)
    assert padded.kernel.precision == precision and padded.pad, padded


def test_select_fp32_padded_path_matches_the_sweep():
    # The fp32 padded path against the same problem run in place, auto with the path forced off
    # and on (FASTGEMM_DEV_PAD, H100): on every swept shape whose B and C are under-aligned (N not
    # a multiple of 4), auto pads exactly where padding was more than 2% faster, and runs in place
    # where it was more than 2% slower.
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    times: dict[tuple[int, int, int], dict[str, float]] = {}
    for path in sorted(sweeps.glob("pad-float32-*.csv")):
        for row in csv.DictReader(path.read_text().splitlines()):
            shape = (int(row["M"]), int(row["N"]), int(row["K"]))
            times.setdefault(shape, {})[row["candidate"]] = float(row["us"])
    checked = 0
    for (m, n, k), t in times.items():
        if n % 4 == 0:
            continue
        gain = t["auto (no pad)"] / t["auto (pad)"]
        if abs(gain - 1) <= 0.02:
            continue
        assert fastgemm.select(m, n, k, "float32", cc=90).pad == (gain > 1), ((m, n, k), gain)
        checked += 1
    assert checked >= 12


def test_select_fp32_narrow_columns_matches_the_sweep():
    # 33-192 columns on at least 2048 rows: v19 on the transposed problem over at most 64 tiles of
    # 32x64 (33-64 columns), v18's 128x64 tiles elsewhere; within 3.6% of the fastest kernel timed
    # on every point of the sweep (v16 up to 3.5% faster at 96 and 128 columns), and faster than
    # v12 and v16 (before: auto's picks there) by at least 4% on the 33-64 and 192 columns.
    sweeps = Path(__file__).resolve().parents[1] / "results" / "sweeps"
    times: dict[tuple[int, int, int], dict[str, float]] = {}
    for path in sorted(sweeps.glob("narrow-n33-192-v18-blocks3-float32-*.csv")):
        for row in csv.DictReader(path.read_text().splitlines()):
            times.setdefault((int(row["M"]), int(row["N"]), int(row["K"])), {})[row["candidate"]] = float(
                row["us"]
            )
    assert len(times) >= 30
    for (m, n, k), t in times.items():
        sel = fastgemm.select(m, n, k, "float32", cc=90)
        if _v20_retimed(m, n, k, timed="sgemm_v20_split_k_reduce" in t):
            continue  # test_select_fp32_short_side_v20_follows_the_recheck
        if _v21_rows_retimed(m, n, k):
            continue  # test_select_fp32_v21_rows_follows_the_sweeps
        name = sel.kernel.name + (" (C^T)" if sel.flip else "")
        best = min(us for cand, us in t.items() if cand.startswith("sgemm_"))
        assert t[name] <= 1.036 * best, ((m, n, k), name, t)
        if n <= 64 or n == 192:
            before = min(t["sgemm_v12_split_k_narrow"], t["sgemm_v16_split_k_waves"])
            assert t[name] * 1.04 <= before, ((m, n, k), name, t)
