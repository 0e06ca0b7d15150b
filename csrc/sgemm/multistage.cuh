// sgemm/multistage.cuh — the k loop of rung v17: a three-stage cp.async pipeline on 128x128 tiles
// of four warps, 16x8 outputs per lane, fragments read a k ahead (see v17_multistage.cu for what
// it changes and why).
//
// Contract: multiply_tile runs the block's copies and main_loop over the 16-deep k-tiles
// [k0, k_end) of K rounded up to whole k-tiles (k0 a multiple of 16, k_end one too or K itself;
// a ragged K's partial k-tile is laid first, see multiply_tile) into its 16x8 accumulators, then
// hands them to finish(pos, acc), with no copy in flight. It uses SMEM bytes of shared memory
// from `smem`, which other lanes may still be reading when finish starts: a finish that writes
// shared memory must __syncthreads() first (v17's epilogue writes from registers).
#pragma once
#include "common/split_model.h"
#include "sgemm/warptile.cuh"

namespace fastgemm::sgemm::multistage {

using Tile = warptile::Tile<1, 4, 128>;  // v17: 128x128, four warps, 16x8 outputs per lane
using wt = Tile;
constexpr int STAGES = 3;
// Floats of one stage of A and of B, and the loop's shared memory (bytes), for tiling WT.
template <typename WT>
constexpr int stage_a() {
  return WT::BLOCK_K * WT::LDS_A;
}
template <typename WT>
constexpr int stage_b() {
  return WT::BLOCK_K * WT::LDS_B;
}
template <typename WT>
constexpr int smem_bytes() {
  return STAGES * (stage_a<WT>() + stage_b<WT>()) * int(sizeof(float));
}
constexpr int SMEM = smem_bytes<Tile>();

// One operand's copy: 16-byte (or 4-byte, !VEC) cp.async of an MN-contiguous tile as v09's, or
// the transposing copy of a K-contiguous one.
template <int BMN, int LD, bool MN_CONTIG, bool VEC, int THREADS, bool CLAMP = false>
struct OperandCopy {
  TileLoader<wt::BLOCK_K, BMN, THREADS, true, VEC> loader;
  __device__ __forceinline__ OperandCopy(const KmnView& v, int64_t x0) : loader(v, x0) {}
  template <bool UNCHECKED>
  __device__ __forceinline__ void copy(const KmnView& v, int64_t k0, int64_t x0,
                                       float* s) const {
    loader.template copy_async<LD, UNCHECKED, true>(v, k0, x0, s);
  }
};
template <int BMN, int LD, bool VEC, int THREADS, bool CLAMP>
struct OperandCopy<BMN, LD, false, VEC, THREADS, CLAMP> {
  TransposingCopy<BMN, LD, THREADS, CLAMP> t;
  __device__ __forceinline__ OperandCopy(const KmnView& v, int64_t x0) : t(v, x0) {}
  template <bool UNCHECKED>
  __device__ __forceinline__ void copy(const KmnView& v, int64_t k0, int64_t,
                                       float* s) const {
    t.template copy<UNCHECKED>(v, k0, s);
  }
};

// The split kernels on this loop (v18, v21) and their tilings: the 128x128 tile of 16x8 lanes
// (Tile), or v12's four-warp 64x128 / 128x64 tiles of 8x8 lanes along a shorter side of at most
// 768: at three blocks per SM those were faster than the 128x128 tile's two on 193-768 rows, and
// than v16 (results/sweeps/rows-v18-wide-m256-1024-*). f(tiling{}) with the output's.
using Wide = warptile::Tile<1, 4>;  // 64x128: outputs with M <= 768, M <= N
using Tall = warptile::Tile<2, 2>;  // 128x64: outputs with N <= 768, M > N
template <typename F>
void with_split_tiling(int64_t M, int64_t N, F&& f) {
  if (std::min(M, N) > 768) {
    f(Tile{});
  } else if (M <= N) {
    f(Wide{});
  } else {
    f(Tall{});
  }
}
// The blocks per SM the registers are budgeted for: two of the square tile; three of the
// 64-wide ones on sm_90, where that was measured (two before it: at three, sm_86 and sm_89 code
// spills).
template <typename WT>
constexpr int min_blocks() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  return 2;
#else
  return WT::WARP_M == 128 ? 2 : 3;
#endif
}
// An SM's throughput at 1..n blocks, for the split models (common/split_model.h): not fitted
// (the square tile takes v11's pair guess; the 64-wide tiles a second block adding a tenth, a
// third a twentieth). Checked for v18 at three blocks per SM against S = 1, 2, 3, 4, 6, 8 on seven
// 33-64-row shapes (H100): the model's S was the fastest or within 3%
// (results/sweeps/sgemm_v18_splits-*); for v21 against forced splits (benchmarks/NOTES.md).
template <typename WT>
constexpr SplitRates split_rates() {
  if constexpr (WT::WARP_M == 128) {
    return SplitRates{2, {1.0, 1.3}};
  } else {
    return SplitRates{3, {1.0, 1.1, 1.15}};
  }
}

