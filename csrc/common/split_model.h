// split_model.h — how many ways a kernel whose partial tiles meet in global memory splits K when
// its grid may take several rounds of resident blocks (sgemm v16): one model, read by the launch
// (S) and by the auto rules (whether a split pays at all), so that the two cannot disagree.
//
// The model, in units of one block's work on one 16-deep k-tile while it shares its SM:
//   time(S) = full * (share + cut) + (rest ? lone * (share + cut) : 0) + (S - 1) * add
// where the tiles x S blocks fill `full` whole rounds of sms x blocks_per_sm resident blocks and
// `rest` blocks are left for a last round; share = ceil(k_units / S), cut = publish where S > 1
// (a partial tile stored); lone = solo where blocks_per_sm > 1 and the last round holds at most
// one block per SM (a block alone on its SM runs faster than one of two: the loop is bound by
// the SM's FMA pipe and latency, not by a fixed share), else 1; add is the owner's load-and-add of
// one partial tile. The costs are fitted to sgemm v16 on an H100 (benchmarks/NOTES.md).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace fastgemm {

// FASTGEMM_DEV_SPLIT_K=<n> fixes a split kernel's S within its limits; FASTGEMM_DEV_MIN_KTILES=<n>
// replaces the smallest share of a cluster's split (sgemm/split_k_tile.cuh). Read once each; for
// fitting the rules, not for users; 0 where unset.
inline int dev_split_override() {
  static const int fixed = [] {
    const char* v = std::getenv("FASTGEMM_DEV_SPLIT_K");
    return v ? std::atoi(v) : 0;
  }();
  return fixed;
}
inline int dev_min_ktiles() {
  static const int fixed = [] {
    const char* v = std::getenv("FASTGEMM_DEV_MIN_KTILES");
    return v ? std::atoi(v) : 0;
  }();
  return fixed;
}

struct RoundCosts {
  double publish, add, solo;
};

// A kernel's split in the model's terms: its tile, the K work of one unit, the fewest units a
// block takes, the most shares and partial tiles, the blocks an SM holds in its usual layouts, and
// the costs.
struct RoundSplit {
  int tile_m, tile_n, k_unit, min_units, most;
  int64_t max_partials;
  int blocks_per_sm;
  RoundCosts costs;
};
// sgemm v16: 128x128 tiles, 16-deep k-tiles, at least 8 a block, up to 16 shares and 1024
// partial tiles (64 MiB of scratch), two blocks of 256 threads per SM.
constexpr RoundSplit kSgemmV16Split{128, 128, 16, 8, 16, 1024, 2, {1.0, 0.5, 0.55}};

// The model's time for S (see above).
inline double round_model_time(int64_t tiles, int64_t k_units, int64_t s, int sms,
                               int blocks_per_sm, const RoundCosts& c) {
  const int64_t slots = int64_t(sms) * blocks_per_sm, blocks = tiles * s;
  const int64_t full = blocks / slots, rest = blocks - full * slots;
  const double share = static_cast<double>((k_units + s - 1) / s) + (s > 1 ? c.publish : 0.0);
  const double lone = blocks_per_sm > 1 && rest <= sms ? c.solo : 1.0;
  return static_cast<double>(full) * share + (rest ? lone * share : 0.0) +
         static_cast<double>(s - 1) * c.add;
}

// For C[M,N] with depth K on `sms` SMs holding blocks_per_sm blocks each: the S <= r.most with
// the least modelled time that leaves every block at least r.min_units units of K and needs at
// most r.max_partials partial tiles; ties go to the smaller S. The override fixes S within those
// limits.
inline int round_split_count(const RoundSplit& r, int64_t M, int64_t N, int64_t K, int sms,
                             int blocks_per_sm) {
  const int64_t tiles = ((M + r.tile_m - 1) / r.tile_m) * ((N + r.tile_n - 1) / r.tile_n);
  const int64_t k_units = (K + r.k_unit - 1) / r.k_unit;
  const RoundCosts& c = r.costs;
  if (tiles <= 0 || sms <= 0 || blocks_per_sm <= 0) return 1;
  int64_t top = std::min<int64_t>(r.most, k_units / std::max<int64_t>(r.min_units, 1));
  top = std::min<int64_t>(top, 1 + r.max_partials / tiles);
  if (top <= 1) return 1;
  if (dev_split_override() > 0) {
    return static_cast<int>(std::min<int64_t>(top, dev_split_override()));
  }
  int best = 1;
  double best_time = round_model_time(tiles, k_units, 1, sms, blocks_per_sm, c);
  for (int64_t s = 2; s <= top; ++s) {
    const double time = round_model_time(tiles, k_units, s, sms, blocks_per_sm, c);
    if (time < best_time * (1 - 1e-9)) best = static_cast<int>(s), best_time = time;
  }
  return best;
}

// Clusters of S blocks resident at once on a device when an SM holds at most n blocks, under the
// default cluster scheduling policy (balance = 0) and the load-balancing one (1), for
// n = 1..kCapacityBlocks and S = 2..kCapacitySplit (common/runtime: cluster_capacity, asked once
// per device; all 0 where clusters cannot launch).
constexpr int kCapacityBlocks = 4, kCapacitySplit = 8;
struct ClusterCapacity {
  int clusters[2][kCapacityBlocks + 1][kCapacitySplit + 1] = {};
  int at(int s, int n, bool balance) const { return clusters[balance ? 1 : 0][n][s]; }
};

