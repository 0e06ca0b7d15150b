"""Type stub of fastgemm._C, the native module (csrc/bindings.cpp)."""

from typing import Any, TypeAlias

__version__: str
cuda_archs: str
PAD_MIN_MACS: int
PLAN_ALIGN_CAP: int

def gemm(
    fn: int, A: Any, B: Any, C: Any, alpha: Any, beta: Any, kernel: Any, stream: Any, precision: Any = ..., /
) -> Any: ...
def kernels() -> list[dict[str, Any]]: ...
def select(
    M: int,
    N: int,
    K: int,
    dtype: str,
    cc: int | None = None,
    alignment: int | None = None,
    precision: str = "ieee",
    order: str = "CC",
) -> dict[str, Any]: ...
def check_runnable(
    name: str, min_cc: int, max_cc: int, smem_bytes: int, need_alignment: int, cc: int, alignment: int
) -> str | None: ...

# One auto rule (dispatch.AUTO_RULES documents the fields).
Rule: TypeAlias = tuple[
    str,
    str,
    int,
    tuple[int, int, float] | None,
    int | None,
    int | None,
    int | None,
    int | None,
    bool,
    int | None,
    dict[str, float] | None,
    int | None,
    bool,
    int | None,
    int | None,
    int | None,
    str | None,
    int | None,
    str | None,
    bool,
    bool,
    bool,
    int | None,
    float | None,
    float | None,
    bool,
    int | None,
]

def auto_rules(precision: str = "ieee") -> dict[str, list[Rule]]: ...
def last_round_cost(M: int, N: int, K: int, tile_m: int, tile_n: int, sms: int) -> float: ...
def wave_cost(M: int, N: int, tile_m: int, tile_n: int, sms: int) -> float: ...
def cluster_split_choice(
    capacity: list[list[list[int]]],
    rates: list[float],
    sms: int,
    tiles: int,
    k_units: int,
    min_units: int,
    most: int,
    add: float,
) -> tuple[int, bool]: ...
def cluster_capacity(device: int) -> list[list[list[int]]]: ...
def documented_smem_per_block(cc: int) -> int: ...
def alignment_of(values: list[int], cap: int = 16) -> int: ...
def plan_cache_size() -> int: ...
def _clear_plan_cache() -> None: ...
def board_bytes(ranks: int) -> int: ...
def board_exchange(
    page: int, ranks: int, rank: int, seq: int, values: list[int], timeout_ms: int
) -> list[list[int]]: ...
def describe(obj: Any, name: str, dlpack_stream: int | None = None) -> dict[str, Any]: ...
def layout(rows: int, cols: int, rs: int, cs: int, itemsize: int) -> tuple[bool, int] | None: ...
def byte_span(ptr: int, rows: int, cols: int, rs: int, cs: int, itemsize: int) -> tuple[int, int]: ...
def copy_strided(
    elem_bytes: int,
    src: int,
    rows: int,
    cols: int,
    rs: int,
    cs: int,
    dst: int,
    dst_ld: int,
    stream: int,
    device: int,
    /,
) -> None: ...
def device_count() -> int: ...
def runtime_status() -> str: ...
def device_cc(device: int, /) -> int: ...
def device_name(device: int, /) -> str: ...
def current_device() -> int: ...
def set_reserved_sms(sms: int, /) -> int: ...
def pointer_device(ptr: int, /) -> int: ...
def runtime_version() -> int: ...
def swizzle_chunk(chunks_per_row: int, row: int, chunk: int) -> int: ...
def _set_runtime_hooks(
    forbid: bool = False,
    device_count: int = -1,
    pointer_device: int = -2,
    cc: int = 0,
    record: bool = False,
) -> None: ...
def _take_recorded() -> list[tuple[str, str, tuple[int | float, ...]]]: ...
def _dlpack_test_capsule(
    ptr: int,
    shape: list[int],
    strides: list[int] | None,
    code: int,
    bits: int,
    device_type: int,
    device_id: int,
    versioned: bool = True,
    readonly: bool = False,
    lanes: int = 1,
) -> Any: ...
