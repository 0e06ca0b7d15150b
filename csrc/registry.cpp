// registry.cpp — the one kernel table (see registry.h).
#include "registry.h"

#include <cstring>
#include <unordered_map>

namespace fastgemm {

const std::vector<KernelEntry>& kernel_table() {
  // name, dtype, version, min_cc, max_cc, alignment (bytes), techniques, launcher, shared memory
  static const std::vector<KernelEntry> table = {
      {"sgemm_v01_naive", "float32", 1, 75, 0, 4,
       "one thread per output, threadIdx.x along rows (uncoalesced)", sgemm_v01_naive, nullptr},
      {"sgemm_v02_coalesced", "float32", 2, 75, 0, 4,
       "threadIdx.x along columns: coalesced B loads and C stores", sgemm_v02_coalesced, nullptr},
      {"sgemm_v03_smem_tiling", "float32", 3, 75, 0, 4,
       "32x32 tiles of A and B staged in shared memory", sgemm_v03_smem_tiling, nullptr},
      {"sgemm_v04_blocktile_1d", "float32", 4, 75, 0, 4,
       "64x64 block tile, 8 outputs per thread along M (1D register blocking)",
       sgemm_v04_blocktile_1d, nullptr},
      {"sgemm_v05_blocktile_2d", "float32", 5, 75, 0, 4,
       "128x128 block tile, 8x8 outputs per thread (2D register blocking)",
       sgemm_v05_blocktile_2d, nullptr},
      {"sgemm_v06_vectorized", "float32", 6, 75, 0, 16,
       "float4 global loads, A transposed in shared memory, float4 fragment reads",
       sgemm_v06_vectorized, nullptr},
      {"sgemm_v07_conflict_free", "float32", 7, 75, 0, 16,
       "padded A tile and split 4-wide fragments: no shared-memory bank conflicts",
       sgemm_v07_conflict_free, nullptr},
      {"sgemm_v08_warptile", "float32", 8, 75, 0, 16,
       "warp tiles of 64x32, each lane 2x2 patches of 4x4; BK = 16, single-buffered",
       sgemm_v08_warptile, nullptr},
      {"sgemm_v09_cp_async", "float32", 9, 80, 0, 16,
       "double-buffered shared memory: cp.async for the layout-matching operand, registers for the transposed one",
       sgemm_v09_cp_async, nullptr},
      // The tensor-core ladder: one row per rung and element type. fp16 runs from sm_75 until
      // cp.async (m16n8k8 pairs there); bf16 tensor cores start with sm_80.
#define FASTGEMM_HGEMM_ROWS(NAME, VERSION, MIN_CC_F16, ALIGN, TECHNIQUES)       \
  {#NAME, "float16", VERSION, MIN_CC_F16, 0, ALIGN, TECHNIQUES, NAME##_f16, NAME##_smem}, \
      {#NAME, "bfloat16", VERSION, 80, 0, ALIGN, TECHNIQUES, NAME##_bf16, NAME##_smem}
      FASTGEMM_HGEMM_ROWS(hgemm_v01_mma, 1, 75, 2,
                          "block/warp/mma tiling, ldmatrix + mma.sync m16n8k16, element-wise copies"),
      FASTGEMM_HGEMM_ROWS(hgemm_v02_vectorized, 2, 75, 16,
                          "16-byte unrolled global->shared copies"),
      FASTGEMM_HGEMM_ROWS(hgemm_v03_padded, 3, 75, 16,
                          "shared-memory rows padded by 16 bytes: conflict-free ldmatrix"),
      FASTGEMM_HGEMM_ROWS(hgemm_v04_swizzle, 4, 75, 16,
                          "XOR-swizzled shared memory, no padding, no bank conflicts"),
      FASTGEMM_HGEMM_ROWS(hgemm_v05_reg_prefetch, 5, 75, 16,
                          "register-prefetched double buffer (Turing path, no cp.async)"),
      FASTGEMM_HGEMM_ROWS(hgemm_v06_cp_async, 6, 80, 16,
                          "cp.async global->shared copies, double buffer"),
      FASTGEMM_HGEMM_ROWS(hgemm_v07_multistage, 7, 80, 16,
                          "4-stage cp.async pipeline, one barrier per K-step"),
      FASTGEMM_HGEMM_ROWS(hgemm_v08_tuned, 8, 80, 16,
                          "128x256 block tile, ldmatrix.x4 for A and B, XOR pointer stepping"),
      FASTGEMM_HGEMM_ROWS(hgemm_v09_raster, 9, 80, 16,
                          "threadblock swizzle: L2-friendly order of the output tiles"),
#undef FASTGEMM_HGEMM_ROWS
#if FASTGEMM_HAS_HOPPER
      // Hopper rungs: sm_90a machine code only (wgmma, TMA), so min_cc = max_cc = 90.
#define FASTGEMM_HOPPER_ROWS(NAME, VERSION, TECHNIQUES)                                \
  {#NAME, "float16", VERSION, 90, 90, 16, TECHNIQUES, NAME##_f16, NAME##_smem},       \
      {#NAME, "bfloat16", VERSION, 90, 90, 16, TECHNIQUES, NAME##_bf16, NAME##_smem}
      FASTGEMM_HOPPER_ROWS(hgemm_v10_wgmma_tma, 10,
                           "wgmma m64n128k16 from shared memory, TMA loads (128-byte swizzle) on an "
                           "mbarrier; one stage, one warpgroup per 128x128 tile"),
      FASTGEMM_HOPPER_ROWS(hgemm_v11_wide_tile, 11,
                           "128x256 tiles, two consumer warpgroups issuing m64n256k16"),
      FASTGEMM_HOPPER_ROWS(hgemm_v12_warp_specialized, 12,
                           "producer warpgroup + 4-stage mbarrier ring, setmaxnreg, wgmma kept "
                           "in flight across k-tiles"),
      FASTGEMM_HOPPER_ROWS(hgemm_v13_persistent, 13,
                           "persistent blocks (one per SM), grouped L2-aware tile order, epilogue "
                           "overlapped with the next tile's copies"),
      FASTGEMM_HOPPER_ROWS(hgemm_v14_tma_store, 14,
                           "epilogue through shared memory (stmatrix) and TMA stores; C read only "
                           "when beta != 0"),
      FASTGEMM_HOPPER_ROWS(hgemm_v15_cluster_multicast, 15,
                           "2-CTA clusters: the B tile split between the pair and multicast by "
                           "TMA into both"),
      FASTGEMM_HOPPER_ROWS(hgemm_v16_deep_ring, 16,
                           "4-stage ring (C stored in 8 KiB pieces), balanced persistent grid, "
                           "single-CTA blocks"),
      FASTGEMM_HOPPER_ROWS(hgemm_v17_mma_sync_tma, 17,
                           "mma.sync + ldmatrix math warps fed by TMA copies through a 4-stage "
                           "mbarrier ring (no copy instructions in the math warps), persistent"),
      FASTGEMM_HOPPER_ROWS(hgemm_v18_borrowed_stage, 18,
                           "each warpgroup stores its 64x256 slab at once, one of them through "
                           "its last ring stage (kept until the stores have read it)"),
      FASTGEMM_HOPPER_ROWS(hgemm_v19_dependent_launch, 19,
                           "v18 with programmatic dependent launch: the next kernel of the stream "
                           "starts while this one finishes (griddepcontrol)"),
      FASTGEMM_HOPPER_ROWS(hgemm_v20_hoisted_beta, 20,
                           "v19 with beta == 0 tested once per launch: a straight-line epilogue "
                           "loop without a branch or C read per output pair"),
#undef FASTGEMM_HOPPER_ROWS
#endif
  };
  return table;
}

DType kernel_dtype(const KernelEntry& k) { return parse_dtype(k.dtype); }

namespace {
// name -> the entry of each dtype (index DType), built once from the table.
struct ByName {
  const KernelEntry* of[3] = {nullptr, nullptr, nullptr};
};
const std::unordered_map<std::string_view, ByName>& name_index() {
  static const std::unordered_map<std::string_view, ByName> index = [] {
    std::unordered_map<std::string_view, ByName> out;
    for (const auto& k : kernel_table()) out[k.name].of[int(kernel_dtype(k))] = &k;
    return out;
  }();
  return index;
}
}  // namespace

const KernelEntry* find_kernel(std::string_view name, DType dtype) {
  const auto& index = name_index();
  const auto hit = index.find(name);
  return hit == index.end() ? nullptr : hit->second.of[int(dtype)];
}

bool kernel_name_exists(std::string_view name) { return name_index().count(name) != 0; }

}  // namespace fastgemm
