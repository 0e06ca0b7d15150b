// split_k.cuh — K split across a thread-block cluster, with a deterministic reduction: the part
// every split-K kernel (HGEMM and SGEMM specialists) shares.
//
// Contract. A split-K launch has grid z = S and cluster dims (1, 1, S): the S blocks of one
// output tile form a cluster, block z takes the z-th of S even shares of the K work
// (split_share), and each leaves its fp32 partial tile, BM x BN at a row pitch of LD floats, in
// its own shared memory. cluster_reduce_store then
//   1. meets its peers at a cluster barrier (release / acquire: every partial tile is written),
//   2. sums, for its share of the tile's 4-column groups (rank r takes groups u with
//      u mod (S * THREADS) in [r * THREADS, (r + 1) * THREADS), counted row by row from the
//      first row it stores: skip_rows, where another tile stores the rows before), the S
//      partial tiles in rank order 0..S-1 through distributed shared memory, and writes
//      alpha * sum + beta * C (C read only when beta != 0; rows >= M and columns >= N are not
//      written). C is row-major with leading dimension ldc, or, where ldc < 0, column-major with
//      leading dimension -ldc (split_ldc): then rank r takes 4x4 blocks (4-row groups fastest),
//      summed as four 4-column groups and stored as four 4-row groups, one per column,
//   3. meets its peers again, so that no block leaves (and frees its shared memory) while a peer
//      may still read it.
// The order of every sum is fixed by the launch, so repeated calls give the same bits.
// Dependent launch: on sm_90 launch_split allows programmatic stream serialisation (the launch
// is cheaper for the host, and the driver may stage it while the previous kernel runs), and
// split_share, which a split kernel calls before it touches global memory, waits there for the
// previous kernel of the stream (griddepcontrol.wait): stream order holds as for any launch. S = 1
// (no split, or a GPU without clusters: before sm_90 every block is a cluster of one) runs the
// same code over the block's own tile. Code compiled for an architecture without clusters traps
// if launched split. Host: split_grid, split_count (S), split_fill (S = 2 where S = 1 leaves SMs
// idle), launch_split.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/epilogue.cuh"
#include "common/gemm_args.h"
#include "common/launch.cuh"
#include "common/ptx.cuh"
#include "common/runtime.h"
#include "common/split_model.h"

