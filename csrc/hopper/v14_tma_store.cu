// hgemm_v14_tma_store — epilogue through shared memory (stmatrix) and a TMA store.
//
// What changed since v13: each consumer warpgroup converts its 64x256 accumulators to fp16/bf16
// (alpha and beta applied in fp32; C is read only when beta != 0) and writes them with stmatrix
// into a 32 KiB shared-memory buffer laid out as four 64x64 boxes with the 128-byte swizzle
// (conflict-free), then one thread hands the buffer to the TMA unit (cp.async.bulk.tensor store,
// clipped at the matrix edges) and the warpgroup goes straight on to its next tile; the store
// drains in the background and is only awaited (bulk wait_group.read) before the buffer is
// reused one tile later. The ring drops to 3 stages to make room for the two C buffers.
// Why faster: 16 stmatrix and 4 bulk stores per warpgroup and tile instead of 128 scattered
// 4-byte global stores, and the tensor cores restart on the next tile while C is written.
// What limits it: each block loads its own A and B tiles from L2 (no multicast between
// neighbouring blocks), and the two consumer warpgroups work on the same tile in lockstep, so
// their epilogues still do not overlap their own math.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/common.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;
constexpr int BLOCK_M = 128, BLOCK_N = 256, STAGES = 3, GROUP_M = 16;
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
template <bool AK, bool BK>
using RingT = Ring<BLOCK_M, BLOCK_N, STAGES, CONSUMERS, AK, BK>;
constexpr int STAGE_BYTES = RingT<true, true>::STAGE_BYTES;
constexpr int C_BYTES = 64 * BLOCK_N * 2;  // one consumer warpgroup's 64x256 output
constexpr int SMEM = STAGES * STAGE_BYTES + 2 * C_BYTES + 1024;

// A consumer warpgroup's 64 x BLOCK_N accumulators -> C through shared memory and TMA stores.
// `out` holds BLOCK_N / 64 boxes of 64 rows x 64 columns, each row 128 bytes with the 128-byte
// swizzle (16-byte chunk c of row r stored at chunk c ^ (r % 8)), which is what the tensor map of
// C expects and keeps every stmatrix conflict-free.
template <typename T>
__device__ __forceinline__ void store_tile(float (&acc)[BLOCK_N / 2], unsigned char* out,
                                           const CUtensorMap* tma_c, const T* C, int64_t ldc,
                                           int64_t M, int64_t N, int64_t row0, int64_t col0,
                                           float alpha, float beta, int half) {
  using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const bool leader = threadIdx.x % 128 == 0;
  // The buffer's previous tile must have been read out by its TMA store before it is rewritten.
  if (leader) ptx::bulk_wait_read<0>();
  ptx::named_barrier(1 + half, 128);
  auto pack = [&](int j, int r) {  // two adjacent outputs of n8 block j, row half r, as T2 bits
    float v0 = alpha * acc[4 * j + 2 * r], v1 = alpha * acc[4 * j + 2 * r + 1];
    if (beta != 0.0f) {  // only now is C read
      const int64_t row = row0 + warp * 16 + lane / 4 + 8 * r;
      const int64_t col = col0 + 8 * j + 2 * (lane % 4);
      if (row < M && col < N) v0 = fmaf(beta, float(C[row * ldc + col]), v0);
      if (row < M && col + 1 < N) v1 = fmaf(beta, float(C[row * ldc + col + 1]), v1);
    }
    T2 t;
    t.x = T(v0), t.y = T(v1);
    return *reinterpret_cast<uint32_t*>(&t);
  };
  const uint32_t base = ptx::smem_addr(out);
#pragma unroll
  for (int j = 0; j < BLOCK_N / 8; j += 2) {
    // Matrices: rows 0-7 / 8-15 of n8 blocks j and j+1; lane l addresses row l % 8 of matrix l / 8.
    const int row = warp * 16 + (lane % 8) + 8 * ((lane / 8) % 2);
    const int col = 8 * (j + lane / 16);
    const int box = col / BOX, chunk = (col % BOX) / 8;
    const uint32_t addr = base + box * (64 * SW_ROW) + row * SW_ROW + ((chunk ^ (row % 8)) * 16);
    ptx::stmatrix_x4(addr, pack(j, 0), pack(j, 1), pack(j + 1, 0), pack(j + 1, 1));
  }
  ptx::fence_proxy_async_shared();  // the stmatrix writes, visible to the TMA unit ...
  ptx::named_barrier(1 + half, 128);  // ... from every warp of the warpgroup
  if (leader) {
#pragma unroll
    for (int b = 0; b < BLOCK_N / BOX; ++b) {
      ptx::tma_store_2d(tma_c, out + b * 64 * SW_ROW, static_cast<int>(col0) + BOX * b,
                        static_cast<int>(row0));
    }
    ptx::bulk_commit();
  }
}

template <typename T, bool A_KMAJOR, bool B_KMAJOR>
__global__ void __launch_bounds__(THREADS, 1)
    hgemm_v14_tma_store_kernel(const __grid_constant__ CUtensorMap tma_a,
                  const __grid_constant__ CUtensorMap tma_b,
                  const __grid_constant__ CUtensorMap tma_c, T* C, int64_t M, int64_t N,
                  int64_t K, int64_t ldc, float alpha, float beta) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  unsigned char* smem = aligned_smem(smem_raw);
  const RingT<A_KMAJOR, B_KMAJOR> ring{smem, full, empty};
  ring.init();
  __syncthreads();
  const int wg = threadIdx.x / 128;
  const int k_tiles = static_cast<int>((K + BLOCK_K - 1) / BLOCK_K);
  const int tiles_m = static_cast<int>((M + BLOCK_M - 1) / BLOCK_M);
  const int tiles_n = static_cast<int>((N + BLOCK_N - 1) / BLOCK_N);
  int it = 0;
  if (wg == 0) {
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x != 0) return;
    for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
      int m0, n0;
      grouped_tile<BLOCK_M, BLOCK_N, GROUP_M>(tile, tiles_m, tiles_n, m0, n0);
      ring.produce(&tma_a, &tma_b, m0, n0, k_tiles, it);
    }
  } else {
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int half = wg - 1;
    unsigned char* out = smem + STAGES * STAGE_BYTES + half * C_BYTES;
    for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
      int m0, n0;
      grouped_tile<BLOCK_M, BLOCK_N, GROUP_M>(tile, tiles_m, tiles_n, m0, n0);
      float acc[BLOCK_N / 2];
      ring.template consume<T>(acc, half, k_tiles, it);
      store_tile<T>(acc, out, &tma_c, C, ldc, M, N, m0 + 64 * half, n0, alpha, beta, half);
    }
    if (threadIdx.x % 128 == 0) ptx::bulk_wait<0>();  // the last stores have landed
  }
}

template <typename T>
void hgemm_v14_tma_store_launch(const GemmArgs& a) {
  constexpr const char* name = "hgemm_v14_tma_store";
  hopper::launch<BLOCK_M, BLOCK_N, T>(a, name, persistent_grid(a, BLOCK_M, BLOCK_N, name), THREADS, SMEM, [](auto ak, auto bk) {
    return hgemm_v14_tma_store_kernel<T, decltype(ak)::value, decltype(bk)::value>;
  });
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v14_tma_store, SMEM)
