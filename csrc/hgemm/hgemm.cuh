// hgemm/hgemm.cuh — the tensor-core (mma.sync + ldmatrix) GEMM template behind every HGEMM rung.
//
// Each rung is this template with one more feature switched on (see the rung's .cu file for what
// changed, why it is faster and what limits it); the switches live in a config struct:
//
//   BLOCK_M/N/K, WARPS_M/N   block tile and warp grid; each warp owns a (BLOCK_M/WARPS_M) x
//                            (BLOCK_N/WARPS_N) tile of C made of 16x8 mma tiles
//   COPY                     how tiles get from global to shared memory: element by element,
//                            16-byte vectors, 16-byte vectors prefetched into registers one tile
//                            ahead, cp.async (global -> shared without registers), or elements
//                            prefetched into registers one tile ahead (2-byte aligned operands)
//   SMEM                     shared-memory rows plain, padded by 16 bytes, or XOR-swizzled
//   STAGES                   shared-memory buffers in the ring (1 = copy, sync, compute, sync)
//   B_X4                     ldmatrix.x4 fetches two n8 B fragments at once (else .x2)
//   XOR_STEP                 fragment addresses for k-step kk derived from kk = 0 by XOR/ADD
//                            instead of recomputing row, chunk and swizzle per load
//   RASTER_GROUP             > 0: output tiles visited in column strips of this many tile rows
//                            (threadblock swizzle) for L2 reuse
//   MIN_BLOCKS               blocks per SM the register allocation must leave room for
//   SPLIT_K                  the grid's z blocks of one output tile form a thread-block cluster
//                            and split the K tiles evenly; their fp32 partial tiles meet in
//                            shared memory and are summed across the cluster in rank order (the
//                            same bits on every run) before C is written (split_epilogue); on
//                            tiles of at most 32 rows whose A is MN-major with rows that are not
//                            whole 32-byte sectors, each block starts its run of k-tiles at its
//                            own k-tile (mainloop_range)
//   SPLIT_REDUCE             with SPLIT_K: the z blocks of a tile are not a cluster; each stores
//                            its fp32 partial tile into a slot of a scratch buffer (run_partials)
//                            and a second kernel sums the slots in z order and writes C
//                            (common/split_k.cuh, sum_partial_tiles_kernel), so S is bounded by
//                            the SMs, not by a cluster's 8 blocks
//   STREAM_K                 with SPLIT_K: no grid z; the blocks (as many as are resident at
//                            once) take equal runs of the k-tiles of all output tiles, tile after
//                            tile, and a tile cut between blocks is summed through global memory
//                            in a fixed order (run_stream_k, common/split_k.cuh: StreamK)
//   ROW_STORE                C leaves through shared memory a warp at a time: each warp stages
//                            16 rows of its fp32 tile and stores them row by row, consecutive
//                            lanes on consecutive columns (element stores, whole sectors at any
//                            alignment of C), instead of pairs straight from the mma fragments
//
// Operands are stored in shared memory the way they lie in global memory, so 16-byte copies never
// transpose: a K-major operand (row-major A, column-major B) as [MN][BLOCK_K] rows, an MN-major
// one (column-major A, row-major B) as [BLOCK_K][MN] rows; ldmatrix's .trans turns an MN-major
// tile into the fragment layout mma.sync expects. One kernel instantiation per layout pair and
// element type (fp16 or bf16); accumulation is always fp32 and alpha/beta are applied in fp32.
//
// Shapes: any M, N, K >= 1. Tiles are zero-filled past the edges of A and B (element-exact, so
// nothing outside an operand is read) and C is written with per-element bounds. Rungs that copy
// 16-byte vectors need 16-byte aligned operands (addresses and leading dimensions, i.e. multiples
// of 8 elements); the element-wise rung needs none.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/epilogue.cuh"
#include "common/gemm_args.h"
#include "common/launch.cuh"
#include "common/runtime.h"
#include "common/split_k.cuh"
#include "common/ptx.cuh"
#include "common/swizzle.cuh"

namespace fastgemm::hgemm {

enum class Copy { scalar, vec16, reg_prefetch, async, elem_prefetch };
// tma_boxes: what a TMA copy with the 128-byte swizzle writes (hopper/common.cuh): rows of at
// most 64 elements, a wider MN-major tile split into 64-element boxes of ROWS rows, one after
// another, each swizzled like a 64-element row of `swizzled`.
enum class Smem { plain, padded, swizzled, tma_boxes };

// --- global operands -----------------------------------------------------------------------------
// Element (k, x) of an operand seen as K x MN (x = m for A, n for B):
//   K_MAJOR ? p[x * ld + k] : p[k * ld + x].
// Its "storage" view is what is contiguous: rows along the strided dimension, columns along the
// contiguous one: K_MAJOR: row = x, col = k; MN-major: row = k, col = x.
template <typename T>
struct Operand {
  const T* p;
  int64_t ld, K, MN;
};

template <typename T>
inline Operand<T> operand_a(const GemmArgs& a) {
  return {static_cast<const T*>(a.A), a.lda, a.K, a.M};
}
template <typename T>
inline Operand<T> operand_b(const GemmArgs& a) {
  return {static_cast<const T*>(a.B), a.ldb, a.K, a.N};
}

// --- one operand's tile in shared memory ---------------------------------------------------------
template <typename T, int BMN, int BK, bool K_MAJOR, Smem SMEM>
struct Tile {
  static constexpr int ROWS = K_MAJOR ? BMN : BK;
  static constexpr int COLS = K_MAJOR ? BK : BMN;  // elements per stored row
  static constexpr int CHUNKS = COLS / 8;          // 16-byte chunks per stored row
  static constexpr int LD = SMEM == Smem::padded                   ? COLS + 8
                            : SMEM == Smem::tma_boxes && COLS > 64 ? 64  // one box's rows
                                                                    : COLS;
  static constexpr int ELEMS = ROWS * LD;
  static constexpr int DEPTH = BK;  // the tile's extent along K
  static constexpr bool K_MAJOR_TILE = K_MAJOR;
  static constexpr Smem SMEM_LAYOUT = SMEM;
  static_assert(COLS % 8 == 0, "tile rows are whole 16-byte chunks");

  // Element offset of chunk `chunk` of stored row `row`: the one place the layout is decided.
  __device__ __forceinline__ static int offset(int row, int chunk) {
    if constexpr (SMEM == Smem::tma_boxes) {
      constexpr int BOX_CHUNKS = LD / 8;
      return (chunk / BOX_CHUNKS) * ROWS * LD + row * LD +
             swizzle_chunk<BOX_CHUNKS>(row, chunk % BOX_CHUNKS) * 8;
    }
    const int c = SMEM == Smem::swizzled ? swizzle_chunk<CHUNKS>(row, chunk) : chunk;
    return row * LD + c * 8;
  }

