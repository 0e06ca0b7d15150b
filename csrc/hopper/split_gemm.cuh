// hopper/split_gemm.cuh — the split-K kernel body, composed of the parts: a Ring (ring.cuh) fed
// by one producer thread with this block's share of the k-tiles, the wgmma consumers
// (mainloop.cuh), the SplitK scheduler (scheduler.cuh: a block per tile and share of K, the
// shares of a tile one cluster), and the split-K epilogue: stage_acc (epilogue.cuh) writes each
// consumer's fp32 accumulators into the drained ring, cluster_reduce_store (common/split_k.cuh)
// sums the cluster's partial tiles in rank order and stores C.
//
// Roles: warpgroup 0 gives its registers away; its thread 0 streams the block's k-tiles into the
// ring, then all of warpgroup 0 meets the cluster's two reduction barriers. Consumer warpgroup
// w (1, 2) multiplies rows 64(w-1)..64w-1 of the tile; once both have drained the ring (named
// barrier 1: every copy has landed and every wgmma has read its stage), the ring's memory holds
// the BM x BN partial tile at a row pitch of Cfg::RED_LD floats. PDL: split_share waits for the
// previous kernel before the first copy is issued.
#pragma once
#include "hopper/epilogue.cuh"
#include "hopper/mainloop.cuh"
#include "hopper/scheduler.cuh"

namespace fastgemm::hopper {

// The body both split-K reductions share (this one and split_global.cuh): the ring, this block's
// share of the k-tiles (after the previous kernel) and its tile; thread 0 of warpgroup 0 streams
// the share into the ring, then all of warpgroup 0 runs producer_done(); consumer warpgroup half
// (0, 1) multiplies its 64 rows and calls finish(ring, acc, half, m0, n0) with its accumulators.
template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR, typename ProducerDone,
          typename Finish>
__device__ __forceinline__ void split_body(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                           int64_t M, int64_t K, ProducerDone producer_done,
                                           Finish finish) {
  static_assert(Cfg::THREADS == 384 && Cfg::BM == 128 && Cfg::CLUSTER == 1,
                "a producer and two consumer warpgroups of 64 rows; no cluster of tiles");
  using RingT = Ring<Cfg::BM, Cfg::BN, Cfg::STAGES, 2>;
  const RingT ring = make_ring<RingT>();
  __syncthreads();  // the ring's barriers are initialised
  int64_t first, count;  // this block's k-tiles (after the previous kernel: PDL)
  split_share((K + BLOCK_K - 1) / BLOCK_K, first, count);
  int m0, n0;
  SplitK<Cfg::BM, Cfg::BN>::tile(M, m0, n0);
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      int it = 0;
      produce<A_KMAJOR, B_KMAJOR>(ring, tma_a, tma_b, m0, n0, static_cast<int>(count), it,
                                  static_cast<int>(first));
    }
    producer_done();
  } else {
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int half = wg - 1;
    int it = 0;
    float acc[Cfg::BN / 2];
    consume<T, A_KMAJOR, B_KMAJOR>(ring, acc, half, static_cast<int>(count), it);
    finish(ring, acc, half, m0, n0);
  }
}

template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void split_k_gemm(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                             T* C, int64_t M, int64_t N, int64_t K, int64_t ldc,
                                             float alpha, float beta) {
  split_body<T, Cfg, A_KMAJOR, B_KMAJOR>(
      tma_a, tma_b, M, K,
      [] {
        ptx::cluster_sync();  // the two barriers of the consumers' cluster_reduce_store
        ptx::cluster_sync();
      },
      [&](const auto& ring, float (&acc)[Cfg::BN / 2], int half, int m0, int n0) {
        ptx::named_barrier(1, 256);  // both warpgroups are done with the ring
        float* red = reinterpret_cast<float*>(ring.stages);
        stage_acc<Cfg::BN, Cfg::RED_LD>(acc, red + 64 * half * Cfg::RED_LD);
        cluster_reduce_store<Cfg::BM, Cfg::BN, Cfg::RED_LD, 256, 128>(red, C, ldc, M, N, m0, n0,
                                                                      alpha, beta);
      });
}

}  // namespace fastgemm::hopper
