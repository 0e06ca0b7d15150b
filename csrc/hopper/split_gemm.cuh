// hopper/split_gemm.cuh — the split-K kernel body, composed of the parts: a Ring (ring.cuh) fed
// by the producer warpgroup with this block's share of the k-tiles (its thread 0 by TMA, or all
// of it: staged.cuh), the wgmma consumers
// (mainloop.cuh), the SplitK scheduler (scheduler.cuh: a block per tile and share of K, the
// shares of a tile one cluster), and the split-K epilogue: stage_acc (epilogue.cuh) writes each
// consumer's fp32 accumulators into the drained ring, cluster_reduce_store (common/split_k.cuh)
// sums the cluster's partial tiles in rank order and stores C.
//
// Roles: warpgroup 0 gives its registers away and streams the block's k-tiles into the ring (the
// producer functor), then meets the cluster's two reduction barriers. Consumer warpgroup
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
// share of the k-tiles (after the previous kernel) and its tile; warpgroup 0 streams the share
// into the ring (thread_zero_producer: its thread 0 by TMA), then runs producer_done(); consumer
// warpgroup half (0, 1) multiplies its 64 rows and calls finish(ring, acc, half, m0, n0) with its
// accumulators.
// Producer (a functor): warpgroup 0 calls producer(ring, m0, n0, first, count) with the block's
// share (k-tiles first .. first + count - 1); FULL is the ring's (ring.cuh). start(half), where
// given, runs in each consumer warpgroup before its first k-tile.
struct NoStart {
  __device__ void operator()(int) const {}
};
template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR, int FULL = 1,
          typename Producer, typename ProducerDone, typename Finish, typename Start = NoStart>
__device__ __forceinline__ void split_body(int64_t M, int64_t K, Producer producer,
                                           ProducerDone producer_done, Finish finish,
                                           Start start = {}) {
  static_assert(Cfg::THREADS == 384 && Cfg::BM == 128 && Cfg::CLUSTER == 1,
                "a producer and two consumer warpgroups of 64 rows; no cluster of tiles");
  using RingT = Ring<Cfg::BM, Cfg::BN, Cfg::STAGES, 2, 1, FULL>;
  const RingT ring = make_ring<RingT>();
  __syncthreads();  // the ring's barriers are initialised
  int64_t first, count;  // this block's k-tiles (after the previous kernel: PDL)
  constexpr int BK = k_tile<T>();
  split_share((K + BK - 1) / BK, first, count);
  int m0, n0;
  SplitK<Cfg::BM, Cfg::BN>::tile(M, m0, n0);
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    producer(ring, m0, n0, static_cast<int>(first), static_cast<int>(count));
    producer_done();
  } else {
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int half = wg - 1;
    start(half);
    int it = 0;
    float acc[Cfg::BN / 2];
    consume<T, A_KMAJOR, B_KMAJOR, Cfg::PROMOTE>(ring, acc, half, static_cast<int>(count), it);
    finish(ring, acc, half, m0, n0);
  }
}

// The producer of the TMA rungs: thread 0 streams the share's k-tiles of both operands, each
// BK elements deep (k_tile<T>()).
template <bool A_KMAJOR, bool B_KMAJOR, int BK = BLOCK_K>
__device__ __forceinline__ auto thread_zero_producer(const CUtensorMap* tma_a,
                                                     const CUtensorMap* tma_b) {
  return [=](const auto& ring, int m0, int n0, int first, int count) {
    if (threadIdx.x != 0) return;
    int it = 0;
    produce<A_KMAJOR, B_KMAJOR, BK>(ring, tma_a, tma_b, m0, n0, count, it, first);
  };
}

// The cluster split (v24, v33, v34): producer as split_body's; C_VEC: C's rows are 4-byte
// aligned (element pairs stored at once), else element stores.
template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR, int FULL = 1, bool C_VEC = true,
          typename Producer>
__device__ __forceinline__ void split_k_gemm(Producer producer, T* C, int64_t M, int64_t N,
                                             int64_t K, int64_t ldc, float alpha, float beta) {
  split_body<T, Cfg, A_KMAJOR, B_KMAJOR, FULL>(
      M, K, producer,
      [] {
        ptx::cluster_sync();  // the two barriers of the consumers' cluster_reduce_store
        ptx::cluster_sync();
      },
      [&](const auto& ring, float (&acc)[Cfg::BN / 2], int half, int m0, int n0) {
        ptx::named_barrier(1, 256);  // both warpgroups are done with the ring
        float* red = reinterpret_cast<float*>(ring.stages);
        stage_acc<Cfg::BN, Cfg::RED_LD>(acc, red + 64 * half * Cfg::RED_LD);
        cluster_reduce_store<Cfg::BM, Cfg::BN, Cfg::RED_LD, 256, 128, C_VEC>(red, C, ldc, M, N,
                                                                             m0, n0, alpha, beta);
      });
}

template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void split_k_gemm(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                             T* C, int64_t M, int64_t N, int64_t K, int64_t ldc,
                                             float alpha, float beta) {
  split_k_gemm<T, Cfg, A_KMAJOR, B_KMAJOR>(
      thread_zero_producer<A_KMAJOR, B_KMAJOR, k_tile<T>()>(tma_a, tma_b), C, M, N, K, ldc, alpha,
      beta);
}

}  // namespace fastgemm::hopper
