// hopper/staged.cuh — a producer for a B whose rows are not 16-byte aligned (v34): an MN-major B
// reaches the ring through a staging step that TMA can describe, then a shift by the producer
// warpgroup's threads into the swizzled tile; A (K-major, aligned: the launcher copies it where it
// is not) and a K-major B go by TMA as in v24.
//
// Contract. A staged k-tile of a BN-wide MN-major B is its 64 rows k0 .. k0 + 63 as TMA copies
// them through ResidueMaps (tensor_map.h): residue r's box (8 rows, BN + 8 elements, unswizzled)
// at rows 8r .. 8r + 7, so row 8r + i holds k = k0 + r + 8i, and element n0 + e of it sits
// offset_r positions further in. shift_tile writes it into the ring's stage as TMA would have
// written an aligned B (tile.cuh: 64-element boxes, 128-byte swizzle), k in order, rows k >= K as
// zeros. The stage's `full` barrier then counts thread 0's arrive.expect_tx (A's TMA bytes) plus
// one arrival per producer warp after its stores and a proxy fence (ordinary stores read by
// wgmma). Two staging buffers take turns, each guarded by an mbarrier (its TMA bytes) and
// refilled after a barrier of the producer warpgroup.
#pragma once
#include "hopper/mainloop.cuh"
#include "hopper/tensor_map.h"

