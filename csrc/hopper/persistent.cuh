// hopper/persistent.cuh — the persistent warp-specialised loop of v13-v15 and the stmatrix + TMA
// store epilogue of v14-v15.
#pragma once
#include "hopper/common.cuh"

namespace fastgemm::hopper {

// A persistent block (or cluster of RingT::CLUSTER blocks stacked along M, sharing B) walks the
// output tiles in grouped order: cluster c of the grid takes tiles c, c + #clusters, ... The
// producer warpgroup gives its registers away and one thread streams every tile's k-tiles into
// the ring, running ahead across tile boundaries; consumer warpgroup w (1, 2) multiplies rows
// 64(w-1)..64w-1 of the block's tile and hands its accumulators to `epilogue(acc, row0, col0,
// half, stage)` — which runs while the producer already fills the ring with the next tile.
// BORROW (v18): consumer warpgroup 2 keeps the stage of its tile's last k-tile (`stage`, else
// null) for the epilogue to store C through, once warpgroup 1 has finished reading it too, and
// gives it back to the producer once the next tile's first k-tile is issued and the TMA stores
// have read it. PDL (v19): the producer lets the
// next kernel of the stream launch once it has issued its last copy.
template <typename T, int BM, int BN, int GROUP_M, bool BORROW, bool PDL, typename RingT,
          typename Epilogue>
__device__ __forceinline__ void persistent_gemm(const RingT& ring, const CUtensorMap* tma_a,
                                                const CUtensorMap* tma_b, int64_t M, int64_t N,
                                                int64_t K, Epilogue&& epilogue) {
  constexpr int CLUSTER = RingT::CLUSTER;
  const int wg = threadIdx.x / 128;
  const int k_tiles = static_cast<int>((K + BLOCK_K - 1) / BLOCK_K);
  const int tiles_m = static_cast<int>((M + BM * CLUSTER - 1) / (BM * CLUSTER));
  const int tiles_n = static_cast<int>((N + BN - 1) / BN);
  const int first = blockIdx.x / CLUSTER, step = gridDim.x / CLUSTER;
  const int row_offset = static_cast<int>(ring.rank) * BM;  // this block's rows of the cluster tile
  if (wg == 0) {
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      ring.template produce_tiles<BM * CLUSTER, GROUP_M>(tma_a, tma_b, first, step, tiles_m,
                                                         tiles_n, k_tiles, row_offset);
      if constexpr (PDL) ptx::griddepcontrol_launch_dependents();
    }
  } else {
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int half = wg - 1;
    const bool borrow = BORROW && half == 1;
    int it = 0;     // the running k-tile counter, advanced alike by the producer (produce_tiles)
    int held = -1;  // the stage borrowed for the previous tile's stores (leader of warpgroup 2)
    for (int tile = first; tile < tiles_m * tiles_n; tile += step) {
      int m0, n0;
      grouped_tile<BM * CLUSTER, BN, GROUP_M>(tile, tiles_m, tiles_n, m0, n0);
      float acc[BN / 2];
      ring.template consume<T>(acc, half, k_tiles, it, borrow, [&] {
        if (held >= 0) {  // the stores issued a k-tile ago have read the stage: give it back
          ptx::bulk_wait_read<0>();
          ring.release(held);
          held = -1;
        }
      });
      unsigned char* stage = nullptr;
      // Both warpgroups read every stage: warpgroup 2 overwrites its last one only once warpgroup
      // 1 is done with it too (named barrier 3, both consumer warpgroups, once per tile).
      if (BORROW) ptx::named_barrier(3, 256);
      if (borrow) {
        held = (it - 1) % RingT::DEPTH;
        stage = ring.stages + held * RingT::STAGE_BYTES;
      }
      epilogue(acc, m0 + row_offset + 64 * half, n0, half, stage);
    }
  }
}