namespace fastgemm {

// Units [first, first + count) of `total` units of K work that block z of gridDim.z takes.
// CLUSTER: the shares of a tile meet in a cluster, which code for an architecture before sm_90
// does not have (a split there would leave partial sums in C: it traps); a split whose partial
// tiles meet in global memory runs on any architecture.
template <bool CLUSTER = true>
__device__ __forceinline__ void split_share(int64_t total, int64_t& first, int64_t& count) {
#if __CUDA_ARCH__ < 900
  if (CLUSTER && gridDim.z != 1) __trap();
#endif
  ptx::griddepcontrol_wait();  // the previous kernel's writes are visible from here on
  first = total * blockIdx.z / gridDim.z;
  count = total * (blockIdx.z + 1) / gridDim.z - first;
}

// Steps 1-3 of the contract, by THREADS threads of the block (threads FIRST .. FIRST + THREADS - 1;
// any others only meet the two cluster barriers, ptx::cluster_sync twice) whose partial tile is
// `red`. skip_rows (row-major C only): the tile's first rows, which another tile stores (an edge
// tile moved inside the output).
template <int BM, int BN, int LD, int THREADS, int FIRST = 0, bool VEC = true, typename T>
__device__ __forceinline__ void cluster_reduce_store(const float* red, T* C, int64_t ldc,
                                                     int64_t M, int64_t N, int64_t m0,
                                                     int64_t n0, float alpha, float beta,
                                                     int skip_rows = 0) {
  static_assert(BN % 4 == 0 && LD % 4 == 0, "4-column groups of 16-byte aligned rows");
  ptx::cluster_sync();
  const uint32_t rank = ptx::cluster_ctarank(), ranks = ptx::cluster_nctarank();
  const int rows = M - m0 < BM ? static_cast<int>(M - m0) : BM;
  constexpr int GROUPS = BN / 4;  // 4-column groups per row
  const int thread = static_cast<int>(threadIdx.x) - FIRST;
  if (ldc >= 0) {
    const int first = skip_rows * GROUPS + static_cast<int>(rank) * THREADS + thread;
    for (int u = first; u < rows * GROUPS; u += ranks * THREADS) {
      const int row = u / GROUPS, col = (u % GROUPS) * 4;
      const float* mine = red + row * LD + col;
      float4 sum = ptx::ld_cluster_f32x4(mine, 0);
      for (uint32_t q = 1; q < ranks; ++q) {
        const float4 v = ptx::ld_cluster_f32x4(mine, q);
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
      }
      const int64_t c = n0 + col;
      if (c < N) store_quad<T, VEC>(C + (m0 + row) * ldc + c, sum, alpha, beta, N - c);
    }
  } else {  // column-major C: C(i, j) at C[j * -ldc + i]
    // A 4x4 block per thread: four 16-byte loads per rank (as the row-major path), transposed
    // in registers into four 4-row stores, one per column. Row groups fastest, so that a warp's
    // stores run down a column.
    static_assert(BM % 4 == 0, "4-row groups within the tile");
    const int cols = N - n0 < BN ? static_cast<int>(N - n0) : BN;
    const int row_groups = (rows + 3) / 4, col_groups = (cols + 3) / 4;
    for (int u = rank * THREADS + thread; u < col_groups * row_groups; u += ranks * THREADS) {
      const int col = (u / row_groups) * 4, row = (u % row_groups) * 4;
      const float* mine = red + row * LD + col;  // rows or columns past the edge: read, not stored
      float4 e[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) e[i] = ptx::ld_cluster_f32x4(mine + i * LD, 0);
      for (uint32_t q = 1; q < ranks; ++q) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float4 v = ptx::ld_cluster_f32x4(mine + i * LD, q);
          e[i].x += v.x, e[i].y += v.y, e[i].z += v.z, e[i].w += v.w;
        }
      }
      T* const out = C + (n0 + col) * -ldc + m0 + row;
      const int64_t left = rows - row;
      store_quad<T, VEC>(out, make_float4(e[0].x, e[1].x, e[2].x, e[3].x), alpha, beta, left);
      if (col + 1 < cols) {
        store_quad<T, VEC>(out - ldc, make_float4(e[0].y, e[1].y, e[2].y, e[3].y), alpha, beta, left);
      }
      if (col + 2 < cols) {
        store_quad<T, VEC>(out - 2 * ldc, make_float4(e[0].z, e[1].z, e[2].z, e[3].z), alpha, beta, left);
      }
      if (col + 3 < cols) {
        store_quad<T, VEC>(out - 3 * ldc, make_float4(e[0].w, e[1].w, e[2].w, e[3].w), alpha, beta, left);
      }
    }
  }
  ptx::cluster_sync();
}

