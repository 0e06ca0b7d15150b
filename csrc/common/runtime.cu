// runtime.cu — see runtime.h.
#include "common/runtime.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "common/launch.cuh"

namespace fastgemm {

RuntimeHooks& runtime_hooks() {
  static RuntimeHooks hooks;
  return hooks;
}

namespace {
void check_hooks() {
  if (runtime_hooks().forbid) throw DeviceAccessForbidden();
}
}  // namespace

int device_count() {
  check_hooks();
  if (runtime_hooks().device_count >= 0) return runtime_hooks().device_count;
  // A process never gains or loses devices: once the runtime has seen some, keep the count.
  static std::atomic<int> seen{0};
  if (const int n = seen.load(std::memory_order_relaxed)) return n;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  seen.store(n, std::memory_order_relaxed);
  return n;
}

std::string runtime_status() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
  }
  return n > 0 ? "ok" : "no CUDA device";
}

namespace {
// compute(device), once per device for each caller (each lambda type has its own table): a
// value that never changes while the process lives.
template <typename T, typename Compute>
const T& once_per_device(int device, Compute compute) {
  constexpr int kMaxDevices = 64;
  static T values[kMaxDevices];
  static std::once_flag once[kMaxDevices];
  if (device < 0 || device >= kMaxDevices) {
    throw std::invalid_argument("device index " + std::to_string(device) + " is out of range");
  }
  std::call_once(once[device], [&] { values[device] = compute(device); });
  return values[device];
}
}  // namespace

const DeviceProps& device_props(int device) {
  check_hooks();
  if (runtime_hooks().cc > 0) {
    static thread_local DeviceProps pretend;
    pretend = DeviceProps{runtime_hooks().cc, runtime_hooks().smem_per_block, 132};
    return pretend;
  }
  return once_per_device<DeviceProps>(device, [](int device) {
    DeviceProps p;
    int major = 0, minor = 0;
    FASTGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    FASTGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    FASTGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&p.smem_per_block,
                                               cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    FASTGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&p.sm_count, cudaDevAttrMultiProcessorCount, device));
    p.cc = 10 * major + minor;
    return p;
  });
}

int device_cc(int device) { return device_props(device).cc; }

namespace {
thread_local int reserved_sms = 0;
}  // namespace

int launch_sms(int device) { return std::max(1, device_props(device).sm_count - reserved_sms); }

int set_reserved_sms(int sms) {
  if (sms < 0) throw std::invalid_argument("reserved SMs must be >= 0, got " + std::to_string(sms));
  const int previous = reserved_sms;
  reserved_sms = sms;
  return previous;
}

std::string device_name(int device) {
  cudaDeviceProp prop{};
  FASTGEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop.name;
}

int current_device() {
  check_hooks();
  if (runtime_hooks().device_count >= 0) return 0;
  int d = 0;
  FASTGEMM_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

int pointer_device(uintptr_t ptr) {
  check_hooks();
  if (runtime_hooks().pointer_device >= -1) return runtime_hooks().pointer_device;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, reinterpret_cast<const void*>(ptr)) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  if (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) return attr.device;
  return -1;
}

int runtime_version() {
  int v = 0;
  cudaRuntimeGetVersion(&v);
  return v;
}

void* driver_entry(const char* symbol, int version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &status) !=
          cudaSuccess ||
      status != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return fn;
}

namespace {

// The last N (key, value) pairs this thread looked up in a locked, process-wide cache: a repeated
// launch answers from here without taking the lock.
template <typename Key, typename Value, int N = 8>
class Recent {
 public:
  const Value* find(const Key& key) const {
    for (int i = 0; i < N; ++i) {
      if (used_[i] && keys_[i] == key) return &values_[i];
    }
    return nullptr;
  }
  void add(const Key& key, const Value& value) {
    const unsigned i = next_++ % N;
    keys_[i] = key, values_[i] = value, used_[i] = true;
  }

