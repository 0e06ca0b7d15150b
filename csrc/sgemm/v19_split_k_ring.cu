// sgemm_v19_split_k_ring — v10 with B copied through a ring of shared-memory stages: a shape
// specialist for outputs of few rows (decode), a branch of v10.
//
// What changed since v10: v10 loads B from global memory straight into registers, two batches per
// thread (the one being multiplied and the next one in flight), so the bytes of B in flight per SM
// are bounded by registers; with 16-row tiles (64 accumulators per thread) a batch is half as
// long, and v10 reads B well below HBM bandwidth there. Here a block's 64-column panel of B
// and its ROWS rows of A are copied by cp.async into a ring of shared-memory stages, all but one
// in flight while the oldest is multiplied, whatever the accumulators take: a row-major B (N
// contiguous) as four stages of 32 rows of 256 bytes (bs[k][64], four blocks per SM), a
// column-major one (K contiguous, B = W^T of a weight W) as three stages of 64 columns of 256
// bytes (bs[n][KB + 4], three blocks per SM). One barrier per stage. A thread's copies keep their
// places for the whole loop (pointers moved on by a stage, checks only at the edges of the
// operands). Each thread owns 4 columns of the tile and one of 8 k slices (half-warps): per k quad
// of its slice it reads 4 x 4 values of B (four 16-byte shared loads, whatever B's layout) and the
// same quad of each of the ROWS rows of A (a broadcast within the half-warp), and does ROWS x 16
// FMAs. With a column-major B a lane owns columns c, c + 16, c + 32, c + 48, so that the 8 lanes
// of a shared-memory phase read 8 different bank quads. The 8 slices' partial tiles are summed in
// slice order in shared memory, and the z blocks of a tile (a thread-block cluster, each an even
// share of K's stages) in rank order through distributed shared memory (common/split_k.cuh), as
// in v10: the same bits on every call. The split S and the cluster scheduling policy come from
// the device's cluster capacity and v19's rates (split_rates; cluster_split_for, as v12's).
// Why it pays: the bytes in flight, not the FMAs, bound a streaming kernel at HBM speed (about
// bandwidth x latency, ~25 KiB per SM on an H100); the ring holds several times that on any tile
// height, so 16-row tiles stream B nearly as fast as 4-row ones, and the copies cost no
// registers.
// What limits it: per k quad, ROWS x 16 FMAs against ROWS + 4 shared loads and a share of the
// copies and the barrier: 16-row tiles stream B more slowly than 1-8-row ones (the SM's issue
// and barriers, not HBM, set their pace); a K-contiguous B comes 256 bytes of a column per
// stage, each column's next 256 bytes a stage later. Outputs
// of 17-32 rows take 32-row tiles (a thread's 32 x 4 outputs, 128 accumulators: two blocks per
// SM), bound by the SMs' FMA issue, not HBM; more than 32 rows take several 32-row tiles, the
// later ones reading B from L2. Rows past M are padding. The split needs clusters (sm_90+);
// older GPUs run one block per tile.
// Shapes: any M, N, K >= 1 (zero-filled tails: the copies read only the bytes inside the
// operand); both layouts of A and B; any operands aligned to their 4-byte elements (where B, C
// or a row-major A is not 16-byte aligned, the kernel compiled with 4-byte copies and stores runs
// on them in place; a column-major A is always copied 4 bytes at a time).
#include <type_traits>

#include "common/split_k.cuh"
#include "registry.h"
#include "sgemm/common.cuh"