// --- the same split with the partial tiles meeting in global memory (sgemm v15, and the
// publishing side of the bands below). The S blocks of a tile need not be a cluster: blocks
// z < S-1 hand their partial tiles to block S-1, the tile's owner, through a slot of a scratch
// buffer each, and the owner adds them in the order z = 0 .. S-2, so repeated calls give the same
// bits. A slot is written and read by a group of THREADS threads (a block, or a warpgroup) with
// the same thread t holding the same COUNT float4s of the partial tile on both sides (float4 i of
// thread t at i * THREADS + t: each i one coalesced sweep); sync() is the group's barrier.
// Contributors never wait; an owner waits only for blocks dispatched before it. The flags start
// at 0 and add_partial leaves them 0 (the bands: band_done).
template <int COUNT, int THREADS, typename Get>
__device__ __forceinline__ void store_partial(float* slot, int t, Get get) {
  float4* out = reinterpret_cast<float4*>(slot) + t;
#pragma unroll
  for (int i = 0; i < COUNT; ++i) __stcg(out + i * THREADS, get(i));
}
template <int COUNT, int THREADS, typename Get, typename Sync>
__device__ __forceinline__ void publish_partial(float* slot, int* flag, int t, Get get, Sync sync) {
  store_partial<COUNT, THREADS>(slot, t, get);
  __threadfence();
  sync();  // every thread's part is written
  if (t == 0) ptx::st_release_gpu(flag, 1);
}
template <int COUNT, int THREADS, typename Add, typename Sync>
__device__ __forceinline__ void add_partial(const float* slot, int* flag, int t, Add add,
                                            Sync sync) {
  if (t == 0) {
    while (ptx::ld_acquire_gpu(flag) == 0) __nanosleep(32);
    *flag = 0;  // nothing else reads it in this launch; the next one starts from 0
  }
  sync();  // the partial tile is visible from here on
  const float4* in = reinterpret_cast<const float4*>(slot) + t;
#pragma unroll
  for (int i = 0; i < COUNT; ++i) add(i, __ldcg(in + i * THREADS));
}

// --- helpers: a tile's last blocks sum it a band each (hopper/split_global.cuh). The S members
// of a tile (blocks z = 0 .. S-1, or one warpgroup of each) publish their partial tiles in slots
// (publish_partial). Members z < S - H then leave, as contributors did; each of the last H, the
// helpers, sums its band (1 / H of the tile) over all S slots and stores it. One owner summing the
// whole tile read S - 1 slots at one SM's L2 bandwidth while the other SMs idled; H helpers each
// read S / H slots' worth, and the contributors still leave early. A helper may wait for the
// other helpers' flags only where every helper has started: a started member runs to its publish
// without waiting for any block, so the wait ends (a contributor, dispatched before the helpers,
// is waited for as an owner waited). The helpers' state is two words, zero between launches:
// `word` counts the started helpers (bits 16 and up) and holds the bands left to the last helper
// to start (bit b: helper b was through while a helper had not started, and did not wait), and
// `done` counts the members through.
// `word` changes only by atomics, so every helper either sees all H started or leaves its band
// to the last starter, who learns of it when it starts. The bits of a sum do not depend on who
// adds it (band_sums), so the result is the same on every call, contended or not.

