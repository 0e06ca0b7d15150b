// ptx.cuh — every inline PTX instruction of the portable (sm_75+) kernels, as typed wrappers.
// Features newer than sm_75 compile to a trap on older targets: the registry's min_cc keeps such
// kernels from ever being launched there, and the trap makes a bypass loud instead of wrong.
#pragma once
#include <cstdint>

namespace fastgemm::ptx {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cp.async.cg: 16 bytes global -> shared, bypassing L1. Only the first `src_bytes` (0..16) are
// read; the rest of the 16 destination bytes are zero-filled (predicated tails without branches).
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, int src_bytes) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem_dst)),
               "l"(gmem_src), "r"(src_bytes)
               : "memory");
#else
  __trap();
#endif
}

// Close the group of cp.async issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Wait until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace fastgemm::ptx
