// hopper/tf32.cuh — fp32 GEMM on the tensor cores: an operand that the tensor cores cannot read
// in place packed into tf32 planes by a small kernel, then a wgmma kernel (tf32 products, fp32
// accumulators) over the operands. sgemm_v13 (tf32) and sgemm_v14 (3xTF32) are this part's
// persistent body with one or three planes, sgemm_v22 is v13 reading an MN-major A through
// registers; sgemm_v23 and v24 run split_gemm.cuh over v22's and v14's operands (rungs.h: S13,
// S14, S22, S23, S24).
//
// Packing. An operand X (rows x K: A as M x K, B as N x K, either layout) becomes a K-major
// buffer of `rows` rows; row r is a run of 32-element k-chunks, and chunk c holds PLANES planes
// of the elements k = 32c .. 32c + 31 (zeros past K), 32 floats each:
//   PLANES = 1 (tf32)   t(x): x truncated to tf32 (its 13 low mantissa bits cleared), which is
//                       what the tensor cores read of an fp32 value;
//   PLANES = 3 (3xTF32) A: hi(x), fin(x), lo(x)    B: hi(x), lo(x), fin(x)
// with hi = x rounded to the nearest tf32, lo = tf32(x - hi) (x - hi is exact in fp32), fin = hi
// where x is finite and 0 elsewhere, lo = 0 where x is not finite. A plain tf32 GEMM over the
// packed operands, with K' = PLANES * 32 * chunks, then sums chunk by chunk
//   hi_a hi_b + fin_a lo_b + lo_a fin_b  =  a b  - lo_a lo_b - (tf32 rounding of lo_a, lo_b),
// i.e. a relative error of ~2^-22 per product (fp32 rounding is 2^-24), with the three products
// of 3xTF32 and no change to the mainloop's copies. 3xTF32 also adds each chunk's products
// into the accumulators in round-to-nearest fp32 (Cfg::PROMOTE): the tensor cores' own accumulation
// drifts over a long K (its error keeps one sign), well above fp32's. Inf and NaN reach C only through hi_a hi_b, as IEEE
// arithmetic gives them; the correction products never see them (no inf * 0 = NaN from a zero
// lo). A finite x whose rounding would overflow keeps its truncation as hi.
//
// Contract of the launcher: the packed buffers are stream-ordered temporaries (cudaMallocAsync on
// the call's stream, released with cudaFreeAsync once the GEMM is queued), so a CUDA graph
// capture turns them into graph memory nodes. PLANES = 1 reads an operand in place where it is
// already K-major (row-major A, column-major B) and 16-byte aligned: the tensor cores truncate it
// exactly as t(x) does; A_REGS also reads an aligned MN-major A in place (through registers).
// What limits it: the packing pass reads each operand once and writes PLANES copies (memory
// traffic that a fused split in the consumer warpgroups would avoid), and the register epilogue.
#pragma once
#include <cstdint>
#include <utility>

#include "hopper/persistent.cuh"