// A helper starts (before it reads its share of the operands): the word before it (band_claim).
__device__ __forceinline__ unsigned band_start(unsigned* word) {
  return atomicAdd(word, 1u << 16);
}
// After helper b (of H) has published its partial tile: the bands it sums, as bits (0: it leaves
// its band to the last starter and must not wait). `start` is band_start's value.
__device__ __forceinline__ unsigned band_claim(unsigned* word, unsigned start, int helpers, int b) {
  unsigned seen = *reinterpret_cast<volatile unsigned*>(word);
  for (;;) {
    if (static_cast<int>(seen >> 16) == helpers) {  // every helper has started: wait, sum band b
      // and, as the last to start, the bands left before it started (none can be left after).
      return (1u << b) | (static_cast<int>(start >> 16) == helpers - 1 ? start & 0xffffu : 0u);
    }
    const unsigned before = atomicCAS(word, seen, seen | (1u << b));
    if (before == seen) return 0u;
    seen = before;
  }
}
// Thread t of a group of THREADS threads waits for the flags of slots t, t + THREADS, ... < n (a
// barrier of the group must follow before any slot is read).
template <int THREADS>
__device__ __forceinline__ void band_wait(const int* flags, int n, int t) {
  for (int q = t; q < n; q += THREADS) {
    while (ptx::ld_acquire_gpu(flags + q) == 0) __nanosleep(32);
  }
}
// One thread of a member that is through (its flag waits behind a barrier of its group): the
// last of the S members through returns the tile's n flags and its state to zero for the next
// launch.
__device__ __forceinline__ void band_done(int* flags, int n, unsigned* word, int* done, int split) {
  __threadfence();
  if (atomicAdd(done, 1) != split - 1) return;
  __threadfence();
  for (int q = 0; q < n; ++q) flags[q] = 0;
  *word = 0u, *done = 0;
}
// Band b of H of a partial tile of COUNT float4 a thread (band_sums): float4s i0 .. i1 - 1.
__device__ __forceinline__ void band_range(int count, int b, int helpers, int& i0, int& i1) {
  i0 = count * b / helpers, i1 = count * (b + 1) / helpers;
}
// band_sums_of: sums of float4s i0 .. i1 - 1 of thread t over the S slots (at `first`, `stride`
// floats apart, written by publish_partial for groups of THREADS threads), each in the order
// S-1, 0, .., S-2 whoever adds it (as an owner z = S-1 adding the others to its registers did);
// out(i, sum) takes each. U float4s of QMAX >= S slots are loaded before any is added, so that a
// band costs few round trips to L2.
template <int THREADS, int U, int QMAX, typename Out>
__device__ __forceinline__ void band_sums_of(const float* first, int64_t stride, int split, int i0,
                                          int i1, int t, Out out) {
  const float4* p = reinterpret_cast<const float4*>(first) + t;
  const int64_t step = stride / 4;
#pragma unroll 1
  for (int i = i0; i < i1; i += U) {
    float4 v[U][QMAX];  // v[u][k]: slot S-1 for k = 0, else slot k - 1
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < QMAX; ++k)
        if (i + u < i1 && k < split) {
          v[u][k] = __ldcg(p + (i + u) * THREADS + (k == 0 ? split - 1 : k - 1) * step);
        }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (i + u >= i1) break;
      float4 sum = v[u][0];
#pragma unroll
      for (int k = 1; k < QMAX; ++k)
        if (k < split) {
          sum.x += v[u][k].x, sum.y += v[u][k].y, sum.z += v[u][k].z, sum.w += v[u][k].w;
        }
      out(i + u, sum);
    }
  }
}
// band_sums_of with 16 float4s in flight a thread, for any S <= 16.
template <int THREADS, typename Out>
__device__ __forceinline__ void band_sums(const float* first, int64_t stride, int split, int i0,
                                          int i1, int t, Out out) {
  if (split <= 4) {
    band_sums_of<THREADS, 4, 4>(first, stride, split, i0, i1, t, out);
  } else if (split <= 8) {
    band_sums_of<THREADS, 2, 8>(first, stride, split, i0, i1, t, out);
  } else {
    band_sums_of<THREADS, 1, 16>(first, stride, split, i0, i1, t, out);
  }
}

// The ldc a split kernel takes (cluster_reduce_store): C's leading dimension, negated where the
// caller asks for a column-major C (GemmArgs::c_col_major).
inline int64_t split_ldc(const GemmArgs& a) { return a.c_col_major ? -a.ldc : a.ldc; }

// --- host --------------------------------------------------------------------------------------

// How many blocks share one output tile's K work: the largest S <= 8 (the portable cluster size)
// that leaves each block at least `min_units` units of K work, keeps the grid within
// blocks_per_sm blocks per SM, and lets all `tiles` clusters of S be resident at once (one wave);
// 1 where the kernel cannot run in clusters (resident_split_clusters). FASTGEMM_DEV_SPLIT_K=<n>
// (dev_split_override, common/split_model.h) fixes S within those limits but the residency one.
inline int split_count(const void* kernel, int threads, int smem, int64_t tiles, int64_t k_units,
                       int64_t min_units, int blocks_per_sm, int sm_count) {
  const int fixed = dev_split_override();
  if (tiles <= 0) return 1;
  const int64_t most = std::min<int64_t>(8, k_units / std::max<int64_t>(min_units, 1));
  if (fixed > 0) {
    const int s = static_cast<int>(std::min<int64_t>(fixed, most));
    return s > 1 && resident_split_clusters(kernel, s, threads, smem) > 0 ? s : 1;
  }
  for (int64_t s = std::min<int64_t>(most, int64_t(blocks_per_sm) * sm_count / tiles); s > 1;
       --s) {
    if (tiles <= resident_split_clusters(kernel, static_cast<int>(s), threads, smem)) {
      return static_cast<int>(s);
    }
  }
  return 1;
}