 private:
  Key keys_[N] = {};
  Value values_[N] = {};
  bool used_[N] = {};
  unsigned next_ = 0;
};

struct Driver {
  PFN_cuLaunchKernelEx_v11060 launch = nullptr;
  PFN_cuGetErrorName_v6000 error_name = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_current = nullptr;
  PFN_cuCtxGetId_v12000 ctx_id = nullptr;
  PFN_cuKernelGetFunction_v12000 kernel_function = nullptr;
  Driver()
      : launch(reinterpret_cast<PFN_cuLaunchKernelEx_v11060>(
            driver_entry("cuLaunchKernelEx", 11060))),
        error_name(
            reinterpret_cast<PFN_cuGetErrorName_v6000>(driver_entry("cuGetErrorName", 6000))),
        ctx_current(
            reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(driver_entry("cuCtxGetCurrent", 4000))),
        ctx_id(reinterpret_cast<PFN_cuCtxGetId_v12000>(driver_entry("cuCtxGetId", 12000))),
        kernel_function(reinterpret_cast<PFN_cuKernelGetFunction_v12000>(
            driver_entry("cuKernelGetFunction", 12000))) {}
};
const Driver& driver() {
  static const Driver d;
  return d;
}

// The kernel's context-independent handle: the last few per thread in front of a locked map.
cudaKernel_t kernel_handle(const void* kernel, const char* name) {
  thread_local Recent<const void*, cudaKernel_t> recent;
  if (const cudaKernel_t* hit = recent.find(kernel)) return *hit;
  static std::mutex mutex;
  static std::map<const void*, cudaKernel_t> handles;
  cudaKernel_t handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = handles.find(kernel);
    if (it == handles.end()) {
      cuda_check(cudaGetKernel(&handle, kernel), name);
      it = handles.emplace(kernel, handle).first;
    }
    handle = it->second;
  }
  recent.add(kernel, handle);
  return handle;
}

// The kernel's function in the calling thread's current context. Launched as itself, it spares
// the driver the search for the context's copy that a launch of the context-independent handle
// makes every time. Keyed by the context's unique id: a context made after a reset is another
// one, even at a reused address. Nullptr (launch the handle) where the thread has no current
// context yet or the driver lacks these calls.
CUfunction context_function(const void* kernel, const char* name) {
  const Driver& d = driver();
  if (d.ctx_current == nullptr || d.ctx_id == nullptr || d.kernel_function == nullptr) {
    return nullptr;
  }
  CUcontext ctx = nullptr;
  unsigned long long id = 0;
  if (d.ctx_current(&ctx) != CUDA_SUCCESS || ctx == nullptr || d.ctx_id(ctx, &id) != CUDA_SUCCESS) {
    return nullptr;
  }
  using Key = std::pair<const void*, unsigned long long>;
  const Key key{kernel, id};
  thread_local Recent<Key, CUfunction> recent;
  if (const CUfunction* hit = recent.find(key)) return *hit;
  static std::mutex mutex;
  static std::map<Key, CUfunction> functions;
  CUfunction f = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = functions.find(key);
    if (it != functions.end()) f = it->second;
  }
  if (f == nullptr) {
    const auto handle = reinterpret_cast<CUkernel>(kernel_handle(kernel, name));
    if (d.kernel_function(&f, handle) != CUDA_SUCCESS) return nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    functions.emplace(key, f);
  }
  recent.add(key, f);
  return f;
}

}  // namespace

