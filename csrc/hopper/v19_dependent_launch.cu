// hgemm_v19_dependent_launch — v18 launched with programmatic dependent launch (PDL).
//
// What changed since v18: the launch sets cudaLaunchAttributeProgrammaticStreamSerialization, so
// the GPU may start this grid before the previous kernel of the stream has finished; every thread
// executes griddepcontrol.wait after initialising its block's barriers, so nothing global is
// read or written before the previous kernel is complete and its writes are visible. The producer
// executes griddepcontrol.launch_dependents once it has issued its last TMA copy, which lets the
// next kernel (if it too is launched with the attribute) be launched while this one finishes.
// Why faster: back-to-back GEMMs no longer pay the gap between grids — the launch, the block
// prologue (shared memory, barriers, setmaxnreg, descriptor fetch) and the idle SMs of the last
// round overlap the previous grid's tail: the shorter the kernel, the larger the share saved. A
// GEMM after a kernel launched without the attribute starts as v18 does; results are the same.
// What limits it: what limits v18; the overlap only exists between kernels launched with PDL.
// Shapes: any M, N, K >= 1; 16-byte aligned operands; both layouts of A and B. sm_90a.
#include "hopper/persistent.cuh"
#include "hopper/rungs.h"
#include "registry.h"

namespace fastgemm {
namespace {

using namespace hopper;

FASTGEMM_HOPPER_KERNEL(hgemm_v19_dependent_launch, V19) {
  persistent_tma_store_gemm<T, V19, A_KMAJOR, B_KMAJOR>(&tma_a, &tma_b, &tma_c, C, M, N, K, ldc,
                                                        alpha, beta);
}

}  // namespace
}  // namespace fastgemm

FASTGEMM_HOPPER_ENTRY_POINTS(hgemm_v19_dependent_launch, V19)

FASTGEMM_REGISTER_HGEMM(hgemm_v19_dependent_launch, {19, 90, 90, 16, "wgmma", "tma", "tma_store",
    "hgemm_v18_borrowed_stage", false,
    "v18 with programmatic dependent launch: the next kernel of the stream starts while "
    "this one finishes (griddepcontrol)"})
