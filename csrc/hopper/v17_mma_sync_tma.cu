// hgemm_v17_mma_sync_tma — the mma.sync ladder's last step on Hopper: consumer warps that only
// ldmatrix and mma, fed by a TMA producer warpgroup through an mbarrier ring; persistent blocks.
//
// What changed since v09 (the best cp.async rung): the 8 math warps (2x4 warps of 64x64, as v09)
// no longer copy. A producer warpgroup — one thread issuing TMA copies (128-byte swizzle) of
// whole A and B tiles — streams them into a 4-stage ring, each stage completing on its `full`
// mbarrier; a math warp releases a stage on its `empty` mbarrier once its last ldmatrix of the
// stage has been consumed. No __syncthreads in the main loop. setmaxnreg gives the producer's
// registers to the math warps (3 warps of a sub-partition's 4 would otherwise cap them at 168 and
// spill). ldmatrix addresses walk the layout TMA writes (Smem::tma_boxes in hgemm/hgemm.cuh: the
// XOR pattern of v04-v09 in 64-element boxes). Blocks are persistent (one per SM, grouped order of
// 16 tile rows), so the producer fills the ring for the next tile while the math warps write C.
// Why faster: in v09 every math warp also issues 12 cp.async and their address arithmetic per
// k-tile, waits for its own copies and meets the others at a barrier. Issuing the copies from a
// math thread instead (no producer warps) measured slower than v09: that warp falls behind each
// k-tile and paces the whole block through the ring (benchmarks/NOTES.md).
// What limits it: mma.sync's ceiling on Hopper (about 2/3 of wgmma's), 32 ldmatrix.x4 per 128 mma per warp and k-tile, and C written
// straight from registers while the tensor cores idle. Only for sm_90a (TMA, setmaxnreg).
// Shapes: any M, N, K >= 1 (TMA zero-fills the edges); 16-byte aligned operands; both layouts.
#include "hgemm/rungs.h"
#include "hopper/mainloop.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;
// v09's tiles, warps and fragment code on the TMA layout, 4 stages (its COPY and run() are
// unused); the Hopper launch of a persistent, balanced, single-CTA rung without PDL.
struct V17 : hgemm::V09 {
  static constexpr hgemm::Smem SMEM = hgemm::Smem::tma_boxes;
  static constexpr int STAGES = 4;
  static constexpr int BM = BLOCK_M, BN = BLOCK_N, MATH_WARPS = WARPS_M * WARPS_N;
  static constexpr int THREADS = 32 * MATH_WARPS + 128;  // two math warpgroups + the producer
  static constexpr Mainloop MAINLOOP = Mainloop::ring;
  static constexpr Schedule SCHEDULE = Schedule::persistent;
  static constexpr int GROUP_M = 16, CLUSTER = 1;
  static constexpr bool BALANCE = true;
  static constexpr Store STORE = Store::registers;
  static constexpr int C_PIECE = 0, C_SLOTS = 0;
  static constexpr bool BORROW = false, HOIST_BETA = false, PDL = false;
  static constexpr int STAGING = 0;
};
static_assert(V17::BLOCK_K == BLOCK_K, "a stage is one 64-deep TMA k-tile");

FASTGEMM_HOPPER_KERNEL(hgemm_v17_mma_sync_tma, V17) {
  using Kern = hgemm::Kernel<V17, T, A_KMAJOR, B_KMAJOR>;
  using Ring = hopper::Ring<V17::BM, V17::BN, V17::STAGES, V17::MATH_WARPS>;
  constexpr int STAGES = V17::STAGES;
  const Ring ring = make_ring<Ring>();
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int k_tiles = static_cast<int>((K + BLOCK_K - 1) / BLOCK_K);
  const Persistent<V17::BM, V17::BN, V17::GROUP_M> sched(M, N);
  if (warp >= V17::MATH_WARPS) {  // the producer warpgroup: one thread streams every tile's k-tiles
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 32 * V17::MATH_WARPS) {
      produce_tiles<A_KMAJOR, B_KMAJOR>(ring, sched, &tma_a, &tma_b, k_tiles);
    }
    return;
  }
  ptx::setmaxnreg_inc<CONSUMER_REGS>();

  const int warp_m = warp / V17::WARPS_N, warp_n = warp % V17::WARPS_N;
  auto frags = [&](int s) {
    const T* As = reinterpret_cast<const T*>(ring.stage(s));
    return typename Kern::Frags(As, As + Ring::A_BYTES / sizeof(T), warp_m, warp_n);
  };
  uint32_t a[2][Kern::MI][4], b[2][Kern::NI][2];  // fragments of k-steps kk and kk + 1
  int it = 0;  // the block's running k-tile (as produce_tiles counts it): stage it % STAGES
  for (int tile = sched.first; tile < sched.count(); tile += sched.step) {
    int m0, n0;
    sched.tile(tile, m0, n0);
    float acc[Kern::MI][Kern::NI][4];
    Kern::zero_acc(acc);
    if (k_tiles > 0) {
      frags(ring.wait_full(it)).load(0, a[0], b[0]);
    }
    for (int t = 0; t < k_tiles; ++t, ++it) {
      const int s = it % STAGES;
      const auto cur = frags(s);
#pragma unroll
      for (int kk = 0; kk < Kern::KSTEPS; ++kk) {
        if (kk + 1 < Kern::KSTEPS) {
          cur.load(kk + 1, a[(kk + 1) % 2], b[(kk + 1) % 2]);
        } else if (t + 1 < k_tiles) {  // the next k-tile's first fragments, from the next stage
          frags(ring.wait_full(it + 1)).load(0, a[(kk + 1) % 2], b[(kk + 1) % 2]);
        }
        Kern::mma_step(a[kk % 2], b[kk % 2], acc);
      }
      // The last mma of the stage has its operands: every ldmatrix of the warp from stage s is
      // complete, and the warp gives the stage back.
      __syncwarp();
      if (lane == 0) ring.release(s);
    }
    Kern::epilogue(C, ldc, M, N, m0, n0, warp_m, warp_n, acc, alpha, beta);
  }
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v17_mma_sync_tma, V17)

FASTGEMM_REGISTER_HGEMM(hgemm_v17_mma_sync_tma, {17, 90, 90, 16, "mma_sync", "tma", "registers",
    "hgemm_v09_raster", true,
    "mma.sync + ldmatrix math warps fed by TMA copies through a 4-stage mbarrier ring (no"
    " copy instructions in the math warps), persistent"})
