// sgemm/split_k_tile.cuh — a warp-tiled block (sgemm/warptile.cuh) over a share of K, with the
// partial tiles of a cluster summed deterministically (common/split_k.cuh): the body and the host
// side of v11 (128x128 tiles) and v12 (tiles 64 or 32 rows or columns wide), and v15's (v11's
// tile with the partial tiles summed through global memory: run_global, launch_global).
//
// Contract. A kernel of tiling WT passes its dynamic shared memory (smem_bytes<WT>() of it) to
// run(): block z of a split_grid launch takes the z-th even share of K's 16-deep k-tiles, runs
// v09's double-buffered loop over it (sgemm/double_buffer.cuh), writes its fp32 partial tile into
// the loop's drained buffers and joins cluster_reduce_store, which writes C. launch() sizes the
// split S (cluster_split_choice: at most 8, each share at least CLUSTER_MIN_KTILES k-tiles, the
// least modelled time over the device's cluster capacity) and launches with launch_split.
#pragma once
#include "common/split_k.cuh"
#include "sgemm/double_buffer.cuh"

namespace fastgemm::sgemm::split_k_tile {

// Smallest share of K a block takes, in 16-deep k-tiles: of a split through global memory (v15,
// v16), whose partial tiles cost a store and a read back from L2 each; and of a cluster's split
// (v11, v12), whose partial tiles are summed in distributed shared memory, cheap enough that a
// short K pays to split into shares of two k-tiles (benchmarks/NOTES.md, 2026-11-25).
// FASTGEMM_DEV_MIN_KTILES=<n> replaces the cluster's (common/split_model.h; for fitting only).
constexpr int MIN_KTILES = 8;
// A split whose partial tiles a second kernel sums (v20): at most REDUCE_MOST shares
// (common/split_k.cuh) of at least REDUCE_MIN_KTILES k-tiles, no more blocks than the GPU holds
// at once.
constexpr int REDUCE_MIN_KTILES = 4;
// A partial tile's store and read back, in units of one block's k-tile alone on its SM
// (grid_split_choice). A 64x128 tile's 2 x 32 KiB at HBM speed would be about 0.03 of a k-tile
// (22 ns against 0.7 us), but the partial tiles of a one-round split stay in L2 and their stores
// overlap other blocks' math: forced splits of v21 (FASTGEMM_DEV_SPLIT_K, H100) ran fastest at
// the S that fills every block slot, which 0.03 kept some outputs of a few tiles from taking
// (158x330x7071: 62.8 us at the model's S = 14 against 51.1 at 44). The small cost left breaks
// ties towards fewer partial tiles and keeps outputs of more tiles than one round from splitting
// far.
constexpr double REDUCE_PARTIAL = 0.002;
constexpr int CLUSTER_MIN_KTILES = 2;

template <typename WT>
constexpr int red_ld() {
  return WT::BLOCK_N + 4;  // floats per partial-tile row (16-byte aligned rows)
}
template <typename WT>
constexpr int smem_bytes() {
  constexpr int loop = 2 * WT::BLOCK_K * (WT::LDS_A + WT::LDS_B), red = WT::BLOCK_M * red_ld<WT>();
  return 4 * (loop > red ? loop : red);
}

// A block's accumulators as its fp32 partial tile in `red` (row pitch red_ld<WT>()). A quarter
// warp's float4 stores cover two rows 4 apart (16 banks apart at a pitch of 4 mod 32 floats) x
// 16 columns: no bank conflicts.
template <typename WT>
__device__ __forceinline__ void stage_partial(float* red, const typename WT::LanePos& pos,
                                              const float (&acc)[WT::THREAD_M][WT::THREAD_N]) {
  constexpr int RED_LD = red_ld<WT>();
#pragma unroll
  for (int i = 0; i < WT::THREAD_M; ++i)
#pragma unroll
    for (int q = 0; q < WT::ITER_N; ++q) {
      const int j = q * WT::PATCH;
      const int row = pos.row + (i / WT::PATCH) * WT::SUB_M + i % WT::PATCH;
      *reinterpret_cast<float4*>(red + row * RED_LD + pos.col + q * WT::SUB_N) =
          make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
    }
}

template <typename WT, bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC = true, bool VEC_A = VEC>
__device__ __forceinline__ void run(float* smem, const KmnView& A, const KmnView& B, float* C,
                                    int64_t ldc, float alpha, float beta) {
  constexpr int RED_LD = red_ld<WT>();
  float* As = smem;
  float* Bs = smem + 2 * WT::BLOCK_K * WT::LDS_A;
  int64_t m0, n0;
  split_tile(A.MN, WT::BLOCK_M, WT::BLOCK_N, m0, n0);
  int64_t first, count;  // this block's share of the k-tiles
  split_share((A.K + WT::BLOCK_K - 1) / WT::BLOCK_K, first, count);
  double_buffer::multiply_tile<WT, A_COL_MAJOR, B_COL_MAJOR, VEC, VEC_A>(
      A, B, m0, n0, first * WT::BLOCK_K, (first + count) * WT::BLOCK_K, As, Bs,
      [&](const typename WT::LanePos& pos, const float (&acc)[WT::THREAD_M][WT::THREAD_N]) {
        // The loop ended at a block barrier: its buffers become this block's partial tile.
        stage_partial<WT>(smem, pos, acc);
      });
  cluster_reduce_store<WT::BLOCK_M, WT::BLOCK_N, RED_LD, WT::THREADS, 0, VEC>(
      smem, C, ldc, A.MN, B.MN, m0, n0, alpha, beta);
}

// The shared memory of run_global's loop: its partial tile goes out from registers, so it needs
// no reduction tile (v16; v15 keeps smem_bytes, which its single block per SM never felt).
template <typename WT>
constexpr int loop_smem_bytes() {
  return 4 * 2 * WT::BLOCK_K * (WT::LDS_A + WT::LDS_B);
}

// The same share of K with the partial tiles meeting in global memory (v15; common/split_k.cuh:
// publish_partial / add_partial): blocks z < S-1 hand their accumulators to the tile's owner,
// block S-1, which adds them in order and stores C from registers (v09's epilogue; C row-major),
// or, for a C aligned only to 4 bytes, through the loop's shared memory (epilogue_staged).
// The whole block is the group: __syncthreads is its barrier.
template <typename WT, bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC = true, bool VEC_A = VEC>
__device__ __forceinline__ void run_global(float* smem, const KmnView& A, const KmnView& B,
                                           float* C, int64_t ldc, float alpha, float beta,
                                           float* partials, int* flags) {
  constexpr int ROW4 = WT::THREAD_N / 4;                 // float4s per accumulator row
  constexpr int COUNT = WT::THREAD_M * ROW4;             // float4s per thread
  constexpr int64_t SLOT = int64_t(COUNT) * 4 * WT::THREADS;  // floats of a partial tile
  float* As = smem;
  float* Bs = smem + 2 * WT::BLOCK_K * WT::LDS_A;
  int64_t m0, n0;
  split_tile(A.MN, WT::BLOCK_M, WT::BLOCK_N, m0, n0);
  int64_t first, count;  // this block's share of the k-tiles (no cluster: any architecture)
  split_share<false>((A.K + WT::BLOCK_K - 1) / WT::BLOCK_K, first, count);
  double_buffer::multiply_tile<WT, A_COL_MAJOR, B_COL_MAJOR, VEC, VEC_A>(
      A, B, m0, n0, first * WT::BLOCK_K, (first + count) * WT::BLOCK_K, As, Bs,
      [&](const typename WT::LanePos& pos, const float (&part)[WT::THREAD_M][WT::THREAD_N]) {
        const int split = static_cast<int>(gridDim.z), z = static_cast<int>(blockIdx.z);
        const int t = static_cast<int>(threadIdx.x);
        const int64_t first_slot = int64_t(blockIdx.x) * (split - 1);
        auto sync = [] { __syncthreads(); };
        if (z < split - 1) {
          const int64_t slot = first_slot + z;
          publish_partial<COUNT, WT::THREADS>(
              partials + slot * SLOT, flags + slot, t,
              [&](int i) {
                const float* r = &part[i / ROW4][(i % ROW4) * 4];
                return make_float4(r[0], r[1], r[2], r[3]);
              },
              sync);
          return;
        }
        float acc[WT::THREAD_M][WT::THREAD_N];
#pragma unroll
        for (int i = 0; i < WT::THREAD_M; ++i)
#pragma unroll
          for (int j = 0; j < WT::THREAD_N; ++j) acc[i][j] = part[i][j];
        for (int q = 0; q < split - 1; ++q) {
          const int64_t slot = first_slot + q;
          add_partial<COUNT, WT::THREADS>(
              partials + slot * SLOT, flags + slot, t,
              [&](int i, float4 v) {
                float* r = &acc[i / ROW4][(i % ROW4) * 4];
                r[0] += v.x, r[1] += v.y, r[2] += v.z, r[3] += v.w;
              },
              sync);
        }
        if constexpr (VEC) {
          WT::template epilogue<true>(C, ldc, A.MN, B.MN, m0, n0, pos, acc, alpha, beta);
        } else {  // the loop's shared memory is free (it ended at a barrier)
          static_assert(loop_smem_bytes<WT>() >= 64 * WT::LDS_B * 4, "a 64-row stage");
          WT::template epilogue_staged<64>(smem, C, ldc, A.MN, B.MN, m0, n0, pos, acc, alpha,
                                           beta);
        }
      });
}

// The same share of K with no owner (v20, v21): every block z stores its partial tile into slot
// blockIdx.x * S + z of `partials` in the layout of publish_partial (float4 i of thread t at
// i * THREADS + t: each i one coalesced sweep), and a second kernel (reduce_partials_kernel)
// sums the S slots of each output in z order and stores C. PartialStore is the loop's finish.
template <typename WT>
struct PartialStore {
  float* partials;
  __device__ __forceinline__ void operator()(
      const typename WT::LanePos&, const float (&part)[WT::THREAD_M][WT::THREAD_N]) const {
    constexpr int ROW4 = WT::THREAD_N / 4, COUNT = WT::THREAD_M * ROW4;
    const int64_t slot = int64_t(blockIdx.x) * gridDim.z + blockIdx.z;
    store_partial<COUNT, WT::THREADS>(partials + slot * (COUNT * 4 * WT::THREADS),
                                      static_cast<int>(threadIdx.x), [&](int i) {
                                        const float* r = &part[i / ROW4][(i % ROW4) * 4];
                                        return make_float4(r[0], r[1], r[2], r[3]);
                                      });
  }
};

// This block's tile (m0, n0) and its share of K, [k0, k_end) in whole 16-deep k-tiles, for a
// split with no cluster (split_share<false>: any architecture).
template <typename WT>
__device__ __forceinline__ void global_share(const KmnView& A, int64_t& m0, int64_t& n0,
                                             int64_t& k0, int64_t& k_end) {
  split_tile(A.MN, WT::BLOCK_M, WT::BLOCK_N, m0, n0);
  int64_t first, count;
  split_share<false>((A.K + WT::BLOCK_K - 1) / WT::BLOCK_K, first, count);
  k0 = first * WT::BLOCK_K, k_end = (first + count) * WT::BLOCK_K;
}

// v20's block: the share on v09's double-buffered loop.
template <typename WT, bool A_COL_MAJOR, bool B_COL_MAJOR, bool VEC = true, bool VEC_A = VEC>
__device__ __forceinline__ void run_partials(float* smem, const KmnView& A, const KmnView& B,
                                             float* partials) {
  int64_t m0, n0, k0, k_end;
  global_share<WT>(A, m0, n0, k0, k_end);
  double_buffer::multiply_tile<WT, A_COL_MAJOR, B_COL_MAJOR, VEC, VEC_A>(
      A, B, m0, n0, k0, k_end, smem, smem + 2 * WT::BLOCK_K * WT::LDS_A,
      PartialStore<WT>{partials});
}

// C = alpha * sum_z partials[tile * S + z] + beta * C (row-major C, any ldc; C read only where
// beta != 0), in a fixed order: the same bits on every call. A block takes 32 float4s of the slot
// layout (4 columns of one row each: thread t's float4 i is row pos(t).row + (i' / PATCH) * SUB_M
// + i' % PATCH, columns pos(t).col + q * SUB_N + 0..3, i' = i / ROW4, q = i % ROW4, as in the
// warp tile's epilogue) and GROUPS warps: warp g adds the slots of its g-th even range of z in
// order, EIGHT loads in flight, and warp 0 adds the GROUPS sums in g order and stores them (16-byte
// stores where C allows). A tile is BLOCK_M * BLOCK_N / 128 blocks (128 of a 128x128 tile, 32 of a
// 128x32 one), so that an output of one tile still reads its S partial tiles with many SMs.
template <typename WT, int GROUPS>
__global__ void __launch_bounds__(32 * GROUPS)
    reduce_partials_kernel(const float* __restrict__ partials, float* C, int64_t ldc, int64_t M,
                           int64_t N, int split, float alpha, float beta) {
  constexpr int ROW4 = WT::THREAD_N / 4, COUNT = WT::THREAD_M * ROW4;
  constexpr int QUADS = COUNT * WT::THREADS, PER_TILE = QUADS / 32, EIGHT = 8;
  static_assert(QUADS % 32 == 0, "whole blocks per tile");
  __shared__ float4 sums[GROUPS][32];
  ptx::griddepcontrol_wait();  // the split kernel's partial tiles are written
  const int64_t tile = blockIdx.x / PER_TILE;
  const int g = threadIdx.x / 32, u = (blockIdx.x % PER_TILE) * 32 + threadIdx.x % 32;
  const int t = u % WT::THREADS, i = u / WT::THREADS, warp = t / 32, lane = t % 32;
  const int row = (warp / WT::WARPS_N) * WT::WARP_M + (lane / WT::LANES_N) * WT::PATCH +
                  (i / ROW4 / WT::PATCH) * WT::SUB_M + (i / ROW4) % WT::PATCH;
  const int col = (warp % WT::WARPS_N) * WT::WARP_N + (lane % WT::LANES_N) * WT::PATCH +
                  (i % ROW4) * WT::SUB_N;
  const int64_t tiles_m = (M + WT::BLOCK_M - 1) / WT::BLOCK_M;
  const int64_t m = tile % tiles_m * WT::BLOCK_M + row, n = tile / tiles_m * WT::BLOCK_N + col;
  const bool inside = m < M && n < N;
  float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  auto add = [](float4& a, float4 v) { a.x += v.x, a.y += v.y, a.z += v.z, a.w += v.w; };
  if (inside) {
    const float4* p = reinterpret_cast<const float4*>(partials) + tile * split * QUADS + u;
    int z = static_cast<int>(int64_t(split) * g / GROUPS);
    const int end = static_cast<int>(int64_t(split) * (g + 1) / GROUPS);
    for (; z + EIGHT <= end; z += EIGHT) {
      float4 v[EIGHT];
#pragma unroll
      for (int q = 0; q < EIGHT; ++q) v[q] = __ldcg(p + int64_t(z + q) * QUADS);
#pragma unroll
      for (int q = 0; q < EIGHT; ++q) add(sum, v[q]);
    }
    for (; z < end; ++z) add(sum, __ldcg(p + int64_t(z) * QUADS));
  }
  sums[g][threadIdx.x % 32] = sum;
  __syncthreads();
  if (g != 0 || !inside) return;
  sum = sums[0][threadIdx.x];
#pragma unroll
  for (int h = 1; h < GROUPS; ++h) add(sum, sums[h][threadIdx.x]);
  float* c = C + m * ldc + n;
  if (n + 3 < N && (reinterpret_cast<uintptr_t>(c) % 16) == 0) {
    float4 r = make_float4(alpha * sum.x, alpha * sum.y, alpha * sum.z, alpha * sum.w);
    if (beta != 0.0f) {
      const float4 old = *reinterpret_cast<const float4*>(c);
      r = make_float4(fmaf(beta, old.x, r.x), fmaf(beta, old.y, r.y), fmaf(beta, old.z, r.z),
                      fmaf(beta, old.w, r.w));
    }
    *reinterpret_cast<float4*>(c) = r;
    return;
  }
  const float v[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
  for (int e = 0; e < 4; ++e)
    if (n + e < N) c[e] = beta == 0.0f ? alpha * v[e] : fmaf(beta, c[e], alpha * v[e]);
}

// The cost of one more share in a cluster's reduction, in k-tiles of a block alone on its SM
// (cluster_split_choice's `add`): each block sums a 1/S slice of the tile from S partial tiles,
// so the exchange itself barely grows with S. Fitted: 0.25 keeps every choice of the committed
// sweep and the short-K splits of small outputs (256x256x256: 8 ways, 6.8 us against 8.5 us at 4
// ways on an H100; at 1.0 the model took 4).
constexpr double CLUSTER_ADD = 0.25;

// kernel_for(a_col, b_col[, vec]) is the rung's kernel of tiling WT for that layout (and
// alignment: with_kernel). S and the cluster policy: cluster_split_choice (common/split_model.h)
// with the device's cluster capacity and the tiling's `rates` (at most as many blocks per SM as
// the kernel's occupancy allows), each share at least CLUSTER_MIN_KTILES k-tiles, S <= 8; S = 1
// where the kernel cannot run in clusters here.
template <typename WT, int SMEM = smem_bytes<WT>(), typename KernelFor>
void launch(const GemmArgs& a, const char* name, const SplitRates& rates, KernelFor kernel_for) {
  const dim3 grid = split_grid(a.M, a.N, WT::BLOCK_M, WT::BLOCK_N, name);
  const int device = active_device();
  const DeviceProps& props = device_props(device);
  with_kernel(a, kernel_for, [&](auto kernel) {
    set_smem(kernel, SMEM);
    const int dev_min = dev_min_ktiles();
    const ClusterChoice split = cluster_split_for(
        reinterpret_cast<const void*>(kernel), WT::THREADS, SMEM, rates, grid.x,
        ceil_div(a.K, WT::BLOCK_K), dev_min > 0 ? dev_min : CLUSTER_MIN_KTILES, CLUSTER_ADD);
    launch_split(kernel, grid, WT::THREADS, SMEM, a.stream, split, props.cc, name, kmn_a(a),
                 kmn_b(a), static_cast<float*>(a.C), split_ldc(a), a.alpha, a.beta);
  });
}


// The launch of v15 and v16 (run_global kernels of tiling WT). v15 (rounds == nullptr): S from
// global_split_count (at most 16 shares of at least MIN_KTILES k-tiles, the grid within one block
// per SM), smem_bytes of shared memory. v16: S from the round model `rounds` (common/split_model.h,
// WT's tile) at the blocks the kernel holds per SM in this layout (the grid may take several
// rounds: an owner waits only for blocks dispatched before it), loop_smem_bytes. Both: the
// stream's scratch for the partial tiles and their flags (held until the launch is queued), a
// dependent launch from sm_90 on.
// What the launches through global memory share: C row-major, the grid of tiles (z = 1 here),
// the device, and f(kernel, grid, device, props) with the layout's kernel and its shared memory
// set.
template <typename WT, typename KernelFor, typename F>
void with_global_split(const GemmArgs& a, const char* name, int smem, KernelFor kernel_for, F&& f) {
  if (a.c_col_major) throw std::logic_error(std::string(name) + ": C is stored row-major");
  const dim3 grid = split_grid(a.M, a.N, WT::BLOCK_M, WT::BLOCK_N, name);
  const int device = active_device();
  const DeviceProps& props = device_props(device);
  with_kernel(a, kernel_for, [&](auto kernel) {
    set_smem(kernel, smem);
    f(kernel, grid, device, props);
  });
}

template <typename WT, typename KernelFor>
void launch_global(const GemmArgs& a, const char* name, KernelFor kernel_for,
                   const RoundSplit* rounds = nullptr) {
  const int smem = rounds != nullptr ? loop_smem_bytes<WT>() : smem_bytes<WT>();
  with_global_split<WT>(a, name, smem, kernel_for, [&](auto kernel, dim3 grid, int device,
                                                       const DeviceProps& props) {
    int split;
    if (rounds != nullptr) {
      const int per_sm =
          resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), WT::THREADS, smem);
      split = round_split_count(*rounds, a.M, a.N, a.K, launch_sms(device), per_sm);
    } else {
      split = global_split_count(grid.x, ceil_div(a.K, WT::BLOCK_K), MIN_KTILES,
                                 launch_sms(device), 16);
    }
    const size_t slots = size_t(grid.x) * (split - 1);
    const Scratch scratch = stream_scratch(device, a.stream, slots * sizeof(int),
                                           slots * WT::BLOCK_M * WT::BLOCK_N * sizeof(float));
    Launch l{dim3(grid.x, 1, static_cast<unsigned>(split)), dim3(WT::THREADS), smem, a.stream};
    l.pdl = props.cc >= 90;
    fastgemm::launch(kernel, l, name, kmn_a(a), kmn_b(a), static_cast<float*>(a.C), a.ldc,
                     a.alpha, a.beta, static_cast<float*>(scratch.data),
                     static_cast<int*>(scratch.flags));
  });
}

