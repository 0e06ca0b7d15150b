// hopper/persistent.cuh — the warp-specialised persistent kernel body, composed of the parts:
// a Ring (ring.cuh) filled by one producer thread, a Persistent scheduler (scheduler.cuh), the
// wgmma consumers (mainloop.cuh) and an epilogue (epilogue.cuh), plus programmatic dependent
// launch where the configuration asks for it.
//
// Roles: warpgroup 0 gives its registers away and one of its threads streams the k-tiles of
// every tile the scheduler gives the block (cluster) into the ring, running ahead across tile
// boundaries; consumer warpgroup w (1 .. BM / 64) multiplies rows 64(w-1)..64w-1 of each tile
// and hands its accumulators to the epilogue, which runs while the producer already fills the
// ring with the next tile. PROMOTE > 0: the consumers add each group of PROMOTE k-tiles'
// products into their accumulators in round-to-nearest fp32 (mainloop.cuh: consume). The Lender
// (OwnBuffers / BorrowedStage) says which consumer keeps a stage for its stores. PDL: the
// producer lets the next kernel of the stream launch once it has issued its last copy (the
// kernel waits for the previous one before touching global memory).
#pragma once
#include <type_traits>

#include "hopper/epilogue.cuh"
#include "hopper/mainloop.cuh"
#include "hopper/scheduler.cuh"

namespace fastgemm::hopper {

// Gate: the producer's wait before each k-tile's copies (mainloop.cuh: Open, none).
template <typename T, bool PDL, bool A_KMAJOR, bool B_KMAJOR, typename Sched, int PROMOTE = 0,
          typename RingT, typename Lender, typename Epilogue, typename Gate = Open>
__device__ __forceinline__ void persistent_gemm(const RingT& ring, const CUtensorMap* tma_a,
                                                const CUtensorMap* tma_b, int64_t M, int64_t N,
                                                int64_t K, Lender lender, Epilogue&& epilogue,
                                                Gate gate = {}) {
  constexpr int BM = RingT::TILE_M;
  const int wg = threadIdx.x / 128;
  constexpr int BK = k_tile<T>();
  const int k_tiles = static_cast<int>((K + BK - 1) / BK);
  const Sched sched(M, N);
  const int row_offset = static_cast<int>(ring.rank) * BM;  // this block's rows of the cluster tile
  static_assert(regs_fit<RingT::CONSUMER_WARPGROUPS, RingT::TILE_N>(),
                "setmaxnreg's split must fit the SM and the consumers' accumulators");
  if (wg == 0) {
    ptx::setmaxnreg_dec<producer_regs<RingT::CONSUMER_WARPGROUPS>()>();
    if (threadIdx.x == 0) {
      produce_tiles<A_KMAJOR, B_KMAJOR, BK>(ring, sched, tma_a, tma_b, k_tiles, row_offset, gate);
      if constexpr (PDL) ptx::griddepcontrol_launch_dependents();
    }
  } else {
    ptx::setmaxnreg_inc<consumer_regs<RingT::CONSUMER_WARPGROUPS>()>();
    const int half = wg - 1;
    int it = 0;  // the running k-tile counter, advanced alike by the producer (produce_tiles)
    for (int tile = sched.first; tile < sched.count(); tile += sched.step) {
      int m0, n0;
      sched.tile(tile, m0, n0);
      float acc[RingT::TILE_N / 2];
      consume<T, A_KMAJOR, B_KMAJOR, PROMOTE>(ring, acc, half, k_tiles, it,
                                              lender.keeps_stage(half),
                                              [&] { lender.give_back(ring); });
      unsigned char* stage = lender.take(ring, it, half);
      epilogue(acc, m0 + row_offset + 64 * half, n0, half, stage);
    }
  }
}

// The configuration's ring and scheduler (a persistent rung: Cfg::BM, BN, STAGES, CLUSTER,
// GROUP_M; a consumer warpgroup per 64 rows of BM, after the producer warpgroup).
template <typename Cfg>
using RingOf = Ring<Cfg::BM, Cfg::BN, Cfg::STAGES, consumers_of<Cfg>(), Cfg::CLUSTER>;
template <typename Cfg>
using PersistentOf = Persistent<Cfg::BM, Cfg::BN, Cfg::GROUP_M, Cfg::CLUSTER>;

// The whole body of a persistent TMA-store rung: the ring's stages, then the C buffers
// of the TmaStore epilogue; Cfg::BORROW lends warpgroup 2 a stage instead of a buffer; Cfg::PDL
// waits for the previous kernel after the barriers are initialised.
template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR, typename Gate = Open>
__device__ __forceinline__ void persistent_tma_store_gemm(
    const CUtensorMap* tma_a, const CUtensorMap* tma_b, const CUtensorMap* tma_c, T* C, int64_t M,
    int64_t N, int64_t K, int64_t ldc, float alpha, float beta, Gate gate = {}) {
  using RingT = RingOf<Cfg>;
  using Lender = std::conditional_t<Cfg::BORROW, BorrowedStage<RingT>, OwnBuffers<RingT>>;
  const RingT ring = make_ring<RingT>(Cfg::CLUSTER > 1 ? ptx::cluster_ctarank() : 0u);
  // Every CTA's barriers are initialised before any CTA of the cluster signals them.
  if constexpr (Cfg::CLUSTER > 1) {
    ptx::cluster_sync();
  } else {
    __syncthreads();
  }
  // PDL: nothing global is read or written before the previous kernel is complete.
  if constexpr (Cfg::PDL) ptx::griddepcontrol_wait();
  const TmaStore<Cfg, T> epilogue{ring.stages + RingT::BYTES, tma_c, C, ldc, M, N, alpha, beta};
  persistent_gemm<T, Cfg::PDL, A_KMAJOR, B_KMAJOR, PersistentOf<Cfg>>(ring, tma_a, tma_b, M, N, K,
                                                                     Lender{}, epilogue, gate);
  if (threadIdx.x >= 128 && threadIdx.x % 128 == 0) ptx::bulk_wait<0>();  // the last stores landed
  // No CTA leaves while a peer may still arrive on its `empty` barriers.
  if constexpr (Cfg::CLUSTER > 1) ptx::cluster_sync();
}

}  // namespace fastgemm::hopper
