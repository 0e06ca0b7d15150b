// sgemm_v07_conflict_free — bank-conflict-free shared memory.
//
// What changed since v06: (1) each thread's 8 rows and 8 columns are split into two halves 64
// apart (tr*4 and 64 + tr*4) instead of one contiguous run of 8, so the 16 lanes that read B
// fragments touch 16 consecutive float4s — every bank once; (2) the tiles get a 4-float row pad,
// which puts the transposed A stores of lane pairs (rows k and k+4 of the tile) in different banks.
// Why faster: no replayed shared-memory wavefronts on the fragment reads or the transposing
// stores (ncu: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st} drop to ~0).
// What limits it: each thread's outputs span the whole block tile, so a warp's fragment reads cover
// 128 floats of A and B per k; global loads still stall the block at two __syncthreads per K-step.
// Shapes: as v06 (any M, N, K; 16-byte aligned operands; both layouts).
#include "registry.h"
#include "sgemm/vec_tile.cuh"

namespace fastgemm {
namespace {

template <bool A_COL_MAJOR, bool B_COL_MAJOR>
__global__ void __launch_bounds__(sgemm::vec_tile::THREADS)
    sgemm_v07_conflict_free_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                                   float alpha, float beta) {
  sgemm::vec_tile::body</*CONFLICT_FREE=*/true, A_COL_MAJOR, B_COL_MAJOR>(A, B, C, ldc, alpha,
                                                                           beta);
}

}  // namespace

void sgemm_v07_conflict_free(const GemmArgs& a) {
  sgemm::vec_tile::launch(a, "sgemm_v07_conflict_free", [](auto a_col, auto b_col) {
    return sgemm_v07_conflict_free_kernel<decltype(a_col)::value, decltype(b_col)::value>;
  });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v07_conflict_free, {7, 75, 0, 16, "simt", "ldg", "registers",
    "sgemm_v06_vectorized", false,
    "padded A tile and split 4-wide fragments: no shared-memory bank conflicts"})
