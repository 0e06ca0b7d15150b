// sgemm_v20_split_k_reduce — v16's split of K with no owner: every block stores its partial tile
// and a second kernel sums them, so that S can be large (a share per SM, up to 256).
//
// What changed since v16: in v16 a tile's owner (its last share) adds the S - 1 other partial
// tiles one after another, 64 KiB each, so its SM alone reads (S - 1) x 64 KiB and S stays at 16
// or below. Here every block stores its 128x128 partial tile (64 KiB, in publish_partial's
// layout) into scratch and leaves; reduce_partials_kernel (sgemm/split_k_tile.cuh), a dependent
// launch on the same stream, adds each output's S values in a fixed order (eight even ranges of
// shares, each in order, on eight warps, then the eight sums in order: the same bits on every
// call) and stores alpha * sum + beta * C. S fills one round of resident blocks: the most shares,
// up to 256, of at least 4 k-tiles each, with tiles x S blocks resident at once.
// Why it pays: an output of a few tiles with a deep K (63x78x17531 is one tile) keeps every SM
// busy on 1/132 of K each (an H100) instead of 8 (v18, a cluster) or 16 (v16) of them;
// the reduction reads the partial tiles from L2 with every SM at once (128 blocks a 128x128 tile).
// Outputs with a side of at most 64 take v12's four-warp tiles along it (64x128 / 128x64, and
// 32x128 / 128x32 up to 32), so that a few rows or columns do not leave most of a 128x128 tile's
// FMAs to padding: the split then has more, smaller tiles to spread over the SMs' slots.
// What limits it: the second launch and the partial tiles' round trip through L2 (tiles x S
// partial tiles) cost a few microseconds, so it pays only where K is deep and the tiles few; sides
// of 65-127 still pad a 128x128 tile. One block of the square tile per SM (8 warps to hide the
// loop's latency): at two (128 registers a thread) the instantiations with both operands of one
// layout spilled 48-64 bytes in the loop, which v16's do not.
// Shapes: any M, N, K >= 1 (zero-filled tails); both layouts of A and B; operands aligned to
// their 4-byte elements (the 4-byte instantiations, as v16's); C row-major, any ldc.
#include <algorithm>

#include "registry.h"
#include "sgemm/split_k_tile.cuh"

namespace fastgemm {
namespace {

namespace skt = sgemm::split_k_tile;
using Square = sgemm::warptile::Square;         // 128x128, eight warps
using Wide = sgemm::warptile::Tile<1, 4>;        // 64x128: 33-64 rows, M <= N (v12's tiles)
using Tall = sgemm::warptile::Tile<2, 2>;        // 128x64: 33-64 columns, M > N
using Wide32 = sgemm::warptile::Tile<1, 4, 32>;  // 32x128: at most 32 rows, M <= N
using Tall32 = sgemm::warptile::Tile<4, 1, 32>;  // 128x32: at most 32 columns, M > N

// One eight-warp block of the square tile per SM (at two, both-operands-one-layout
// instantiations spilled); the four-warp tiles as v12 holds them: two of 64-wide, four of 32.
template <typename WT>
constexpr int blocks_per_sm() {
  return WT::THREADS == 256 ? 1 : WT::WARP_M == 32 ? 4 : 2;
}

template <typename WT, bool A_COL_MAJOR, bool B_COL_MAJOR, bool A16, bool VEC>
__global__ void __launch_bounds__(WT::THREADS, blocks_per_sm<WT>())
    sgemm_v20_split_k_reduce_kernel(sgemm::KmnView A, sgemm::KmnView B, float* partials) {
  extern __shared__ __align__(16) float smem[];
  skt::run_partials<WT, A_COL_MAJOR, B_COL_MAJOR, VEC, VEC || A16>(smem, A, B, partials);
}

template <typename WT>
void launch_tiling(const GemmArgs& a) {
  skt::launch_reduce<WT>(
      a, "sgemm_v20_split_k_reduce", [](auto a_col, auto b_col, auto vec, auto a16) {
        return sgemm_v20_split_k_reduce_kernel<WT, decltype(a_col)::value, decltype(b_col)::value,
                                               decltype(a16)::value, decltype(vec)::value>;
      });
}

}  // namespace

void sgemm_v20_split_k_reduce(const GemmArgs& a) {
  // v12's tilings by the shorter side: 128x128 past 64, 64-wide tiles along a side of 33-64,
  // 32-wide ones along a side of at most 32.
  const int64_t side = std::min(a.M, a.N);
  if (side > 64) {
    launch_tiling<Square>(a);
  } else if (a.M <= a.N) {
    side <= 32 ? launch_tiling<Wide32>(a) : launch_tiling<Wide>(a);
  } else {
    side <= 32 ? launch_tiling<Tall32>(a) : launch_tiling<Tall>(a);
  }
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v20_split_k_reduce, {20, 80, 0, 4, "simt", "cp_async",
    "split_k_global", "sgemm_v16_split_k_waves", true,
    "v16's split with no owner: every block stores its partial tile and a second kernel sums "
    "them in a fixed order, a share per SM, for outputs of few tiles with a deep K; v12's 64- or "
    "32-wide tiles along a side of at most 64"})
