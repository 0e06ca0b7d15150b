// sgemm/common.cuh — pieces every SGEMM rung shares: operand views, the layout dispatcher, the
// alpha/beta epilogue, and (for the vectorized rungs) the float4 tile loaders.
//
// Shared-memory tiles of the vectorized rungs are "K-major": a tile of A is stored as As[k][m] and a
// tile of B as Bs[k][n], so the inner product loop reads a column of A and a row of B as contiguous
// float4s. Globally each operand is seen as a K x MN matrix ("KMN view"): for A element (k, m) is
// A(m, k), for B element (k, n) is B(k, n). Whether that view is contiguous along MN (a column-major
// A, a row-major B) or along K decides how a tile is copied: a float4 along MN lands in shared memory
// as one float4; a float4 along K is transposed into four scalar stores.
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>

#include "common/epilogue.cuh"
#include "common/gemm_args.h"
#include "common/launch.cuh"
#include "common/ptx.cuh"

namespace fastgemm::sgemm {

// --- operand views (scalar rungs) ---------------------------------------------------------------
// Element (r, c) of an operand lives at p[r * rs + c * cs].
struct View {
  const float* p;
  int64_t rs, cs;
  __device__ __forceinline__ float at(int64_t r, int64_t c) const { return p[r * rs + c * cs]; }
};

inline View view_a(const GemmArgs& a) {
  const auto* p = static_cast<const float*>(a.A);
  return a.a_col_major ? View{p, 1, a.lda} : View{p, a.lda, 1};
}
inline View view_b(const GemmArgs& a) {
  const auto* p = static_cast<const float*>(a.B);
  return a.b_col_major ? View{p, 1, a.ldb} : View{p, a.ldb, 1};
}

// --- epilogue ------------------------------------------------------------------------------------
// C = alpha*acc + beta*C; beta == 0 never reads C (BLAS semantics: NaN in C must not propagate).
__device__ __forceinline__ void store_c(float* C, int64_t ldc, int64_t i, int64_t j, float acc,
                                        float alpha, float beta) {
  float* p = C + i * ldc + j;
  *p = beta == 0.0f ? alpha * acc : fmaf(alpha, acc, beta * *p);
}

// Four consecutive outputs of one row; one float4 store when they are all in bounds and C's rows
// are 16-byte aligned (VEC, which the vectorized rungs require unless they take 4-byte aligned
// operands), scalars at the right edge or everywhere when !VEC.
template <bool VEC = true>
__device__ __forceinline__ void store_c4(float* C, int64_t ldc, int64_t M, int64_t N, int64_t i,
                                         int64_t j, float4 acc, float alpha, float beta) {
  if (i >= M) return;
  store_quad<float, VEC>(C + i * ldc + j, acc, alpha, beta, N - j);
}

// --- KMN views and float4 tile loaders (vectorized rungs) ---------------------------------------
// Element (k, x) of the K x MN view: MN_CONTIG ? p[k * ld + x] : p[x * ld + k].
struct KmnView {
  const float* p;
  int64_t ld, K, MN;
};

inline KmnView kmn_a(const GemmArgs& a) {
  return {static_cast<const float*>(a.A), a.lda, a.K, a.M};
}
inline KmnView kmn_b(const GemmArgs& a) { return {static_cast<const float*>(a.B), a.ldb, a.K, a.N}; }

// Four consecutive floats at src: one 16-byte load (VEC: src 16-byte aligned) or four 4-byte ones.
template <bool VEC>
__device__ __forceinline__ float4 ld4(const float* src) {
  if constexpr (VEC) {
    return *reinterpret_cast<const float4*>(src);
  } else {
    return make_float4(src[0], src[1], src[2], src[3]);
  }
}

// A float4 of the view along its contiguous dimension: `strided` indexes the other dimension and
// `contig` the first of four contiguous elements. Out-of-range elements read as zero, so tails need
// no special case in the math. VEC: p and ld are 16-byte aligned (4 floats); otherwise only 4-byte.
template <bool VEC = true>
__device__ __forceinline__ float4 load4(const float* p, int64_t ld, int64_t strided,
                                        int64_t strided_extent, int64_t contig,
                                        int64_t contig_extent) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (strided >= strided_extent) return v;
  const float* src = p + strided * ld + contig;
  if (contig + 4 <= contig_extent) return ld4<VEC>(src);
  if (contig + 0 < contig_extent) v.x = src[0];
  if (contig + 1 < contig_extent) v.y = src[1];
  if (contig + 2 < contig_extent) v.z = src[2];
  if (contig + 3 < contig_extent) v.w = src[3];
  return v;
}

