// hopper/ring.cuh — the producer/consumer pipeline: STAGES shared-memory stages of (A tile, B
// tile), each guarded by two mbarriers.
//
// Contract. full[s]: one arrival (the producer's arrive.expect_tx) plus the stage's transaction
// bytes (the TMA copies); a consumer may read stage s once full[s] completes. empty[s]: CONSUMERS
// x CLUSTER arrivals, one per consumer (a warpgroup's leader, or a warp's lane 0) of every CTA of
// the cluster, each after its last read of the stage; the producer refills stage s only after
// that. Producer and consumers walk the same running k-tile counter `it`: stage it % STAGES, and
// round it / STAGES gives the phase parity to wait for (consume_shared keeps both in a
// StageCursor, a wrapping counter, so that its loop divides once per tile). The ring never
// touches global memory.
//
// CLUSTER > 1: the CTAs of a cluster share the B tile — each CTA's producer loads its own A tile
// and 1/CLUSTER of the B tile, multicast into every CTA — so a stage of one CTA is written by all
// of them: its `empty` barrier counts the consumers of the whole cluster, and a consumer releases
// a stage in every CTA. `full` still expects the whole stage's bytes, which arrive from CLUSTER
// producers.
#pragma once
#include "hopper/tile.cuh"

namespace fastgemm::hopper {

// FULL: arrivals that complete a stage's `full` barrier besides its bytes (1: the producer's
// arrive.expect_tx; more where producer threads also write the stage with ordinary stores).
template <int BM, int BN, int STAGES, int CONSUMERS, int CLUSTER_ = 1, int FULL = 1>
struct Ring {
  static constexpr int TILE_M = BM, TILE_N = BN, CLUSTER = CLUSTER_, DEPTH = STAGES;
  static constexpr int CONSUMER_WARPGROUPS = CONSUMERS;
  static constexpr int A_BYTES = tile_bytes<BM>(), STAGE_BYTES = A_BYTES + tile_bytes<BN>();
  static_assert(STAGE_BYTES % 1024 == 0, "stages must keep the 1024-byte swizzle alignment");
  static constexpr int BYTES = STAGES * STAGE_BYTES;  // shared memory of the stages
  unsigned char* stages;
  uint64_t* full;
  uint64_t* empty;
  uint32_t rank = 0;  // this CTA's rank in its cluster

  // Thread 0 initialises the barriers; the caller then synchronises the block (the cluster).
  __device__ __forceinline__ void init() const {
    if (threadIdx.x != 0) return;
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], FULL);
      ptx::mbarrier_init(&empty[s], CONSUMERS * CLUSTER);
    }
    ptx::fence_barrier_init();
  }

  __device__ __forceinline__ unsigned char* stage(int s) const { return stages + s * STAGE_BYTES; }

  // Producer: stage it % STAGES, once its previous round is released (the first round finds
  // every stage free), armed for the stage's bytes. Returns the stage index.
  __device__ __forceinline__ int acquire(int it) const {
    const int s = it % STAGES;
    if (it >= STAGES) ptx::mbarrier_wait(&empty[s], (it / STAGES - 1) & 1);
    ptx::mbarrier_arrive_expect_tx(&full[s], STAGE_BYTES);
    return s;
  }

  // Consumer: wait until the copies of k-tile `it` have landed. Returns the stage index.
  __device__ __forceinline__ int wait_full(int it) const {
    const int s = it % STAGES;
    ptx::mbarrier_wait(&full[s], (it / STAGES) & 1);
    return s;
  }
  // The same for a consumer that walks the stages itself (a StageCursor's stage and parity).
  __device__ __forceinline__ void wait_full(int s, uint32_t parity) const {
    ptx::mbarrier_wait(&full[s], parity);
  }

  // A consumer's leader: the consumer has finished reading stage s (in every CTA of the cluster,
  // whose producers all write into it).
  __device__ __forceinline__ void release(int s) const {
    if (CLUSTER == 1) {
      ptx::mbarrier_arrive(&empty[s]);
    } else {
#pragma unroll
      for (int c = 0; c < CLUSTER; ++c) ptx::mbarrier_arrive_cluster(&empty[s], c);
    }
  }
};

// A consumer's walk over a ring of STAGES stages: the stage of k-tile `it` and its phase parity,
// kept as a wrapping counter instead of a division per k-tile.
template <int STAGES>
struct StageCursor {
  int stage;
  uint32_t parity;
  __device__ __forceinline__ explicit StageCursor(int it)
      : stage(it % STAGES), parity(static_cast<uint32_t>(it / STAGES) & 1u) {}
  __device__ __forceinline__ int previous() const { return stage == 0 ? STAGES - 1 : stage - 1; }
  __device__ __forceinline__ void advance() {
    if (++stage == STAGES) stage = 0, parity ^= 1u;
  }
};

// The consumer warpgroups of a warp-specialised rung's configuration: its threads after the
// producer warpgroup, one warpgroup per 64 rows of the block tile.
template <typename Cfg>
constexpr int consumers_of() {
  static_assert(Cfg::THREADS == 128 + 128 * (Cfg::BM / 64), "a consumer warpgroup per 64 rows");
  return Cfg::BM / 64;
}

// The kernel's ring: its stages at the start of the (1024-byte aligned) dynamic shared memory,
// its barriers in static shared memory, initialised by thread 0. The caller then synchronises
// the block (a cluster: the whole cluster) before any thread signals a barrier.
template <typename RingT>
__device__ __forceinline__ RingT make_ring(uint32_t rank = 0) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ uint64_t full[RingT::DEPTH], empty[RingT::DEPTH];
  const RingT ring{aligned_smem(smem_raw), full, empty, rank};
  ring.init();
  return ring;
}

}  // namespace fastgemm::hopper
