// hopper/hybrid.cuh — the persistent TMA-store kernel body (persistent.cuh) under the Hybrid
// schedule (scheduler.cuh): whole tiles in rounds as in a persistent kernel, then the tiles of
// the last partial round split along K, their shares meeting in global memory as in
// split_global.cuh.
//
// Composed of the parts: a Ring (ring.cuh) fed by one producer thread with the k-tiles of the
// block's items in order, the wgmma consumers (mainloop.cuh), the hand-off of split_global.cuh
// (publish_acc / add_acc, named barriers 4 + half: the TMA-store epilogue holds 1-3), and the
// TMA-store epilogue with its lender (epilogue.cuh: TmaStore, BorrowedStage).
//
// Contract. A whole tile is stored as in v20. A split tile's share z < S - 1 is a contribution:
// each consumer warpgroup publishes its 64 x BN fp32 accumulators to slot 2 b + half of
// `partials` (b: the block) and raises the slot's flag; it stores nothing. Share S - 1 owns the
// tile: it adds the slots of blocks z R + r, z = 0 .. S - 2, in that order (acquire, lowering
// each flag for the next launch) to its own sum and stores alpha * sum + beta * C through the
// TMA-store epilogue. The order of every sum is fixed by the launch, so repeated calls give the
// same bits. An owner waits only for lower-numbered blocks, which are dispatched before it and
// never wait themselves; the grid is at most one block per SM, so on an otherwise idle GPU every
// block is resident and each wait ends. PDL: every thread waits for the previous kernel after the
// barriers are initialised; the producer lets the next kernel launch once its copies are issued.
#pragma once
#include <type_traits>

#include "hopper/epilogue.cuh"
#include "hopper/mainloop.cuh"
#include "hopper/scheduler.cuh"
#include "hopper/split_global.cuh"

namespace fastgemm::hopper {

template <typename T, typename Cfg, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void hybrid_gemm(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                            const CUtensorMap* tma_c, T* C, int64_t M, int64_t N,
                                            int64_t K, int64_t ldc, float alpha, float beta,
                                            float* partials, int* flags) {
  static_assert(Cfg::THREADS == 384 && Cfg::BM == 128 && Cfg::CLUSTER == 1 && Cfg::PDL,
                "a producer and two consumer warpgroups of 64 rows; no cluster; a dependent launch");
  using RingT = Ring<Cfg::BM, Cfg::BN, Cfg::STAGES, 2>;
  using Lender = std::conditional_t<Cfg::BORROW, BorrowedStage<RingT>, OwnBuffers<RingT>>;
  constexpr int HAND_OFF = 4;  // named barriers 4, 5
  const RingT ring = make_ring<RingT>();
  __syncthreads();             // the ring's barriers are initialised
  ptx::griddepcontrol_wait();  // the previous kernel's writes are visible from here on
  const Hybrid<Cfg::BM, Cfg::BN, Cfg::GROUP_M> sched(M, N, K);
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      int it = 0;
      for (int i = 0; i < sched.items; ++i) {
        int c, m0, n0, k0, k1, z;
        sched.item(i, c, m0, n0, k0, k1, z);
        produce<A_KMAJOR, B_KMAJOR>(ring, tma_a, tma_b, m0, n0, k1 - k0, it, k0);
      }
      ptx::griddepcontrol_launch_dependents();  // every copy is issued
    }
    return;
  }
  ptx::setmaxnreg_inc<CONSUMER_REGS>();
  const TmaStore<Cfg, T> epilogue{ring.stages + RingT::BYTES, tma_c, C, ldc, M, N, alpha, beta};
  Lender lender{};
  const int half = wg - 1;
  int it = 0;
  for (int i = 0; i < sched.items; ++i) {
    int c, m0, n0, k0, k1, z;
    sched.item(i, c, m0, n0, k0, k1, z);
    float acc[Cfg::BN / 2];
    consume<T, A_KMAJOR, B_KMAJOR>(ring, acc, half, k1 - k0, it, lender.keeps_stage(half),
                                   [&] { lender.give_back(ring); });
    unsigned char* stage = lender.take(ring, it, half);  // held until the next item, stored or not
    if (z < sched.split - 1 && c >= sched.whole) {  // a contribution: the block's slot
      publish_acc<Cfg::BN, HAND_OFF>(acc, partials, flags, 2 * int64_t(sched.block) + half, half);
      continue;
    }
    for (int q = 0; q < z; ++q) {  // the tile's earlier shares, in order
      const int64_t b = int64_t(q) * sched.rest + (c - sched.whole);
      add_acc<Cfg::BN, HAND_OFF>(acc, partials, flags, 2 * b + half, half);
    }
    epilogue(acc, m0 + 64 * half, n0, half, stage);
  }
  if (threadIdx.x % 128 == 0) ptx::bulk_wait<0>();  // the last stores landed
}

}  // namespace fastgemm::hopper

// A hybrid rung's kernel (one instantiation per element type and operand layout): the Hopper
// kernel's parameters, C's tensor map included, plus the stream's scratch (launch.cuh passes it).
#define FASTGEMM_HOPPER_HYBRID_KERNEL(NAME, CFG)                                                \
  template <typename T, bool A_KMAJOR, bool B_KMAJOR>                                           \
  __global__ void __launch_bounds__(CFG::THREADS, CFG::MIN_BLOCKS) NAME##_kernel(               \
      const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,     \
      const __grid_constant__ CUtensorMap tma_c, T* C, int64_t M, int64_t N, int64_t K,         \
      int64_t ldc, float alpha, float beta, float* partials, int* flags) {                      \
    ::fastgemm::hopper::hybrid_gemm<T, CFG, A_KMAJOR, B_KMAJOR>(                                 \
        &tma_a, &tma_b, &tma_c, C, M, N, K, ldc, alpha, beta, partials, flags);                 \
  }