// A consumer warpgroup's 64 x BN accumulators -> C through shared memory and TMA stores, in
// pieces of PIECE 64x64 boxes (BN / 64 / PIECE pieces per tile) through a buffer of SLOTS pieces
// at `out`. Each box is 64 rows of 128 bytes with the 128-byte swizzle (16-byte chunk c of row r
// stored at chunk c ^ (r % 8)), which is what the tensor map of C expects and keeps every
// stmatrix conflict-free. Each piece is one bulk group; a slot is rewritten only once the store
// that last read it is done (at most SLOTS - 1 younger groups pending). alpha and beta are
// applied in fp32 and C is read only when beta != 0. Named barrier 1 + half keeps the warpgroup
// together. BETA_ZERO (v20: the caller has tested beta == 0 once per launch): the loop holds no
// test of beta and no code that reads C.
template <int BN, int PIECE, int SLOTS, typename T, bool BETA_ZERO = false>
__device__ __forceinline__ void store_tile(float (&acc)[BN / 2], unsigned char* out,
                                           const CUtensorMap* tma_c, const T* C, int64_t ldc,
                                           int64_t M, int64_t N, int64_t row0, int64_t col0,
                                           float alpha, float beta, int half) {
  using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
  constexpr int PIECES = BN / BOX / PIECE;
  static_assert(PIECES % SLOTS == 0, "every tile starts at slot 0");
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const bool leader = threadIdx.x % 128 == 0;
  auto pack = [&](int j, int r) {  // two adjacent outputs of n8 block j, row half r, as T2 bits
    float v0 = alpha * acc[4 * j + 2 * r], v1 = alpha * acc[4 * j + 2 * r + 1];
    if (!BETA_ZERO && beta != 0.0f) {  // only now is C read
      const int64_t row = row0 + warp * 16 + lane / 4 + 8 * r;
      const int64_t col = col0 + 8 * j + 2 * (lane % 4);
      if (row < M && col < N) v0 = fmaf(beta, float(C[row * ldc + col]), v0);
      if (row < M && col + 1 < N) v1 = fmaf(beta, float(C[row * ldc + col + 1]), v1);
    }
    T2 t;
    t.x = T(v0), t.y = T(v1);
    return *reinterpret_cast<uint32_t*>(&t);
  };
#pragma unroll
  for (int p = 0; p < PIECES; ++p) {
    unsigned char* slot = out + (p % SLOTS) * PIECE * BOX_BYTES;
    if (leader) ptx::bulk_wait_read<SLOTS - 1>();  // the slot's previous store has read it
    ptx::named_barrier(1 + half, 128);
    const uint32_t base = ptx::smem_addr(slot);
#pragma unroll
    for (int j = p * PIECE * 8; j < (p + 1) * PIECE * 8; j += 2) {
      // Matrices: rows 0-7 / 8-15 of n8 blocks j and j+1; lane l addresses row l % 8 of matrix
      // l / 8.
      const int row = warp * 16 + (lane % 8) + 8 * ((lane / 8) % 2);
      const int col = 8 * (j + lane / 16) - p * PIECE * BOX;
      const int box = col / BOX, chunk = (col % BOX) / 8;
      const uint32_t addr = base + box * BOX_BYTES + row * SW_ROW + ((chunk ^ (row % 8)) * 16);
      ptx::stmatrix_x4(addr, pack(j, 0), pack(j, 1), pack(j + 1, 0), pack(j + 1, 1));
    }
    ptx::fence_proxy_async_shared();    // the stmatrix writes, visible to the TMA unit ...
    ptx::named_barrier(1 + half, 128);  // ... from every warp of the warpgroup
    if (leader) {
#pragma unroll
      for (int b = 0; b < PIECE; ++b) {
        ptx::tma_store_2d(tma_c, slot + b * BOX_BYTES,
                          static_cast<int>(col0) + BOX * (p * PIECE + b), static_cast<int>(row0));
      }
      ptx::bulk_commit();
    }
  }
}

