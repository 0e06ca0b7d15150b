// tensor_map.cu — see tensor_map.h.
#include "hopper/tensor_map.h"

#include "common/runtime.h"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

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
                   uint32_t box_cols, uint32_t box_rows, bool swizzle,
                   CUtensorMapL2promotion promotion) {
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
      promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (res != CUDA_SUCCESS) {
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(res) +
                             ") for a " + std::to_string(rows) + "x" + std::to_string(cols) +
                             " operand with leading dimension " + std::to_string(ld));
  }
  return map;
}

// FASTGEMM_DEV_L2PROMO=none|64|128|256 gives every map that L2 promotion (for the sweeps that
// compare them; read again by _C._clear_plan_cache(); any other value: as unset). Not for users.
int read_dev_promotion() {
  const char* e = std::getenv("FASTGEMM_DEV_L2PROMO");
  const std::string s = e == nullptr ? "" : e;
  return s == "none"  ? int(CU_TENSOR_MAP_L2_PROMOTION_NONE)
         : s == "64"  ? int(CU_TENSOR_MAP_L2_PROMOTION_L2_64B)
         : s == "128" ? int(CU_TENSOR_MAP_L2_PROMOTION_L2_128B)
         : s == "256" ? int(CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
                      : -1;
}

std::atomic<int> dev_promotion_override{read_dev_promotion()};  // -1: unset

int dev_promotion() { return dev_promotion_override.load(std::memory_order_relaxed); }

// How much a box's row fetch promotes to in L2. 256 bytes (two lines) pays where a box row is a
// whole line or whole sectors of one (4000^3, rows of 64 bytes: 2-3% slower with 128). Where the
// rows start 16 bytes into a 32-byte sector (the base or the pitch only 16-byte aligned: N or K
// an odd multiple of 8 halves or 4 floats), each 128-byte box row touches five sectors over two
// lines, and promoting each touch to a 256-byte pair took up to 1.4x the time of 128-byte
// promotion (1000^3 to 14916x664x6424, fp16, bf16 and tf32, H100 and H200: NOTES, thirty-seventh
// session). Promotion is a hint: it changes no result.
CUtensorMapL2promotion promotion_for(const void* base, uint64_t pitch_bytes) {
  const int dev = dev_promotion();
  if (dev >= 0) return static_cast<CUtensorMapL2promotion>(dev);
  return ((reinterpret_cast<uintptr_t>(base) | pitch_bytes) % 32 != 0)
             ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
             : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
}

}  // namespace

void reset_dev_promotion() {
  dev_promotion_override.store(read_dev_promotion(), std::memory_order_relaxed);
}

// Encoding costs a driver call per operand per GEMM (host time of the order of a launch's);
// repeated calls on the same buffers (a model's weights, activations from a caching allocator, a
// benchmark loop) reuse the map. The key is every input of the encoding — the map holds nothing
// else — so a hit is always the map a fresh encoding would produce, whatever was freed and
// reallocated since. Each thread keeps the maps of its last few calls (a GEMM's three, no lock);
// behind them a locked cache shared by all threads, in two generations: new maps enter the young
// one, and when it holds kGeneration maps it becomes the old one (the previous old one is
// dropped); a map found in the old generation is copied into the young. So every map used within
// the last kGeneration distinct maps is kept and memory stays bounded (2 x kGeneration maps): a
// program cycling through a few thousand operands (a model's layers, each weight and activation a
// map) encodes each once, where one bounded map cleared when full would re-encode every map of a
// cycle longer than the bound.
namespace {

struct MapKey {
  const void* base;
  TmaElem elem;
  uint64_t cols, rows, ld;
  uint32_t box_cols, box_rows;
  bool swizzle;
  CUtensorMapL2promotion promotion;
  bool operator==(const MapKey& o) const {
    return base == o.base && elem == o.elem && cols == o.cols && rows == o.rows && ld == o.ld &&
           box_cols == o.box_cols && box_rows == o.box_rows && swizzle == o.swizzle &&
           promotion == o.promotion;
  }
};

struct MapKeyHash {
  size_t operator()(const MapKey& k) const {
    uint64_t h = reinterpret_cast<uintptr_t>(k.base);
    for (const uint64_t v : {uint64_t(k.elem), k.cols, k.rows, k.ld, uint64_t(k.box_cols),
                             uint64_t(k.box_rows), uint64_t(k.swizzle), uint64_t(k.promotion)}) {
      h = (h ^ v) * 0x100000001b3ull;  // FNV-1a style mixing of the fields
    }
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

class MapCache {
 public:
  static constexpr size_t kGeneration = 4096;
  bool find(const MapKey& key, CUtensorMap& map) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto hit = young_.find(key);
    if (hit != young_.end()) {
      map = hit->second;
      return true;
    }
    hit = old_.find(key);
    if (hit == old_.end()) return false;
    map = hit->second;
    insert_locked(key, map);
    return true;
  }
  void insert(const MapKey& key, const CUtensorMap& map) {
    std::lock_guard<std::mutex> lock(mutex_);
    insert_locked(key, map);
  }

 private:
  void insert_locked(const MapKey& key, const CUtensorMap& map) {
    if (young_.size() >= kGeneration) {
      old_.swap(young_);
      young_.clear();
    }
    young_.emplace(key, map);
  }
  std::mutex mutex_;
  std::unordered_map<MapKey, CUtensorMap, MapKeyHash> young_, old_;
};

}  // namespace

CUtensorMap make_tensor_map_2d(const void* base, TmaElem elem, uint64_t cols, uint64_t rows,
                               uint64_t ld, uint32_t box_cols, uint32_t box_rows, bool swizzle) {
  const MapKey key{base, elem, cols, rows, ld, box_cols, box_rows, swizzle,
                   promotion_for(base, ld * (elem == TmaElem::f32 ? 4 : 2))};
  struct Recent {
    MapKey key;
    CUtensorMap map;
    bool valid;
  };
  constexpr unsigned kRecent = 6;
  thread_local Recent recent[kRecent] = {};
  thread_local unsigned next = 0;
  for (const Recent& r : recent) {
    if (r.valid && r.key == key) return r.map;
  }
  static MapCache cache;
  CUtensorMap map;
  if (!cache.find(key, map)) {
    map = encode(base, elem, cols, rows, ld, box_cols, box_rows, swizzle, key.promotion);
    cache.insert(key, map);
  }
  recent[next++ % kRecent] = Recent{key, map, true};
  return map;
}

// Each thread keeps its last two operands' maps whole: eight maps an operand would cycle through
// make_tensor_map_2d's few recent entries and take its lock every call.
ResidueMaps make_residue_maps(const void* base, TmaElem elem, uint64_t cols, uint64_t rows,
                              uint64_t ld, uint32_t box_cols) {
  if (elem == TmaElem::f32) throw std::invalid_argument("make_residue_maps: 2-byte elements only");
  // dev_promotion(): maps of another FASTGEMM_DEV_L2PROMO setting are other maps.
  using Key = std::tuple<const void*, TmaElem, uint64_t, uint64_t, uint64_t, uint32_t, int>;
  const Key key{base, elem, cols, rows, ld, box_cols, dev_promotion()};
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
