// hgemm_v31_split_last_round — v20 with its last partial round of tiles split along K: a branch
// of v20 for outputs whose 128x256 tiles leave the last round of blocks partly idle.
//
// What changed since v20: the schedule (scheduler.cuh: Hybrid, hybrid.cuh). v20 gives each of its
// persistent blocks whole tiles, so T tiles on P SMs take ceil(T / P) rounds: 192 tiles (768 x
// 8192) take two rounds on 132 SMs, the second with 60 busy. Here the whole rounds run as in v20,
// and the R = T mod P tiles of the last one are split S ways along K (S = P / R, at most 4), so
// that R x S blocks share them: the second round of 192 tiles takes half a tile's time on 120
// SMs. The blocks of a share start together after the whole rounds and cut their tiles at the
// same k-tiles, so an operand panel's k-tiles are read at one time, as in v20's rounds. The last
// share of each tile adds the other shares' fp32 partial tiles in share order through global
// memory (the bits repeat from call to call) and stores the tile with v20's TMA-store epilogue.
// Why it pays: the last round's idle SMs work, and nothing else changes: the whole tiles keep
// v20's order, epilogue and step.
// What limits it: each share but the last costs a 128 KiB partial tile written and read
// through L2, and the owner adds them one after another; S is at most P / R, so a last round of
// more than P / 2 tiles is not split, and outputs of fewer tiles than SMs gain only where they
// have at most P / 2.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/hybrid.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_HYBRID_KERNEL(hgemm_v31_split_last_round, V31)

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v31_split_last_round, V31)

FASTGEMM_REGISTER_HGEMM(hgemm_v31_split_last_round, {31, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v20_hoisted_beta", true,
    "v20 with the tiles of its last partial round split along K over the round's idle SMs, "
    "the shares summed in order through global memory"})
