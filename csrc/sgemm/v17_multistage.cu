// sgemm_v17_multistage — a three-stage cp.async pipeline on 128x128 tiles of four warps, 16x8
// outputs per lane, fragments read one k ahead.
//
// What changed since v09:
// - Four warps per 128x128 tile, each a 128x32 warp tile in which a lane owns 16x8 outputs
//   (warptile::Tile<1, 4, 128>): per k a lane reads 6 float4s of shared memory for 128 FFMA,
//   where v09's 8x8 lanes read 4 for 64.
// - Both operands reach shared memory by cp.async alone. A K-contiguous tile (row-major A,
//   column-major B) is copied 4 bytes at a time straight into its transposed K-major place:
//   eight lanes take eight k of one row (a 32-byte sector), so a warp reads four whole sectors
//   and writes 32 different banks. v09 staged that operand through registers (loads before the
//   math, transposing stores after it).
// - Three stages: the copies of k-tile t + 3 are issued while tile t is multiplied, one barrier
//   per k-tile.
// - A lane's fragments for k + 1 are read while it multiplies k. The barrier comes after the
//   loads of a tile's last k, so the next tile's first fragments and copies are issued behind
//   that k's FFMAs.
// Why it pays: in v09 the compiler placed each k's shared loads just before their FFMAs and the
// next tile's copies in front of the first k, so a warp stalled on them (ncu: short and long
// scoreboard, dispatch stalls). Here the loads are a k ahead, and two blocks per SM (eight
// warps, up to 255 registers a thread) keep the FMA pipe fed.
// What limits it: a 2,200-instruction k-tile loop (instruction fetch stalls), dispatch stalls on
// operand reads, and a 16-k tile's barrier. cuBLAS's SIMT kernel on the same GPUs issues from
// register allocations tuned by hand, which a CUDA C++ kernel cannot control.
// Shapes: any M, N, K >= 1 (edge tiles check each copy and zero-fill the rest); both layouts; any
// operands aligned to their 4-byte elements (the 4-byte copies of a K-contiguous operand need
// nothing more; an MN-contiguous operand and C use 16-byte accesses where aligned, 4-byte ones
// otherwise, as v09). 50 KiB of shared memory a block (two blocks per SM on sm_80 and sm_90; one
// on sm_86 and sm_89).
#include "registry.h"
#include "sgemm/warptile.cuh"

namespace fastgemm {
namespace {

using wt = sgemm::warptile::Tile<1, 4, 128>;  // 128x128, four warps, 16x8 outputs per lane
constexpr int STAGES = 3;
constexpr int STAGE_A = wt::BLOCK_K * wt::LDS_A, STAGE_B = wt::BLOCK_K * wt::LDS_B;
constexpr int SMEM = STAGES * (STAGE_A + STAGE_B) * int(sizeof(float));

// A K-contiguous BMN x 16 tile copied by 4-byte cp.async into the K-major shared tile s[k][x]
// (row stride LD): thread t takes k = t % 8 and k + 8 of rows t / 8 + i * THREADS / 8.
template <int BMN, int LD>
struct TransposingCopy {
  static_assert(wt::BLOCK_K == 16, "two 8-k halves per row");
  static constexpr int ROW_STEP = wt::THREADS / 8, ROWS = BMN / ROW_STEP;
  static_assert(BMN % ROW_STEP == 0, "rows split evenly over the threads");
  const float* first;  // row t / 8, k = t % 8 at k0 = 0
  int64_t step;        // ROW_STEP rows
  int64_t row;         // t / 8 inside the operand, from x0
  int k_lo, s_off;

  __device__ __forceinline__ TransposingCopy(const sgemm::KmnView& v, int64_t x0) {
    const int t = threadIdx.x;
    k_lo = t % 8;
    row = x0 + t / 8;
    first = v.p + row * v.ld + k_lo;
    step = int64_t(ROW_STEP) * v.ld;
    s_off = k_lo * LD + t / 8;
  }

