// swizzle.cuh — THE shared-memory swizzle of the tensor-core kernels, used by the writers (global
// -> shared copies) and the readers (ldmatrix) alike.
//
// A tile row holds CHUNKS 16-byte chunks (8 fp16/bf16 elements each). Shared memory has 32 banks
// of 4 bytes: one 128-byte sweep of the banks is 8 chunk "slots". ldmatrix reads one chunk from
// each of 8 consecutive rows, at the same logical chunk column, and must see 8 different slots;
// a warp's 16-byte stores go 8 lanes at a time and must too. Without swizzling, rows of 64 bytes
// (CHUNKS = 4) put rows r and r+2 in one slot (4-way conflicts), rows of 128 bytes or more put all
// 8 rows in one slot (8-way). XOR-ing the chunk index with a few bits of the row index gives every
// row of an 8-row group a different slot and keeps each row's chunks a permutation of themselves:
//   physical chunk = chunk ^ ((row / ROWS_PER_LINE) % min(CHUNKS, 8))
// where ROWS_PER_LINE = max(1, 8 / CHUNKS) rows share one 128-byte line. The pattern repeats
// every ROWS_PER_LINE * min(CHUNKS, 8) = 8 rows, whatever the row width.
#pragma once

namespace fastgemm {

template <int CHUNKS>
__host__ __device__ __forceinline__ constexpr int swizzle_chunk(int row, int chunk) {
  static_assert(CHUNKS >= 1 && (CHUNKS & (CHUNKS - 1)) == 0, "rows must be a power of two of chunks");
  constexpr int ROWS_PER_LINE = CHUNKS >= 8 ? 1 : 8 / CHUNKS;
  constexpr int MASK = (CHUNKS >= 8 ? 8 : CHUNKS) - 1;
  return chunk ^ ((row / ROWS_PER_LINE) & MASK);
}

// Runtime-width form for tests and host code (same function).
inline int swizzle_chunk_dynamic(int chunks, int row, int chunk) {
  switch (chunks) {
    case 1: return swizzle_chunk<1>(row, chunk);
    case 2: return swizzle_chunk<2>(row, chunk);
    case 4: return swizzle_chunk<4>(row, chunk);
    case 8: return swizzle_chunk<8>(row, chunk);
    case 16: return swizzle_chunk<16>(row, chunk);
    case 32: return swizzle_chunk<32>(row, chunk);
    default: return -1;
  }
}

}  // namespace fastgemm