// The k-tile loop. Stage s holds k-tiles s, s + 3, ...; tiles 0-2 are in flight before it
// starts. In tile t, after the fragment loads of its last k, the block waits for tile t + 1
// (cp.async groups complete in order), meets at the barrier (every lane is done reading tile
// t's stage, so tile t + 3 may be copied into it), reads tile t + 1's first fragments, issues
// tile t + 3's copies and only then multiplies tile t's last k.
template <typename WT, bool UNCHECKED, typename CopyA, typename CopyB>
__device__ __forceinline__ void main_loop(const KmnView& A, const KmnView& B, int64_t m0,
                                          int64_t n0, int64_t k_first, int tiles,
                                          const CopyA& copy_a, const CopyB& copy_b, float* As,
                                          float* Bs, const typename WT::LanePos& pos,
                                          float (&acc)[WT::THREAD_M][WT::THREAD_N]) {
  constexpr int BK = WT::BLOCK_K, STAGE_A = stage_a<WT>(), STAGE_B = stage_b<WT>();
#pragma unroll
  for (int s = 0; s < STAGES; ++s) {
    const int64_t k0 = k_first + s * int64_t(BK);
    if (s == 0 && UNCHECKED && k0 < 0) {  // the ragged first k-tile (multiply_tile)
      copy_a.template copy<false>(A, k0, m0, As);
      copy_b.template copy<false>(B, k0, n0, Bs);
    } else if (s < tiles) {
      copy_a.template copy<UNCHECKED>(A, k0, m0, As + s * STAGE_A);
      copy_b.template copy<UNCHECKED>(B, k0, n0, Bs + s * STAGE_B);
    }
    ptx::cp_async_commit();  // empty groups keep the count: tile t is always group t
  }
  ptx::cp_async_wait<STAGES - 1>();
  __syncthreads();
  float a[2][WT::THREAD_M], b[2][WT::THREAD_N];
  WT::load_fragments(As, Bs, 0, pos, a[0], b[0]);
  int cur = 0;
  for (int t = 0; t < tiles; ++t) {
    const int next = cur + 1 == STAGES ? 0 : cur + 1;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      if (k + 1 < BK) {
        WT::load_fragments(As + cur * STAGE_A, Bs + cur * STAGE_B, k + 1, pos,
                           a[(k + 1) & 1], b[(k + 1) & 1]);
      } else {
        ptx::cp_async_wait<STAGES - 2>();
        __syncthreads();
        WT::load_fragments(As + next * STAGE_A, Bs + next * STAGE_B, 0, pos, a[0], b[0]);
        if (t + STAGES < tiles) {
          const int64_t k0 = k_first + (t + STAGES) * int64_t(BK);
          copy_a.template copy<UNCHECKED>(A, k0, m0, As + cur * STAGE_A);
          copy_b.template copy<UNCHECKED>(B, k0, n0, Bs + cur * STAGE_B);
        }
        ptx::cp_async_commit();
      }
#pragma unroll
      for (int i = 0; i < WT::THREAD_M; ++i)
#pragma unroll
        for (int j = 0; j < WT::THREAD_N; ++j)
          acc[i][j] = fmaf(a[k & 1][i], b[k & 1][j], acc[i][j]);
    }
    cur = next;
  }
  ptx::cp_async_wait<0>();  // nothing may still be landing in shared memory when the block exits
}