// The launch of v20 and v21 (kernels of tiling WT that store partial tiles: run_partials, or
// v21's on the three-stage loop, with SMEM bytes of shared memory): S from reduce_split_count
// (common/split_k.cuh; shares of at least min_ktiles k-tiles), the stream's scratch for tiles x S
// partial tiles, the split kernel, then reduce_partials_kernel as a dependent launch (sm_90 on)
// on the same stream.
// A kernel that passes `rates` (v21) takes S from grid_split_choice (common/split_model.h) at the
// blocks per SM it holds, each partial tile costing REDUCE_PARTIAL.
template <typename WT, int SMEM = loop_smem_bytes<WT>(), typename KernelFor>
void launch_reduce(const GemmArgs& a, const char* name, KernelFor kernel_for,
                   int min_ktiles = REDUCE_MIN_KTILES, const SplitRates* rates = nullptr) {
  const int smem = SMEM;
  with_global_split<WT>(a, name, smem, kernel_for, [&](auto kernel, dim3 grid, int device,
                                                       const DeviceProps& props) {
    const int per_sm = std::max(
        resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), WT::THREADS, smem), 1);
    const int64_t k_units = ceil_div(a.K, WT::BLOCK_K);
    int split;
    if (rates != nullptr) {
      SplitRates r = *rates;
      r.per_sm = std::min(r.per_sm, per_sm);
      split = grid_split_choice(r, launch_sms(device), grid.x, k_units, min_ktiles, REDUCE_MOST,
                                REDUCE_PARTIAL);
    } else {
      split = reduce_split_count(grid.x, k_units, int64_t(launch_sms(device)) * per_sm,
                                 REDUCE_MOST, min_ktiles);
    }
    constexpr size_t tile = size_t(WT::BLOCK_M) * WT::BLOCK_N;  // floats of a partial tile
    const Scratch scratch =
        stream_scratch(device, a.stream, 0, size_t(grid.x) * split * tile * sizeof(float));
    Launch l{dim3(grid.x, 1, static_cast<unsigned>(split)), dim3(WT::THREADS), smem, a.stream};
    l.pdl = props.cc >= 90;
    fastgemm::launch(kernel, l, name, kmn_a(a), kmn_b(a), static_cast<float*>(scratch.data));
    constexpr int GROUPS = 8;
    auto reduce = reduce_partials_kernel<WT, GROUPS>;
    Launch r{dim3(static_cast<unsigned>(grid.x * (tile / 4 / 32))), dim3(32 * GROUPS), 0, a.stream};
    r.pdl = props.cc >= 90;
    fastgemm::launch(reduce, r, name, static_cast<const float*>(scratch.data),
                     static_cast<float*>(a.C), int64_t(a.ldc), int64_t(a.M), int64_t(a.N), split,
                     a.alpha, a.beta);
  });
}

}  // namespace fastgemm::sgemm::split_k_tile
