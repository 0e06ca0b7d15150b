// sgemm_v08_warptile — warp tiling.
//
// What changed since v07: a level of tiling between block and thread. The block tile (128x128,
// now BK = 16) is split into 8 warp tiles of 64x32; each warp iterates over 2x2 sub-tiles of 32x16
// in which its lanes form an 8x4 grid of 4x4 patches (sgemm/warptile.cuh). Each thread still owns
// 8x8 outputs, but they are arranged so a warp's fragment reads hit 8 + 4 consecutive float4s per
// k — a single shared-memory wavefront each, broadcast to the lanes that share them — and a
// warp's outputs form a compact 64x32 region.
// Why faster: fewer shared-memory wavefronts per FMA (the warp reads 96 distinct floats per k
// for 2048 FMAs instead of 256), better register locality, and BK = 16 halves the __syncthreads
// count per FLOP.
// What limits it: single-buffered — the global loads of tile k+1 start only after the block has
// finished tile k, and two __syncthreads per K-step serialise copy and math.
// Shapes: any M, N, K >= 1 (zero-filled tails); 16-byte aligned operands; both layouts.
#include "registry.h"
#include "sgemm/warptile.cuh"

namespace fastgemm {
namespace {

using wt = sgemm::warptile::Square;

template <bool A_COL_MAJOR, bool B_COL_MAJOR>
__global__ void __launch_bounds__(wt::THREADS, 2)
    sgemm_v08_warptile_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                              float alpha, float beta) {
  using LoadA = sgemm::TileLoader<wt::BLOCK_K, wt::BLOCK_M, wt::THREADS, A_COL_MAJOR>;
  using LoadB = sgemm::TileLoader<wt::BLOCK_K, wt::BLOCK_N, wt::THREADS, !B_COL_MAJOR>;
  __shared__ __align__(16) float As[wt::BLOCK_K * wt::LDS_A];
  __shared__ __align__(16) float Bs[wt::BLOCK_K * wt::LDS_B];
  const int64_t m0 = blockIdx.y * int64_t(wt::BLOCK_M), n0 = blockIdx.x * int64_t(wt::BLOCK_N);
  const wt::LanePos pos;

  float acc[wt::THREAD_M][wt::THREAD_N] = {};
  const LoadA load_a(A, m0);
  const LoadB load_b(B, n0);
  float4 a_regs[LoadA::CHUNKS], b_regs[LoadB::CHUNKS];
  for (int64_t k0 = 0; k0 < A.K; k0 += wt::BLOCK_K) {
    load_a.load(A, k0, m0, a_regs);
    load_b.load(B, k0, n0, b_regs);
    LoadA::template store<wt::LDS_A>(As, a_regs);
    LoadB::template store<wt::LDS_B>(Bs, b_regs);
    __syncthreads();
    wt::multiply(As, Bs, pos, acc);
    __syncthreads();
  }
  wt::epilogue(C, ldc, A.MN, B.MN, m0, n0, pos, acc, alpha, beta);
}

}  // namespace

void sgemm_v08_warptile(const GemmArgs& a) {
  wt::launch(a, "sgemm_v08_warptile", [](auto a_col, auto b_col) {
    return sgemm_v08_warptile_kernel<decltype(a_col)::value, decltype(b_col)::value>;
  });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v08_warptile, {8, 75, 0, 16, "simt", "ldg", "registers",
    "sgemm_v07_conflict_free", false,
    "warp tiles of 64x32, each lane 2x2 patches of 4x4; BK = 16, single-buffered"})
