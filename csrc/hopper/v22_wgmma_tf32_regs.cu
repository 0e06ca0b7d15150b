// sgemm_v22_wgmma_tf32_regs — v13 (TF32 tensor cores, precision="tf32") without the packing
// pass: the operand that is not K-major is read through registers.
//
// What changed since v13: tf32 wgmma reads shared-memory operands only K-major, so v13 packs a
// row-major B (or a column-major A) into a K-major copy first: one read and one write of the
// operand, about a fifth of the GEMM's time at 4096^3. But wgmma's A may come from registers.
// v22 loads an MN-major A tile with TMA as it is (boxes of 32 rows x 32 k) and each consumer
// thread reads its fragment from it with 4-byte shared loads, rounding to the nearest tf32
// (mainloop.cuh: consume_tf32_regs). A row-major B is made that A by running the problem as its
// transpose, C^T = B^T A^T: B^T is MN-major, A^T (row-major A) is the K-major B, and C is stored
// column-major from the registers. Only a column-major A with a row-major B (both MN-major)
// still packs one operand, as do operands that are not 16-byte aligned.
// Why faster: no packing pass over the row-major B of the common row-major call.
// What limits it: the fragment loads (two-way bank conflicts) add to the shared-memory traffic
// of the wgmmas; the register epilogue (the transposed stores write 32-byte pieces of columns).
// Accuracy: the register operand is rounded to the nearest tf32, the shared-memory one truncated
// by the tensor cores — TF32, not fp32; auto chooses it only for precision="tf32".
// Shapes: any M, N, K >= 1; fp32 operands 16-byte aligned. sm_90a.
#include "hopper/rungs.h"
#include "hopper/tf32.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

template <bool A_KMAJOR, bool C_COL>
__global__ void __launch_bounds__(S22::THREADS, S22::MIN_BLOCKS) sgemm_v22_wgmma_tf32_regs_kernel(
    const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
    const __grid_constant__ CUtensorMap, float* C, int64_t M, int64_t N, int64_t K, int64_t ldc,
    float alpha, float beta) {
  tf32_gemm<S22, A_KMAJOR, C_COL>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, beta);
}

}  // namespace

void sgemm_v22_wgmma_tf32_regs(const GemmArgs& a) {
  hopper::launch_tf32<hopper::S22>(a, "sgemm_v22_wgmma_tf32_regs", [](auto a_kmajor, bool c_col) {
    constexpr bool AK = decltype(a_kmajor)::value;
    return c_col ? sgemm_v22_wgmma_tf32_regs_kernel<AK, true>
                 : sgemm_v22_wgmma_tf32_regs_kernel<AK, false>;
  });
}
int sgemm_v22_wgmma_tf32_regs_smem() { return hopper::smem_bytes<hopper::S22>(); }

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v22_wgmma_tf32_regs, {22, 90, 90, 16, "wgmma", "tma",
    "registers", "sgemm_v13_wgmma_tf32", true,
    "v13 reading an MN-major operand through registers (C^T = B^T A^T for a row-major B): no "
    "packing pass", "tf32"})
