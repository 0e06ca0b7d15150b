// sgemm_v11_split_k_tile — v09's 128x128 tile with K split across a thread-block cluster.
// A branch of v09, a shape specialist for outputs of few tiles.
//
// What changed since v09: the grid gains a z dimension. The S blocks of one output tile form a
// cluster (1, 1, S); block z runs v09's double-buffered loop (sgemm/double_buffer.cuh) over the
// z-th of S even shares of K's 16-deep k-tiles, stages its fp32 partial tile in its own (drained)
// shared memory, and the cluster sums the S partial tiles in rank order through distributed
// shared memory (common/split_k.cuh): the same bits on every call, no workspace, no atomics. S (at
// most 8, every block's share at least CLUSTER_MIN_KTILES k-tiles) is the split whose rounds of
// resident clusters take the least modelled time (cluster_split_choice, common/split_model.h):
// in practice the largest whose clusters are all resident at once.
// Why it pays: with fewer 128x128 tiles than the GPU holds blocks (two per SM), v09 leaves SMs
// idle and runs each tile's whole K loop on one SM; splitting K gives every SM work. Each block
// also sums only its share of K, so a long K is added in S blocks of partial sums, which lowers
// the rounding error of the fp32 result.
// What limits it: the same FMA-bound inner loop as v09, at one block per SM (the share's origin
// and the cluster epilogue take it past the 128 registers that two blocks per SM allow, and at
// 128 the compiler spills); the reduction adds a partial tile per block (66 KiB of shared memory,
// read once by the cluster) and two cluster barriers; on a GPU without clusters (before sm_90) it
// is v09 at one block per SM with a shared-memory round trip (S = 1).
// Shapes: any M, N, K >= 1 (zero-filled tails); both layouts; any operands aligned to their 4-byte
// elements: where A, B or C is not 16-byte aligned (a leading dimension not a multiple of 4),
// the same kernel is compiled with 4-byte copies and stores (sgemm/common.cuh, TileLoader) and
// runs on the operands in place, with no padded copies.
#include "registry.h"
#include "sgemm/split_k_tile.cuh"

namespace fastgemm {
namespace {

using wt = sgemm::warptile::Square;
namespace skt = sgemm::split_k_tile;

template <bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC>
__global__ void __launch_bounds__(wt::THREADS, 1)
    sgemm_v11_split_k_tile_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                                  float alpha, float beta) {
  extern __shared__ __align__(16) float smem[];
  skt::run<wt, A_COL_MAJOR, B_COL_MAJOR, VEC>(smem, A, B, C, ldc, alpha, beta);
}

}  // namespace

int sgemm_v11_split_k_tile_smem() { return skt::smem_bytes<wt>(); }

void sgemm_v11_split_k_tile(const GemmArgs& a) {
  constexpr SplitRates rates{1, {1.0}};  // one block per SM
  skt::launch<wt>(a, "sgemm_v11_split_k_tile", rates, [](auto a_col, auto b_col, auto vec) {
    return sgemm_v11_split_k_tile_kernel<decltype(a_col)::value, decltype(b_col)::value,
                                         decltype(vec)::value>;
  });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v11_split_k_tile, {11, 80, 0, 4, "simt", "cp_async",
    "split_k", "sgemm_v09_cp_async", true,
    "v09's 128x128 tile with K split across a cluster of up to 8 blocks, partial tiles summed "
    "in rank order through distributed shared memory"})
