// hopper/gated.cu — v20 whose producer waits, before each k-tile's copies, until that k-tile's
// rows of A and B have landed: the remote pieces of the multi-GPU GEMM (fastgemm.distributed)
// start while their operands are still arriving, and work as the bytes come in.
//
// What it is: hgemm_v20_hoisted_beta's kernel (persistent, warp-specialised, 128x256 tiles,
// 4-stage ring, TMA-store epilogue, PDL) with a LandedGate in its producer. The operands' copies
// (peer copies on the copy engines) each end with a flag write on their stream
// (cuStreamWriteValue32, which orders it after the copy): the flag of this GEMM's rows of A and
// the flag of each chunk of `chunk_cols` columns of B count the slices of `slice_k` of K that
// have landed. Before the copies of the k-tile at k0 the producer waits until both flags its
// tile reads reach k0 / slice_k + 1 (an acquire load, then a proxy fence so that the TMA loads
// see the bytes), and remembers what it saw, so a flag is read once per slice and chunk.
// Why: a GEMM over the whole K whose inputs arrive slice by slice and chunk by chunk keeps all
// its SMs busy as soon as its first slice is in, where one launch per landed input would wait
// for whole bands or chunks, and a GEMM per slice of K would carry a sum across launches.
// What limits it: a tile round waits for the inputs of its tiles (the first round for the first
// slices of its chunks); a flag never written would hang it, so a wait traps after
// `timeout_ms`: instead of a hang, a failed launch that poisons the device's context (every
// later CUDA call of the process fails).
// Shapes: v20's. sm_90a.
#include "hopper/gated.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "hopper/persistent.cuh"
#include "hopper/rungs.h"

namespace fastgemm {
namespace {

using namespace hopper;
using Cfg = V20;

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}

struct LandedGate {
  const int* flag_a;   // slices of K landed of the rows of A
  const int* flags_b;  // per chunk of B's columns: slices of K landed
  int chunk_cols, slice_k;
  uint64_t timeout_ns;
  int seen_a = 0, chunk = -1, seen_b = 0;

  __device__ int wait(const int* flag, int need) const {
    int v = ptx::ld_acquire_gpu(flag);
    if (v < need) {
      const uint64_t start = global_ns();
      while ((v = ptx::ld_acquire_gpu(flag)) < need) {
        __nanosleep(512);
        if (global_ns() - start > timeout_ns) __trap();  // a flag that never comes
      }
    }
    // The copy engine's bytes, seen by this thread's loads, are seen by its TMA loads too.
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
    return v;
  }
  __device__ __forceinline__ void operator()(int, int n0, int k0) {
    const int need = k0 / slice_k + 1;
    if (seen_a < need) seen_a = wait(flag_a, need);
    const int c = n0 / chunk_cols;
    if (c != chunk) chunk = c, seen_b = 0;
    if (seen_b < need) seen_b = wait(flags_b + c, need);
  }
};

template <typename T, bool A_KMAJOR, bool B_KMAJOR>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) hgemm_gated_kernel(
    const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
    const __grid_constant__ CUtensorMap tma_c, T* C, int64_t M, int64_t N, int64_t K, int64_t ldc,
    float alpha, const int* flag_a, const int* flags_b, int chunk_cols, int slice_k,
    uint64_t timeout_ns) {
  persistent_tma_store_gemm<T, Cfg, A_KMAJOR, B_KMAJOR>(
      &tma_a, &tma_b, &tma_c, C, M, N, K, ldc, alpha, 0.0f,
      LandedGate{flag_a, flags_b, chunk_cols, slice_k, timeout_ns});
}

template <typename T>
void launch_gated(const GemmArgs& a, const Landed& landed) {
  constexpr const char* name = "hgemm_gated";
  constexpr int smem = smem_bytes<Cfg>();
  const std::pair<CUtensorMap, CUtensorMap> maps = operand_maps<Cfg, T>(a, name);
  const CUtensorMap tma_c = c_map<T>(a);
  const dim3 grid = balanced_grid<Cfg>(a, SchedulerOf<Cfg>::grid(a, name));
  with_kmajor(a, [&](auto ak, auto bk) {
    auto kernel = hgemm_gated_kernel<T, decltype(ak)::value, decltype(bk)::value>;
    set_smem(kernel, smem);
    Launch l{grid, dim3(Cfg::THREADS), smem, a.stream};
    l.pdl = Cfg::PDL;
    fastgemm::launch(kernel, l, name, maps.first, maps.second, tma_c, static_cast<T*>(a.C), a.M,
                     a.N, a.K, a.ldc, a.alpha, landed.flag_a, landed.flags_b, landed.chunk_cols,
                     landed.slice_k, landed.timeout_ms * uint64_t(1000000));
  });
}

}  // namespace

void hgemm_gated(const GemmArgs& a, DType dtype, const Landed& landed) {
  const auto fail = [](const std::string& why) {
    throw std::invalid_argument("hgemm_gated: " + why);
  };
  const auto aligned = [](const void* p, int64_t ld, int64_t unit) {
    return reinterpret_cast<uintptr_t>(p) % unit == 0 && ld * 2 % unit == 0;
  };
  if (a.M < 1 || a.N < 1 || a.K < 1) fail("M, N and K must be at least 1");
  if (a.c_col_major) fail("C is row-major");
  if (device_cc(active_device()) != 90) fail("an sm_90 kernel (wgmma, TMA)");
  if (!aligned(a.A, a.lda, 16) || !aligned(a.B, a.ldb, 16) || !aligned(a.C, a.ldc, 16) ||
      a.N % 8 != 0) {
    fail("A, B and C need 16-byte aligned pointers, rows and row ends");
  }
  if (landed.flag_a == nullptr || landed.flags_b == nullptr ||
      reinterpret_cast<uintptr_t>(landed.flag_a) % 4 != 0 ||
      reinterpret_cast<uintptr_t>(landed.flags_b) % 4 != 0) {
    fail("the flags are int32 in device memory");
  }
  if (landed.timeout_ms < 1) fail("timeout_ms must be at least 1");
  if (landed.slice_k < BLOCK_K || landed.slice_k % BLOCK_K != 0) {
    fail("slice_k is a multiple of " + std::to_string(BLOCK_K));
  }
  if (landed.chunk_cols < Cfg::BN || landed.chunk_cols % Cfg::BN != 0) {
    fail("chunk_cols is a multiple of " + std::to_string(Cfg::BN));
  }
  if (dtype == DType::f16) {
    launch_gated<__half>(a, landed);
  } else if (dtype == DType::bf16) {
    launch_gated<__nv_bfloat16>(a, landed);
  } else {
    fail("A, B and C are float16 or bfloat16");
  }
}

void stream_write_flag(cudaStream_t stream, int* flag, int value) {
  using WriteValue = int (*)(cudaStream_t, unsigned long long, unsigned int, unsigned int);
  static const auto write = reinterpret_cast<WriteValue>(driver_entry("cuStreamWriteValue32", 11070));
  if (write == nullptr) throw std::runtime_error("the CUDA driver has no cuStreamWriteValue32");
  // Flags 0: the write waits for the stream's earlier work and is ordered after its memory writes.
  const int rc = write(stream, reinterpret_cast<unsigned long long>(flag),
                       static_cast<unsigned int>(value), 0);
  if (rc != 0) {
    throw std::runtime_error("cuStreamWriteValue32 failed (CUresult " + std::to_string(rc) + ")");
  }
}

}  // namespace fastgemm