namespace fastgemm {
namespace {

constexpr int THREADS = 128, BN = 64;  // block threads, tile columns
constexpr int SLICES = THREADS / 16;   // k slices (half-warps)
constexpr int RED_LD = BN + 4;         // floats per partial-tile row

// The ring by B's layout: KB values of K per stage, STAGES stages, BLOCKS per SM (two for 32-row
// tiles, whose 128 accumulators per thread take the registers of two more). A row-major B
// stages KB rows of 256 bytes; a column-major one 64 columns of KB x 4 bytes, which the wider
// stage keeps at 256 contiguous bytes per column (three stages of it fit three blocks per SM).
template <bool B_COL>
struct Geometry {
  static constexpr int KB = B_COL ? 64 : 32, STAGES = B_COL ? 3 : 4, BLOCKS = B_COL ? 3 : 4;
  template <int ROWS>
  static constexpr int blocks() { return ROWS > 16 ? 2 : BLOCKS; }
  static constexpr int KB_LD = KB + 4;  // floats per staged K-contiguous row (A; a column-major B)
  static constexpr int QUADS = KB / 4;  // k quads per stage (and 16-byte quads per staged row)
  static_assert(QUADS % SLICES == 0 && THREADS % QUADS == 0, "whole quads per slice and row");
};

// Floats of one stage (B, then A), and bytes of the whole dynamic shared memory: the ring, whose
// space the slices' partial tiles reuse once the loop is done.
template <int ROWS, bool B_COL>
struct Ring {
  using G = Geometry<B_COL>;
  static constexpr int B_FLOATS = B_COL ? BN * G::KB_LD : G::KB * BN;
  static constexpr int STAGE = B_FLOATS + ROWS * G::KB_LD;
  static constexpr int PART = SLICES * ROWS * RED_LD;
  static constexpr int BYTES = 4 * (G::STAGES * STAGE > PART ? G::STAGES * STAGE : PART);
};

// Four consecutive floats along the operand's contiguous dimension, `valid` (0..4) of them inside
// it: one 16-byte cp.async reading `valid` x 4 bytes (the rest zero-filled), or four 4-byte ones.
template <bool VEC>
__device__ __forceinline__ void copy_quad(float* dst, const float* src, int valid,
                                          const float* base) {
  if constexpr (VEC) {
    if (valid == 4) {  // whole: the form whose lanes share sectors (see ptx::cp_async_16)
      ptx::cp_async_16(dst, src);
    } else {
      ptx::cp_async_16(dst, valid > 0 ? src : base, 4 * valid);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      ptx::cp_async_4(dst + i, i < valid ? src + i : base, i < valid ? 4 : 0);
    }
  }
}

__device__ __forceinline__ int quad_valid(int left) {
  return left <= 0 ? 0 : left >= 4 ? 4 : left;
}
__device__ __forceinline__ int capped(int64_t v, int most) {
  return v < 0 ? 0 : v > most ? most : static_cast<int>(v);
}

// A thread's part of every stage's copies, B(k0 .. k0 + KB - 1, n0 .. n0 + BN - 1) and
// A(m0 .. m0 + ROWS - 1, same k). Its positions in the operands and in a stage are fixed for the
// block: found once; the stages are then copied in order, each moving the pointers on by KB of
// K (no 64-bit index arithmetic per stage), and the checks are 32-bit compares against what is
// left of the operands from the thread's positions.
template <int ROWS, bool A_COL, bool B_COL, bool VEC>
struct Copies {
  using G = Geometry<B_COL>;
  static constexpr int KB = G::KB, KB_LD = G::KB_LD, QUADS = G::QUADS;
  static constexpr int B_PER = KB * BN / 4 / THREADS;  // 16-byte quads of B per thread
  static constexpr int B_STEP = THREADS / (B_COL ? QUADS : BN / 4);  // columns / rows between them
  static constexpr int A_ROWS = THREADS / QUADS;  // row-major A: rows between a thread's quads
  static constexpr int A_PER = A_COL ? ROWS * KB / THREADS : (ROWS + A_ROWS - 1) / A_ROWS;
  static_assert(B_PER * THREADS * 4 == KB * BN && THREADS % ROWS == 0, "whole quads per thread");
  const float* b;  // B at the thread's first quad of the next stage
  const float* a;  // A at the thread's first element or quad of the next stage
  int b_lim;       // B row-major: values of the thread's quad inside N; column-major: columns
                   // inside from the thread's first (both capped at BN)
  int a_lim;       // rows of A inside M from the thread's first (capped at ROWS)
  int ob, oa;      // the thread's places in a stage
  __device__ __forceinline__ Copies(const sgemm::View& A, const float* B, int64_t ldb, int64_t M,
                                    int64_t N, int64_t m0, int64_t n0, int64_t k_first) {
    const int t = threadIdx.x;
    if constexpr (B_COL) {  // quad t % QUADS of columns t / QUADS + B_STEP i
      b = B + (n0 + t / QUADS) * ldb + k_first + 4 * (t % QUADS);
      b_lim = capped(N - n0 - t / QUADS, BN);
      ob = (t / QUADS) * KB_LD + 4 * (t % QUADS);
    } else {  // quad t % 16 of rows t / 16 + B_STEP i
      b = B + (k_first + t / 16) * ldb + n0 + 4 * (t % 16);
      b_lim = capped(N - n0 - 4 * (t % 16), BN);
      ob = (t / 16) * BN + 4 * (t % 16);
    }
    if constexpr (A_COL) {  // element by element, rows fastest: row t % ROWS, k = t / ROWS + STEP i
      a = A.p + m0 + t % ROWS + (k_first + t / ROWS) * A.cs;
      a_lim = capped(M - m0 - t % ROWS, ROWS);
      oa = (t % ROWS) * KB_LD + t / ROWS;
    } else {  // quad t % QUADS of rows t / QUADS + A_ROWS i
      a = A.p + (m0 + t / QUADS) * A.rs + k_first + 4 * (t % QUADS);
      a_lim = capped(M - m0 - t / QUADS, ROWS);
      oa = (t / QUADS) * KB_LD + 4 * (t % QUADS);
    }
  }
  // Copies the stage whose first k is k0 into `stage`: where all of K's values are inside and
  // all the thread's quads of B inside N, every copy of B is whole (no per-copy checks).
  __device__ __forceinline__ void load(const sgemm::View& A, const float* B, int64_t ldb, int64_t K,
                                       int64_t k0, float* stage) {
    const int t = threadIdx.x;
    const int left = K - k0 > KB ? KB : static_cast<int>(K - k0);  // values of k inside
    const int64_t b_step = B_STEP * ldb;  // between the thread's quads of B
    float* bs = stage + ob;
    if (left == KB && b_lim > (B_COL ? B_STEP * (B_PER - 1) : 3)) {
#pragma unroll
      for (int i = 0; i < B_PER; ++i) {
        copy_quad<VEC>(bs + i * B_STEP * (B_COL ? KB_LD : BN), b + i * b_step, 4, B);
      }
    } else {
#pragma unroll
      for (int i = 0; i < B_PER; ++i) {
        const int valid = B_COL ? (B_STEP * i < b_lim ? quad_valid(left - 4 * (t % QUADS)) : 0)
                                : (t / 16 + B_STEP * i < left ? quad_valid(b_lim) : 0);
        copy_quad<VEC>(bs + i * B_STEP * (B_COL ? KB_LD : BN), valid > 0 ? b + i * b_step : B,
                       valid, B);
      }
    }
    float* as = stage + Ring<ROWS, B_COL>::B_FLOATS + oa;
    if constexpr (A_COL) {
      constexpr int STEP = THREADS / ROWS;  // k between a thread's elements
#pragma unroll
      for (int i = 0; i < A_PER; ++i) {
        const bool in = a_lim > 0 && t / ROWS + STEP * i < left;
        ptx::cp_async_4(as + STEP * i, in ? a + STEP * i * A.cs : A.p, in ? 4 : 0);
      }
    } else {
      const int valid_k = quad_valid(left - 4 * (t % QUADS));
#pragma unroll
      for (int i = 0; i < A_PER; ++i) {
        if (t / QUADS + A_ROWS * i < ROWS) {
          const int valid = A_ROWS * i < a_lim ? valid_k : 0;
          copy_quad<VEC>(as + A_ROWS * i * KB_LD, valid > 0 ? a + A_ROWS * i * A.rs : A.p, valid,
                         A.p);
        }
      }
    }
    b += B_COL ? KB : KB * ldb, a += A_COL ? KB * A.cs : KB;
  }
};

template <int ROWS, bool A_COL, bool B_COL, bool VEC>
__global__ void __launch_bounds__(THREADS, Geometry<B_COL>::template blocks<ROWS>())
    sgemm_v19_split_k_ring_kernel(sgemm::View A, const float* B, int64_t ldb, float* C,
                                  int64_t ldc, int64_t M, int64_t N, int64_t K, float alpha,
                                  float beta) {
  using G = Geometry<B_COL>;
  using R = Ring<ROWS, B_COL>;
  constexpr int KB = G::KB, KB_LD = G::KB_LD, STAGES = G::STAGES;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  int64_t m0, n0;
  split_tile(M, ROWS, BN, m0, n0);
  int64_t s0, stages;
  split_share((K + KB - 1) / KB, s0, stages);
  const int lane = threadIdx.x % 32, c = lane % 16, slice = 2 * (threadIdx.x / 32) + lane / 16;

  Copies<ROWS, A_COL, B_COL, VEC> copies(A, B, ldb, M, N, m0, n0, s0 * KB);
  float acc[ROWS][4];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.f;

  // The ring: stages s0 .. s0 + STAGES - 2 in flight before the loop; iteration i waits for
  // stage i (at most STAGES - 2 younger groups pending), refills the slot stage i - 1 used (every
  // thread is past it: the barrier), and multiplies stage i. One commit per iteration, empty or
  // not, keeps the group count in step.
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < stages) copies.load(A, B, ldb, K, (s0 + s) * KB, smem + s * R::STAGE);
    ptx::cp_async_commit();
  }
  for (int64_t i = 0; i < stages; ++i) {
    ptx::cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int64_t next = i + STAGES - 1;
    if (next < stages) {
      copies.load(A, B, ldb, K, (s0 + next) * KB, smem + (next % STAGES) * R::STAGE);
    }
    ptx::cp_async_commit();

    const float* bs = smem + (i % STAGES) * R::STAGE;
    const float* as = bs + R::B_FLOATS;
#pragma unroll
    for (int qi = 0; qi < G::QUADS / SLICES; ++qi) {
      const int q = slice + SLICES * qi;  // the slice's k quads of the stage
      float b[4][4];                      // b[kk][j]: B(4 q + kk, the thread's column j)
      if constexpr (B_COL) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float4 v = *reinterpret_cast<const float4*>(bs + (c + 16 * j) * KB_LD + 4 * q);
          b[0][j] = v.x, b[1][j] = v.y, b[2][j] = v.z, b[3][j] = v.w;
        }
      } else {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const float4 v = *reinterpret_cast<const float4*>(bs + (4 * q + kk) * BN + 4 * c);
          b[kk][0] = v.x, b[kk][1] = v.y, b[kk][2] = v.z, b[kk][3] = v.w;
        }
      }
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float4 a = *reinterpret_cast<const float4*>(as + r * KB_LD + 4 * q);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          acc[r][j] = fmaf(a.w, b[3][j],
                           fmaf(a.z, b[2][j], fmaf(a.y, b[1][j], fmaf(a.x, b[0][j], acc[r][j]))));
        }
      }
    }
  }
  ptx::cp_async_wait<0>();
  __syncthreads();  // the ring's space becomes the slices' partial tiles

  // Slice s's partial tile at smem + s * ROWS * RED_LD; summed in slice order into slice 0's.
  float* mine = smem + slice * ROWS * RED_LD;
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    if constexpr (B_COL) {
#pragma unroll
      for (int j = 0; j < 4; ++j) mine[r * RED_LD + c + 16 * j] = acc[r][j];
    } else {
      *reinterpret_cast<float4*>(mine + r * RED_LD + 4 * c) =
          make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
    }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < ROWS * BN / 4; e += THREADS) {
    float* first = smem + (e / (BN / 4)) * RED_LD + 4 * (e % (BN / 4));
    float4 sum = *reinterpret_cast<const float4*>(first);
    for (int s = 1; s < SLICES; ++s) {
      const float4 v = *reinterpret_cast<const float4*>(first + s * ROWS * RED_LD);
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
    *reinterpret_cast<float4*>(first) = sum;
  }
  cluster_reduce_store<ROWS, BN, RED_LD, THREADS, 0, VEC>(smem, C, ldc, M, N, m0, n0, alpha,
                                                          beta);
}

