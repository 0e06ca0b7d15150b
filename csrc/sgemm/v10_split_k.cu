// sgemm_v10_split_k — skinny problems (few output rows: decode, small batches): 4- or 16-row
// output tiles, B streamed from global memory straight into registers, K split across a cluster.
// A branch of v09, a shape specialist for outputs of at most 16 rows.
//
// What changed since v09: no shared-memory tile of B and no register tile of A x B. A block owns
// a ROWS x 64 output tile (ROWS = 4 or 16, by M) and a share of K; it stages ROWS x 256 chunks of A
// (small, from L2) in shared memory, and every thread multiplies the B elements it loads itself
// (16-byte loads, each element loaded once in the whole grid) by all ROWS rows of the chunk, so
// each byte of B read from HBM feeds ROWS multiply-adds. Layout decides the lanes' roles:
//   - B row-major (N contiguous): 16 lanes cover 64 columns with a float4 each; the block's
//     eight half-warps take every 8th k of a chunk, and their partial tiles meet in shared memory
//     (summed in a fixed order);
//   - B column-major (K contiguous, a weight matrix W with B = W^T): 8 lanes read 128 contiguous
//     bytes of one column, a lane keeps 4 columns, and the 8 lanes' sums meet by shuffles.
// The z blocks of one output tile form a thread-block cluster, each takes an even share of the
// K chunks, and their fp32 partial tiles are summed in rank order through distributed shared
// memory (common/split_k.cuh): the same bits on every call, no workspace.
// Why it pays: with few rows every wider tile leaves most SMs idle and reads B at a fraction of
// HBM bandwidth; here there are enough blocks for every SM, and the work per byte of B (ROWS
// FMAs) stays under what the CUDA cores sustain at HBM speed.
// What limits it: rows past M are padding (a 16-row tile with M = 5 does 16 rows of FMAs); it is
// bound by FMA issue, not HBM, once ROWS = 16 on a GPU with more bandwidth per FMA; the split
// needs clusters (sm_90+), older GPUs run one block per tile.
// Shapes: any M, N, K >= 1 (auto sends it M <= 16); sm_80+ (as v09), 16-byte aligned operands.
#include "common/split_k.cuh"
#include "registry.h"
#include "sgemm/common.cuh"

namespace fastgemm {
namespace {

constexpr int THREADS = 128, BN = 64, KC = 256;  // block threads, tile columns, K chunk
constexpr int RED_LD = BN + 4;                   // floats per partial-tile row

template <int ROWS, bool B_COL>
struct Smem {
  // A chunk: B row-major reads A[.][k] for all rows at one k (as[k][ROWS], broadcast float4s);
  // B column-major reads 4 consecutive k of one row (as[ROWS][KC]).
  float a[ROWS * KC];
  // Partial tiles: B row-major, one per half-warp K slice (8), summed into slice 0;
  // B column-major, one.
  float part[(B_COL ? 1 : 8) * ROWS * RED_LD];
};

// The ROWS x KC chunk of A at (m0, k0) into shared memory, zero past M and K.
template <int ROWS, bool A_COL, bool B_COL>
__device__ __forceinline__ void stage_a(const sgemm::View& A, int64_t M, int64_t K, int64_t m0,
                                        int64_t k0, float* as) {
  for (int e = threadIdx.x; e < ROWS * KC; e += THREADS) {
    // Consecutive threads walk A's contiguous dimension (coalesced global reads).
    const int m = A_COL ? e % ROWS : e / KC, k = A_COL ? e / ROWS : e % KC;
    const float v = m0 + m < M && k0 + k < K ? A.at(m0 + m, k0 + k) : 0.0f;
    as[B_COL ? m * KC + k : k * ROWS + m] = v;
  }
}

// B(k, n..n+3) as a float4 (B row-major), zeros past K and N.
__device__ __forceinline__ float4 load_b_row(const float* B, int64_t ldb, int64_t K, int64_t N,
                                             int64_t k, int64_t n, bool inside) {
  if (inside) return __ldg(reinterpret_cast<const float4*>(B + k * ldb + n));
  float e[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) e[i] = k < K && n + i < N ? B[k * ldb + n + i] : 0.0f;
  return make_float4(e[0], e[1], e[2], e[3]);
}
// B(k..k+3, n) as a float4 (B column-major), zeros past K and N.
__device__ __forceinline__ float4 load_b_col(const float* B, int64_t ldb, int64_t K, int64_t N,
                                             int64_t k, int64_t n, bool inside) {
  if (inside) return __ldg(reinterpret_cast<const float4*>(B + n * ldb + k));
  float e[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) e[i] = n < N && k + i < K ? B[n * ldb + k + i] : 0.0f;
  return make_float4(e[0], e[1], e[2], e[3]);
}

__device__ __forceinline__ void fma4(float4& acc, float a, const float4& b) {
  acc.x = fmaf(a, b.x, acc.x), acc.y = fmaf(a, b.y, acc.y);
  acc.z = fmaf(a, b.z, acc.z), acc.w = fmaf(a, b.w, acc.w);
}
__device__ __forceinline__ float dot4(const float4& a, const float4& b, float acc) {
  return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, acc))));
}

