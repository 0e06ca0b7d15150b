// sgemm_v10_split_k — skinny problems (few output rows: decode, small batches): 4-, 8- or 16-row
// output tiles, B streamed from global memory straight into registers, K split across a cluster.
// A branch of v09, a shape specialist for outputs of few rows.
//
// What changed since v09: no shared-memory tile of B and no register tile of A x B. A block owns
// a ROWS x 64 output tile (ROWS = 4, 8 or 16, by M) and a share of K; it stages ROWS x 256
// chunks of A (small, from L2) in shared memory, and every thread multiplies the B elements it
// loads itself (16-byte loads; with M <= ROWS each element is loaded once in the whole grid) by
// all ROWS rows of the chunk, so each byte of B read from HBM feeds ROWS multiply-adds. The loop
// is software-pipelined: the next chunk of A lands by cp.async and the next batch of B loads is
// in flight (a second register buffer) while the current one is multiplied. Layout decides the
// lanes' roles:
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
// needs clusters (sm_90+), older GPUs run one block per tile. With more tiles than a wave of
// resident blocks the split is 2, never more, and the last wave is still a partial one.
// Shapes: any M, N, K >= 1 (auto sends it M <= 16: past 16 rows, several 16-row tiles read each
// column panel of B, and v12's 64-row tile is faster); sm_80+ (as v09); any operands aligned to
// their 4-byte elements (A is copied 4 bytes at a time anyway; where B or C is not 16-byte aligned,
// the kernel compiled for 4-byte loads and stores runs on them in place).
#include <type_traits>

#include "common/split_k.cuh"
#include "registry.h"
#include "sgemm/common.cuh"

namespace fastgemm {
namespace {

constexpr int THREADS = 128, BN = 64, KC = 256;  // block threads, tile columns, K chunk
constexpr int RED_LD = BN + 4;                   // floats per partial-tile row

// Four consecutive elements of B along its contiguous dimension as a float4: B(k, n..n+3) when B
// is row-major, B(k..k+3, n) when it is column-major; zeros past K and N. One 16-byte load (VEC)
// or four 4-byte ones.
template <bool B_COL, bool VEC>
__device__ __forceinline__ float4 load_b4(const float* B, int64_t ldb, int64_t K, int64_t N,
                                          int64_t k, int64_t n, bool inside) {
  const int64_t offset = B_COL ? n * ldb + k : k * ldb + n;
  if (inside) {
    if constexpr (VEC) return __ldg(reinterpret_cast<const float4*>(B + offset));
    const float* p = B + offset;
    return make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3));
  }
  float e[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const bool in = B_COL ? n < N && k + i < K : k < K && n + i < N;
    e[i] = in ? B[offset + i] : 0.0f;
  }
  return make_float4(e[0], e[1], e[2], e[3]);
}

__device__ __forceinline__ void fma4(float4& acc, float a, const float4& b) {
  acc.x = fmaf(a, b.x, acc.x), acc.y = fmaf(a, b.y, acc.y);
  acc.z = fmaf(a, b.z, acc.z), acc.w = fmaf(a, b.w, acc.w);
}
__device__ __forceinline__ float dot4(const float4& a, const float4& b, float acc) {
  return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, acc))));
}

