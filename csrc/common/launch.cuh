// launch.cuh — host-side helpers shared by every launcher: error checks, grid arithmetic.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <cuda_runtime.h>

#include "common/gemm_args.h"
#include "common/split_model.h"

namespace fastgemm {

inline void cuda_check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(err) + " (" +
                             cudaGetErrorString(err) + ")");
  }
}
#define FASTGEMM_CUDA_CHECK(expr) ::fastgemm::cuda_check((expr), #expr)
// After every <<<>>>: launch-configuration errors surface here, before the call returns.
#define FASTGEMM_CHECK_LAUNCH(name) ::fastgemm::cuda_check(cudaGetLastError(), name " launch")

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// --- launching -----------------------------------------------------------------------------------
// How a kernel is queued: grid, block, dynamic shared memory, stream, and two sm_90 launch
// attributes: programmatic dependent launch (`pdl`: the kernel runs griddepcontrol.wait before it
// touches global memory, so the driver may stage it while the previous kernel of the stream
// runs) and a cluster shape (z blocks per cluster; 1: none, or the kernel's own
// __cluster_dims__), with the load-balancing cluster scheduling policy where `balance` (the
// device may then hold more clusters of some sizes at once: common/split_model.h).
struct Launch {
  dim3 grid, block;
  int smem = 0;
  cudaStream_t stream = nullptr;
  bool pdl = false;
  unsigned cluster_z = 1;
  bool balance = false;
};
// Queues kernel(*args[0], *args[1], ...) with the driver's cuLaunchKernelEx on the kernel's
// function in the current context (cuKernelGetFunction of its context-independent handle, once
// per kernel and context; the handle itself where there is no context yet, which costs the
// driver a search per launch). The runtime's launch (<<<>>>, cudaLaunchKernelEx) does the same
// with a layer more of host work per launch (benchmarks/launch_cost.cu). Throws
// std::runtime_error naming `name` when the launch fails.
void launch_kernel(const void* kernel, const Launch& l, void** args, const char* name);

// The typed form: the arguments are converted to the kernel's parameter types, as <<<>>> does.
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), const Launch& l, const char* name, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "one argument per kernel parameter");
  std::tuple<std::remove_cv_t<Params>...> values(
      static_cast<std::remove_cv_t<Params>>(std::forward<Args>(args))...);
  std::apply(
      [&](auto&... v) {
        void* pointers[] = {static_cast<void*>(&v)...};
        launch_kernel(reinterpret_cast<const void*>(kernel), l, pointers, name);
      },
      values);
}

// Grid for a tiled kernel: output tiles along x (2^31-1 limit) as columns, y as rows (65535 limit).
inline dim3 tile_grid(const GemmArgs& a, int block_m, int block_n, const char* name) {
  const int64_t tiles_n = ceil_div(a.N, block_n), tiles_m = ceil_div(a.M, block_m);
  if (tiles_m > 65535 || tiles_n > 2147483647) {
    throw std::runtime_error(std::string(name) + ": output needs " + std::to_string(tiles_m) + "x" +
                             std::to_string(tiles_n) + " tiles, more than a grid can hold");
  }
  return dim3(static_cast<unsigned>(tiles_n), static_cast<unsigned>(tiles_m));
}

// Opt a kernel into more than 48 KiB of dynamic shared memory: once per kernel, size and device
// (the attribute belongs to the device's context), so a repeated launch pays a lookup, not a
// driver call.
void set_smem_once(const void* kernel, int bytes);
// Clusters of `split` blocks of `kernel` (with `threads` and `smem`) that can be resident at once
// on the current device; 0 when this kernel cannot run in clusters here (no cluster launch on the
// device, or its code was compiled for an architecture before sm_90). Queried once per kernel,
// device and shape of launch, then cached (the kernel's shared-memory attribute must be set).
int resident_split_clusters(const void* kernel, int split, int threads, int smem);
// How many clusters of 2..8 blocks `device` holds at once at 1..4 blocks per SM, under either
// cluster scheduling policy (split_model.h): asked once per device of the occupancy calculator,
// with an empty kernel whose shared memory lets an SM hold just that many blocks.
const ClusterCapacity& cluster_capacity(int device);
// Blocks of `kernel` (with `threads` and `smem`) one SM holds at once on the current device (at
// least 1), queried once per kernel, device and shape of launch like resident_split_clusters.
int resident_blocks_per_sm(const void* kernel, int threads, int smem);

template <typename Kernel>
inline void set_smem(Kernel kernel, int bytes) {
  if (bytes > 48 * 1024) set_smem_once(reinterpret_cast<const void*>(kernel), bytes);
}

// --- layout dispatch -----------------------------------------------------------------------------
// Calls f(std::bool_constant<a_col_major>, std::bool_constant<b_col_major>): one kernel
// instantiation per operand layout, so the inner loops carry no layout branches.
template <typename F>
void with_layouts(const GemmArgs& a, F&& f) {
  using T = std::true_type;
  using N = std::false_type;
  if (a.a_col_major) {
    a.b_col_major ? f(T{}, T{}) : f(T{}, N{});
  } else {
    a.b_col_major ? f(N{}, T{}) : f(N{}, N{});
  }
}

// The same, in the tensor-core kernels' terms: f(a_kmajor, b_kmajor), an operand being K-major
// when K is its contiguous dimension (row-major A, column-major B).
template <typename F>
void with_kmajor(const GemmArgs& a, F&& f) {
  with_layouts(a, [&](auto a_col, auto b_col) {
    f(std::bool_constant<!decltype(a_col)::value>{}, b_col);
  });
}

}  // namespace fastgemm
