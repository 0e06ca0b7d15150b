// hopper/mainloop.cuh — the k-loop: TMA copies in, wgmma products out, for one output tile.
//
// Two mainloops:
//   one_stage_mainloop — every thread of the block: one thread issues a k-tile's copies, all
//     wait on one mbarrier, the WARPGROUPS warpgroups multiply, and a block barrier orders the
//     next copy after every read.
//   produce / consume  — warp specialisation over a Ring (ring.cuh): one producer thread streams
//     k-tiles into the ring; each consumer warpgroup waits on `full`, issues its wgmmas and
//     releases the stage with one k-tile of wgmmas kept in flight.
// Contract: a consumer warpgroup owns 64 rows (`slice`) of the BM x BN tile and returns its
// 64 x BN fp32 accumulators in registers (BN / 2 per thread, wgmma's fragment layout); it never
// writes global memory. The producer never reads registers of the consumers.
#pragma once
#include <type_traits>

#include "hopper/ring.cuh"

namespace fastgemm::hopper {

// Registers per thread after setmaxnreg: the producer warpgroup only issues copies, the consumer
// warpgroups hold up to 128 fp32 accumulators each (384 threads: 40 + 2 x 232 <= 504 of the 512;
// a 256-thread block of one consumer warpgroup keeps the 232 it is launched with). Three consumer
// warpgroups (512 threads, launched with 128 each) hold at most 64 accumulators (BN <= 128):
// 32 + 3 x 152 = 488.
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
template <int CONSUMERS>
constexpr int producer_regs() {
  return CONSUMERS > 2 ? 32 : PRODUCER_REGS;
}
template <int CONSUMERS>
constexpr int consumer_regs() {
  return CONSUMERS > 2 ? 152 : CONSUMER_REGS;
}
// The split fits the SM's 64K registers, and three consumer warpgroups' 152 hold their
// accumulators only for tiles of at most 128 columns (64 a thread).
template <int CONSUMERS, int TILE_N>
constexpr bool regs_fit() {
  return CONSUMERS >= 1 && CONSUMERS <= 3 &&
         128 * (producer_regs<CONSUMERS>() + CONSUMERS * consumer_regs<CONSUMERS>()) <= 65536 &&
         (CONSUMERS <= 2 || TILE_N <= 128);
}

// WARPGROUPS warpgroups share a BM x BN tile at (m0, n0), each owning BM / 64 / WARPGROUPS slices
// of 64 rows; acc[h] is slice wg * SLICES + h.
template <typename T, int BM, int BN, int WARPGROUPS, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void one_stage_mainloop(const CUtensorMap* tma_a,
                                                   const CUtensorMap* tma_b, int64_t K, int m0,
                                                   int n0,
                                                   float (&acc)[BM / 64 / WARPGROUPS][BN / 2]) {
  constexpr int SLICES = BM / 64 / WARPGROUPS, A_BYTES = tile_bytes<BM>();
  extern __shared__ unsigned char smem_raw[];
  unsigned char* As = aligned_smem(smem_raw);
  unsigned char* Bs = As + A_BYTES;
  __shared__ uint64_t full;  // the tile's TMA copies have landed

  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::fence_barrier_init();
  }
  __syncthreads();

#pragma unroll
  for (int h = 0; h < SLICES; ++h)
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[h][i] = 0.0f;

  const uint32_t a_s = ptx::smem_addr(As), b_s = ptx::smem_addr(Bs);
  const int tiles = static_cast<int>((K + BLOCK_K - 1) / BLOCK_K);
  for (int t = 0; t < tiles; ++t) {
    if (threadIdx.x == 0) {
      ptx::mbarrier_arrive_expect_tx(&full, A_BYTES + tile_bytes<BN>());
      load_tile<BM, A_KMAJOR>(As, tma_a, &full, t * BLOCK_K, m0);
      load_tile<BN, B_KMAJOR>(Bs, tma_b, &full, t * BLOCK_K, n0);
    }
    ptx::mbarrier_wait(&full, t & 1);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
#pragma unroll
      for (int h = 0; h < SLICES; ++h) {
        // Slice (wg, h) of A is BOX_BYTES per 64 rows further: 64 rows of 128 bytes (K-major)
        // or the next 64-wide box (MN-major).
        const int slice = wg * SLICES + h;
        ptx::wgmma_m64k16<BN, T>(acc[h], slice_desc<A_KMAJOR>(a_s, slice * BOX_BYTES, kk),
                                 slice_desc<B_KMAJOR>(b_s, 0, kk), !A_KMAJOR, !B_KMAJOR);
      }
    }
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();
#pragma unroll
    for (int h = 0; h < SLICES; ++h) ptx::fence_registers(acc[h]);
    __syncthreads();  // every warp is done with the tiles before the next copy overwrites them
  }
}