  template <bool UNCHECKED>
  __device__ __forceinline__ void copy(const sgemm::KmnView& v, int64_t k0, float* s) const {
    const float* p = first + k0;
    const bool lo_in = k0 + k_lo < v.K, hi_in = k0 + k_lo + 8 < v.K;
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
      float* d = s + s_off + i * ROW_STEP;
      if (UNCHECKED) {
        ptx::cp_async_4(d, p, 4);
        ptx::cp_async_4(d + 8 * LD, p + 8, 4);
      } else {
        const bool r_in = row + i * ROW_STEP < v.MN;  // any valid address when nothing is read
        ptx::cp_async_4(d, r_in && lo_in ? p : v.p, r_in && lo_in ? 4 : 0);
        ptx::cp_async_4(d + 8 * LD, r_in && hi_in ? p + 8 : v.p, r_in && hi_in ? 4 : 0);
      }
      p += step;
    }
  }
};

// One operand's copy: 16-byte (or 4-byte, !VEC) cp.async of an MN-contiguous tile as v09's, or
// the transposing copy of a K-contiguous one.
template <int BMN, int LD, bool MN_CONTIG, bool VEC>
struct OperandCopy {
  sgemm::TileLoader<wt::BLOCK_K, BMN, wt::THREADS, true, VEC> loader;
  __device__ __forceinline__ OperandCopy(const sgemm::KmnView& v, int64_t x0) : loader(v, x0) {}
  template <bool UNCHECKED>
  __device__ __forceinline__ void copy(const sgemm::KmnView& v, int64_t k0, int64_t x0,
                                       float* s) const {
    loader.template copy_async<LD, UNCHECKED>(v, k0, x0, s);
  }
};
template <int BMN, int LD, bool VEC>
struct OperandCopy<BMN, LD, false, VEC> {
  TransposingCopy<BMN, LD> t;
  __device__ __forceinline__ OperandCopy(const sgemm::KmnView& v, int64_t x0) : t(v, x0) {}
  template <bool UNCHECKED>
  __device__ __forceinline__ void copy(const sgemm::KmnView& v, int64_t k0, int64_t,
                                       float* s) const {
    t.template copy<UNCHECKED>(v, k0, s);
  }
};

// This lane's A and B fragments of row k of a shared stage.
__device__ __forceinline__ void read_fragments(const float* As, const float* Bs, int k,
                                               const wt::LanePos& pos, float (&a)[wt::THREAD_M],
                                               float (&b)[wt::THREAD_N]) {
#pragma unroll
  for (int p = 0; p < wt::ITER_M; ++p)
    *reinterpret_cast<float4*>(&a[p * wt::PATCH]) =
        *reinterpret_cast<const float4*>(&As[k * wt::LDS_A + pos.row + p * wt::SUB_M]);
#pragma unroll
  for (int q = 0; q < wt::ITER_N; ++q)
    *reinterpret_cast<float4*>(&b[q * wt::PATCH]) =
        *reinterpret_cast<const float4*>(&Bs[k * wt::LDS_B + pos.col + q * wt::SUB_N]);
}

// The k-tile loop. Stage s holds k-tiles s, s + 3, ...; tiles 0-2 are in flight before it
// starts. In tile t, after the fragment loads of its last k, the block waits for tile t + 1
// (cp.async groups complete in order), meets at the barrier (every lane is done reading tile
// t's stage, so tile t + 3 may be copied into it), reads tile t + 1's first fragments, issues
// tile t + 3's copies and only then multiplies tile t's last k.
template <bool UNCHECKED, typename CopyA, typename CopyB>
__device__ __forceinline__ void main_loop(const sgemm::KmnView& A, const sgemm::KmnView& B,
                                          int64_t m0, int64_t n0, const CopyA& copy_a,
                                          const CopyB& copy_b, float* As, float* Bs,
                                          const wt::LanePos& pos,
                                          float (&acc)[wt::THREAD_M][wt::THREAD_N]) {
  constexpr int BK = wt::BLOCK_K;
  const int tiles = static_cast<int>(ceil_div(A.K, BK));
#pragma unroll
  for (int s = 0; s < STAGES; ++s) {
    if (s < tiles) {
      copy_a.template copy<UNCHECKED>(A, s * int64_t(BK), m0, As + s * STAGE_A);
      copy_b.template copy<UNCHECKED>(B, s * int64_t(BK), n0, Bs + s * STAGE_B);
    }
    ptx::cp_async_commit();  // empty groups keep the count: tile t is always group t
  }
  ptx::cp_async_wait<STAGES - 1>();
  __syncthreads();
  float a[2][wt::THREAD_M], b[2][wt::THREAD_N];
  read_fragments(As, Bs, 0, pos, a[0], b[0]);
  int cur = 0;
  for (int t = 0; t < tiles; ++t) {
    const int next = cur + 1 == STAGES ? 0 : cur + 1;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      if (k + 1 < BK) {
        read_fragments(As + cur * STAGE_A, Bs + cur * STAGE_B, k + 1, pos, a[(k + 1) & 1],
                       b[(k + 1) & 1]);
      } else {
        ptx::cp_async_wait<STAGES - 2>();
        __syncthreads();
        read_fragments(As + next * STAGE_A, Bs + next * STAGE_B, 0, pos, a[0], b[0]);
        if (t + STAGES < tiles) {
          const int64_t k0 = (t + STAGES) * int64_t(BK);
          copy_a.template copy<UNCHECKED>(A, k0, m0, As + cur * STAGE_A);
          copy_b.template copy<UNCHECKED>(B, k0, n0, Bs + cur * STAGE_B);
        }
        ptx::cp_async_commit();
      }
#pragma unroll
      for (int i = 0; i < wt::THREAD_M; ++i)
#pragma unroll
        for (int j = 0; j < wt::THREAD_N; ++j)
          acc[i][j] = fmaf(a[k & 1][i], b[k & 1][j], acc[i][j]);
    }
    cur = next;
  }
  ptx::cp_async_wait<0>();  // nothing may still be landing in shared memory when the block exits
}

