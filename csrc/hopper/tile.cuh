// hopper/tile.cuh — the shared-memory tiles every Hopper part works on: the geometry of the
// 128-byte swizzle, the wgmma descriptor of a tile slice, and the TMA copy of a tile.
//
// Contract: a tile is what TMA writes with the 128-byte swizzle — rows of 128 bytes (64 16-bit
// elements, 32 fp32) in 8-row groups of 1024 bytes, 1024-byte aligned. A K-major operand tile
// (row-major A, column-major B) is BMN rows of 64 k (fp32: 32); an MN-major one is BMN/64 boxes of
// 64 k-rows x 64 elements, 8 KiB apart (fp32: 32 x 32, 4 KiB apart). load_tile only issues
// copies: the caller owns the barrier they complete on and the expected transaction bytes.
#pragma once
#include <cuda.h>

#include "common/ptx_sm90.cuh"

namespace fastgemm::hopper {

constexpr int BLOCK_K = 64;                    // one swizzled row of k (128 bytes)
constexpr int BOX = 64;                        // elements per swizzled row
constexpr int BOX_BYTES = BOX * BLOCK_K * 2;   // one 64x64 box
constexpr int SW_ROW = 128, SW_GROUP = 1024;   // bytes per swizzled row / per 8-row group

// Elements of T in one swizzled row, i.e. the depth of a k-tile: 64 for fp16/bf16 (BLOCK_K), 32
// for fp32 operands that the tensor cores read as tf32. A wgmma k-step reads 32 bytes of each row
// either way (k16 of 16-bit elements, k8 of tf32), so a k-tile is always four k-steps.
template <typename T>
constexpr int k_tile() {
  return SW_ROW / int(sizeof(T));
}

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

// Bytes a wgmma k-step moves a slice descriptor (slice_desc's kk): 32 along a K-major row, 16
// swizzled rows of an MN-major box.
template <bool K_MAJOR>
constexpr uint32_t k_step_bytes() {
  return K_MAJOR ? 32u : 16u * SW_ROW;
}

// A descriptor moved `bytes` further into shared memory. The start-address field (address >> 4,
// bits 0-13) takes the offset without carrying out of it while the address stays below 256 KiB,
// which a shared-memory address always does, so only the low word changes: a loop can build its
// descriptors once and step them by constants.
__device__ __forceinline__ uint64_t desc_plus(uint64_t desc, uint32_t bytes) {
  return (desc & 0xFFFFFFFF00000000ull) | uint32_t(uint32_t(desc) + (bytes >> 4));
}

// One thread issues the TMA copies of part `part` (of PARTS) of a BMN x BK tile (k0, x0): rows
// x0 + part * BMN / PARTS on, written where they sit in the whole tile. With a `cta_mask` the
// part is multicast to the same offset of every CTA in the mask (a cluster splits the shared
// operand's tile between its CTAs, each loading one part for all of them). BK: the elements of
// a swizzled row (k_tile<T>()); an MN-major tile is boxes of BK elements x BK k-rows (8 KiB of
// 16-bit elements, 4 KiB of fp32).
template <int BMN, bool K_MAJOR, int PARTS = 1, int BK = BLOCK_K>
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
  if (K_MAJOR) {  // one box of BK (k) x ROWS rows (the tensor map's box)
    copy(dst + part * ROWS * SW_ROW, k0, x0);
  } else {        // ROWS / BK boxes of BK elements x BK (k) rows
    static_assert(ROWS % BK == 0, "MN-major parts are whole boxes");
    constexpr int BOX_AT = BK * SW_ROW;
    dst += part * (ROWS / BK) * BOX_AT;
#pragma unroll
    for (int j = 0; j < ROWS / BK; ++j) copy(dst + j * BOX_AT, x0 + BK * j, k0);
  }
}

// The shared memory a kernel asks for: its tiles plus 1 KiB to align them to the swizzle atom.
__device__ __forceinline__ unsigned char* aligned_smem(unsigned char* raw) {
  return reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(raw) + 1023) &
                                          ~uintptr_t(1023));
}

}  // namespace fastgemm::hopper
