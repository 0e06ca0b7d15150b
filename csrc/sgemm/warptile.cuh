// sgemm/warptile.cuh — the warp-tiled inner product and epilogue of rungs v08, v09, v11, v12 and
// v17.
//
// A warp owns a WARP_M x 32 warp tile (WARP_M = 64; 32 for v12's thinnest tiles, 128 for v17's
// 16x8 lanes), computed as
// (WARP_M / 32) x 2 sub-tiles of 32x16. Inside a sub-tile the 32 lanes form an 8 (M) x 4 (N) grid
// and each lane owns a 4x4 patch, so at WARP_M = 64 a lane holds 2x2 patches = 8x8 outputs. For
// one k a warp reads 8 consecutive float4s of A and 4 of B per sub-tile row/column: one
// shared-memory wavefront each, no bank conflicts, and the 8 lanes that share an A float4 get it
// by broadcast. Shared tiles are K-major with a 4-float row pad (see TileLoader). The block is
// WARPS_M x WARPS_N warps, BK = 16: Square (2 x 4 warps, 128x128, 256 threads) for v08, v09 and v11, and
// v12's four-warp tiles: 64x128 (1 x 4), 128x64 (2 x 2), 32x128 (1 x 4 of 32x32) and 128x32
// (4 x 1 of 32x32); v17's 128x128 of four 128x32 warp tiles (1 x 4, its own k loop).
#pragma once
#include "sgemm/common.cuh"

namespace fastgemm::sgemm::warptile {

template <int WARPS_M_, int WARPS_N_, int WARP_M_ = 64>
struct Tile {
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
  static constexpr int WARP_M = WARP_M_, WARP_N = 32;
  static constexpr int BLOCK_M = WARPS_M * WARP_M, BLOCK_N = WARPS_N * WARP_N, BLOCK_K = 16;
  static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr int LANES_M = 8, LANES_N = 4, PATCH = 4;  // lane grid and patch side
  static constexpr int SUB_M = LANES_M * PATCH, SUB_N = LANES_N * PATCH;  // 32 x 16 sub-tile
  // (WARP_M / 32) x 2 sub-tiles per warp
  static constexpr int ITER_M = WARP_M / SUB_M, ITER_N = WARP_N / SUB_N;
  static_assert(WARP_M % SUB_M == 0, "a warp tile is whole sub-tiles");
  static constexpr int THREAD_M = ITER_M * PATCH, THREAD_N = ITER_N * PATCH;
  static constexpr int LDS_A = BLOCK_M + 4, LDS_B = BLOCK_N + 4;  // padded row strides (floats)
  static_assert(LANES_M * LANES_N == 32, "a sub-tile is covered by one warp");

