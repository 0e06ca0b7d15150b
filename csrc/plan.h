// plan.h — what kernel="auto" runs, decided once per problem class and cached.
//
// The rules are data (auto_rules(): per dtype, candidate kernels fastest first); decide() walks
// them for a problem on a target GPU; plan_for() caches that decision under everything it depends
// on (device, dtype, M, N, K, operand layouts, per-operand alignment, beta != 0), so a repeated
// call does one hash lookup. select() in Python reads the same decide(), reason included, so the
// explanation cannot drift from what runs. runnable_problem() is the one "can this kernel run
// here" check, for auto and for a kernel the caller names.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/runtime.h"
#include "common/split_model.h"
#include "registry.h"

namespace fastgemm {

// The GPU a decision is made for: a real device's queried properties, or (select(cc=...)
// without that GPU) the documented limits of an architecture.
struct Target {
  int cc = 0;
  int smem_per_block = 0;
  int sm_count = 0;  // a device's, or for an architecture alone its common part's (documented)
};
Target device_target(int device);
Target documented_target(int cc);

struct AutoRule {
  const char* kernel;  // a name in the kernel table (a build may lack it: then it is skipped)
  const char* why;     // why it is preferred where it applies
  int64_t min_mn;      // smallest M*N output it is preferred for
  // Preferred only for outputs of at most sm_count / few_parts tiles of few_m x few_n (0:
  // always), i.e. where a kernel with those tiles would leave (few_parts - 1) / few_parts of the
  // SMs idle (few_parts < 1: up to 1 / few_parts waves of tiles).
  int few_m = 0, few_n = 0;
  // Preferred only for outputs of at most this many rows (0: any): a shape specialist for small M.
  int64_t max_m = 0;
  // Preferred only on GPUs of at least this compute capability (0: any): where it was measured to
  // pay (the split-K specialists split K only where clusters exist, sm_90 on).
  int min_cc = 0;
  // Preferred only for K of at least this (0: any): a split of K pays only where its shares are
  // long enough to outweigh the reduction.
  int64_t min_k = 0;
  // Preferred only for outputs whose shorter side (min(M, N)) is at most this (0: any): a shape
  // specialist for outputs with few rows or few columns.
  int64_t max_short = 0;
  // Runs the problem as its transpose, C^T = B^T A^T (N x M, C written column-major), and the
  // limits above read the transposed problem: M's are N's. For the split-K kernels whose
  // epilogue writes a column-major C (the clusters' split_k, and the mma.sync rungs whose
  // partial tiles a second kernel sums), so that a problem with few columns is run as one with
  // few rows.
  bool flip = false;
  double few_parts = 2;  // see few_m (a fraction: up to sm_count / few_parts tiles, floored)
  // Preferred only where K split over the SMs in S = min(16, K / 256, sm_count / tiles of
  // few_m x few_n) shares leaves each share at least split_cost * (S - 1) k-tiles of 64 (0: no
  // such limit; S = 1 never qualifies): a kernel whose tile owner adds S - 1 partial tiles one
  // after another pays for them only on a long share.
  int split_cost = 0;
  // Preferred only where this round model (common/split_model.h) splits K, S > 1, on the
  // target's SMs at the model's blocks per SM (nullptr: no such limit): a kernel that splits K by
  // the same model, preferred where whole tiles would leave SMs idle.
  const RoundSplit* round_split = nullptr;
  // Preferred only for K of at most this (0: any): a split whose reduction pays only on short
  // shares against another's.
  int64_t max_k = 0;
  // Preferred only where the tiles of few_m x few_n fill more than one round of sm_count and
  // leave a last round of at most sm_count / 2 (false: no such limit; few_parts is then not
  // read): a kernel that splits its last round of tiles along K over the SMs it leaves idle.
  bool last_round = false;
  // Preferred only where tiles of few_m x few_n take less time than tiles of few_m x vs_n by the
  // last-round model (last_round_cost) (0: no such limit): a kernel whose narrower tile fills the
  // SMs' rounds better than the wider tile of the kernels after it.
  int vs_n = 0;
  // Preferred only for outputs of at least this many rows (0: any): a specialist for a band of
  // rows that another kernel (the rule after it) serves better below it.
  int64_t min_m = 0;
  // Preferred only for outputs of at least this many columns (0: any): the same, for columns.
  int64_t min_n = 0;
  // Preferred only for this layout of the kernel's B (0: any; 1: row-major, N contiguous; 2:
  // column-major, K contiguous, as B = W^T of a weight W): a specialist whose loads of B were
  // measured faster for one layout. A flip rule reads the transposed problem's B, A^T: K
  // contiguous where A is row-major.
  int b_order = 0;
  // Preferred only where every operand's rows (base address and pitch) are aligned to this many
  // bytes (0: any): 128, a swizzled TMA box row, for a kernel whose speed is its L2 traffic: then
  // every box row is whole L2 sectors, and (contiguous operands) the boxes tile K and N exactly.
  // Read on the operands as given: a padded plan (or a strided operand, copied) does not qualify,
  // whatever its copies' rows would be.
  int row_align = 0;
  // Preferred only where the rows (base address and pitch) of an operand named here ("B", "AB":
  // A or B, "ABC": any of the three) are aligned to fewer than 16 bytes (nullptr: any): for a
  // kernel that reads under-aligned rows in place (or stores them), which pays only where the
  // padded path would copy them. A flip rule reads the transposed problem's operands (B is A^T).
  const char* unaligned = nullptr;
  // With `unaligned`: gives way to the padded path from K = kV34PadK on outputs of at most
  // kV34PadTiles tiles of 128x128, where the aligned copies' split kernels were faster (v34).
  bool pad_deep_few = false;
  // Preferred only where the output's shorter side, min(M, N), ends 1-64 past a multiple of 128
  // (false: no such limit): there 64-wide tiles along it leave 64 fewer of its rows or columns
  // as padding than 128-wide ones (half_edge()).
  bool half_edge = false;
  // With vs_n: preferred only where the tiles of few_m x few_n leave no last round to split
  // (they fill whole rounds, or a last round of more than sm_count / 2), so that a short K pays
  // no hand-off of partial tiles (false: no such limit).
  bool unsplit_last_round = false;
  // Preferred only where the tiles of few_m x few_n (one of 128x128, 192x128 and 128x256) take
  // at most two rounds of sm_count and less time than the other two shapes by the wave model
  // (wave_cost; a tie goes to the larger tile) (false: no such limit): a kernel whose tile shape
  // fits the SMs' rounds where the others' leave a round mostly empty.
  bool wave_rounds = false;
  // Preferred only where the kernel's B has rows (base address and pitch) aligned to at least 16
  // and fewer than this many bytes (0: no such limit; 128: off whole L2 lines, 32: only 16-byte
  // aligned). For a kernel that
  // shares B's tiles between the CTAs of a cluster: each 128-byte box row of such a B straddles
  // two L2 lines (five 32-byte sectors where the rows are only 16-byte aligned), and multicast
  // halves the requests that cost.
  int b_off_line = 0;
  // With few_m: preferred only for more than sm_count / over_parts tiles of few_m x few_n (0: no
  // such limit), i.e. where fewer tiles would leave more of the SMs idle than a smaller tile does.
  double over_parts = 0;
  // With few_m: preferred only where the rows of few_m-row tiles exceed the rows of 128-row tiles
  // by at most this factor (0: no such limit): a tall (cluster) tile whose padding past M costs
  // work that 128-row tiles would not do.
  double max_pad = 0;
  // The operands are read as given: decide() copies none to 128-byte rows where this rule runs
  // (false: decide() may, and then walks the rules again for the copies).
  bool in_place = false;
  // Preferred only where the kernel's A is MN-major with rows (base address and pitch) aligned
  // to at least 16 and fewer than this many bytes (0: no such limit). A flip rule reads the
  // transposed problem's A, B^T: MN-major where B is row-major, its rows 2 x N bytes apart. 32:
  // rows that split 32-byte sectors (8 or 24 columns of 2-byte elements), where the split rungs
  // of at most 32 rows start each block's k-tiles at its own one (hgemm.cuh: mainloop_range);
  // 128: rows off whole L2 lines (40, 48 or 56 columns), where v23's and v42's one block per SM
  // ran slowly.
  int a_off_line = 0;
};
// The wave model of a persistent kernel of tile_m x tile_n tiles: its rounds of sm_count tiles
// (the last one whole, however few it holds) times the tile's area, in 128x128 tiles.
double wave_cost(int64_t M, int64_t N, int tile_m, int tile_n, int sms);
// True where min(M, N) ends in the first half of its last 128-wide tile (AutoRule::half_edge).
inline bool half_edge(int64_t M, int64_t N) {
  const int64_t rest = std::min(M, N) % 128;
  return rest > 0 && rest <= 64;
}
// The last-round model of a persistent kernel of tile_m x tile_n tiles that splits its last
// partial round along K (hopper/scheduler.cuh: Hybrid, at most 4 ways, shares of at least 4
// k-tiles of 64): the rounds of whole tiles, plus 1 / S of a round and 0.2 for the hand-off of a
// split last round, times the tile's width (x 1.05 below 256 columns: less math per byte brought
// in). Fitted to results/sweeps/prefill-tile192-*.
double last_round_cost(int64_t M, int64_t N, int64_t K, int tile_m, int tile_n, int sms);
const std::vector<AutoRule>& auto_rules(DType dtype);

// What an fp32 call asks of the arithmetic: "ieee" (fp32 products and sums, the default),
// "tf32x3" (three tf32 tensor-core products per product: fp32-level accuracy) or "tf32" (one
// tf32 product: 10-bit mantissas). A floor: auto may run a more accurate kernel where it is
// faster or where no kernel of the asked precision runs.
enum class Precision { ieee, tf32x3, tf32 };
// Throws std::invalid_argument for anything else (a ValueError in Python).
Precision parse_precision(std::string_view name);
const char* precision_name(Precision p);
// The precision a kernel computes in (its registry row; fp16/bf16 rows count as ieee).
Precision kernel_precision(const KernelEntry& k);
// True when kernel precision `have` is at least as accurate as `want`.
bool at_least(Precision have, Precision want);
// The fp32 rules tried first for a precision below ieee (the ieee rules follow them).
const std::vector<AutoRule>& precision_rules(Precision p);

// Operands whose rows are not aligned enough for the fastest kernel are copied into padded,
// aligned temporaries when the problem is at least this many multiply-adds.
constexpr int64_t kPadMinMacs = int64_t(1) << 27;
// Below kPadMinMacs an fp16/bf16 problem whose only in-place kernel is v01 is padded as well (on
// sm_90, where it was measured), except where v01 is faster: one of its 32-deep k-steps (K <=
// kV01MaxK) on an output of at most kV01MaxOutputs elements. v01 copies element by element and
// takes about 5 us per 32 of K on sm_90; the padded path about 10-20 us in all below
// kPadMinMacs (H100, 160 fp16 and 50 bf16 random under-aligned problems: v01 3.7-5.9 us per
// k-step wherever M > 1; it was faster only at K <= 32 on outputs of at most 60K elements, by
// 3-5 us; 451x2868x16 padded was 4 us faster).
constexpr int64_t kV01MaxK = 32;
constexpr int64_t kV01MaxOutputs = int64_t(1) << 16;
// v34 (an under-aligned B read in place) gives way to the padded path from K = kV34PadK on
// outputs of at most kV34PadTiles tiles of 128x128: there the aligned copies' split-K kernels
// (v22-v26, v24) were 1.1-1.7x faster on 12 of the 14 random points with K >= 7000 (H100,
// auto's v34 against FASTGEMM_DEV_PAD=1), v34 on the other 2 by 6-10%; over 22-45 tiles v34
// stayed 1.5x faster.
constexpr int64_t kV34PadK = 7168;
constexpr int64_t kV34PadTiles = 8;

// Bytes to which all `values` (addresses, byte strides) are aligned: the largest power of two
// dividing them all, at most `cap` (cap when every value is 0).
int alignment_of(std::initializer_list<uint64_t> values, int cap = 16);
// The alignment classes a plan is keyed and decided on: up to a TMA box row (AutoRule::row_align).
constexpr int kPlanAlignCap = 128;

// Why a kernel with these needs cannot run on `t` with operands aligned to `alignment` bytes;
// empty when it can.
std::string runnable_problem(const char* name, int min_cc, int max_cc, int smem_bytes,
                             int need_alignment, const Target& t, int alignment);
std::string runnable_problem(const KernelEntry& k, const Target& t, int alignment);

struct Plan {
  const KernelEntry* kernel = nullptr;
  bool pad = false;  // copy operands aligned below pad_alignment bytes into aligned temporaries
  bool flip = false;  // run C^T = B^T A^T (the rule's flip; with pad: on the aligned copies)
  std::shared_ptr<const std::string> reason;  // what select() says; shared, so a copy is cheap
  int pad_alignment = 0;  // with pad: the kernel's alignment (hgemm), 16 bytes (fp32)
  // fp32 with pad (f32_padded_plan): the kernel runs the problem grown to grown_m x grown_n x
  // grown_k (M and N rounded up to multiples of 4, K to 16) on zero-filled, 16-byte aligned
  // copies of A and B, into an aligned work buffer copied back to C where the output grew or C
  // is under-aligned (0: not grown).
  int64_t grown_m = 0, grown_n = 0, grown_k = 0;
  // fp16/bf16 on the TMA rungs (decide(): kRealignMinRowsB, kRealignMinColsA): operands whose
  // rows are only 16-byte aligned, copied first into temporaries with 128-byte rows, in their
  // own layouts (1: A, 2: B, as the kernel reads them; 0: none).
  int realign = 0;
  // The rule asked for the operands' rows as given (AutoRule::in_place): decide() copies none.
  bool in_place = false;
};

// The auto rules walked for C[M,N] = A[M,K] @ B[K,N] with per-operand alignments (bytes).
// Throws std::runtime_error when no kernel of the dtype runs on the target.
// a_col / b_col: the layouts of A and B as the kernel reads them (column-major: true).
Plan decide(const Target& t, DType dtype, int64_t M, int64_t N, int64_t K, int align_a,
            int align_b, int align_c, Precision precision = Precision::ieee, bool a_col = false,
            bool b_col = false);

struct PlanKey {
  int device;
  DType dtype;
  int64_t M, N, K;
  bool a_col, b_col, beta_nonzero;
  int align_a, align_b, align_c;  // bytes
  Precision precision = Precision::ieee;
  bool operator==(const PlanKey& o) const;
};
// decide() for a real device, cached. A full cache starts over (a program that calls more
// distinct problem classes than it holds pays decide() again for the ones it meets again).
Plan plan_for(const PlanKey& key);
size_t plan_cache_size();
void clear_plan_cache();

}  // namespace fastgemm