  // Storage (row, col) of the tile at (k0, x0) -> global pointer, and the valid extents.
  __device__ __forceinline__ static const T* global(const Operand<T>& v, int64_t k0, int64_t x0,
                                                    int row, int col) {
    return K_MAJOR ? v.p + (x0 + row) * v.ld + (k0 + col) : v.p + (k0 + row) * v.ld + (x0 + col);
  }
  __device__ __forceinline__ static int64_t row_extent(const Operand<T>& v, int64_t k0,
                                                       int64_t x0) {
    return K_MAJOR ? v.MN - x0 : v.K - k0;
  }
  __device__ __forceinline__ static int64_t col_extent(const Operand<T>& v, int64_t k0,
                                                       int64_t x0) {
    return K_MAJOR ? v.K - k0 : v.MN - x0;
  }
};

// --- global -> shared copies ---------------------------------------------------------------------
// THREADS threads copy a ROWS x COLS tile in 16-byte chunks; chunk c goes to thread c % THREADS,
// so a warp's loads cover consecutive chunks of consecutive rows (coalesced) and, with the
// swizzled layout, each 8 lanes' shared stores land in 8 different bank-group slots. A thread's
// chunks are PASS = THREADS / CHUNKS rows apart in the same column, so one global pointer and one
// shared offset per thread locate them all (the swizzle repeats every 8 or 16 rows, which PASS is
// a multiple of: see common/swizzle.cuh); tiles wholly inside the operand skip every bounds check.
template <typename T, typename TileT, int THREADS>
struct Copier {
  static constexpr int CHUNKS = TileT::CHUNKS;
  static constexpr int PER_THREAD = TileT::ROWS * CHUNKS / THREADS;
  static constexpr int PASS = THREADS / CHUNKS;
  static_assert(THREADS % CHUNKS == 0 && TileT::ROWS % PASS == 0,
                "tile chunks must split into whole passes over the threads");
  static_assert(TileT::SMEM_LAYOUT != Smem::swizzled || PASS % 8 == 0,
                "a thread's chunks must share one swizzle pattern (it repeats every 8 rows)");

  const T* first;  // this thread's first chunk of the tile at k0 = 0
  int row, col;    // its storage row and first element column inside the tile
  int soff;        // its shared-memory element offset

  __device__ __forceinline__ Copier(const Operand<T>& v, int64_t x0) {
    row = threadIdx.x / CHUNKS;
    const int chunk = threadIdx.x % CHUNKS;
    col = chunk * 8;
    first = TileT::global(v, 0, x0, row, col);
    soff = TileT::offset(row, chunk);
  }

  // Chunk i of the tile at k0: global source and shared destination.
  __device__ __forceinline__ const T* src(const Operand<T>& v, int64_t k0, int i) const {
    return first + (TileT::K_MAJOR_TILE ? k0 : k0 * v.ld) + int64_t(i) * PASS * v.ld;
  }
  __device__ __forceinline__ int dst(int i) const { return soff + i * PASS * TileT::LD; }

  // Valid elements of chunk i (0..8): 8 everywhere inside the operand, fewer at its edges.
  __device__ __forceinline__ int valid(const Operand<T>& v, int64_t k0, int64_t x0, int i) const {
    const int64_t rows = TileT::row_extent(v, k0, x0), cols = TileT::col_extent(v, k0, x0);
    if (row + i * PASS >= rows || col >= cols) return 0;
    return cols - col >= 8 ? 8 : static_cast<int>(cols - col);
  }
  __device__ __forceinline__ static bool inside(const Operand<T>& v, int64_t k0, int64_t x0) {
    return TileT::row_extent(v, k0, x0) >= TileT::ROWS && TileT::col_extent(v, k0, x0) >= TileT::COLS;
  }

  // Global -> registers (16-byte loads; element-exact zero fill at the edges). The interior and
  // edge versions are separate loops so that the interior one carries no bounds arithmetic.
  // ELEMS (an operand aligned to its 2-byte elements only): every chunk by element loads, all of
  // the tile's issued before any is used.
  template <bool ELEMS = false>
  __device__ __forceinline__ void load(const Operand<T>& v, int64_t k0, int64_t x0,
                                       uint4 (&regs)[PER_THREAD]) const {
    const bool whole = inside(v, k0, x0);
    if (!ELEMS && whole) {
#pragma unroll
      for (int i = 0; i < PER_THREAD; ++i) regs[i] = *reinterpret_cast<const uint4*>(src(v, k0, i));
      return;
    }
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const T* p = src(v, k0, i);
      const int n = ELEMS && whole ? 8 : valid(v, k0, x0, i);
      if (!ELEMS && n == 8) {
        regs[i] = *reinterpret_cast<const uint4*>(p);
      } else {  // element-exact, assembled in registers (indexing regs[i] by n would spill it)
        const uint16_t* e = reinterpret_cast<const uint16_t*>(p);
        uint32_t w[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const uint32_t lo = 2 * q < n ? e[2 * q] : 0u, hi = 2 * q + 1 < n ? e[2 * q + 1] : 0u;
          w[q] = lo | (hi << 16);
        }
        regs[i] = make_uint4(w[0], w[1], w[2], w[3]);
      }
    }
  }

