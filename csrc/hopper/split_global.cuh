// hopper/split_global.cuh — the split-K kernel body whose partial tiles meet in global memory
// instead of in a cluster's shared memory: split_gemm.cuh's split_body (the ring, one producer
// thread with this block's share of the k-tiles, the wgmma consumers; grid x the tiles, grid z
// the split S, but no cluster), and a hand-off through a scratch buffer (common/runtime.h:
// stream_scratch).
//
// Contract (common/split_k.cuh: publish_partial and the helpers). The S blocks of a tile take
// even shares of its k-tiles (split_share). Consumer warpgroup `half` of every block z hands its
// 64 x BN fp32 accumulators (in wgmma's register order) to slot (tile * 2 + half) * S + z of
// `partials` and raises the slot's flag (named barrier 2 + half, then a release). Blocks
// z < S - H, H = ceil(S / 2), then leave. The same warpgroup of the last H blocks (helpers
// b = z - (S - H), each registered as started before its first k-tile: band_start) sums band b
// of the 64 x BN tile (columns 8j .. 8j + 7 for the float4s j of band_range) over the S slots in
// the order S-1, 0, .., S-2 (band_sums) and stores alpha * sum + beta * C (C row-major) — or,
// where another helper had not started when it was through (a contended GPU), leaves the band to
// the last helper to start (band_claim), which sums it beside its own. The last block through
// lowers the flags (band_done). The order of the sums is fixed by the launch, so repeated calls
// give the same bits, the same as when block S-1 added the others' slots to its registers. A
// helper waits only for contributors (dispatched before it, as an owner did) and for helpers
// that have started, so a launch completes on a GPU shared with other work; on an idle one the
// launcher keeps the grid within one block per SM (global_split_count). Launches that share the
// scratch run one after another (one buffer per stream; PDL: a block waits for the previous
// kernel in split_share before it touches global memory). The producer gives no early
// launch_dependents, as the persistent rungs do once their copies are issued: the next launch
// starts once all of this one's blocks have exited. Back to back on deep K, v28 with the early
// signal ran slower (the next grid's blocks waited on the SMs the contributors freed;
// benchmarks/NOTES.md, thirty-second session).
// Scratch: S slots of 64 x BN floats per tile and half, their flags, then two words per tile and
// half (started helpers and bands left; members through).
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

// band_claim by thread 0 of consumer warpgroup `half`, its value for the whole warpgroup (named
// barrier 2 + half).
__device__ __forceinline__ unsigned claim_bands(unsigned* word, unsigned start, int helpers,
                                                int band, int half) {
  __shared__ unsigned claimed[2];
  if (threadIdx.x % 128 == 0) claimed[half] = band_claim(word, start, helpers, band);
  ptx::named_barrier(2 + half, 128);
  return claimed[half];
}

template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void split_global_gemm(const CUtensorMap* tma_a,
                                                  const CUtensorMap* tma_b, T* C, int64_t M,
                                                  int64_t N, int64_t K, int64_t ldc, float alpha,
                                                  float beta, float* partials, int* flags) {
  constexpr int BN = Cfg::BN;
  static_assert(Cfg::MAX_SPLIT <= 16, "a group's left bands are 16 bits of its word");
  const int split = static_cast<int>(gridDim.z), z = static_cast<int>(blockIdx.z);
  const int t = threadIdx.x % 128;
  // The last H = ceil(S / 2) blocks sum the tile, a band each (band < 0: a contributor).
  const int helpers = (split + 1) / 2, band = z - (split - helpers);
  int* const states = flags + int64_t(gridDim.x) * 2 * split;  // two words per (tile, half)
  unsigned start = 0;  // band_start's value (a helper's thread t = 0 of each consumer warpgroup)
  split_body<T, Cfg, A_KMAJOR, B_KMAJOR>(
      M, K, thread_zero_producer<A_KMAJOR, B_KMAJOR>(tma_a, tma_b),
      [] {},  // no early launch_dependents (above)
      [&](const auto&, float (&acc)[Cfg::BN / 2], int half, int m0, int n0) {
        const int64_t row0 = m0 + 64 * half;
        if (split == 1) {
          store_acc<BN, T>(acc, C, ldc, M, N, row0, n0, alpha, beta);
          return;
        }
        const int64_t group = int64_t(blockIdx.x) * 2 + half;
        const int64_t first_slot = group * split;
        publish_acc<BN>(acc, partials, flags, first_slot + z, half);
        unsigned* word = reinterpret_cast<unsigned*>(states + 2 * group);
        const unsigned bands = band < 0 ? 0u : claim_bands(word, start, helpers, band, half);
        if (bands != 0) {
          band_wait<128>(flags + first_slot, split, t);
          ptx::named_barrier(2 + half, 128);  // every slot is visible from here on
          const float* first = partials + first_slot * 64 * BN;
          for (int b = 0; b < helpers; ++b) {
            if ((bands >> b & 1u) == 0) continue;
            int i0, i1;
            band_range(BN / 8, b, helpers, i0, i1);
            band_sums<128>(first, 64 * BN, split, i0, i1, t, [&](int i, float4 sum) {
              store_acc_quad(sum, i, C, ldc, M, N, row0, n0, alpha, beta);
            });
          }
        }
        if (t == 0) band_done(flags + first_slot, split, word, states + 2 * group + 1, split);
      },
      [&](int half) {
        if (split == 1 || band < 0 || t != 0) return;
        const int64_t group = int64_t(blockIdx.x) * 2 + half;
        start = band_start(reinterpret_cast<unsigned*>(states + 2 * group));
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