// split_count's S = 1 where the tiles leave SMs idle (more than SMs / 2, fewer than SMs: a second
// share per tile would not fit one block per SM) raised to 2 where every cluster of two is
// resident at once: a rung whose blocks fit two per SM then busies every SM, a few with two
// blocks of half the K work, instead of leaving up to half of them idle. A rung of one block per
// SM keeps S = 1 (its clusters of two do not all fit), as does a fixed FASTGEMM_DEV_SPLIT_K.
inline int split_fill(const void* kernel, int threads, int smem, int64_t tiles, int64_t k_units,
                      int64_t min_units, int split, int sm_count) {
  if (split != 1 || dev_split_override() > 0 || tiles >= sm_count || 2 * tiles <= sm_count ||
      k_units < 2 * min_units) {
    return split;
  }
  return tiles <= resident_split_clusters(kernel, 2, threads, smem) ? 2 : 1;
}

// The cluster split of a kernel (at most 8 shares of at least `min_units` units of K each) from
// the device's cluster capacity and the kernel's `rates` (cluster_split_choice,
// common/split_model.h): at most as many blocks per SM as its occupancy allows, and, where SMs
// are reserved for other work (launch_sms), a proportional share of each capacity. S = 1 where
// the kernel cannot run in clusters here.
inline ClusterChoice cluster_split_for(const void* kernel, int threads, int smem, SplitRates rates,
                                       int64_t tiles, int64_t k_units, int64_t min_units,
                                       double add) {
  if (resident_split_clusters(kernel, 2, threads, smem) <= 0) return {1, false};
  const int device = active_device();
  rates.per_sm = std::min(rates.per_sm, resident_blocks_per_sm(kernel, threads, smem));
  const int sms = launch_sms(device), all = device_props(device).sm_count;
  ClusterCapacity cap = cluster_capacity(device);
  if (sms < all) {
    for (auto& per_policy : cap.clusters)
      for (auto& per_n : per_policy)
        for (int& c : per_n) c = static_cast<int>(int64_t(c) * sms / all);
  }
  return cluster_split_choice(cap, rates, sms, tiles, k_units, min_units, 8, add);
}

// The split of a kernel whose partial tiles meet in global memory (hopper/split_global.cuh): the
// largest S <= most that leaves each block at least `min_units` units of K work and keeps the
// whole grid (tiles x S blocks, one per SM) resident at once; 1 where no S > 1 does.
// FASTGEMM_DEV_SPLIT_K fixes S within those limits.
inline int global_split_count(int64_t tiles, int64_t k_units, int64_t min_units, int sm_count,
                              int most) {
  if (tiles <= 0) return 1;
  int64_t s = std::min<int64_t>({most, k_units / std::max<int64_t>(min_units, 1), sm_count / tiles});
  if (dev_split_override() > 0) s = std::min<int64_t>(s, dev_split_override());
  return static_cast<int>(std::max<int64_t>(s, 1));
}