// A BK x BMN tile of the KMN view (origin k0, x0), split into float4 "chunks" along the contiguous
// dimension and dealt round-robin to THREADS threads: each thread owns CHUNKS of them.
// VEC: the view's base and ld are 16-byte aligned and a chunk moves as one 16-byte access. !VEC
// (an operand aligned only to its 4-byte elements, e.g. rows of 1003 floats): 4-byte accesses,
// four times the instructions, and a row segment that no longer starts on a 32-byte boundary
// spans one more sector (a 16-k segment of a K-contiguous tile: three instead of two); through
// registers (load) the same chunks at the same fixed offsets, by cp.async (copy_async) the floats
// dealt as SPREAD says.
template <int BK, int BMN, int THREADS, bool MN_CONTIG, bool VEC = true>
struct TileLoader {
  static constexpr int CHUNKS = BK * BMN / 4 / THREADS;
  static_assert(BK * BMN % (4 * THREADS) == 0, "tile must split evenly into float4 chunks per thread");
  static_assert(BK % 4 == 0 && BMN % 4 == 0, "tile sides must be multiples of 4");

  // Chunk c of the tile: its (k, x) origin inside the tile.
  //  MN-contiguous: consecutive threads take consecutive float4s of one k-row (a warp reads 512
  //    contiguous bytes and stores them as 32 consecutive float4s).
  //  K-contiguous: two neighbouring threads read the two float4s of one 32-byte sector (k and k+4)
  //    and a warp covers 16 rows x 8 k; transposed into shared memory, lane pairs write rows k and
  //    k+4 of the tile, which a row pad of 4 floats moves to different banks.
  __device__ __forceinline__ static void chunk_origin(int c, int& k, int& x) {
    if constexpr (MN_CONTIG) {
      k = c / (BMN / 4), x = (c % (BMN / 4)) * 4;
    } else {
      static_assert(MN_CONTIG || BK % 8 == 0, "K-contiguous tiles are read as 8-float sectors");
      k = (c / (2 * BMN)) * 8 + (c % 2) * 4, x = (c / 2) % BMN;
    }
  }

  // A thread's chunks sit at offsets from its first one that are known at compile time (the same
  // x, THREADS*4/BMN rows further in an MN-contiguous view; in a K-contiguous one the same x, 8
  // rows further, or with fewer than 2*BMN threads THREADS/2 positions further along MN until a
  // row of 8 k is covered), so one pointer to its first chunk of the block's column of tiles
  // locates them all. A tile that lies wholly inside the operand is then loaded with unpredicated
  // 16-byte loads; only edge tiles pay for per-element bounds checks.
  static_assert(MN_CONTIG ? THREADS % (BMN / 4) == 0
                          : THREADS % (2 * BMN) == 0 || (2 * BMN) % THREADS == 0,
                "chunks of one thread must sit at fixed offsets");
  static constexpr int PASS = MN_CONTIG ? THREADS / (BMN / 4) : (THREADS / (2 * BMN)) * 8;
  const float* first;  // this thread's first chunk (SPREAD: first float) of the tile at k0 = 0

