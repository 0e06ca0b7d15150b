// registry.h — THE kernel table. Adding a rung = its .cu file + one declaration here + one row in
// registry.cpp. Python (kernels(), select(), tests, benchmarks) reads the table through _C.
#pragma once
#include <string>
#include <vector>

#include "common/gemm_args.h"

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
};

const std::vector<KernelEntry>& kernel_table();
const KernelEntry& find_kernel(const std::string& name);  // throws std::out_of_range

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

}  // namespace fastgemm