// An SM's throughput at 1, 2, ... blocks of v19, relative to one block alone (the split model's
// rates, common/split_model.h), fitted to v19 timed at every S on 17 shapes (H100,
// benchmarks/NOTES.md). The tiles of at most 16 rows stream B: a second block on an SM adds a
// quarter (a block alone keeps too few bytes in flight for the SM's share of HBM bandwidth), a
// third or fourth nothing. The 32-row tiles are bound by FMA issue: a second block adds a little.
template <int ROWS, bool B_COL>
constexpr SplitRates split_rates() {
  constexpr int per_sm = Geometry<B_COL>::template blocks<ROWS>();
  if constexpr (per_sm == 2) {
    return SplitRates{2, {1.0, 1.18}};
  } else {
    return SplitRates{per_sm, {1.0, 1.25, 1.25, 1.25}};
  }
}

template <int ROWS>
void launch_rows(const GemmArgs& a) {
  const dim3 grid = split_grid(a.M, a.N, ROWS, BN, "sgemm_v19_split_k_ring");
  const int device = active_device();
  const DeviceProps& props = device_props(device);
  // B, C and a row-major A decide the copies and stores (a column-major A is copied 4 bytes at a
  // time in either kernel).
  const bool vec = sgemm::vec4_aligned(a, !a.a_col_major);
  with_layouts(a, [&](auto a_col, auto b_col) {
    constexpr bool AC = decltype(a_col)::value, BC = decltype(b_col)::value;
    auto kernel = vec ? sgemm_v19_split_k_ring_kernel<ROWS, AC, BC, true>
                      : sgemm_v19_split_k_ring_kernel<ROWS, AC, BC, false>;
    constexpr int smem = Ring<ROWS, BC>::BYTES;
    set_smem(kernel, smem);
    // S from the device's cluster capacity and split_rates; at least 256 of K per block.
    const ClusterChoice split =
        cluster_split_for(reinterpret_cast<const void*>(kernel), THREADS, smem,
                          split_rates<ROWS, BC>(), grid.x, ceil_div(a.K, Geometry<BC>::KB),
                          256 / Geometry<BC>::KB, 0.25);
    launch_split(kernel, grid, THREADS, smem, a.stream, split, props.cc, "sgemm_v19_split_k_ring",
                 sgemm::view_a(a), static_cast<const float*>(a.B), a.ldb,
                 static_cast<float*>(a.C), split_ldc(a), a.M, a.N, a.K, a.alpha, a.beta);
  });
}

}  // namespace

int sgemm_v19_split_k_ring_smem() { return Ring<32, true>::BYTES; }  // the largest

void sgemm_v19_split_k_ring(const GemmArgs& a) {
  // Tiles of 4, 8, 16 or 32 rows; more than 32 rows run several 32-row tiles, adjacent in the
  // grid (the later ones read B from L2).
  if (a.M <= 4) {
    launch_rows<4>(a);
  } else if (a.M <= 8) {
    launch_rows<8>(a);
  } else if (a.M <= 16) {
    launch_rows<16>(a);
  } else {
    launch_rows<32>(a);
  }
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v19_split_k_ring, {19, 80, 0, 4, "simt", "cp_async", "split_k",
    "sgemm_v10_split_k", true,
    "v10 with B and A copied by cp.async through a ring of shared-memory stages (bytes in "
    "flight independent of the accumulators), 4-, 8-, 16- or 32-row tiles, K split across a "
    "cluster"})