namespace fastgemm::hopper {

// The producer warpgroup's named barrier: one no Hopper body uses (1-3: the epilogues and the
// consumers' hand-offs, 4-5: hybrid.cuh), so the producer may join any of them.
constexpr int PRODUCER_BARRIER = 6;

// Bytes of a staged k-tile of a BMN-wide operand: 64 rows of BMN + 8 elements.
template <int BMN>
constexpr int staged_bytes() {
  return 64 * (BMN + 8) * 2;
}

// The ring's `full` arrivals: thread 0's arrive.expect_tx, and with a staged B the four producer
// warps'.
template <bool B_KMAJOR>
constexpr int staged_full_arrivals() {
  return B_KMAJOR ? 1 : 5;
}

// Elements off .. off + 7 of the 16 in (lo, hi), as 8 elements (off in 0..7).
__device__ __forceinline__ uint4 shift_halves(uint4 lo, uint4 hi, int off) {
  uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  if (off & 4) {
#pragma unroll
    for (int j = 0; j < 6; ++j) w[j] = w[j + 2];
  }
  if (off & 2) {
#pragma unroll
    for (int j = 0; j < 7; ++j) w[j] = w[j + 1];
  }
  if (off & 1) {
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = __byte_perm(w[j], w[j + 1], 0x5432);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Thread 0: the 8 residue boxes of k-tile k0 at columns x0 (a multiple of 64) into `dst`.
template <int BMN>
__device__ __forceinline__ void stage_residues(unsigned char* dst, const ResidueMaps* maps,
                                               uint64_t* bar, int k0, int x0) {
#pragma unroll
  for (int r = 0; r < 8; ++r) {
    ptx::tma_load_2d(dst + r * 8 * (BMN + 8) * 2, &maps->map[r], bar, x0, k0 / 8);
  }
}

// The residue (and so the shift) of the rows a producer thread moves in shift_tile: the same for
// all of them, as a round of 128 threads covers a whole number of 8-row groups.
template <int BMN>
__device__ __forceinline__ int shift_of(uint32_t offsets) {
  static_assert(128 % (BMN / 8) == 0 && (128 / (BMN / 8)) % 8 == 0, "rounds of whole 8-row groups");
  const int r = static_cast<int>(threadIdx.x % 128) / (BMN / 8) % 8;
  return static_cast<int>((offsets >> (3 * r)) & 7u);
}

// The producer warpgroup's 128 threads: staged k-tile `src` into the swizzled tile `dst`; this
// thread's rows are shifted by `off` (shift_of), rows from k_left on are zeros.
template <int BMN>
__device__ __forceinline__ void shift_tile(unsigned char* dst, const unsigned char* src, int off,
                                           int k_left) {
  constexpr int CHUNKS = BMN / 8, ROW = (BMN + 8) * 2;  // 16-byte chunks of a tile row; bytes
  constexpr int STEP = 128 / CHUNKS;                    // rows per round of 128 threads
  const int t = static_cast<int>(threadIdx.x % 128), c = t % CHUNKS, r = t / CHUNKS % 8;
  const int box = c / 8, chunk = c % 8;
#pragma unroll 2
  for (int k = t / CHUNKS; k < 64; k += STEP) {  // k % 8 == r
    uint4 out = make_uint4(0, 0, 0, 0);
    if (k < k_left) {
      const unsigned char* row = src + (8 * r + k / 8) * ROW + 16 * c;
      out = shift_halves(*reinterpret_cast<const uint4*>(row),
                         *reinterpret_cast<const uint4*>(row + 16), off);
    }
    *reinterpret_cast<uint4*>(dst + box * BOX_BYTES + k * SW_ROW + 16 * (chunk ^ r)) = out;
  }
}

// Warpgroup 0 (all 128 threads): k-tiles first .. first + count - 1 of tile (m0, n0) into the
// ring. A (K-major) and a K-major B by TMA on map[0] (thread 0); an MN-major B staged and
// shifted. The two staging buffers (STAGING bytes) follow the ring's stages in shared memory.
template <bool B_KMAJOR, int STAGING, typename RingT>
__device__ __forceinline__ void produce_staged(const RingT& ring, const ResidueMaps* ma,
                                               const ResidueMaps* mb, int m0, int n0, int first,
                                               int count, int64_t K) {
  constexpr int BM = RingT::TILE_M, BN = RingT::TILE_N, STAGES = RingT::DEPTH, BUFFERS = 2;
  constexpr bool SB = !B_KMAJOR;
  constexpr int BUFFER = staged_bytes<BN>();
  constexpr int TMA_BYTES = tile_bytes<BM>() + (SB ? 0 : tile_bytes<BN>());
  static_assert(RingT::CLUSTER == 1, "no multicast");
  static_assert(!SB || BUFFERS * BUFFER <= STAGING, "staging memory");
  __shared__ uint64_t staged[BUFFERS];
  unsigned char* const staging = ring.stages + RingT::BYTES;
  const int t = static_cast<int>(threadIdx.x % 128);
  const int off = SB ? shift_of<BN>(mb->offsets) : 0;
  auto issue = [&](int j) {  // thread 0: staged k-tile j of the share into its buffer
    uint64_t* bar = &staged[j % BUFFERS];
    const int k0 = (first + j) * BLOCK_K;
    ptx::fence_proxy_async_shared();  // the buffer's last reads, before TMA overwrites it
    ptx::mbarrier_arrive_expect_tx(bar, BUFFER);
    stage_residues<BN>(staging + (j % BUFFERS) * BUFFER, mb, bar, k0, n0);
  };
  if constexpr (SB) {
    if (t == 0) {
      for (int b = 0; b < BUFFERS; ++b) ptx::mbarrier_init(&staged[b], 1);
      ptx::fence_barrier_init();
      for (int j = 0; j < BUFFERS && j < count; ++j) issue(j);
    }
    ptx::named_barrier(PRODUCER_BARRIER, 128);  // the staging barriers are initialised
  }
  for (int j = 0; j < count; ++j) {
    const int s = j % STAGES, k0 = (first + j) * BLOCK_K;
    unsigned char* const stage = ring.stage(s);
    if (j >= STAGES) ptx::mbarrier_wait(&ring.empty[s], (j / STAGES - 1) & 1);
    if (t == 0) {
      ptx::mbarrier_arrive_expect_tx(&ring.full[s], TMA_BYTES);
      load_tile<BM, true>(stage, &ma->map[0], &ring.full[s], k0, m0);
      if constexpr (!SB) load_tile<BN, true>(stage + RingT::A_BYTES, &mb->map[0], &ring.full[s], k0, n0);
    }
    if constexpr (SB) {
      const int b = j % BUFFERS;
      ptx::mbarrier_wait(&staged[b], (j / BUFFERS) & 1);
      const int k_left = K - k0 < BLOCK_K ? static_cast<int>(K - k0) : BLOCK_K;
      shift_tile<BN>(stage + RingT::A_BYTES, staging + b * BUFFER, off, k_left);
      ptx::fence_proxy_async_shared();  // the stores (and the buffer's reads), before async use
      __syncwarp();
      if (t % 32 == 0) ptx::mbarrier_arrive(&ring.full[s]);
      ptx::named_barrier(PRODUCER_BARRIER, 128);  // every thread is done with buffer b
      if (t == 0 && j + BUFFERS < count) issue(j + BUFFERS);
    }
  }
}

}  // namespace fastgemm::hopper
