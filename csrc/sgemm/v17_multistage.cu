// sgemm_v17_multistage — a three-stage cp.async pipeline on 128x128 tiles of four warps, 16x8
// outputs per lane, fragments read one k ahead.
//
// What changed since v09:
// - Four warps per 128x128 tile, each a 128x32 warp tile in which a lane owns 16x8 outputs
//   (warptile::Tile<1, 4, 128>): per k a lane reads 6 float4s of shared memory for 128 FFMA,
//   where v09's 8x8 lanes read 4 for 64.
// - Both operands reach shared memory by cp.async alone. A K-contiguous tile (row-major A,
//   column-major B) is copied 4 bytes at a time straight into its transposed K-major place:
//   eight lanes take eight k of one row (a 32-byte sector), so a warp reads four whole sectors
//   and writes 32 different banks. v09 staged that operand through registers (loads before the
//   math, transposing stores after it).
// - Three stages: the copies of k-tile t + 3 are issued while tile t is multiplied, one barrier
//   per k-tile.
// - A lane's fragments for k + 1 are read while it multiplies k. The barrier comes after the
//   loads of a tile's last k, so the next tile's first fragments and copies are issued behind
//   that k's FFMAs.
// - One loop body for every block. The k-tiles of a ragged K (K % 16 != 0) are laid from K
//   downwards, so the partial one comes first and only the prologue copies it checked
//   (sgemm/multistage.cuh); an edge tile moves back inside the output and stores only its own
//   rows and columns. Before, a ragged K sent every block to the checked loop, and on outputs
//   that are not whole tiles the edge blocks ran it beside the interior ones: two 36 KB loop
//   bodies on one SM cost about as much as checking every copy (benchmarks/NOTES.md).
// Why it pays: in v09 the compiler placed each k's shared loads just before their FFMAs and the
// next tile's copies in front of the first k, so a warp stalled on them (ncu: short and long
// scoreboard, dispatch stalls). Here the loads are a k ahead, and two blocks per SM (eight
// warps, up to 255 registers a thread) keep the FMA pipe fed.
// What limits it: a 2,200-instruction k-tile loop (instruction fetch stalls), dispatch stalls on
// operand reads, and a 16-k tile's barrier. cuBLAS's SIMT kernel on the same GPUs issues from
// register allocations tuned by hand, which a CUDA C++ kernel cannot control.
// Shapes: any M, N, K >= 1 (outputs narrower than a tile, and edge tiles whose shift would
// misalign a 16-byte access, check each copy and zero-fill the rest); both layouts; any
// operands aligned to their 4-byte elements (the 4-byte copies of a K-contiguous operand need
// nothing more, so its alignment does not count: an MN-contiguous operand and C use 16-byte
// accesses where they are aligned, 4-byte ones otherwise). 50 KiB of shared memory a block (two
// blocks per SM on sm_80 and sm_90; one on sm_86 and sm_89).
#include "registry.h"
#include "sgemm/multistage.cuh"

namespace fastgemm {
namespace {

using wt = sgemm::multistage::Tile;

template <bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC>
__global__ void __launch_bounds__(wt::THREADS, 2)
    sgemm_v17_multistage_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                                float alpha, float beta) {
  extern __shared__ __align__(16) float smem[];
  // An edge tile computes the last 128 rows (columns) and stores its own (warptile: move_inside).
  int64_t m0 = blockIdx.y * int64_t(wt::BLOCK_M), n0 = blockIdx.x * int64_t(wt::BLOCK_N);
  const int2 skip = wt::move_inside<A_COL_MAJOR, VEC>(A.MN, B.MN, m0, n0);
  sgemm::multistage::multiply_tile<wt, A_COL_MAJOR, B_COL_MAJOR, VEC>(
      A, B, m0, n0, 0, A.K, smem, [&](const wt::LanePos& pos, const auto& acc) {
        wt::epilogue<VEC, true>(C, ldc, A.MN, B.MN, m0, n0, pos, acc, alpha, beta, skip);
      });
}

}  // namespace

int sgemm_v17_multistage_smem() { return sgemm::multistage::SMEM; }

void sgemm_v17_multistage(const GemmArgs& a) {
  const char* name = "sgemm_v17_multistage";
  const dim3 grid = tile_grid(a, wt::BLOCK_M, wt::BLOCK_N, name);
  sgemm::with_kernel(
      a,
      [](auto a_col, auto b_col, auto vec) {
        return sgemm_v17_multistage_kernel<decltype(a_col)::value, decltype(b_col)::value,
                                           decltype(vec)::value>;
      },
      [&](auto kernel) {
        constexpr int smem = sgemm::multistage::SMEM;
        set_smem(kernel, smem);
        fastgemm::launch(kernel, Launch{grid, dim3(wt::THREADS), smem, a.stream}, name,
                         sgemm::kmn_a(a), sgemm::kmn_b(a), static_cast<float*>(a.C), a.ldc,
                         a.alpha, a.beta);
      },
      sgemm::VecOperands::mn_contiguous);
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v17_multistage, {17, 80, 0, 4, "simt", "cp_async",
    "registers", "sgemm_v09_cp_async", true,
    "128x128 tiles of four warps (16x8 outputs a lane), three cp.async stages, K-contiguous "
    "operands copied 4 bytes at a time into their transposed place, fragments read a k ahead"})
