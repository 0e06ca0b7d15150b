// registry.h — THE kernel table. Adding a rung = its .cu file + one declaration here + one row in
// registry.cpp. Python (kernels(), select(), tests, benchmarks) reads the table through _C.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/gemm_args.h"
#include "common/runtime.h"

namespace fastgemm {

struct KernelEntry {
  const char* name;        // e.g. "sgemm_v05_blocktile_2d"
  const char* dtype;       // "float32" | "float16" | "bfloat16"
  int version;             // its rung in the ladder
  int min_cc;              // e.g. 80 for cp.async
  int max_cc;              // 0 = no upper bound; 90 for sm_90a-only code
  int alignment;           // bytes that base pointers and leading dimensions must be multiples of
  const char* techniques;  // one line
  LaunchFn launch;
  int (*smem_bytes)();     // dynamic shared memory per block (nullptr: only static, <= 48 KiB)
};

const std::vector<KernelEntry>& kernel_table();
// The entry for (name, dtype), or nullptr: one hash lookup (fp16 and bf16 rungs share names).
const KernelEntry* find_kernel(std::string_view name, DType dtype);
// True when some entry, of any dtype, has this name.
bool kernel_name_exists(std::string_view name);
DType kernel_dtype(const KernelEntry& k);

// --- SGEMM ladder (csrc/sgemm/) ----------------------------------------------------------------
void sgemm_v01_naive(const GemmArgs&);
void sgemm_v02_coalesced(const GemmArgs&);
void sgemm_v03_smem_tiling(const GemmArgs&);
void sgemm_v04_blocktile_1d(const GemmArgs&);
void sgemm_v05_blocktile_2d(const GemmArgs&);
void sgemm_v06_vectorized(const GemmArgs&);
void sgemm_v07_conflict_free(const GemmArgs&);
void sgemm_v08_warptile(const GemmArgs&);
void sgemm_v09_cp_async(const GemmArgs&);

// --- HGEMM ladder (csrc/hgemm/): fp16 and bf16 entry points of one template per rung ----------
#define FASTGEMM_DECLARE_HGEMM(NAME)   \
  void NAME##_f16(const GemmArgs&); \
  void NAME##_bf16(const GemmArgs&); \
  int NAME##_smem();
FASTGEMM_DECLARE_HGEMM(hgemm_v01_mma)
FASTGEMM_DECLARE_HGEMM(hgemm_v02_vectorized)
FASTGEMM_DECLARE_HGEMM(hgemm_v03_padded)
FASTGEMM_DECLARE_HGEMM(hgemm_v04_swizzle)
FASTGEMM_DECLARE_HGEMM(hgemm_v05_reg_prefetch)
FASTGEMM_DECLARE_HGEMM(hgemm_v06_cp_async)
FASTGEMM_DECLARE_HGEMM(hgemm_v07_multistage)
FASTGEMM_DECLARE_HGEMM(hgemm_v08_tuned)
FASTGEMM_DECLARE_HGEMM(hgemm_v09_raster)
#if FASTGEMM_HAS_HOPPER
// --- Hopper rungs of the HGEMM ladder (csrc/hopper/, sm_90a only) ------------------------------
FASTGEMM_DECLARE_HGEMM(hgemm_v10_wgmma_tma)
FASTGEMM_DECLARE_HGEMM(hgemm_v11_wide_tile)
FASTGEMM_DECLARE_HGEMM(hgemm_v12_warp_specialized)
FASTGEMM_DECLARE_HGEMM(hgemm_v13_persistent)
FASTGEMM_DECLARE_HGEMM(hgemm_v14_tma_store)
FASTGEMM_DECLARE_HGEMM(hgemm_v15_cluster_multicast)
FASTGEMM_DECLARE_HGEMM(hgemm_v16_deep_ring)
FASTGEMM_DECLARE_HGEMM(hgemm_v17_mma_sync_tma)
FASTGEMM_DECLARE_HGEMM(hgemm_v18_borrowed_stage)
FASTGEMM_DECLARE_HGEMM(hgemm_v19_dependent_launch)
FASTGEMM_DECLARE_HGEMM(hgemm_v20_hoisted_beta)
#endif
#undef FASTGEMM_DECLARE_HGEMM

}  // namespace fastgemm
