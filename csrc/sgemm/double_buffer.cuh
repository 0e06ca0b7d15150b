// sgemm/double_buffer.cuh — v09's K loop: double-buffered shared tiles of the warp-tiled block
// (sgemm/warptile.cuh), filled by cp.async for the operand whose layout matches its shared tile and
// through registers (transposed) for the other, or by 4-byte cp.async into its transposed place
// where that operand is aligned only to its elements. v09 runs it over all of K; v11, v12 and v16
// over their share.
//
// Contract: multiply_tile runs the block's two copies and main_loop over the 16-deep k-tiles of
// [k0, k_end) of the views A and B (tile origin m0 / n0 along MN; reads past K are zero-filled)
// on a block of warp tiling WT (warptile::Tile), then hands the accumulators to the caller's
// finish(pos, acc). It uses As and Bs (two buffers each) and the loop ends at a block barrier, so
// finish may reuse that shared memory at once.
#pragma once
#include "sgemm/warptile.cuh"

// Blocks per SM the register allocation must allow. Two cap a thread at 128 registers, which the
// sm_90 compiler meets without spilling unless both operands are K-contiguous (row-major A,
// column-major B: both staged through registers where they are 16-byte aligned; the 4-byte
// instantiations copy them by cp.async but keep the layout's cap); older targets' compilers spill
// at that cap, so they (and that layout) get one block's worth of registers per SM.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FASTGEMM_DOUBLE_BUFFER_MIN_BLOCKS(a_col, b_col) ((!(a_col) && (b_col)) ? 1 : 2)
#else
#define FASTGEMM_DOUBLE_BUFFER_MIN_BLOCKS(a_col, b_col) 1
#endif

namespace fastgemm::sgemm::double_buffer {

// Copies one operand's BLOCK_K x BMN tile into a shared buffer: start() issues the global reads
// (cp.async straight to shared memory, or 16-byte loads of a K-contiguous tile into registers),
// finish() completes them (stores the registers, transposing). Between the two the block does a
// tile's worth of math.
template <typename WT, int BMN, int LDS, bool MN_CONTIG, bool VEC>
struct StagedCopy {
  using Loader = TileLoader<WT::BLOCK_K, BMN, WT::THREADS, MN_CONTIG, VEC>;
  const Loader loader;
  float4 regs[MN_CONTIG ? 1 : Loader::CHUNKS];

  __device__ __forceinline__ StagedCopy(const KmnView& v, int64_t x0) : loader(v, x0) {}

  template <bool UNCHECKED>
  __device__ __forceinline__ void start(const KmnView& v, int64_t k0, int64_t x0, float* s) {
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
// A K-contiguous operand aligned only to its 4-byte elements: 4-byte loads either way, so
// cp.async copies them straight into their transposed place (TransposingCopy), with no registers
// and no shared stores. Through registers (four 4-byte loads per chunk, transposed by scalar
// stores) the loads of a warp touched 16 rows each and the loop stalled on them (ncu:
// short_scoreboard and mio_throttle; benchmarks/NOTES.md).
template <typename WT, int BMN, int LDS>
struct StagedCopy<WT, BMN, LDS, false, false> {
  static_assert(WT::BLOCK_K == 16, "TransposingCopy copies 16-deep tiles");
  const TransposingCopy<BMN, LDS, WT::THREADS> copy;

  __device__ __forceinline__ StagedCopy(const KmnView& v, int64_t x0) : copy(v, x0) {}

  template <bool UNCHECKED>
  __device__ __forceinline__ void start(const KmnView& v, int64_t k0, int64_t, float* s) {
    copy.template copy<UNCHECKED>(v, k0, s);
  }
  __device__ __forceinline__ void finish(float*) {}
};

// The K loop over double-buffered tiles. UNCHECKED (every tile of this block lies inside A and
// B) drops all bounds checks from the copies: fewer instructions and registers in the hot loop.
template <typename WT, bool UNCHECKED, typename CopyA, typename CopyB>
__device__ __forceinline__ void main_loop(const KmnView& A, const KmnView& B, int64_t m0,
                                          int64_t n0, int64_t k0, int tiles, CopyA& copy_a,
                                          CopyB& copy_b, float* As, float* Bs,
                                          const typename WT::LanePos& pos,
                                          float (&acc)[WT::THREAD_M][WT::THREAD_N]) {
  constexpr int STAGE_A = WT::BLOCK_K * WT::LDS_A, STAGE_B = WT::BLOCK_K * WT::LDS_B;
  // Prologue: tile 0 into buffer 0.
  copy_a.template start<UNCHECKED>(A, k0, m0, As);
  copy_b.template start<UNCHECKED>(B, k0, n0, Bs);
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
      copy_a.template start<UNCHECKED>(A, k0 + (t + 1) * int64_t(WT::BLOCK_K), m0,
                                       As + nxt * STAGE_A);
      copy_b.template start<UNCHECKED>(B, k0 + (t + 1) * int64_t(WT::BLOCK_K), n0,
                                       Bs + nxt * STAGE_B);
    }
    fastgemm::ptx::cp_async_commit();
    WT::multiply(As + cur * STAGE_A, Bs + cur * STAGE_B, pos, acc);
    if (more) {
      copy_a.finish(As + nxt * STAGE_A);
      copy_b.finish(Bs + nxt * STAGE_B);
    }
    fastgemm::ptx::cp_async_wait<0>();
    __syncthreads();
  }
}

// The block's tile product over k in [k0, k_end) (k0 a multiple of BLOCK_K), handed to
// finish(pos, acc): the two copies (cp.async for the operand whose KMN view is MN-contiguous), the
// accumulators, and the loop without bounds checks when every tile of the block lies inside A and
// B (v09 moves its edge tiles inside: warptile::move_inside). VEC: 16-byte copies (A and B
// 16-byte aligned); otherwise 4-byte ones (TileLoader). A ragged K (K % 16 != 0) still sends
// every block to the checked loop: laying its partial k-tile first (as v17 does) or running it
// alone costs v09 and v16 spills at their 128-register cap (benchmarks/NOTES.md). VEC_A: A's
// copies alone (VEC false, a rung's A16 instantiation: with_kernel).
template <typename WT, bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC = true, bool VEC_A = VEC,
          typename Finish>
__device__ __forceinline__ void multiply_tile(const KmnView& A, const KmnView& B, int64_t m0,
                                              int64_t n0, int64_t k0, int64_t k_end,
                                              float* As, float* Bs, Finish&& finish) {
  StagedCopy<WT, WT::BLOCK_M, WT::LDS_A, A_COL_MAJOR, VEC_A> copy_a(A, m0);
  StagedCopy<WT, WT::BLOCK_N, WT::LDS_B, !B_COL_MAJOR, VEC> copy_b(B, n0);
  const typename WT::LanePos pos;
  float acc[WT::THREAD_M][WT::THREAD_N] = {};
  const bool interior = m0 + WT::BLOCK_M <= A.MN && n0 + WT::BLOCK_N <= B.MN &&
                        A.K % WT::BLOCK_K == 0;
  const int tiles = static_cast<int>(ceil_div(k_end - k0, WT::BLOCK_K));
  if (interior) {
    main_loop<WT, true>(A, B, m0, n0, k0, tiles, copy_a, copy_b, As, Bs, pos, acc);
  } else {
    main_loop<WT, false>(A, B, m0, n0, k0, tiles, copy_a, copy_b, As, Bs, pos, acc);
  }
  finish(pos, acc);
}

}  // namespace fastgemm::sgemm::double_buffer
