// registry.h — THE kernel table. Each rung registers itself, at the end of its own .cu file, with
// one FASTGEMM_REGISTER_SGEMM / FASTGEMM_REGISTER_HGEMM line (the HGEMM form adds its fp16 and
// bf16 rows); nothing else names it. Python (kernels(), select(), tests, benchmarks) reads the
// table through _C.
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
  const char* family;      // the math: "simt" | "mma_sync" | "wgmma"
  const char* copy;        // global -> shared: "ldg" (through registers) | "cp_async" | "tma"
  const char* epilogue;    // C written: "registers" (from registers) | "tma_store" (via smem) |
                           // "split_k" (partial tiles of a K split summed across a cluster)
  const char* parent;      // the rung it changes ("" for the first of a ladder)
  bool branch;             // an experiment off the main line: selectable, not an improvement
  const char* precision;   // fp32 rows: "ieee" (fp32 arithmetic) | "tf32x3" | "tf32"; else ""
};

// What a rung states about itself in its registration (its rows add name, dtype, launchers).
// min_cc is the fp32 / fp16 row's; a bf16 row starts at sm_80 at the earliest.
struct RungInfo {
  int version, min_cc, max_cc, alignment;
  const char* family;
  const char* copy;
  const char* epilogue;
  const char* parent;
  bool branch;
  const char* techniques;
  const char* precision = "ieee";  // fp32 rungs on the tensor cores: "tf32x3" or "tf32"
};

// Adds a row to the table (at load time, from a static object of the rung's .cu file).
struct Registration {
  Registration(const char* name, const char* dtype, const RungInfo& info, LaunchFn launch,
               int (*smem_bytes)());
};

// At the end of a rung's .cu, after its entry points: NAME (fp32) or NAME_f16 / NAME_bf16 /
// NAME_smem (the HGEMM and Hopper entry-point macros define those), and the RungInfo fields.
#define FASTGEMM_REGISTER_SGEMM(NAME, ...) FASTGEMM_REGISTER_FP32_ROW(NAME, nullptr, __VA_ARGS__)
// The same for a rung with more than 48 KiB of dynamic shared memory: NAME##_smem() says how much
// (so that "can it run here" knows).
#define FASTGEMM_REGISTER_SGEMM_SMEM(NAME, ...) \
  FASTGEMM_REGISTER_FP32_ROW(NAME, NAME##_smem, __VA_ARGS__)
#define FASTGEMM_REGISTER_FP32_ROW(NAME, SMEM, ...)                                             \
  namespace fastgemm {                                                                          \
  namespace {                                                                                   \
  const Registration NAME##_registration(#NAME, "float32", RungInfo __VA_ARGS__, NAME, SMEM);   \
  }                                                                                             \
  }
#define FASTGEMM_REGISTER_HGEMM(NAME, ...)                                                      \
  namespace fastgemm {                                                                          \
  namespace {                                                                                   \
  const Registration NAME##_f16_registration(#NAME, "float16", RungInfo __VA_ARGS__, NAME##_f16, \
                                             NAME##_smem);                                     \
  const Registration NAME##_bf16_registration(#NAME, "bfloat16", RungInfo __VA_ARGS__,          \
                                              NAME##_bf16, NAME##_smem);                       \
  }                                                                                             \
  }

const std::vector<KernelEntry>& kernel_table();
// The entry for (name, dtype), or nullptr: one hash lookup (fp16 and bf16 rungs share names).
const KernelEntry* find_kernel(std::string_view name, DType dtype);
// True when some entry, of any dtype, has this name.
bool kernel_name_exists(std::string_view name);
DType kernel_dtype(const KernelEntry& k);

}  // namespace fastgemm