  // Registers -> shared memory.
  __device__ __forceinline__ void store(T* s, const uint4 (&regs)[PER_THREAD]) const {
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) *reinterpret_cast<uint4*>(s + dst(i)) = regs[i];
  }

  // Where the tile crosses the operand's MN edge (the padding rows of a decode tile of fewer than
  // 16 rows, the last columns of B) the chunks past MN are the same at every k0: the ring holds
  // them as zeros from the start (zero_past_mn) and copy_async never issues them. mn_left: the
  // valid rows from this thread's first (K-major tile: chunk i is inside while i * PASS <
  // mn_left) or the valid elements from its column (MN-major: every chunk reads min(mn_left, 8)).
  __device__ __forceinline__ int mn_left(const Operand<T>& v, int64_t x0) const {
    const int64_t left = v.MN - x0 - (TileT::K_MAJOR_TILE ? row : col);
    return left < 0 ? 0 : left > TileT::ROWS ? TileT::ROWS : static_cast<int>(left);
  }
  __device__ __forceinline__ static bool past_mn(int left, int i) {
    return TileT::K_MAJOR_TILE ? i * PASS >= left : left <= 0;
  }
  __device__ __forceinline__ void zero_past_mn(const Operand<T>& v, int64_t x0, T* s) const {
    const int left = mn_left(v, x0);
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      if (past_mn(left, i)) *reinterpret_cast<uint4*>(s + dst(i)) = make_uint4(0, 0, 0, 0);
    }
  }

  // cp.async: global -> shared with no register round trip; the copy zero-fills the bytes it does
  // not read, so edge tiles need no branches on the shared-memory side. Three cases, the first
  // two with no per-chunk bounds arithmetic: the tile inside the operand; the tile inside along
  // K but crossing MN (each chunk issued or not by one compare against mn_left: a decode tile of
  // fewer than 16 rows takes this path at every k-tile, and with one warp per scheduler its
  // k-loop is bound by the instructions between a tile's arrival and the next copy); and the
  // last, ragged k-tile, element-exact.
  __device__ __forceinline__ void copy_async(const Operand<T>& v, int64_t k0, int64_t x0,
                                             T* s) const {
    if (inside(v, k0, x0)) {
#pragma unroll
      for (int i = 0; i < PER_THREAD; ++i) ptx::cp_async_16(s + dst(i), src(v, k0, i));
      return;
    }
    const int left = mn_left(v, x0);
    if (v.K - k0 >= TileT::DEPTH) {
#pragma unroll
      for (int i = 0; i < PER_THREAD; ++i) {
        if (past_mn(left, i)) continue;
        if (TileT::K_MAJOR_TILE || left >= 8) {  // a whole chunk: the form whose lanes share sectors
          ptx::cp_async_16(s + dst(i), src(v, k0, i));
        } else {  // an MN-major chunk cut by MN
          ptx::cp_async_16(s + dst(i), src(v, k0, i), 2 * left);
        }
      }
      return;
    }
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      if (past_mn(left, i)) continue;
      const int n = valid(v, k0, x0, i);
      ptx::cp_async_16(s + dst(i), n ? src(v, k0, i) : v.p, 2 * n);
    }
  }

  // Element by element straight into shared memory (rung 1: any alignment, no vector access).
  __device__ __forceinline__ static void copy_scalar(const Operand<T>& v, int64_t k0, int64_t x0,
                                                     T* s) {
    const int64_t rows = TileT::row_extent(v, k0, x0), cols = TileT::col_extent(v, k0, x0);
    constexpr int ELEMS = TileT::ROWS * TileT::COLS;
    static_assert(ELEMS % THREADS == 0, "tile elements must split evenly over the threads");
#pragma unroll 4
    for (int i = 0; i < ELEMS / THREADS; ++i) {
      const int e = threadIdx.x + i * THREADS, r = e / TileT::COLS, c = e % TileT::COLS;
      const T val = (r < rows && c < cols) ? *TileT::global(v, k0, x0, r, c) : T(0.0f);
      s[TileT::offset(r, c / 8) + c % 8] = val;
    }
  }
};

// --- fragments -----------------------------------------------------------------------------------
// Lane l of a warp supplies ldmatrix row addresses; for A (16x16 per mma tile, ldmatrix.x4) the
// four 8x8 matrices are (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15); for B
// (16x8, .x2) (k 0-7, n 0-7), (k 8-15, n 0-7), and with .x4 the same for the next n8 tile.
// Returns the (row, chunk) in storage coordinates of the tile.
template <bool K_MAJOR>
__device__ __forceinline__ void a_lane(int lane, int m_base, int kk, int& row, int& chunk) {
  if (K_MAJOR) {  // rows are m
    row = m_base + (lane % 16), chunk = kk * 2 + lane / 16;
  } else {        // rows are k (.trans)
    row = kk * 16 + (lane % 8) + 8 * (lane / 16), chunk = m_base / 8 + (lane / 8) % 2;
  }
}
template <bool K_MAJOR>
__device__ __forceinline__ void b_lane(int lane, int n_base, int kk, int& row, int& chunk) {
  if (K_MAJOR) {  // rows are n
    row = n_base + (lane % 8) + 8 * (lane / 16), chunk = kk * 2 + (lane / 8) % 2;
  } else {        // rows are k (.trans)
    row = kk * 16 + (lane % 8) + 8 * ((lane / 8) % 2), chunk = n_base / 8 + lane / 16;
  }
}

// --- the kernel body -----------------------------------------------------------------------------
template <typename Cfg, typename T, bool A_KMAJOR, bool B_KMAJOR>
struct Kernel {
  static constexpr int BM = Cfg::BLOCK_M, BN = Cfg::BLOCK_N, BK = Cfg::BLOCK_K;
  static constexpr int THREADS = 32 * Cfg::WARPS_M * Cfg::WARPS_N;
  static constexpr int WM = BM / Cfg::WARPS_M, WN = BN / Cfg::WARPS_N;
  static constexpr int MI = WM / 16, NI = WN / 8;  // mma tiles per warp
  static constexpr int STAGES = Cfg::STAGES;
  using TileA = Tile<T, BM, BK, A_KMAJOR, Cfg::SMEM>;
  using TileB = Tile<T, BN, BK, B_KMAJOR, Cfg::SMEM>;
  using CopyA = Copier<T, TileA, THREADS>;
  using CopyB = Copier<T, TileB, THREADS>;
  static constexpr int STAGE_ELEMS = TileA::ELEMS + TileB::ELEMS;
  // ROW_STORE: a warp's 16 staged rows of WN floats, 8 floats of padding a row so that the
  // fragments' 8-byte stores of a half-warp hit 32 different banks.
  static constexpr int ROW_LD = WN + 8;
  static constexpr int ROW_STORE_BYTES =
      Cfg::ROW_STORE ? Cfg::WARPS_M * Cfg::WARPS_N * 16 * ROW_LD * int(sizeof(float)) : 0;
  static constexpr int RING_BYTES = STAGES * STAGE_ELEMS * int(sizeof(T));
  static constexpr int SMEM_BYTES = RING_BYTES > ROW_STORE_BYTES ? RING_BYTES : ROW_STORE_BYTES;
  static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "warp tiles are whole mma tiles");
  static_assert((Cfg::COPY != Copy::reg_prefetch && Cfg::COPY != Copy::elem_prefetch) || STAGES == 2,
                "register prefetch double-buffers");
  static_assert(Cfg::COPY != Copy::async || STAGES >= 2, "cp.async needs a ring of buffers");
  static_assert(!Cfg::XOR_STEP || Cfg::SMEM == Smem::swizzled || Cfg::SMEM == Smem::tma_boxes,
                "XOR stepping walks the swizzle");

  __device__ __forceinline__ static T* tile_a(T* smem, int stage) {
    return smem + stage * STAGE_ELEMS;
  }
  __device__ __forceinline__ static T* tile_b(T* smem, int stage) {
    return smem + stage * STAGE_ELEMS + TileA::ELEMS;
  }

  // acc += A_tile * B_tile for one BLOCK_K slab held in shared memory. Fragments are
  // double-buffered in registers: those of step kk+1 are loaded before the mma of step kk, so
  // ldmatrix latency hides behind 32 mma instead of stalling each step.
  __device__ __forceinline__ static void mma_slab(const T* As, const T* Bs, int warp_m, int warp_n,
                                                  float (&acc)[MI][NI][4]) {
    const Frags f(As, Bs, warp_m, warp_n);
    uint32_t a[2][MI][4], b[2][NI][2];
    f.load(0, a[0], b[0]);
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
      if (kk + 1 < KSTEPS) f.load(kk + 1, a[(kk + 1) % 2], b[(kk + 1) % 2]);
      mma_step(a[kk % 2], b[kk % 2], acc);
    }
  }

  static constexpr int KSTEPS = BK / 16;

  template <int I, int J>
  __device__ __forceinline__ static void zero_acc(float (&acc)[I][J][4]) {
#pragma unroll
    for (int i = 0; i < I; ++i)
#pragma unroll
      for (int j = 0; j < J; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;
  }

  __device__ __forceinline__ static void mma_step(const uint32_t (&a)[MI][4],
                                                  const uint32_t (&b)[NI][2],
                                                  float (&acc)[MI][NI][4]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) ptx::mma_16x8x16<T>(acc[i][j], a[i], b[j]);
  }

  // This lane's ldmatrix addresses into one stage's tiles.
  struct Frags {
    uint32_t a_base, b_base;
    int lane, warp_m, warp_n;
    int a_off0[MI], b_off0[NI];  // element offsets at kk = 0 (used by XOR_STEP)

    __device__ __forceinline__ Frags(const T* As, const T* Bs, int wm, int wn)
        : a_base(ptx::smem_addr(As)), b_base(ptx::smem_addr(Bs)), lane(threadIdx.x % 32),
          warp_m(wm), warp_n(wn) {
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        int row, chunk;
        a_lane<A_KMAJOR>(lane, warp_m * WM + i * 16, 0, row, chunk);
        a_off0[i] = TileA::offset(row, chunk);
      }
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        int row, chunk;
        b_lane<B_KMAJOR>(lane, warp_n * WN + j * 8, 0, row, chunk);
        b_off0[j] = TileB::offset(row, chunk);
      }
    }

    __device__ __forceinline__ void load(int kk, uint32_t (&a)[MI][4], uint32_t (&b)[NI][2]) const {
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        ptx::ldmatrix_x4(a[i], a_base + 2 * a_offset(i, kk, lane, warp_m, a_off0[i]), !A_KMAJOR);
      }
