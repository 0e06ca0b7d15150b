// hopper/scheduler.cuh — which output tiles a block computes, and the grid that covers them.
//
// Contract: a scheduler gives each block (each cluster: its CTAs stack along M, a cluster tile
// is CLUSTER * BM rows) a sequence of output tiles (m0, n0), and the host side gives the grid
// that makes those sequences cover every tile exactly once. Device side: tiles first,
// first + step, ... below count(); `tile(index, m0, n0)`. Host side: `grid(a, name)`.
//   OneShot     — a block per tile (blockIdx.y rows, blockIdx.x columns), row-major.
//   Persistent  — a block (cluster) per SM at most, walking tiles in groups of GROUP_M tile rows,
//                 column by column: a band of A rows stays in L2 while B streams past it.
//   SplitK      — a block per tile and share of K: grid x the tiles (row tiles fastest), grid z
//                 the split, the S blocks of a tile one cluster (common/split_k.cuh).
//   StreamK     — a block per SM at most, in groups of one block per row of tiles; each group
//                 an equal run of the k-tiles of the columns of tiles, column after column: a
//                 run starts and ends anywhere in a column, so a tile's K may be shared by the
//                 blocks of consecutive groups (stream_k.cuh sums them).
//   Hybrid      — a block per SM at most over Persistent's tile order: whole tiles a round of
//                 the grid at a time, then the tiles of the last partial round split along K
//                 (hybrid.cuh sums their shares).
// (The launcher may shrink a persistent grid further: to the clusters the GPU holds at once, and
// with BALANCE to as few blocks as keep the number of tile rounds; see launch.cuh.)
#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/gemm_args.h"
#include "common/launch.cuh"
#include "common/runtime.h"
#include "common/split_k.cuh"
#include "hopper/tile.cuh"

namespace fastgemm::hopper {

// Output tile `index` in groups of GROUP_M tile rows walked column by column.
template <int BM, int BN, int GROUP_M>
__device__ __forceinline__ void grouped_tile(int index, int tiles_m, int tiles_n, int& m0, int& n0) {
  const int per_group = GROUP_M * tiles_n, group = index / per_group;
  const int first_m = group * GROUP_M;
  const int rows = min(tiles_m - first_m, GROUP_M);
  const int in_group = index % per_group;
  m0 = (first_m + in_group % rows) * BM;
  n0 = (in_group / rows) * BN;
}

template <int BM, int BN>
struct OneShot {
  __device__ __forceinline__ static void tile(int& m0, int& n0) {
    m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  }
  static dim3 grid(const GemmArgs& a, const char* name) { return tile_grid(a, BM, BN, name); }
};

template <int BM, int BN>
struct SplitK {
  __device__ __forceinline__ static void tile(int64_t M, int& m0, int& n0) {
    int64_t m, n;
    split_tile(M, BM, BN, m, n);
    m0 = static_cast<int>(m), n0 = static_cast<int>(n);
  }
  static dim3 grid(const GemmArgs& a, const char* name) {
    return split_grid(a.M, a.N, BM, BN, name);
  }
};

// StreamK: common/split_k.cuh's, on this file's 64-deep k-tiles.
template <int BM, int BN>
using StreamK = fastgemm::StreamK<BM, BN, BLOCK_K>;

// Hybrid: P blocks (one per SM at most), T tiles in Persistent's grouped order, KT k-tiles each.
// The first T - R tiles (R = T mod P) run whole in rounds of P, tile b + j P for block b's j-th,
// in step as in a persistent kernel; the last R tiles (the partial round) are split S ways along
// K (split_of: as many shares as fit R x S <= P, at most MAX_SPLIT, each of at least MIN_SHARE
// k-tiles), block b < R S taking share z = b / R of tile T - R + b mod R after its whole tiles.
// The blocks of a share start it together and cut their tiles at the same k-tiles, so each
// k-tile of an operand panel is read at one time. Share S - 1 (the highest-numbered blocks) owns
// the tile and adds the shares z = 0 .. S - 2 of blocks z R + r, which are dispatched before it.
template <int BM, int BN, int GROUP_M>
struct Hybrid {
  static constexpr int MAX_SPLIT = 4, MIN_SHARE = 4;
  int tiles_m, tiles_n, k_tiles, block, blocks, whole, rest, split, items;

