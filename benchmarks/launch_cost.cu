// launch_cost.cu — the host cost of one kernel launch, the floor under every GEMM call: a C++
// loop of launches of an empty kernel (runtime <<<>>>, driver cuLaunchKernel, cudaLaunchKernelEx
// plain, with a cluster, with the PDL attribute, on a created stream) and of the small runtime
// calls a launch path makes. Best of 7 rounds.
//   nvcc -arch=sm_90 -O2 -o /tmp/launch_cost benchmarks/launch_cost.cu -lcuda && /tmp/launch_cost
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#include <chrono>
#include <cstdio>
#include <mutex>
__global__ void noop() {}
__global__ void noop12(const void* a, const void* b, void* c, long m, long n, long k, long lda, long ldb, long ldc, float al, float be, int x) {}
template <class F> double time_us(F f, int n = 20000) {
  for (int i = 0; i < 1000; ++i) f();
  cudaDeviceSynchronize();
  double best = 1e9;
  for (int r = 0; r < 7; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    auto t1 = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();
    best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  return best;
}
int main() {
  cudaFree(0);
  int dev = 0;
  CUfunction f0, f12;
  cudaGetFuncBySymbol(&f0, (const void*)noop);
  cudaGetFuncBySymbol(&f12, (const void*)noop12);
  const void* p = nullptr; long l = 64; float fl = 1.f; int x = 0;
  void* args[] = {&p, &p, &p, &l, &l, &l, &l, &l, &l, &fl, &fl, &x};
  printf("cudaGetDevice            %.3f us\n", time_us([&] { cudaGetDevice(&dev); }));
  printf("cudaGetLastError         %.3f us\n", time_us([&] { cudaGetLastError(); }));
  std::mutex mu;
  printf("mutex lock/unlock        %.3f us\n", time_us([&] { std::lock_guard<std::mutex> g(mu); }));
  printf("noop<<<>>>               %.3f us\n", time_us([&] { noop<<<1, 32>>>(); }, 5000));
  printf("noop12<<<>>>             %.3f us\n", time_us([&] { noop12<<<132, 384, 0>>>(p, p, nullptr, 64, 64, 64, 64, 64, 64, 1.f, 0.f, 0); }, 5000));
  cudaLaunchAttribute pdl[1]; pdl[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; pdl[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{}; cfg.gridDim = dim3(132); cfg.blockDim = dim3(384); cfg.attrs = pdl; cfg.numAttrs = 1;
  printf("noop12 LaunchKernelEx PDL %.3f us\n", time_us([&] { cudaLaunchKernelEx(&cfg, noop12, p, p, (void*)nullptr, 64L, 64L, 64L, 64L, 64L, 64L, 1.f, 0.f, 0); }, 5000));
  cudaLaunchConfig_t c0{}; c0.gridDim = dim3(132); c0.blockDim = dim3(384);
  printf("noop12 LaunchKernelEx none %.3f us\n", time_us([&] { cudaLaunchKernelEx(&c0, noop12, p, p, (void*)nullptr, 64L, 64L, 64L, 64L, 64L, 64L, 1.f, 0.f, 0); }, 5000));
  cudaLaunchAttribute cl[1]; cl[0].id = cudaLaunchAttributeClusterDimension; cl[0].val.clusterDim.x = 1; cl[0].val.clusterDim.y = 1; cl[0].val.clusterDim.z = 2;
  cudaLaunchConfig_t c2{}; c2.gridDim = dim3(66, 1, 2); c2.blockDim = dim3(384); c2.attrs = cl; c2.numAttrs = 1;
  printf("noop12 LaunchKernelEx clus2 %.3f us\n", time_us([&] { cudaLaunchKernelEx(&c2, noop12, p, p, (void*)nullptr, 64L, 64L, 64L, 64L, 64L, 64L, 1.f, 0.f, 0); }, 5000));
  cudaLaunchAttribute both[2] = {pdl[0], cl[0]};
  cudaLaunchConfig_t c3 = c2; c3.attrs = both; c3.numAttrs = 2;
  printf("noop12 LaunchKernelEx PDL+clus2 %.3f us\n", time_us([&] { cudaLaunchKernelEx(&c3, noop12, p, p, (void*)nullptr, 64L, 64L, 64L, 64L, 64L, 64L, 1.f, 0.f, 0); }, 5000));
  CUlaunchAttribute dpdl[2]; dpdl[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION; dpdl[0].value.programmaticStreamSerializationAllowed = 1;
  dpdl[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION; dpdl[1].value.clusterDim.x = 1; dpdl[1].value.clusterDim.y = 1; dpdl[1].value.clusterDim.z = 2;
  CUlaunchConfig dc{}; dc.gridDimX = 66; dc.gridDimY = 1; dc.gridDimZ = 2; dc.blockDimX = 384; dc.blockDimY = 1; dc.blockDimZ = 1; dc.attrs = dpdl; dc.numAttrs = 2;
  printf("cuLaunchKernelEx PDL+clus2 %.3f us\n", time_us([&] { cuLaunchKernelEx(&dc, f12, args, nullptr); }, 5000));
  printf("Ex PDL+clus2 + GetDevice + GetLastError %.3f us\n", time_us([&] { cudaGetDevice(&dev); cudaLaunchKernelEx(&c3, noop12, p, p, (void*)nullptr, 64L, 64L, 64L, 64L, 64L, 64L, 1.f, 0.f, 0); cudaGetLastError(); }, 5000));
  cudaStream_t st; cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking); c0.stream = st;
  printf("noop12 Ex none, own stream %.3f us\n", time_us([&] { cudaLaunchKernelEx(&c0, noop12, p, p, (void*)nullptr, 64L, 64L, 64L, 64L, 64L, 64L, 1.f, 0.f, 0); }, 5000));
  printf("noop12<<<>>> own stream    %.3f us\n", time_us([&] { noop12<<<132, 384, 0, st>>>(p, p, nullptr, 64, 64, 64, 64, 64, 64, 1.f, 0.f, 0); }, 5000));
  printf("cuLaunchKernel noop12     %.3f us\n", time_us([&] { cuLaunchKernel(f12, 132, 1, 1, 384, 1, 1, 0, nullptr, args, nullptr); }, 5000));
  printf("cuLaunchKernel noop       %.3f us\n", time_us([&] { cuLaunchKernel(f0, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr); }, 5000));
  return 0;
}
