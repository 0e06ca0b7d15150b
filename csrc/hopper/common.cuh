// hopper/common.cuh — pieces every Hopper rung shares: tile geometry of the 128-byte swizzle, the
// wgmma descriptors of a tile slice, TMA tile loads, tensor maps per operand layout, the epilogue
// of a warpgroup's accumulators and the host-side layout dispatch.
//
// Shared-memory tiles are what TMA writes with the 128-byte swizzle: rows of 64 elements (128
// bytes), 8-row groups of 1024 bytes. A K-major operand tile (row-major A, column-major B) is BMN
// rows of 64 k; an MN-major one is BMN/64 boxes of 64 k-rows x 64 elements, 8 KiB apart.
#pragma once
#include <cuda.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/epilogue.cuh"
#include "common/gemm_args.h"
#include "common/launch.cuh"
#include "common/ptx_sm90.cuh"
#include "common/runtime.h"
#include "hopper/tensor_map.h"

namespace fastgemm::hopper {

constexpr int BLOCK_K = 64;                    // one swizzled row of k (128 bytes)
constexpr int BOX = 64;                        // elements per swizzled row
constexpr int BOX_BYTES = BOX * BLOCK_K * 2;   // one 64x64 box
constexpr int SW_ROW = 128, SW_GROUP = 1024;   // bytes per swizzled row / per 8-row group

template <int BMN>
constexpr int tile_bytes() {
  return BMN * BLOCK_K * 2;
}

// wgmma descriptor of the slice of an operand tile that starts `offset` bytes in, at k-step kk.
// K-major: 8-row groups SW_GROUP apart (SBO); a 16-deep k-step moves 32 bytes along the swizzled
// row. MN-major: 8-row groups along k SW_GROUP apart (SBO), 64-element chunks along M/N a box
// apart (LBO); a k-step moves 16 rows.
template <bool K_MAJOR>
__device__ __forceinline__ uint64_t slice_desc(uint32_t tile, int offset, int kk) {
  if (K_MAJOR) return ptx::wgmma_desc_sw128(tile + offset + 32 * kk, 16, SW_GROUP);
  return ptx::wgmma_desc_sw128(tile + offset + 16 * SW_ROW * kk, BOX_BYTES, SW_GROUP);
}

// One thread issues the TMA copies of part `part` (of PARTS) of a BMN x 64 tile (k0, x0): rows
// x0 + part * BMN / PARTS on, written where they sit in the whole tile. With a `cta_mask` the
// part is multicast to the same offset of every CTA in the mask (the cluster rungs split the
// shared operand's tile between the CTAs, each loading one part for all of them).
template <int BMN, bool K_MAJOR, int PARTS = 1>
__device__ __forceinline__ void load_tile(unsigned char* dst, const CUtensorMap* map,
                                          uint64_t* bar, int k0, int x0, int part = 0,
                                          uint16_t cta_mask = 0) {
  constexpr int ROWS = BMN / PARTS;
  auto copy = [&](unsigned char* d, int c0, int c1) {
    if (cta_mask) {
      ptx::tma_load_2d_multicast(d, map, bar, c0, c1, cta_mask);
    } else {
      ptx::tma_load_2d(d, map, bar, c0, c1);
    }
  };
  x0 += part * ROWS;
  if (K_MAJOR) {  // one box of 64 (k) x ROWS rows (the tensor map's box)
    copy(dst + part * ROWS * SW_ROW, k0, x0);
  } else {        // ROWS / 64 boxes of 64 elements x 64 (k) rows
    static_assert(ROWS % BOX == 0, "MN-major parts are whole 64-element boxes");
    dst += part * (ROWS / BOX) * BOX_BYTES;
#pragma unroll
    for (int j = 0; j < ROWS / BOX; ++j) copy(dst + j * BOX_BYTES, x0 + BOX * j, k0);
  }
}

// C = alpha * acc + beta * C for a warpgroup's 64 x N accumulators at (row0, col0), in fp32,
// rounded once; two columns per store (16-byte aligned rows), one at the right edge.
template <int N, typename T>
__device__ __forceinline__ void store_acc(const float (&acc)[N / 2], T* C, int64_t ldc, int64_t M,
                                          int64_t Ncols, int64_t row0, int64_t col0, float alpha,
                                          float beta) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int j = 0; j < N / 8; ++j)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t row = row0 + warp * 16 + lane / 4 + 8 * r;
      const int64_t col = col0 + j * 8 + 2 * (lane % 4);
      if (row >= M || col >= Ncols) continue;
      store_pair(C + row * ldc + col, alpha * acc[4 * j + 2 * r], alpha * acc[4 * j + 2 * r + 1],
                 beta, col + 1 < Ncols, Ncols - col);
    }
}

