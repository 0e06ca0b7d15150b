// runtime.h — device utilities around a GEMM launch: device queries (cached per device), a
// scoped device guard, stream-ordered temporaries, C = beta*C, strided copies, stream waits, and
// the hooks the CPU tests use to prove that argument checks come before any device access.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace fastgemm {

int device_count();                 // 0 when there is no driver or no device (never throws)
std::string runtime_status();       // why device_count() is 0, or "ok"

// What launch decisions depend on, queried from the driver once per device and cached.
struct DeviceProps {
  int cc = 0;              // 10 * major + minor, e.g. 90
  int smem_per_block = 0;  // bytes of shared memory a block may opt into
  int sm_count = 0;
};
const DeviceProps& device_props(int device);
// SMs that a launch on `device` may fill: its SM count less the SMs this thread reserves for
// work that runs beside its GEMMs (the multi-GPU path's communication kernels), at least one.
// Persistent grids, split counts and stream-K groups size themselves by it; the rules (plan.cpp)
// still see the whole GPU. set_reserved_sms returns the previous reservation.
int launch_sms(int device);
int set_reserved_sms(int sms);
int device_cc(int device);          // device_props(device).cc
std::string device_name(int device);
int current_device();
int pointer_device(uintptr_t ptr);  // the device that owns ptr, or -1 for host/unregistered memory
int runtime_version();
// A CUDA driver function by name and ABI version, fetched through the runtime (nothing links
// libcuda); nullptr where the driver lacks it.
void* driver_entry(const char* symbol, int version);

// Makes `device` current for the guard's lifetime, restoring the previous device afterwards.
// While it lives, active_device() answers `device` on this thread without asking the runtime.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1, device_ = -1, outer_ = -1;
};

// The current device: the innermost DeviceGuard's on this thread, else cudaGetDevice. A launch
// asks several times (shared-memory attribute, occupancy, SM count); under the entry's guard
// none of them is a runtime call.
int active_device();

// Stream-ordered device allocation, released with cudaFreeAsync on the same stream.
class DeviceBuffer {
 public:
  DeviceBuffer(size_t bytes, uintptr_t stream, int device);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uintptr_t ptr() const { return reinterpret_cast<uintptr_t>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
  int device_ = 0;
};

// Scratch memory through which the blocks of one launch hand each other partial results (the
// split-K kernels whose partial tiles meet in global memory): `zeroed` bytes that are zero when a
// launch starts and that the launch leaves zero (its flags), followed by `bytes` more. One buffer
// per stream (by cudaStreamGetId: the per-thread default stream is one per thread, and a handle
// reused after cudaStreamDestroy is a new stream), grown on demand and kept: the launches of one
// stream run in order, so they can share it (two streams never do). The Scratch holds the
// buffer's lock until it is destroyed, after the caller has queued its launch, so that another
// thread on the same stream cannot grow (and free) the buffer in between. While the stream is
// being captured into a CUDA graph the buffer is the graph's own instead (a stream-ordered
// allocation, zeroed, released after the launch: memory nodes of the graph, made anew on each
// replay), so that a replay never shares a buffer with other work; `owned` holds it until the
// launch is queued. Nothing asked (zeroed = bytes = 0): no buffer, null pointers.
struct Scratch {
  void* flags = nullptr;  // the zeroed bytes
  void* data = nullptr;   // the rest
  std::unique_ptr<DeviceBuffer> owned;
  std::unique_lock<std::mutex> lock;
};
Scratch stream_scratch(int device, cudaStream_t stream, size_t zeroed, size_t bytes);

enum class DType : uint8_t { f32, f16, bf16 };
DType parse_dtype(const std::string& name);
const char* dtype_name(DType dtype);  // "float32", "float16", "bfloat16"
inline int dtype_size(DType dtype) { return dtype == DType::f32 ? 4 : 2; }

// --- test hooks ----------------------------------------------------------------------------------
// The CPU tests drive the C++ entry with fake arrays. `forbid` makes every device query above
// throw DeviceAccessForbidden (so a test proves that its error came before any device access);
// `device_count` >= 0, `pointer_device` >= -1 and `cc` > 0 (with `smem_per_block`) replace what
// the runtime would answer; `record` makes the entry log the work it would queue instead of
// queuing it (entry.cpp), so the CPU tests can check pointers, layouts and copies.
struct RuntimeHooks {
  bool forbid = false;
  int device_count = -1;
  int pointer_device = -2;
  int cc = 0;
  int smem_per_block = 0;
  bool record = false;
};
RuntimeHooks& runtime_hooks();
struct DeviceAccessForbidden : std::logic_error {
  DeviceAccessForbidden()
      : std::logic_error("validation touched the GPU before rejecting the arguments") {}
};

// C (M x N, row-major, ldc) = beta * C; beta == 0 writes zeros without reading C.
void scale_matrix(DType dtype, void* C, int64_t M, int64_t N, int64_t ldc, float beta,
                  cudaStream_t stream);
// dst (rows x cols, row-major, leading dimension dst_ld) = src with element strides (rs, cs),
// possibly negative.
void copy_strided(int elem_bytes, const void* src, int64_t rows, int64_t cols, int64_t rs,
                  int64_t cs, void* dst, int64_t dst_ld, cudaStream_t stream);
// dst (dst_rows x dst_cols, row-major, leading dimension dst_ld) = src (rows x cols of contiguous
// elements, rows rs apart) in its top-left corner, zeros elsewhere.
void copy_zero_padded(int elem_bytes, const void* src, int64_t rows, int64_t cols, int64_t rs,
                      void* dst, int64_t dst_ld, int64_t dst_rows, int64_t dst_cols,
                      cudaStream_t stream);
// The consumer stream waits for the work queued so far on the producer stream (an event, no
// device-wide synchronisation).
void stream_wait(cudaStream_t producer, cudaStream_t consumer);

}  // namespace fastgemm