  // Where this lane's patches start inside the block tile.
  struct LanePos {
    int row, col;  // of patch (0, 0); patch (p, q) is at row + p * SUB_M, col + q * SUB_N
    __device__ __forceinline__ LanePos() {
      const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
      row = (warp / WARPS_N) * WARP_M + (lane / LANES_N) * PATCH;
      col = (warp % WARPS_N) * WARP_N + (lane % LANES_N) * PATCH;
    }
};

// This lane's A and B fragments of row k of a shared slab.
__device__ __forceinline__ static void load_fragments(const float* As, const float* Bs,
                                                      int k, const LanePos& pos,
                                                      float (&a)[THREAD_M],
                                                      float (&b)[THREAD_N]) {
#pragma unroll
  for (int p = 0; p < ITER_M; ++p)
    *reinterpret_cast<float4*>(&a[p * PATCH]) =
        *reinterpret_cast<const float4*>(&As[k * LDS_A + pos.row + p * SUB_M]);
#pragma unroll
  for (int q = 0; q < ITER_N; ++q)
    *reinterpret_cast<float4*>(&b[q * PATCH]) =
        *reinterpret_cast<const float4*>(&Bs[k * LDS_B + pos.col + q * SUB_N]);
}

// acc += As^T Bs over one BLOCK_K slab of shared memory.
__device__ __forceinline__ static void multiply(const float* As, const float* Bs,
                                                const LanePos& pos,
                                                float (&acc)[THREAD_M][THREAD_N]) {
#pragma unroll
  for (int k = 0; k < BLOCK_K; ++k) {
    float a[THREAD_M], b[THREAD_N];
    load_fragments(As, Bs, k, pos, a, b);
#pragma unroll
    for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
      for (int j = 0; j < THREAD_N; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

// An edge tile at (m0, n0) that would reach past M (N) takes the last BLOCK_M rows (BLOCK_N
// columns) instead, where the output is at least a tile wide and the shift keeps 16-byte accesses
// aligned (VEC: C's columns and an MN-contiguous operand's rows or columns move by a multiple of
// 4); the tile still stores only its own part: the returned shift (rows, columns) is the
// epilogue's skip. Every block then runs the unchecked copies of an interior tile, so a block of
// the edge does not run the checked loop body beside the interior ones (v09, v17).
template <bool A_MN_CONTIG, bool VEC>
__device__ __forceinline__ static int2 move_inside(int64_t M, int64_t N, int64_t& m0,
                                                   int64_t& n0) {
  int2 skip = make_int2(0, 0);
  if (m0 + BLOCK_M > M && M >= BLOCK_M && (!(VEC && A_MN_CONTIG) || (M - BLOCK_M) % 4 == 0)) {
    skip.x = static_cast<int>(m0 - (M - BLOCK_M));
    m0 = M - BLOCK_M;
  }
  if (n0 + BLOCK_N > N && N >= BLOCK_N && (!VEC || (N - BLOCK_N) % 4 == 0)) {
    skip.y = static_cast<int>(n0 - (N - BLOCK_N));
    n0 = N - BLOCK_N;
  }
  return skip;
}

// C = alpha * acc + beta * C for the block's tile at (m0, n0), rows < M and columns < N. A tile
// moved inside the output (move_inside) skips its first skip.x rows and skip.y columns, which
// another block stores; a quad that straddles skip.y (a shift that is not a multiple of 4, only
// with !VEC) is stored element by element. SKIP = false (no tile moved): none of those checks.
template <bool VEC = true, bool SKIP = false>
__device__ __forceinline__ static void epilogue(float* C, int64_t ldc, int64_t M, int64_t N,
                                                int64_t m0, int64_t n0, const LanePos& pos,
                                                const float (&acc)[THREAD_M][THREAD_N],
                                                float alpha, float beta,
                                                int2 skip = make_int2(0, 0)) {
#pragma unroll
  for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
    for (int q = 0; q < ITER_N; ++q) {
      const int j = q * PATCH;
      const float4 v = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      if constexpr (!SKIP) {
        store_c4<VEC>(C, ldc, M, N, m0 + pos.row + (i / PATCH) * SUB_M + i % PATCH,
                      n0 + pos.col + q * SUB_N, v, alpha, beta);
        continue;
      }
      const int r = pos.row + (i / PATCH) * SUB_M + i % PATCH, c = pos.col + q * SUB_N;
      if (r < skip.x || c + PATCH <= skip.y) continue;
      if (VEC || c >= skip.y) {  // VEC: skip.y is a multiple of 4, no quad straddles it
        store_c4<VEC>(C, ldc, M, N, m0 + r, n0 + c, v, alpha, beta);
        continue;
      }
#pragma unroll
      for (int e = 0; e < PATCH; ++e)
        if (m0 + r < M && c + e >= skip.y && n0 + c + e < N)
          store_c(C, ldc, m0 + r, n0 + c + e, acc[i][j + e], alpha, beta);
    }
}

// The epilogue for a C whose rows are aligned only to 4 bytes (!VEC), through shared memory:
// SLAB rows of the tile at a time, lanes write their patches there as float4s, then each warp
// stores whole rows, lane l taking columns l, l + 32, ...: a warp-wide store writes 128
// contiguous bytes. epilogue<false> stores each quad of a patch as four 4-byte stores, and each
// of them touches every line of the warp's eight rows: four times the L2 write requests, and
// the stores' source registers held until the requests drain (ncu: long scoreboard stalls in
// the owner's sums of v16, benchmarks/NOTES.md). Same outputs, skips and beta rule (C never read
// where beta == 0) as epilogue<false, SKIP>; the arithmetic is store_c's, fmaf(alpha, acc, beta *
// C), where store_quad (the 16-byte path) rounds fmaf(beta, C, alpha * acc): with beta != 0 the
// two may differ in the last bit (each is the same on every call). `stage`: SLAB x LDS_B floats
// of shared memory that no thread reads or copies into any more (the caller's barrier comes
// first); ends at a barrier.
template <int SLAB, bool SKIP = false>
__device__ __forceinline__ static void epilogue_staged(float* stage, float* C, int64_t ldc,
                                                       int64_t M, int64_t N, int64_t m0,
                                                       int64_t n0, const LanePos& pos,
                                                       const float (&acc)[THREAD_M][THREAD_N],
                                                       float alpha, float beta,
                                                       int2 skip = make_int2(0, 0)) {
  static_assert(BLOCK_M % SLAB == 0 && BLOCK_N % 32 == 0, "whole slabs of whole warp rows");
  constexpr int WARPS = THREADS / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll 1
  for (int slab = 0; slab < BLOCK_M; slab += SLAB) {
#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
      const int r = pos.row + (i / PATCH) * SUB_M + i % PATCH - slab;
      if (r < 0 || r >= SLAB) continue;
#pragma unroll
      for (int q = 0; q < ITER_N; ++q) {
        const int j = q * PATCH;
        *reinterpret_cast<float4*>(&stage[r * LDS_B + pos.col + q * SUB_N]) =
            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      }
    }
    __syncthreads();
    for (int r = warp; r < SLAB; r += WARPS) {
      const int64_t m = m0 + slab + r;
      if (m >= M || (SKIP && slab + r < skip.x)) continue;
#pragma unroll
      for (int c = lane; c < BLOCK_N; c += 32) {
        if (n0 + c < N && (!SKIP || c >= skip.y)) {
          store_c(C, ldc, m, n0 + c, stage[r * LDS_B + c], alpha, beta);
        }
      }
    }
    __syncthreads();
  }
}

template <typename KernelFor>
static void launch(const GemmArgs& a, const char* name, KernelFor kernel_for) {
  launch_kmn<BLOCK_M, BLOCK_N, THREADS>(a, name, kernel_for);
}
};

using Square = Tile<2, 4>;  // 128x128, 256 threads

}  // namespace fastgemm::sgemm::warptile