// The shared memory a kernel asks for: its tiles plus 1 KiB to align them to the swizzle atom.
__device__ __forceinline__ unsigned char* aligned_smem(unsigned char* raw) {
  return reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(raw) + 1023) &
                                          ~uintptr_t(1023));
}

// --- one-stage mainloop (v10, v11) --------------------------------------------------------------
// WARPGROUPS warpgroups share a BM x BN tile, each owning BM / 64 / WARPGROUPS slices of 64 rows;
// per k-tile one thread issues the TMA copies, everyone waits on the mbarrier, multiplies, and
// meets at a barrier before the next copy overwrites the tiles.
template <typename T, int BM, int BN, int WARPGROUPS, bool A_KMAJOR, bool B_KMAJOR>
__device__ __forceinline__ void one_stage_gemm(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                               T* C, int64_t M, int64_t N, int64_t K, int64_t ldc,
                                               float alpha, float beta) {
  constexpr int SLICES = BM / 64 / WARPGROUPS, A_BYTES = tile_bytes<BM>();
  extern __shared__ unsigned char smem_raw[];
  unsigned char* As = aligned_smem(smem_raw);
  unsigned char* Bs = As + A_BYTES;
  __shared__ uint64_t full;  // the tile's TMA copies have landed

  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::fence_barrier_init();
  }
  __syncthreads();

  float acc[SLICES][BN / 2];
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
#pragma unroll
  for (int h = 0; h < SLICES; ++h) {
    store_acc<BN>(acc[h], C, ldc, M, N, m0 + 64 * (wg * SLICES + h), n0, alpha, beta);
  }
}

// Output tile `index` of a persistent block, in groups of GROUP_M tile rows walked column by column
// (an L2-friendly order: a band of A rows stays resident while B streams past it).
template <int BM, int BN, int GROUP_M>
__device__ __forceinline__ void grouped_tile(int index, int tiles_m, int tiles_n, int& m0, int& n0) {
  const int per_group = GROUP_M * tiles_n, group = index / per_group;
  const int first_m = group * GROUP_M;
  const int rows = min(tiles_m - first_m, GROUP_M);
  const int in_group = index % per_group;
  m0 = (first_m + in_group % rows) * BM;
  n0 = (in_group / rows) * BN;
}

// --- the producer/consumer ring of the warp-specialised rungs (v12-v15) --------------------------
// STAGES buffers of (A tile, B tile). full[s]: the stage's TMA copies have landed (one arrival
// plus the transaction bytes); empty[s]: every consumer warpgroup is done reading it (CONSUMERS
// arrivals). Producer and consumers walk the same sequence of k-tiles, counted by `it` across
// output tiles: stage it % STAGES, and round it / STAGES gives the phase parity to wait for.
//
// CLUSTER > 1: the CTAs of a cluster compute vertically stacked tiles (same n0) and share the B
// tile. Each CTA's producer loads its own A tile and 1/CLUSTER of the B tile, multicast into every
// CTA of the cluster, so a stage of one CTA is written by all of them: its `empty` barrier then
// counts the consumers of the whole cluster (a stage is refilled only once every CTA has read
// it), and a consumer releases a stage in every CTA. `full` still expects the whole stage's bytes,
// which arrive from CLUSTER producers.
template <int BM, int BN, int STAGES, int CONSUMERS, bool A_KMAJOR, bool B_KMAJOR,
          int CLUSTER_ = 1>
struct Ring {
  static constexpr int CLUSTER = CLUSTER_, DEPTH = STAGES;
  static constexpr int A_BYTES = tile_bytes<BM>(), STAGE_BYTES = A_BYTES + tile_bytes<BN>();
  static_assert(STAGE_BYTES % 1024 == 0, "stages must keep the 1024-byte swizzle alignment");
  unsigned char* stages;
  uint64_t* full;
  uint64_t* empty;
  uint32_t rank = 0;  // this CTA's rank in its cluster