#pragma unroll
      for (int j = 0; j < NI; j += (Cfg::B_X4 ? 2 : 1)) {
        const uint32_t addr = b_base + 2 * b_offset(j, kk, lane, warp_n, b_off0[j]);
        if constexpr (Cfg::B_X4) {
          uint32_t d[4];
          ptx::ldmatrix_x4(d, addr, !B_KMAJOR);
          b[j][0] = d[0], b[j][1] = d[1], b[j + 1][0] = d[2], b[j + 1][1] = d[3];
        } else {
          ptx::ldmatrix_x2(b[j], addr, !B_KMAJOR);
        }
      }
    }
  };

  // Fragment offsets for k-step kk. XOR_STEP: a K-major tile's chunk for kk is (chunk at kk = 0)
  // + 2kk, and since the kk = 0 chunk is 0 or 1 the sum is an OR, which commutes with the swizzle
  // XOR: offset(kk) = offset(0) ^ 16kk. An MN-major tile moves 16 rows per kk, which leaves the
  // swizzle pattern (row % 8) unchanged: offset(kk) = offset(0) + 16kk * LD.
  __device__ __forceinline__ static int a_offset(int i, int kk, int lane, int warp_m, int off0) {
    if constexpr (Cfg::XOR_STEP) {
      return A_KMAJOR ? (off0 ^ (16 * kk)) : off0 + 16 * kk * TileA::LD;
    } else {
      int row, chunk;
      a_lane<A_KMAJOR>(lane, warp_m * WM + i * 16, kk, row, chunk);
      return TileA::offset(row, chunk);
    }
  }
  __device__ __forceinline__ static int b_offset(int j, int kk, int lane, int warp_n, int off0) {
    if constexpr (Cfg::XOR_STEP) {
      return B_KMAJOR ? (off0 ^ (16 * kk)) : off0 + 16 * kk * TileB::LD;
    } else {
      int row, chunk;
      b_lane<B_KMAJOR>(lane, warp_n * WN + j * 8, kk, row, chunk);
      return TileB::offset(row, chunk);
    }
  }

  // Which output tile this block computes.
  __device__ __forceinline__ static void block_tile(int64_t M, int64_t N, int64_t& m0,
                                                    int64_t& n0) {
    if constexpr (Cfg::RASTER_GROUP > 0) {
      // Blocks run roughly in launch order: visiting RASTER_GROUP tile rows column by column keeps
      // the A rows of the group and a few B columns hot in L2 instead of streaming all of B.
      const int64_t tiles_m = ceil_div(M, BM), tiles_n = ceil_div(N, BN);
      const int64_t per_group = int64_t(Cfg::RASTER_GROUP) * tiles_n;
      const int64_t bid = blockIdx.x, group = bid / per_group;
      const int64_t first_m = group * Cfg::RASTER_GROUP;
      const int64_t rows =
          tiles_m - first_m < Cfg::RASTER_GROUP ? tiles_m - first_m : int64_t(Cfg::RASTER_GROUP);
      m0 = (first_m + (bid % per_group) % rows) * BM;
      n0 = ((bid % per_group) / rows) * BN;
    } else if constexpr (Cfg::SPLIT_K) {
      split_tile(M, BM, BN, m0, n0);  // row tiles fastest (common/split_k.cuh)
    } else {
      m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
    }
  }

  // acc = this block's tile (m0, n0) of A * B over its K tiles: all of them, or with SPLIT_K the
  // z-th of gridDim.z even shares.
  __device__ __forceinline__ static void mainloop(const Operand<T>& A, const Operand<T>& B,
                                                  T* smem, int warp_m, int warp_n, int64_t m0,
                                                  int64_t n0, float (&acc)[MI][NI][4]) {
    int t0 = 0, tiles = static_cast<int>(ceil_div(A.K, BK));
    if constexpr (Cfg::SPLIT_K) {
      int64_t first, count;
      split_share<!Cfg::SPLIT_REDUCE>(tiles, first, count);
      t0 = static_cast<int>(first), tiles = static_cast<int>(count);
    }
    mainloop_range(A, B, smem, warp_m, warp_n, m0, n0, t0, tiles, acc);
  }

  // acc = the tile (m0, n0) of A * B over K tiles t0 .. t0 + tiles - 1 (tiles >= 1). The ring is
  // drained and every warp past its last shared-memory read when it returns, so a caller may
  // run it again on the same buffers.
  __device__ __forceinline__ static void mainloop_range(const Operand<T>& A, const Operand<T>& B,
                                                        T* smem, int warp_m, int warp_n,
                                                        int64_t m0, int64_t n0, int t0, int tiles,
                                                        float (&acc)[MI][NI][4]) {
    const CopyA copy_a(A, m0);
    const CopyB copy_b(B, n0);

    zero_acc(acc);

    if constexpr (Cfg::COPY == Copy::scalar || Cfg::COPY == Copy::vec16) {
      // One buffer: copy, barrier, multiply, barrier (the next copy overwrites the tile).
      for (int t = 0; t < tiles; ++t) {
        const int64_t k0 = int64_t(t0 + t) * BK;
        if constexpr (Cfg::COPY == Copy::scalar) {
          CopyA::copy_scalar(A, k0, m0, tile_a(smem, 0));
          CopyB::copy_scalar(B, k0, n0, tile_b(smem, 0));
        } else {
          uint4 ra[CopyA::PER_THREAD], rb[CopyB::PER_THREAD];
          copy_a.load(A, k0, m0, ra);
          copy_b.load(B, k0, n0, rb);
          copy_a.store(tile_a(smem, 0), ra);
          copy_b.store(tile_b(smem, 0), rb);
        }
        __syncthreads();
        mma_slab(tile_a(smem, 0), tile_b(smem, 0), warp_m, warp_n, acc);
        __syncthreads();
      }
    } else if constexpr (Cfg::COPY == Copy::reg_prefetch || Cfg::COPY == Copy::elem_prefetch) {
      // Two buffers; tile t+1 travels global -> registers while tile t is multiplied, then
      // registers -> the other buffer. One barrier per K-step. elem_prefetch: element loads.
      constexpr bool ELEMS = Cfg::COPY == Copy::elem_prefetch;
      uint4 ra[CopyA::PER_THREAD], rb[CopyB::PER_THREAD];
      copy_a.template load<ELEMS>(A, int64_t(t0) * BK, m0, ra);
      copy_b.template load<ELEMS>(B, int64_t(t0) * BK, n0, rb);
      copy_a.store(tile_a(smem, 0), ra);
      copy_b.store(tile_b(smem, 0), rb);
      __syncthreads();
      for (int t = 0; t < tiles; ++t) {
        const bool more = t + 1 < tiles;
        if (more) {
          copy_a.template load<ELEMS>(A, int64_t(t0 + t + 1) * BK, m0, ra);
          copy_b.template load<ELEMS>(B, int64_t(t0 + t + 1) * BK, n0, rb);
        }
        mma_slab(tile_a(smem, t & 1), tile_b(smem, t & 1), warp_m, warp_n, acc);
        if (more) {  // the other buffer was last read in step t-1, finished before its barrier
          copy_a.store(tile_a(smem, (t + 1) & 1), ra);
          copy_b.store(tile_b(smem, (t + 1) & 1), rb);
        }
        __syncthreads();
      }
    } else {
      // cp.async ring of STAGES buffers, software-pipelined across tiles. Invariants: at the top
      // of tile t, tiles t .. t+STAGES-2 have been issued and tile t is in shared memory for
      // every thread; its kk = 0 fragments are already in registers. The refill at the top of
      // tile t goes to the buffer of tile t-1, which every warp finished reading before the
      // barrier of tile t-1's last k-step. That barrier sits between the last ldmatrix of a tile
      // and its last mma, so the tensor cores stay busy while the warps meet.
      // Chunks past M or N stay zero in every stage (copy_async skips them); the barrier after
      // the first tile's wait orders these stores before any fragment load.
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        copy_a.zero_past_mn(A, m0, tile_a(smem, s));
        copy_b.zero_past_mn(B, n0, tile_b(smem, s));
      }
      // A split rung's tile of at most 32 rows (a decode GEMM, or a flipped narrow one's B^T):
      // every block reads all of A, all of them near the same k-tile at once. Where A is MN-major
      // with rows that are not whole 32-byte sectors (8 or 24 columns of 2-byte elements: rows 16
      // or 48 bytes apart), a sector holds parts of two rows, and blocks in step queue on the
      // same sectors: there each block starts its run at its own k-tile (blockIdx.x mod tiles)
      // and wraps around. The order of the sums stays fixed by the grid.
      int rot = 0;
      if constexpr (!A_KMAJOR && Cfg::SPLIT_K && BM <= 32) {
        if ((A.ld * int64_t(sizeof(T))) % 32 != 0) {
          rot = static_cast<int>(blockIdx.x % static_cast<unsigned>(tiles));
        }
      }
      const auto kt = [&](int s) {  // the s-th k-tile of the run, from k-tile t0 + rot
        int i = s + rot;
        if (i >= tiles) i -= tiles;
        return int64_t(t0 + i) * BK;
      };
#pragma unroll
      for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) {
          copy_a.copy_async(A, kt(s), m0, tile_a(smem, s));
          copy_b.copy_async(B, kt(s), n0, tile_b(smem, s));
        }
        ptx::cp_async_commit();
      }
      ptx::cp_async_wait<STAGES - 2>();
      __syncthreads();
      uint32_t a[2][MI][4], b[2][NI][2];
      Frags(tile_a(smem, 0), tile_b(smem, 0), warp_m, warp_n).load(0, a[0], b[0]);
      for (int t = 0; t < tiles; ++t) {
        const int next = t + STAGES - 1;
        if (next < tiles) {
          copy_a.copy_async(A, kt(next), m0, tile_a(smem, next % STAGES));
          copy_b.copy_async(B, kt(next), n0, tile_b(smem, next % STAGES));
        }
        ptx::cp_async_commit();
        const Frags cur(tile_a(smem, t % STAGES), tile_b(smem, t % STAGES), warp_m, warp_n);
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
          if (kk + 1 < KSTEPS) {
            cur.load(kk + 1, a[(kk + 1) % 2], b[(kk + 1) % 2]);
          } else {
            ptx::cp_async_wait<STAGES - 2>();  // tile t+1 has landed (for this thread) ...
            __syncthreads();                   // ... for all, and nobody reads tile t any more
            if (t + 1 < tiles) {
              Frags(tile_a(smem, (t + 1) % STAGES), tile_b(smem, (t + 1) % STAGES), warp_m,
                    warp_n)
                  .load(0, a[(kk + 1) % 2], b[(kk + 1) % 2]);
            }
          }
          mma_step(a[kk % 2], b[kk % 2], acc);
        }
      }
      ptx::cp_async_wait<0>();
    }
  }

  // The block's tile and its mainloop, then then(smem, warp_m, warp_n, m0, n0, acc).
  template <typename F>
  __device__ __forceinline__ static void multiply(const Operand<T>& A, const Operand<T>& B,
                                                  F&& then) {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    const int warp = threadIdx.x / 32;
    const int warp_m = warp / Cfg::WARPS_N, warp_n = warp % Cfg::WARPS_N;
    int64_t m0, n0;
    block_tile(A.MN, B.MN, m0, n0);
    float acc[MI][NI][4];
    mainloop(A, B, reinterpret_cast<T*>(smem_raw), warp_m, warp_n, m0, n0, acc);
    then(smem_raw, warp_m, warp_n, m0, n0, acc);
  }

  __device__ __forceinline__ static void run(Operand<T> A, Operand<T> B, T* C, int64_t ldc,
                                             float alpha, float beta) {
    static_assert(!Cfg::SPLIT_REDUCE, "a SPLIT_REDUCE rung runs run_partials");
    multiply(A, B, [&](unsigned char* smem, int warp_m, int warp_n, int64_t m0, int64_t n0,
                       const float (&acc)[MI][NI][4]) {
      if constexpr (Cfg::SPLIT_K) {
        __syncthreads();  // every warp is done with the ring: it holds the partial tile now
        split_epilogue(reinterpret_cast<float*>(smem), C, ldc, A.MN, B.MN, m0, n0, warp_m,
                       warp_n, acc, alpha, beta);
      } else if constexpr (Cfg::ROW_STORE) {
        __syncthreads();  // every warp is done with the ring: it stages rows of C now
        row_epilogue(reinterpret_cast<float*>(smem), C, ldc, A.MN, B.MN, m0, n0, warp_m, warp_n,
                     acc, alpha, beta);
      } else {
        epilogue(C, ldc, A.MN, B.MN, m0, n0, warp_m, warp_n, acc, alpha, beta);
      }
    });
  }

  // STREAM_K: the block's run of k-tiles across tiles (common/split_k.cuh: StreamK), one segment
  // after another through mainloop_range. A segment that stops short of its tile's last k-tile
  // publishes its fp32 partial tile (float4 q = i * NI + j of a thread: acc[i][j]) in the block's
  // slot of `partials` and raises the slot's flag; the segment that ends a tile adds the slots of
  // the tile's earlier groups in group order (waiting for each flag, lowering it for the next
  // launch) and stores alpha * sum + beta * C through split_epilogue, a cluster of one (C
  // row-major, or column-major where ldc < 0: split_ldc). The order of the sums is fixed by the
  // grid, so repeated calls give the same bits.
  __device__ __forceinline__ static void run_stream_k(Operand<T> A, Operand<T> B, T* C,
                                                      int64_t ldc, float alpha, float beta,
                                                      float* partials, int* flags) {
    static_assert(Cfg::STREAM_K && Cfg::SPLIT_K && !Cfg::SPLIT_REDUCE, "a stream-K rung");
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T* const smem = reinterpret_cast<T*>(smem_raw);
    const int warp = threadIdx.x / 32, t = threadIdx.x;
    const int warp_m = warp / Cfg::WARPS_N, warp_n = warp % Cfg::WARPS_N;
    constexpr int QUADS = MI * NI;  // float4s of the partial tile per thread
    ptx::griddepcontrol_wait();  // the previous kernel's writes are visible from here on
    const StreamK<BM, BN, BK> sched(A.MN, B.MN, A.K);
    const auto sync = [] { __syncthreads(); };
    for (int seg = 0; seg < sched.segments(); ++seg) {
      int64_t c;
      int m0, n0, k0, k1;
      sched.segment(seg, c, m0, n0, k0, k1);
      float acc[MI][NI][4];
      mainloop_range(A, B, smem, warp_m, warp_n, m0, n0, k0, k1 - k0, acc);
      float* const flat = &acc[0][0][0];
      if (k1 < sched.k_tiles) {  // a contribution: the block's slot
        const int64_t slot = blockIdx.x;
        publish_partial<QUADS, THREADS>(
            partials + slot * (BM * BN), flags + slot, t,
            [&](int q) { return make_float4(flat[4 * q], flat[4 * q + 1], flat[4 * q + 2], flat[4 * q + 3]); },
            sync);
        continue;
      }
      if (k0 > 0) {  // the tile's blocks of earlier groups, in order
        for (int g = sched.first_group(c); g < sched.group; ++g) {
          const int64_t slot = sched.slot(g);
          add_partial<QUADS, THREADS>(
              partials + slot * (BM * BN), flags + slot, t,
              [&](int q, float4 v) {
                flat[4 * q] += v.x, flat[4 * q + 1] += v.y, flat[4 * q + 2] += v.z,
                    flat[4 * q + 3] += v.w;
              },
              sync);
        }
      }
      __syncthreads();  // every warp is done with the ring: it holds the tile's sum now
      split_epilogue(reinterpret_cast<float*>(smem), C, ldc, A.MN, B.MN, m0, n0, warp_m, warp_n,
                     acc, alpha, beta);
    }
  }

  // SPLIT_REDUCE: this block's fp32 partial tile, row-major BM x BN, into slot
  // blockIdx.x * gridDim.z + blockIdx.z of `partials` (a lane's pairs of columns as 8-byte stores,
  // past L1), for sum_partial_tiles_kernel.
  __device__ __forceinline__ static void run_partials(Operand<T> A, Operand<T> B,
                                                      float* partials) {
    static_assert(Cfg::SPLIT_K && Cfg::SPLIT_REDUCE, "a split summed by a second kernel");
    multiply(A, B, [&](unsigned char*, int warp_m, int warp_n, int64_t, int64_t,
                       const float (&acc)[MI][NI][4]) {
      float* const slot =
          partials + (int64_t(blockIdx.x) * gridDim.z + blockIdx.z) * int64_t(BM * BN);
      each_pair(warp_m, warp_n, acc, [&](int row, int col, float v0, float v1) {
        __stcg(reinterpret_cast<float2*>(slot + row * BN + col), make_float2(v0, v1));
      });
    });
  }

  // f(row, col, v0, v1) for each pair of columns (col, col + 1) of a row of the block's tile that
  // this lane holds: per mma tile, columns (2t, 2t+1) of rows g and g+8.
  template <typename F>
  __device__ __forceinline__ static void each_pair(int warp_m, int warp_n,
                                                   const float (&acc)[MI][NI][4], F&& f) {
    const int lane = threadIdx.x % 32, g = lane / 4, tq = lane % 4;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          f(warp_m * WM + i * 16 + g + 8 * h, warp_n * WN + j * 8 + 2 * tq, acc[i][j][2 * h],
            acc[i][j][2 * h + 1]);
        }
  }

  // SPLIT_K: this block's fp32 partial tile goes to shared memory (the ring, free by now), and
  // the cluster sums the partial tiles of its K shares in rank order (common/split_k.cuh).
  static constexpr int RED_LD = BN + 4;  // floats per partial-tile row (16-byte rows, offset banks)
  static constexpr int RED_BYTES = BM * RED_LD * int(sizeof(float));
  static_assert(!Cfg::SPLIT_K || RED_BYTES <= SMEM_BYTES, "the partial tile fits in the ring");

  __device__ __forceinline__ static void split_epilogue(float* red, T* C, int64_t ldc, int64_t M,
                                                        int64_t N, int64_t m0, int64_t n0,
                                                        int warp_m, int warp_n,
                                                        const float (&acc)[MI][NI][4],
                                                        float alpha, float beta) {
    each_pair(warp_m, warp_n, acc, [&](int row, int col, float v0, float v1) {
      *reinterpret_cast<float2*>(red + row * RED_LD + col) = make_float2(v0, v1);
    });
    cluster_reduce_store<BM, BN, RED_LD, THREADS>(red, C, ldc, M, N, m0, n0, alpha, beta);
  }

  // ROW_STORE: C = alpha * acc + beta * C (fp32, rounded once), 16 rows of the warp's tile at a
  // time: the fragments go to the warp's own rows of shared memory, then each row is read back
  // and stored by consecutive lanes on consecutive columns, so a warp's store covers 64 bytes of
  // one row (whole sectors, whatever C's alignment) where a fragment store touches 8 rows.
  __device__ __forceinline__ static void row_epilogue(float* smem, T* C, int64_t ldc, int64_t M,
                                                      int64_t N, int64_t m0, int64_t n0,
                                                      int warp_m, int warp_n,
                                                      const float (&acc)[MI][NI][4], float alpha,
                                                      float beta) {
    const int lane = threadIdx.x % 32, g = lane / 4, tq = lane % 4;
    float* const rows = smem + (threadIdx.x / 32) * 16 * ROW_LD;
    const int64_t col0 = n0 + warp_n * WN;
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          *reinterpret_cast<float2*>(rows + (g + 8 * h) * ROW_LD + j * 8 + 2 * tq) =
              make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        }
      __syncwarp();
      const int64_t row0 = m0 + warp_m * WM + i * 16;
      for (int r = 0; r < 16 && row0 + r < M; ++r) {
        T* const out = C + (row0 + r) * ldc + col0;
#pragma unroll
        for (int c = lane; c < WN; c += 32) {
          if (col0 + c >= N) break;
          const float v = alpha * rows[r * ROW_LD + c];
          out[c] = T(beta != 0.0f ? fmaf(beta, float(out[c]), v) : v);
        }
      }
      __syncwarp();  // the rows are read before the next 16 overwrite them
    }
  }

  // C = alpha * acc + beta * C in fp32, rounded once to T. A lane holds, per mma tile, columns
  // (2t, 2t+1) of rows g and g+8; pairs are written as one 4-byte store when the rung's alignment
  // guarantees it, single elements at the right edge.
  __device__ __forceinline__ static void epilogue(T* C, int64_t ldc, int64_t M, int64_t N,
                                                  int64_t m0, int64_t n0, int warp_m, int warp_n,
                                                  const float (&acc)[MI][NI][4], float alpha,
                                                  float beta) {
    each_pair(warp_m, warp_n, acc, [&](int r, int c, float v0, float v1) {
      const int64_t row = m0 + r, col = n0 + c;
      if (row >= M) return;
      // Rungs with 16-byte aligned rows store pairs; the scalar-copy rung any alignment.
      store_pair(C + row * ldc + col, alpha * v0, alpha * v1, beta,
                 Cfg::COPY != Copy::scalar && col + 1 < N, N - col);
    });
  }
};

