// sgemm_v03_smem_tiling — shared-memory tiling.
//
// What changed: the block (32x32 threads, one output each, as v02) walks K in steps of BK = 32.
// Each step the block cooperatively copies a 32x32 tile of A and one of B into shared memory (one
// element per thread, coalesced), synchronises, and every thread runs its 32-long partial dot
// product out of shared memory.
// Why faster: each global element is loaded once per block instead of once per thread: global and
// L2 traffic fall by the tile width (32x): per tile step, 2*32^3 FLOP for 2*32^2 floats loaded,
// 32 FLOP per float against global memory instead of 1.
// What limits it: shared-memory bandwidth — every FMA still needs two shared loads (one is a
// broadcast), so the LSU/MIO pipe, not the FMA pipe, sets the pace; and two __syncthreads per tile.
// Shapes: any M, N, K >= 1 (out-of-range tile elements are loaded as zeros), any operand layout.
#include "common/launch.cuh"
#include "registry.h"
#include "sgemm/common.cuh"

namespace fastgemm {
namespace {

constexpr int TILE = 32;

__global__ void sgemm_v03_smem_tiling_kernel(int64_t M, int64_t N, int64_t K, sgemm::View A,
                                             sgemm::View B, float* C, int64_t ldc, float alpha,
                                             float beta) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int64_t i = blockIdx.y * int64_t(TILE) + ty;
  const int64_t j = blockIdx.x * int64_t(TILE) + tx;
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < K; k0 += TILE) {
    // Each thread copies one element of each tile; zeros pad the edges.
    As[ty][tx] = (i < M && k0 + tx < K) ? A.at(i, k0 + tx) : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && j < N) ? B.at(k0 + ty, j) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();  // the tiles are overwritten by the next step
  }
  if (i < M && j < N) sgemm::store_c(C, ldc, i, j, acc, alpha, beta);
}

}  // namespace

void sgemm_v03_smem_tiling(const GemmArgs& a) {
  const dim3 grid = tile_grid(a, TILE, TILE, "sgemm_v03_smem_tiling");
  sgemm_v03_smem_tiling_kernel<<<grid, dim3(TILE, TILE), 0, a.stream>>>(
      a.M, a.N, a.K, sgemm::view_a(a), sgemm::view_b(a), static_cast<float*>(a.C), a.ldc, a.alpha,
      a.beta);
  FASTGEMM_CHECK_LAUNCH("sgemm_v03_smem_tiling");
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v03_smem_tiling, {3, 75, 0, 4, "simt", "ldg", "registers",
    "sgemm_v02_coalesced", false,
    "32x32 tiles of A and B staged in shared memory"})
