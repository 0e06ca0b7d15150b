// hopper/split_global.cuh — the split-K kernel body whose partial tiles meet in global memory
// instead of in a cluster's shared memory: split_gemm.cuh's split_body (the ring, one producer
// thread with this block's share of the k-tiles, the wgmma consumers; grid x the tiles, grid z
// the split S, but no cluster), and a hand-off through a scratch buffer (common/runtime.h:
// stream_scratch).
//
// Contract (common/split_k.cuh: publish_partial / add_partial). The S blocks of a tile take even
// shares of its k-tiles (split_share). Blocks z = 0 .. S-2 are contributors: each consumer
// warpgroup hands its 64 x BN fp32 accumulators (in wgmma's register order) to slot
// (tile * (S - 1) + z) * 2 + half of `partials`, and raises the slot's flag (named barrier
// 2 + half, then a release). Block z = S-1 owns the tile: each of its warpgroups adds the slots
// of z = 0 .. S-2 in that order (add_partials: all flags first), lowering each flag for the
// next launch, and stores alpha * sum + beta * C (registers -> global, epilogue.cuh: store_acc;
// C row-major). The order of the sums is fixed by the launch, so repeated calls give the same
// bits. Contributors never wait, and the owners are
// the last blocks of the grid to be dispatched; the launcher keeps the grid within one block per
// SM (global_split_count), so every block is resident at once on an otherwise idle GPU.
// Launches that share the scratch run one after another (one buffer per stream; PDL: a block
// waits for the previous kernel in split_share before it touches global memory).
#pragma once
#include "hopper/split_gemm.cuh"

namespace fastgemm::hopper {

// A consumer warpgroup's 64 x BN fp32 accumulators (wgmma's register order) handed over through
// slot `slot` of the scratch (64 * BN floats and a flag per slot; common/split_k.cuh's contract):
// publish_acc writes them and raises the flag, add_acc waits for the flag, lowers it and adds the
// slot into acc. Named barrier BAR + half is the warpgroup's (2 + half where no TMA-store
// epilogue holds barriers 1-3).
template <int BN, int BAR = 2>
__device__ __forceinline__ void publish_acc(const float (&acc)[BN / 2], float* partials, int* flags,
                                            int64_t slot, int half) {
  publish_partial<BN / 8, 128>(
      partials + slot * 64 * BN, flags + slot, threadIdx.x % 128,
      [&](int i) { return make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]); },
      [half] { ptx::named_barrier(BAR + half, 128); });
}
template <int BN, int BAR = 2>
__device__ __forceinline__ void add_acc(float (&acc)[BN / 2], const float* partials, int* flags,
                                        int64_t slot, int half) {
  add_partial<BN / 8, 128>(
      partials + slot * 64 * BN, flags + slot, threadIdx.x % 128,
      [&](int i, float4 v) {
        acc[4 * i] += v.x, acc[4 * i + 1] += v.y, acc[4 * i + 2] += v.z, acc[4 * i + 3] += v.w;
      },
      [half] { ptx::named_barrier(BAR + half, 128); });
}

template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void split_global_gemm(const CUtensorMap* tma_a,
                                                  const CUtensorMap* tma_b, T* C, int64_t M,
                                                  int64_t N, int64_t K, int64_t ldc, float alpha,
                                                  float beta, float* partials, int* flags) {
  split_body<T, Cfg, A_KMAJOR, B_KMAJOR>(
      M, K, thread_zero_producer<A_KMAJOR, B_KMAJOR>(tma_a, tma_b),
      [] {
        if (threadIdx.x == 0) ptx::griddepcontrol_launch_dependents();  // every copy is issued
      },
      [&](const auto&, float (&acc)[Cfg::BN / 2], int half, int m0, int n0) {
        const int split = static_cast<int>(gridDim.z), z = static_cast<int>(blockIdx.z);
        const int64_t first_slot = int64_t(blockIdx.x) * (split - 1) * 2 + half;
        if (z < split - 1) {
          publish_acc<Cfg::BN>(acc, partials, flags, first_slot + 2 * z, half);
          return;
        }
        // The tile's slots z = 0 .. S-2 of this half, two slots apart, two at a time (BN = 128).
        add_partials<Cfg::BN / 8, 128, Cfg::BN <= 128>(
            partials + first_slot * 64 * Cfg::BN, 2 * 64 * Cfg::BN, flags + first_slot, 2,
            split - 1, threadIdx.x % 128,
            [&](int i, float4 v) {
              acc[4 * i] += v.x, acc[4 * i + 1] += v.y, acc[4 * i + 2] += v.z, acc[4 * i + 3] += v.w;
            },
            [half] { ptx::named_barrier(2 + half, 128); });
        store_acc<Cfg::BN, T>(acc, C, ldc, M, N, m0 + 64 * half, n0, alpha, beta);
      });
}

}  // namespace fastgemm::hopper

// A rung's kernel whose blocks hand partial tiles over through the stream's scratch (one
// instantiation per element type and operand layout): the Hopper kernel's parameters without C's
// tensor map, plus the scratch (launch.cuh passes it); BODY is split_global_gemm or (stream_k.cuh)
// stream_k_gemm.
#define FASTGEMM_HOPPER_SCRATCH_KERNEL(NAME, CFG, BODY)                                         \
  template <typename T, bool A_KMAJOR, bool B_KMAJOR>                                           \
  __global__ void __launch_bounds__(CFG::THREADS, CFG::MIN_BLOCKS) NAME##_kernel(               \
      const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,     \
      T* C, int64_t M, int64_t N, int64_t K, int64_t ldc, float alpha, float beta,              \
      float* partials, int* flags) {                                                            \
    ::fastgemm::hopper::BODY<T, CFG, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, \
                                                         beta, partials, flags);                \
  }
#define FASTGEMM_HOPPER_SPLIT_GLOBAL_KERNEL(NAME, CFG) \
  FASTGEMM_HOPPER_SCRATCH_KERNEL(NAME, CFG, split_global_gemm)
