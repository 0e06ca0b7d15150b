// sgemm_v09_cp_async — double-buffered shared memory with cp.async (sm_80+).
//
// What changed since v08: two shared-memory buffers. While the block multiplies tile k out of one
// buffer, tile k+1 is already on its way into the other: an operand whose global layout matches
// its shared layout (a row-major B, a column-major A) is copied with cp.async (LDGSTS: global ->
// shared with no register round trip, zero-filled tails); an operand that must be transposed is
// loaded into registers before the math and stored after it. One __syncthreads per K-step.
// Why faster: global-memory latency hides behind a whole tile of FMAs instead of stalling the
// block, and half the barriers of v08; cp.async also frees the registers and issue slots of the
// staged copy for the matching operand.
// What limits it: the FMA pipe itself (64 FFMA per 4 LDS.128 per k) and register-bank conflicts
// the compiler cannot always avoid; a row-major A of 16-byte aligned rows still goes through
// registers to be transposed (one aligned only to 4 bytes goes by 4-byte cp.async straight into
// its transposed place). Rows that are not 16-byte aligned
// run the 4-byte instantiation, slower than the 16-byte one on the same shape (four times the
// copies, one more sector per row segment, and 4-byte stores of C). A tile at the
// right or bottom edge of an output that is not whole tiles computes the last 128 columns or rows
// and stores only its own (warptile::move_inside): its copies need no bounds checks, so it runs
// the interior blocks' loop body, not a second one beside it. A ragged K (K % 16 != 0) still runs
// the checked loop in every block.
// Shapes: any M, N, K >= 1 (zero-filled tails); both layouts; any operands aligned to their 4-byte
// elements: where A, B or C is not 16-byte aligned (a leading dimension not a multiple of 4),
// the same kernel is compiled with 4-byte copies and stores (sgemm/common.cuh, TileLoader) and
// runs on the operands in place, with no padded copies; a row-major A of 16-byte rows keeps its
// 16-byte loads there (the A16 instantiations: sgemm/common.cuh, with_kernel).
#include "registry.h"
#include "sgemm/double_buffer.cuh"

namespace fastgemm {
namespace {

using wt = sgemm::warptile::Square;
using sgemm::double_buffer::multiply_tile;

// A16: a row-major A read 16 bytes at a time beside an under-aligned B or C (VEC false).
template <bool A_COL_MAJOR, bool B_COL_MAJOR, bool A16, bool VEC>
__global__ void __launch_bounds__(wt::THREADS,
                                  FASTGEMM_DOUBLE_BUFFER_MIN_BLOCKS(A_COL_MAJOR, B_COL_MAJOR))
    sgemm_v09_cp_async_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                              float alpha, float beta) {
  __shared__ __align__(16) float As[2 * wt::BLOCK_K * wt::LDS_A];
  __shared__ __align__(16) float Bs[2 * wt::BLOCK_K * wt::LDS_B];
  int64_t m0 = blockIdx.y * int64_t(wt::BLOCK_M), n0 = blockIdx.x * int64_t(wt::BLOCK_N);
  // edge tiles: the last 128 rows/columns (warptile: move_inside)
  const int2 skip = wt::move_inside<A_COL_MAJOR, VEC>(A.MN, B.MN, m0, n0);
  multiply_tile<wt, A_COL_MAJOR, B_COL_MAJOR, VEC, VEC || A16>(
      A, B, m0, n0, 0, A.K, As, Bs, [&](const auto& pos, const auto& acc) {
        wt::epilogue<VEC, true>(C, ldc, A.MN, B.MN, m0, n0, pos, acc, alpha, beta, skip);
      });
}

}  // namespace

void sgemm_v09_cp_async(const GemmArgs& a) {
  wt::launch(a, "sgemm_v09_cp_async", [](auto a_col, auto b_col, auto vec, auto a16) {
    return sgemm_v09_cp_async_kernel<decltype(a_col)::value, decltype(b_col)::value,
                                     decltype(a16)::value, decltype(vec)::value>;
  });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v09_cp_async, {9, 80, 0, 4, "simt", "cp_async", "registers",
    "sgemm_v08_warptile", false,
    "double-buffered shared memory: cp.async for the layout-matching operand, registers "
    "for the transposed one"})
