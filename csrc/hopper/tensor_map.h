// tensor_map.h — TMA descriptors (CUtensorMap) for the Hopper kernels, made through the driver's
// cuTensorMapEncodeTiled fetched at run time with cudaGetDriverEntryPointByVersion: nothing links
// against libcuda, so `import fastgemm` still works without a driver.
#pragma once
#include <cuda.h>

#include <cstdint>

namespace fastgemm::hopper {

enum class TmaElem { f16, bf16, f32 };  // the element type of a tensor map (2, 2 or 4 bytes)

// A 2-D tensor map over elements of type `elem` stored row by row: `rows` rows of `cols`
// elements, rows `ld` elements apart. Boxes are box_cols x box_rows elements with the 128-byte
// swizzle (box_cols elements must be 128 bytes); elements outside the tensor read as zeros.
CUtensorMap make_tensor_map_2d(const void* base, TmaElem elem, uint64_t cols, uint64_t rows,
                               uint64_t ld, uint32_t box_cols, uint32_t box_rows);

}  // namespace fastgemm::hopper