template <bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC>
__global__ void __launch_bounds__(wt::THREADS, 2)
    sgemm_v17_multistage_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                                float alpha, float beta) {
  extern __shared__ __align__(16) float smem[];
  float* As = smem;
  float* Bs = smem + STAGES * STAGE_A;
  const int64_t m0 = blockIdx.y * int64_t(wt::BLOCK_M), n0 = blockIdx.x * int64_t(wt::BLOCK_N);
  const OperandCopy<wt::BLOCK_M, wt::LDS_A, A_COL_MAJOR, VEC> copy_a(A, m0);
  const OperandCopy<wt::BLOCK_N, wt::LDS_B, !B_COL_MAJOR, VEC> copy_b(B, n0);
  const wt::LanePos pos;
  float acc[wt::THREAD_M][wt::THREAD_N] = {};
  if (m0 + wt::BLOCK_M <= A.MN && n0 + wt::BLOCK_N <= B.MN && A.K % wt::BLOCK_K == 0) {
    main_loop<true>(A, B, m0, n0, copy_a, copy_b, As, Bs, pos, acc);
  } else {
    main_loop<false>(A, B, m0, n0, copy_a, copy_b, As, Bs, pos, acc);
  }
  wt::epilogue<VEC>(C, ldc, A.MN, B.MN, m0, n0, pos, acc, alpha, beta);
}

}  // namespace

int sgemm_v17_multistage_smem() { return SMEM; }

void sgemm_v17_multistage(const GemmArgs& a) {
  const char* name = "sgemm_v17_multistage";
  const dim3 grid = tile_grid(a, wt::BLOCK_M, wt::BLOCK_N, name);
  sgemm::with_kernel(
      a,
      [](auto a_col, auto b_col, auto vec) {
        return sgemm_v17_multistage_kernel<decltype(a_col)::value, decltype(b_col)::value,
                                           decltype(vec)::value>;
      },
      [&](auto kernel) {
        set_smem(kernel, SMEM);
        fastgemm::launch(kernel, Launch{grid, dim3(wt::THREADS), SMEM, a.stream}, name,
                         sgemm::kmn_a(a), sgemm::kmn_b(a), static_cast<float*>(a.C), a.ldc,
                         a.alpha, a.beta);
      });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM_SMEM(sgemm_v17_multistage, {17, 80, 0, 4, "simt", "cp_async",
    "registers", "sgemm_v09_cp_async", true,
    "128x128 tiles of four warps (16x8 outputs a lane), three cp.async stages, K-contiguous "
    "operands copied 4 bytes at a time into their transposed place, fragments read a k ahead"})