  // An MN-contiguous tile copied 4 bytes at a time (cp.async, !VEC) is dealt by floats, not by
  // chunks: float i of the tile (k-rows laid end to end) goes to lane i % 32 of warp
  // (i / 128) % (THREADS / 32), so one warp-wide copy moves 32 consecutive floats of a k-row (128
  // bytes: one or two lines, 32 consecutive banks). Dealt by chunks, each of the four copies of a
  // chunk touched the four lines of the warp's 512 bytes and wrote every fourth bank: four times
  // the L1 work per copy, and the copies of B queued on the LSU (ncu: lg_throttle stalls,
  // benchmarks/NOTES.md). A thread's floats still sit at fixed offsets from its first one: float
  // (r, e) of thread t is 4 * THREADS * r + 32 * e floats of the tile on from t's first, which
  // stays inside its k-row when a k-row is whole 128-float spans or a 128-float span whole rows.
  static constexpr bool SPREAD = MN_CONTIG && !VEC;
  static_assert(!SPREAD || (THREADS % 32 == 0 && BMN % 32 == 0 &&
                            (BMN % 128 == 0 || 128 % BMN == 0)),
                "4-byte copies move 32 consecutive floats of one k-row per warp");
  __device__ __forceinline__ static void spread_origin(int& k, int& x) {
    const int i = (threadIdx.x / 32) * 128 + threadIdx.x % 32;
    k = i / BMN, x = i % BMN;
  }
  // Float (r, e) of a thread, from its first: rows and columns further on.
  template <int R, int E>
  static constexpr int SPREAD_K = (4 * THREADS * R + 32 * E) / BMN;
  template <int R, int E>
  static constexpr int SPREAD_X = (4 * THREADS * R + 32 * E) % BMN;

  __device__ __forceinline__ TileLoader(const KmnView& v, int64_t x0) {
    int k, x;
    if constexpr (SPREAD) {
      spread_origin(k, x);
    } else {
      chunk_origin(threadIdx.x, k, x);
    }
    first = v.p + (MN_CONTIG ? k * v.ld + (x0 + x) : (x0 + x) * v.ld + k);
  }

  __device__ __forceinline__ static bool inside(const KmnView& v, int64_t k0, int64_t x0) {
    return k0 + BK <= v.K && x0 + BMN <= v.MN;
  }
  __device__ __forceinline__ const float* chunk(const KmnView& v, int64_t k0, int r) const {
    if constexpr (!MN_CONTIG && THREADS < 2 * BMN) {
      // chunk r is r * THREADS chunks on: (r * THREADS / 2) % BMN along MN, 8 k per full row
      const int c = r * THREADS;
      return first + ((c / 2) % BMN) * v.ld + k0 + (c / (2 * BMN)) * 8;
    }
    // chunk r is PASS rows of the tile further along K (rows of ld elements when MN-contiguous)
    return first + (MN_CONTIG ? (k0 + r * PASS) * v.ld : k0 + r * PASS);
  }

  // Global -> registers. UNCHECKED: the caller guarantees the tile lies inside the operand.
  template <bool UNCHECKED = false>
  __device__ __forceinline__ void load(const KmnView& v, int64_t k0, int64_t x0,
                                       float4 (&regs)[CHUNKS]) const {
    static_assert(!SPREAD, "an MN-contiguous tile of 4-byte floats is copied by cp.async");
    if (UNCHECKED || inside(v, k0, x0)) {
#pragma unroll
      for (int r = 0; r < CHUNKS; ++r) regs[r] = ld4<VEC>(chunk(v, k0, r));
      return;
    }
#pragma unroll
    for (int r = 0; r < CHUNKS; ++r) {
      int k, x;
      chunk_origin(threadIdx.x + r * THREADS, k, x);
      regs[r] = MN_CONTIG ? load4<VEC>(v.p, v.ld, k0 + k, v.K, x0 + x, v.MN)
                          : load4<VEC>(v.p, v.ld, x0 + x, v.MN, k0 + k, v.K);
    }
  }