// Shape of the TMA-store rungs: ring depth, grouped order, cluster size, and the epilogue's
// C buffer per consumer warpgroup (SLOTS pieces of PIECE 64x64 boxes). BORROW: warpgroup 2
// stores through its last ring stage, so only warpgroup 1 has a C buffer; PDL: programmatic
// dependent launch (see persistent_gemm); HOIST: beta == 0 is tested once, outside the
// epilogue's loop (store_tile's BETA_ZERO).
template <int BM_, int BN_, int STAGES_, int GROUP_M_, int CLUSTER_, int PIECE_, int SLOTS_,
          bool BORROW_ = false, bool PDL_ = false, bool HOIST_ = false>
struct TmaStoreShape {
  static constexpr int BM = BM_, BN = BN_, STAGES = STAGES_, GROUP_M = GROUP_M_;
  static constexpr int CLUSTER = CLUSTER_, PIECE = PIECE_, SLOTS = SLOTS_;
  static constexpr bool BORROW = BORROW_, PDL = PDL_, HOIST = HOIST_;
  static constexpr int C_BYTES = SLOTS * PIECE * BOX_BYTES;  // per consumer warpgroup
  static_assert(!BORROW || C_BYTES <= tile_bytes<BM>() + tile_bytes<BN>(), "C fits in a stage");
  // The ring, the C buffers, 1 KiB to align to the swizzle atom.
  static constexpr int SMEM =
      STAGES * (tile_bytes<BM>() + tile_bytes<BN>()) + (BORROW ? 1 : 2) * C_BYTES + 1024;
};

// The whole kernel body of the TMA-store rungs (v14-v16, v18-v20): ring, persistent loop, store_tile
// epilogue with one C buffer per consumer warpgroup after the ring's stages. The rung's
// __global__ (its own name, its own cluster shape) only calls this.
template <typename T, typename S, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void tma_store_gemm(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                               const CUtensorMap* tma_c, T* C, int64_t M,
                                               int64_t N, int64_t K, int64_t ldc, float alpha,
                                               float beta) {
  using RingT = Ring<S::BM, S::BN, S::STAGES, 2, A_KMAJOR, B_KMAJOR, S::CLUSTER>;
  extern __shared__ unsigned char smem_raw[];
  __shared__ uint64_t full[S::STAGES], empty[S::STAGES];
  unsigned char* smem = aligned_smem(smem_raw);
  const RingT ring{smem, full, empty, S::CLUSTER > 1 ? ptx::cluster_ctarank() : 0u};
  ring.init();
  // Every CTA's barriers are initialised before any CTA of the cluster signals them.
  if constexpr (S::CLUSTER > 1) {
    ptx::cluster_sync();
  } else {
    __syncthreads();
  }
  // PDL: nothing global is read or written before the previous kernel is complete.
  if constexpr (S::PDL) ptx::griddepcontrol_wait();
  persistent_gemm<T, S::BM, S::BN, S::GROUP_M, S::BORROW, S::PDL>(
      ring, tma_a, tma_b, M, N, K,
      [&](float(&acc)[S::BN / 2], int64_t row0, int64_t col0, int half, unsigned char* stage) {
        unsigned char* out =
            stage ? stage : smem + S::STAGES * RingT::STAGE_BYTES + half * S::C_BYTES;
        if (S::HOIST && beta == 0.0f) {
          store_tile<S::BN, S::PIECE, S::SLOTS, T, true>(acc, out, tma_c, C, ldc, M, N, row0, col0,
                                                         alpha, beta, half);
        } else {
          store_tile<S::BN, S::PIECE, S::SLOTS, T>(acc, out, tma_c, C, ldc, M, N, row0, col0,
                                                   alpha, beta, half);
        }
      });
  if (threadIdx.x >= 128 && threadIdx.x % 128 == 0) ptx::bulk_wait<0>();  // the last stores landed
  // No CTA leaves while a peer may still arrive on its `empty` barriers.
  if constexpr (S::CLUSTER > 1) ptx::cluster_sync();
}

}  // namespace fastgemm::hopper
