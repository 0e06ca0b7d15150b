// sgemm_v14_wgmma_tf32x3 — fp32-accurate GEMM on the tensor cores: 3xTF32 (precision="tf32x3").
//
// What changed since v13: each operand is split into three tf32 planes (tf32.cuh): hi (x rounded
// to tf32), lo (the rounding error, itself rounded to tf32) and fin (hi with non-finite values
// zeroed), interleaved per 32-deep k-chunk so that v13's kernel, run over three times the depth,
// accumulates hi_a hi_b + fin_a lo_b + lo_a fin_b. The dropped lo_a lo_b and the rounding of the
// lo planes leave ~2^-22 relative error per product, near fp32's own rounding, while every
// product runs on the tensor cores. Non-finite inputs reach C only through hi_a hi_b, so inf and
// NaN propagate as in IEEE fp32. The tensor cores' fp32 accumulation is not round-to-nearest
// and drifts one way over a long K, so each 32-deep chunk's products (its three k-tiles) go to
// a fresh register tile that the consumers add into the accumulators with round-to-nearest
// FADDs (PROMOTE); the second register tile makes the tile 128x128 (v21's tile and 6-stage
// ring) instead of v13's 128x256.
// Why faster than the CUDA-core rungs: three TF32 tensor-core products still cost well under
// one fp32 FFMA pass.
// What limits it: three times v13's math; each chunk's last wgmmas are waited for before the
// next chunk is issued (the two consumer warpgroups cover each other); packing both operands into three
// planes each (one read, three writes per operand); the register epilogue.
// Shapes: any M, N, K >= 1; fp32 operands 16-byte aligned. sm_90a.
#include "hopper/rungs.h"
#include "hopper/tf32.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(sgemm_v14_wgmma_tf32x3, S14) {
  static_assert(A_KMAJOR && B_KMAJOR, "tf32 wgmma reads K-major operands only");
  tf32_gemm<S14, true>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_TF32_ENTRY_POINTS(sgemm_v14_wgmma_tf32x3, S14)

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v14_wgmma_tf32x3, {14, 90, 90, 16, "wgmma", "tma", "registers",
    "sgemm_v13_wgmma_tf32", true,
    "3xTF32 on the tensor cores: hi/lo tf32 planes per operand, three products, fp32 accuracy",
    "tf32x3"})