  // Registers -> shared tile s[k][x] with row stride LD (floats). A K-contiguous chunk is
  // transposed into four scalar stores.
  template <int LD>
  __device__ __forceinline__ static void store(float* s, const float4 (&regs)[CHUNKS]) {
#pragma unroll
    for (int r = 0; r < CHUNKS; ++r) {
      int k, x;
      chunk_origin(threadIdx.x + r * THREADS, k, x);
      if constexpr (MN_CONTIG) {
        *reinterpret_cast<float4*>(&s[k * LD + x]) = regs[r];
      } else {
        s[(k + 0) * LD + x] = regs[r].x;
        s[(k + 1) * LD + x] = regs[r].y;
        s[(k + 2) * LD + x] = regs[r].z;
        s[(k + 3) * LD + x] = regs[r].w;
      }
    }
  }

  // Global -> shared without registers (cp.async, sm_80+); only for MN-contiguous views, where a
  // 16-byte global chunk is also 16 contiguous bytes of the shared tile. Out-of-range bytes are
  // zero-filled by the copy itself. !VEC: 4-byte copies (cp.async.ca) dealt as SPREAD says, each
  // zero-filled on its own. NEG_K: k0 may be negative (a ragged K's partial k-tile laid first,
  // sgemm/multistage.cuh), rows before 0 are zero-filled too.
  template <int LD, bool UNCHECKED = false, bool NEG_K = false>
  __device__ __forceinline__ void copy_async(const KmnView& v, int64_t k0, int64_t x0,
                                             float* s) const {
    static_assert(MN_CONTIG, "cp.async cannot transpose: use load()/store() for K-contiguous tiles");
    const bool full = UNCHECKED || ((!NEG_K || k0 >= 0) && inside(v, k0, x0));
    if constexpr (SPREAD) {
      copy_spread<LD, NEG_K>(v, k0, x0, s, full, std::make_integer_sequence<int, CHUNKS * 4>{});
    } else {
#pragma unroll
      for (int r = 0; r < CHUNKS; ++r) {
        int k, x;
        chunk_origin(threadIdx.x + r * THREADS, k, x);
        if (full) {
          ptx::cp_async_16(&s[k * LD + x], chunk(v, k0, r));
          continue;
        }
        const int64_t gk = k0 + k, gx = x0 + x;
        const int64_t valid =
            ((!NEG_K || gk >= 0) && gk < v.K) ? (v.MN - gx < 4 ? v.MN - gx : 4) : 0;
        if (valid == 4) {  // whole (see ptx::cp_async_16)
          ptx::cp_async_16(&s[k * LD + x], v.p + gk * v.ld + gx);
          continue;
        }
        const int bytes = valid > 0 ? static_cast<int>(valid) * 4 : 0;
        // any valid address when nothing is read
        const float* src = bytes ? v.p + gk * v.ld + gx : v.p;
        ptx::cp_async_16(&s[k * LD + x], src, bytes);
      }
    }
  }

 private:
  // SPREAD's copies: float (r, e) = I / 4, I % 4 of the thread, each zero-filled on its own where
  // the tile is not `full`. A fold over the floats: an unrolled loop over the same offsets
  // compiled differently and spilled v09 and v16 at their 128-register cap.
  template <int LD, bool NEG_K, int... I>
  __device__ __forceinline__ void copy_spread(const KmnView& v, int64_t k0, int64_t x0, float* s,
                                              bool full, std::integer_sequence<int, I...>) const {
    if (full) {
      int k, x;
      spread_origin(k, x);
      float* d = s + k * LD + x;
      const float* src = first + k0 * v.ld;
      (ptx::cp_async_4(d + SPREAD_K<I / 4, I % 4> * LD + SPREAD_X<I / 4, I % 4>,
                       src + SPREAD_K<I / 4, I % 4> * v.ld + SPREAD_X<I / 4, I % 4>, 4),
       ...);
      return;
    }
    // A tile at an edge of the operand: per chunk, as the 16-byte copies (which floats a thread
    // copies may differ from tile to tile: the block waits for all of them before reading one).
#pragma unroll
    for (int r = 0; r < CHUNKS; ++r) {
      int ck, cx;
      chunk_origin(threadIdx.x + r * THREADS, ck, cx);
      const int64_t gk = k0 + ck, gx = x0 + cx;
      const int64_t valid =
          ((!NEG_K || gk >= 0) && gk < v.K) ? (v.MN - gx < 4 ? v.MN - gx : 4) : 0;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool in = e < valid;  // any valid address when nothing is read
        ptx::cp_async_4(&s[ck * LD + cx + e], in ? v.p + gk * v.ld + gx + e : v.p, in ? 4 : 0);
      }
    }
  }
};

