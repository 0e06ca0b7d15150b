// registry.cpp — the one kernel table (see registry.h).
#include "registry.h"

#include <stdexcept>

namespace fastgemm {

const std::vector<KernelEntry>& kernel_table() {
  // name, dtype, version, min_cc, max_cc, alignment (bytes), techniques, launcher
  static const std::vector<KernelEntry> table = {
      {"sgemm_v01_naive", "float32", 1, 75, 0, 4,
       "one thread per output, threadIdx.x along rows (uncoalesced)", sgemm_v01_naive},
      {"sgemm_v02_coalesced", "float32", 2, 75, 0, 4,
       "threadIdx.x along columns: coalesced B loads and C stores", sgemm_v02_coalesced},
      {"sgemm_v03_smem_tiling", "float32", 3, 75, 0, 4,
       "32x32 tiles of A and B staged in shared memory", sgemm_v03_smem_tiling},
      {"sgemm_v04_blocktile_1d", "float32", 4, 75, 0, 4,
       "64x64 block tile, 8 outputs per thread along M (1D register blocking)",
       sgemm_v04_blocktile_1d},
      {"sgemm_v05_blocktile_2d", "float32", 5, 75, 0, 4,
       "128x128 block tile, 8x8 outputs per thread (2D register blocking)",
       sgemm_v05_blocktile_2d},
      {"sgemm_v06_vectorized", "float32", 6, 75, 0, 16,
       "float4 global loads, A transposed in shared memory, float4 fragment reads",
       sgemm_v06_vectorized},
      {"sgemm_v07_conflict_free", "float32", 7, 75, 0, 16,
       "padded A tile and split 4-wide fragments: no shared-memory bank conflicts",
       sgemm_v07_conflict_free},
      {"sgemm_v08_warptile", "float32", 8, 75, 0, 16,
       "warp tiles of 64x32, each lane 2x2 patches of 4x4; BK = 16, single-buffered",
       sgemm_v08_warptile},
      {"sgemm_v09_cp_async", "float32", 9, 80, 0, 16,
       "double-buffered shared memory: cp.async for the layout-matching operand, registers for the transposed one",
       sgemm_v09_cp_async},
  };
  return table;
}

const KernelEntry& find_kernel(const std::string& name) {
  for (const auto& k : kernel_table()) {
    if (name == k.name) return k;
  }
  throw std::out_of_range("unknown kernel '" + name + "'");
}

}  // namespace fastgemm
