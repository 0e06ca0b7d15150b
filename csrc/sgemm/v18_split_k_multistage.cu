// sgemm_v18_split_k_multistage — v16's split of K through global memory on v17's k loop.
//
// What changed since v16: each block runs its share of K with v17's pipeline (four warps of 16x8
// outputs a lane, three cp.async stages, fragments a k ahead; sgemm/multistage.cuh) instead of
// v09's double buffer. The split is v16's: S from the same round model of the launch
// (common/split_model.h, two blocks per SM: v17's block holds 128 threads of up to 255
// registers in every layout, where v16 fell to one block per SM for operands of mixed layouts),
// the partial tiles handed to the tile's owner through the stream's scratch and added in share
// order (the same bits on every call).
// Why it pays: the shapes auto splits (prefill of a few hundred rows, deep K, narrow outputs, the
// last round of a large output) run v17's loop, which keeps the FMA pipe busier than v09's.
// What limits it: the model's costs were fitted to v16's blocks, not these; a partial tile of
// 64 KiB per split block still goes through L2, and the owner adds S - 1 of them one after
// another; C row-major only (as v16).
// Shapes: any M, N, K >= 1 (zero-filled tails); both layouts; any operands aligned to their 4-byte
// elements (v17's copies; C stored element by element where not 16-byte aligned).
#include "registry.h"
#include "sgemm/split_k_tile.cuh"

namespace fastgemm {
namespace {

using wt = sgemm::multistage::Tile;
namespace skt = sgemm::split_k_tile;

template <bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC>
__global__ void __launch_bounds__(wt::THREADS, 2)
    sgemm_v18_split_k_multistage_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C,
                                        int64_t ldc, float alpha, float beta, float* partials,
                                        int* flags) {
  extern __shared__ __align__(16) float smem[];
  skt::run_global<wt, A_COL_MAJOR, B_COL_MAJOR, VEC, skt::MultistageLoop>(
      smem, A, B, C, ldc, alpha, beta, partials, flags);
}

}  // namespace

int sgemm_v18_split_k_multistage_smem() { return skt::MultistageLoop::smem_bytes<wt>(); }

void sgemm_v18_split_k_multistage(const GemmArgs& a) {
  static_assert(kSgemmV16Split.tile_m == wt::BLOCK_M && kSgemmV16Split.tile_n == wt::BLOCK_N &&
                    kSgemmV16Split.k_unit == wt::BLOCK_K &&
                    kSgemmV16Split.min_units == skt::MIN_KTILES,
                "the split model describes this kernel's tile");
  skt::launch_global<wt, skt::MultistageLoop>(
      a, "sgemm_v18_split_k_multistage",
      [](auto a_col, auto b_col, auto vec) {
        return sgemm_v18_split_k_multistage_kernel<decltype(a_col)::value,
                                                   decltype(b_col)::value, decltype(vec)::value>;
      },
      &kSgemmV16Split);
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v18_split_k_multistage, {18, 80, 0, 4, "simt", "cp_async",
    "split_k_global", "sgemm_v16_split_k_waves", true,
    "v16's split of K through global memory (S from its round model) on v17's three-stage "
    "pipeline of four-warp 128x128 tiles"})
