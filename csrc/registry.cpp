// registry.cpp — the one kernel table (see registry.h).
#include "registry.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <unordered_map>

namespace fastgemm {

namespace {
// The rows registered so far, in load order (constructed on first use: registrations run from
// static initialisers of other translation units).
std::vector<KernelEntry>& registered() {
  static std::vector<KernelEntry> rows;
  return rows;
}
}  // namespace

Registration::Registration(const char* name, const char* dtype, const RungInfo& info,
                           LaunchFn launch, int (*smem_bytes)()) {
  const bool bf16 = std::strcmp(dtype, "bfloat16") == 0;
  const int min_cc = bf16 && info.min_cc < 80 ? 80 : info.min_cc;  // bf16 tensor cores: sm_80
  registered().push_back(KernelEntry{name, dtype, info.version, min_cc, info.max_cc,
                                     info.alignment, info.techniques, launch, smem_bytes,
                                     info.family, info.copy, info.epilogue, info.parent,
                                     info.branch,
                                     std::strcmp(dtype, "float32") == 0 ? info.precision : ""});
}

const std::vector<KernelEntry>& kernel_table() {
  // fp32 first, then by rung, fp16 before bf16: the order of the ladders, whatever the link order.
  static const std::vector<KernelEntry> table = [] {
    std::vector<KernelEntry> rows = registered();
    auto key = [](const KernelEntry& k) {
      const DType d = parse_dtype(k.dtype);
      return std::make_tuple(d != DType::f32, k.version, d == DType::bf16);
    };
    std::sort(rows.begin(), rows.end(),
              [&](const KernelEntry& x, const KernelEntry& y) { return key(x) < key(y); });
    return rows;
  }();
  return table;
}

DType kernel_dtype(const KernelEntry& k) { return parse_dtype(k.dtype); }

namespace {
// name -> the entry of each dtype (index DType), built once from the table.
struct ByName {
  const KernelEntry* of[3] = {nullptr, nullptr, nullptr};
};
const std::unordered_map<std::string_view, ByName>& name_index() {
  static const std::unordered_map<std::string_view, ByName> index = [] {
    std::unordered_map<std::string_view, ByName> out;
    for (const auto& k : kernel_table()) out[k.name].of[int(kernel_dtype(k))] = &k;
    return out;
  }();
  return index;
}
}  // namespace

const KernelEntry* find_kernel(std::string_view name, DType dtype) {
  const auto& index = name_index();
  const auto hit = index.find(name);
  return hit == index.end() ? nullptr : hit->second.of[int(dtype)];
}

bool kernel_name_exists(std::string_view name) { return name_index().count(name) != 0; }

}  // namespace fastgemm
