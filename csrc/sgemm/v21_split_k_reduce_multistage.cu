// sgemm_v21_split_k_reduce_multistage — v20's split with no owner on v17's three-stage loop and
// v18's tilings. A branch of v20, a shape specialist for a deep K over tens of tiles.
//
// What changed since v20: each block runs its share of K on v17's loop (sgemm/multistage.cuh:
// three cp.async stages, fragments read a k ahead, a K-contiguous operand copied 4 bytes at a
// time into its transposed place) instead of v09's double-buffered one, on v18's tiles: 128x128
// of four warps of 16x8 lanes (two blocks per SM), or 64x128 / 128x64 of four warps of 8x8 lanes
// (three blocks per SM on sm_90) for outputs of at most 768 rows or columns. The partial tiles
// and their fixed-order sum (reduce_partials_kernel, a dependent launch) are v20's; S fills one
// round of the blocks the GPU holds at once by a model of the SM's throughput at 1-3 blocks and of
// the partial tiles' traffic (grid_split_choice), with shares of at least MIN_KTILES k-tiles.
// Why it pays: v18 splits K across a cluster, at most 8 ways, so an output of 30-130 tiles of
// 64x128 with a deep K (64x4096x14336: 32 tiles) leaves a third of the SMs' block slots empty
// or splits so that some SMs hold one block fewer than others; v20 fills every slot but runs v09's
// loop, whose warps stall on shared loads placed just before their FFMAs (v17's header). Here the
// split fills the slots (396 on an H100 at three 64-wide blocks per SM) and each block runs the
// faster loop.
// What limits it: the partial tiles' round trip through L2 and the second launch (a few
// microseconds), and v17's three-tile prologue on each share: it pays where K is deep. Sides of
// 65-127 pad a 128-wide tile; a ragged tile past N runs the checked loop.
// Shapes: any M, N, K >= 1 (zero-filled tails); both layouts of A and B; operands aligned to
// their 4-byte elements (the 4-byte instantiations, as v18's); C row-major, any ldc.
#include "registry.h"
#include "sgemm/multistage.cuh"
#include "sgemm/split_k_tile.cuh"

namespace fastgemm {
namespace {

namespace skt = sgemm::split_k_tile;
namespace ms = sgemm::multistage;
// Smallest share in k-tiles: the three-stage prologue fills three of them before the first FFMA.
constexpr int MIN_KTILES = 8;

template <typename WT, bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC>
__global__ void __launch_bounds__(WT::THREADS, ms::min_blocks<WT>())
    sgemm_v21_split_k_reduce_multistage_kernel(sgemm::KmnView A, sgemm::KmnView B,
                                               float* partials) {
  extern __shared__ __align__(16) float smem[];
  int64_t m0, n0, k0, k_end;
  skt::global_share<WT>(A, m0, n0, k0, k_end);
  ms::multiply_tile<WT, A_COL_MAJOR, B_COL_MAJOR, VEC>(A, B, m0, n0, k0, k_end, smem,
                                                       skt::PartialStore<WT>{partials});
}

template <typename WT>
void launch_tiling(const GemmArgs& a) {
  static constexpr SplitRates rates = ms::split_rates<WT>();
  skt::launch_reduce<WT, ms::smem_bytes<WT>()>(
      a, "sgemm_v21_split_k_reduce_multistage",
      [](auto a_col, auto b_col, auto vec) {
        return sgemm_v21_split_k_reduce_multistage_kernel<WT, decltype(a_col)::value,
                                                          decltype(b_col)::value,
                                                          decltype(vec)::value>;
      },
      MIN_KTILES, &rates);
}

}  // namespace

int sgemm_v21_split_k_reduce_multistage_smem() {
  return std::max(
      {ms::smem_bytes<ms::Tile>(), ms::smem_bytes<ms::Wide>(), ms::smem_bytes<ms::Tall>()});
}

void sgemm_v21_split_k_reduce_multistage(const GemmArgs& a) {
  ms::with_split_tiling(a.M, a.N, [&](auto wt) { launch_tiling<decltype(wt)>(a); });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v21_split_k_reduce_multistage, {21, 80, 0, 4, "simt",
    "cp_async", "split_k_global", "sgemm_v20_split_k_reduce", true,
    "v20's split with no owner (every block stores its partial tile, a second kernel sums them "
    "in a fixed order) on v17's three-stage loop and v18's tiles (64x128 / 128x64 at three "
    "blocks per SM up to 768 rows or columns), for a deep K over tens of tiles"})