  // Thread 0 initialises the barriers; the caller then synchronises the block.
  __device__ __forceinline__ void init() const {
    if (threadIdx.x != 0) return;
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMERS * CLUSTER);
    }
    ptx::fence_barrier_init();
  }

  // Producer (one thread): the k_tiles k-tiles of output tile (m0, n0). A stage is refilled once
  // every consumer released its previous round; the first round finds every stage free.
  __device__ __forceinline__ void produce(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                          int m0, int n0, int k_tiles, int& it) const {
    for (int t = 0; t < k_tiles; ++t, ++it) {
      const int s = it % STAGES;
      if (it >= STAGES) ptx::mbarrier_wait(&empty[s], (it / STAGES - 1) & 1);
      unsigned char* As = stages + s * STAGE_BYTES;
      ptx::mbarrier_arrive_expect_tx(&full[s], STAGE_BYTES);
      load_tile<BM, A_KMAJOR>(As, tma_a, &full[s], t * BLOCK_K, m0);
      if (CLUSTER == 1) {
        load_tile<BN, B_KMAJOR>(As + A_BYTES, tma_b, &full[s], t * BLOCK_K, n0);
      } else {
        load_tile<BN, B_KMAJOR, CLUSTER>(As + A_BYTES, tma_b, &full[s], t * BLOCK_K, n0, rank,
                                         (1u << CLUSTER) - 1);
      }
    }
  }

  // Producer (one thread) of a persistent block: the k-tiles of output tiles first, first + step,
  // ... in grouped order (tiles of BM_TILE rows; this CTA's rows start row_offset into each).
  template <int BM_TILE, int GROUP_M>
  __device__ __forceinline__ void produce_tiles(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                                int first, int step, int tiles_m, int tiles_n,
                                                int k_tiles, int row_offset = 0) const {
    int it = 0;
    for (int tile = first; tile < tiles_m * tiles_n; tile += step) {
      int m0, n0;
      grouped_tile<BM_TILE, BN, GROUP_M>(tile, tiles_m, tiles_n, m0, n0);
      produce(tma_a, tma_b, m0 + row_offset, n0, k_tiles, it);
    }
  }

  // A consumer warpgroup's leader: the warpgroup has finished reading stage s (in every CTA of
  // the cluster, whose producers all write into it).
  __device__ __forceinline__ void release(int s) const {
    if (CLUSTER == 1) {
      ptx::mbarrier_arrive(&empty[s]);
    } else {
#pragma unroll
      for (int c = 0; c < CLUSTER; ++c) ptx::mbarrier_arrive_cluster(&empty[s], c);
    }
  }

  // Consumer warpgroup `slice` (its 64 rows of the tile): acc = the tile's product over k_tiles
  // k-tiles. One k-tile of wgmmas stays in flight (wait_group 1), so the previous stage is
  // released while the tensor cores already work on the current one. The tile's first wgmma
  // ignores acc's old contents, so no zeroing pass separates two tiles. With keep_last the
  // warpgroup keeps its last stage (v18 stores C through it), and its leader runs `on_first` once
  // the tile's first k-tile is issued.
  template <typename T, typename OnFirst = void (*)()>
  __device__ __forceinline__ void consume(float (&acc)[BN / 2], int slice, int k_tiles, int& it,
                                          bool keep_last = false,
                                          OnFirst on_first = [] {}) const {
    const bool leader = threadIdx.x % 128 == 0;
    for (int t = 0; t < k_tiles; ++t, ++it) {
      const int s = it % STAGES;
      ptx::mbarrier_wait(&full[s], (it / STAGES) & 1);
      const uint32_t a_s = ptx::smem_addr(stages + s * STAGE_BYTES), b_s = a_s + A_BYTES;
      ptx::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
        ptx::wgmma_m64k16<BN, T>(acc, slice_desc<A_KMAJOR>(a_s, slice * BOX_BYTES, kk),
                                 slice_desc<B_KMAJOR>(b_s, 0, kk), !A_KMAJOR, !B_KMAJOR,
                                 t > 0 || kk > 0);
      }
      ptx::wgmma_commit();
      ptx::wgmma_wait<1>();
      if (t > 0 && leader) release((it - 1) % STAGES);
      if (t == 0 && leader) on_first();
    }
    ptx::wgmma_wait<0>();
    if (leader && !keep_last) release((it - 1) % STAGES);
    ptx::fence_registers(acc);
  }
};

