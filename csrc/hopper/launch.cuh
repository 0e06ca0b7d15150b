// hopper/launch.cuh — the host side of a Hopper rung, read from its configuration struct (see
// rungs.h): tensor maps of A, B and C, the scheduler's grid, the cluster size and programmatic
// dependent launch — each stated once, in the struct, for the kernel and the launch alike.
#pragma once
#include <cuda.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "common/gemm_args.h"
#include "common/launch.cuh"
#include "common/runtime.h"
#include "hopper/ring.cuh"
#include "hopper/scheduler.cuh"
#include "hopper/tensor_map.h"
#include "hopper/tile.cuh"

namespace fastgemm::hopper {

enum class Mainloop { one_stage, ring };  // mainloop.cuh
enum class Schedule { one_shot, persistent, split_k, split_global, stream_k, hybrid };  // scheduler.cuh
// epilogue.cuh: store_acc / TmaStore / stage_acc + cluster_reduce_store (common/split_k.cuh)
enum class Store { registers, tma, split_k };

// Dynamic shared memory of a configuration: its tiles (one stage, or the ring), the TMA-store
// epilogue's C buffers (one per consumer warpgroup, one when warpgroup 2 borrows a stage), and
// 1 KiB to align them to the swizzle atom, and a staging producer's buffers (STAGING, after the
// ring). A split-K partial tile (BM rows at a pitch of RED_LD
// floats) takes the ring's place once the ring is drained.
template <typename Cfg>
constexpr int smem_bytes() {
  constexpr int stage = tile_bytes<Cfg::BM>() + tile_bytes<Cfg::BN>();
  constexpr int tiles = Cfg::MAINLOOP == Mainloop::one_stage ? stage : Cfg::STAGES * stage;
  int c_buffers = 0;  // a TmaStore's: one per consumer warpgroup, or one and a borrowed stage
  if constexpr (Cfg::STORE == Store::tma) {
    c_buffers = (Cfg::BORROW ? 1 : consumers_of<Cfg>()) * Cfg::C_SLOTS * Cfg::C_PIECE * BOX_BYTES;
  }
  static_assert(!Cfg::BORROW || Cfg::C_SLOTS * Cfg::C_PIECE * BOX_BYTES <= stage,
                "a borrowed stage holds a C buffer");
  if constexpr (Cfg::STORE == Store::split_k) {
    static_assert(Cfg::BM * Cfg::RED_LD * 4 <= tiles, "the drained ring holds the partial tile");
  }
  return tiles + c_buffers + Cfg::STAGING + 1024;
}

template <typename Cfg>
using SchedulerOf = std::conditional_t<
    Cfg::SCHEDULE == Schedule::persistent, Persistent<Cfg::BM, Cfg::BN, Cfg::GROUP_M, Cfg::CLUSTER>,
    std::conditional_t<
        Cfg::SCHEDULE == Schedule::split_k || Cfg::SCHEDULE == Schedule::split_global,
        SplitK<Cfg::BM, Cfg::BN>,
        std::conditional_t<
            Cfg::SCHEDULE == Schedule::stream_k, StreamK<Cfg::BM, Cfg::BN>,
            std::conditional_t<Cfg::SCHEDULE == Schedule::hybrid,
                               Hybrid<Cfg::BM, Cfg::BN, Cfg::GROUP_M>, OneShot<Cfg::BM, Cfg::BN>>>>>;

// Host: a persistent grid of clusters capped at the clusters the GPU can hold at once (a GPC
// whose free SMs do not divide by the cluster size leaves some idle; a cluster beyond the cap
// would wait for a second wave). Cached per device: the answer depends only on the kernel, its
// shared memory and the GPU: one cache per configuration (the instantiations of a rung for both
// operand layouts share its figure; kernels of one signature but other rungs do not). The
// kernel's compiled cluster size must be the configuration's.
template <typename Cfg, typename Kernel>
dim3 resident_clusters(Kernel kernel, dim3 grid, int threads, int smem, const char* name) {
  constexpr int CLUSTER = Cfg::CLUSTER;
  static std::atomic<int> cached[64] = {};
  const int device = active_device();
  int clusters = device < 64 ? cached[device].load(std::memory_order_relaxed) : 0;
  if (clusters == 0) {
    cudaFuncAttributes attr{};
    FASTGEMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    if (attr.requiredClusterWidth != CLUSTER) {
      throw std::logic_error(std::string(name) + ": kernel compiled for clusters of " +
                             std::to_string(attr.requiredClusterWidth) + ", launched for " +
                             std::to_string(CLUSTER));
    }
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

template <typename T>
constexpr TmaElem tma_elem() {
  return std::is_same_v<T, float>           ? TmaElem::f32
         : std::is_same_v<T, __nv_bfloat16> ? TmaElem::bf16
                                            : TmaElem::f16;
}

// Host: tensor maps for BM x EK tiles of A and BN x EK tiles of B in their layouts (EK = 64
// 16-bit elements or 32 fp32: a 128-byte row), CLUSTER > 1: each CTA loads 1/CLUSTER of a
// K-major B tile (the box of B's map). Storage views: K-major A is M rows of K elements,
// MN-major A is K rows of M (B likewise); an MN-major box is EK elements x EK k-rows (load_tile).
template <typename Cfg, typename T>
std::pair<CUtensorMap, CUtensorMap> operand_maps(const GemmArgs& a, const char* name) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, CLUSTER = Cfg::CLUSTER, EK = k_tile<T>();
  constexpr TmaElem elem = tma_elem<T>();
  if (a.M > 2147483647 - BM || a.N > 2147483647 - BN || a.K > 2147483647 - BLOCK_K) {
    throw std::runtime_error(std::string(name) +
                             ": TMA coordinates are 32-bit; M, N and K must stay below 2^31");
  }
  const bool a_kmajor = !a.a_col_major, b_kmajor = a.b_col_major;
  return {a_kmajor ? make_tensor_map_2d(a.A, elem, a.K, a.M, a.lda, EK, BM)
                   : make_tensor_map_2d(a.A, elem, a.M, a.K, a.lda, EK, EK),
          b_kmajor ? make_tensor_map_2d(a.B, elem, a.K, a.N, a.ldb, EK, BN / CLUSTER)
                   : make_tensor_map_2d(a.B, elem, a.N, a.K, a.ldb, EK, EK)};
}

// C (row-major, M rows of N) in boxes of 64 rows of 128 bytes, for the rungs that store through
// TMA. (A column-major C, which only the split epilogue writes, without this map: described as
// what it is, N columns of M.)
template <typename T>
CUtensorMap c_map(const GemmArgs& a) {
  constexpr int EK = k_tile<T>();
  return a.c_col_major ? make_tensor_map_2d(a.C, tma_elem<T>(), a.M, a.N, a.ldc, EK, BOX)
                       : make_tensor_map_2d(a.C, tma_elem<T>(), a.N, a.M, a.ldc, EK, BOX);
}

// BALANCE (persistent rungs): as few blocks as keep the number of tile rounds (a block per SM at
// most): 512 tiles on 132 SMs take 4 rounds on 128 blocks as on 132, and the 4 idle SMs spare
// the power budget that the busy ones' clocks share.
template <typename Cfg>
dim3 balanced_grid(const GemmArgs& a, dim3 grid) {
  if constexpr (Cfg::BALANCE) {
    const int64_t tiles = ceil_div(a.M, int64_t(Cfg::BM) * Cfg::CLUSTER) * ceil_div(a.N, Cfg::BN);
    const int64_t rounds = ceil_div(tiles, int64_t(grid.x / Cfg::CLUSTER));
    grid.x = static_cast<unsigned>(Cfg::CLUSTER * ceil_div(tiles, rounds));
  }
  return grid;
}

// Host: the tensor maps (operand_maps, c_map) and a launch of the instantiation for the
// operands' layout pair. KernelFor(a_kmajor, b_kmajor) returns the kernel; every Hopper kernel
// takes (tma_a, tma_b, tma_c, C, M, N, K, ldc, alpha, beta). CLUSTER > 1: the grid is capped at
// the resident clusters. BALANCE: balanced_grid. PDL: launched with programmatic stream
// serialisation (the kernel executes griddepcontrol.wait before it touches global memory).
// SplitK: launch_split (split_k.cuh), K split in at most as many shares as keep SPLIT_MIN_KTILES
// k-tiles each and every cluster resident, one block per SM. SplitGlobal: S from
// global_split_count (split_k.cuh), the scratch of the stream for the partial tiles and their
// flags (the kernel takes both after ldc, alpha, beta, and no tensor map of C). StreamK: a
// block per SM (scheduler.cuh), the same scratch with a slot per block. Hybrid: the same, the
// kernel taking C's tensor map too (hybrid.cuh).
template <typename Cfg, typename T, typename KernelFor>
void launch(const GemmArgs& a, const char* name, KernelFor kernel_for) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, CLUSTER = Cfg::CLUSTER;
  constexpr int threads = Cfg::THREADS, smem = smem_bytes<Cfg>();
  constexpr int EK = k_tile<T>();  // elements per 128-byte row: a K-major box's width
  const std::pair<CUtensorMap, CUtensorMap> maps = operand_maps<Cfg, T>(a, name);
  const CUtensorMap &tma_a = maps.first, &tma_b = maps.second;
  dim3 grid = SchedulerOf<Cfg>::grid(a, name);
  const CUtensorMap tma_c = c_map<T>(a);
  with_kmajor(a, [&](auto ak, auto bk) {
    auto kernel = kernel_for(ak, bk);
    set_smem(kernel, smem);
    if constexpr (CLUSTER > 1) grid = resident_clusters<Cfg>(kernel, grid, threads, smem, name);
    if constexpr (Cfg::SCHEDULE == Schedule::split_k) {
      static_assert(Cfg::PDL && CLUSTER == 1, "a split launch is dependent, its cluster the split");
      const int device = active_device();
      const DeviceProps& props = device_props(device);
      const int split = split_count(reinterpret_cast<const void*>(kernel), threads, smem, grid.x,
                                    ceil_div(a.K, int64_t(EK)), Cfg::SPLIT_MIN_KTILES, 1,
                                    launch_sms(device));
      launch_split(kernel, grid, threads, smem, a.stream, split, props.cc, name, tma_a, tma_b,
                   tma_c, static_cast<T*>(a.C), a.M, a.N, a.K, split_ldc(a), a.alpha, a.beta);
    } else if constexpr (Cfg::SCHEDULE == Schedule::split_global ||
                         Cfg::SCHEDULE == Schedule::stream_k) {
      static_assert(Cfg::PDL && CLUSTER == 1, "a dependent launch without clusters");
      if (a.c_col_major) throw std::logic_error(std::string(name) + ": C is stored row-major");
      const int device = active_device();
      // Partial tiles: one per warpgroup of every share of a split tile, and after their flags
      // two words per tile's warpgroup (split_global.cuh); or one per warpgroup of every group
      // but the last (stream-K: a block contributes at most once, the last group never; blocks
      // are numbered group by group, so the contributors are the first grid.x - tiles_m, and one
      // group needs no scratch).
      size_t slots = size_t(grid.x) * 2, words = 0;
      if constexpr (Cfg::SCHEDULE == Schedule::stream_k) {
        slots = (size_t(grid.x) - size_t(ceil_div(a.M, int64_t(BM)))) * 2;
      }
      if constexpr (Cfg::SCHEDULE == Schedule::split_global) {
        const int split = global_split_count(grid.x, ceil_div(a.K, BLOCK_K), Cfg::SPLIT_MIN_KTILES,
                                             launch_sms(device), Cfg::MAX_SPLIT);
        grid.z = static_cast<unsigned>(split);
        words = split > 1 ? slots * 2 : 0;
        slots = split > 1 ? slots * split : 0;
      }
      const Scratch scratch = stream_scratch(device, a.stream, (slots + words) * sizeof(int),
                                             slots * 64 * BN * sizeof(float));
      Launch l{grid, dim3(threads), smem, a.stream};
      l.pdl = true;
      fastgemm::launch(kernel, l, name, tma_a, tma_b, static_cast<T*>(a.C), a.M, a.N, a.K,
                       a.ldc, a.alpha, a.beta, static_cast<float*>(scratch.data),
                       static_cast<int*>(scratch.flags));
    } else if constexpr (Cfg::SCHEDULE == Schedule::hybrid) {
      static_assert(Cfg::PDL && CLUSTER == 1, "a dependent launch without clusters");
      const int device = active_device();
      // A slot per consumer warpgroup of each contributing block (the shares but the last of
      // the split tiles).
      const int64_t tiles = ceil_div(a.M, int64_t(BM)) * ceil_div(a.N, int64_t(BN));
      const int split = Hybrid<BM, BN, Cfg::GROUP_M>::split_of(tiles, grid.x, ceil_div(a.K, BLOCK_K));
      const size_t slots = size_t(tiles % grid.x) * size_t(split - 1) * 2;
      const Scratch scratch =
          stream_scratch(device, a.stream, slots * sizeof(int), slots * 64 * BN * sizeof(float));
      Launch l{grid, dim3(threads), smem, a.stream};
      l.pdl = true;
      fastgemm::launch(kernel, l, name, tma_a, tma_b, tma_c, static_cast<T*>(a.C), a.M, a.N, a.K,
                       a.ldc, a.alpha, a.beta, static_cast<float*>(scratch.data),
                       static_cast<int*>(scratch.flags));
    } else {
      grid = balanced_grid<Cfg>(a, grid);
      // One launch path; PDL adds programmatic stream serialisation.
      Launch l{grid, dim3(threads), smem, a.stream};
      l.pdl = Cfg::PDL;
      fastgemm::launch(kernel, l, name, tma_a, tma_b, tma_c, static_cast<T*>(a.C), a.M, a.N,
                       a.K, a.ldc, a.alpha, a.beta);
    }
  });
}

}  // namespace fastgemm::hopper