void launch_kernel(const void* kernel, const Launch& l, void** args, const char* name) {
  const Driver& d = driver();
  if (d.launch == nullptr) {
    throw std::runtime_error(std::string(name) + ": the CUDA driver has no cuLaunchKernelEx");
  }
  CUlaunchAttribute attrs[3];
  unsigned count = 0;
  // FASTGEMM_DEV_PDL=0 (sweeps, read once per process): every launch without programmatic
  // dependent launch, to time what it gains back to back.
  static const bool pdl_off = [] {
    const char* v = std::getenv("FASTGEMM_DEV_PDL");
    return v != nullptr && std::string(v) == "0";
  }();
  if (l.pdl && !pdl_off) {
    attrs[count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[count++].value.programmaticStreamSerializationAllowed = 1;
  }
  if (l.cluster_z > 1) {
    attrs[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[count].value.clusterDim.x = 1, attrs[count].value.clusterDim.y = 1;
    attrs[count++].value.clusterDim.z = l.cluster_z;
    if (l.balance) {
      attrs[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
      attrs[count++].value.clusterSchedulingPolicyPreference =
          CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING;
    }
  }
  CUlaunchConfig config{};
  config.gridDimX = l.grid.x, config.gridDimY = l.grid.y, config.gridDimZ = l.grid.z;
  config.blockDimX = l.block.x, config.blockDimY = l.block.y, config.blockDimZ = l.block.z;
  config.sharedMemBytes = static_cast<unsigned>(l.smem);
  config.hStream = reinterpret_cast<CUstream>(l.stream);
  config.attrs = attrs;
  config.numAttrs = count;
  CUfunction f = context_function(kernel, name);
  if (f == nullptr) f = reinterpret_cast<CUfunction>(kernel_handle(kernel, name));
  CUresult r = d.launch(&config, f, args, nullptr);
  if (r == CUDA_ERROR_INVALID_CONTEXT) {
    // A thread that has made no runtime call needing the device has no current context yet:
    // make the current device's primary context current, as the runtime's own launch would.
    int device = 0;
    cuda_check(cudaGetDevice(&device), name);
    cuda_check(cudaSetDevice(device), name);
    cuda_check(cudaFree(nullptr), name);
    r = d.launch(&config, f, args, nullptr);
  }
  if (r != CUDA_SUCCESS) {
    const char* text = nullptr;
    if (d.error_name == nullptr || d.error_name(r, &text) != CUDA_SUCCESS) text = nullptr;
    throw std::runtime_error(std::string(name) + ": launch failed: " +
                             (text ? text : "CUresult " + std::to_string(int(r))));
  }
}

namespace {
thread_local int guarded_device = -1;  // the innermost live DeviceGuard's device, -1 for none
}  // namespace

DeviceGuard::DeviceGuard(int device) : device_(device), outer_(guarded_device) {
  FASTGEMM_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) FASTGEMM_CUDA_CHECK(cudaSetDevice(device));
  guarded_device = device;
}

DeviceGuard::~DeviceGuard() {
  guarded_device = outer_;
  // Nothing under a guard changes the device (a launch, an allocation on it): only the guard's
  // own switch is undone.
  if (previous_ != device_) cudaSetDevice(previous_);
}

int active_device() {
  if (guarded_device >= 0) return guarded_device;
  int device = 0;
  FASTGEMM_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

DeviceBuffer::DeviceBuffer(size_t bytes, uintptr_t stream, int device)
    : bytes_(bytes), stream_(reinterpret_cast<cudaStream_t>(stream)), device_(device) {
  DeviceGuard guard(device);
  FASTGEMM_CUDA_CHECK(cudaMallocAsync(&ptr_, bytes ? bytes : 1, stream_));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ == nullptr) return;
  int previous = -1;
  cudaGetDevice(&previous);
  cudaSetDevice(device_);
  cudaFreeAsync(ptr_, stream_);
  cudaSetDevice(previous);
}

Scratch stream_scratch(int device, cudaStream_t stream, size_t zeroed, size_t bytes) {
  Scratch s;
  if (zeroed == 0 && bytes == 0) return s;
  zeroed = (zeroed + 255) / 256 * 256;  // the data stays 256-byte aligned
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  FASTGEMM_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone) {
    s.owned = std::make_unique<DeviceBuffer>(zeroed + bytes, reinterpret_cast<uintptr_t>(stream),
                                             device);
    s.flags = reinterpret_cast<void*>(s.owned->ptr());
    FASTGEMM_CUDA_CHECK(cudaMemsetAsync(s.flags, 0, zeroed, stream));
    s.data = static_cast<char*>(s.flags) + zeroed;
    return s;
  }
  unsigned long long id = 0;
  if (cudaStreamGetId(stream, &id) != cudaSuccess) {  // a runtime without stream ids: the handle
    cudaGetLastError();
    id = (1ull << 63) | static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(stream));
  }
  struct Buffer {
    std::mutex mutex;  // held by a Scratch from lookup until its launch is queued
    void* ptr = nullptr;
    size_t zeroed = 0, bytes = 0;
  };
  static std::mutex mutex;  // guards the map; entries are never erased, so references stay valid
  static std::map<std::pair<int, unsigned long long>, Buffer> buffers;
  Buffer* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    b = &buffers[{device, id}];
  }
  s.lock = std::unique_lock<std::mutex>(b->mutex);
  if (b->zeroed < zeroed || b->bytes < bytes) {  // grown: the old one is released after its users
    const size_t z = std::max(b->zeroed, zeroed), n = std::max(b->bytes, bytes);
    if (b->ptr != nullptr) FASTGEMM_CUDA_CHECK(cudaFreeAsync(b->ptr, stream));
    b->ptr = nullptr, b->zeroed = 0, b->bytes = 0;
    FASTGEMM_CUDA_CHECK(cudaMallocAsync(&b->ptr, z + n, stream));
    FASTGEMM_CUDA_CHECK(cudaMemsetAsync(b->ptr, 0, z, stream));
    b->zeroed = z, b->bytes = n;
  }
  s.flags = b->ptr;
  s.data = static_cast<char*>(b->ptr) + b->zeroed;
  return s;
}

