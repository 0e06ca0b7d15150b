// sgemm_v16_split_k_waves — v15's split of K through global memory at two blocks per SM, with the
// split chosen so that the grid fills whole rounds of resident blocks.
//
// What changed since v15: the block keeps v09's register budget (two blocks per SM where the
// layout allows it, as v09; the loop's shared memory only, no reduction tile), and S comes from a
// model of the launch (common/split_model.h): tiles x S blocks run in rounds of the blocks the
// GPU holds at once, each block for ceil(K / S) of the K work plus a partial tile stored or
// added, and a last round of at most one block per SM runs faster per block. S may make the grid
// larger than one round: a tile's owner (its last share, z = S - 1) waits only for blocks of
// lower index, which the GPU has dispatched before it. auto runs it where that model splits.
// Why it pays: v15 ran one block per SM (8 warps to hide the loop's latency, where v09 has 16) and
// split only outputs that fit one round; v09 runs whole tiles, so an output of 1.45 rounds of
// tiles (512x6144: 192 tiles on 264 slots) idles a quarter of the GPU in its last round. Here a
// prefill of 128 rows (48 tiles) splits 8 ways and 192 tiles split 4 ways in 2.9 rounds.
// What limits it: every split block stores a 64 KiB partial tile and the owner reads S - 1 of them
// one after another (the model's publish and add costs); the scratch (up to 64 MiB) stays
// allocated per stream; a tile's blocks are far apart in the grid, so its A and B panels are read
// from HBM once per round that holds them; C row-major only. A ragged K (K % 16 != 0) runs the
// checked loop in every block, and edge tiles run it beside the interior ones: moving them inside
// as v09 and v17 do (warptile::move_inside) took 5-10% off edge shapes but cost 4% on outputs of
// whole tiles at this kernel's 128-register cap (benchmarks/NOTES.md).
// Shapes: any M, N, K >= 1 (zero-filled tails); both layouts; any operands aligned to their 4-byte
// elements: where A, B or C is not 16-byte aligned (a leading dimension not a multiple of 4),
// the same kernel is compiled with 4-byte copies and stores (sgemm/common.cuh, TileLoader) and
// runs on the operands in place, with no padded copies; a row-major A of 16-byte rows keeps its
// 16-byte loads there (the A16 instantiations: sgemm/common.cuh, with_kernel). There the owner
// stores C through shared memory, 32 consecutive floats per warp-wide store
// (warptile::epilogue_staged).
#include "registry.h"
#include "sgemm/split_k_tile.cuh"

namespace fastgemm {
namespace {

using wt = sgemm::warptile::Square;
namespace skt = sgemm::split_k_tile;

// Two blocks per SM (128 registers a thread) where the sm_90 compiler fits the loop and the
// owner's sums without spilling: both operands of one kind (both copied by cp.async, or both
// through registers where they are 16-byte aligned). A column-major A with a row-major B spills
// at that cap, and the opposite pair needs more registers (as in v09): one block per SM there
// (the 4-byte instantiations of both layouts keep it), which the split model counts.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FASTGEMM_V16_MIN_BLOCKS(a_col, b_col) ((a_col) == (b_col) ? 2 : 1)
#else
#define FASTGEMM_V16_MIN_BLOCKS(a_col, b_col) 1
#endif

// A16: a row-major A read 16 bytes at a time beside an under-aligned B or C (VEC false).
template <bool A_COL_MAJOR, bool B_COL_MAJOR, bool A16, bool VEC>
__global__ void __launch_bounds__(wt::THREADS, FASTGEMM_V16_MIN_BLOCKS(A_COL_MAJOR, B_COL_MAJOR))
    sgemm_v16_split_k_waves_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                                   float alpha, float beta, float* partials, int* flags) {
  extern __shared__ __align__(16) float smem[];
  skt::run_global<wt, A_COL_MAJOR, B_COL_MAJOR, VEC, VEC || A16>(smem, A, B, C, ldc, alpha, beta,
                                                                 partials, flags);
}

}  // namespace

void sgemm_v16_split_k_waves(const GemmArgs& a) {
  static_assert(kSgemmV16Split.tile_m == wt::BLOCK_M && kSgemmV16Split.tile_n == wt::BLOCK_N &&
                    kSgemmV16Split.k_unit == wt::BLOCK_K &&
                    kSgemmV16Split.min_units == skt::MIN_KTILES,
                "the split model describes this kernel");
  skt::launch_global<wt>(
      a, "sgemm_v16_split_k_waves",
      [](auto a_col, auto b_col, auto vec, auto a16) {
        return sgemm_v16_split_k_waves_kernel<decltype(a_col)::value, decltype(b_col)::value,
                                              decltype(a16)::value, decltype(vec)::value>;
      },
      &kSgemmV16Split);
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v16_split_k_waves, {16, 80, 0, 4, "simt", "cp_async",
    "split_k_global", "sgemm_v15_split_k_global", true,
    "v15's split through global memory at two blocks per SM, S fitted to whole rounds of "
    "resident blocks (the grid may take several)"})