// The kernel table's figure: the most shared memory any layout's instantiation takes, so that
// the one check of a call (runnable_problem, before the launch) covers every layout.
template <typename Cfg>
int most_smem() {
  return std::max({Kernel<Cfg, __half, true, true>::SMEM_BYTES,
                   Kernel<Cfg, __half, true, false>::SMEM_BYTES,
                   Kernel<Cfg, __half, false, true>::SMEM_BYTES,
                   Kernel<Cfg, __half, false, false>::SMEM_BYTES});
}

// Host side: one instantiation per (A, B) layout; KernelFor(a_kmajor, b_kmajor) returns the
// rung's __global__ wrapper for that pair.
template <typename Cfg, typename T, typename KernelFor>
void launch(const GemmArgs& a, const char* name, KernelFor kernel_for) {
  dim3 grid;
  if constexpr (Cfg::RASTER_GROUP > 0) {
    const int64_t tiles = ceil_div(a.M, Cfg::BLOCK_M) * ceil_div(a.N, Cfg::BLOCK_N);
    if (tiles > 2147483647) throw std::runtime_error(std::string(name) + ": too many tiles");
    grid = dim3(static_cast<unsigned>(tiles));
  } else if constexpr (Cfg::SPLIT_K && !Cfg::STREAM_K) {  // STREAM_K: StreamK::grid below
    grid = split_grid(a.M, a.N, Cfg::BLOCK_M, Cfg::BLOCK_N, name);
  } else if constexpr (!Cfg::SPLIT_K) {
    grid = tile_grid(a, Cfg::BLOCK_M, Cfg::BLOCK_N, name);
  }
  // Shared memory was checked once, before the launch, against the kernel table's figure (the
  // most any layout takes: most_smem).
  const int device = active_device();
  const DeviceProps& props = device_props(device);
  with_kmajor(a, [&](auto ak, auto bk) {
    using K = Kernel<Cfg, T, decltype(ak)::value, decltype(bk)::value>;
    auto kernel = kernel_for(ak, bk);
    set_smem(kernel, K::SMEM_BYTES);
    if constexpr (Cfg::STREAM_K) {
      // As many groups as the blocks the SMs hold at once (StreamK: an owner waits for blocks of
      // earlier groups, which must be resident); a slot of BM x BN floats and a flag for every
      // block but the last group's (blocks are numbered group by group; the last group never
      // contributes).
      const int per_sm =
          resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), K::THREADS, K::SMEM_BYTES);
      const dim3 sk = StreamK<Cfg::BLOCK_M, Cfg::BLOCK_N, Cfg::BLOCK_K>::grid(a, name, per_sm);
      const size_t slots = size_t(sk.x) - size_t(ceil_div(a.M, int64_t(Cfg::BLOCK_M)));
      const Scratch scratch = stream_scratch(device, a.stream, slots * sizeof(int),
                                             slots * Cfg::BLOCK_M * Cfg::BLOCK_N * sizeof(float));
      Launch l{sk, dim3(K::THREADS), K::SMEM_BYTES, a.stream};
      l.pdl = props.cc >= 90;
      fastgemm::launch(kernel, l, name, operand_a<T>(a), operand_b<T>(a), static_cast<T*>(a.C),
                       split_ldc(a), a.alpha, a.beta, static_cast<float*>(scratch.data),
                       static_cast<int*>(scratch.flags));
    } else if constexpr (Cfg::SPLIT_REDUCE) {
      const int per_sm =
          resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), K::THREADS, K::SMEM_BYTES);
      const int split = reduce_split_count(
          grid.x, ceil_div(a.K, Cfg::BLOCK_K), int64_t(launch_sms(device)) * std::max(per_sm, 1),
          REDUCE_MOST, Cfg::SPLIT_MIN_TILES);
      constexpr size_t tile_floats = size_t(Cfg::BLOCK_M) * Cfg::BLOCK_N;
      const Scratch scratch = stream_scratch(device, a.stream, 0,
                                             size_t(grid.x) * split * tile_floats * sizeof(float));
      Launch l{dim3(grid.x, 1, static_cast<unsigned>(split)), dim3(K::THREADS), K::SMEM_BYTES,
               a.stream};
      l.pdl = props.cc >= 90;
      fastgemm::launch(kernel, l, name, operand_a<T>(a), operand_b<T>(a),
                       static_cast<float*>(scratch.data));
      launch_sum_partials<Cfg::BLOCK_M, Cfg::BLOCK_N>(
          static_cast<const float*>(scratch.data), grid.x, split, static_cast<T*>(a.C), a.ldc,
          a.M, a.N, a.alpha, a.beta, a.c_col_major, a.stream, props.cc, name);
    } else if constexpr (Cfg::SPLIT_K) {
      const int sms = launch_sms(device);
      const int64_t k_tiles = ceil_div(a.K, Cfg::BLOCK_K);
      const void* k = reinterpret_cast<const void*>(kernel);
      const int split = split_fill(
          k, K::THREADS, K::SMEM_BYTES, grid.x, k_tiles, Cfg::SPLIT_MIN_TILES,
          split_count(k, K::THREADS, K::SMEM_BYTES, grid.x, k_tiles, Cfg::SPLIT_MIN_TILES,
                      Cfg::SPLIT_BLOCKS_PER_SM, sms),
          sms);
      launch_split(kernel, grid, K::THREADS, K::SMEM_BYTES, a.stream, split, props.cc, name,
                   operand_a<T>(a), operand_b<T>(a), static_cast<T*>(a.C), split_ldc(a), a.alpha,
                   a.beta);
    } else {
      fastgemm::launch(kernel, Launch{grid, dim3(K::THREADS), K::SMEM_BYTES, a.stream}, name,
                       operand_a<T>(a), operand_b<T>(a), static_cast<T*>(a.C), a.ldc, a.alpha,
                       a.beta);
    }
  });
}

}  // namespace fastgemm::hgemm

