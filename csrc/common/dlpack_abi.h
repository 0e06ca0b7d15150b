// dlpack_abi.h — the DLPack C ABI (structs and capsule names, per the DLPack 1.x specification),
// declared here so the build needs no third-party header.
#pragma once
#include <cstdint>

namespace fastgemm::dlpack {

enum DeviceType : int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3, kCUDAManaged = 13 };
enum TypeCode : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4 };

struct Device {
  int32_t device_type;
  int32_t device_id;
};
struct DataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL means C-contiguous
  uint64_t byte_offset;
};
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor*);
};
struct Version {
  uint32_t major;
  uint32_t minor;
};
constexpr uint64_t kFlagReadOnly = 1ull << 0;
struct ManagedTensorVersioned {
  Version version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned*);
  uint64_t flags;
  Tensor dl_tensor;
};

constexpr const char* kCapsule = "dltensor";
constexpr const char* kUsedCapsule = "used_dltensor";
constexpr const char* kCapsuleVersioned = "dltensor_versioned";
constexpr const char* kUsedCapsuleVersioned = "used_dltensor_versioned";

}  // namespace fastgemm::dlpack