DType parse_dtype(const std::string& name) {
  if (name == "float32") return DType::f32;
  if (name == "float16") return DType::f16;
  if (name == "bfloat16") return DType::bf16;
  throw std::invalid_argument("unsupported dtype '" + name + "'");
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float32";
    case DType::f16: return "float16";
    case DType::bf16: return "bfloat16";
  }
  return "?";
}

namespace {

template <typename T>
__global__ void scale_kernel(T* C, int64_t M, int64_t N, int64_t ldc, float beta) {
  const int64_t total = M * N;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = idx / N, j = idx % N;
    T* p = C + i * ldc + j;
    // beta == 0: never read C, so NaN/Inf already there cannot reach the output.
    *p = beta == 0.0f ? T(0.0f) : T(beta * float(*p));
  }
}


template <typename W>
__global__ void copy_strided_kernel(const W* src, int64_t rows, int64_t cols, int64_t rs,
                                    int64_t cs, W* dst, int64_t dst_ld) {
  const int64_t total = rows * cols;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = idx / cols, j = idx % cols;
    dst[i * dst_ld + j] = src[i * rs + j * cs];
  }
}

// Rows of contiguous elements (a padded, unaligned or aligned matrix) -> rows of dst, which may
// be larger (dst_rows x dst_cols): what lies outside the source is written as zeros. Warp w of the
// x-grid owns 32 16-byte chunks of columns (32 * VEC elements) in every row it visits. Where the
// destination row is 16-byte aligned, lane l moves chunk l: one 16-byte store, and one 16-byte
// load where the source row is aligned too and the chunk lies inside it (scalar loads otherwise,
// which L1 merges). Where it is not, lane l moves elements l, l + 32, ... of the warp's span, so
// that every warp store covers 32 contiguous elements (one lane per 16-byte chunk would scatter
// each store instruction over 512 bytes of partial sectors: ~1 TB/s instead of ~3 on an H200).
template <typename W>
__global__ void copy_rows_kernel(const W* src, int64_t rows, int64_t cols, int64_t rs, W* dst,
                                 int64_t dst_ld, int64_t dst_rows, int64_t dst_cols) {
  constexpr int VEC = 16 / sizeof(W);
  const int lane = threadIdx.x % 32;
  const int64_t span = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x - lane) * VEC;
  if (span >= dst_cols) return;
  const int64_t j = span + lane * VEC;  // this lane's chunk in the aligned scheme
  auto inside = [j](int64_t extent) {   // elements of the chunk within [0, extent)
    return j >= extent ? 0 : extent - j < VEC ? static_cast<int>(extent - j) : VEC;
  };
  const int m = inside(dst_cols);
  for (int64_t i = blockIdx.y; i < dst_rows; i += gridDim.y) {
    const W* s = src + i * rs;
    W* d = dst + i * dst_ld;
    const int n = i < rows ? inside(cols) : 0;  // source elements of the chunk
    if (reinterpret_cast<uintptr_t>(d) % 16 == 0) {
      alignas(16) W v[VEC];
      if (n == VEC && reinterpret_cast<uintptr_t>(s) % 16 == 0) {
        *reinterpret_cast<uint4*>(v) = *reinterpret_cast<const uint4*>(s + j);
      } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k) v[k] = k < n ? s[j + k] : W(0);
      }
      if (m == VEC) {
        *reinterpret_cast<uint4*>(d + j) = *reinterpret_cast<const uint4*>(v);
      } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          if (k < m) d[j + k] = v[k];
        }
      }
    } else {
      const int64_t have = i < rows ? cols : 0;
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const int64_t c = span + 32 * k + lane;
        if (c < dst_cols) d[c] = c < have ? s[c] : W(0);
      }
    }
  }
}