// Defines the rung's __global__ wrapper (its own name in profiles and SASS) and its host entry
// points for fp16 and bf16; a SPLIT_REDUCE rung's wrapper runs run_partials into the scratch, a
// STREAM_K rung's run_stream_k with the scratch's slots and flags.
#define FASTGEMM_HGEMM_RUNG(NAME, CFG)                                                          \
  namespace fastgemm {                                                                          \
  namespace {                                                                                   \
  template <typename T, bool AK, bool BK>                                                       \
  __global__ void __launch_bounds__(hgemm::Kernel<CFG, T, AK, BK>::THREADS, CFG::MIN_BLOCKS)   \
      NAME##_kernel(hgemm::Operand<T> A, hgemm::Operand<T> B, T* C, int64_t ldc, float alpha,   \
                    float beta) {                                                               \
    hgemm::Kernel<CFG, T, AK, BK>::run(A, B, C, ldc, alpha, beta);                              \
  }                                                                                             \
  }                                                                                             \
  }                                                                                             \
  FASTGEMM_HGEMM_ENTRY_POINTS(NAME, CFG)
#define FASTGEMM_HGEMM_REDUCE_RUNG(NAME, CFG)                                                   \
  namespace fastgemm {                                                                          \
  namespace {                                                                                   \
  template <typename T, bool AK, bool BK>                                                       \
  __global__ void __launch_bounds__(hgemm::Kernel<CFG, T, AK, BK>::THREADS, CFG::MIN_BLOCKS)   \
      NAME##_kernel(hgemm::Operand<T> A, hgemm::Operand<T> B, float* partials) {                \
    hgemm::Kernel<CFG, T, AK, BK>::run_partials(A, B, partials);                                \
  }                                                                                             \
  }                                                                                             \
  }                                                                                             \
  FASTGEMM_HGEMM_ENTRY_POINTS(NAME, CFG)