// The producer's gate before each k-tile's copies: none (every operand is in memory when the
// kernel starts), or (a gate like gated.cu's LandedGate) gate(m0, n0, k0) returns once the
// k-tile's rows of A and B have landed.
struct Open {
  __device__ __forceinline__ void operator()(int, int, int) const {}
};

// Producer (one thread): k-tiles k_first .. k_first + k_tiles - 1 of output tile (m0, n0) into
// the ring, each BK elements deep (k_tile<T>()). CLUSTER > 1: this CTA loads part `ring.rank` of
// the B tile, multicast to every CTA of the cluster.
template <bool A_KMAJOR, bool B_KMAJOR, int BK = BLOCK_K, typename RingT, typename Gate = Open>
__device__ __forceinline__ void produce(const RingT& ring, const CUtensorMap* tma_a,
                                        const CUtensorMap* tma_b, int m0, int n0, int k_tiles,
                                        int& it, int k_first = 0, Gate&& gate = {}) {
  constexpr int BM = RingT::TILE_M, BN = RingT::TILE_N, CLUSTER = RingT::CLUSTER;
  for (int t = 0; t < k_tiles; ++t, ++it) {
    const int s = ring.acquire(it);
    unsigned char* As = ring.stage(s);
    const int k0 = (k_first + t) * BK;
    gate(m0, n0, k0);
    load_tile<BM, A_KMAJOR, 1, BK>(As, tma_a, &ring.full[s], k0, m0);
    if (CLUSTER == 1) {
      load_tile<BN, B_KMAJOR, 1, BK>(As + RingT::A_BYTES, tma_b, &ring.full[s], k0, n0);
    } else {
      load_tile<BN, B_KMAJOR, CLUSTER, BK>(As + RingT::A_BYTES, tma_b, &ring.full[s], k0, n0,
                                       ring.rank, (1u << CLUSTER) - 1);
    }
  }
}

// Producer (one thread) of a persistent block: the k-tiles of every tile the scheduler gives
// it, running ahead across tile boundaries (this CTA's rows start row_offset into each tile).
template <bool A_KMAJOR, bool B_KMAJOR, int BK = BLOCK_K, typename RingT, typename Sched,
          typename Gate = Open>
__device__ __forceinline__ void produce_tiles(const RingT& ring, const Sched& sched,
                                              const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                              int k_tiles, int row_offset = 0, Gate gate = {}) {
  int it = 0;
  for (int tile = sched.first; tile < sched.count(); tile += sched.step) {
    int m0, n0;
    sched.tile(tile, m0, n0);
    produce<A_KMAJOR, B_KMAJOR, BK>(ring, tma_a, tma_b, m0 + row_offset, n0, k_tiles, it, 0, gate);
  }
}

// fp32 A through registers (sgemm_v22). tf32 wgmma reads only K-major shared-memory tiles, but
// its A may come from registers, loaded from a tile of any layout: for an MN-major A (boxes of
// 32 rows x 32 k-rows, load_tile) each consumer thread loads its own fragment with 4-byte shared
// loads and rounds it to the nearest tf32, and B (K-major) is read from the stage as usual. The
// 128-byte swizzle puts a warp's 32 loads on 16 banks pairwise (k and k + 1 of rows four
// apart): two passes each, 16 KiB of passes a k-tile against the 32 KiB of B that the wgmmas of
// a 64x256 slice read.
struct Tf32Fragment {
  uint32_t off[4];  // bytes into the A tile of a[0..3] of k-step 0; k-step s is 8 k-rows further

  __device__ explicit Tf32Fragment(int slice) {
    const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // wgmma_m64k8_tf32_rs: a[i] at row r, k-row k (k < 8)
      const int r = slice * 64 + warp * 16 + lane / 4 + 8 * (i % 2), k = lane % 4 + 4 * (i / 2);
      off[i] = (r / 32) * (32 * SW_ROW) + k * SW_ROW + (((r % 32) / 4) ^ k) * 16 + (r % 4) * 4;
    }
  }
  // The 16 values of a k-tile (k-steps 0..3 x a[0..3]) of the A tile at `tile`, as the nearest
  // tf32 (ties away from zero); a value that would round past the largest tf32, inf and NaN are
  // truncated instead, as the tensor cores read them (a NaN whose payload lies only in the 13 low
  // bits then reads as inf, as it does in v13).
  __device__ __forceinline__ void load(uint32_t tile, uint32_t (&f)[16]) const {
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        uint32_t u;
        asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(u) : "r"(tile + off[i] + s * 8 * SW_ROW));
        f[4 * s + i] = (u & 0x7fffffffu) < 0x7f7ff000u ? (u + 0x1000u) & 0xffffe000u : u & 0xffffe000u;
      }
  }
};

