// ptx.cuh — every inline PTX instruction of the portable (sm_75+) kernels, as typed wrappers.
// Features newer than sm_75 compile to a trap on older targets: the registry's min_cc keeps such
// kernels from ever being launched there, and the trap makes a bypass loud instead of wrong. The
// cluster wrappers are the exception: before sm_90 a block is a cluster of one (their fallbacks),
// and split-K launches, the only ones that form clusters, trap there instead (split_k.cuh).
#pragma once
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace fastgemm::ptx {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cp.async.cg: 16 bytes global -> shared, bypassing L1. Only the first `src_bytes` (0..16) are
// read; the rest of the 16 destination bytes are zero-filled (predicated tails without branches).
// A src_bytes the compiler cannot prove to be 16 makes the zero-filling form (LDGSTS...ZFILL),
// whose lanes do not share sectors: a warp reading 16-byte chunks two to a 32-byte sector asks
// L2 for twice the sectors. Whole chunks go through the form below.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, int src_bytes) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem_dst)),
               "l"(gmem_src), "r"(src_bytes)
               : "memory");
#else
  __trap();
#endif
}
// cp.async.cg of a whole 16-byte chunk.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem_dst)),
               "l"(gmem_src)
               : "memory");
#else
  __trap();
#endif
}

// cp.async.ca: 4 bytes global -> shared (cached in L1); `src_bytes` 0 writes a zero instead.
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src, int src_bytes) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(smem_dst)),
               "l"(gmem_src), "r"(src_bytes)
               : "memory");
#else
  __trap();
#endif
}

// Close the group of cp.async issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Wait until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// --- thread-block clusters (sm_90+). On older targets every block is a cluster of one: rank 0,
// size 1, the barrier is the block's and the "remote" shared memory is the block's own.
__device__ __forceinline__ uint32_t cluster_ctarank() {
#if __CUDA_ARCH__ >= 900
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
#else
  return 0;
#endif
}
__device__ __forceinline__ uint32_t cluster_nctarank() {
#if __CUDA_ARCH__ >= 900
  uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
  return n;
#else
  return 1;
#endif
}
// Every thread of every CTA of the cluster arrives and waits (release / acquire): what a CTA
// wrote to its shared memory before the barrier is visible to its peers after it, and no CTA
// leaves while a peer may still read or signal it.
__device__ __forceinline__ void cluster_sync() {
#if __CUDA_ARCH__ >= 900
  __syncwarp();  // .aligned: the warp arrives converged
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
#else
  __syncthreads();
#endif
}
// The 16 bytes at `local`'s offset in the shared memory of cluster rank `cta` (4 floats).
__device__ __forceinline__ float4 ld_cluster_f32x4(const float* local, uint32_t cta) {
#if __CUDA_ARCH__ >= 900
  float4 v;
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %4, %5;\n"
      "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(smem_addr(local)), "r"(cta)
      : "memory");
  return v;
#else
  return *reinterpret_cast<const float4*>(local);
#endif
}

// --- a flag in global memory between the blocks of one grid (sm_70+): a release store
// publishes the writes that precede it (the writer's, and those ordered before it by a
// barrier); an acquire load orders the reads that follow it after them.
__device__ __forceinline__ void st_release_gpu(int* flag, int value) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}
__device__ __forceinline__ int ld_acquire_gpu(const int* flag) {
  int value;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

// --- programmatic dependent launch (sm_90+), for a kernel launched with programmatic stream
// serialisation: wait until the previous kernel of the stream has completed and its memory is
// visible; let the next kernel be launched (its blocks start as this kernel's blocks exit).
// Before sm_90 there is no such launch, and stream order alone holds: both are no-ops.
__device__ __forceinline__ void griddepcontrol_wait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void griddepcontrol_launch_dependents() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// --- ldmatrix (sm_75+): 8x8 matrices of 16-bit elements from shared memory into the fragment
// layout of mma.sync. Lane l supplies the address of row (l % 8) of matrix (l / 8); each lane gets
// one 32-bit register per matrix (two adjacent elements of one row, or of one column with .trans).

// D: 1 register; lanes 0-7 address the rows.
__device__ __forceinline__ void ldmatrix_x1(uint32_t (&d)[1], uint32_t addr, bool trans) {
  if (trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(d[0]) : "r"(addr));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(d[0]) : "r"(addr));
  }
}

// D: 2 registers (matrices 0, 1); lanes 0-15 address the rows.
__device__ __forceinline__ void ldmatrix_x2(uint32_t (&d)[2], uint32_t addr, bool trans) {
  if (trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(d[0]), "=r"(d[1]) : "r"(addr));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(d[0]), "=r"(d[1]) : "r"(addr));
  }
}

// D: 4 registers (matrices 0-3); all 32 lanes address rows.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&d)[4], uint32_t addr, bool trans) {
  if (trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(addr));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(addr));
  }
}

// --- mma.sync m16n8k16, fp32 accumulators: D = A (16x16, row) * B (16x8, col) + D.
// A: 4 registers {a0, a1, a2, a3} = rows (g, g+8) x k (2t..2t+1) for k-halves 0 and 1;
// B: 2 registers {b0, b1} = k (2t..2t+1) x column g, k-halves 0 and 1; D: 4 floats, rows g and
// g+8, columns 2t, 2t+1 (g = lane / 4, t = lane % 4). On sm_75 (fp16 only) the same product is
// two m16n8k8 instructions over the two k-halves: the fragments are laid out identically.
// Not volatile: the mma is a pure function of its registers, and the compiler must be free to
// interleave it with the (volatile) ldmatrix of the next k-step.
template <typename T>
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const uint32_t (&a)[4],
                                            const uint32_t (&b)[2]);

template <>
__device__ __forceinline__ void mma_16x8x16<__half>(float (&d)[4], const uint32_t (&a)[4],
                                                    const uint32_t (&b)[2]) {
#if __CUDA_ARCH__ >= 800
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif __CUDA_ARCH__ >= 750
  asm(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]));
  asm(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[2]), "r"(a[3]), "r"(b[1]));
#else
  __trap();
#endif
}

template <>
__device__ __forceinline__ void mma_16x8x16<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4],
                                                           const uint32_t (&b)[2]) {
#if __CUDA_ARCH__ >= 800
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();  // bf16 tensor cores start with sm_80; the registry never launches this below it
#endif
}

}  // namespace fastgemm::ptx