unsigned elementwise_blocks(int64_t total) {
  return static_cast<unsigned>(std::min<int64_t>(ceil_div(total, 256), 65536));
}

// Rows of at most kNarrowCopyBytes (the few columns of a tall narrow output, or its small
// operand): copy_rows_kernel would give each row a block whose warps hold 32 chunks of it, so a
// tall narrow copy launched one mostly idle block per row (17408 rows of 4 columns: ~10 us).
// Here consecutive threads take consecutive elements of the destination, row after row.
constexpr int64_t kNarrowCopyBytes = 128;
template <typename W>
__global__ void copy_narrow_rows_kernel(const W* src, int64_t rows, int64_t cols, int64_t rs,
                                        W* dst, int64_t dst_ld, int64_t dst_rows,
                                        int64_t dst_cols) {
  const int64_t total = dst_rows * dst_cols;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = idx / dst_cols, j = idx - i * dst_cols;
    dst[i * dst_ld + j] = i < rows && j < cols ? src[i * rs + j] : W(0);
  }
}

template <typename W>
void launch_copy_rows(const void* src, int64_t rows, int64_t cols, int64_t rs, void* dst,
                      int64_t dst_ld, int64_t dst_rows, int64_t dst_cols, cudaStream_t stream) {
  constexpr int VEC = 16 / sizeof(W), THREADS = 128;
  if (dst_cols * int64_t(sizeof(W)) <= kNarrowCopyBytes) {
    copy_narrow_rows_kernel<<<elementwise_blocks(dst_rows * dst_cols), 256, 0, stream>>>(
        static_cast<const W*>(src), rows, cols, rs, static_cast<W*>(dst), dst_ld, dst_rows,
        dst_cols);
    return;
  }
  const dim3 grid(static_cast<unsigned>(ceil_div(ceil_div(dst_cols, VEC), THREADS)),
                  static_cast<unsigned>(std::min<int64_t>(dst_rows, 65535)));
  copy_rows_kernel<<<grid, THREADS, 0, stream>>>(static_cast<const W*>(src), rows, cols, rs,
                                                  static_cast<W*>(dst), dst_ld, dst_rows, dst_cols);
}

// copy_rows_kernel for elements of elem_bytes.
void copy_rows(const char* name, int elem_bytes, const void* src, int64_t rows, int64_t cols,
               int64_t rs, void* dst, int64_t dst_ld, int64_t dst_rows, int64_t dst_cols,
               cudaStream_t stream) {
  if (dst_cols > int64_t(65535) * 128 * (16 / elem_bytes)) {
    throw std::invalid_argument(std::string(name) + ": rows of more than 2^26 elements");
  }
  switch (elem_bytes) {
    case 2:
      launch_copy_rows<uint16_t>(src, rows, cols, rs, dst, dst_ld, dst_rows, dst_cols, stream);
      break;
    case 4:
      launch_copy_rows<uint32_t>(src, rows, cols, rs, dst, dst_ld, dst_rows, dst_cols, stream);
      break;
    default:
      throw std::invalid_argument(std::string(name) + ": unsupported element size " +
                                  std::to_string(elem_bytes));
  }
  FASTGEMM_CHECK_LAUNCH("copy_rows_kernel");
}

}  // namespace

void scale_matrix(DType dtype, void* C, int64_t M, int64_t N, int64_t ldc, float beta,
                  cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  const unsigned blocks = elementwise_blocks(M * N);
  switch (dtype) {
    case DType::f32:
      scale_kernel<<<blocks, 256, 0, stream>>>(static_cast<float*>(C), M, N, ldc, beta);
      break;
    case DType::f16:
      scale_kernel<<<blocks, 256, 0, stream>>>(static_cast<__half*>(C), M, N, ldc, beta);
      break;
    case DType::bf16:
      scale_kernel<<<blocks, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(C), M, N, ldc, beta);
      break;
  }
  FASTGEMM_CHECK_LAUNCH("scale_kernel");
}

