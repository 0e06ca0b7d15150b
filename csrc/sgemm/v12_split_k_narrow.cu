// sgemm_v12_split_k_narrow — v11 on narrow tiles, 64 or 32 rows or columns, the shorter side of the
// output picking which. Like v11 a branch of v09, a shape specialist: for outputs with few rows or
// columns, and for small outputs (a few 128x128 tiles' worth).
//
// What changed since v11: the block is four warps, not eight (128 threads), on a tile as narrow as
// the output's shorter side allows: 1 x 4 warps of v09's 64x32 warp tile (a 64x128 block tile)
// when M <= N, 2 x 2 (128x64) otherwise; with a shorter side of at most 32, warp tiles of 32x32
// (one sub-tile row), 1 x 4 (32x128) or 4 x 1 (128x32). The double-buffered loop, the split of K
// across a cluster and the rank-order reduction are v11's (sgemm/split_k_tile.cuh); the
// K-contiguous copies deal a 128-wide tile's float4s to 128 threads (TileLoader's
// fewer-threads-than-chunks-per-row case). Two blocks share an SM (four of the 32-wide tiles),
// and S weighs that (split_rates below): a block alone on its SM runs its share about 1.8 times
// as fast as one of two, so a split that leaves every block alone can beat a deeper one.
// Why it pays: an output of 64 rows (a decode or small-batch GEMM) or 64 columns fills half of
// each of v11's 128x128 tiles with zero rows or zero columns, whose FMAs and loads are all wasted;
// the half tile does no such work, and its 34 KiB of shared memory and 128 threads let two blocks
// (eight warps) share an SM at the same registers per thread, which hides the loop's latencies as
// well as v11's one block of eight warps. On a small output (at most 16 tiles of 128x128) the same
// split reaches twice the SMs with blocks of half the work each, and a block's four warps issue
// its share of the FMAs in about half the time of v11's eight on one SM. Half-size tiles also double the tile count, so a split of
// K reaches every SM with a shallower split (fewer partial tiles to sum). The 32-wide tiles halve
// the padding again for outputs of at most 32 rows or columns, at 4x8 outputs per thread (at most
// 128 registers: four blocks per SM).
// What limits it: each k of a 64-wide tile reads as much shared memory per FMA as v11's tile (the
// warp tile is unchanged), but per block the operand that spans 128 is loaded for half the work,
// so global and L2 traffic per FMA rises by a third; a 32x32 warp tile reads 3 float4s of shared
// memory per 32 FMAs instead of 4 per 64. On outputs that are large in both dimensions v09/v11's
// square tile is the better one. On a GPU without clusters (before sm_90) it runs unsplit, like
// v11.
// Shapes: any M, N, K >= 1 (zero-filled tails); both layouts; any operands aligned to their 4-byte
// elements: where A, B or C is not 16-byte aligned (a leading dimension not a multiple of 4),
// the same kernel is compiled with 4-byte copies and stores (sgemm/common.cuh, TileLoader) and
// runs on the operands in place, with no padded copies; a row-major A of 16-byte rows keeps its
// 16-byte loads there (the A16 instantiations: sgemm/common.cuh, with_kernel).
#include "registry.h"
#include "sgemm/split_k_tile.cuh"

namespace fastgemm {
namespace {

namespace skt = sgemm::split_k_tile;
using Wide = sgemm::warptile::Tile<1, 4>;         // 64x128: outputs with M <= N
using Tall = sgemm::warptile::Tile<2, 2>;         // 128x64: outputs with M > N
using Wide32 = sgemm::warptile::Tile<1, 4, 32>;   // 32x128: M <= 32, M <= N
using Tall32 = sgemm::warptile::Tile<4, 1, 32>;   // 128x32: N <= 32, M > N
static_assert(Wide::THREADS == 128 && Tall::THREADS == 128 && Wide32::THREADS == 128 &&
                  Tall32::THREADS == 128,
              "one launch bound for every tiling");

// Blocks per SM: two of the 64-wide tilings (8x8 outputs per thread); four of the 32-wide ones
// (4x8 per thread, at most 128 registers).
template <typename WT>
constexpr int blocks_per_sm() {
  return WT::WARP_M == 32 ? 4 : 2;
}

// A16: a row-major A read 16 bytes at a time beside an under-aligned B or C (VEC false).
template <typename WT, bool A_COL_MAJOR, bool B_COL_MAJOR, bool A16, bool VEC>
__global__ void __launch_bounds__(WT::THREADS, blocks_per_sm<WT>())
    sgemm_v12_split_k_narrow_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                                    float alpha, float beta) {
  extern __shared__ __align__(16) float smem[];
  skt::run<WT, A_COL_MAJOR, B_COL_MAJOR, VEC, VEC || A16>(smem, A, B, C, ldc, alpha, beta);
}

// An SM's throughput at 1, 2, ... of these blocks, relative to one block alone (the split
// model's rates, common/split_model.h), fitted to fixed-split sweeps on an H100
// (benchmarks/NOTES.md): a four-warp block alone issues its FMAs at about half the SM's rate,
// and a second 64-wide block adds only a tenth (both are bound by the same shared-memory reads
// per FMA); the 32-wide tiles' blocks (half the registers) add more.
template <typename WT>
constexpr SplitRates split_rates() {
  if constexpr (WT::WARP_M == 32) {
    return SplitRates{4, {1.0, 1.36, 1.48, 1.55}};
  } else {
    return SplitRates{2, {1.0, 1.1}};
  }
}

template <typename WT>
void launch_tiling(const GemmArgs& a) {
  skt::launch<WT>(a, "sgemm_v12_split_k_narrow", split_rates<WT>(),
                  [](auto a_col, auto b_col, auto vec, auto a16) {
                    return sgemm_v12_split_k_narrow_kernel<WT, decltype(a_col)::value,
                                                           decltype(b_col)::value,
                                                           decltype(a16)::value,
                                                           decltype(vec)::value>;
                  });
}

}  // namespace

int sgemm_v12_split_k_narrow_smem() {
  return std::max({skt::smem_bytes<Wide>(), skt::smem_bytes<Tall>(), skt::smem_bytes<Wide32>(),
                   skt::smem_bytes<Tall32>()});
}

void sgemm_v12_split_k_narrow(const GemmArgs& a) {
  // FASTGEMM_DEV_NARROW_SIDE=64 keeps the 64-wide tiles for shorter sides of at most 32 (read
  // once; for fitting, not for users).
  static const int thin_side = [] {
    const char* v = std::getenv("FASTGEMM_DEV_NARROW_SIDE");
    return v && std::atoi(v) == 64 ? 0 : 32;
  }();
  const bool wide = a.M <= a.N, thin = std::min(a.M, a.N) <= thin_side;
  if (wide) {
    thin ? launch_tiling<Wide32>(a) : launch_tiling<Wide>(a);
  } else {
    thin ? launch_tiling<Tall32>(a) : launch_tiling<Tall>(a);
  }
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v12_split_k_narrow, {12, 80, 0, 4, "simt", "cp_async",
    "split_k", "sgemm_v09_cp_async", true,
    "v11 on 64x128 (M <= N) or 128x64 tiles of four warps, 32x128 or 128x32 where the shorter "
    "side is at most 32: outputs with few rows or columns"})