// How an SM's throughput grows with the blocks of a split kernel it holds: rate[n - 1] for n
// blocks, relative to one block alone (1.0), for n = 1..per_sm.
struct SplitRates {
  int per_sm;
  double rate[kCapacityBlocks];
};

struct ClusterChoice {
  int split;
  bool balance;  // launch with the load-balancing cluster scheduling policy
};

// The modelled time of a cluster split S (with policy `balance`), in units of one block's k-tile
// alone on its SM: the tiles' clusters run in rounds of as many as fit at once (capacity at
// per_sm blocks per SM). One round takes ceil(k_units / S) * n / rate[n - 1], n the fewest
// blocks an SM must hold for its clusters. With more rounds every round, the last one too, takes
// it at per_sm: a later round's clusters start as earlier ones finish, beside their stragglers
// (measured: a last round of 10 of 40 clusters ran as slowly as a full one). The partial tiles'
// exchange costs `add` per extra share. S = 1 is a plain grid: sms * n blocks at n per SM.
// Infinite where a round holds no cluster.
// The rounds' part of it, for `groups` clusters (or single blocks) of which the device holds
// fits(n) at once at n blocks per SM.
template <typename Fits>
inline double rounds_time(const SplitRates& r, int64_t groups, int64_t k_units, int s, Fits fits) {
  const int per_sm = std::clamp(r.per_sm, 1, kCapacityBlocks);
  const int64_t most = fits(per_sm);
  if (most <= 0) return 1e300;
  const double share = static_cast<double>((k_units + s - 1) / s);
  const int64_t rounds = (groups + most - 1) / most;
  int n = per_sm;
  if (rounds == 1) {
    n = 1;
    while (n < per_sm && fits(n) < groups) ++n;
  }
  return static_cast<double>(rounds) * share * n / r.rate[n - 1];
}
inline double cluster_split_time(const ClusterCapacity& cap, const SplitRates& r, int sms,
                                 int64_t tiles, int64_t k_units, int s, bool balance, double add) {
  auto fits = [&](int n) -> int64_t { return s == 1 ? int64_t(sms) * n : cap.at(s, n, balance); };
  return rounds_time(r, tiles, k_units, s, fits) + static_cast<double>(s - 1) * add;
}

// A split with no cluster whose blocks each store a partial tile that a second kernel sums (sgemm
// v21): the tiles x S blocks run in rounds as cluster_split_time's plain grid does (S = 1 there),
// and every partial tile costs `partial` (its store and its read back, in the same units). The
// S <= min(most, k_units / min_units) with the least time, ties to the smaller S;
// FASTGEMM_DEV_SPLIT_K fixes S within those limits.
inline double grid_split_time(const SplitRates& r, int sms, int64_t tiles, int64_t k_units, int s,
                              double partial) {
  auto fits = [&](int n) -> int64_t { return int64_t(sms) * n; };
  return rounds_time(r, tiles * s, k_units, s, fits) + static_cast<double>(tiles) * s * partial;
}
inline int grid_split_choice(const SplitRates& r, int sms, int64_t tiles, int64_t k_units,
                             int64_t min_units, int most, double partial) {
  if (tiles <= 0 || sms <= 0) return 1;
  const int top = static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(most, k_units / std::max<int64_t>(min_units, 1))));
  if (dev_split_override() > 0) return std::min(dev_split_override(), top);
  int best = 1;
  double best_time = grid_split_time(r, sms, tiles, k_units, 1, partial);
  for (int s = 2; s <= top; ++s) {
    const double time = grid_split_time(r, sms, tiles, k_units, s, partial);
    if (time < best_time * (1 - 1e-9)) best = s, best_time = time;
  }
  return best;
}

// The split of C's `tiles` output tiles, each k_units deep: the S <= min(most, k_units /
// min_units) and policy with the least cluster_split_time, ties to the smaller S and the default
// policy. FASTGEMM_DEV_SPLIT_K fixes S within those limits (its better policy).
inline ClusterChoice cluster_split_choice(const ClusterCapacity& cap, const SplitRates& r, int sms,
                                          int64_t tiles, int64_t k_units, int64_t min_units,
                                          int most, double add) {
  if (tiles <= 0 || sms <= 0) return {1, false};
  const int top = static_cast<int>(std::min<int64_t>(
      std::min(most, kCapacitySplit), k_units / std::max<int64_t>(min_units, 1)));
  ClusterChoice best{1, false};
  double best_time = cluster_split_time(cap, r, sms, tiles, k_units, 1, false, add);
  const int fixed = dev_split_override();
  if (fixed > 0) best_time = 1e300;
  for (int s = 2; s <= top; ++s) {
    if (fixed > 0 && s != std::min(fixed, top)) continue;
    for (bool balance : {false, true}) {
      const double time = cluster_split_time(cap, r, sms, tiles, k_units, s, balance, add);
      if (time < best_time * (1 - 1e-9)) best = {s, balance}, best_time = time;
    }
  }
  if (best_time >= 1e300) return {1, false};
  return best;
}

}  // namespace fastgemm