void copy_strided(int elem_bytes, const void* src, int64_t rows, int64_t cols, int64_t rs,
                  int64_t cs, void* dst, int64_t dst_ld, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (cs == 1 && (rs >= cols || rows == 1)) {
    // Rows of contiguous elements (a padded or unaligned matrix): copied row by row in 16-byte
    // chunks. (The element-wise kernel below pays an index division per element; a pitched
    // cudaMemcpy2DAsync, used before, was slower for the padded path: benchmarks/NOTES.md.)
    copy_rows("copy_strided", elem_bytes, src, rows, cols, rows == 1 ? cols : rs, dst, dst_ld, rows,
              cols, stream);
    return;
  }
  const unsigned blocks = elementwise_blocks(rows * cols);
  switch (elem_bytes) {
    case 2:
      copy_strided_kernel<<<blocks, 256, 0, stream>>>(static_cast<const uint16_t*>(src), rows,
                                                      cols, rs, cs, static_cast<uint16_t*>(dst),
                                                      dst_ld);
      break;
    case 4:
      copy_strided_kernel<<<blocks, 256, 0, stream>>>(static_cast<const uint32_t*>(src), rows,
                                                      cols, rs, cs, static_cast<uint32_t*>(dst),
                                                      dst_ld);
      break;
    default:
      throw std::invalid_argument("copy_strided: unsupported element size " +
                                  std::to_string(elem_bytes));
  }
  FASTGEMM_CHECK_LAUNCH("copy_strided_kernel");
}

void copy_zero_padded(int elem_bytes, const void* src, int64_t rows, int64_t cols, int64_t rs,
                      void* dst, int64_t dst_ld, int64_t dst_rows, int64_t dst_cols,
                      cudaStream_t stream) {
  if (dst_rows < rows || dst_cols < cols) {
    throw std::invalid_argument("copy_zero_padded: the destination is smaller than the source");
  }
  if (dst_rows <= 0 || dst_cols <= 0) return;
  copy_rows("copy_zero_padded", elem_bytes, src, rows, cols, rs, dst, dst_ld, dst_rows, dst_cols,
            stream);
}

void set_smem_once(const void* kernel, int bytes) {
  const int device = active_device();
  using Key = std::tuple<const void*, int, int>;
  const Key key{kernel, bytes, device};
  thread_local Recent<Key, bool, 4> recent;
  if (recent.find(key)) return;
  static std::mutex mutex;
  static std::set<Key> done;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!done.count(key)) {
      FASTGEMM_CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
      done.insert(key);
    }
  }
  recent.add(key, true);
}

namespace {
// An occupancy answer of the current device, once per kernel, device, `what` and launch shape: a
// thread's recent keys first, then the process-wide map under a lock, then compute(device). Each
// query (each Compute type) keeps its own cache.
template <typename Compute>
int cached_occupancy(const void* kernel, int what, int threads, int smem, Compute compute) {
  const int device = active_device();
  using Key = std::tuple<const void*, int, int, int, int>;
  const Key key{kernel, device, what, threads, smem};
  thread_local Recent<Key, int> recent;  // split_count asks for several splits per launch
  if (const int* hit = recent.find(key)) return *hit;
  static std::mutex mutex;
  static std::map<Key, int> known;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto hit = known.find(key);
    if (hit != known.end()) {
      recent.add(key, hit->second);
      return hit->second;
    }
  }
  const int value = compute(device);
  cudaGetLastError();  // a refused query answers 0, not an error of this call
  {
    std::lock_guard<std::mutex> lock(mutex);
    known.emplace(key, value);
  }
  recent.add(key, value);
  return value;
}
}  // namespace