// The grid of a split-K launch: one block per output tile along x, row tiles fastest (the blocks
// that share a column panel of the large operand run side by side, so it comes from HBM once and
// from L2 for the other row tiles); z = the split. Throws past the grid's x limit.
inline dim3 split_grid(int64_t M, int64_t N, int block_m, int block_n, const char* name) {
  const int64_t tiles = ceil_div(M, block_m) * ceil_div(N, block_n);
  if (tiles > 2147483647) {
    throw std::runtime_error(std::string(name) + ": output needs " + std::to_string(tiles) +
                             " tiles, more than a grid can hold");
  }
  return dim3(static_cast<unsigned>(tiles));
}
// This block's output tile in a split_grid: its first row and column.
__device__ __forceinline__ void split_tile(int64_t M, int block_m, int block_n, int64_t& m0,
                                           int64_t& n0) {
  const int64_t tiles_m = (M + block_m - 1) / block_m;
  m0 = int64_t(blockIdx.x) % tiles_m * block_m;
  n0 = int64_t(blockIdx.x) / tiles_m * block_n;
}

// --- stream-K: equal runs of k-tiles across tiles (hopper/stream_k.cuh, hgemm v47) ----------
// BK-deep k-tiles. The blocks form G groups of tiles_m, one block per row of tiles (block b: group b / tiles_m,
// row b % tiles_m). Group g takes work units [W g / G, W (g + 1) / G) of the W = tiles_n x
// k_tiles units (k-tiles, column of tiles after column), and each of its blocks computes them on
// its row: the blocks of a column cut it at the same k-tiles and run them at the same time, so
// each k-tile of a B panel is read by one group, at one time (cut points that differ from row to
// row would have two groups read most of B, at different times). A group's run crosses columns
// first .. last; segment(i) gives the i-th in the order the block computes them: a last segment
// that stops short of its column's end (a contribution, which a later group waits for) first,
// the first segment (which owns its column where earlier groups cut it, and then waits for them)
// last, the others in order between. Only a run's last segment can stop short, so a block contributes at
// most once: its slot is its own index, slot(g) for group g on this row. The segment that ends a
// column (its owner's) adds the contributions of groups first_group(c) .. owner - 1.
template <int BM, int BN, int BK>
struct StreamK {
  int64_t tiles_m, k_tiles, work, lo, hi, first, last;
  int group, groups, row;
  bool contributes;  // the last segment stops short of its column's end

  __device__ __forceinline__ StreamK(int64_t M, int64_t N, int64_t K)
      : tiles_m((M + BM - 1) / BM), k_tiles((K + BK - 1) / BK) {
    work = ((N + BN - 1) / BN) * k_tiles;
    groups = static_cast<int>(gridDim.x / tiles_m);
    group = static_cast<int>(blockIdx.x / tiles_m), row = static_cast<int>(blockIdx.x % tiles_m);
    lo = work * group / groups, hi = work * (group + 1) / groups;
    first = lo / k_tiles, last = (hi - 1) / k_tiles;
    contributes = hi < (last + 1) * k_tiles;
  }
  __device__ __forceinline__ int segments() const { return static_cast<int>(last - first + 1); }
  // Segment i in compute order: its column c, tile (m0, n0), k-tiles [k0, k1) of the tile's.
  __device__ __forceinline__ void segment(int i, int64_t& c, int& m0, int& n0, int& k0, int& k1) const {
    const int n = segments();
    c = contributes && i == 0 ? last : i == n - 1 ? first : first + i + (contributes ? 0 : 1);
    m0 = static_cast<int>(row * BM), n0 = static_cast<int>(c * BN);
    k0 = static_cast<int>(max(lo, c * k_tiles) - c * k_tiles);
    k1 = static_cast<int>(min(hi, (c + 1) * k_tiles) - c * k_tiles);
  }
  // The first group whose run reaches into column c: the largest g with W g / G <= c k_tiles.
  __device__ __forceinline__ int first_group(int64_t c) const {
    return static_cast<int>(((c * k_tiles + 1) * groups + work - 1) / work - 1);
  }
  __device__ __forceinline__ int64_t slot(int g) const { return g * tiles_m + row; }

