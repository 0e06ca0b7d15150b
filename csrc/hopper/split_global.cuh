// hopper/split_global.cuh — the split-K kernel body whose partial tiles meet in global memory
// instead of in a cluster's shared memory: split_gemm.cuh's split_body (the ring, one producer
// thread with this block's share of the k-tiles, the wgmma consumers; grid x the tiles, grid z
// the split S, but no cluster), and a hand-off through a scratch buffer (common/runtime.h:
// stream_scratch).
//
// Contract. The S blocks of a tile take even shares of its k-tiles (split_share). Blocks
// z = 0 .. S-2 are contributors: each consumer warpgroup writes its 64 x BN fp32 accumulators to
// its slot of `partials` (slot (tile * (S - 1) + z) * 2 + half, in the accumulators' own
// register order: float4 i of thread t at i * 128 + t) and then sets the slot's flag to 1
// (release, after a warpgroup barrier). Block z = S-1 owns the tile: each of its warpgroups waits
// for the flags of slots z = 0 .. S-2 in that order (acquire), adds each partial into its
// accumulators, resets the flag to 0 for the next launch, and stores alpha * sum + beta * C
// (registers -> global, epilogue.cuh: store_acc; C row-major). The order of the sums is fixed by
// the launch, so repeated calls give the same bits. Contributors never wait, and the owners are
// the last blocks of the grid to be dispatched; the launcher keeps the grid within one block per
// SM (global_split_count), so every block is resident at once on an otherwise idle GPU.
// Launches that share the scratch run one after another (one buffer per stream; PDL: a block
// waits for the previous kernel in split_share before it touches global memory).
#pragma once
#include "hopper/split_gemm.cuh"

namespace fastgemm::hopper {

// A contributor warpgroup's 64 x BN partial tile into its slot, then its flag raised.
template <int BN>
__device__ __forceinline__ void publish_partial(const float (&acc)[BN / 2], float* slot, int* flag,
                                                int half) {
  const int t = threadIdx.x % 128;
  float4* out = reinterpret_cast<float4*>(slot) + t;
#pragma unroll
  for (int i = 0; i < BN / 8; ++i) {
    __stcg(out + i * 128, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
  }
  __threadfence();
  ptx::named_barrier(2 + half, 128);  // every thread's part is written
  if (t == 0) ptx::st_release_gpu(flag, 1);
}

// The owner's warpgroup: once the slot's flag is up, its partial tile added into acc; the flag
// lowered again.
template <int BN>
__device__ __forceinline__ void add_partial(float (&acc)[BN / 2], const float* slot, int* flag,
                                            int half) {
  const int t = threadIdx.x % 128;
  if (t == 0) {
    while (ptx::ld_acquire_gpu(flag) == 0) __nanosleep(32);
    *flag = 0;  // nothing else reads it in this launch; the next one starts from 0
  }
  ptx::named_barrier(2 + half, 128);  // the partial tile is visible from here on
  const float4* in = reinterpret_cast<const float4*>(slot) + t;
#pragma unroll
  for (int i = 0; i < BN / 8; ++i) {
    const float4 v = __ldcg(in + i * 128);
    acc[4 * i] += v.x, acc[4 * i + 1] += v.y, acc[4 * i + 2] += v.z, acc[4 * i + 3] += v.w;
  }
}

template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void split_global_gemm(const CUtensorMap* tma_a,
                                                  const CUtensorMap* tma_b, T* C, int64_t M,
                                                  int64_t N, int64_t K, int64_t ldc, float alpha,
                                                  float beta, float* partials, int* flags) {
  split_body<T, Cfg, A_KMAJOR, B_KMAJOR>(
      tma_a, tma_b, M, K,
      [] {
        if (threadIdx.x == 0) ptx::griddepcontrol_launch_dependents();  // every copy is issued
      },
      [&](const auto&, float (&acc)[Cfg::BN / 2], int half, int m0, int n0) {
        const int split = static_cast<int>(gridDim.z), z = static_cast<int>(blockIdx.z);
        constexpr int64_t SLOT = 64 * Cfg::BN;  // floats of one warpgroup's partial tile
        const int64_t first_slot = int64_t(blockIdx.x) * (split - 1) * 2 + half;
        if (z < split - 1) {
          const int64_t slot = first_slot + 2 * z;
          publish_partial<Cfg::BN>(acc, partials + slot * SLOT, flags + slot, half);
          return;
        }
        for (int q = 0; q < split - 1; ++q) {
          const int64_t slot = first_slot + 2 * q;
          add_partial<Cfg::BN>(acc, partials + slot * SLOT, flags + slot, half);
        }
        store_acc<Cfg::BN, T>(acc, C, ldc, M, N, m0 + 64 * half, n0, alpha, beta);
      });
}

}  // namespace fastgemm::hopper

// A split-global rung's kernel (one instantiation per element type and operand layout): the
// Hopper kernel's parameters without C's tensor map, plus the scratch (launch.cuh passes it).
#define FASTGEMM_HOPPER_SPLIT_GLOBAL_KERNEL(NAME, CFG)                                          \
  template <typename T, bool A_KMAJOR, bool B_KMAJOR>                                           \
  __global__ void __launch_bounds__(CFG::THREADS, CFG::MIN_BLOCKS) NAME##_kernel(               \
      const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,     \
      T* C, int64_t M, int64_t N, int64_t K, int64_t ldc, float alpha, float beta,              \
      float* partials, int* flags) {                                                            \
    ::fastgemm::hopper::split_global_gemm<T, CFG, A_KMAJOR, B_KMAJOR>(                          \
        &tma_a, &tma_b, C, M, N, K, ldc, alpha, beta, partials, flags);                         \
  }
