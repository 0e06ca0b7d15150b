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
// up to 256, of at least 4 k-tiles each, with tiles x S blocks resident at once (one per SM).
// Why it pays: an output of a few tiles with a deep K (63x78x17531 is one tile) keeps every SM
// busy on 1/132 of K each (an H100) instead of 8 (v18, a cluster) or 16 (v16) of them;
// the reduction reads the partial tiles from L2 with every SM at once (128 blocks a tile).
// What limits it: 128x128 tiles, the same as v16's: on an output of a few rows most of each tile's
// FMAs are padding; the second launch and the partial tiles' round trip through L2 (tiles x S x
// 64 KiB) cost a few microseconds, so it pays only where K is deep and the tiles few. One block
// per SM (8 warps to hide the loop's latency): at two (128 registers a thread) the instantiations
// with both operands of one layout spilled 48-64 bytes in the loop, which v16's do not.
// Shapes: any M, N, K >= 1 (zero-filled tails); both layouts of A and B; operands aligned to
// their 4-byte elements (the 4-byte instantiations, as v16's); C row-major, any ldc.
#include "registry.h"
#include "sgemm/split_k_tile.cuh"

namespace fastgemm {
namespace {

using wt = sgemm::warptile::Square;
namespace skt = sgemm::split_k_tile;

template <bool A_COL_MAJOR, bool B_COL_MAJOR, bool A16, bool VEC>
__global__ void __launch_bounds__(wt::THREADS, 1)
    sgemm_v20_split_k_reduce_kernel(sgemm::KmnView A, sgemm::KmnView B, float* partials) {
  extern __shared__ __align__(16) float smem[];
  skt::run_partials<wt, A_COL_MAJOR, B_COL_MAJOR, VEC, VEC || A16>(smem, A, B, partials);
}

}  // namespace

void sgemm_v20_split_k_reduce(const GemmArgs& a) {
  skt::launch_reduce<wt>(
      a, "sgemm_v20_split_k_reduce", [](auto a_col, auto b_col, auto vec, auto a16) {
        return sgemm_v20_split_k_reduce_kernel<decltype(a_col)::value, decltype(b_col)::value,
                                               decltype(a16)::value, decltype(vec)::value>;
      });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v20_split_k_reduce, {20, 80, 0, 4, "simt", "cp_async",
    "split_k_global", "sgemm_v16_split_k_waves", true,
    "v16's split with no owner: every block stores its partial tile and a second kernel sums "
    "them in a fixed order, a share per SM, for outputs of few tiles with a deep K"})