// The two ways a thread meets B. Each reads B in batches of NB float4s (a batch is the unit of
// the register double buffer) and multiplies a batch by the staged A chunk.
//
// B row-major (N contiguous): half-warp h = 2 * warp + lane / 16 takes k = h, h + 8, ... of each
// chunk; its lane owns columns n0 + 4 * (lane % 16) .. + 3. A is staged as as[k][ROWS] (the
// ROWS values of one k: broadcast float4s). A batch is NB such k.
template <int ROWS>
struct RowB {
  // float4s per batch (fewer with 16 rows: 64 accumulator registers), batches per chunk
  static constexpr int NB = ROWS >= 16 ? 4 : 8, BATCHES = KC / (8 * NB);
  static constexpr bool A_KR = true;               // as[k][ROWS]
  int slice;
  int64_t n;
  float4 acc[ROWS];
  __device__ __forceinline__ RowB(int64_t n0) {
    const int lane = threadIdx.x % 32;
    slice = 2 * (threadIdx.x / 32) + lane / 16;
    n = n0 + 4 * (lane % 16);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) acc[r] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  template <bool VEC>
  __device__ __forceinline__ void load(const float* B, int64_t ldb, int64_t K, int64_t N,
                                       int64_t n0, int64_t k0, int batch, float4 (&b)[NB]) const {
    const bool inside = k0 + KC <= K && n + 4 <= N;
#pragma unroll
    for (int u = 0; u < NB; ++u) {
      b[u] = load_b4<false, VEC>(B, ldb, K, N, k0 + 8 * (batch * NB + u) + slice, n, inside);
    }
  }
  __device__ __forceinline__ void compute(const float* as, int batch, const float4 (&b)[NB]) {
#pragma unroll
    for (int u = 0; u < NB; ++u) {
      const float* a = as + (8 * (batch * NB + u) + slice) * ROWS;
#pragma unroll
      for (int r = 0; r < ROWS; r += 4) {
        const float4 a4 = *reinterpret_cast<const float4*>(a + r);
        fma4(acc[r], a4.x, b[u]), fma4(acc[r + 1], a4.y, b[u]);
        fma4(acc[r + 2], a4.z, b[u]), fma4(acc[r + 3], a4.w, b[u]);
      }
    }
  }
  // The eight slices' partial tiles, summed in slice order into slice 0's.
  __device__ __forceinline__ void finish(float* part) {
    float* mine = part + slice * ROWS * RED_LD + 4 * (threadIdx.x % 16);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) *reinterpret_cast<float4*>(mine + r * RED_LD) = acc[r];
    __syncthreads();
    for (int e = threadIdx.x; e < ROWS * BN / 4; e += THREADS) {
      const int r = e / (BN / 4), col = 4 * (e % (BN / 4));
      float4 sum = *reinterpret_cast<const float4*>(part + r * RED_LD + col);
      for (int h = 1; h < 8; ++h) {
        const float4 v = *reinterpret_cast<const float4*>(part + (h * ROWS + r) * RED_LD + col);
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
      }
      *reinterpret_cast<float4*>(part + r * RED_LD + col) = sum;
    }
  }
};

// B column-major (K contiguous, a weight matrix W with B = W^T): warp w owns columns
// n0 + 16w .. + 15; lane group g = lane / 8 takes columns g, g + 4, g + 8, g + 12 of them, and
// lane q = lane % 8 the k quads q, q + 8, ... of each chunk (8 lanes read 128 contiguous bytes of
// a column). A is staged as as[ROWS][KC]. A batch is one k quad of the 4 columns (32 k).
template <int ROWS>
struct ColB {
  static constexpr int NB = 4, BATCHES = KC / 32;
  static constexpr bool A_KR = false;  // as[ROWS][KC]
  int g, q;
  float acc[ROWS][4];
  __device__ __forceinline__ ColB(int64_t) {
    g = (threadIdx.x % 32) / 8, q = threadIdx.x % 8;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.f;
  }
  template <bool VEC>
  __device__ __forceinline__ void load(const float* B, int64_t ldb, int64_t K, int64_t N,
                                       int64_t n0, int64_t k0, int batch, float4 (&b)[NB]) const {
    const bool inside = k0 + KC <= K && n0 + BN <= N;
    const int64_t n = n0 + 16 * (threadIdx.x / 32) + g;
#pragma unroll
    for (int j = 0; j < NB; ++j) {
      b[j] = load_b4<true, VEC>(B, ldb, K, N, k0 + 32 * batch + 4 * q, n + 4 * j, inside);
    }
  }
  __device__ __forceinline__ void compute(const float* as, int batch, const float4 (&b)[NB]) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const float4 a4 = *reinterpret_cast<const float4*>(as + r * KC + 32 * batch + 4 * q);
#pragma unroll
      for (int j = 0; j < NB; ++j) acc[r][j] = dot4(a4, b[j], acc[r][j]);
    }
  }
  // The 8 lanes of a column group hold partial sums over interleaved k quads: a butterfly
  // (fixed order) leaves the total in every lane; lane q = 0 writes it.
  __device__ __forceinline__ void finish(float* part) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int o = 1; o < 8; o *= 2) acc[r][j] += __shfl_xor_sync(0xffffffffu, acc[r][j], o);
    if (q == 0) {
      const int col = 16 * (threadIdx.x / 32) + g;
#pragma unroll
      for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int j = 0; j < 4; ++j) part[r * RED_LD + col + 4 * j] = acc[r][j];
    }
  }
};