// The tilings whose blocks past M clamp A's rows (a third copy of the loop, where its registers
// allow: v18's 64-row tiles; v17's 128x128 tile moves inside instead and runs at 255 registers).
template <typename WT, bool A_COL_MAJOR>
constexpr bool CLAMP_ROWS = WT::BLOCK_M == 64 && !A_COL_MAJOR;

// The block's tile product over the k-tiles [k0, k_end) of K rounded up to whole k-tiles, handed
// to finish(pos, acc): unchecked copies when the block's tile lies inside A and B along M and N,
// or (CLAMP_ROWS) past M only, its rows past the edge then holding copies of a row inside, which
// finish must not store; checked ones (zero-filled) otherwise. Ragged K: the k-tiles are laid
// from K downwards, so the partial one comes first (negative k zero-filled) and only the prologue
// copies it checked (v09's double-buffered loop cannot afford that: double_buffer::
// multiply_tile); both operands' copies here allow any shift (the K-contiguous one moves 4 bytes
// at a time, the MN-contiguous one whole rows).
template <typename WT, bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC, typename Finish>
__device__ __forceinline__ void multiply_tile(const KmnView& A, const KmnView& B, int64_t m0,
                                              int64_t n0, int64_t k0, int64_t k_end, float* smem,
                                              Finish&& finish) {
  float* As = smem;
  float* Bs = smem + STAGES * stage_a<WT>();
  const OperandCopy<WT::BLOCK_M, WT::LDS_A, A_COL_MAJOR, VEC, WT::THREADS> copy_a(A, m0);
  const OperandCopy<WT::BLOCK_N, WT::LDS_B, !B_COL_MAJOR, VEC, WT::THREADS> copy_b(B, n0);
  const typename WT::LanePos pos;
  float acc[WT::THREAD_M][WT::THREAD_N] = {};
  const int64_t pad = ceil_div(A.K, WT::BLOCK_K) * WT::BLOCK_K - A.K;
  k0 -= pad, k_end -= pad;
  const int tiles = static_cast<int>(ceil_div(k_end - k0, WT::BLOCK_K));
  if (m0 + WT::BLOCK_M <= A.MN && n0 + WT::BLOCK_N <= B.MN) {
    main_loop<WT, true>(A, B, m0, n0, k0, tiles, copy_a, copy_b, As, Bs, pos, acc);
  } else if constexpr (CLAMP_ROWS<WT, A_COL_MAJOR>) {
    // Past M only, with a K-contiguous A (outputs of fewer rows than a 64-row tile, which cannot
    // move inside): A's rows clamped, every copy unchecked.
    if (n0 + WT::BLOCK_N <= B.MN) {
      const OperandCopy<WT::BLOCK_M, WT::LDS_A, false, VEC, WT::THREADS, true> clamped(A, m0);
      main_loop<WT, true>(A, B, m0, n0, k0, tiles, clamped, copy_b, As, Bs, pos, acc);
    } else {
      main_loop<WT, false>(A, B, m0, n0, k0, tiles, copy_a, copy_b, As, Bs, pos, acc);
    }
  } else {
    main_loop<WT, false>(A, B, m0, n0, k0, tiles, copy_a, copy_b, As, Bs, pos, acc);
  }
  finish(pos, acc);
}

}  // namespace fastgemm::sgemm::multistage