template <int ROWS, bool A_COL, bool B_COL>
__global__ void __launch_bounds__(THREADS)
    sgemm_v10_split_k_kernel(sgemm::View A, const float* B, int64_t ldb, float* C, int64_t ldc,
                             int64_t M, int64_t N, int64_t K, float alpha, float beta) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto& s = *reinterpret_cast<Smem<ROWS, B_COL>*>(smem_raw);
  const int64_t m0 = int64_t(blockIdx.x) * ROWS, n0 = int64_t(blockIdx.y) * BN;
  int64_t chunk0, chunks;
  split_share((K + KC - 1) / KC, chunk0, chunks);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  if constexpr (!B_COL) {
    // Half-warp h = 2 * warp + lane / 16 takes k = h, h + 8, ... of each chunk; its lane owns
    // columns n0 + 4 * (lane % 16) .. + 3.
    const int slice = 2 * warp + lane / 16;
    const int64_t n = n0 + 4 * (lane % 16);
    float4 acc[ROWS] = {};
    for (int64_t c = chunk0; c < chunk0 + chunks; ++c) {
      const int64_t k0 = c * KC;
      stage_a<ROWS, A_COL, B_COL>(A, M, K, m0, k0, s.a);
      __syncthreads();
      const bool inside = k0 + KC <= K && n + 4 <= N;
      constexpr int STEPS = KC / 8, UNROLL = 8;
#pragma unroll 1
      for (int i = 0; i < STEPS; i += UNROLL) {
        float4 b[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          b[u] = load_b_row(B, ldb, K, N, k0 + 8 * (i + u) + slice, n, inside);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          const float* a = s.a + (8 * (i + u) + slice) * ROWS;
#pragma unroll
          for (int r = 0; r < ROWS; r += 4) {
            const float4 a4 = *reinterpret_cast<const float4*>(a + r);
            fma4(acc[r], a4.x, b[u]), fma4(acc[r + 1], a4.y, b[u]);
            fma4(acc[r + 2], a4.z, b[u]), fma4(acc[r + 3], a4.w, b[u]);
          }
        }
      }
      __syncthreads();  // the next chunk overwrites s.a
    }
    // The eight slices' partial tiles, summed in slice order into slice 0's.
    float* mine = s.part + slice * ROWS * RED_LD + 4 * (lane % 16);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) *reinterpret_cast<float4*>(mine + r * RED_LD) = acc[r];
    __syncthreads();
    for (int e = threadIdx.x; e < ROWS * BN / 4; e += THREADS) {
      const int r = e / (BN / 4), col = 4 * (e % (BN / 4));
      float4 sum = *reinterpret_cast<const float4*>(s.part + r * RED_LD + col);
      for (int h = 1; h < 8; ++h) {
        const float4 v = *reinterpret_cast<const float4*>(s.part + (h * ROWS + r) * RED_LD + col);
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
      }
      *reinterpret_cast<float4*>(s.part + r * RED_LD + col) = sum;
    }
  } else {
    // Warp w owns columns n0 + 16w .. + 15; lane group g = lane / 8 takes columns g, g + 4,
    // g + 8, g + 12 of them, and lane q = lane % 8 the k quads q, q + 8, ... of each chunk.
    const int g = lane / 8, q = lane % 8;
    const int64_t n = n0 + 16 * warp + g;
    float acc[ROWS][4] = {};
    for (int64_t c = chunk0; c < chunk0 + chunks; ++c) {
      const int64_t k0 = c * KC;
      stage_a<ROWS, A_COL, B_COL>(A, M, K, m0, k0, s.a);
      __syncthreads();
      const bool inside = k0 + KC <= K && n0 + BN <= N;
      constexpr int STEPS = KC / 32, UNROLL = 2;
#pragma unroll 1
      for (int i = 0; i < STEPS; i += UNROLL) {
        float4 b[UNROLL][4];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            b[u][j] = load_b_col(B, ldb, K, N, k0 + 32 * (i + u) + 4 * q, n + 4 * j, inside);
          }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
          for (int r = 0; r < ROWS; ++r) {
            const float4 a4 = *reinterpret_cast<const float4*>(s.a + r * KC + 32 * (i + u) + 4 * q);
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[r][j] = dot4(a4, b[u][j], acc[r][j]);
          }
      }
      __syncthreads();
    }
    // The 8 lanes of a column group hold partial sums over interleaved k quads: a butterfly
    // (fixed order) leaves the total in every lane; lane q = 0 writes it.
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int o = 1; o < 8; o *= 2) acc[r][j] += __shfl_xor_sync(0xffffffffu, acc[r][j], o);
    if (q == 0) {
#pragma unroll
      for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int j = 0; j < 4; ++j) s.part[r * RED_LD + 16 * warp + g + 4 * j] = acc[r][j];
    }
  }
  cluster_reduce_store<ROWS, BN, RED_LD, THREADS>(s.part, C, ldc, M, N, m0, n0, alpha, beta);
}

