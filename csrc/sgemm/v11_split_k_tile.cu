// sgemm_v11_split_k_tile — v09's 128x128 tile with K split across a thread-block cluster.
// A branch of v09, a shape specialist for outputs of few tiles.
//
// What changed since v09: the grid gains a z dimension. The S blocks of one output tile form a
// cluster (1, 1, S); block z runs v09's double-buffered loop (sgemm/double_buffer.cuh) over the
// z-th of S even shares of K's 16-deep k-tiles, stages its fp32 partial tile in its own (drained)
// shared memory, and the cluster sums the S partial tiles in rank order through distributed
// shared memory (common/split_k.cuh): the same bits on every call, no workspace, no atomics. S is
// the largest split (at most 8) that keeps every block's share at least MIN_KTILES k-tiles and
// all clusters resident at once (one wave).
// Why it pays: with fewer 128x128 tiles than the GPU holds blocks (two per SM), v09 leaves SMs
// idle and runs each tile's whole K loop on one SM; splitting K gives every SM work. Each block
// also sums only its share of K, so a long K is added in S blocks of partial sums, which lowers
// the rounding error of the fp32 result.
// What limits it: the same FMA-bound inner loop as v09, at one block per SM (the share's origin
// and the cluster epilogue take it past the 128 registers that two blocks per SM allow, and at
// 128 the compiler spills); the reduction adds a partial tile per block (66 KiB of shared memory,
// read once by the cluster) and two cluster barriers; on a GPU without clusters (before sm_90) it
// is v09 at one block per SM with a shared-memory round trip (S = 1).
// Shapes: any M, N, K >= 1 (zero-filled tails); 16-byte aligned operands; both layouts.
#include "common/split_k.cuh"
#include "registry.h"
#include "sgemm/double_buffer.cuh"

namespace fastgemm {
namespace {

namespace wt = sgemm::warptile;
using sgemm::double_buffer::multiply_tile;

constexpr int MIN_KTILES = 8;  // smallest share of K a block takes, in 16-deep k-tiles
constexpr int RED_LD = wt::BLOCK_N + 4;  // floats per partial-tile row (16-byte aligned rows)
constexpr int LOOP_FLOATS = 2 * wt::BLOCK_K * (wt::LDS_A + wt::LDS_B);
constexpr int RED_FLOATS = wt::BLOCK_M * RED_LD;
constexpr int SMEM = 4 * (LOOP_FLOATS > RED_FLOATS ? LOOP_FLOATS : RED_FLOATS);

template <bool A_COL_MAJOR, bool B_COL_MAJOR>
__global__ void __launch_bounds__(wt::THREADS, 1)
    sgemm_v11_split_k_tile_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                                  float alpha, float beta) {
  extern __shared__ __align__(16) float smem[];
  float* As = smem;
  float* Bs = smem + 2 * wt::BLOCK_K * wt::LDS_A;
  int64_t m0, n0;
  split_tile(A.MN, wt::BLOCK_M, wt::BLOCK_N, m0, n0);
  int64_t first, count;  // this block's share of the k-tiles
  split_share((A.K + wt::BLOCK_K - 1) / wt::BLOCK_K, first, count);
  multiply_tile<A_COL_MAJOR, B_COL_MAJOR>(
      A, B, m0, n0, first * wt::BLOCK_K, (first + count) * wt::BLOCK_K, As, Bs,
      [&](const wt::LanePos& pos, const float (&acc)[wt::THREAD_M][wt::THREAD_N]) {
        // The loop ended at a block barrier: its buffers become this block's partial tile. A
        // quarter warp's float4 stores cover two rows 4 apart (16 banks apart at this pitch) x
        // 16 columns: no bank conflicts.
        float* red = smem;
#pragma unroll
        for (int i = 0; i < wt::THREAD_M; ++i)
#pragma unroll
          for (int q = 0; q < wt::ITER_N; ++q) {
            const int j = q * wt::PATCH;
            const int row = pos.row + (i / wt::PATCH) * wt::SUB_M + i % wt::PATCH;
            *reinterpret_cast<float4*>(red + row * RED_LD + pos.col + q * wt::SUB_N) =
                make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
          }
      });
  cluster_reduce_store<wt::BLOCK_M, wt::BLOCK_N, RED_LD, wt::THREADS>(smem, C, ldc, A.MN, B.MN,
                                                                     m0, n0, alpha, beta);
}

}  // namespace

int sgemm_v11_split_k_tile_smem() { return SMEM; }

void sgemm_v11_split_k_tile(const GemmArgs& a) {
  constexpr const char* name = "sgemm_v11_split_k_tile";
  const dim3 grid = split_grid(a.M, a.N, wt::BLOCK_M, wt::BLOCK_N, name);
  int device = 0;
  FASTGEMM_CUDA_CHECK(cudaGetDevice(&device));
  const DeviceProps& props = device_props(device);
  with_layouts(a, [&](auto a_col, auto b_col) {
    auto kernel =
        sgemm_v11_split_k_tile_kernel<decltype(a_col)::value, decltype(b_col)::value>;
    set_smem(kernel, SMEM);
    const int split = split_count(reinterpret_cast<const void*>(kernel), wt::THREADS, SMEM,
                                  grid.x, ceil_div(a.K, wt::BLOCK_K), MIN_KTILES, 1,
                                  props.sm_count);
    launch_split(kernel, grid, wt::THREADS, SMEM, a.stream, split, props.cc, name,
                 sgemm::kmn_a(a), sgemm::kmn_b(a), static_cast<float*>(a.C), a.ldc, a.alpha,
                 a.beta);
  });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v11_split_k_tile, {11, 80, 0, 16, "simt", "cp_async",
    "split_k", "sgemm_v09_cp_async", true,
    "v09's 128x128 tile with K split across a cluster of up to 8 blocks, partial tiles summed "
    "in rank order through distributed shared memory"})
