// hgemm_v34_split_k_unaligned — v24 on a row-major B whose rows are not 16-byte aligned (an odd
// N, a view one element in), read in place: a branch of v24 for the padded path's problems.
//
// What changed since v24: how such a B reaches the ring. TMA needs a 16-byte aligned base, pitch
// and box start, so v24 (like every TMA rung) runs under-aligned operands on aligned copies (the
// padded path: at 127 x 4099 x 2053 the copy of B moves twice its 16 MiB). Here rows k = r, r + 8,
// ... of B, 8 pitches apart (a multiple of 16 bytes), are one tensor map each from their first row
// rounded down to 16 bytes (ResidueMaps, tensor_map.h); thread 0 copies a k-tile as 8
// unswizzled boxes 8 elements wider than the tile into a staging buffer, and the producer
// warpgroup's 128 threads, idle in v24, shift each row by its rounded-off elements into the
// swizzled stage with k in order (staged.cuh), while the next k-tile's boxes land in a second
// buffer. A goes by TMA as in v24 (K-major), on an aligned row-major copy where it is column-major
// or its rows are not aligned (M x K: small for the problems this is for); so does a column-major
// B. The ring drops to 4 stages for the staging buffers; C is stored element by element. The
// split, the wgmma consumers and the reduction are v24's.
// Why it pays: where B is row-major and under-aligned (a prefill or decode with odd sizes on
// row-major weights), the padded path's copy of it (read and written once, then read again by the
// GEMM) is gone: the GEMM reads it once.
// What limits it: the shift is a round trip of B through shared memory by the producer threads
// (LDS, funnel shifts, STS): about as many instructions again as v24's, more than the consumers'
// wgmma time per k-tile on full 128-row tiles; two staging buffers hide less latency than v24's
// ring (four measured no faster); 8 TMA copies per k-tile, each row one 16-byte chunk wider than
// it uses. A (and a column-major B) are copied, which costs what the padded path costs where they
// are large; a column-major A is transposed by an element-wise copy, slow for a large A. Element
// stores of C.
// Shapes: any M, N, K >= 1; 2-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/rungs.h"
#include "hopper/split_gemm.cuh"
#include "hopper/staged.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

template <typename T, bool B_KMAJOR>
__global__ void __launch_bounds__(V34::THREADS, V34::MIN_BLOCKS) hgemm_v34_split_k_unaligned_kernel(
    const __grid_constant__ ResidueMaps tma_a, const __grid_constant__ ResidueMaps tma_b, T* C,
    int64_t M, int64_t N, int64_t K, int64_t ldc, float alpha, float beta) {
  split_k_gemm<T, V34, true, B_KMAJOR, staged_full_arrivals<B_KMAJOR>(), false>(
      [&](const auto& ring, int m0, int n0, int first, int count) {
        produce_staged<B_KMAJOR, V34::STAGING>(ring, &tma_a, &tma_b, m0, n0, first, count, K);
      },
      C, M, N, K, ldc, alpha, beta);
}

// Host: A's map (on an aligned row-major copy in the stream's scratch where A is column-major or
// its rows are not aligned), B's residue maps (row-major) or map (column-major, on an aligned copy
// where need be), and v24's split launch.
template <typename T>
void hgemm_v34_split_k_unaligned_launch(const GemmArgs& a) {
  const char* name = "hgemm_v34_split_k_unaligned";
  using Cfg = V34;
  constexpr int threads = Cfg::THREADS, smem = smem_bytes<Cfg>();
  constexpr TmaElem elem = std::is_same_v<T, __nv_bfloat16> ? TmaElem::bf16 : TmaElem::f16;
  if (a.M > 2147483647 - Cfg::BM || a.N > 2147483647 - Cfg::BN || a.K > 2147483647 - BLOCK_K) {
    throw std::runtime_error(std::string(name) +
                             ": TMA coordinates are 32-bit; M, N and K must stay below 2^31");
  }
  const dim3 grid = SplitK<Cfg::BM, Cfg::BN>::grid(a, name);
  const bool b_kmajor = a.b_col_major;
  auto aligned = [](const void* p, int64_t ld) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (ld * 2) % 16 == 0;
  };
  const bool copy_a = a.a_col_major || !aligned(a.A, a.lda);
  const bool copy_b = b_kmajor && !aligned(a.B, a.ldb);
  const int64_t k8 = ceil_div(a.K, int64_t(8)) * 8;  // the copies' pitch
  const int64_t a_elems = copy_a ? a.M * k8 : 0, b_elems = copy_b ? a.N * k8 : 0;
  const int device = active_device();
  const Scratch scratch = stream_scratch(device, a.stream, 0, size_t(a_elems + b_elems) * 2);
  // An operand read K-major (rows of K elements: element (i, k) at p[i * rs + k * cs]) by its
  // own map, on a row-major copy if need be.
  auto kmajor_map = [&](const void* p, int64_t rows, int64_t rs, int64_t cs, bool copy, T* dst,
                        int box) {
    ResidueMaps m{};
    if (copy) {
      copy_strided(2, p, rows, a.K, rs, cs, dst, k8, a.stream);
      p = dst, rs = k8;
    }
    m.map[0] = make_tensor_map_2d(p, elem, a.K, rows, rs, BLOCK_K, box);
    return m;
  };
  T* const a_copy = static_cast<T*>(scratch.data);
  const ResidueMaps ma = a.a_col_major ? kmajor_map(a.A, a.M, 1, a.lda, true, a_copy, Cfg::BM)
                                       : kmajor_map(a.A, a.M, a.lda, 1, copy_a, a_copy, Cfg::BM);
  const ResidueMaps mb =
      b_kmajor ? kmajor_map(a.B, a.N, a.ldb, 1, copy_b, a_copy + a_elems, Cfg::BN)
               : make_residue_maps(a.B, elem, a.N, a.K, a.ldb, Cfg::BN + 8);
  auto run = [&](auto kernel) {
    set_smem(kernel, smem);
    const int split = split_count(reinterpret_cast<const void*>(kernel), threads, smem, grid.x,
                                  ceil_div(a.K, int64_t(BLOCK_K)), Cfg::SPLIT_MIN_KTILES, 1,
                                  launch_sms(device));
    launch_split(kernel, grid, threads, smem, a.stream, split, device_props(device).cc, name, ma,
                 mb, static_cast<T*>(a.C), a.M, a.N, a.K, split_ldc(a), a.alpha, a.beta);
  };
  if (b_kmajor) {
    run(hgemm_v34_split_k_unaligned_kernel<T, true>);
  } else {
    run(hgemm_v34_split_k_unaligned_kernel<T, false>);
  }
}

}  // namespace

void hgemm_v34_split_k_unaligned_f16(const GemmArgs& a) {
  hgemm_v34_split_k_unaligned_launch<__half>(a);
}
void hgemm_v34_split_k_unaligned_bf16(const GemmArgs& a) {
  hgemm_v34_split_k_unaligned_launch<__nv_bfloat16>(a);
}
int hgemm_v34_split_k_unaligned_smem() { return hopper::smem_bytes<hopper::V34>(); }

}  // namespace fastgemm

FASTGEMM_REGISTER_HGEMM(hgemm_v34_split_k_unaligned, {34, 90, 90, 2, "wgmma", "tma", "split_k",
    "hgemm_v24_wgmma_split_k", true,
    "v24 reading a row-major B whose rows are not 16-byte aligned in place: TMA boxes of its rows "
    "k mod 8 staged, shifted into the ring by the producer warpgroup"})
