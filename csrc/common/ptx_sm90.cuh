// ptx_sm90.cuh — the Hopper-only PTX of fastgemm (sm_90a): wgmma, mbarrier and the TMA
// (cp.async.bulk.tensor). Included only by csrc/hopper/*.cu, which are compiled for sm_90a alone.
#pragma once
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/ptx.cuh"

namespace fastgemm::ptx {

// --- mbarrier -------------------------------------------------------------------------------------
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(arrivals)
               : "memory");
}
// Makes barrier initialisation visible to the async proxy (the TMA unit) before first use.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` of transactions (the TMA copies) the phase must await.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// Spin until the phase with parity `phase` has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t phase) {
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(smem_addr(bar)),
      "r"(phase)
      : "memory");
}

// Thread-block clusters (rank, barrier, distributed shared memory loads): common/ptx.cuh.

// One arrival on the mbarrier at `bar`'s offset in the shared memory of cluster rank `cta`.
// Default (CTA-scope) semantics: the consumers signal that their reads are done (wgmma.wait_group
// has retired them), which publishes no writes; a cluster-scope release would put a GPU-wide
// memory barrier (MEMBAR.ALL.GPU) in front of every arrival.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
}

// --- TMA: a 2-D box of a tensor map into shared memory, completing on an mbarrier ---------------
// (c0, c1) are element coordinates: c0 along the contiguous dimension. Out-of-bounds elements
// are written as zeros and still count towards the transaction bytes.
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const void* tensor_map, uint64_t* bar,
                                            int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_addr(smem_dst)),
      "l"(tensor_map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

// The same box written to the same shared-memory offset of every CTA of the cluster in
// `cta_mask` (bit r = cluster rank r); each destination's mbarrier at `bar`'s offset receives the
// transaction bytes of its copy.
__device__ __forceinline__ void tma_load_2d_multicast(void* smem_dst, const void* tensor_map,
                                                      uint64_t* bar, int c0, int c1,
                                                      uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_addr(smem_dst)),
      "l"(tensor_map), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
}

// TMA store of a 2-D box from shared memory (clipped at the tensor's edges), as a bulk group.
__device__ __forceinline__ void tma_store_2d(const void* tensor_map, const void* smem_src, int c0,
                                             int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          tensor_map),
      "r"(smem_addr(smem_src)), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Wait until at most N bulk groups still read their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Wait until at most N bulk groups are still in flight (their global writes done).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
// Ordinary shared-memory stores made visible to the async proxy (the TMA unit) that reads next.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// A barrier among `threads` threads (a multiple of 32) under hardware barrier `id` (1..15; 0 is
// __syncthreads).
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// stmatrix: four 8x8 16-bit matrices from registers (mma accumulator layout, two values per
// register) to shared memory; lane l gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                            uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// --- wgmma ------------------------------------------------------------------------------------------
// Shared-memory matrix descriptor (PTX ISA "matrix descriptor"): start address, leading and
// stride byte offsets (all >> 4) and the swizzle mode (1 = 128-byte swizzle) in bits 62-63.
__device__ __forceinline__ uint64_t wgmma_desc_sw128(uint32_t smem_address, uint32_t lbo_bytes,
                                                     uint32_t sbo_bytes) {
  return uint64_t((smem_address & 0x3FFFF) >> 4) | (uint64_t((lbo_bytes >> 4) & 0x3FFF) << 16) |
         (uint64_t((sbo_bytes >> 4) & 0x3FFF) << 32) | (uint64_t(1) << 62);
}
// Orders register accesses to the accumulators before the warpgroup's next wgmma.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads/writes across an in-flight wgmma.
template <int R>
__device__ __forceinline__ void fence_registers(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Warpgroup register reallocation (sm_90a): producers give registers back, consumers take them.
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// D (64xN, fp32, N/2 registers per thread) = A (64x16) * B (16xN) + (accumulate ? D : 0), both
// operands read from shared memory through descriptors. With accumulate false (a tile's first
// k-step) D's old contents are ignored, so nothing has to zero the accumulators first.
// trans_a / trans_b select each operand's major-ness (0 = K-major, 1 = M/N-major); they are
// immediates of the instruction, so the four combinations are four asm bodies.
// Accumulator layout: warp w of the warpgroup owns rows 16w..16w+15; lane l holds, for each n8
// block j, d[4j + 0..1] at row 16w + l/4, columns 8j + 2(l%4) + 0..1 and d[4j + 2..3] at row
// 16w + l/4 + 8.
template <int N, typename T>
__device__ __forceinline__ void wgmma_m64k16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
                                             int trans_a, int trans_b, bool accumulate = true);