// Keeps a fragment set live in the compiler's view until after the wait that retires the wgmmas
// reading it, so that its registers are not reused earlier (ptxas also tracks wgmma's
// asynchronous register reads itself).
__device__ __forceinline__ void fence_fragment(uint32_t (&f)[16]) {
#pragma unroll
  for (int i = 0; i < 16; ++i) asm volatile("" : "+r"(f[i])::"memory");
}

// consume (below) for an fp32 MN-major A: the fragments of k-tile t in set t % 2, which k-tile
// t + 2 rewrites only after k-tile t + 1's wait has retired k-tile t (one k-tile in flight).
template <typename RingT, typename OnFirst>
__device__ __forceinline__ void consume_tf32_regs(const RingT& ring,
                                                  float (&acc)[RingT::TILE_N / 2], int slice,
                                                  int k_tiles, int& it, bool keep_last,
                                                  OnFirst on_first) {
  const bool leader = threadIdx.x % 128 == 0;
  const Tf32Fragment fragment(slice);
  uint32_t f0[16], f1[16];
  auto k_tile = [&](int t, uint32_t(&f)[16], uint32_t(&prev)[16]) {
    const int s = ring.wait_full(it);
    const uint32_t a_s = ptx::smem_addr(ring.stage(s)), b_s = a_s + RingT::A_BYTES;
    fragment.load(a_s, f);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      ptx::wgmma_m64k8_tf32_rs<RingT::TILE_N>(
          acc, *reinterpret_cast<const uint32_t(*)[4]>(&f[4 * kk]), slice_desc<true>(b_s, 0, kk),
          t > 0 || kk > 0);
    }
    ptx::wgmma_commit();
    ptx::wgmma_wait<1>();  // k-tile t - 1 retired: its stage and its fragment set are free
    fence_fragment(prev);
    if (t > 0 && leader) ring.release((it - 1) % RingT::DEPTH);
    if (t == 0 && leader) on_first();
    ++it;
  };
  int t = 0;
  for (; t + 1 < k_tiles; t += 2) {
    k_tile(t, f0, f1);
    k_tile(t + 1, f1, f0);
  }
  if (t < k_tiles) k_tile(t, f0, f1);
  ptx::wgmma_wait<0>();
  if (leader && !keep_last) ring.release((it - 1) % RingT::DEPTH);
  ptx::fence_registers(acc);
}

