// tensor_map.cu — see tensor_map.h.
#include "hopper/tensor_map.h"

#include "common/runtime.h"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

namespace fastgemm::hopper {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = driver_entry("cuTensorMapEncodeTiled", 12000);
    if (p == nullptr) {
      throw std::runtime_error(
          "the CUDA driver does not provide cuTensorMapEncodeTiled (TMA needs a CUDA 12+ driver)");
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

CUtensorMap encode(const void* base, TmaElem elem, uint64_t cols, uint64_t rows, uint64_t ld,
                   uint32_t box_cols, uint32_t box_rows, bool swizzle) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {ld * (elem == TmaElem::f32 ? 4 : 2)};  // bytes between rows
  const CUtensorMapDataType type = elem == TmaElem::f32    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                   : elem == TmaElem::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                           : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult res = encode_fn()(
      &map, type, 2,
      const_cast<void*>(base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (res != CUDA_SUCCESS) {
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(res) +
                             ") for a " + std::to_string(rows) + "x" + std::to_string(cols) +
                             " operand with leading dimension " + std::to_string(ld));
  }
  return map;
}

}  // namespace

// Encoding costs a driver call per operand per GEMM; repeated calls on the same buffers (a
// training step, a benchmark loop) reuse the map. The key is every input of the encoding — the
// map holds nothing else — so a hit is always the map a fresh encoding would produce. Each
// thread keeps the maps of its last few calls (a GEMM's three, no lock); behind them a bounded,
// locked cache shared by all threads.
CUtensorMap make_tensor_map_2d(const void* base, TmaElem elem, uint64_t cols, uint64_t rows,
                               uint64_t ld, uint32_t box_cols, uint32_t box_rows, bool swizzle) {
  using Key =
      std::tuple<const void*, TmaElem, uint64_t, uint64_t, uint64_t, uint32_t, uint32_t, bool>;
  const Key key{base, elem, cols, rows, ld, box_cols, box_rows, swizzle};
  struct Recent {
    Key key;
    CUtensorMap map;
    bool valid;
  };
  constexpr unsigned kRecent = 6;
  thread_local Recent recent[kRecent] = {};
  thread_local unsigned next = 0;
  for (const Recent& r : recent) {
    if (r.valid && r.key == key) return r.map;
  }
  static std::mutex mutex;
  static std::map<Key, CUtensorMap> cache;
  CUtensorMap map;
  bool hit = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto found = cache.find(key);
    if (found != cache.end()) map = found->second, hit = true;
  }
  if (!hit) {
    map = encode(base, elem, cols, rows, ld, box_cols, box_rows, swizzle);
    std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() >= 1024) cache.clear();
    cache.emplace(key, map);
  }
  recent[next++ % kRecent] = Recent{key, map, true};
  return map;
}

// Each thread keeps its last two operands' maps whole: eight maps an operand would cycle through
// make_tensor_map_2d's few recent entries and take its lock every call.
ResidueMaps make_residue_maps(const void* base, TmaElem elem, uint64_t cols, uint64_t rows,
                              uint64_t ld, uint32_t box_cols) {
  if (elem == TmaElem::f32) throw std::invalid_argument("make_residue_maps: 2-byte elements only");
  using Key = std::tuple<const void*, TmaElem, uint64_t, uint64_t, uint64_t, uint32_t>;
  const Key key{base, elem, cols, rows, ld, box_cols};
  struct Recent {
    Key key;
    ResidueMaps maps;
    bool valid;
  };
  thread_local Recent recent[2] = {};
  thread_local unsigned next = 0;
  for (const Recent& r : recent) {
    if (r.valid && r.key == key) return r.maps;
  }
  ResidueMaps maps{};
  for (uint64_t r = 0; r < 8; ++r) {
    // A residue without rows (K < 8) reads row 0's, which the kernel replaces by zeros.
    const uint64_t row_index = r < rows ? r : 0, count = r < rows ? (rows - r + 7) / 8 : 1;
    const uintptr_t row = reinterpret_cast<uintptr_t>(base) + row_index * ld * 2;
    const uint64_t off = (row % 16) / 2;
    maps.map[r] = make_tensor_map_2d(reinterpret_cast<const void*>(row - off * 2), elem,
                                     cols + off, count, 8 * ld, box_cols, 8, false);
    maps.offsets |= uint32_t(off) << (3 * r);
  }
  recent[next++ % 2] = Recent{key, maps, true};
  return maps;
}

}  // namespace fastgemm::hopper