template <int ROWS>
void launch_rows(const GemmArgs& a) {
  const int64_t tiles_m = ceil_div(a.M, ROWS), tiles_n = ceil_div(a.N, BN);
  if (tiles_n > 65535 || tiles_m > 2147483647) {
    throw std::runtime_error("sgemm_v10_split_k: output needs " + std::to_string(tiles_m) + "x" +
                             std::to_string(tiles_n) + " tiles, more than a grid can hold");
  }
  const dim3 grid(static_cast<unsigned>(tiles_m), static_cast<unsigned>(tiles_n));
  int device = 0;
  FASTGEMM_CUDA_CHECK(cudaGetDevice(&device));
  const DeviceProps& props = device_props(device);
  with_layouts(a, [&](auto a_col, auto b_col) {
    constexpr bool BC = decltype(b_col)::value;
    auto kernel = sgemm_v10_split_k_kernel<ROWS, decltype(a_col)::value, BC>;
    constexpr int smem = int(sizeof(Smem<ROWS, BC>));
    set_smem(kernel, smem);
    const int split = split_count(kernel, THREADS, smem, tiles_m * tiles_n, ceil_div(a.K, KC),
                                  2, 4, props, device);
    launch_split(kernel, grid, THREADS, smem, a.stream, split, "sgemm_v10_split_k",
                 sgemm::view_a(a), static_cast<const float*>(a.B), a.ldb,
                 static_cast<float*>(a.C), a.ldc, a.M, a.N, a.K, a.alpha, a.beta);
  });
}

}  // namespace

void sgemm_v10_split_k(const GemmArgs& a) {
  if (a.M <= 4) {
    launch_rows<4>(a);
  } else {
    launch_rows<16>(a);
  }
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v10_split_k, {10, 80, 0, 16, "simt", "ldg", "split_k",
    "sgemm_v09_cp_async", true,
    "4- or 16-row tiles, B streamed into registers once, K split across a cluster, partial tiles "
    "summed in rank order through distributed shared memory"})