namespace fastgemm::hopper {

constexpr int PACK_K = 32;  // elements of a k-chunk: one 128-byte swizzled row of fp32

__device__ __forceinline__ float tf32_round(float x) {  // to the nearest tf32, ties away
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}
__device__ __forceinline__ float tf32_truncate(float x) {
  return __uint_as_float(__float_as_uint(x) & 0xffffe000u);
}

// One block per 32 rows and (grid-stride) 32-element k-chunk: the chunk is read through shared
// memory along whichever of X's strides is 1 (rs: rows, ks: k), and written as PLANES rows of
// 32 floats per row of X. B_ORDER: the planes in B's order (hi, lo, fin).
template <int PLANES, bool B_ORDER>
__global__ void __launch_bounds__(256) pack_tf32_kernel(const float* __restrict__ X, int64_t rows,
                                                        int64_t K, int64_t rs, int64_t ks,
                                                        float* __restrict__ out, int64_t ld) {
  __shared__ float tile[PACK_K][PACK_K + 1];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const int64_t r0 = int64_t(blockIdx.x) * PACK_K;
  const int64_t chunks = (K + PACK_K - 1) / PACK_K;
  for (int64_t c = blockIdx.y; c < chunks; c += gridDim.y) {
    const int64_t k0 = c * PACK_K;
#pragma unroll
    for (int i = ty; i < PACK_K; i += 8) {
      if (ks == 1) {  // rows contiguous along k: lanes walk k
        const int64_t r = r0 + i, k = k0 + tx;
        tile[i][tx] = r < rows && k < K ? X[r * rs + k] : 0.0f;
      } else {        // columns contiguous along rows: lanes walk rows
        const int64_t r = r0 + tx, k = k0 + i;
        tile[tx][i] = r < rows && k < K ? X[r + k * ks] : 0.0f;
      }
    }
    __syncthreads();
#pragma unroll
    for (int i = ty; i < PACK_K; i += 8) {
      const int64_t r = r0 + i;
      if (r >= rows) continue;
      const float x = tile[i][tx];
      float* dst = out + r * ld + c * PLANES * PACK_K + tx;
      if constexpr (PLANES == 1) {
        dst[0] = tf32_truncate(x);
      } else {
        const bool finite = isfinite(x);
        float hi = tf32_round(x);
        if (finite && isinf(hi)) hi = tf32_truncate(x);
        const float lo = finite ? tf32_round(x - hi) : 0.0f;
        const float fin = finite ? hi : 0.0f;
        dst[0] = hi;
        dst[PACK_K] = B_ORDER ? lo : fin;
        dst[2 * PACK_K] = B_ORDER ? fin : lo;
      }
    }
    __syncthreads();
  }
}

// A warpgroup's 64 x N accumulators at (row0, col0) of a column-major C (C(i, j) = C[j * ldc +
// i]): a problem run as its transpose. Eight lanes store 32 consecutive bytes of a column.
template <int N>
__device__ __forceinline__ void store_acc_transposed(const float (&acc)[N / 2], float* C,
                                                     int64_t ldc, int64_t M, int64_t Ncols,
                                                     int64_t row0, int64_t col0, float alpha,
                                                     float beta) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {  // acc[i]: n8 block i / 4, row 8 lower for i % 4 >= 2
    const int64_t row = row0 + warp * 16 + lane / 4 + 8 * ((i % 4) / 2);
    const int64_t col = col0 + 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    if (row < M && col < Ncols) {
      float* p = C + col * ldc + row;
      *p = beta != 0.0f ? fmaf(beta, *p, alpha * acc[i]) : alpha * acc[i];
    }
  }
}

// The kernel body: a persistent Cfg rung (ring, grouped order, register epilogue), B K-major, A
// K-major or (through registers, Cfg::A_REGS) MN-major; C fp32, column-major when C_COL.
template <typename Cfg, bool A_KMAJOR, bool C_COL = false>
__device__ __forceinline__ void tf32_gemm(const CUtensorMap* tma_a, const CUtensorMap* tma_b,
                                          float* C, int64_t M, int64_t N, int64_t K, int64_t ldc,
                                          float alpha, float beta) {
  static_assert(A_KMAJOR || Cfg::A_REGS, "tf32 wgmma reads a shared-memory A K-major only");
  using RingT = RingOf<Cfg>;
  const RingT ring = make_ring<RingT>();
  __syncthreads();
  persistent_gemm<float, Cfg::PDL, A_KMAJOR, true, PersistentOf<Cfg>, Cfg::PROMOTE>(
      ring, tma_a, tma_b, M, N, K, OwnBuffers<RingT>{},
      [&](float(&acc)[Cfg::BN / 2], int64_t row0, int64_t col0, int, unsigned char*) {
        if constexpr (C_COL) {
          store_acc_transposed<Cfg::BN>(acc, C, ldc, M, N, row0, col0, alpha, beta);
        } else {
          store_acc<Cfg::BN>(acc, C, ldc, M, N, row0, col0, alpha, beta);
        }
      });
}