template <int ROWS, bool B_COL>
struct Smem {
  // Two A chunks (the next one lands by cp.async while the current one is multiplied), then the
  // partial tiles: B row-major, one per half-warp K slice (8), summed into slice 0's; B
  // column-major, one. The partial tiles reuse the chunks' space once the loop is done.
  static constexpr int A_FLOATS = ROWS * KC;
  static constexpr int PART_FLOATS = (B_COL ? 1 : 8) * ROWS * RED_LD;
  float data[2 * A_FLOATS > PART_FLOATS ? 2 * A_FLOATS : PART_FLOATS];
};

// cp.async of the ROWS x KC chunk of A at (m0, k0) into `as` (layout: as[k][ROWS] when KR, else
// as[ROWS][KC]), zero past M and K. Consecutive threads walk A's contiguous dimension.
template <int ROWS, bool A_COL, bool KR>
__device__ __forceinline__ void stage_a(const sgemm::View& A, int64_t M, int64_t K, int64_t m0,
                                        int64_t k0, float* as) {
  for (int e = threadIdx.x; e < ROWS * KC; e += THREADS) {
    const int m = A_COL ? e % ROWS : e / KC, k = A_COL ? e / ROWS : e % KC;
    const bool in = m0 + m < M && k0 + k < K;
    const float* src = in ? A.p + (m0 + m) * A.rs + (k0 + k) * A.cs : A.p;
    ptx::cp_async_4(as + (KR ? k * ROWS + m : m * KC + k), src, in ? 4 : 0);
  }
}

template <int ROWS, bool A_COL, bool B_COL, bool VEC>
__global__ void __launch_bounds__(THREADS)
    sgemm_v10_split_k_kernel(sgemm::View A, const float* B, int64_t ldb, float* C, int64_t ldc,
                             int64_t M, int64_t N, int64_t K, float alpha, float beta) {
  using Path = std::conditional_t<B_COL, ColB<ROWS>, RowB<ROWS>>;
  constexpr int NB = Path::NB, BATCHES = Path::BATCHES, A_FLOATS = ROWS * KC;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* smem = reinterpret_cast<Smem<ROWS, B_COL>*>(smem_raw)->data;
  int64_t m0, n0;
  split_tile(M, ROWS, BN, m0, n0);
  int64_t chunk0, chunks;
  split_share((K + KC - 1) / KC, chunk0, chunks);
  Path path(n0);

  // Software pipeline over the block's batches: chunk c + 1 of A is copied (cp.async) while chunk
  // c is multiplied, and the B batch after the current one is in flight while the current one is
  // multiplied (two register buffers, their roles swapped every step).
  const int64_t total = chunks * BATCHES;
  auto step = [&](int64_t t, const float4 (&cur)[NB], float4 (&next)[NB]) {
    const int64_t c = t / BATCHES;
    const int batch = static_cast<int>(t % BATCHES);
    if (batch == 0) {
      if (c + 1 < chunks) {
        stage_a<ROWS, A_COL, Path::A_KR>(A, M, K, m0, (chunk0 + c + 1) * KC,
                                         smem + ((c + 1) % 2) * A_FLOATS);
      }
      ptx::cp_async_commit();
      ptx::cp_async_wait<1>();  // chunk c has landed (for this thread) ...
      __syncthreads();          // ... for every thread
    }
    if (t + 1 < total) {
      const int64_t nc = (t + 1) / BATCHES;
      path.template load<VEC>(B, ldb, K, N, n0, (chunk0 + nc) * KC,
                              static_cast<int>((t + 1) % BATCHES), next);
    }
    path.compute(smem + (c % 2) * A_FLOATS, batch, cur);
    if (batch == BATCHES - 1) __syncthreads();  // chunk c's buffer may be refilled
  };
  if (total > 0) {
    stage_a<ROWS, A_COL, Path::A_KR>(A, M, K, m0, chunk0 * KC, smem);
    ptx::cp_async_commit();
    float4 b0[NB], b1[NB];
    path.template load<VEC>(B, ldb, K, N, n0, chunk0 * KC, 0, b0);
    for (int64_t t = 0; t < total; t += 2) {
      step(t, b0, b1);
      if (t + 1 < total) step(t + 1, b1, b0);
    }
  }
  ptx::cp_async_wait<0>();
  __syncthreads();  // the chunks' space becomes the partial tiles
  path.finish(smem);
  cluster_reduce_store<ROWS, BN, RED_LD, THREADS, 0, VEC>(smem, C, ldc, M, N, m0, n0, alpha,
                                                          beta);
}

