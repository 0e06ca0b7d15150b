// hopper/stream_k.cuh — the stream-K kernel body: the blocks (one per SM at most, a group of one
// per row of tiles) compute equal runs of the problem's k-tiles, column of tiles after column
// (scheduler.cuh: StreamK), so that the SMs share the work evenly whatever the number of output
// tiles; a tile whose K is cut between the blocks of consecutive groups is summed through global
// memory as in split_global.cuh.
//
// Composed of the parts: a Ring (ring.cuh) fed by one producer thread with the k-tiles of the
// block's segments in compute order, the wgmma consumers (mainloop.cuh), the StreamK scheduler,
// and the hand-off of common/split_k.cuh (publish_partial / add_partial) with the registers ->
// global store (epilogue.cuh: store_acc).
//
// Contract. A segment that stops short of its tile's end is a contribution: each consumer
// warpgroup publishes its 64 x BN fp32 accumulators to slot 2 b + half of `partials` (b: the
// block; a block contributes at most once) and raises the slot's flag. The segment that ends a
// tile owns it: it adds the slots of the tile's blocks of earlier groups in group order (acquire,
// lowering each flag for the next launch) to its own sum and stores alpha * sum + beta * C. The
// order is fixed by the launch, so repeated calls give the same bits. A block computes its
// contribution before anything else and its first segment (the one it may own) after everything
// else, and only waits (as an owner) for lower-numbered blocks,
// which are dispatched before it; the grid is at most one block per SM where tiles are cut (one
// group cuts none), so every block is resident on an otherwise idle GPU and each wait ends. PDL: every thread waits for the previous
// kernel before the first copy; no early launch_dependents, so the next launch starts once all
// of this one's blocks have exited (as split_global.cuh's).
#pragma once
#include "hopper/split_global.cuh"  // the hand-off, and the kernel macro

namespace fastgemm::hopper {

template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void stream_k_gemm(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                              T* C, int64_t M, int64_t N, int64_t K, int64_t ldc,
                                              float alpha, float beta, float* partials,
                                              int* flags) {
  static_assert(Cfg::THREADS == 384 && Cfg::BM == 128 && Cfg::CLUSTER == 1,
                "a producer and two consumer warpgroups of 64 rows; no cluster of tiles");
  using RingT = Ring<Cfg::BM, Cfg::BN, Cfg::STAGES, 2>;
  const RingT ring = make_ring<RingT>();
  __syncthreads();              // the ring's barriers are initialised
  ptx::griddepcontrol_wait();   // the previous kernel's writes are visible from here on
  const StreamK<Cfg::BM, Cfg::BN> sched(M, N, K);
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      int it = 0;
      for (int i = 0; i < sched.segments(); ++i) {
        int64_t c;
        int m0, n0, k0, k1;
        sched.segment(i, c, m0, n0, k0, k1);
        produce<A_KMAJOR, B_KMAJOR>(ring, tma_a, tma_b, m0, n0, k1 - k0, it, k0);
      }
    }
    return;
  }
  ptx::setmaxnreg_inc<CONSUMER_REGS>();
  const int half = wg - 1;
  int it = 0;
  for (int i = 0; i < sched.segments(); ++i) {
    int64_t c;
    int m0, n0, k0, k1;
    sched.segment(i, c, m0, n0, k0, k1);
    float acc[Cfg::BN / 2];
    consume<T, A_KMAJOR, B_KMAJOR>(ring, acc, half, k1 - k0, it);
    if (k1 < sched.k_tiles) {  // a contribution: the block's slot
      publish_acc<Cfg::BN>(acc, partials, flags, 2 * int64_t(blockIdx.x) + half, half);
      continue;
    }
    if (k0 > 0) {  // the tile's blocks of earlier groups, in order
      for (int g = sched.first_group(c); g < sched.group; ++g) {
        add_acc<Cfg::BN>(acc, partials, flags, 2 * sched.slot(g) + half, half);
      }
    }
    store_acc<Cfg::BN, T>(acc, C, ldc, M, N, m0 + 64 * half, n0, alpha, beta);
  }
}

}  // namespace fastgemm::hopper
