// hgemm_v11_wide_tile — larger tiles: 128x256 per block, two consumer warpgroups.
//
// What changed since v10: the block tile doubles to 128x256 and the block holds two warpgroups,
// each issuing m64n256k16 wgmmas (the widest) on its own 64-row half of A against the whole B
// tile: 4 wgmmas per warpgroup per k-tile, 128 fp32 accumulators per thread.
// Why faster: every byte brought into shared memory feeds twice the math (85 instead of 64
// FLOP/byte from L2), each wgmma is twice as long (fewer issue/commit overheads), and two
// warpgroups keep two tensor-core streams going per block.
// What limits it: still one stage — both warpgroups wait for each tile's TMA copies and the next
// copy waits for both to finish — and now nothing else hides that: 256 threads x ~154 registers
// leave room for one block per SM (v10's 128-thread blocks fit three, which overlap each other's
// copies), so on its own this rung is slower than v10. It is the tile shape the pipelined rungs
// build on.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/epilogue.cuh"
#include "hopper/mainloop.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v11_wide_tile, V11) {
  constexpr int WARPGROUPS = V11::THREADS / 128, SLICES = V11::BM / 64 / WARPGROUPS;
  int m0, n0;
  OneShot<V11::BM, V11::BN>::tile(m0, n0);
  float acc[SLICES][V11::BN / 2];
  one_stage_mainloop<T, V11::BM, V11::BN, WARPGROUPS, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, K, m0,
                                                                          n0, acc);
  const int wg = threadIdx.x / 128;
#pragma unroll
  for (int h = 0; h < SLICES; ++h) {
    store_acc<V11::BN>(acc[h], C, ldc, M, N, m0 + 64 * (wg * SLICES + h), n0, alpha, beta);
  }
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v11_wide_tile, V11)

FASTGEMM_REGISTER_HGEMM(hgemm_v11_wide_tile, {11, 90, 90, 16, "wgmma", "tma", "registers",
    "hgemm_v10_wgmma_tma", true,
    "128x256 tiles, two consumer warpgroups issuing m64n256k16"})
