// sgemm_v06_vectorized — vectorized (float4) memory access, A transposed in shared memory.
//
// What changed since v05: global->shared copies move 16 bytes per instruction (LDG.E.128) instead
// of 4, and the A tile is stored transposed (As[k][m]) so that a thread's 8 A values for one k are
// contiguous: both register fragments are read with two 128-bit shared loads (LDS.128) instead of
// 16 scalar ones. C is written with float4 stores.
// Why faster: 4x fewer load/store instructions on every level; the inner loop is now 4 LDS.128 per
// 64 FFMA, so issue slots go to the FMA pipe.
// What limits it: shared-memory bank conflicts — lanes tx and tx+4 read B fragments 32 floats
// apart (same banks), and the transposed scalar stores of A pair up in one bank; loads of the next
// tile still wait behind two __syncthreads per K-step.
// Shapes: any M, N, K >= 1 (zero-filled tails); needs 16-byte aligned operands (pointers and
// leading dimensions multiples of 4 floats); both layouts of A and B.
#include "registry.h"
#include "sgemm/vec_tile.cuh"

namespace fastgemm {
namespace {

template <bool A_COL_MAJOR, bool B_COL_MAJOR>
__global__ void __launch_bounds__(sgemm::vec_tile::THREADS)
    sgemm_v06_vectorized_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                                float alpha, float beta) {
  sgemm::vec_tile::body</*CONFLICT_FREE=*/false, A_COL_MAJOR, B_COL_MAJOR>(A, B, C, ldc, alpha,
                                                                            beta);
}

}  // namespace

void sgemm_v06_vectorized(const GemmArgs& a) {
  sgemm::vec_tile::launch(a, "sgemm_v06_vectorized", [](auto a_col, auto b_col) {
    return sgemm_v06_vectorized_kernel<decltype(a_col)::value, decltype(b_col)::value>;
  });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v06_vectorized, {6, 75, 0, 16, "simt", "ldg", "registers",
    "sgemm_v05_blocktile_2d", false,
    "float4 global loads, A transposed in shared memory, float4 fragment reads"})
