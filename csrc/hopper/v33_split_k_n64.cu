// hgemm_v33_split_k_n64 — v24 on 128x64 tiles: a branch of v24 for outputs of a few hundred rows
// whose 128x128 tiles are too few for the SMs (prefill of a model layer, small squares).
//
// What changed since v24: the tile narrows from 128x128 to 128x64 (each consumer warpgroup issues
// m64n64k16 wgmmas on 32 accumulators a thread), a stage from 32 to 24 KiB, so the ring holds
// eight, and the partial tile a block leaves for the cluster's reduction halves (32 KiB of fp32).
// The split is v24's: a block per tile and share of K, the shares of a tile one cluster, summed
// in rank order through distributed shared memory.
// Why it pays: an output of 128 x 4096 is 32 tiles of 128x128. v24 must split each into shares
// whose clusters all fit at once, which for 32 tiles stops at three (96 of 132 SMs pull B from
// memory while 36 wait) and pays the ring's fill and the reduction on shares of 21 k-tiles. On
// 128x64 tiles the same output is 64 tiles: two shares each fill 128 SMs, each share twice as
// long, its reduction half the size. A 1024 x 1024 output is 128 tiles: every SM gets one with
// no split at all, where v21's 64 tiles of 128x128 leave half the GPU idle.
// What limits it: each byte brought into shared memory feeds 43 FLOP instead of 64 (A is read
// once per 64 columns of B instead of per 128), so A's traffic from L2 doubles against v24's;
// where there are enough 128x128 tiles for the SMs the wider tiles stay ahead.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/rungs.h"
#include "hopper/split_gemm.cuh"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v33_split_k_n64, V33) {
  split_k_gemm<T, V33, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, C, M, N, K, ldc, alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v33_split_k_n64, V33)

FASTGEMM_REGISTER_HGEMM(hgemm_v33_split_k_n64, {33, 90, 90, 16, "wgmma", "tma", "split_k",
    "hgemm_v24_wgmma_split_k", true,
    "v24 on 128x64 tiles: twice the blocks for the same output, for outputs of a few hundred "
    "rows whose 128x128 tiles are too few for the SMs"})