// Registers per thread after setmaxnreg: the producer warpgroup only issues copies, the consumer
// warpgroups hold 128 fp32 accumulators each (384 threads: 40 + 2 x 232 <= 504 of the 512).
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;

// Host: the grid of a persistent rung: one block per SM (at most one per output tile), in whole
// clusters of CLUSTER blocks stacked along M (a cluster tile is CLUSTER * bm rows).
inline dim3 persistent_grid(const GemmArgs& a, int bm, int bn, const char* name, int cluster = 1) {
  int device = 0;
  FASTGEMM_CUDA_CHECK(cudaGetDevice(&device));
  const int sms = device_props(device).sm_count;  // queried once per device
  const int64_t tiles = ceil_div(a.M, int64_t(bm) * cluster) * ceil_div(a.N, bn);
  if (tiles > 2147483647 / cluster) {
    throw std::runtime_error(std::string(name) + ": too many output tiles");
  }
  const int64_t clusters = tiles < sms / cluster ? tiles : sms / cluster;
  return dim3(static_cast<unsigned>(clusters * cluster));
}

// Host: a persistent grid of clusters capped at the clusters the GPU can hold at once (a GPC
// whose free SMs do not divide by the cluster size leaves some idle; a cluster beyond the cap
// would wait for a second wave). Cached per device: the answer depends only on the kernel, its
// shared memory and the GPU.
template <int CLUSTER, typename Kernel>
dim3 resident_clusters(Kernel kernel, dim3 grid, int threads, int smem) {
  static std::atomic<int> cached[64] = {};
  int device = 0;
  FASTGEMM_CUDA_CHECK(cudaGetDevice(&device));
  int clusters = device < 64 ? cached[device].load(std::memory_order_relaxed) : 0;
  if (clusters == 0) {
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem;
    FASTGEMM_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    if (clusters < 1) throw std::runtime_error("no cluster of this kernel fits on the GPU");
    if (device < 64) cached[device].store(clusters, std::memory_order_relaxed);
  }
  if (grid.x > unsigned(clusters * CLUSTER)) grid.x = clusters * CLUSTER;
  return grid;
}

// Host: tensor maps for BM x 64 tiles of A and BN x 64 tiles of B in their layouts (and 64x64
// boxes of C), and a launch of the instantiation for that layout pair. KernelFor(a_kmajor,
// b_kmajor) returns the kernel; every Hopper kernel takes (tma_a, tma_b, tma_c, C, M, N, K, ldc,
// alpha, beta). CLUSTER > 1: the kernel has __cluster_dims__(CLUSTER), each CTA loads 1/CLUSTER
// of a K-major B tile (the box of B's map), and the grid is capped at the resident clusters.
// BALANCE (persistent rungs): as few blocks as keep the number of tile rounds (a block per SM at
// most): 512 tiles on 132 SMs take 4 rounds on 128 blocks as on 132, and the 4 idle SMs spare
// the power budget that the busy ones' clocks share.
template <int BM, int BN, typename T, int CLUSTER = 1, bool BALANCE = false, bool PDL = false,
          typename KernelFor>