// One specialisation per (N, element type); the operand lists of each N are spelled out once.
#define FASTGEMM_WGMMA_BODY(N, PTXT, TA, TB)                                                   \
  asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, %" FASTGEMM_WGMMA_SCALE_D##N ", 0;\n"      \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTXT "." PTXT " "            \
               "{" FASTGEMM_WGMMA_D##N "}, %" FASTGEMM_WGMMA_DESC_A##N ", %"                  \
               FASTGEMM_WGMMA_DESC_B##N ", acc, 1, 1, " #TA ", " #TB ";\n}\n"                 \
               : FASTGEMM_WGMMA_OUT##N                                                          \
               : "l"(desc_a), "l"(desc_b), "r"(int(accumulate)))
#define FASTGEMM_WGMMA_SPECIALIZATION(N, T, PTXT)                                               \
  template <>                                                                                   \
  __device__ __forceinline__ void wgmma_m64k16<N, T>(float (&d)[N / 2], uint64_t desc_a,        \
                                                     uint64_t desc_b, int trans_a, int trans_b,   \
                                                     bool accumulate) {                           \
    if (trans_a) {                                                                              \
      if (trans_b) FASTGEMM_WGMMA_BODY(N, PTXT, 1, 1); else FASTGEMM_WGMMA_BODY(N, PTXT, 1, 0); \
    } else {                                                                                    \
      if (trans_b) FASTGEMM_WGMMA_BODY(N, PTXT, 0, 1); else FASTGEMM_WGMMA_BODY(N, PTXT, 0, 0); \
    }                                                                                           \
  }

#define FASTGEMM_WGMMA_D64 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define FASTGEMM_WGMMA_DESC_A64 "32"
#define FASTGEMM_WGMMA_DESC_B64 "33"
#define FASTGEMM_WGMMA_SCALE_D64 "34"
#define FASTGEMM_WGMMA_OUT64 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define FASTGEMM_WGMMA_D128 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define FASTGEMM_WGMMA_DESC_A128 "64"
#define FASTGEMM_WGMMA_DESC_B128 "65"
#define FASTGEMM_WGMMA_SCALE_D128 "66"
#define FASTGEMM_WGMMA_OUT128 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define FASTGEMM_WGMMA_D192 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define FASTGEMM_WGMMA_DESC_A192 "96"
#define FASTGEMM_WGMMA_DESC_B192 "97"
#define FASTGEMM_WGMMA_SCALE_D192 "98"
#define FASTGEMM_WGMMA_OUT192 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define FASTGEMM_WGMMA_D256 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define FASTGEMM_WGMMA_DESC_A256 "128"
#define FASTGEMM_WGMMA_DESC_B256 "129"
#define FASTGEMM_WGMMA_SCALE_D256 "130"
#define FASTGEMM_WGMMA_OUT256 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
// T = float: fp32 operands read as tf32, one m64nNk8 step (8 k of 4 bytes: the same 32 bytes of a
// swizzled row as a k16 step of 16-bit elements). tf32 wgmma reads only K-major operands (no
// transpose immediates): trans_a and trans_b must be 0, which the tf32 launchers guarantee.
#define FASTGEMM_WGMMA_TF32_SPECIALIZATION(N)                                                   \
  template <>                                                                                   \
  __device__ __forceinline__ void wgmma_m64k16<N, float>(float (&d)[N / 2], uint64_t desc_a,    \
                                                         uint64_t desc_b, int, int,             \
                                                         bool accumulate) {                     \
    asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, %" FASTGEMM_WGMMA_SCALE_D##N ", 0;\n"  \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 "                    \
                 "{" FASTGEMM_WGMMA_D##N "}, %" FASTGEMM_WGMMA_DESC_A##N ", %"                \
                 FASTGEMM_WGMMA_DESC_B##N ", acc, 1, 1;\n}\n"                                \
                 : FASTGEMM_WGMMA_OUT##N                                                        \
                 : "l"(desc_a), "l"(desc_b), "r"(int(accumulate)));                           \
  }