// Host: pack what needs packing into one stream-ordered temporary, then launch the kernel that
// kernel_for(a_kmajor, c_col_major) returns (the rung's instantiation for float) over the
// operands. Cfg::A_REGS (A through registers, one plane): an MN-major A is read in place, and a
// row-major A with a row-major B runs as the transposed problem, C^T = B^T A^T (B^T MN-major,
// A^T K-major, C stored column-major); only a column-major A with a row-major B packs one (and
// any operand whose rows are not 16-byte aligned is packed).
template <typename Cfg, typename KernelFor>
void launch_tf32(const GemmArgs& args, const char* name, KernelFor kernel_for) {
  constexpr int PLANES = Cfg::PLANES;
  static_assert(!Cfg::A_REGS || PLANES == 1, "A through registers: one plane");
  const int64_t chunks = ceil_div(args.K, PACK_K), ld = PLANES * PACK_K * chunks;
  auto in_place = [](const void* p, int64_t lead) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && lead % 4 == 0;
  };
  GemmArgs a = args;
  if (Cfg::A_REGS && !a.a_col_major && !a.b_col_major) {
    std::swap(a.M, a.N), std::swap(a.A, a.B), std::swap(a.lda, a.ldb);
    const bool a_col = a.a_col_major;
    a.a_col_major = !a.b_col_major, a.b_col_major = !a_col, a.c_col_major = !a.c_col_major;
  }
  const bool pack_a = PLANES > 1 || (a.a_col_major && !Cfg::A_REGS) || !in_place(a.A, a.lda);
  const bool pack_b = PLANES > 1 || !a.b_col_major || !in_place(a.B, a.ldb);
  const size_t a_floats = pack_a ? size_t(a.M * ld) : 0, b_floats = pack_b ? size_t(a.N * ld) : 0;
  struct Temp {  // released (stream-ordered) however the launch ends
    void* p = nullptr;
    cudaStream_t s;
    ~Temp() {
      if (p) cudaFreeAsync(p, s);
    }
  } temp{nullptr, a.stream};
  if (a_floats + b_floats) {
    cuda_check(cudaMallocAsync(&temp.p, (a_floats + b_floats) * sizeof(float), a.stream), name);
  }
  float* const pa = static_cast<float*>(temp.p);
  float* const pb = pa + a_floats;
  GemmArgs p = a;
  p.K = PLANES == 1 ? a.K : ld;  // tf32: TMA reads zeros past K in place and packed alike
  p.a_col_major = a.a_col_major && !pack_a, p.b_col_major = true;
  auto pack = [&](const void* X, int64_t rows, int64_t rs, int64_t ks, float* out, bool b) {
    const dim3 grid(static_cast<unsigned>(ceil_div(rows, PACK_K)),
                    static_cast<unsigned>(chunks < 65535 ? chunks : 65535));
    const float* x = static_cast<const float*>(X);
    if constexpr (PLANES == 1) {
      pack_tf32_kernel<1, false><<<grid, 256, 0, a.stream>>>(x, rows, a.K, rs, ks, out, ld);
    } else if (b) {
      pack_tf32_kernel<PLANES, true><<<grid, 256, 0, a.stream>>>(x, rows, a.K, rs, ks, out, ld);
    } else {
      pack_tf32_kernel<PLANES, false><<<grid, 256, 0, a.stream>>>(x, rows, a.K, rs, ks, out, ld);
    }
    cuda_check(cudaGetLastError(), name);
  };
  if (pack_a) {  // A(i, k): row-major A[i * lda + k], column-major A[k * lda + i]
    pack(a.A, a.M, a.a_col_major ? 1 : a.lda, a.a_col_major ? a.lda : 1, pa, false);
    p.A = pa, p.lda = ld;
  }
  if (pack_b) {  // B as N x K: B(k, j) row-major B[k * ldb + j], column-major B[j * ldb + k]
    pack(a.B, a.N, a.b_col_major ? a.ldb : 1, a.b_col_major ? 1 : a.ldb, pb, true);
    p.B = pb, p.ldb = ld;
  }
  launch<Cfg, float>(p, name, [&](auto a_kmajor, auto) { return kernel_for(a_kmajor, p.c_col_major); });
}

}  // namespace fastgemm::hopper

// A tf32 rung's host side, after its kernel (FASTGEMM_HOPPER_KERNEL, instantiated for float
// with B K-major, and A K-major unless the rung reads an MN-major A through registers,
// Cfg::A_REGS): its fp32 entry point and shared-memory figure.
#define FASTGEMM_TF32_ENTRY_POINTS(NAME, CFG)                                                   \
  namespace fastgemm {                                                                          \
  void NAME(const GemmArgs& a) {                                                                \
    hopper::launch_tf32<hopper::CFG>(a, #NAME, [](auto a_kmajor, bool) {                         \
      return NAME##_kernel<float, decltype(a_kmajor)::value || !hopper::CFG::A_REGS, true>;     \
    });                                                                                         \
  }                                                                                             \
  int NAME##_smem() { return hopper::smem_bytes<hopper::CFG>(); }                               \
  }