int resident_split_clusters(const void* kernel, int split, int threads, int smem) {
  return cached_occupancy(kernel, split, threads, smem, [&](int device) {
    // Clusters need the device's support and code compiled for sm_90 or later: a build whose
    // newest code is older PTX (JIT-compiled for this GPU) has the one-block fallbacks of ptx.cuh.
    int clusters = 0, cluster_launch = 0;
    cudaFuncAttributes attr{};
    if (cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device) == cudaSuccess &&
        cluster_launch && cudaFuncGetAttributes(&attr, kernel) == cudaSuccess &&
        attr.ptxVersion >= 90) {
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(1, 1, static_cast<unsigned>(split));
      config.blockDim = dim3(static_cast<unsigned>(threads));
      config.dynamicSmemBytes = static_cast<size_t>(smem);
      cudaLaunchAttribute cluster[1];
      cluster[0].id = cudaLaunchAttributeClusterDimension;
      cluster[0].val.clusterDim.x = 1, cluster[0].val.clusterDim.y = 1;
      cluster[0].val.clusterDim.z = static_cast<unsigned>(split);
      config.attrs = cluster;
      config.numAttrs = 1;
      if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) clusters = 0;
    }
    return clusters > 0 ? clusters : 0;
  });
}

namespace {
// Occupies what an SM gives its blocks and nothing else: cluster_capacity's measure.
__global__ void cluster_capacity_probe() {}
}  // namespace

const ClusterCapacity& cluster_capacity(int device) {
  check_hooks();
  return once_per_device<ClusterCapacity>(device, [](int device) {
    ClusterCapacity c;
    const void* probe = reinterpret_cast<const void*>(&cluster_capacity_probe);
    int cluster_launch = 0, per_sm = 0, reserved = 0, optin = 0;
    cudaFuncAttributes attr{};
    DeviceGuard guard(device);
    const bool ok =
        cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device) == cudaSuccess &&
        cluster_launch &&
        cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) ==
            cudaSuccess &&
        cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device) ==
            cudaSuccess &&
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) ==
            cudaSuccess &&
        cudaFuncGetAttributes(&attr, probe) == cudaSuccess && attr.ptxVersion >= 90 &&
        cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, optin) ==
            cudaSuccess;
    for (int n = 1; ok && n <= kCapacityBlocks; ++n) {
      // Shared memory that lets an SM hold n blocks and not n + 1.
      const int smem = std::min(optin, per_sm / n - reserved);
      for (int s = 2; s <= kCapacitySplit; ++s) {
        for (int balance = 0; balance < 2; ++balance) {
          cudaLaunchConfig_t config = {};
          config.gridDim = dim3(1, 1, static_cast<unsigned>(s));
          config.blockDim = dim3(128);
          config.dynamicSmemBytes = static_cast<size_t>(smem);
          cudaLaunchAttribute attrs[2];
          attrs[0].id = cudaLaunchAttributeClusterDimension;
          attrs[0].val.clusterDim.x = 1, attrs[0].val.clusterDim.y = 1;
          attrs[0].val.clusterDim.z = static_cast<unsigned>(s);
          attrs[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
          attrs[1].val.clusterSchedulingPolicyPreference =
              balance ? cudaClusterSchedulingPolicyLoadBalancing : cudaClusterSchedulingPolicyDefault;
          config.attrs = attrs;
          config.numAttrs = 2;
          int clusters = 0;
          if (cudaOccupancyMaxActiveClusters(&clusters, probe, &config) != cudaSuccess) clusters = 0;
          c.clusters[balance][n][s] = std::max(clusters, 0);
        }
      }
    }
    cudaGetLastError();  // a refused query answers 0, not an error of a later call
    return c;
  });
}

int resident_blocks_per_sm(const void* kernel, int threads, int smem) {
  return cached_occupancy(kernel, 0, threads, smem, [&](int) {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads,
                                                      static_cast<size_t>(smem)) != cudaSuccess) {
      blocks = 0;
    }
    return blocks > 0 ? blocks : 1;
  });
}

void stream_wait(cudaStream_t producer, cudaStream_t consumer) {
  if (producer == consumer) return;
  cudaEvent_t event;
  FASTGEMM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  cudaError_t err = cudaEventRecord(event, producer);
  if (err == cudaSuccess) err = cudaStreamWaitEvent(consumer, event, 0);
  cudaEventDestroy(event);  // safe: destruction is deferred until the event completes
  cuda_check(err, "stream_wait");
}

}  // namespace fastgemm