// D (64xN, fp32) = A (64x8, tf32, in registers) * B (8xN, tf32, K-major in shared memory) +
// (accumulate ? D : 0). A's fragment: warp w of the warpgroup holds rows 16w..16w+15; lane l holds
// a[0] at row 16w + l/4, column l%4, a[1] eight rows below it, and a[2], a[3] the same two rows
// at column l%4 + 4 (fp32 bit patterns, of which the tensor cores read the tf32 part). The
// registers are read asynchronously: they must keep their values until the wgmma is waited for.
template <int N>
__device__ __forceinline__ void wgmma_m64k8_tf32_rs(float (&d)[N / 2], const uint32_t (&a)[4],
                                                    uint64_t desc_b, bool accumulate);
#define FASTGEMM_WGMMA_TF32_RS_SPECIALIZATION(N, A0, DB, SD)                                    \
  template <>                                                                                   \
  __device__ __forceinline__ void wgmma_m64k8_tf32_rs<N>(float (&d)[N / 2],                     \
                                                         const uint32_t (&a)[4],                \
                                                         uint64_t desc_b, bool accumulate) {    \
    asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, %" SD ", 0;\n"                         \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 "                    \
                 "{" FASTGEMM_WGMMA_D##N "}, {%" A0 "}, %" DB ", acc, 1, 1;\n}\n"            \
                 : FASTGEMM_WGMMA_OUT##N                                                        \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),                   \
                   "r"(int(accumulate)));                                                       \
  }
FASTGEMM_WGMMA_TF32_RS_SPECIALIZATION(128, "64, %65, %66, %67", "68", "69")
FASTGEMM_WGMMA_TF32_RS_SPECIALIZATION(256, "128, %129, %130, %131", "132", "133")
#undef FASTGEMM_WGMMA_TF32_RS_SPECIALIZATION
FASTGEMM_WGMMA_SPECIALIZATION(64, __half, "f16")
FASTGEMM_WGMMA_SPECIALIZATION(64, __nv_bfloat16, "bf16")
FASTGEMM_WGMMA_SPECIALIZATION(128, __half, "f16")
FASTGEMM_WGMMA_SPECIALIZATION(128, __nv_bfloat16, "bf16")
FASTGEMM_WGMMA_SPECIALIZATION(192, __half, "f16")
FASTGEMM_WGMMA_SPECIALIZATION(192, __nv_bfloat16, "bf16")
FASTGEMM_WGMMA_SPECIALIZATION(256, __half, "f16")
FASTGEMM_WGMMA_SPECIALIZATION(256, __nv_bfloat16, "bf16")
FASTGEMM_WGMMA_TF32_SPECIALIZATION(128)
FASTGEMM_WGMMA_TF32_SPECIALIZATION(256)
#undef FASTGEMM_WGMMA_TF32_SPECIALIZATION
#undef FASTGEMM_WGMMA_SPECIALIZATION
#undef FASTGEMM_WGMMA_BODY

}  // namespace fastgemm::ptx