// A K-contiguous BMN x 16 tile (every warp tiling's BLOCK_K) copied by 4-byte cp.async into the
// K-major shared tile s[k][x] (row stride LD): thread t takes k = t % 8 and k + 8 of rows t / 8 +
// i * THREADS / 8, so a warp-wide copy reads four 32-byte row segments and writes 32 different
// banks (LD = BMN + 4). The transposition is free: no registers, no shared stores.
// CLAMP (the tile runs past the operand's rows, not past K): rows past the last are read from
// the last row the thread has inside (or from the operand's last row) instead of zero-filled: they
// only feed outputs past the edge, which are never stored, and the copies need no bounds.
template <int BMN, int LD, int THREADS, bool CLAMP = false>
struct TransposingCopy {
  static_assert(THREADS % 32 == 0, "a warp covers four rows of 8 k");
  static constexpr int ROW_STEP = THREADS / 8, ROWS = BMN / ROW_STEP;
  static_assert(BMN % ROW_STEP == 0, "rows split evenly over the threads");
  const float* first;  // row t / 8, k = t % 8 at k0 = 0
  int64_t step;        // ROW_STEP rows
  int64_t row;         // t / 8 inside the operand, from x0
  int k_lo, s_off;
  int inside;          // CLAMP: rows of the thread's ROWS inside the operand (0: none)
  const float* last;   // CLAMP: where a copy of a row past them reads

  __device__ __forceinline__ TransposingCopy(const KmnView& v, int64_t x0) {
    const int t = threadIdx.x;
    k_lo = t % 8;
    row = x0 + t / 8;
    first = v.p + row * v.ld + k_lo;
    step = int64_t(ROW_STEP) * v.ld;
    s_off = k_lo * LD + t / 8;
    if constexpr (CLAMP) {
      const int64_t left = v.MN - row;  // rows from this thread's first to the operand's end
      const int64_t rows = left >= ROWS * ROW_STEP ? ROWS : (left + ROW_STEP - 1) / ROW_STEP;
      inside = left <= 0 ? 0 : static_cast<int>(rows);
      last = inside > 0 ? first + (inside - 1) * step : v.p + (v.MN - 1) * v.ld + k_lo;
    }
  }

