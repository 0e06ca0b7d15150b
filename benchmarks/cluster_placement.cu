// cluster_placement.cu — where the blocks of a cluster launch land: the check behind the cluster
// split model (csrc/common/split_model.h), which assumes that a launch of at most capacity(S, n)
// clusters of S blocks (the occupancy calculator's answer when an SM may hold n blocks) runs in
// one round with at most n blocks on any SM.
//
// For n = 1..4, S = 2..8 and the default and load-balancing cluster policies: an empty-bodied
// 128-thread kernel with the shared memory that lets an SM hold n blocks is launched with exactly
// capacity clusters, then one more; each block records its SM (%smid) and start time
// (%globaltimer) and spins for 200 us, so that a block that starts more than 100 us after the
// first waited for a slot. Prints, per launch, the most blocks any SM held and the blocks that
// waited. Build and run on the GPU:
//
//   nvcc -arch=sm_90 -O2 -o /tmp/cluster_placement benchmarks/cluster_placement.cu
//   /tmp/cluster_placement
#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include <cuda_runtime.h>

__global__ void placement(int* sm, unsigned long long* start_ns, unsigned long long spin_ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  const int block = blockIdx.x + gridDim.x * blockIdx.z;
  if (threadIdx.x == 0) sm[block] = id, start_ns[block] = start;
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < spin_ns);
}

int main() {
  int per_sm = 0, reserved = 0, optin = 0;
  cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0);
  cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, 0);
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  cudaFuncSetAttribute(placement, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
  int* sm = nullptr;
  unsigned long long* start = nullptr;
  cudaMalloc(&sm, 1 << 20);
  cudaMalloc(&start, 1 << 21);
  for (int n = 1; n <= 4; ++n) {
    for (int s = 2; s <= 8; ++s) {
      for (int policy : {0, 2}) {
        cudaLaunchConfig_t config{};
        config.blockDim = dim3(128);
        config.dynamicSmemBytes = static_cast<size_t>(std::min(optin, per_sm / n - reserved));
        cudaLaunchAttribute attrs[2];
        attrs[0].id = cudaLaunchAttributeClusterDimension;
        attrs[0].val.clusterDim.x = 1, attrs[0].val.clusterDim.y = 1, attrs[0].val.clusterDim.z = s;
        attrs[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
        attrs[1].val.clusterSchedulingPolicyPreference = static_cast<cudaClusterSchedulingPolicy>(policy);
        config.attrs = attrs;
        config.numAttrs = 2;
        config.gridDim = dim3(1, 1, s);
        int capacity = 0;
        cudaOccupancyMaxActiveClusters(&capacity, placement, &config);
        std::printf("n=%d S=%d policy=%d capacity=%3d |", n, s, policy, capacity);
        for (int clusters : {capacity, capacity + 1}) {
          config.gridDim = dim3(clusters, 1, s);
          cudaLaunchKernelEx(&config, placement, sm, start, 200000ull);
          if (cudaDeviceSynchronize() != cudaSuccess) {
            std::printf(" launch failed\n");
            return 1;
          }
          const int blocks = clusters * s;
          std::vector<int> where(blocks);
          std::vector<unsigned long long> when(blocks);
          cudaMemcpy(where.data(), sm, blocks * sizeof(int), cudaMemcpyDeviceToHost);
          cudaMemcpy(when.data(), start, blocks * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
          unsigned long long first = ~0ull;
          for (unsigned long long t : when) first = std::min(first, t);
          int waited = 0, most = 0;
          std::map<int, int> per;
          for (int i = 0; i < blocks; ++i) {
            if (when[i] - first > 100000) {
              ++waited;
            } else {
              most = std::max(most, ++per[where[i]]);
            }
          }
          std::printf(" %3d clusters: at most %d a SM, %3d waited |", clusters, most, waited);
        }
        std::printf("\n");
      }
    }
  }
  return 0;
}