  // As many whole groups as fit per_sm blocks per SM (at least one), and no more groups than
  // units of work; W G must fit in 64 bits. One group (more than SMs x per_sm / 2 rows of tiles)
  // never cuts a tile. A segment's tile offsets are 32-bit (segment()): M and N below 2^31.
  static dim3 grid(const GemmArgs& a, const char* name, int per_sm = 1) {
    const int device = active_device();
    const int sms = launch_sms(device) * std::max(per_sm, 1);
    const int64_t tiles_m = ceil_div(a.M, int64_t(BM)), tiles_n = ceil_div(a.N, int64_t(BN));
    if (tiles_m * BM > 2147483647 || tiles_n * BN > 2147483647) {
      throw std::runtime_error(std::string(name) + ": outputs of 2^31 rows or columns or more");
    }
    const int64_t work = tiles_n * ceil_div(a.K, int64_t(BK));
    const int64_t groups = std::max<int64_t>(1, std::min<int64_t>(sms / tiles_m, work));
    if (tiles_m * groups > 2147483647 || work > (int64_t(1) << 62) / groups) {
      throw std::runtime_error(std::string(name) + ": too many units of work");
    }
    return dim3(static_cast<unsigned>(tiles_m * groups));
  }
};

// --- the split with no owner, summed by a second kernel (sgemm v20, hgemm v35-v36) ------------
// Every block of a tile stores its fp32 partial tile into a slot of a scratch buffer and leaves;
// a second launch adds the S slots of each output in a fixed order and writes C. S is then bounded
// by the SMs alone: the largest S <= most that leaves each block at least min_units units of K
// work and keeps tiles x S blocks within `slots` (the blocks resident at once).
// FASTGEMM_DEV_SPLIT_K fixes S within those limits.
// The most shares such a split takes (sgemm v20, hgemm v35-v38).
constexpr int REDUCE_MOST = 256;
inline int reduce_split_count(int64_t tiles, int64_t k_units, int64_t slots, int most,
                              int min_units) {
  const int fixed = dev_split_override();
  int64_t s = std::min<int64_t>({int64_t(most), k_units / std::max(min_units, 1),
                                 slots / std::max<int64_t>(tiles, 1)});
  if (fixed > 0) s = std::min<int64_t>(std::max<int64_t>(s, 1), fixed);
  return static_cast<int>(std::max<int64_t>(s, 1));
}