void launch(const GemmArgs& a, const char* name, dim3 grid, int threads, int smem,
            KernelFor kernel_for) {
  const bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  const bool a_kmajor = !a.a_col_major, b_kmajor = a.b_col_major;
  if (a.M > 2147483647 - BM || a.N > 2147483647 - BN || a.K > 2147483647 - BLOCK_K) {
    throw std::runtime_error(std::string(name) +
                             ": TMA coordinates are 32-bit; M, N and K must stay below 2^31");
  }
  // Storage views: K-major A is M rows of K elements, MN-major A is K rows of M (B likewise).
  const CUtensorMap tma_a = a_kmajor ? make_tensor_map_2d(a.A, bf16, a.K, a.M, a.lda, BOX, BM)
                                     : make_tensor_map_2d(a.A, bf16, a.M, a.K, a.lda, BOX, BLOCK_K);
  const CUtensorMap tma_b = b_kmajor ? make_tensor_map_2d(a.B, bf16, a.K, a.N, a.ldb, BOX, BN / CLUSTER)
                                     : make_tensor_map_2d(a.B, bf16, a.N, a.K, a.ldb, BOX, BLOCK_K);
  // C (row-major, M rows of N) in 64x64 boxes, for the rungs that store through TMA.
  const CUtensorMap tma_c = make_tensor_map_2d(a.C, bf16, a.N, a.M, a.ldc, BOX, BOX);
  with_kmajor(a, [&](auto ak, auto bk) {
    auto kernel = kernel_for(ak, bk);
    set_smem(kernel, smem);
    if constexpr (CLUSTER > 1) grid = resident_clusters<CLUSTER>(kernel, grid, threads, smem);
    if constexpr (BALANCE) {
      const int64_t tiles = ceil_div(a.M, int64_t(BM) * CLUSTER) * ceil_div(a.N, BN);
      const int64_t rounds = ceil_div(tiles, int64_t(grid.x / CLUSTER));
      grid.x = static_cast<unsigned>(CLUSTER * ceil_div(tiles, rounds));
    }
    // One launch path; PDL adds programmatic stream serialisation.
    cudaLaunchAttribute pdl[1];
    pdl[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pdl[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem;
    config.stream = a.stream;
    config.attrs = pdl;
    config.numAttrs = PDL ? 1 : 0;
    cuda_check(cudaLaunchKernelEx(&config, kernel, tma_a, tma_b, tma_c, static_cast<T*>(a.C), a.M,
                                  a.N, a.K, a.ldc, a.alpha, a.beta),
               name);
  });
  cuda_check(cudaGetLastError(), name);
}

}  // namespace fastgemm::hopper

// The signature every Hopper kernel shares, one instantiation per element type and operand
// layout; the rung's file adds its attributes and writes the body:
//   FASTGEMM_HOPPER_KERNEL(hgemm_v12_warp_specialized, __launch_bounds__(THREADS, 1)) { ... }
// The kernel keeps the rung's name (NAME_kernel), which the SASS tests and profilers look for.
#define FASTGEMM_HOPPER_KERNEL(NAME, ATTRIBUTES)                                                \
  template <typename T, bool A_KMAJOR, bool B_KMAJOR>                                           \
  __global__ void ATTRIBUTES NAME##_kernel(                                                     \
      const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,     \
      const __grid_constant__ CUtensorMap tma_c, T* C, int64_t M, int64_t N, int64_t K,         \
      int64_t ldc, float alpha, float beta)

// The rung's host side, after its kernel: NAME_launch<T> launches NAME_kernel for the operands'
// layouts on GRID (an expression of the GemmArgs `a` and the rung's `name`) with the file's
// BLOCK_M, BLOCK_N, THREADS and SMEM, a cluster of CLUSTER CTAs and, if BALANCE, the balanced
// persistent grid (hopper::launch); then the fp16/bf16 entry points of the kernel table and its
// shared-memory figure. PDL: launched with programmatic stream serialisation (the kernel calls
// griddepcontrol.wait before it touches global memory).
#define FASTGEMM_HOPPER_ENTRY_POINTS(NAME, GRID, CLUSTER, BALANCE, PDL)                              \
  namespace fastgemm {                                                                          \
  namespace {                                                                                   \
  template <typename T>                                                                         \
  void NAME##_launch(const GemmArgs& a) {                                                       \
    constexpr const char* name = #NAME;                                                         \
    hopper::launch<BLOCK_M, BLOCK_N, T, CLUSTER, BALANCE, PDL>(                                      \
        a, name, GRID, THREADS, SMEM, [](auto ak, auto bk) {                                    \
          return NAME##_kernel<T, decltype(ak)::value, decltype(bk)::value>;                    \
        });                                                                                     \
  }                                                                                             \
  }                                                                                             \
  void NAME##_f16(const GemmArgs& a) { NAME##_launch<__half>(a); }                              \
  void NAME##_bf16(const GemmArgs& a) { NAME##_launch<__nv_bfloat16>(a); }                      \
  int NAME##_smem() { return SMEM; }                                                            \
  }
