// hopper/epilogue.cuh — a consumer warpgroup's 64 x BN fp32 accumulators -> C = alpha * acc +
// beta * C, rounded once to fp16/bf16.
//
//   store_acc       registers -> global, two columns per store (store_acc_quad: one float4's).
//   stage_acc       registers -> an fp32 tile in shared memory (split-K partial sums).
//   store_tile      stmatrix into 128-byte-swizzled 64x64 boxes in shared memory, TMA stores
//                   from there; BETA_ZERO instantiates the loop without any read of C.
//   TmaStore        store_tile for a persistent kernel: which buffer a warpgroup stores through,
//                   and beta == 0 tested once per tile (HOIST_BETA) or per pair of outputs.
//   OwnBuffers / BorrowedStage
//                   where the C buffer comes from: a buffer per consumer warpgroup after the
//                   ring, or (BorrowedStage) warpgroup 2 keeps the ring stage of its tile's last
//                   k-tile and stores through it, giving it back to the producer once the next
//                   tile's first k-tile is issued and the TMA stores have read it.
// Contract: C is read only when beta != 0. A warpgroup's stores to shared memory are fenced for
// the async proxy before its leader issues the TMA store; a buffer (or slot) is rewritten only
// after the bulk group that last read it is done (bulk wait_group.read). Named barriers: 1 + half
// (one warpgroup's epilogue), 3 (both consumer warpgroups, BorrowedStage).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "common/epilogue.cuh"
#include "hopper/tile.cuh"

namespace fastgemm::hopper {

// Registers -> global: a warpgroup thread's accumulators acc[4j .. 4j+3] (columns 8j + 2(lane % 4)
// and the next of rows warp * 16 + lane / 4 and 8 below, of the 64 x N tile at (row0, col0)),
// given as v, in fp32, rounded once; two columns per store (16-byte aligned rows), one at the
// right edge.
template <typename T>
__device__ __forceinline__ void store_acc_quad(float4 v, int j, T* C, int64_t ldc, int64_t M,
                                               int64_t Ncols, int64_t row0, int64_t col0,
                                               float alpha, float beta) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int64_t row = row0 + warp * 16 + lane / 4, col = col0 + j * 8 + 2 * (lane % 4);
  if (col >= Ncols) return;
  const bool pair = col + 1 < Ncols;
  if (row < M) store_pair(C + row * ldc + col, alpha * v.x, alpha * v.y, beta, pair, Ncols - col);
  if (row + 8 < M) {
    store_pair(C + (row + 8) * ldc + col, alpha * v.z, alpha * v.w, beta, pair, Ncols - col);
  }
}
// All of a warpgroup's 64 x N accumulators at (row0, col0).
template <int N, typename T>
__device__ __forceinline__ void store_acc(const float (&acc)[N / 2], T* C, int64_t ldc, int64_t M,
                                          int64_t Ncols, int64_t row0, int64_t col0, float alpha,
                                          float beta) {
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    store_acc_quad(make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]), j, C,
                   ldc, M, Ncols, row0, col0, alpha, beta);
  }
}

// A consumer warpgroup's 64 x N accumulators, in fp32, into rows 0..63 of `red` (a row pitch of
// LD floats; LD % 32 == 8 or 24 keeps each half-warp's 8-byte stores on 32 distinct banks): the
// partial tile of a split-K block (common/split_k.cuh).
template <int N, int LD>
__device__ __forceinline__ void stage_acc(const float (&acc)[N / 2], float* red) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int j = 0; j < N / 8; ++j)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = warp * 16 + lane / 4 + 8 * r, col = j * 8 + 2 * (lane % 4);
      *reinterpret_cast<float2*>(red + row * LD + col) =
          make_float2(acc[4 * j + 2 * r], acc[4 * j + 2 * r + 1]);
    }
}

// A consumer warpgroup's 64 x BN accumulators -> C through shared memory and TMA stores, in
// pieces of PIECE 64x64 boxes (BN / 64 / PIECE pieces per tile) through a buffer of SLOTS pieces
// at `out`. Each box is 64 rows of 128 bytes with the 128-byte swizzle (16-byte chunk c of row r
// stored at chunk c ^ (r % 8)), which is what the tensor map of C expects and keeps every
// stmatrix conflict-free. Each piece is one bulk group; a slot is rewritten only once the store
// that last read it is done (at most SLOTS - 1 younger groups pending). Named barrier 1 + half
// keeps the warpgroup together. BETA_ZERO: the loop holds no test of beta and no code that
// reads C.
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

// Each consumer warpgroup stores through its own buffer (BUFFER_BYTES each, after the ring).
template <typename RingT>
struct OwnBuffers {
  __device__ __forceinline__ bool keeps_stage(int) const { return false; }
  __device__ __forceinline__ void give_back(const RingT&) {}
  __device__ __forceinline__ unsigned char* take(const RingT&, int, int) { return nullptr; }
};

// Warpgroup 2 stores through the ring stage of its tile's last k-tile; warpgroup 1 through the
// one buffer after the ring. One object per consumer thread (only the leader's `held` matters).
template <typename RingT>
struct BorrowedStage {
  static_assert(RingT::CONSUMER_WARPGROUPS == 2,
                "take() meets both consumer warpgroups at named barrier 3 (256 threads)");
  int held = -1;  // the stage borrowed for the previous tile's stores

  __device__ __forceinline__ bool keeps_stage(int half) const { return half == 1; }
  // Once the next tile's first k-tile is issued: the stores issued a k-tile ago have read the
  // stage, which goes back to the producer.
  __device__ __forceinline__ void give_back(const RingT& ring) {
    if (held >= 0) {
      ptx::bulk_wait_read<0>();
      ring.release(held);
      held = -1;
    }
  }
  // After the tile's mainloop (`it` past its last k-tile): both warpgroups read every stage, so
  // warpgroup 2 overwrites its last one only once warpgroup 1 is done with it too (named barrier
  // 3, both consumer warpgroups, once per tile).
  __device__ __forceinline__ unsigned char* take(const RingT& ring, int it, int half) {
    ptx::named_barrier(3, 256);
    if (half != 1) return nullptr;
    held = (it - 1) % RingT::DEPTH;
    return ring.stage(held);
  }
};

// store_tile for a persistent kernel of configuration Cfg (BN, C_PIECE, C_SLOTS, HOIST_BETA):
// through `stage` where a BorrowedStage lent one, else through warpgroup `half`'s buffer.
template <typename Cfg, typename T>
struct TmaStore {
  static constexpr int BUFFER_BYTES = Cfg::C_SLOTS * Cfg::C_PIECE * BOX_BYTES;
  unsigned char* buffers;  // the first consumer warpgroup's buffer; the second's follows it
  const CUtensorMap* tma_c;
  const T* C;
  int64_t ldc, M, N;
  float alpha, beta;

  __device__ __forceinline__ void operator()(float (&acc)[Cfg::BN / 2], int64_t row0,
                                             int64_t col0, int half, unsigned char* stage) const {
    unsigned char* out = stage ? stage : buffers + half * BUFFER_BYTES;
    if (Cfg::HOIST_BETA && beta == 0.0f) {
      store_tile<Cfg::BN, Cfg::C_PIECE, Cfg::C_SLOTS, T, true>(acc, out, tma_c, C, ldc, M, N, row0,
                                                               col0, alpha, beta, half);
    } else {
      store_tile<Cfg::BN, Cfg::C_PIECE, Cfg::C_SLOTS, T>(acc, out, tma_c, C, ldc, M, N, row0, col0,
                                                         alpha, beta, half);
    }
  }
};

}  // namespace fastgemm::hopper
