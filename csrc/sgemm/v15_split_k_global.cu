// sgemm_v15_split_k_global — v11's 128x128 tile and split of K, with the partial tiles summed
// through global memory instead of a cluster: a branch of v11, as hgemm v27 is of v25.
//
// What changed since v11: the reduction (sgemm/split_k_tile.cuh: run_global). The S blocks of a
// tile are no longer a cluster; blocks z < S-1 hand their fp32 accumulators to the tile's last
// block through a scratch buffer of the stream (common/split_k.cuh: publish_partial), which adds
// them in a fixed order and stores C from registers with v09's epilogue.
// Why it pays: v11's S is bounded by the clusters of S that the GPCs hold at once (an H100 holds
// fewer than 32 clusters of 4 blocks of one per SM, as hgemm v25 measured), so an output of 32
// tiles (a prefill of 128 rows over N = 4096) splits at most 3 ways on 96 SMs. Here S is bounded
// by the SMs (up to 16): 32 x 4 blocks. The CUDA-core loop is long against the reduction, so
// the extra SMs are nearly all gain.
// What limits it: v11's FMA-bound loop at one block per SM; the owner reads S - 1 partial tiles
// (64 KiB each) one after another; the scratch stays allocated per stream; C row-major only.
// It needs no cluster, so it splits on any GPU; auto takes it from sm_90 on, where it was
// measured.
// Shapes: any M, N, K >= 1 (zero-filled tails); 16-byte aligned operands; both layouts.
#include "registry.h"
#include "sgemm/split_k_tile.cuh"

namespace fastgemm {
namespace {

using wt = sgemm::warptile::Square;
namespace skt = sgemm::split_k_tile;

template <bool A_COL_MAJOR, bool B_COL_MAJOR>
__global__ void __launch_bounds__(wt::THREADS, 1)
    sgemm_v15_split_k_global_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                                    float alpha, float beta, float* partials, int* flags) {
  extern __shared__ __align__(16) float smem[];
  skt::run_global<wt, A_COL_MAJOR, B_COL_MAJOR>(smem, A, B, C, ldc, alpha, beta, partials, flags);
}

}  // namespace

int sgemm_v15_split_k_global_smem() { return skt::smem_bytes<wt>(); }

void sgemm_v15_split_k_global(const GemmArgs& a) {
  skt::launch_global<wt>(a, "sgemm_v15_split_k_global", [](auto a_col, auto b_col) {
    return sgemm_v15_split_k_global_kernel<decltype(a_col)::value, decltype(b_col)::value>;
  });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v15_split_k_global, {15, 80, 0, 16, "simt", "cp_async",
    "split_k_global", "sgemm_v11_split_k_tile", true,
    "v11's tile and split of K with the partial tiles summed through global memory, not a "
    "cluster: S bounded by the SMs rather than by resident clusters"})