  template <bool UNCHECKED>
  __device__ __forceinline__ void copy(const KmnView& v, int64_t k0, float* s) const {
    if constexpr (CLAMP && UNCHECKED) {
#pragma unroll
      for (int i = 0; i < ROWS; ++i) {
        const float* p = (i < inside ? first + i * step : last) + k0;
        float* d = s + s_off + i * ROW_STEP;
        ptx::cp_async_4(d, p, 4);
        ptx::cp_async_4(d + 8 * LD, p + 8, 4);
      }
      return;
    }
    const float* p = first + k0;
    const bool lo_in = k0 + k_lo >= 0 && k0 + k_lo < v.K;
    const bool hi_in = k0 + k_lo + 8 >= 0 && k0 + k_lo + 8 < v.K;
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

// True when A (unless !with_a: a rung that reads A 4 bytes at a time anyway), B (unless
// !with_b, the same) and C (base addresses and leading dimensions) are 16-byte aligned: the
// vectorized rungs' float4 accesses are then legal.
inline bool vec4_aligned(const GemmArgs& a, bool with_a = true, bool with_b = true) {
  const uint64_t bits = (with_a ? uint64_t(reinterpret_cast<uintptr_t>(a.A)) |
                                      uint64_t(a.lda) * sizeof(float)
                                : 0) |
                        (with_b ? uint64_t(reinterpret_cast<uintptr_t>(a.B)) |
                                      uint64_t(a.ldb) * sizeof(float)
                                : 0) |
                        uint64_t(reinterpret_cast<uintptr_t>(a.C)) |
                        uint64_t(a.ldc) * sizeof(float);
  return bits % 16 == 0;
}

// Which operands decide `vec` (with_kernel): every one, or only those a rung copies along MN
// (and C), for a rung that copies a K-contiguous operand 4 bytes at a time whatever its
// alignment (v17).
enum class VecOperands { all, mn_contiguous };

// with_layouts for rungs whose kernel_for also takes the alignment: f(a_col, b_col, vec) with vec
// = std::bool_constant<vec4_aligned(a)> (16-byte accesses, or 4-byte ones for operands aligned
// only to their elements). Rungs whose kernel_for takes the layouts only are 16-byte aligned
// (their registration says so, and under-aligned operands reach them padded). A rung whose
// kernel_for takes a fourth argument, a16, has an instantiation for a row-major A whose rows are
// 16-byte aligned beside an under-aligned B or C (vec false, a16 true): such an A read 4 bytes at
// a time cost 5-40% more where its row pitch is a power of two (v09, v12, v16: the double_buffer
// rungs; measured when those copies still went through registers, benchmarks/NOTES.md).
template <typename KernelFor, typename F>
void with_kernel(const GemmArgs& a, KernelFor&& kernel_for, F&& f,
                 VecOperands which = VecOperands::all) {
  const bool all = which == VecOperands::all;
  with_layouts(a, [&](auto a_col, auto b_col) {
    using A_COL = decltype(a_col);
    using B_COL = decltype(b_col);
    if constexpr (std::is_invocable_v<KernelFor, A_COL, B_COL, std::true_type, std::false_type>) {
      if (vec4_aligned(a, all || a.a_col_major, all || !a.b_col_major)) {
        f(kernel_for(a_col, b_col, std::true_type{}, std::false_type{}));
        return;
      }
      if constexpr (!A_COL::value) {
        if ((reinterpret_cast<uintptr_t>(a.A) | uintptr_t(a.lda) * sizeof(float)) % 16 == 0) {
          f(kernel_for(a_col, b_col, std::false_type{}, std::true_type{}));
          return;
        }
      }
      f(kernel_for(a_col, b_col, std::false_type{}, std::false_type{}));
    } else if constexpr (std::is_invocable_v<KernelFor, A_COL, B_COL, std::true_type>) {
      if (vec4_aligned(a, all || a.a_col_major, all || !a.b_col_major)) {
        f(kernel_for(a_col, b_col, std::true_type{}));
      } else {
        f(kernel_for(a_col, b_col, std::false_type{}));
      }
    } else {
      f(kernel_for(a_col, b_col));
    }
  });
}

// Host side of the vectorized rungs: one kernel instantiation per operand layout (and alignment,
// see with_kernel), picked by `kernel_for`, on a grid of BLOCK_M x BLOCK_N output tiles.
template <int BLOCK_M, int BLOCK_N, int THREADS, typename KernelFor>
void launch_kmn(const GemmArgs& a, const char* name, KernelFor kernel_for) {
  const dim3 grid = tile_grid(a, BLOCK_M, BLOCK_N, name);
  with_kernel(a, kernel_for, [&](auto kernel) {
    fastgemm::launch(kernel, Launch{grid, dim3(THREADS), 0, a.stream}, name, kmn_a(a), kmn_b(a),
                     static_cast<float*>(a.C), a.ldc, a.alpha, a.beta);
  });
}

}  // namespace fastgemm::sgemm
