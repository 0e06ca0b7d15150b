// tensor_map.h — TMA descriptors (CUtensorMap) for the Hopper kernels, made through the driver's
// cuTensorMapEncodeTiled fetched at run time with cudaGetDriverEntryPointByVersion: nothing links
// against libcuda, so `import fastgemm` still works without a driver.
#pragma once
#include <cuda.h>

#include <cstdint>

namespace fastgemm::hopper {

enum class TmaElem { f16, bf16, f32 };  // the element type of a tensor map (2, 2 or 4 bytes)

// A 2-D tensor map over elements of type `elem` stored row by row: `rows` rows of `cols`
// elements, rows `ld` elements apart. Boxes are box_cols x box_rows elements, with the 128-byte
// swizzle (box_cols elements must then be 128 bytes) or none; elements outside the tensor read as
// zeros. L2 promotion: 128 bytes where the base or the pitch is not a multiple of 32 bytes (rows
// that start inside a sector), 256 elsewhere (tensor_map.cu: promotion_for).
CUtensorMap make_tensor_map_2d(const void* base, TmaElem elem, uint64_t cols, uint64_t rows,
                               uint64_t ld, uint32_t box_cols, uint32_t box_rows,
                               bool swizzle = true);

// Reads FASTGEMM_DEV_L2PROMO again; later maps take its setting (the plan cache's clearing calls
// it).
void reset_dev_promotion();

// An MN-major operand (K `rows` of `cols` 2-byte elements, `ld` apart) whose rows need not be
// 16-byte aligned, which one tensor map cannot describe: TMA needs a 16-byte aligned base, pitch
// and box start. Rows k = r, r + 8, r + 16, ... are 8 pitches apart, a multiple of 16 bytes
// whatever the pitch, so map[r] describes them: its base is row r's start rounded down to 16
// bytes, and the elements rounded off (`offsets`, 3 bits per residue, residue r at bits 3r) come
// first in each of its rows, so that element n of a row is the map's column n + offset. Boxes of
// box_cols x 8 rows, unswizzled: a box at column x0 (a multiple of 8) holds elements x0 - offset
// .. x0 - offset + box_cols - 1 of its 8 rows (hopper/staged.cuh shifts them into place). A
// residue without rows (K < 8) maps row 0 again, which the kernel must replace by zeros.
struct ResidueMaps {
  CUtensorMap map[8];
  uint32_t offsets;
};
ResidueMaps make_residue_maps(const void* base, TmaElem elem, uint64_t cols, uint64_t rows,
                              uint64_t ld, uint32_t box_cols);

}  // namespace fastgemm::hopper
