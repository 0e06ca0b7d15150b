// sgemm_v13_wgmma_tf32 — fp32 GEMM on the tensor cores, in TF32 precision (precision="tf32").
//
// What changed since v09: the products run on the tensor cores (wgmma, tf32 inputs, fp32
// accumulators) instead of CUDA-core FFMAs, in hgemm_v13's persistent warp-specialised kernel
// (TMA producer, 4-stage ring, two consumer warpgroups of 64x256, grouped tile order, register
// epilogue) with 32-deep fp32 k-tiles. Each operand is read as tf32: 10 explicit mantissa bits,
// fp32's exponent range. An operand that is not K-major (row-major B, column-major A) or not
// 16-byte aligned is first packed into a K-major truncated copy (tf32.cuh), because tf32 wgmma
// reads only K-major shared-memory tiles.
// Why faster: dense TF32 tensor-core math has several times the CUDA cores' fp32 rate.
// What limits it: the packing pass over a row-major B (one read and one write of B); the
// register epilogue. Accuracy: a relative error of ~2^-11 per product — TF32, not fp32; auto
// chooses it only when the caller asks for precision="tf32".
// Shapes: any M, N, K >= 1; fp32 operands 16-byte aligned. sm_90a.
#include "hopper/rungs.h"
#include "hopper/tf32.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(sgemm_v13_wgmma_tf32, S13) {
  static_assert(A_KMAJOR && B_KMAJOR, "tf32 wgmma reads K-major operands only");
  tf32_gemm<S13, true>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_TF32_ENTRY_POINTS(sgemm_v13_wgmma_tf32, S13)

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v13_wgmma_tf32, {13, 90, 90, 16, "wgmma", "tma", "registers",
    "sgemm_v09_cp_async", true,
    "TF32 tensor cores (wgmma + TMA, persistent, 128x256 tiles); operands truncated to tf32",
    "tf32"})
