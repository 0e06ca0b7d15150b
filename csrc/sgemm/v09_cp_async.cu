// sgemm_v09_cp_async — double-buffered shared memory with cp.async (sm_80+).
//
// What changed since v08: two shared-memory buffers. While the block multiplies tile k out of one
// buffer, tile k+1 is already on its way into the other: an operand whose global layout matches
// its shared layout (a row-major B, a column-major A) is copied with cp.async (LDGSTS: global ->
// shared with no register round trip, zero-filled tails); an operand that must be transposed is
// loaded into registers before the math and stored after it. One __syncthreads per K-step.
// Why faster: global-memory latency hides behind a whole tile of FMAs instead of stalling the
// block, and half the barriers of v08; cp.async also frees the registers and issue slots of the
// staged copy for the matching operand.
// What limits it: the FMA pipe itself (64 FFMA per 4 LDS.128 per k) and register-bank conflicts
// the compiler cannot always avoid; a row-major A still goes through registers to be transposed.
// Shapes: any M, N, K >= 1 (zero-filled tails); 16-byte aligned operands; both layouts.
#include "registry.h"
#include "sgemm/warptile.cuh"

namespace fastgemm {
namespace {

namespace wt = sgemm::warptile;

// Copies one operand's BLOCK_K x BMN tile into a shared buffer: start() issues the global reads
// (cp.async straight to shared memory, or loads into registers), finish() completes them (stores
// the registers, transposing). Between the two the block does a tile's worth of math.
template <int BMN, int LDS, bool MN_CONTIG>
struct StagedCopy {
  using Loader = sgemm::TileLoader<wt::BLOCK_K, BMN, wt::THREADS, MN_CONTIG>;
  const Loader loader;
  float4 regs[MN_CONTIG ? 1 : Loader::CHUNKS];

  __device__ __forceinline__ StagedCopy(const sgemm::KmnView& v, int64_t x0) : loader(v, x0) {}

  template <bool UNCHECKED>
  __device__ __forceinline__ void start(const sgemm::KmnView& v, int64_t k0, int64_t x0, float* s) {
    if constexpr (MN_CONTIG) {
      loader.template copy_async<LDS, UNCHECKED>(v, k0, x0, s);
    } else {
      loader.template load<UNCHECKED>(v, k0, x0, regs);
    }
  }
  __device__ __forceinline__ void finish(float* s) {
    if constexpr (!MN_CONTIG) Loader::template store<LDS>(s, regs);
  }
};

// The K loop over double-buffered tiles. UNCHECKED (every tile of this block lies inside A and
// B) drops all bounds checks from the copies: fewer instructions and registers in the hot loop.
template <bool UNCHECKED, typename CopyA, typename CopyB>
__device__ __forceinline__ void main_loop(const sgemm::KmnView& A, const sgemm::KmnView& B,
                                          int64_t m0, int64_t n0, CopyA& copy_a, CopyB& copy_b,
                                          float* As, float* Bs, const wt::LanePos& pos,
                                          float (&acc)[wt::THREAD_M][wt::THREAD_N]) {
  constexpr int STAGE_A = wt::BLOCK_K * wt::LDS_A, STAGE_B = wt::BLOCK_K * wt::LDS_B;
  const int tiles = static_cast<int>(ceil_div(A.K, wt::BLOCK_K));
  // Prologue: tile 0 into buffer 0.
  copy_a.template start<UNCHECKED>(A, 0, m0, As);
  copy_b.template start<UNCHECKED>(B, 0, n0, Bs);
  fastgemm::ptx::cp_async_commit();
  copy_a.finish(As);
  copy_b.finish(Bs);
  fastgemm::ptx::cp_async_wait<0>();
  __syncthreads();

  for (int t = 0; t < tiles; ++t) {
    const int cur = t & 1, nxt = cur ^ 1;
    const bool more = t + 1 < tiles;
    // Buffer `nxt` was last read in step t-1, which every thread finished before the barrier
    // that ended that step: it is free to refill while `cur` is multiplied.
    if (more) {
      copy_a.template start<UNCHECKED>(A, (t + 1) * int64_t(wt::BLOCK_K), m0, As + nxt * STAGE_A);
      copy_b.template start<UNCHECKED>(B, (t + 1) * int64_t(wt::BLOCK_K), n0, Bs + nxt * STAGE_B);
    }
    fastgemm::ptx::cp_async_commit();
    wt::multiply(As + cur * STAGE_A, Bs + cur * STAGE_B, pos, acc);
    if (more) {
      copy_a.finish(As + nxt * STAGE_A);
      copy_b.finish(Bs + nxt * STAGE_B);
    }
    fastgemm::ptx::cp_async_wait<0>();
    __syncthreads();
  }
}

// Blocks per SM the register allocation must allow. Two cap a thread at 128 registers, which the
// sm_90 compiler meets without spilling unless both operands are K-contiguous (row-major A,
// column-major B: both staged through registers); older targets' compilers spill at that cap, so
// they (and that layout) get one block's worth of registers per SM.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FASTGEMM_V09_MIN_BLOCKS(a_col, b_col) ((!(a_col) && (b_col)) ? 1 : 2)
#else
#define FASTGEMM_V09_MIN_BLOCKS(a_col, b_col) 1
#endif

template <bool A_COL_MAJOR, bool B_COL_MAJOR>
__global__ void __launch_bounds__(wt::THREADS, FASTGEMM_V09_MIN_BLOCKS(A_COL_MAJOR, B_COL_MAJOR))
    sgemm_v09_cp_async_kernel(sgemm::KmnView A, sgemm::KmnView B, float* C, int64_t ldc,
                              float alpha, float beta) {
  __shared__ __align__(16) float As[2 * wt::BLOCK_K * wt::LDS_A];
  __shared__ __align__(16) float Bs[2 * wt::BLOCK_K * wt::LDS_B];
  const int64_t m0 = blockIdx.y * int64_t(wt::BLOCK_M), n0 = blockIdx.x * int64_t(wt::BLOCK_N);
  StagedCopy<wt::BLOCK_M, wt::LDS_A, A_COL_MAJOR> copy_a(A, m0);
  StagedCopy<wt::BLOCK_N, wt::LDS_B, !B_COL_MAJOR> copy_b(B, n0);
  const wt::LanePos pos;
  float acc[wt::THREAD_M][wt::THREAD_N] = {};
  const bool interior = m0 + wt::BLOCK_M <= A.MN && n0 + wt::BLOCK_N <= B.MN &&
                        A.K % wt::BLOCK_K == 0;
  if (interior) {
    main_loop<true>(A, B, m0, n0, copy_a, copy_b, As, Bs, pos, acc);
  } else {
    main_loop<false>(A, B, m0, n0, copy_a, copy_b, As, Bs, pos, acc);
  }
  wt::epilogue(C, ldc, A.MN, B.MN, m0, n0, pos, acc, alpha, beta);
}

}  // namespace

void sgemm_v09_cp_async(const GemmArgs& a) {
  wt::launch(a, "sgemm_v09_cp_async", [](auto a_col, auto b_col) {
    return sgemm_v09_cp_async_kernel<decltype(a_col)::value, decltype(b_col)::value>;
  });
}

}  // namespace fastgemm

FASTGEMM_REGISTER_SGEMM(sgemm_v09_cp_async, {9, 80, 0, 16, "simt", "cp_async", "registers",
    "sgemm_v08_warptile", false,
    "double-buffered shared memory: cp.async for the layout-matching operand, registers "
    "for the transposed one"})