// C = alpha * sum_z partials[(tile * S + z) * BM * BN + r * BN + c] + beta * C for the partial
// tiles of a split_grid (row tiles fastest), each slot a row-major BM x BN tile of floats. A block
// takes 64 consecutive floats of a tile (a float2 per lane) and GROUPS warps: warp g adds the
// slots of its g-th even range of z in order, eight loads in flight; warp 0 adds the GROUPS sums
// in g order and stores (element stores: C row-major with any ldc and any alignment, or with
// c_col_major element (m, n) at C[n * ldc + m], a flipped plan's C^T). The same bits on every
// call. A dependent launch: it waits for the split kernel's grid first.
template <int BM, int BN, int GROUPS, typename T>
__global__ void __launch_bounds__(32 * GROUPS)
    sum_partial_tiles_kernel(const float* __restrict__ partials, T* C, int64_t ldc, int64_t M,
                             int64_t N, int split, float alpha, float beta, bool c_col_major) {
  constexpr int PAIRS = BM * BN / 2, PER_TILE = PAIRS / 32;
  static_assert(PAIRS % 32 == 0 && BN % 2 == 0, "whole warps of column pairs per tile");
  __shared__ float2 partial_sums[GROUPS][32];
  ptx::griddepcontrol_wait();
  const int64_t tile = blockIdx.x / PER_TILE;
  const int lane = threadIdx.x % 32, g = threadIdx.x / 32;
  const int pair = (blockIdx.x % PER_TILE) * 32 + lane;
  const int row = pair / (BN / 2), col = pair % (BN / 2) * 2;
  const int64_t tiles_m = (M + BM - 1) / BM;
  const int64_t m = tile % tiles_m * BM + row, n = tile / tiles_m * BN + col;
  const bool inside = m < M && n < N;
  float2 acc = make_float2(0.0f, 0.0f);
  if (inside) {
    const float2* p = reinterpret_cast<const float2*>(partials) + tile * split * PAIRS + pair;
    const int end = static_cast<int>(int64_t(split) * (g + 1) / GROUPS);
    int z = static_cast<int>(int64_t(split) * g / GROUPS);
    for (; z + 8 <= end; z += 8) {
      float2 v[8];
#pragma unroll
      for (int q = 0; q < 8; ++q) v[q] = __ldcg(p + int64_t(z + q) * PAIRS);
#pragma unroll
      for (int q = 0; q < 8; ++q) acc.x += v[q].x, acc.y += v[q].y;
    }
    for (; z < end; ++z) {
      const float2 v = __ldcg(p + int64_t(z) * PAIRS);
      acc.x += v.x, acc.y += v.y;
    }
  }
  partial_sums[g][lane] = acc;
  __syncthreads();
  if (g != 0 || !inside) return;
#pragma unroll
  for (int h = 1; h < GROUPS; ++h) acc.x += partial_sums[h][lane].x, acc.y += partial_sums[h][lane].y;
  if (!c_col_major) {
    store_pair(C + m * ldc + n, alpha * acc.x, alpha * acc.y, beta, false, N - n);
    return;
  }
  store_pair(C + n * ldc + m, alpha * acc.x, 0.0f, beta, false, 1);
  if (n + 1 < N) store_pair(C + (n + 1) * ldc + m, alpha * acc.y, 0.0f, beta, false, 1);
}

// Launches sum_partial_tiles_kernel over `tiles` tiles of S = split slots each at `partials`, as
// a dependent launch (sm_90 on) on the stream.
template <int BM, int BN, typename T>
void launch_sum_partials(const float* partials, int64_t tiles, int split, T* C, int64_t ldc,
                         int64_t M, int64_t N, float alpha, float beta, bool c_col_major,
                         cudaStream_t stream, int cc, const char* name) {
  constexpr int GROUPS = 8;
  Launch l{dim3(static_cast<unsigned>(tiles * (BM * BN / 64))), dim3(32 * GROUPS), 0, stream};
  l.pdl = cc >= 90;
  fastgemm::launch(sum_partial_tiles_kernel<BM, BN, GROUPS, T>, l, name, partials, C, ldc, M, N,
                   split, alpha, beta, c_col_major);
}

// kernel<<<grid (z = split), threads, smem, stream>>>(args...), in clusters of (1, 1, split)
// (with the load-balancing cluster policy where the choice asks for it), as a dependent launch on
// a GPU of compute capability `cc` >= 9.0 (see the contract).
template <typename Kernel, typename... Args>
void launch_split(Kernel kernel, dim3 grid, int threads, int smem, cudaStream_t stream,
                  ClusterChoice split, int cc, const char* name, Args&&... args) {
  grid.z = static_cast<unsigned>(split.split);
  Launch l{grid, dim3(static_cast<unsigned>(threads)), smem, stream};
  l.pdl = cc >= 90;
  l.cluster_z = static_cast<unsigned>(split.split);
  l.balance = split.balance;
  fastgemm::launch(kernel, l, name, std::forward<Args>(args)...);
}
template <typename Kernel, typename... Args>
void launch_split(Kernel kernel, dim3 grid, int threads, int smem, cudaStream_t stream, int split,
                  int cc, const char* name, Args&&... args) {
  launch_split(kernel, grid, threads, smem, stream, ClusterChoice{split, false}, cc, name,
               std::forward<Args>(args)...);
}

}  // namespace fastgemm
