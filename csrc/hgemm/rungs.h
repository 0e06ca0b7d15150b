// hgemm/rungs.h — the configuration of every HGEMM rung, each one switch away from the previous
// one, so that the ladder's steps read as a diff (the template is hgemm/hgemm.cuh; each rung's
// .cu says why the switch pays and what limits it).
#pragma once
#include "hgemm/hgemm.cuh"

namespace fastgemm::hgemm {

struct V01 {  // block 128x128x32, 2x2 warps of 64x64, element-wise copies, plain rows
  static constexpr int BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 32, WARPS_M = 2, WARPS_N = 2;
  static constexpr Copy COPY = Copy::scalar;
  static constexpr Smem SMEM = Smem::plain;
  static constexpr int STAGES = 1;
  static constexpr bool B_X4 = false, XOR_STEP = false;
  static constexpr int RASTER_GROUP = 0;
  static constexpr int MIN_BLOCKS = 1;
  static constexpr bool SPLIT_K = false, SPLIT_REDUCE = false, STREAM_K = false;
  static constexpr int SPLIT_BLOCKS_PER_SM = 0, SPLIT_MIN_TILES = 1;
  static constexpr bool ROW_STORE = false;
};
struct V02 : V01 { static constexpr Copy COPY = Copy::vec16; };
struct V03 : V02 { static constexpr Smem SMEM = Smem::padded; };
struct V04 : V03 { static constexpr Smem SMEM = Smem::swizzled; };
struct V05 : V04 {
  static constexpr Copy COPY = Copy::reg_prefetch;
  static constexpr int STAGES = 2;
};
struct V06 : V05 { static constexpr Copy COPY = Copy::async; };
struct V07 : V06 { static constexpr int STAGES = 4; };
struct V08 : V07 {  // 128x256x64 block, 2x4 warps of 64x64, 3 stages, ldmatrix.x4 for B, XOR steps
  static constexpr int BLOCK_N = 256, WARPS_N = 4, BLOCK_K = 64, STAGES = 3;
  static constexpr bool B_X4 = true, XOR_STEP = true;
};
struct V09 : V08 { static constexpr int RASTER_GROUP = 8; };

// Branches: shape specialists off the line above (auto prefers them only for their shapes).
struct V22 : V07 {  // 16x64 tiles (one 16-row mma per warp), K split across a cluster
  static constexpr int BLOCK_M = 16, BLOCK_N = 64, BLOCK_K = 128, WARPS_M = 1, WARPS_N = 4;
  static constexpr int STAGES = 4;
  static constexpr bool B_X4 = true, XOR_STEP = true;
  static constexpr bool SPLIT_K = true;
  static constexpr int SPLIT_BLOCKS_PER_SM = 1, SPLIT_MIN_TILES = 2;
};
struct V23 : V22 {  // 64x64 tiles (2x2 warps of 32x32) for 33-64 rows
  static constexpr int BLOCK_M = 64, WARPS_M = 2, WARPS_N = 2;
};
struct V26 : V22 {  // 32x64 tiles (four warps of 32x16) for 17-32 rows
  static constexpr int BLOCK_M = 32;
};
struct V35 : V22 {  // v22's split with no owner: partial tiles summed by a second kernel
  static constexpr bool SPLIT_REDUCE = true;
};
struct V36 : V23 {  // the same on v23's 64x64 tiles
  static constexpr bool SPLIT_REDUCE = true;
};
struct V37 : V35 {  // operands read element by element, one k-tile ahead in registers
  static constexpr Copy COPY = Copy::elem_prefetch;
  static constexpr int STAGES = 2;
};
struct V38 : V36 {  // the same on 64x64 tiles
  static constexpr Copy COPY = Copy::elem_prefetch;
  static constexpr int STAGES = 2;
};

// The decode specialists with six stages instead of four: more bytes in flight per SM where the
// grid has at most one block per SM (v23's 128 KiB always did).
struct V40 : V22 { static constexpr int STAGES = 6; };  // 120 KiB of 20 KiB stages
struct V41 : V26 { static constexpr int STAGES = 6; };  // 144 KiB of 24 KiB stages
struct V42 : V23 { static constexpr int STAGES = 6; };  // 192 KiB of 32 KiB stages

// v22's tile under a stream-K schedule: equal runs of k-tiles over all tiles, two blocks per SM.
struct V47 : V22 { static constexpr bool STREAM_K = true; };
struct V48 : V26 { static constexpr bool STREAM_K = true; };  // the same on v26's 32x64 tiles
// v23's 64x64 tiles under the same schedule, on 64-deep k-tiles (64 KiB, three blocks per SM).
struct V49 : V23 {
  static constexpr bool STREAM_K = true;
  static constexpr int BLOCK_K = 64, STAGES = 4;
};

struct V39 : V05 {  // v05's 128x128x32 tile read by element loads (4x2 warps of 32x64), C by rows
  static constexpr Copy COPY = Copy::elem_prefetch;
  static constexpr int WARPS_M = 4, WARPS_N = 2;
  static constexpr int RASTER_GROUP = 8;
  // Two blocks per SM cap a thread at 128 registers, which the sm_90 compiler meets without
  // spilling; older targets' compilers spill there (an MN-major B), so they get one block's worth.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  static constexpr int MIN_BLOCKS = 1;
#else
  static constexpr int MIN_BLOCKS = 2;
#endif
  static constexpr bool ROW_STORE = true;
};

}  // namespace fastgemm::hgemm
