// hgemm_v18_borrowed_stage — each consumer warpgroup stores its whole 64x256 slab at once: one
// through a 32 KiB C buffer, the other through the ring stage its last k-tile came from.
//
// What changed since v16: v16's epilogue passes a warpgroup's four 64x64 boxes through two 8 KiB
// slots, so the third box waits until the TMA store of the first has read its slot, and every box
// costs two warpgroup barriers and a store issue. Here each warpgroup has 32 KiB: warpgroup 1 a C
// buffer (the 2 x 16 KiB of v16's two buffers), warpgroup 2 the 48 KiB stage of its tile's last
// k-tile, which it keeps instead of releasing. Its leader gives the stage back to the producer
// after the next tile's first k-tile is issued, once its stores have read it (a bulk read-wait
// that by then is over). The slab goes out in two pieces of two boxes, nothing waits for a slot,
// and the shared memory stays at v16's 224 KiB.
// Why faster: the epilogue, during which the tensor cores idle, loses its waits for slot reuse and
// half its barriers and store issues; least where a block has one tile (there the slab's first
// store starts later than v16's first box).
// What limits it: the tensor cores still idle during the epilogue (both warpgroups finish a tile
// together); the ring runs one stage short while warpgroup 2's stores drain; between kernels of a
// stream the GPU waits for this grid to finish before it starts the next (v19).
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v18_borrowed_stage, V18) {
  persistent_tma_store_gemm<T, V18, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v18_borrowed_stage, V18)

FASTGEMM_REGISTER_HGEMM(hgemm_v18_borrowed_stage, {18, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v16_deep_ring", false,
    "each warpgroup stores its 64x256 slab at once, one of them through its last ring "
    "stage (kept until the stores have read it)"})