#define FASTGEMM_HGEMM_STREAM_RUNG(NAME, CFG)                                                   \
  namespace fastgemm {                                                                          \
  namespace {                                                                                   \
  template <typename T, bool AK, bool BK>                                                       \
  __global__ void __launch_bounds__(hgemm::Kernel<CFG, T, AK, BK>::THREADS, CFG::MIN_BLOCKS)   \
      NAME##_kernel(hgemm::Operand<T> A, hgemm::Operand<T> B, T* C, int64_t ldc, float alpha,   \
                    float beta, float* partials, int* flags) {                                  \
    hgemm::Kernel<CFG, T, AK, BK>::run_stream_k(A, B, C, ldc, alpha, beta, partials, flags);    \
  }                                                                                             \
  }                                                                                             \
  }                                                                                             \
  FASTGEMM_HGEMM_ENTRY_POINTS(NAME, CFG)
#define FASTGEMM_HGEMM_ENTRY_POINTS(NAME, CFG)                                                  \
  namespace fastgemm {                                                                          \
  namespace {                                                                                   \
  template <typename T>                                                                         \
  void NAME##_launch(const GemmArgs& a) {                                                       \
    hgemm::launch<CFG, T>(a, #NAME, [](auto ak, auto bk) {                                      \
      return NAME##_kernel<T, decltype(ak)::value, decltype(bk)::value>;                        \
    });                                                                                         \
  }                                                                                             \
  }                                                                                             \
  void NAME##_f16(const GemmArgs& a) { NAME##_launch<__half>(a); }                              \
  int NAME##_smem() { return hgemm::most_smem<CFG>(); }                                      \
  void NAME##_bf16(const GemmArgs& a) { NAME##_launch<__nv_bfloat16>(a); }                      \
  }