// A rung's kernel, one instantiation per element type and operand layout, with the launch bounds
// of its configuration CFG (and any further attributes, e.g. __cluster_dims__(CFG::CLUSTER, 1,
// 1), which the launcher checks against CFG::CLUSTER); the rung's file writes the body:
//   FASTGEMM_HOPPER_KERNEL(hgemm_v20_hoisted_beta, V20) { ... }
// The kernel keeps the rung's name (NAME_kernel), which the SASS tests and profilers look for.
#define FASTGEMM_HOPPER_KERNEL(NAME, CFG, ...)                                                  \
  template <typename T, bool A_KMAJOR, bool B_KMAJOR>                                           \
  __global__ void __VA_ARGS__ __launch_bounds__(CFG::THREADS, CFG::MIN_BLOCKS) NAME##_kernel(                 \
      const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,     \
      const __grid_constant__ CUtensorMap tma_c, T* C, int64_t M, int64_t N, int64_t K,         \
      int64_t ldc, float alpha, float beta)

// The rung's host side, after its kernel: the fp16/bf16 entry points of the kernel table (each
// launches NAME_kernel for the operands' layouts with hopper::launch<CFG>) and its shared-memory
// figure.
#define FASTGEMM_HOPPER_ENTRY_POINTS(NAME, CFG)                                                 \
  namespace fastgemm {                                                                          \
  namespace {                                                                                   \
  template <typename T>                                                                         \
  void NAME##_launch(const GemmArgs& a) {                                                       \
    hopper::launch<CFG, T>(a, #NAME, [](auto ak, auto bk) {                                     \
      return NAME##_kernel<T, decltype(ak)::value, decltype(bk)::value>;                        \
    });                                                                                         \
  }                                                                                             \
  }                                                                                             \
  void NAME##_f16(const GemmArgs& a) { NAME##_launch<__half>(a); }                              \
  void NAME##_bf16(const GemmArgs& a) { NAME##_launch<__nv_bfloat16>(a); }                      \
  int NAME##_smem() { return hopper::smem_bytes<CFG>(); }                                       \
  }