  // The split of the last partial round of `tiles` tiles on `blocks` blocks (1: none).
  __host__ __device__ static int split_of(int64_t tiles, int64_t blocks, int64_t k_tiles) {
    const int64_t rest = tiles % blocks;
    if (rest == 0) return 1;
    const int64_t s = blocks / rest < MAX_SPLIT ? blocks / rest : MAX_SPLIT;
    const int64_t most = k_tiles / MIN_SHARE;
    return static_cast<int>(s < most ? s : most < 1 ? 1 : most);
  }
  __device__ __forceinline__ Hybrid(int64_t M, int64_t N, int64_t K)
      : tiles_m(static_cast<int>((M + BM - 1) / BM)),
        tiles_n(static_cast<int>((N + BN - 1) / BN)),
        k_tiles(static_cast<int>((K + BLOCK_K - 1) / BLOCK_K)),
        block(static_cast<int>(blockIdx.x)),
        blocks(static_cast<int>(gridDim.x)) {
    const int tiles = tiles_m * tiles_n;
    rest = tiles % blocks, whole = tiles - rest;
    split = split_of(tiles, blocks, k_tiles);
    items = whole / blocks + (block < rest * split ? 1 : 0);
  }
  // Item i: tile index c, its origin (m0, n0), k-tiles [k0, k1) of the tile's; share z (the
  // split item's, 0 for a whole tile).
  __device__ __forceinline__ void item(int i, int& c, int& m0, int& n0, int& k0, int& k1,
                                       int& z) const {
    if (i < whole / blocks) {
      c = block + i * blocks, z = 0, k0 = 0, k1 = k_tiles;
    } else {
      c = whole + block % rest, z = block / rest;
      k0 = static_cast<int>(int64_t(k_tiles) * z / split);
      k1 = static_cast<int>(int64_t(k_tiles) * (z + 1) / split);
    }
    grouped_tile<BM, BN, GROUP_M>(c, tiles_m, tiles_n, m0, n0);
  }

  // A block per SM (fewer where the tiles are fewer: no block without work).
  static dim3 grid(const GemmArgs& a, const char* name) {
    const int device = active_device();
    const int64_t tiles = ceil_div(a.M, int64_t(BM)) * ceil_div(a.N, int64_t(BN));
    if (tiles > 2147483647) throw std::runtime_error(std::string(name) + ": too many output tiles");
    const int64_t sms = launch_sms(device);
    if (tiles >= sms) return dim3(static_cast<unsigned>(sms));
    return dim3(static_cast<unsigned>(tiles * split_of(tiles, sms, ceil_div(a.K, int64_t(BLOCK_K)))));
  }
};

template <int BM, int BN, int GROUP_M, int CLUSTER = 1>
struct Persistent {
  static constexpr int BM_TILE = BM * CLUSTER;  // rows of a cluster's tile
  int tiles_m, tiles_n, first, step;

  __device__ __forceinline__ Persistent(int64_t M, int64_t N)
      : tiles_m(static_cast<int>((M + BM_TILE - 1) / BM_TILE)),
        tiles_n(static_cast<int>((N + BN - 1) / BN)),
        first(blockIdx.x / CLUSTER),
        step(gridDim.x / CLUSTER) {}
  __device__ __forceinline__ int count() const { return tiles_m * tiles_n; }
  __device__ __forceinline__ void tile(int index, int& m0, int& n0) const {
    grouped_tile<BM_TILE, BN, GROUP_M>(index, tiles_m, tiles_n, m0, n0);
  }

  // One block per SM at most (one per output tile when there are fewer), in whole clusters: at
  // least one cluster, where reserved SMs leave fewer SMs than a cluster's blocks.
  static dim3 grid(const GemmArgs& a, const char* name) {
    const int device = active_device();
    const int sms = launch_sms(device);  // the device's, less reserved SMs
    const int64_t tiles = ceil_div(a.M, int64_t(BM_TILE)) * ceil_div(a.N, BN);
    if (tiles > 2147483647 / CLUSTER) {
      throw std::runtime_error(std::string(name) + ": too many output tiles");
    }
    const int64_t fit = std::max(1, sms / CLUSTER);
    const int64_t clusters = tiles < fit ? tiles : fit;
    return dim3(static_cast<unsigned>(clusters * CLUSTER));
  }
};

}  // namespace fastgemm::hopper