// consume_shared — consumer warpgroup `slice` (its 64 rows of the tile), both operands read from
// shared memory: acc = the tile's product over k_tiles
// k-tiles. One k-tile of wgmmas stays in flight (wait_group 1), so the previous stage is
// released while the tensor cores already work on the current one. The tile's first wgmma
// ignores acc's old contents, so no zeroing pass separates two tiles. With keep_last the
// warpgroup keeps its last stage (a borrowing epilogue stores C through it), and its leader runs
// `on_first` once the tile's first k-tile is issued.
// PROMOTE > 0: the wgmmas of each group of PROMOTE k-tiles accumulate into a fresh partial tile,
// which the warpgroup then adds into acc with round-to-nearest fp32 FADDs. The tensor cores' own
// fp32 accumulation does not round to nearest: over a long K its error grows with the partial
// sums and keeps one sign, which fp32-accurate products (3xTF32) cannot afford. The price: N/2
// more registers, and the group's last k-tile is waited for before the next group is issued
// (the other consumer warpgroup covers the gap). (A compensated sum of the partial tiles would
// need another N/2 registers, beyond the 168 a thread of a 384-thread block gets.)
template <typename T, bool A_KMAJOR, bool B_KMAJOR, int PROMOTE, typename RingT, typename OnFirst>
__device__ __forceinline__ void consume_shared(const RingT& ring,
                                               float (&acc)[RingT::TILE_N / 2], int slice,
                                               int k_tiles, int& it, bool keep_last,
                                               OnFirst on_first) {
  const bool leader = threadIdx.x % 128 == 0;
  // The descriptors are built once, for the slice in stage 0, and moved by whole stages and
  // k-steps (desc_plus): the loop adds constants instead of rebuilding eight descriptors from
  // the stage's address each k-tile. The slice goes through a shuffle from lane 0 so that the
  // compiler sees it warp-uniform and keeps the descriptors in uniform registers.
  const uint32_t stage0 = ptx::smem_addr(ring.stage(0));
  const int uniform_slice = __shfl_sync(0xffffffffu, slice, 0);
  const uint64_t a0 = slice_desc<A_KMAJOR>(stage0, uniform_slice * BOX_BYTES, 0);
  const uint64_t b0 = slice_desc<B_KMAJOR>(stage0 + RingT::A_BYTES, 0, 0);
  StageCursor<RingT::DEPTH> at(it);
  // The k-tile's four k-steps from the stage at.stage into d (the first ignoring d's contents).
  auto multiply = [&](float (&d)[RingT::TILE_N / 2], bool accumulate) {
    const uint32_t off = static_cast<uint32_t>(at.stage) * RingT::STAGE_BYTES;
    const uint64_t a = desc_plus(a0, off), b = desc_plus(b0, off);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BLOCK_K / 16; ++kk) {  // four 32-byte k-steps per k-tile
      ptx::wgmma_m64k16<RingT::TILE_N, T>(d, desc_plus(a, kk * k_step_bytes<A_KMAJOR>()),
                                          desc_plus(b, kk * k_step_bytes<B_KMAJOR>()), !A_KMAJOR,
                                          !B_KMAJOR, accumulate || kk > 0);
    }
    ptx::wgmma_commit();
  };
  if constexpr (PROMOTE > 0) {
    constexpr int R = RingT::TILE_N / 2;
    float part[R];
    for (int t = 0; t < k_tiles; ++t, ++it, at.advance()) {
      const int g = t % PROMOTE;
      ring.wait_full(at.stage, at.parity);
      multiply(part, g > 0);
      if (g < PROMOTE - 1 && t < k_tiles - 1) {  // inside a group: one k-tile in flight
        ptx::wgmma_wait<1>();
        if (g > 0 && leader) ring.release(at.previous());
      } else {  // the group's last k-tile: its partial tile into acc
        ptx::wgmma_wait<0>();
        ptx::fence_registers(part);
        if (leader && g > 0) ring.release(at.previous());
        if (leader && !(keep_last && t == k_tiles - 1)) ring.release(at.stage);
#pragma unroll
        for (int i = 0; i < R; ++i) acc[i] = t < PROMOTE ? part[i] : acc[i] + part[i];
      }
      if (t == 0 && leader) on_first();
    }
  } else {
    // The first k-tile outside the loop: the loop then holds no test of t.
    if (k_tiles > 0) {
      ring.wait_full(at.stage, at.parity);
      multiply(acc, false);
      ptx::wgmma_wait<1>();
      if (leader) on_first();
      ++it, at.advance();
    }
    for (int t = 1; t < k_tiles; ++t, ++it, at.advance()) {
      ring.wait_full(at.stage, at.parity);
      multiply(acc, true);
      ptx::wgmma_wait<1>();
      if (leader) ring.release(at.previous());
    }
    ptx::wgmma_wait<0>();
    if (leader && !keep_last) ring.release(at.previous());
    ptx::fence_registers(acc);
  }
}

// The consumer of a warp-specialised kernel: consume_shared, or consume_tf32_regs for an fp32
// MN-major A (both keep one k-tile of wgmmas in flight and the same release contract).
template <typename T, bool A_KMAJOR, bool B_KMAJOR, int PROMOTE = 0, typename RingT,
          typename OnFirst = void (*)()>
__device__ __forceinline__ void consume(const RingT& ring, float (&acc)[RingT::TILE_N / 2], int slice,
                                        int k_tiles, int& it, bool keep_last = false,
                                        OnFirst on_first = [] {}) {
  if constexpr (std::is_same_v<T, float> && !A_KMAJOR) {
    static_assert(B_KMAJOR && PROMOTE == 0, "fp32 A through registers: B K-major, no promotion");
    consume_tf32_regs(ring, acc, slice, k_tiles, it, keep_last, on_first);
  } else {
    consume_shared<T, A_KMAJOR, B_KMAJOR, PROMOTE>(ring, acc, slice, k_tiles, it, keep_last,
                                                   on_first);
  }
}

}  // namespace fastgemm::hopper
