// sgemm_v01_naive — the reference point of the ladder.
//
// What: one thread per output C(i, j), a K-long dot product straight from global memory. The block
// is 32x32 threads with threadIdx.x walking down the ROWS of C (i).
// Why it is slow: the 32 threads of a warp share j and have consecutive i, so each load of B(k, j)
// is one address broadcast to the warp, but each load of A(i, k) touches 32 different rows (32
// sectors for 128 useful bytes) and the C stores are scattered the same way. Every operand element
// is re-read from L1/L2 by every thread that needs it: 2K loads per 2K flops, no reuse in registers
// or shared memory. Memory-latency bound at well under 1 TFLOPS on any recent GPU.
// Shapes: any M, N, K >= 1, any operand layout (strided accessors).
#include "common/launch.cuh"
#include "registry.h"
#include "sgemm/common.cuh"

namespace fastgemm {
namespace {

__global__ void sgemm_v01_naive_kernel(int64_t M, int64_t N, int64_t K, sgemm::View A,
                                       sgemm::View B, float* C, int64_t ldc, float alpha,
                                       float beta) {
  const int64_t i = blockIdx.y * 32ll + threadIdx.x;  // rows along threadIdx.x: uncoalesced
  const int64_t j = blockIdx.x * 32ll + threadIdx.y;
  if (i >= M || j >= N) return;
  float acc = 0.0f;
  for (int64_t k = 0; k < K; ++k) acc += A.at(i, k) * B.at(k, j);
  sgemm::store_c(C, ldc, i, j, acc, alpha, beta);
}

}  // namespace

void sgemm_v01_naive(const GemmArgs& a) {
  const dim3 grid = tile_grid(a, 32, 32, "sgemm_v01_naive");
  sgemm_v01_naive_kernel<<<grid, dim3(32, 32), 0, a.stream>>>(
      a.M, a.N, a.K, sgemm::view_a(a), sgemm::view_b(a), static_cast<float*>(a.C), a.ldc, a.alpha,
      a.beta);
  FASTGEMM_CHECK_LAUNCH("sgemm_v01_naive");
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v01_naive, {1, 75, 0, 4, "simt", "ldg", "registers",
    "", false,
    "one thread per output, threadIdx.x along rows (uncoalesced)"})
