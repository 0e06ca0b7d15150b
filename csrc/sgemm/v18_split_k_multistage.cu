// sgemm_v18_split_k_multistage — v12's cluster split of K on v17's k loop. A branch of v17, a
// shape specialist for outputs with few rows (small batches and short prefills, M = 33-192).
//
// What changed since v17: v12's split (sgemm/split_k_tile.cuh): block z of a cluster takes the
// z-th share of the k-tiles, stages its fp32 partial tile in its drained shared memory, and the
// cluster sums the partial tiles in rank order (cluster_reduce_store); S from the cluster split
// model. v17's loop (sgemm/multistage.cuh: three cp.async stages, fragments read a k ahead, the
// K-contiguous operand copied 4 bytes at a time into its transposed place, a ragged K's partial
// k-tile first) runs the share, on v17's 128x128 tile of 16x8 lanes or, for outputs of at most
// 768 rows or columns, on v12's 64x128 / 128x64 tiles of 8x8 lanes. As in v17, an edge tile past
// M moves back inside the output (row-major C) and stores only its own rows, so that it runs the
// unchecked loop: a ragged tile's checked copies had cost it 10-20% (ncu, 127x2048x3072: 9% more
// instructions in those blocks and fewer eligible warps). Where a tile cannot move (fewer rows
// than a tile, column-major C), a row-major A's rows past the edge are read from the last row
// inside instead (multistage.cuh: CLAMP_ROWS). The 64-wide tiles are compiled for three blocks
// per SM on sm_90 (168 registers a thread: 64 accumulators, the k-ahead fragments and the copies'
// places, no spills), where the first version took 195 registers and so ran two: at two four-warp blocks
// an SM has two warps per scheduler, and ncu on 64x4096x14336 showed issue 69% busy. Three blocks
// took 160-192-row outputs 5-49% faster, 65-128 rows up to 30% and 33-64 rows 3% (geometric mean;
// 2% slower on a few), results/sweeps/rows-v18-blocks*; four (128 registers) spilled and lost on
// most shapes. At three blocks the 64-wide tiles also beat v16 at 193-768 rows (3-9% on 20 of 24
// points of rows-v18-wide-m256-1024-*, not with K = 18944) and stay until 768.
// Why it pays: v12's four-warp blocks run v09's double-buffered loop, whose warps stall on
// shared loads just before their FFMAs (ncu on 8192x64x8192: short scoreboard stalls lead); v17's
// loop removes most of those stalls. auto takes it for outputs of 33-64 rows, where it was faster
// than v12 on every point of results/sweeps/rows-m33-127-float32-*, of 65-768 rows with N and K
// at least 1024 (plan.cpp: the rules and their sweeps), and of 33-192 columns on many rows.
// What limits it: v17's three-tile prologue on short shares; three blocks per SM at most (the
// loop's registers; two of the 128x128 tile), so a lone block hides less latency than v12's
// pairs; its 64-row tile is half
// padding on 32 rows or fewer; edge tiles past N, and past M where they can neither move nor
// clamp (a column-major A), still check every copy, and beside unchecked blocks on one SM their
// loop body costs instruction fetches. Its split (at most 8 shares, in clusters) fills the SMs
// less than v16's where v16's whole rounds fit the tiles (24 and 48 tiles of 128x128 at 65-128
// rows: up to 17% slower).
// Past 768 rows, and on deep K, its 128x128 tile's split loses to v16's on most points of
// results/sweeps/prefill-v18-* and deep-v18-*, and v17's unsplit loop wins from 1024 rows.
// Shapes: any M, N, K >= 1 (zero-filled tails); both layouts; operands aligned to their 4-byte
// elements (the K-contiguous operand is copied 4 bytes at a time whatever its alignment; an
// MN-contiguous operand and C use 16-byte accesses where they are aligned).
#include "registry.h"
#include "sgemm/multistage.cuh"
#include "sgemm/split_k_tile.cuh"

namespace fastgemm {
namespace {

namespace skt = sgemm::split_k_tile;
namespace ms = sgemm::multistage;
using Square = ms::Tile;  // 128x128, 16x8 lanes (v17's)
using ms::Tall;
using ms::Wide;
static_assert(Square::THREADS == 128 && Wide::THREADS == 128 && Tall::THREADS == 128,
              "one launch bound for every tiling");

template <typename WT>
constexpr int smem_bytes() {
  constexpr int loop = ms::smem_bytes<WT>(), red = WT::BLOCK_M * skt::red_ld<WT>() * 4;
  return loop > red ? loop : red;
}

template <typename WT, bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC>
__global__ void __launch_bounds__(WT::THREADS, ms::min_blocks<WT>())
    sgemm_v18_split_k_multistage_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C,
                                        int64_t ldc, float alpha, float beta) {
  extern __shared__ __align__(16) float smem[];
  int64_t m0, n0;
  split_tile(A.MN, WT::BLOCK_M, WT::BLOCK_N, m0, n0);
  // A tile past M's edge moves back inside the output (row-major C; a shift that keeps an
  // M-contiguous A's 16-byte copies aligned) and stores only its own rows: it runs the
  // unchecked loop, whose copies need no bounds (v17's move_inside, along M only).
  int skip_rows = 0;
  if (ldc >= 0 && m0 + WT::BLOCK_M > A.MN && A.MN >= WT::BLOCK_M &&
      (!(VEC && A_COL_MAJOR) || (A.MN - WT::BLOCK_M) % 4 == 0)) {
    skip_rows = static_cast<int>(m0 - (A.MN - WT::BLOCK_M));
    m0 = A.MN - WT::BLOCK_M;
  }
  int64_t first, count;  // this block's share of the k-tiles
  split_share((A.K + WT::BLOCK_K - 1) / WT::BLOCK_K, first, count);
  ms::multiply_tile<WT, A_COL_MAJOR, B_COL_MAJOR, VEC>(
      A, B, m0, n0, first * WT::BLOCK_K, (first + count) * WT::BLOCK_K, smem,
      [&](const typename WT::LanePos& pos, const float (&acc)[WT::THREAD_M][WT::THREAD_N]) {
        __syncthreads();  // other lanes may still read the last stage
        skt::stage_partial<WT>(smem, pos, acc);
      });
  cluster_reduce_store<WT::BLOCK_M, WT::BLOCK_N, skt::red_ld<WT>(), WT::THREADS, 0, VEC>(
      smem, C, ldc, A.MN, B.MN, m0, n0, alpha, beta, skip_rows);
}

template <typename WT>
void launch_tiling(const GemmArgs& a) {
  skt::launch<WT, smem_bytes<WT>()>(
      a, "sgemm_v18_split_k_multistage", ms::split_rates<WT>(),
      [](auto a_col, auto b_col, auto vec) {
        return sgemm_v18_split_k_multistage_kernel<WT, decltype(a_col)::value,
                                                   decltype(b_col)::value, decltype(vec)::value>;
      });
}

}  // namespace

int sgemm_v18_split_k_multistage_smem() {
  return std::max({smem_bytes<Square>(), smem_bytes<Wide>(), smem_bytes<Tall>()});
}

void sgemm_v18_split_k_multistage(const GemmArgs& a) {
  ms::with_split_tiling(a.M, a.N, [&](auto wt) { launch_tiling<decltype(wt)>(a); });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v18_split_k_multistage, {18, 80, 0, 4, "simt", "cp_async",
    "split_k", "sgemm_v17_multistage", true,
    "v17's three-stage loop (128x128, or 64x128 / 128x64 tiles at three blocks per SM for "
    "outputs of at most 768 rows or columns) with K split across a cluster, partial tiles summed "
    "in rank order"})