template <int ROWS>
void launch_rows(const GemmArgs& a) {
  const dim3 grid = split_grid(a.M, a.N, ROWS, BN, "sgemm_v10_split_k");
  const int device = active_device();
  const DeviceProps& props = device_props(device);
  // B and C decide the loads and stores (A is copied 4 bytes at a time in either kernel).
  const bool vec = sgemm::vec4_aligned(a, false);
  with_layouts(a, [&](auto a_col, auto b_col) {
    constexpr bool BC = decltype(b_col)::value;
    auto kernel = vec ? sgemm_v10_split_k_kernel<ROWS, decltype(a_col)::value, BC, true>
                      : sgemm_v10_split_k_kernel<ROWS, decltype(a_col)::value, BC, false>;
    constexpr int smem = int(sizeof(Smem<ROWS, BC>));
    set_smem(kernel, smem);
    // Three blocks fit an SM (registers, shared memory); at least two K chunks per block.
    const void* k = reinterpret_cast<const void*>(kernel);
    const int64_t chunks = ceil_div(a.K, KC), slots = 3 * int64_t(launch_sms(device));
    int split = split_count(k, THREADS, smem, grid.x, chunks, 2, 3, launch_sms(device));
    // More tiles than a wave of blocks holds (split_count answers 1 there): halves of K, so that
    // the last wave's blocks are half as long (448 tiles of 16 chunks on 132 SMs: 273 -> 229 us
    // at 16 rows; a model of the SMs' loads that preferred S = 1 or 4 at some tile counts lost to
    // a plain S = 2 in the measured sweep, benchmarks/NOTES.md).
    if (split == 1 && int64_t(grid.x) > slots && chunks >= 4 &&
        dev_split_override() == 0 && resident_split_clusters(k, 2, THREADS, smem) > 0) {
      split = 2;
    }
    launch_split(kernel, grid, THREADS, smem, a.stream, split, props.cc, "sgemm_v10_split_k",
                 sgemm::view_a(a), static_cast<const float*>(a.B), a.ldb,
                 static_cast<float*>(a.C), split_ldc(a), a.M, a.N, a.K, a.alpha, a.beta);
  });
}

}  // namespace

void sgemm_v10_split_k(const GemmArgs& a) {
  if (a.M <= 4) {
    launch_rows<4>(a);
  } else if (a.M <= 8) {
    launch_rows<8>(a);
  } else {
    launch_rows<16>(a);  // more than 16 rows: several row tiles, adjacent in the grid (B from L2)
  }
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v10_split_k, {10, 80, 0, 4, "simt", "ldg", "split_k",
    "sgemm_v09_cp_async", true,
    "4-, 8- or 16-row tiles, B streamed into registers once, K split across a cluster, partial "
    "tiles summed in rank order through distributed shared memory"})
