// plan.cpp — see plan.h.
#include "plan.h"

#ifdef FASTGEMM_HAS_HOPPER
#include "hopper/tensor_map.h"
#endif

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace fastgemm {

namespace {

// Shared memory a block may opt into, by compute capability (CUDA programming guide, "technical
// specifications"). Only for answering about an architecture without its GPU; a real device's
// figure is queried (device_props).
int documented_smem_per_block(int cc) {
  switch (cc) {
    case 75: return 65536;
    case 80: case 87: return 166912;
    case 86: case 89: case 120: case 121: return 101376;
    case 90: case 100: case 103: return 232448;
    default: return 101376;  // unknown: the smallest modern figure
  }
}

}  // namespace

double last_round_cost(int64_t M, int64_t N, int64_t K, int tile_m, int tile_n, int sms) {
  if (sms <= 0) return 0;
  const int64_t tiles = ((M + tile_m - 1) / tile_m) * ((N + tile_n - 1) / tile_n);
  const int64_t rest = tiles % sms, k_tiles = (K + 63) / 64;
  const int64_t split =
      rest == 0 ? 1 : std::min<int64_t>({sms / rest, 4, std::max<int64_t>(1, k_tiles / 4)});
  const double rounds = double(tiles / sms) + (rest == 0 ? 0.0 : 1.0 / split + (split > 1 ? 0.2 : 0.0));
  return rounds * tile_n * (tile_n < 256 ? 1.05 : 1.0);
}

double wave_cost(int64_t M, int64_t N, int tile_m, int tile_n, int sms) {
  const int64_t tiles = ((M + tile_m - 1) / tile_m) * ((N + tile_n - 1) / tile_n);
  return double((tiles + sms - 1) / sms) * tile_m * tile_n / (128.0 * 128.0);
}

namespace {

std::string fmt_cc(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

// The HGEMM rules serve fp16 and bf16 alike. Fastest first; min_mn keeps large tiles off outputs
// too small to fill the GPU with them (hgemm_v09's 128x256 tiles: below ~2M outputs, fewer blocks
// than SMs).
const std::vector<AutoRule> kHgemmRules = {
    // v37 / v38 (results/sweeps/unaligned-small-v37-v38-*): under-aligned A or B read in place
    // by element loads, K split over the SMs, C stored by elements. On 120 random under-aligned
    // problems of at most 48 tiles of 64x64, against auto's v34 or padded path: v37 faster on 28
    // of the 35 at most 16 rows with K < 6000 (1.1-2.5x; the 7 others were v34 at 6-10 us
    // against v37's 10-14: its second launch), and on nearly all above (2-4x where the padded
    // path's copies ran around v22-v36); v38 1.1-3x on all but 3 of 45 over at most 16 tiles
    // and 0.97-1.6x over 17-22 tiles; from 25 tiles on it was level or slower (0.78-1.5x). One
    // row with K < 6000 stays with v34 (5 of those 6 points); K < 256 was not swept (v01's one
    // k-step, or v34, there).
    {"hgemm_v37_split_k_reduce_unaligned",
     "v35 reading under-aligned operands in place by element loads (no padded copies, C stored by "
     "elements): for outputs of 2-16 rows and at most SMs/4 tiles of 16x64 with K >= 256",
     0, 16, 64, 16, 90, 256, 0, false, 4, 0, nullptr, 0, false, 0, 2, 0, 0, 0, "AB"},
    {"hgemm_v37_split_k_reduce_unaligned",
     "v35 reading under-aligned operands in place by element loads (no padded copies, C stored by "
     "elements): for one row over at most SMs/4 tiles of 16x64 with K >= 6144",
     0, 16, 64, 1, 90, 6144, 0, false, 4, 0, nullptr, 0, false, 0, 0, 0, 0, 0, "AB"},
    {"hgemm_v38_split_k_reduce_wide_unaligned",
     "v37 on 64x64 tiles: for outputs of at least 2 rows and at most SMs/6 tiles of 64x64 with "
     "K >= 256",
     0, 64, 64, 0, 90, 256, 0, false, 6, 0, nullptr, 0, false, 0, 2, 0, 0, 0, "AB"},
    // v39 (results/sweeps/unaligned-{large,short}-v39-*): under-aligned A, B or C with a short K,
    // read and stored in place. On the 77 of 160 random such problems of more than 48 tiles of
    // 64x64 with K <= 128, against auto's padded path (C through a work buffer) or v34: 1.8x
    // geometric mean, slower on 3 (0.78-0.92x); on the 85 of 120 smaller ones with at least 2
    // rows: 1.56x, slower on 2 (0.88-0.93x). One row stays with v34 (5.8-6.1 us against 6.2-6.9
    // on 7 of 8). From K ~ 150 the element loads cost more than the copies save (0.7-1.0x at K
    // 150-250, 0.1-0.6x at K in the thousands).
    {"hgemm_v39_unaligned_row_store",
     "v05's tiles reading under-aligned operands in place by element loads, C stored row by row "
     "(no padded copies, no work buffer for C): for a K of at most 128 on outputs of at least 2 "
     "rows, where C's traffic and the copies' launches outweigh the loop",
     0, 0, 0, 0, 90, 0, 0, false, 2, 0, nullptr, 128, false, 0, 2, 0, 0, 0, "ABC"},
    // v37 / v38 on the transposed problem (results/sweeps/unaligned-narrow-v37-v38-*): tall
    // narrow under-aligned outputs, which v34's 128x128 tiles (or the padded path) ran with most
    // of each tile's columns empty. On 120 random such problems (128-16384 rows, 1-160 columns,
    // K 64-32768), where auto ran v34 or padded v21 / v24: v37 transposed 1.2-8.6x faster on 29 of
    // the 31 with 2-16 columns (0.35x and 0.81x on the others: 158x15x143, 4206x10x248); v38
    // transposed 1.1-1.5x on all 10 with 17-64 columns; from 65 columns mixed (0.5-2.7x), one
    // column mixed (0.76-1.25x), left to the rules below.
    {"hgemm_v37_split_k_reduce_unaligned",
     "v37 on the transposed problem: for under-aligned outputs of at least 128 rows and 2-16 "
     "columns, where 128-column tiles would be mostly empty",
     0, 0, 0, 16, 90, 0, 0, true, 2, 0, nullptr, 0, false, 0, 2, 128, 0, 0, "ABC"},
    {"hgemm_v38_split_k_reduce_wide_unaligned",
     "v38 on the transposed problem: for under-aligned outputs of at least 128 rows and 17-64 "
     "columns, where 128-column tiles would be half empty or more",
     0, 0, 0, 64, 90, 0, 0, true, 2, 0, nullptr, 0, false, 0, 17, 128, 0, 0, "ABC"},
    // v37 before v34 on decode-sized outputs with an under-aligned row-major B
    // (results/sweeps/pad-unal-rows-v37-*, H200: 20 random (N, K) with N off a multiple of 8, N
    // 1137-55453, K 272-29784, crossed with 1-16 rows; a bf16 check of 12 others with 2-16 rows).
    // Where v34 took 2-16 rows (up to SMs tiles of 128x128), v37 was faster on all points with K
    // >= 512 but one: 0.97-1.86x (0.97x at 16x7319x1416; 12555x9615: 181 -> 108 us); at K of
    // 272-480 it was 0.90-1.09x, left to v34. One row: v37 1.07-1.64x over v34 from N = 3716
    // with K >= 568 (0.99x at 5308x472), and 2.3-2.8x over the padded path, which copied all of B
    // past SMs tiles (1x38839x6812: 719 -> 313 us). The one-row edge of 3073 columns is not
    // fitted: the H100 sweep above kept v34 faster on one row of at most 517 columns, and this
    // sweep's three one-row points of 1137-2436 columns with K >= 512 ran v37 1.12-1.41x faster;
    // the band between was left to v34 until the H100 measures it.
    {"hgemm_v37_split_k_reduce_unaligned",
     "v35 reading under-aligned operands in place by element loads: for outputs of 2-16 rows with "
     "an under-aligned row-major B and K >= 512, whose 16-row tiles read B once where v34's "
     "128-row tiles are mostly empty rows",
     0, 0, 0, 16, 90, 512, 0, false, 2, 0, nullptr, 0, false, 0, 2, 0, 1, 0, "B"},
    {"hgemm_v37_split_k_reduce_unaligned",
     "v35 reading under-aligned operands in place by element loads: for one row of at least 3073 "
     "columns with an under-aligned row-major B and K >= 512",
     0, 0, 0, 1, 90, 512, 0, false, 2, 0, nullptr, 0, false, 0, 0, 3073, 1, 0, "B"},
    // v34 (results/sweeps/pad-v34-*float16*): a row-major B whose rows are not 16-byte aligned,
    // read in place. Against auto's padded path, 1.3-1.8x faster on one row of at most SMs tiles
    // of 128x128, 1.0-1.5x on any rows at up to SMs/2 tiles; with more rows and SMs/2-SMs tiles
    // 0.8-1.1x, past SMs tiles the persistent rungs on aligned copies 1.1-1.9x faster. A
    // column-major B it copies as the padded path does: level there, so these rules leave it.
    {"hgemm_v34_split_k_unaligned",
     "v24 reading an under-aligned row-major B in place (no padded copy of it): for outputs of at "
     "most 128 rows and at most SMs tiles of 128x128 (sm_90a only)",
     0, 128, 128, 128, 90, 0, 0, false, 1, 0, nullptr, 0, false, 0, 0, 0, 1, 0, "B", true},
    {"hgemm_v34_split_k_unaligned",
     "v24 reading an under-aligned row-major B in place (no padded copy of it): for outputs of at "
     "most SMs/2 tiles of 128x128 (sm_90a only)",
     0, 128, 128, 0, 90, 0, 0, false, 2, 0, nullptr, 0, false, 0, 0, 0, 1, 0, "B", true},
    // Where the rules above leave an under-aligned problem to the padded path: on
    // results/sweeps/unaligned-padded-* (`python benchmarks/deep_small.py 120 --seed 21
    // --unaligned-padded`: random shapes as random_shapes.py draws them, kept where auto pads,
    // the in-place kernels timed beside it; H100), against the padded path:
    // - 2-16 rows with an under-aligned B, K >= 256, over more tiles than v37's rules above
    //   take: v37 1.9-2.5x faster on all 4 such points (2x19899x13305: 725 -> 318 us); the
    //   padded path copies all of B there. Also 1.4-2.5x on the 3 points of
    //   unaligned-small-v37-v38-* it takes from v34 or the padded path. Where only A is
    //   under-aligned its copy is small and the points were mixed (v37 0.65-0.70x at K >= 1792,
    //   1.19x at 9x13200x333): left to the padded path.
    // - K of 129-176 with an under-aligned B: v39 1.2-1.6x faster on all 4 such points, and
    //   0.96-1.7x on the 8 of unaligned-large-v39-* and unaligned-short-v39-* (v39's own sweeps,
    //   against the padded path or v34); K of 177-288 on outputs of at least 129 rows and columns
    //   over at most SMs/1.25 tiles: 1.2-1.4x on all 4 such points of both sweeps (339x2878x215:
    //   19.5 -> 13.7 us), where over more tiles, or fewer rows, the padded path or v34 was faster
    //   (0.5-1.0x). Where only A (or C) is under-aligned the padded path's copy is small (v39
    //   still won on the two small such points, 9x16x133 and 17x584x177, not taken).
    // Of the 100 sweep points auto still pads, 15 had an in-place kernel more than 1.1x faster
    // (715x4398x13449: v34 1.68x) outside these families: not fitted yet.
    {"hgemm_v37_split_k_reduce_unaligned",
     "v35 reading under-aligned operands in place by element loads: for outputs of 2-16 rows "
     "with an under-aligned B and K >= 256, where the padded path would copy all of B",
     0, 0, 0, 16, 90, 256, 0, false, 2, 0, nullptr, 0, false, 0, 2, 0, 0, 0, "B"},
    {"hgemm_v39_unaligned_row_store",
     "v05's tiles reading under-aligned operands in place by element loads, C stored row by row: "
     "for a K of 129-176 on outputs of at least 2 rows with an under-aligned B, where the padded "
     "path would copy it",
     0, 0, 0, 0, 90, 129, 0, false, 2, 0, nullptr, 176, false, 0, 2, 0, 0, 0, "B"},
    {"hgemm_v39_unaligned_row_store",
     "v05's tiles reading under-aligned operands in place by element loads, C stored row by row: "
     "for a K of 177-288 on outputs of at least 129 rows and columns and at most SMs/1.25 tiles "
     "of 128x128 with an under-aligned B, where the padded path would copy it",
     0, 128, 128, 0, 90, 177, 0, false, 1.25, 0, nullptr, 288, false, 0, 129, 129, 0, 0, "B"},
    // v35 / v36 (results/sweeps/deep-small-v35-v36-*): K split over the SMs, partial tiles summed
    // by a second kernel. On 110 random aligned problems of at most 32 tiles of 64x64, from
    // K = 16384 they were 1.2-1.9x faster than the cluster splits (v22-v26, v24) on few tiles
    // (v36 level or slower from 10-11 tiles of 64x64 on: 48x641x19312 padded, 0.83x of v23);
    // below it they lost by up to 2x (the second launch), except with
    // more than 64 rows (and 16 columns: v22 runs fewer as their transpose) from K ~ 10000 on
    // at most 16 tiles (v24's cluster of 8: 1.1-1.4x).
    {"hgemm_v35_split_k_reduce",
     "v22's 16-row tiles with K split over the SMs, the partial tiles summed by a second kernel: "
     "for outputs of at most 16 rows and at most SMs/4 tiles of 16x64 with K >= 16384, where a "
     "cluster's 8 shares leave SMs idle",
     0, 16, 64, 16, 90, 16384, 0, false, 4},
    {"hgemm_v36_split_k_reduce_wide",
     "v23's 64x64 tiles with K split over the SMs, the partial tiles summed by a second kernel: "
     "for outputs of at most SMs/16 tiles of 64x64 with K >= 16384, where a cluster's 8 shares "
     "leave SMs idle",
     0, 64, 64, 0, 90, 16384, 0, false, 16},
    {"hgemm_v36_split_k_reduce_wide",
     "v23's 64x64 tiles with K split over the SMs, the partial tiles summed by a second kernel: "
     "for outputs of at least 65 rows and 17 columns and at most SMs/8 tiles of 64x64 with "
     "K >= 9728, where v24's clusters of 8 leave SMs idle",
     0, 64, 64, 0, 90, 9728, 0, false, 8, 0, nullptr, 0, false, 0, 65, 17},
    // v40 / v41 / v42 (results/sweeps/rows-ring-*, rows-bcol-ring-*, narrow-ring-*, fp16; the
    // rules serve bf16 too): v22, v26 and v23 with six ring stages instead of four. Where the
    // tiles of v22 (16x64) or v26 (32x64) number at most the SMs, the grid has at most one block
    // per SM, and the deeper ring was faster: on the H200 by 3.4-7.2% (geometric mean per row
    // count and layout, 0.98-1.20x per point), on the H100 by -0.6% to +3.2% (0.95-1.11x). Past
    // SMs tiles v22 and v26 run two blocks per SM and the one-block rungs lost on the H200
    // (0.92-0.98x, 0.88x at worst) and were level on the H100 (0.99-1.06x). v23 held one block per
    // SM already: v42 was 1.3-4.0% faster on the H200, -2.3% to +2.1% on the H100 (64 rows with a
    // row-major B: 0.97x, 0.90x at worst).
    //
    // Between SMs/2 and SMs tiles v40 cannot split (two shares a tile would not fit one block per
    // SM) and leaves SMs idle, where v22 takes two shares a tile at two blocks per SM
    // (split_fill, common/split_k.cuh). Swept on the H200 over 66-111 tiles (N 4224-7104) at
    // 1 and 16 rows, K 2048-14336, both layouts of B (results/sweeps/rows-b2-*, rows-bcol-b2-*;
    // v22 with two shares forced by FASTGEMM_DEV_SPLIT_K=2): up to SMs/1.7 tiles (71-76 of 16x64)
    // with K >= 4096 v22 was 1.05-1.19x faster than v40 with one row and 0.98-1.07x with 16; from
    // 81 tiles on, and with K = 2048, v40 was level or faster (0.92-1.02x). Checked on other
    // shapes (results/sweeps/rows-b2-check-*, fp16, and rows-bcol-b2-check-*, bf16 with a
    // column-major B; 67-82 tiles, K 2560-11008, 1, 8 and 16 rows): 1.10x and 1.03x over v40 on
    // the 24 and 8 points of the rule (0.98-1.20x). There, with at most 8 rows, v40 was slower
    // further out, at 79-82 tiles (to SMs/1.6) and with K of 3584-4095: the second rule, 1.04x
    // over v40 on its 20 points of the check (0.98-1.10x; 0.98x with 8 rows on 82 tiles) and
    // 0.99-1.08x on its 5 of the first sweep.
    {"hgemm_v40_split_k_deep_ring",
     "v22 with a 6-stage ring: for outputs of at most 16 rows over at most SMs/2 tiles of 16x64, "
     "where its grid, split along K, has one block per SM and the bytes in flight set the "
     "bandwidth",
     0, 16, 64, 16, 90},
    {"hgemm_v22_split_k",
     "16-row tiles with K split across a cluster: for outputs of at most 16 rows over SMs/2 to "
     "SMs/1.7 tiles of 16x64 with K >= 4096, where v40 cannot split and leaves SMs idle and v22 "
     "takes two shares a tile at two blocks per SM",
     0, 16, 64, 16, 90, 4096, 0, false, 1.7},
    {"hgemm_v22_split_k",
     "16-row tiles with K split across a cluster: for outputs of at most 8 rows over SMs/2 to "
     "SMs/1.6 tiles of 16x64 with K >= 3584, where v40 cannot split and leaves SMs idle and v22 "
     "takes two shares a tile at two blocks per SM",
     0, 16, 64, 8, 90, 3584, 0, false, 1.6},
    {"hgemm_v40_split_k_deep_ring",
     "v22 with a 6-stage ring: for outputs of at most 16 rows over at most SMs tiles of 16x64, "
     "where its grid has one block per SM and the bytes in flight set the bandwidth",
     0, 16, 64, 16, 90, 0, 0, false, 1},
    // Flipped narrow outputs over SMs/2 to SMs tiles of the transposed output (H200, fp16 and
    // bf16, results/sweeps/narrow-fit8-* 4224-8448 rows, narrow-check8-* 2048-9216; K 2048-14336, v22,
    // v40 and v47 by name on C^T). v40 runs one block per SM there and cannot split K; v22 takes
    // two shares a tile at two blocks per SM. With 8 columns (B^T's rows 16 bytes apart, the
    // rotated k-start) v22 was 1.05-1.37x faster than v40 on all 18 points over 67-96 tiles with
    // K >= 3072 (5120x8x8192: 32.5 -> 25.1 us) and 1.04-1.13x on the 3 over 97-114 tiles with
    // K >= 8192; with a shorter K there 0.92-1.02x, over 67-96 tiles with K = 2048 0.95-1.06x,
    // and at 120-132 tiles v40 was as fast or faster (0.91-1.02x). With 16 columns (whole sectors) v22 was
    // 1.06-1.13x faster over 67-77 tiles with K >= 4096, as for rows (the rule above), and
    // 0.92-1.05x from 80 tiles on.
    {"hgemm_v22_split_k",
     "v22 on the transposed problem: for outputs of 8 columns (B^T's rows 16 bytes apart) over "
     "SMs/2 to SMs/1.375 tiles of 16x64 with K >= 3072, where v40 cannot split and leaves SMs "
     "idle and v22 takes two shares a tile at two blocks per SM",
     0, 16, 64, 16, 90, 3072, 0, true, 1.375, 0, nullptr, 0, false, 0, 0, 0, 0, 0, nullptr, false,
     false, false, false, 0, 2, 0, false, 32},
    {"hgemm_v22_split_k",
     "v22 on the transposed problem: for outputs of 8 columns (B^T's rows 16 bytes apart) over "
     "SMs/2 to SMs/1.15 tiles of 16x64 with K >= 8192",
     0, 16, 64, 16, 90, 8192, 0, true, 1.15, 0, nullptr, 0, false, 0, 0, 0, 0, 0, nullptr, false,
     false, false, false, 0, 2, 0, false, 32},
    {"hgemm_v22_split_k",
     "v22 on the transposed problem: for outputs of at most 16 columns over SMs/2 to SMs/1.7 "
     "tiles of 16x64 with K >= 4096, where v40 cannot split and leaves SMs idle",
     0, 16, 64, 16, 90, 4096, 0, true, 1.7, 0, nullptr, 0, false, 0, 0, 0, 0, 0, nullptr, false,
     false, false, false, 0, 2},
    {"hgemm_v40_split_k_deep_ring",
     "v40 on the transposed problem: for outputs of at most 16 columns over at most SMs tiles "
     "of 16x64 of the transposed output",
     0, 16, 64, 16, 90, 0, 0, true, 1},
    // v47 (results/sweeps/rows-sk-a-*, rows-bcol-sk-a-*: H200, fp16, 1 and 16 rows, N 2048-37888,
    // K 2048-14336, v22, v40 and v47 by name): v22 runs a block per 16x64 tile, two per SM, so a
    // grid of slightly more tiles than that (272 tiles for 264 resident blocks) runs a second
    // round of a few blocks alone. v47's stream-K runs gave 1.11-1.27x over v22 at 272 tiles,
    // 1.08-1.25x at 296, 1.04-1.13x at 320 and 1.00-1.11x at 344 (2.6 x SMs); from 384 tiles
    // (2.9 x SMs: a last round of half the blocks and more) v22 was level or faster (0.94-1.00x),
    // as it was at up to 264 tiles (0.56-0.99x: every tile's run split in two there).
    {"hgemm_v47_split_k_stream",
     "v22's 16x64 tiles under a stream-K schedule: for outputs of at most 16 rows over more than "
     "2 x SMs and at most 2.7 x SMs tiles of 16x64 with 2048 <= K <= 14336, where v22's grid of "
     "a block per tile, two per SM, runs a second round of a few blocks alone",
     0, 16, 64, 16, 90, 2048, 0, false, 1 / 2.7, 0, nullptr, 14336, false, 0, 0, 0, 0, 0, nullptr,
     false, false, false, false, 0, 0.5},
    {"hgemm_v47_split_k_stream",
     "v47 on the transposed problem: for outputs of at most 16 columns over more than 2 x SMs and "
     "at most 2.7 x SMs tiles of 16x64 of the transposed output with 2048 <= K <= 14336",
     0, 16, 64, 16, 90, 2048, 0, true, 1 / 2.7, 0, nullptr, 14336, false, 0, 0, 0, 0, 0, nullptr,
     false, false, false, false, 0, 0.5},
    {"hgemm_v22_split_k",
     "16-row tiles with K split across a cluster: for outputs of at most 16 rows (decode) over "
     "more tiles than v40 takes, where any wider tile leaves SMs idle and reads B at a fraction "
     "of HBM bandwidth",
     0, 0, 0, 16, 90},
    {"hgemm_v22_split_k",
     "v22 on the transposed problem: for outputs of at most 16 columns (narrow N), whose "
     "transpose is a decode GEMM",
     0, 0, 0, 16, 90, 0, 0, true},
    {"hgemm_v41_split_k_32rows_deep_ring",
     "v26 with a 6-stage ring: for outputs of at most 32 rows over at most SMs tiles of 32x64, "
     "where its grid has one block per SM and the bytes in flight set the bandwidth",
     0, 32, 64, 32, 90, 0, 0, false, 1},
    // Flipped outputs of 24 columns (B^T's rows 48 bytes apart, the rotated k-start) over SMs/2
    // to SMs tiles of 32x64 (H200, results/sweeps/narrow-fit24-* fp16, 4224-8448 rows, and
    // narrow-check24-* bf16, 2048-9216 rows; K 2048-14336, v26, v41 and v48 by name on C^T): v41, one block per SM
    // and no split there, ran each tile's whole K, while v26 (two shares a tile at two blocks
    // per SM) and v48 (stream-K) filled the SMs. Over 67-96 tiles with K of 8192-14336 v48 was
    // 1.23-1.71x faster than v41 on all 10 points (4608x24x14336: 72.8 -> 42.5 us) and
    // 0.99-1.22x against v26; over 67-128 tiles with K >= 3072 v26 was 1.02-1.41x faster than v41
    // on 29 of 30 points (0.995x on the other). With K = 2048 (0.91-1.10x), and at 132 tiles,
    // where one block per SM fills the SMs (0.97x), v41 stays. 32 columns (whole sectors) ran
    // v41 level with v26 over 80-128 tiles (narrow-ring-*).
    {"hgemm_v48_split_k_32rows_stream",
     "v48 on the transposed problem: for outputs of 24 columns (B^T's rows 48 bytes apart) over "
     "SMs/2 to SMs/1.375 tiles of 32x64 with 8192 <= K <= 14336, where v41 cannot split",
     0, 32, 64, 32, 90, 8192, 0, true, 1.375, 0, nullptr, 14336, false, 0, 0, 0, 0, 0, nullptr,
     false, false, false, false, 0, 2, 0, false, 32},
    {"hgemm_v26_split_k_32rows",
     "v26 on the transposed problem: for outputs of 24 columns (B^T's rows 48 bytes apart) over "
     "SMs/2 to SMs/1.03 tiles of 32x64 with K >= 3072, where v41 cannot split and v26 takes two "
     "shares a tile at two blocks per SM",
     0, 32, 64, 32, 90, 3072, 0, true, 1.03, 0, nullptr, 0, false, 0, 0, 0, 0, 0, nullptr, false,
     false, false, false, 0, 2, 0, false, 32},
    {"hgemm_v41_split_k_32rows_deep_ring",
     "v41 on the transposed problem: for outputs of at most 32 columns over at most SMs tiles "
     "of 32x64 of the transposed output",
     0, 32, 64, 32, 90, 0, 0, true, 1},
    // v48 (results/sweeps/rows-sk32-a-*: H200, fp16, 17, 24 and 32 rows, N 8448-28672, K
    // 2048-14336, v26, v41 and v48 by name): v47's schedule on v26's 32x64 tiles, for the same
    // second round of v26's grid. 1.16-1.43x over v26 at 272-296 tiles, 1.09-1.24x at 320-360,
    // 1.05-1.09x at 384 (2.9 x SMs), level at 448 (1.00-1.02x), slower at up to 264 tiles
    // (0.83-1.00x). Held out (rows-bcol-sk32-check-*, bf16, 20 and 28 rows, a column-major B;
    // narrow-sk32-check-*, 24 and 32 columns transposed): 1.10-1.35x over v26.
    {"hgemm_v48_split_k_32rows_stream",
     "v26's 32x64 tiles under v47's stream-K schedule: for outputs of at most 32 rows over more "
     "than 2 x SMs and at most 3 x SMs tiles of 32x64 with 2048 <= K <= 14336, where v26's grid "
     "of a block per tile, two per SM, runs a second round of a few blocks alone",
     0, 32, 64, 32, 90, 2048, 0, false, 1 / 3.0, 0, nullptr, 14336, false, 0, 0, 0, 0, 0, nullptr,
     false, false, false, false, 0, 0.5},
    {"hgemm_v48_split_k_32rows_stream",
     "v48 on the transposed problem: for outputs of at most 32 columns over more than 2 x SMs "
     "and at most 3 x SMs tiles of 32x64 of the transposed output with 2048 <= K <= 14336",
     0, 32, 64, 32, 90, 2048, 0, true, 1 / 3.0, 0, nullptr, 14336, false, 0, 0, 0, 0, 0, nullptr,
     false, false, false, false, 0, 0.5},
    {"hgemm_v26_split_k_32rows",
     "v22 on 32x64 tiles: for outputs of at most 32 rows over more tiles than v41 takes, read "
     "once with half v23's mma work",
     0, 0, 0, 32, 90},
    {"hgemm_v26_split_k_32rows",
     "v26 on the transposed problem: for outputs of at most 32 columns (narrow N)",
     0, 0, 0, 32, 90, 0, 0, true},
    // Flipped outputs of 33-64 columns whose rows are off whole 128-byte lines (40, 48 or 56
    // columns of 2-byte elements), at least 4096 rows (results/sweeps/narrow-fit49-*: fp16, 40
    // and 48 columns, 4096-14336 rows, K 4096 and 8192, v22, v26, v42, v47, v48 and experiment
    // builds by name; H200). v42 (and v23) hold one block of four warps per SM, which ran these
    // 1.5-2x slower than 64 columns and cannot split K over 67-132 tiles; v21's wgmma tiles are
    // half padding. v49 (three blocks per SM, stream-K) was 1.36x faster than what auto ran (v42,
    // v21) in the geometric mean of the 20 points (0.97-2.02x; 5120x48x8192: 66.9 -> 33.0 us),
    // 1.12x over the fastest other rung by name (0.90-1.33x: v26 at 4096x{40,48}x4096). Held out:
    // narrow-check49-* (bf16, 40-56 columns, 4608-12288 rows, K 3072-11008) 1.42x over the old
    // pick on the 24 points the rule takes (1.05-2.33x), and narrow-check56-* (fp16, 56 columns,
    // K 4096 and 14336) 1.32x on 8 (1.01-1.87x). It stays behind the peers (0.70-0.89x). With
    // K = 3072 it was faster than auto's v42 / v28 on 11 of 12 check points: not fitted.
    {"hgemm_v49_split_k_wide_stream",
     "v49 on the transposed problem: for outputs of 33-64 columns whose rows are off whole "
     "128-byte lines (B^T's rows 80, 96 or 112 bytes apart), at least 4096 rows and at most "
     "SMs/0.58 tiles of 64x64, with K >= 4096, where v42's one block per SM runs slowly and "
     "cannot split K",
     0, 64, 64, 64, 90, 4096, 0, true, 0.58, 0, nullptr, 0, false, 0, 33, 4096, 0, 0, nullptr,
     false, false, false, false, 0, 0, 0, false, 128},
    {"hgemm_v42_split_k_wide_deep_ring",
     "v23 (v22 on 64x64 tiles) with a 6-stage ring: for outputs of at most 64 rows and at most "
     "SMs/2 tiles of 64x128, where wider tiles leave SMs idle",
     0, 64, 128, 64, 90},
    {"hgemm_v42_split_k_wide_deep_ring",
     "v42 on the transposed problem: for outputs of at most 64 columns and at most SMs/2 tiles "
     "of 128x64, where 128-wide tiles are half padding and leave SMs idle",
     0, 64, 128, 64, 90, 0, 0, true},
    // v45 where B's rows are 16- but not 128-byte aligned (each 128-byte box row of B straddles
    // two L2 lines; the cluster's multicast halves B's requests), on one round of its 256x128
    // cluster tiles that fills more than 60% of the SMs (40-66 on 132), with K >= 1088 and rows
    // padded at most 6% further than by 128-row tiles. B is read in place (no copy to 128-byte
    // rows: v45 in place beat the copy and the kernel after it on every such point swept).
    // Fitted to results/sweeps/pad-bunal-v45-* and pad-bcol-bunal-v45-* (`python
    // benchmarks/sweep.py --pad --pad-shapes <random outputs of 30-420 tiles of 128x128, K
    // 1024-8192, B's rows off 128 bytes> --kernels <v20, v21, v24, v28, v32, v43, v44, v45>`,
    // fp16 with B row-major and bf16 with B column-major, H200): 1.12x and 1.16x over what auto
    // ran on the 21 and 14 points it takes (0.95-1.51x; 3328x592x2176 44.0 -> 29.1 us). Held out
    // (pad-*bunal-v45-check-*, other seeds, fp16 both layouts): 1.13x and 1.16x on 12 and 11
    // points (0.92-1.36x). Where B's rows are on 128 bytes v45 was no faster than v21 (pad-*mid-v45-*);
    // past one round of its clusters, or with fewer of them, other tiles won. K stops at the
    // sweeps' 8192: past it the split rules below (v27, v28) keep the deep K they were fitted to.
    {"hgemm_v45_cluster_128x128",
     "v21's 128x128 tiles in 2-CTA clusters sharing B: for a B whose rows are 16- but not "
     "128-byte aligned (read in place), at least 384 rows and 256 columns, more than SMs x 0.3 "
     "and at most SMs/2 cluster tiles of 256x128 (one round), rows padded at most 6% past "
     "128-row tiles, 1088 <= K <= 8192 (sm_90a only)",
     0, 256, 128, 0, 90, 1088, 0, false, 2, 0, nullptr, 8192, false, 0, 384, 256, 0, 0, nullptr,
     false, false, false, false, 128, 10.0 / 3.0, 1.06, true},
    // v33 (results/sweeps/*-v33*): its 128x64 tiles double the blocks of v24's 128x128 ones,
    // where the tiles number at most the SMs. Faster than every other kernel swept with 112-128
    // rows (one row of tiles) and 1024 <= K <= 28672; with more rows only where K <= 2048 (past
    // it, a partly empty second row of tiles ran up to 1.6x slower than v24, and full rows split
    // further by v24/v28 kept up), or at most 8 tiles of a deep K; all with rows on 128 bytes
    // (1000^3, 1008^3: 13.4 and 9.0 us against v21's 9.9 and 8.1).
    {"hgemm_v33_split_k_n64",
     "v24 on 128x64 tiles: for outputs of 112-128 rows and at most SMs tiles of 128x64 with 768 "
     "<= K <= 32768 and rows on 128 bytes, where v24's 128x128 tiles are too few for its split "
     "to fill the SMs",
     0, 128, 64, 128, 90, 768, 0, false, 1, 0, nullptr, 32768, false, 0, 112, 0, 0, 128},
    // Where v33's rule after these would split few tiles over a short K (at least 97 rows,
    // 768 <= K <= 2048, rows on 128 bytes), v43's unsplit clusters: from K = 768 to 1536 on
    // outputs of at least 12 x 128 x 128 elements, and to 960 on smaller ones. Fitted to the six
    // sweeps of results/sweeps/pad-*mid-v43-* (fp16 and bf16, both layouts of B, H200; v43
    // against v33 by name): 1.10x on the 17 points they take from v33 (1.004-1.25x; 576x640x832:
    // 7.1 -> 5.7 us); on the 21 that they leave to it, v43 0.77-1.10x (fewer elements with K of
    // 1088-1472: 0.82-1.01x; K of 1600-2048: 0.77-1.10x).
    {"hgemm_v43_cluster_64x128",
     "v21 on 64x128 tiles in 2-CTA clusters sharing B: for outputs of at least 12 x 128 x 128 "
     "elements, at least 97 rows and at most SMs/2 tiles of 128x128 with 768 <= K <= 1536 and "
     "rows on 128 bytes, where 128x64 tiles' short split gains less than the clusters' shared B "
     "tiles (sm_90a only)",
     12 * 128 * 128, 128, 128, 0, 90, 768, 0, false, 2, 0, nullptr, 1536, false, 0, 97, 0, 0, 128},
    {"hgemm_v43_cluster_64x128",
     "v21 on 64x128 tiles in 2-CTA clusters sharing B: for outputs of at least 97 rows and at "
     "most SMs/2 tiles of 128x128 with 768 <= K <= 960 and rows on 128 bytes, where 128x64 "
     "tiles' short split gains less than the clusters' shared B tiles (sm_90a only)",
     0, 128, 128, 0, 90, 768, 0, false, 2, 0, nullptr, 960, false, 0, 97, 0, 0, 128},
    {"hgemm_v33_split_k_n64",
     "v24 on 128x64 tiles: for outputs of at least 97 rows and at most SMs tiles of 128x64 with "
     "768 <= K <= 2048 and rows on 128 bytes, where 128x128 tiles leave SMs idle and a short K "
     "gives their split little to share",
     0, 128, 64, 0, 90, 768, 0, false, 1, 0, nullptr, 2048, false, 0, 97, 0, 0, 128},
    // And from 2049 to 4096 on more than 128 rows and columns: on the points of
    // results/sweeps/hopper-random-* (random aligned shapes, each wgmma rung timed; `python
    // benchmarks/deep_small.py 150 --seed 17 --hopper` and `... --seed 18 --hopper --only
    // hgemm_v24_wgmma_split_k`) where auto ran v24 over at most SMs tiles of 128x64, v33 was 1.11x
    // faster (34 points, 0.86-1.44x; 1024x192x2752 10.9 -> 7.6 us), and 1.0-1.21x on the 3 such
    // points of narrow-v33-* and prefill-v33-*. With 128 columns it was level (0.88-1.33x, v21
    // 8% faster at 8192x128x4096); with a longer K 0.91-0.97x in the geometric mean, and over
    // more tiles 0.6-0.7x.
    {"hgemm_v33_split_k_n64",
     "v24 on 128x64 tiles: for outputs of more than 128 rows and columns and at most SMs tiles of "
     "128x64 with 2048 < K <= 4096 and rows on 128 bytes, where 128x128 tiles leave SMs idle",
     0, 128, 64, 0, 90, 2049, 0, false, 1, 0, nullptr, 4096, false, 0, 129, 129, 0, 128},
    {"hgemm_v33_split_k_n64",
     "v24 on 128x64 tiles: for outputs of at most SMs/16 tiles of 128x64 with K >= 8192 and rows "
     "on 128 bytes, where its split of up to 8 shares fills twice the SMs that v24's fills",
     0, 128, 64, 0, 90, 8192, 0, false, 16, 0, nullptr, 0, false, 0, 0, 0, 0, 128},
    // v33 on outputs of at most SMs/8 tiles of 128x128 with 1024 <= K <= 4096 whatever the
    // operands' row alignment (the rules above take rows on 128 bytes; below, v43 and v24 took
    // the rest). Fitted to results/sweeps/pad-small-r41-* (`python benchmarks/sweep.py --dtype
    // float16 --pad --pad-shapes <that file's shapes: 80 random outputs of 96-700 rows and
    // columns and at most 16 tiles of 128x128, K 640-4096> --kernels hgemm_v21_narrow_tile,
    // hgemm_v24_wgmma_split_k,hgemm_v28_split_k_global_narrow,hgemm_v33_split_k_n64,
    // hgemm_v43_cluster_64x128 --tag small-r41`, H200): of its 66 points with K >= 1024, v33 was
    // the fastest kernel by name on 56, v24 on 8 (8-16 tiles, K >= 2336, 0-9% ahead), v43 on 2
    // (15-16 tiles, K 1048-1368, 5-10%); below K = 1024 v43 on 12 of 14. On the 65 points the
    // rule moved: 1.13x over what auto ran (geometric mean), 0.91-1.44x (128x400x1720: v43 1.30x
    // v33's time). Held out, pad-bcol-small-r41-check-* (bf16, B column-major, 60 other random
    // points): v33 fastest on 47 of 51 with K >= 1024 (v24 on the other 4), v43 on all 9 below;
    // the 49 moved points 1.125x, 0.89-1.41x.
    {"hgemm_v33_split_k_n64",
     "v24 on 128x64 tiles: for outputs of at least 97 rows and at most SMs/8 tiles of 128x128 "
     "with 1024 <= K <= 4096, where v43's unsplit clusters and v24's 128x128 split leave SMs "
     "idle, whatever the rows' alignment past 16 bytes (sm_90a only)",
     0, 128, 128, 0, 90, 1024, 0, false, 8, 0, nullptr, 4096, false, 0, 97},
    {"hgemm_v27_split_k_global",
     "v20's 128x256 wgmma tile with K split over the SMs, the partial tiles summed in global "
     "memory: for outputs of at most SMs/4 wide tiles whose K shares are long, where it fills "
     "more SMs than v28 (deep K; sm_90a only)",
     0, 128, 256, 0, 90, 0, 0, false, 4, 22},
    {"hgemm_v24_wgmma_split_k",
     "v21's 128x128 wgmma tile with K split across a cluster of up to 8 blocks: for outputs of "
     "at most 128 rows or columns and at most SMs/2 tiles of 128x128 with K >= 2048 (a prefill "
     "of few rows: B is streamed once, and the cluster's reduction costs less than v28's; "
     "sm_90a only)",
     0, 128, 128, 0, 90, 2048, 128},
    // v28's shares of at least 4 (S - 1) k-tiles (results/sweeps/deep-late-dependents-*, with the
    // next launch's blocks placed once v28's have left): 1.08x over v24 on the 8 points of 4-6
    // (S - 1) k-tiles a share (0.96-1.27x); at 2-2.4 (S - 1) level (0.94-1.12x), so not from there.
    {"hgemm_v28_split_k_global_narrow",
     "v24's 128x128 wgmma tile with K split over the SMs in up to 16 shares, the partial tiles "
     "summed in global memory: for outputs of at most SMs/2 tiles of 128x128 whose K shares "
     "outweigh the partial tiles summed, K >= 8192 (deep K; sm_90a only)",
     0, 128, 128, 0, 90, 8192, 0, false, 2, 4},
    {"hgemm_v24_wgmma_split_k",
     "v21's 128x128 wgmma tile with K split across a cluster of up to 8 blocks: for outputs of "
     "at most SMs/11 tiles of 128x128 (every tile's cluster of 8 on the SMs at once) with "
     "K >= 2048, where v28's shares are too short for its reduction and v27's few wide tiles "
     "leave most SMs idle (sm_90a only)",
     0, 128, 128, 0, 90, 2048, 0, false, 11},
    {"hgemm_v27_split_k_global",
     "v27 split two or three ways: for outputs of at most SMs/2 wide tiles (too many 128x128 "
     "tiles for v28 to split) with K >= 32768 (sm_90a only)",
     0, 128, 256, 0, 90, 32768},
    // With 2048 <= K <= 3584 the rule below keeps v24 only up to SMs/5 tiles of 128x128, and v43
    // takes more than SMs/5 and at most SMs/2 (27-66 on 132 SMs), where a split of 2-4 shares
    // over few k-tiles gains less than v43's clusters sharing B. Fitted to
    // results/sweeps/pad-mid-tiles-r41-* (`python benchmarks/sweep.py --dtype float16 --pad
    // --pad-shapes <that file's shapes: 70 random outputs of 17-66 tiles of 128x128, K
    // 1024-4096> --kernels hgemm_v21_narrow_tile,hgemm_v24_wgmma_split_k,
    // hgemm_v28_split_k_global_narrow,hgemm_v33_split_k_n64,hgemm_v43_cluster_64x128 --tag
    // mid-tiles-r41`, H200): over 27-66 tiles with K 2048-3584 v43 ran 1.09x faster than v24 (28
    // points, 0.97-1.23x; 448x2048x2472 18.0 -> 14.7 us); at 17-26 tiles within the K band v24
    // was ahead on 4 of 5, and from K = 3728 v43 lost on 4 of 6 (0.87-1.00x). On the same family
    // in the earlier sweeps (pad-*mid-v43-*, pad-*-r41-*: 13 points the rules move, with both
    // timed) v43 was 1.07-1.16x faster (geometric mean per sweep; 1.01x at worst), and on the 7
    // of pad-band-r41-final-* 1.11x (0.95x at worst).
    {"hgemm_v24_wgmma_split_k",
     "v21's 128x128 wgmma tile with K split across a cluster of up to 8 blocks: for outputs of "
     "at most SMs/5 tiles of 128x128 with 2048 <= K <= 3584, where whole-K tiles leave SMs idle "
     "(sm_90a only)",
     0, 128, 128, 0, 90, 2048, 0, false, 5, 0, nullptr, 3584},
    {"hgemm_v43_cluster_64x128",
     "v21 on 64x128 tiles in 2-CTA clusters sharing B: for outputs of more than SMs/5 and at "
     "most SMs/2 tiles of 128x128 with 2048 <= K <= 3584, where v24's short split gains less "
     "than the clusters' shared B tiles (sm_90a only)",
     0, 128, 128, 0, 90, 2048, 0, false, 2, 0, nullptr, 3584},
    {"hgemm_v24_wgmma_split_k",
     "v21's 128x128 wgmma tile with K split across a cluster of up to 8 blocks: for outputs of "
     "at most SMs/2 tiles of 128x128 with K >= 2048, where whole-K tiles leave SMs idle "
     "(sm_90a only)",
     0, 128, 128, 0, 90, 2048},
    // 256-512 rows over more than SMs/2 (the rule above takes up to SMs/2, K >= 2048) and at most
    // 3 SMs/4 tiles of 128x128 with a long K: there the rule below ran v24 unsplit (a cluster of 2
    // per tile does not fit), one block per tile, leaving a quarter to a half of the SMs idle. On
    // results/sweeps/prefill-long-k-late-dependents-* (`python benchmarks/sweep.py --dtype float16
    // --prefill --pre-m 256,320,384,448,512 --pre-nk <N 2560-6144 x K 8192-28672> ... --tag
    // long-k-late-dependents`, command in sweep.py) v32 was faster than v24 on those points (72-96
    // tiles: at most SMs/2 tiles of 128x192, which v32 splits 2-3 ways) by 1.13x in the geometric
    // mean, 0.98x at worst, up to 1.35x; from 108 tiles on it was slower (0.70-0.85x: 72-88 tiles
    // of 128x192, more than SMs/2, so unsplit, against v24's 108-128 blocks). Below K = 8192 it was
    // not (384x4096x4096 0.91x, 256x6144x4096 0.87x).
    {"hgemm_v32_split_last_round_192",
     "v31 on 128x192 tiles: for outputs of 256-512 rows over more than SMs/2 and at most 3 SMs/4 "
     "tiles of 128x128 with K >= 8192, where one 128x128 tile per block leaves SMs idle for a "
     "long K (sm_90a only)",
     0, 128, 128, 512, 90, 8192, 0, false, 4.0 / 3.0, 0, nullptr, 0, false, 0, 256},
    // 256-512 rows over more than 3 SMs/4 (v32's rule above) and at most SMs tiles of 128x128
    // with K >= 8192, where the rule below runs v24 with one block per tile: v28 was faster on all
    // 40 such points of results/sweeps/prefill-long-k-late-dependents-* (H100; 1.022x geometric
    // mean, 1.00-1.07x; 512x4096x14336 89.9 -> 87.4 us), and on all 14 of prefill-v28-one-tile-*
    // (H200; 1.027x, 1.02-1.04x).
    {"hgemm_v28_split_k_global_narrow",
     "v24's tile with K split over the SMs, partial tiles summed in global memory: for outputs "
     "of 256-512 rows over more than 3 SMs/4 and at most SMs tiles of 128x128 with K >= 8192, "
     "where v24 runs one block per tile (sm_90a only)",
     0, 128, 128, 512, 90, 8192, 0, false, 1, 0, nullptr, 0, false, 0, 256},
    {"hgemm_v24_wgmma_split_k",
     "v21's 128x128 wgmma tile, one block per tile and K share: for outputs of at most SMs/2 "
     "tiles of 128x256 (about one 128x128 tile per SM) with K >= 4096, where it runs v21's tiles "
     "faster (sm_90a only)",
     0, 128, 256, 0, 90, 4096},
    // v43 where v21 would run on at most SMs/2 tiles of 128x128 (one round of its clusters):
    // the three fitted sweeps of results/sweeps/pad-mid-v43-* (`python benchmarks/sweep.py --pad
    // --pad-random ...`, random aligned shapes, commands in sweep.py's docstring; fp16 and bf16,
    // H200): on the 70 points where auto ran v21 on at most 66 tiles, v43 was 1.19-1.26x faster
    // in the geometric mean per sweep, 0.96x at worst (2728x144x272), up to 1.58x (128x160x1792:
    // 12.2 -> 7.7 us; v33's since, by the small-output rule above: 6.1 us). Past 66 tiles its
    // clusters take a second round (0.82x against auto over 36 points, 0.63-1.14x), and where
    // the split rungs above run, a longer K per tile favours them (v43 0.4-0.9x on most such
    // points).
    {"hgemm_v43_cluster_64x128",
     "v21 on 64x128 tiles in 2-CTA clusters sharing B: for outputs of at most SMs/2 tiles of "
     "128x128 that no split rung above takes, where v21 leaves SMs idle and every block's L2 "
     "traffic sets the pace (sm_90a only)",
     0, 128, 128, 0, 90, 0, 0, false, 2},
    // v28 (unsplit here: one block per tile, C stored from registers) where v21 would run more
    // than SMs/2 and at most SMs/1.15 tiles of 128x128 with 2304 <= K < 4096. Fitted to
    // results/sweeps/pad-band-r41-* (`python benchmarks/sweep.py --dtype float16 --pad
    // --pad-shapes <that file's shapes: 70 random outputs of 60-112 tiles of 128x128, K 512-4096>
    // --kernels hgemm_v20_hoisted_beta,hgemm_v21_narrow_tile,hgemm_v24_wgmma_split_k,
    // hgemm_v28_split_k_global_narrow,hgemm_v32_split_last_round_192,hgemm_v43_cluster_64x128,
    // hgemm_v44_tile_192x128 --tag band-r41`, H200): on the 29 points it moved from v21, 1.06x
    // (geometric mean), 0.97-1.21x (584x2072x3632: 29.0 -> 24.0 us); below K = 1000 v21 was
    // mostly ahead (v28 0.87-0.96x; 1.01x at 2232x504x768), between 1000 and 2300 mixed (the
    // next rule). Held out, pad-bcol-band-r41-check-*
    // (bf16, B column-major, 50 other random points): the 20 moved 1.03x, 0.97-1.10x.
    {"hgemm_v28_split_k_global_narrow",
     "v24's tile, one block per tile, C stored from registers: for outputs of more than SMs/2 "
     "and at most SMs/1.15 tiles of 128x128 with 2304 <= K < 4096, where it runs v21's tiles "
     "faster (sm_90a only)",
     0, 128, 128, 0, 90, 2304, 0, false, 1.15, 0, nullptr, 4095},
    // And with 1200 <= K < 2304 over at most SMs/1.57 tiles (84 on 132 SMs), where the same
    // sweeps had v28 ahead of v21 too: 15 such shapes, 27 timings over pad-*-r41-* and pad-v45-*
    // (which timed the others again), 1.06x, 0.945-1.18x (v28 behind on 4 timings, 1984x640x1472
    // the worst); from 90 tiles level (pad-v45-*: 1.00x over 18 points, 0.96-1.13x), and no
    // fitted point lies at 85-89 tiles, so the bound is not fitted there. Held out,
    // taken with the rule: pad-bcol-band-low-r41-check-* (bf16, B column-major, 36 random points
    // of 67-90 tiles, K 1100-2303): 1.05x over v21 on the 22 it takes, 0.95-1.17x.
    {"hgemm_v28_split_k_global_narrow",
     "v24's tile, one block per tile, C stored from registers: for outputs of more than SMs/2 "
     "and at most SMs/1.57 tiles of 128x128 with 1200 <= K < 2304, where it runs v21's tiles "
     "faster (sm_90a only)",
     0, 128, 128, 0, 90, 1200, 0, false, 1.57, 0, nullptr, 2303},
    {"hgemm_v21_narrow_tile",
     "v20 on 128x128 tiles: for outputs with at most half as many 128x256 tiles as the GPU has "
     "SMs, where v20 leaves SMs idle (sm_90a only)",
     0, 128, 256},
    {"hgemm_v21_narrow_tile",
     "v20 on 128x128 tiles: for outputs of at most 128 rows or columns, where v20's 128x256 "
     "tile is half padding or more (sm_90a only)",
     0, 0, 0, 0, 0, 0, 128},
    {"hgemm_v30_stream_k_wide",
     "v27's 128x256 wgmma tile under stream-K (equal runs of k-tiles across tiles, cut tiles "
     "summed in global memory): for outputs of more than SMs/2 and at most SMs/1.15 wide tiles "
     "with K >= 12288 and at most 1536 rows (groups of a block per row of tiles: taller outputs "
     "leave too few groups to balance), where v20's one tile per block leaves SMs idle for a long "
     "K (sm_90a only)",
     0, 128, 256, 1536, 90, 12288, 0, false, 1.15},
    // v44 where its 192x128 tiles take fewer rounds of the SMs, times their area, than 128x128
    // and 128x256 ones, within two rounds (wave_cost): one round of at most SMs tiles where
    // v21's take two and v20's one round of wider tiles, or two rounds where v20's take two. On
    // the four sweeps of results/sweeps/pad-*mid-v44-* (`python benchmarks/sweep.py --pad
    // --pad-random ...`, random aligned shapes of up to 300 tiles of 128x128, commands in
    // sweep.py's docstring; fp16, bf16 and a column-major B; H200) v44 was faster than the v20
    // auto ran on every such point (1.05-1.33x; 3688x600x1088 1.33x), and than v32 with K < 2048
    // (1.04-1.14x); against v32 with a longer K, whose split last round keeps every SM busy, it
    // was mixed (0.74-1.10x), and against v31 slower (0.91x): those keep their rules, the second
    // v44 rule below v31's taking only what v20 would run. Where the model favours v21's tiles
    // (at most SMs tiles of 128x128) v44 was slower on 149 of 163 points (0.29-1.27x), and where
    // it favours v20's (192x128 tiles in two rounds, 128x256 in one) on all 34 (0.58-0.91x). By
    // the same model v21 takes outputs whose 128x128 tiles cost less than both others: 1.20-1.52x
    // over the v20 auto ran on the 5 such points (2880x640x1984: 22.8 -> 15.0 us).
    {"hgemm_v44_tile_192x128",
     "v21 on 192x128 tiles: for outputs whose 192x128 tiles fill at most two rounds of the SMs "
     "in less time than 128x128 or 128x256 ones (a model of rounds), K < 2048 (sm_90a only)",
     0, 192, 128, 0, 90, 0, 0, false, 0, 0, nullptr, 2047, false, 0, 0, 0, 0, 0, nullptr, false,
     false, false, true},
    {"hgemm_v21_narrow_tile",
     "v20 on 128x128 tiles: for outputs whose 128x128 tiles fill at most two rounds of the SMs "
     "in less time than 192x128 or 128x256 ones (a model of rounds), K < 2048 (sm_90a only)",
     0, 128, 128, 0, 90, 0, 0, false, 0, 0, nullptr, 2047, false, 0, 0, 0, 0, 0, nullptr, false,
     false, false, true},
    // And with 768 <= K < 2048 where its last round is not split (results/sweeps/
    // pad-v32-short-k-*: `python benchmarks/sweep.py --dtype float16 --pad --pad-shapes <(M, N)
    // of 1024-7168 where the rule below takes K = 2048, at K = 768 and 1536> --kernels
    // hgemm_v20_hoisted_beta,hgemm_v21_narrow_tile,hgemm_v32_split_last_round_192 --tag
    // v32-short-k`): one round of 96-132 tiles of 128x192 (against v20's 70-96 wide ones), or
    // rounds whose last holds more than SMs/2 (252-264 and 380 tiles), ran 1.15-1.23x faster than
    // v20 on 26 of the 28 points the rule moved (1536x2048x1536 18.9 -> 16.0 us), level on the
    // two of 640 tiles; a split last round of 24-60 tiles ran 0.78-0.97x (the hand-off outweighs
    // short shares) but at 1024x4608 and 1280x3584 (1.08-1.27x), so those stay with v20.
    // Checked on other (M, N) at K = 1024 and 1792 in bf16 on an H100
    // (pad-v32-short-k-check-*): 1.18x over v20 on the 34 points it moved, 1.00x at worst. The
    // wave rules above take most of both sweeps' points since (v44, level with or ahead of v32:
    // pad-v32-short-k-*v44-*); this rule keeps 6 of the 44 fp16 points (4 at 1.15-1.17x over
    // v20, 2 level) and 18 of the 42 bf16 ones (2560x3584x768 and 1280x7168x768 stay on it). Both
    // sweeps have M and N of 1024-7168: the rule stops below 1024 rows or columns, which the model
    // would also take (tall narrow and short wide outputs) but no sweep has timed at this K.
    {"hgemm_v32_split_last_round_192",
     "v31 on 128x192 tiles: for outputs of at least 1024 rows and columns whose 128x192 tiles "
     "fill the rounds of the SMs better than 128x256 ones and leave no last round to split (a "
     "model of rounds), 768 <= K < 2048 (sm_90a only)",
     0, 128, 192, 0, 90, 768, 0, false, 0, 0, nullptr, 2047, false, 256, 1024, 1024, 0, 0,
     nullptr, false, false, true},
    {"hgemm_v32_split_last_round_192",
     "v31 on 128x192 tiles: for outputs whose 128x192 tiles fill the rounds of the SMs better "
     "than 128x256 ones (a model of rounds and split last rounds), K >= 2048 (sm_90a only)",
     0, 128, 192, 0, 90, 2048, 0, false, 0, 0, nullptr, 0, false, 256},
    {"hgemm_v31_split_last_round",
     "v20 with its last round of 128x256 tiles split along K over the SMs that round leaves "
     "idle: for outputs of more than one round of tiles whose last round holds at most SMs/2, "
     "K >= 3072 (sm_90a only)",
     0, 128, 256, 0, 90, 3072, 0, false, 0, 0, nullptr, 0, true},
    {"hgemm_v44_tile_192x128",
     "v21 on 192x128 tiles: for outputs whose 192x128 tiles fill at most two rounds of the SMs "
     "in less time than 128x128 or 128x256 ones (a model of rounds), where no split rung above "
     "takes them (sm_90a only)",
     0, 192, 128, 0, 90, 0, 0, false, 0, 0, nullptr, 0, false, 0, 0, 0, 0, 0, nullptr, false,
     false, false, true},
    {"hgemm_v21_narrow_tile",
     "v20 on 128x128 tiles: for outputs whose 128x128 tiles fill at most two rounds of the SMs "
     "in less time than 192x128 or 128x256 ones (a model of rounds), where no split rung above "
     "takes them (sm_90a only)",
     0, 128, 128, 0, 90, 0, 0, false, 0, 0, nullptr, 0, false, 0, 0, 0, 0, 0, nullptr, false,
     false, false, true},
    // v46 where v20 would run and B's rows are only 16-byte aligned (five 32-byte sectors per
    // 128-byte box row; at 32 or 64 bytes v46 was level with v20 or behind), with rows padded
    // at most 6% further by its 256-row cluster tiles than by 128-row ones. Where decide() copies
    // such a B to 128-byte rows (2^33 multiply-adds, 2048 rows) the copy stays, and v20 runs on
    // it: v46 in place beat that on 23 of the 27 such points swept (1.07x in the geometric mean,
    // 0.88-1.22x), but lost 10-12% on three of the largest (3640x4576x3816 0.88x) and no point
    // past 2^36 multiply-adds was swept, so the copy rule (fitted on its own sweeps) keeps them.
    // Fitted to results/sweeps/pad-bunal-wide-v46-* and pad-bcol-bunal-wide-v46-* (`python
    // benchmarks/sweep.py --pad --pad-shapes <random outputs of 66-800 tiles of 128x256, K
    // 1024-8192, B's rows off 128 bytes> --kernels <v20, v21, v31, v32, v44, v45, v46, v15>`,
    // fp16 with B row-major and bf16 with B column-major, H200) and held out on
    // pad-bunal-wide-v46-check-* (fp16, another seed): where no copy is made it takes 3 points of
    // each, 1.00-1.26x over what auto ran (1472x5504x1160 1.26x, 2224x1656x1616 1.18x). By name,
    // v46 ran 1.14-1.23x v20 (geometric mean per sweep) where B's rows were only 16-byte aligned
    // and the row tiles even, 0.89-1.01x where they were 32- or 64-byte aligned.
    {"hgemm_v46_cluster_128x256",
     "v20's 128x256 tiles in 2-CTA clusters sharing B: for a B whose rows are only 16-byte "
     "aligned, rows padded at most 6% past 128-row tiles, 1024 <= K <= 8192 (the K swept), "
     "where v20 would run (sm_90a only)",
     0, 256, 256, 0, 90, 1024, 0, false, 0, 0, nullptr, 8192, false, 0, 0, 0, 0, 0, nullptr, false,
     false, false, false, 32, 0, 1.06},
    {"hgemm_v20_hoisted_beta",
     "fastest Hopper rung, for outputs of at most one 128x256 tile per SM: persistent, "
     "warp-specialised wgmma + TMA, 4-stage ring, TMA-store epilogue through a borrowed stage "
     "(sm_90a only)",
     0, 128, 256, 0, 90, 0, 0, false, 1},
    {"hgemm_v20_hoisted_beta",
     "fastest Hopper rung: persistent, warp-specialised wgmma + TMA, 4-stage ring, TMA-store "
     "epilogue through a borrowed stage (beta tested once), programmatic dependent launch "
     "(sm_90a only)",
     0},
    // Reached on sm_90 only by problems below kPadMinMacs (no padded copies) with under-aligned
    // operands: where B is one of them, 4-29x faster than v01 on every such shape swept, in both
    // layouts of B (results/sweeps/pad-v34-*float16*); where only A or C is, v01 was faster
    // (1 x 4096 x 4099 and 1 x 4097 x 4096: 14 against 26-30 us).
    {"hgemm_v34_split_k_unaligned",
     "the Hopper rung that reads rows aligned to 2 bytes: for an under-aligned B where the "
     "problem is too small for the padded path's copies (sm_90a only)",
     0, 0, 0, 0, 90, 0, 0, false, 2, 0, nullptr, 0, false, 0, 0, 0, 0, 0, "B", true},
    // Below kPadMinMacs too, with an under-aligned C and an aligned B (an under-aligned B, in
    // either layout, takes the rule above; "C" counts B as well), where v01 would run and auto
    // pads instead: on results/sweeps/unaligned-padded-* (above) v34 was 1.1-1.9x faster than the
    // padded path on all 10 such points of 2-128 rows over at most SMs/4 tiles of 128x128
    // (12x46x704 with only C under-aligned: 11.7 -> 6.0 us), the padded path's copies and
    // launches costing more than the GEMM. One row: level (0.93-0.95x) or slower. From K =
    // kV34PadK on at most kV34PadTiles tiles the padded path's split stays (111x22x34272: 14.9
    // against v34's 24.8). Above kPadMinMacs (33-127 x 4096-4099 x 2053-4099,
    // results/sweeps/pad-v34-bcol-*) it was level.
    {"hgemm_v34_split_k_unaligned",
     "v24 reading under-aligned operands in place (C stored by elements): for problems below the "
     "padded path's size with an under-aligned C, 2-128 rows and at most SMs/4 tiles of 128x128, "
     "where the copies and launches would outweigh the loop (sm_90a only)",
     0, 128, 128, 128, 90, 0, 0, false, 4, 0, nullptr, 0, false, 0, 2, 0, 0, 0, "C", true},
    {"hgemm_v09_raster", "fastest mma.sync rung: 128x256x64 tiles, 3-stage cp.async, L2-friendly order",
     int64_t(1) << 21},
    {"hgemm_v07_multistage",
     "fastest mma.sync rung for small outputs, and within 99 KiB of shared memory (sm_86/89)", 0},
    {"hgemm_v05_reg_prefetch", "fastest tensor-core rung without cp.async (sm_75)", 0},
    {"hgemm_v01_mma", "tensor-core rung without 16-byte vector access", 0},
};
const std::vector<AutoRule> kSgemmRules = {
    // One 128x128 tile with K >= 12288, whatever its rows: v20's split (a share per SM) was
    // 1.2-3.0x faster than v19's cluster of up to 8 blocks on 14 of the 15 such random points of
    // results/sweeps/deep-v20-random-float32-* with at most 16 rows or columns (1-126 x 8-109, K
    // 13052-35551) and 17% slower on the other. On two tiles and with K < 12288 v19 was the
    // faster then, against v20's 128x128 tile (the short-side rules below take v20's newer tiles
    // there).
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel: for an output of one "
     "128x128 tile with K >= 12288, where a cluster's split of at most 8 blocks leaves most SMs "
     "idle",
     0, 128, 128, 0, 90, 12288, 0, false, 100},
    // Outputs whose shorter side is 129-768 over at most 28 tiles of 128x128 with K >= 2048,
    // every operand 16-byte aligned: v21 (v20's split with no owner on v17's three-stage loop and
    // v18's 64-wide tiles at three blocks per SM) was 1.19x faster than the kernel auto ran (v12,
    // v16, v18 or v20; geometric mean, 0.88-1.79x) on all 21 such points of
    // results/sweeps/deep-aligned-s18-float32-* (`python benchmarks/narrow_fp32.py 150 --seed 18 --deep
    // --aligned`, H100; 384x192x21120: 112.8 -> 77.2 us, 192x704x8320: 104.1 -> 69.8), 1.03x
    // torch.matmul where auto had been 0.87x. There v18's cluster split stops at 8 shares and
    // v20's blocks run v09's loop. Over more tiles, and on under-aligned operands
    // (results/sweeps/deep-s16-*, deep-s17-*: 4-byte copies), it was level or slower.
    {"sgemm_v21_split_k_reduce_multistage",
     "v20's split with no owner on v17's three-stage loop (64x128 / 128x64 tiles at three blocks "
     "per SM): for outputs whose shorter side is 129-768 over at most SMs/4.7 tiles of 128x128 "
     "with K >= 2048 and every operand 16-byte aligned, where v18's cluster split stops at 8 "
     "shares and v20's blocks run v09's loop",
     0, 128, 128, 0, 90, 2048, 768, false, 4.7, 0, nullptr, 0, false, 0, 129, 129, 0, 16},
    // v20 takes 32-wide tiles along a side of at most 32, 64-wide ones along 33-64 (its header),
    // and then on results/sweeps/narrow-v20-float32-* (H100; one side 8-128, the other 129-4096,
    // K 2048-40000; `python benchmarks/narrow_fp32.py 60 --seed 11`):
    // - at most 16 rows or columns and another side of at most 384 (3 tiles), K >= 7168: 1.7-3.1x
    //   faster than v19 on all 5 such points (9-16 x 136-350, K 7702-36689); with the other side
    //   621-1226 v19 was 12-21% faster, and at K 2239-5010 level;
    // - 17-128 rows or columns and another side of at most 3072 (24 tiles), K >= 2048: 1.15-3.1x
    //   faster than auto's v12, v16, v18 or v19 on all 18 such points (18-115 x 270-2984, 37x616x
    //   31932: 236.4 -> 76.2 us); past 3072 (3244-4062) mixed, 0.91-1.21x.
    // Checked on the 508 problems of the older fp32 sweeps with a short side of at most 128, a
    // long one of at most 3072 and K >= 1024, in their layouts (results/sweeps/short-side-v20-*,
    // `... 0 --recheck`): where these rules run v20, against the kernel auto ran before (a flip
    // rule's on the transposed problem; geometric mean, slowest point): 1.98x (1.39x) on 25
    // points of at most 16 rows or columns, 1.61x (0.96x) on 28 of 17-32, 1.36x (1.08x) on 38 of
    // 33-64, 1.09x (0.97x) on 73 of 65-128. At 65-128 with K >= 16384 v16's rule below stays
    // (128x2048x16384 and x32768: v16 4% and 7% faster).
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel, on 32-wide tiles along "
     "the short side: for outputs of at most 16 rows or columns over at most SMs/44 tiles of "
     "128x128 with K >= 7168, where a cluster's split of at most 8 blocks leaves most SMs idle",
     0, 128, 128, 0, 90, 7168, 16, false, 44},
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel, on 32- or 64-wide "
     "tiles along the short side: for outputs of 17-64 rows or columns over at most SMs/5.5 "
     "tiles of 128x128 with K >= 2048, where the split kernels' clusters of at most 8 blocks "
     "leave SMs idle",
     0, 128, 128, 0, 90, 2048, 64, false, 5.5, 0, nullptr, 0, false, 0, 17, 17},
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel, on 128-wide tiles "
     "along the short side: for outputs of 65-128 rows or columns over at most SMs/5.5 tiles of "
     "128x128 with 2048 <= K < 16384, where the split kernels' clusters of at most 8 blocks "
     "leave SMs idle",
     0, 128, 128, 0, 90, 2048, 128, false, 5.5, 0, nullptr, 16383, false, 0, 65, 65},
    // Outputs whose shorter side is 33-64 over more tiles than v20's rule above takes, up to
    // SMs/3 tiles of 128x128 (25-44 on 132 SMs), with K >= 2048 and every operand 16-byte
    // aligned: v21's 64-wide tiles were 1.11x faster than the kernel auto ran (v18; v12 on 2048
    // or more rows with K < 4096) on the 24 such points of results/sweeps/deep-short33-128-
    // aligned-s19-float32-* (`python benchmarks/narrow_fp32.py 120 --seed 19 --deep --aligned
    // --short 33-128`, H100; 4% slower at worst) and 1.06x on the 7 of deep-aligned-s18-* (9%
    // slower at worst, 4800x64x6336 FC). On the 52 problems of the older sweeps it takes, timed
    // again (v21-rows-recheck-*, `... 0 --recheck-v21-rows`): 1.11x on an H200 (9% slower at
    // worst, 4800x64x6336 FC again; 64x4096x14336 201.4 -> 170.4 us, 64x4096x4096 62.4 -> 56.2),
    // 1.09x on an H100 (11% slower at worst). Over
    // 45-66 tiles the two were level (0.84-1.17x; v18 ahead at K = 8192): v18's rule keeps them.
    {"sgemm_v21_split_k_reduce_multistage",
     "v20's split with no owner on v17's three-stage loop (64-wide tiles along the short side, "
     "three blocks per SM): for outputs whose shorter side is 33-64 over at most SMs/3 tiles of "
     "128x128 with K >= 2048 and every operand 16-byte aligned, where v18's cluster split of at "
     "most 8 leaves SMs idle",
     0, 128, 128, 0, 90, 2048, 64, false, 3, 0, nullptr, 0, false, 0, 33, 33, 0, 16},
    // The same with an under-aligned operand (4-byte copies) up to SMs/2.4 tiles (25-55): v21
    // was faster than v18 or v12 on results/sweeps/deep-short33-64-s20-* (`python
    // benchmarks/narrow_fp32.py 70 --seed 20 --deep --short 33-64`, H100), deep-s16-* and
    // deep-s17-*, and on the older sweeps' problems timed again on an H100 (v21-rows-recheck-*):
    // see test_select_fp32_v21_rows_follows_the_sweeps for the figures; 42x4109x9153 179 -> 146
    // us. Over 56-66 tiles it was 6% slower in the geometric mean (33x8192x8192, 63x8192x8192:
    // 0.86-0.91x), and over more mixed (0.79-1.15x).
    {"sgemm_v21_split_k_reduce_multistage",
     "v20's split with no owner on v17's three-stage loop (64-wide tiles along the short side, "
     "three blocks per SM): for outputs whose shorter side is 33-64 over at most SMs/2.4 tiles "
     "of 128x128 with K >= 2048 and an under-aligned operand, where v18's cluster split of at "
     "most 8 leaves SMs idle",
     0, 128, 128, 0, 90, 2048, 64, false, 2.4, 0, nullptr, 0, false, 0, 33, 33, 0, 0, "ABC"},
    // Outputs of at most 32 rows or 16 columns: v19 (v10 with B and A copied through a cp.async
    // ring, S from the device's cluster capacity) against v10, v12 and v18, fitted to three
    // sweeps (H100; N or M 1024-28672, K 3584-14336): results/sweeps/rows-m1-64-v19-cluster-* (B
    // row-major, 11 (N, K) of model layers), rows-bcol-m1-64-v19-cluster-* (B column-major,
    // B = W^T, 6 of them) and narrow-n1-16-v19-cluster-* (few columns, run transposed). Time of
    // the fastest of the others over v19's, geometric mean (range):
    //   rows          17-32: 1.10x (0.85-1.67)  9-16: 1.48x (1.23-1.71)  5-8: 1.11x (1.05-1.19)
    //                 1-4: 1.03x (0.93-1.09)
    //   rows, B = W^T 17-32: 1.32x (1.04-1.73)  9-16: 1.44x (1.24-1.58)  5-8: 1.11x (0.99-1.22)
    //                 1-4: 1.02x (0.97-1.07)
    //   columns       9-16: 1.50x (1.27-1.70)   5-8: 1.14x (0.99-1.22)   1-4: 1.03x (0.97-1.08)
    // At 17-32 rows with a row-major B, v19's 32-row tiles (bound by FMA issue) were 4-67% faster
    // on outputs of at most 80 tiles of 32x64 (N <= 5120) and v12 3-15% faster from 96 tiles.
    // Rows first: an output of at most 16 rows and columns is read by its rows.
    {"sgemm_v19_split_k_ring",
     "4-, 8- or 16-row tiles, B and A copied through a cp.async ring, K split across a cluster "
     "as the device's cluster capacity fits: for outputs of at most 16 rows (decode), where "
     "tiled rungs leave SMs idle and v10's loads of B into registers keep too few bytes in flight",
     0, 0, 0, 16, 90},
    {"sgemm_v19_split_k_ring",
     "v19 on the transposed problem: for outputs of at most 16 columns (narrow N), whose "
     "transpose is a decode GEMM",
     0, 0, 0, 16, 90, 0, 0, true},
    // Outputs of a few 128x128 tiles with a deep K, at least 17 rows and columns: v20 splits K
    // in as many shares as one round of blocks holds (one per SM), where the clusters of
    // v12/v18/v19 stop at 8 and v16 at 16. Fitted to results/sweeps/deep-v20-float32-* (H100;
    // M 33-512, N 128-2048, K 8192-32768, at most 16 tiles; v12, v16, v18, v20 at one block per
    // SM) and 220 random points (M 1-1024, N 8-2048, K 1024-40000, at most 64 tiles; auto, v16,
    // v18, v19, v20): deep-v20-random-two-blocks-* (v20 at two blocks per SM; auto as before
    // v20) and deep-v20-random-* (one block per SM, 9% faster in the geometric mean). v20 was
    // the fastest on every swept point of at most 4 tiles with 33 or more rows and columns (up to
    // 4.6x over v18 at 53x92x20438), and of 5-8 tiles at 65-128 or more than 192 rows; over 9-16
    // tiles (S <= 8 at one block per SM, v16's 16 at two) at 96 rows (3.5-6%) and elsewhere with
    // K = 8192 (2.5% over v16), v16 3.5-4% ahead from 16384 on. Over at most 2 tiles with 4096
    // <= K < 8192 it was 1.9-3.7x faster than auto's v12, v16 or v19 on all 9 random points
    // (17-235 rows and columns), and at 17-32 rows or columns with K >= 8192 on all 5. v18's
    // 64-row tiles were 2-15% faster at 33-64 rows over 8 tiles and at 192 rows over 8-16. At
    // most 16 rows or columns v19 (the rules above) was faster. (All on v20's 128x128 tile.)
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel: for outputs of at "
     "least 17 rows and columns over at most SMs/66 tiles of 128x128 with K >= 4096, where "
     "cluster splits of at most 8 blocks leave most SMs idle",
     0, 128, 128, 0, 90, 4096, 0, false, 66, 0, nullptr, 0, false, 0, 17, 17},
    // Down to K = 1024 on at most 4 tiles (results/sweeps/tiles-float32-*: random shapes that
    // auto ran tiled, H100): v20 was 1.2-3x faster than auto's v12 or v18 on all 10 such points
    // with 33 or more rows and columns and 1081 <= K < 4096 (56x63x3381: 33.5 -> 12.4 us), as on
    // the 8 of deep-v20-random-* (1280 <= K <= 3402: 1.3-2.2x); level at K = 835. (That was v20's
    // 128x128 tile; on its tiles along a short side of at most 64 it was faster still on the
    // problems of short-side-v20-*, and from K = 2048 the short-side rules above decide.)
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel: for outputs of at "
     "least 33 rows and columns over at most SMs/33 tiles of 128x128 with K >= 1024",
     0, 128, 128, 0, 90, 1024, 0, false, 33, 0, nullptr, 0, false, 0, 33, 33},
    // Six tiles of 128x128 on 257-384 rows by 129-192 columns with K >= 6144 (H200:
    // results/sweeps/pad-six-tiles-tall-float32-*, 14 random such outputs): v21's 128x64 tiles
    // (three cover the columns where 128-wide ones pad them to 256, each SM a share) were
    // 1.14-1.27x faster than the v20 that the rules below run on all 12 points with K >= 6144
    // (272x130x18914: 106.0 -> 83.7 us), level at K = 4315-5424 (0.98-1.05x); and 1.13-1.27x on
    // all 8 such points of the earlier sweeps (pad-*six-tiles-check-*, pad-*half-edge-deep-*,
    // both layouts of B). Held out (pad-*six-tiles-tall-check-*, 20 points, taken with the
    // rule): 1.13-1.26x over v20 on all 10 it takes. From 193 columns (354x193x13512) v20 was
    // faster; on the mirror, 129-192 rows by more columns, v21's 64x128 tiles were 1.07-1.40x
    // slower than v20. Every fitted point has at least 257 rows (three rows of tiles): the rule
    // states that band itself, so that on a GPU of fewer SMs, where SMs/33 leaves the 2x2
    // outputs of 193-256 rows to it, v20 keeps them (236x138x7904: v21 at 0.87x of v20's speed).
    {"sgemm_v21_split_k_reduce_multistage",
     "v20's split with no owner on v17's three-stage loop and 128x64 tiles: for outputs of "
     "257-384 rows and 129-192 columns over at most SMs/22 tiles of 128x128 with K >= 6144, "
     "where three 64-wide tiles cover the columns that 128-wide ones pad to 256",
     0, 128, 128, 384, 90, 6144, 192, false, 22, 0, nullptr, 0, false, 0, 257, 129},
    // Five or six tiles of 128x128 (2x3, 3x2) with at least 129 rows and columns and K >= 2048
    // (H200: results/sweeps/pad-*half-edge-deep-float32-*, random outputs whose shorter side
    // ends 1-64 past a multiple of 128 with K 1024-32768, and pad-six-tiles-short-k-*, 5-6 tiles
    // with K 1080-3728). v18 splits the nine 64x128 tiles of such an output over clusters of at
    // most 8 blocks (72 blocks for 132 SMs) and v12 likewise; v20 gives each SM a share. v20 was
    // 1.33-1.62x faster than auto's v18 on all five points with K >= 4096 (172x285x23872: 203 ->
    // 126 us) and 1.27-1.53x faster than auto's v12 on all 11 with 2048 <= K < 4096; with K of
    // 1280-2024 1.09-1.40x (1.09-1.18x up to 1352), and on the H100's tiles-float32-* v20 ran
    // 192x384x1536 at 0.83x of v18's speed, 0.87x of v12's: the bound is 2048. On the H100's committed sweeps that
    // the rule moves (tiles-edge-*, deep-s16-*, deep-s17-*), 1.26-1.52x on all 7 points. Held
    // out (pad-*six-tiles-check-*, 32 random outputs of 5-6 tiles, K 2048-32768, taken with the
    // bound at 4096): the 9 points it moved then ran 1.43-1.66x faster, and the 5 with K < 4096
    // ran 1.34-1.43x faster on v20 than on auto's v12. From 8 tiles on, v18 and v21 were as fast
    // or faster.
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel: for outputs of at "
     "least 129 rows and columns over at most SMs/22 tiles of 128x128 with K >= 2048, where "
     "v18's cluster splits of at most 8 blocks (or v12's) leave SMs idle",
     0, 128, 128, 0, 90, 2048, 0, false, 22, 0, nullptr, 0, false, 0, 129, 129},
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel: for outputs of "
     "65-128 rows and at least 65 columns over at most SMs/16.5 tiles of 128x128 with K >= "
     "8192",
     0, 128, 128, 128, 90, 8192, 0, false, 16.5, 0, nullptr, 0, false, 0, 65, 65},
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel: for outputs of more "
     "than 192 rows and at least 65 columns over at most SMs/16.5 tiles of 128x128 "
     "with K >= 8192",
     0, 128, 128, 0, 90, 8192, 0, false, 16.5, 0, nullptr, 0, false, 0, 193, 65},
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel: for outputs of "
     "65-96 rows and at least 65 columns over at most SMs/8.25 tiles of 128x128 with K >= 8192",
     0, 128, 128, 96, 90, 8192, 0, false, 8.25, 0, nullptr, 0, false, 0, 65, 65},
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel: for outputs of "
     "97-128 rows and at least 65 columns over at most SMs/8.25 tiles of 128x128 with "
     "8192 <= K < 12288",
     0, 128, 128, 128, 90, 8192, 0, false, 8.25, 0, nullptr, 12287, false, 0, 97, 65},
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel: for outputs of more "
     "than 192 rows and at least 65 columns over at most SMs/8.25 tiles of 128x128 "
     "with 8192 <= K < 12288",
     0, 128, 128, 0, 90, 8192, 0, false, 8.25, 0, nullptr, 12287, false, 0, 193, 65},
    // Tall narrow outputs (more than 128 rows, 23-128 columns) over at most 8 tiles: on 60
    // random points of N (or M) 8-128 by 129-4096 with K 2048-40000
    // (results/sweeps/narrow-v20-float32-*), v20 was 1.4-2.4x faster than the kernel auto ran
    // (v12, v16) on all 7 such points it did not already run (249x60x3022: 34.6 -> 14.5 us;
    // 267x23x25947: 171.7 -> 75.8). Over more tiles, v12 and v18's 64-wide tiles kept most
    // outputs of under 64 columns faster (3556x30x11296: 117 against 328), and below 23 columns
    // v19 transposed; from 1024 rows v19 transposed or v18 (below: 1174x34x25131 182 against
    // v20's 221). Outputs with few rows keep the rules fitted to the row sweeps.
    {"sgemm_v20_split_k_reduce",
     "v16's split with no owner, a share per SM summed by a second kernel: for outputs of "
     "129-1023 rows and 23-128 columns over at most SMs/16.5 tiles of 128x128 with K >= 2048, "
     "where the narrow side's splits leave most SMs idle",
     0, 128, 128, 1023, 90, 2048, 128, false, 16.5, 0, nullptr, 0, false, 0, 129, 23},
    {"sgemm_v19_split_k_ring",
     "v19 on 32-row tiles: for outputs of 17-32 rows with a column-major B (B = W^T), where "
     "v12's loads of B are slower",
     0, 0, 0, 32, 90, 0, 0, false, 2, 0, nullptr, 0, false, 0, 17, 0, 2},
    {"sgemm_v19_split_k_ring",
     "v19 on 32-row tiles: for outputs of 17-32 rows over at most SMs/1.65 tiles of 32x64, "
     "where v12's split fills the SMs less well",
     0, 32, 64, 32, 90, 0, 0, false, 1.65, 0, nullptr, 0, false, 0, 17},
    // Outputs of 33-64 rows and at least 1024 columns over at most 64 tiles of 32x64 (N <= 2048
    // at 64 rows): v19's 32-row tiles were 13-36% faster than v18 on all 4 such points of
    // results/sweeps/rows-m1-64-v19-cluster-* (48 and 64 rows, N 1024 and 2048), 2-21% slower on
    // the 18 points over more tiles (v18's 64x128 tiles fill the SMs there). Smaller outputs
    // were not measured.
    {"sgemm_v19_split_k_ring",
     "v19 on 32-row tiles: for outputs of 33-64 rows and at least 1024 columns over at most "
     "SMs/2.0625 tiles of 32x64, where v18's 64x128 tiles leave SMs idle",
     0, 32, 64, 64, 90, 0, 0, false, 2.0625, 0, nullptr, 0, false, 0, 33, 1024},
    // Outputs of 33-64 rows: v18 (v12's split on v17's three-stage loop) was 4-7% faster than
    // v12 on all 21 points of results/sweeps/rows-m33-127-float32-* (H100; N 4096-14336, K 777-
    // 14336); on 32 rows its 64-row tile is half padding (v12's 32-row one is not).
    {"sgemm_v18_split_k_multistage",
     "v12's 64x128 tiles and cluster split of K on v17's three-stage cp.async loop: for outputs "
     "of 33-64 rows (and at least 33 columns), where v12's two-stage loop waits on its copies",
     0, 0, 0, 64, 90, 0, 0, false, 2, 0, nullptr, 0, false, 0, 33, 33},
    // Outputs of 33-64 columns and at least 1024 rows over at most 64 tiles of 32x64 in the
    // transposed problem (M <= 2048 at 64 columns): v19's 32-row tiles on C^T, the rows rule's
    // mirror, were 4-16% faster than v18 and 22-48% faster than v12 on all 3 such points of
    // results/sweeps/narrow-n33-192-v18-blocks3-float32-* (2048 x 33, 48, 64 x 4096; H100).
    {"sgemm_v19_split_k_ring",
     "v19 on 32-row tiles of the transposed problem: for outputs of 33-64 columns and at least "
     "1024 rows over at most SMs/2.0625 tiles of 32x64, where v18's 128x64 tiles leave SMs idle",
     0, 32, 64, 64, 90, 0, 0, true, 2.0625, 0, nullptr, 0, false, 0, 33, 1024},
    // Outputs whose shorter side is 65-128 over more tiles than v20's rules above take, with K >=
    // 4096 and an under-aligned operand: one 128-wide tile covers that side, so v18's two 64-wide
    // ones save it no padding, and v16's split (up to 16 shares by its round model, at two blocks
    // per SM) was faster than v18's cluster of up to 8 on 13 of the 17 such random points of
    // results/sweeps/deep-s16-float32-* and deep-s17-* (`python benchmarks/narrow_fp32.py 150
    // --seed 16 --deep` and seed 17, H100; 12-60 tiles, K 4100-36106), by 6-31% (6250x81x29150: 1649 -> 1262 us,
    // 123x6556x18663: 1048 -> 825), and 3-6% slower on 4 (with a column-major A, where v16's
    // instantiation runs one block per SM). Aligned outputs of 96 and 128 rows keep the rules
    // below (rows-v18-blocks3-*: mixed between the two).
    {"sgemm_v16_split_k_waves",
     "v16 for outputs whose shorter side is 65-128 over at most SMs/2 tiles of 128x128 with K >= "
     "4096 and an under-aligned operand, where v18's 64-wide tiles save no padding and its "
     "cluster split of up to 8 fills the SMs less than v16's round model",
     0, 128, 128, 0, 90, 4096, 128, false, 2, 0, nullptr, 0, false, 0, 65, 65, 0, 0, "ABC"},
    // Outputs of 33-192 columns and at least 2048 rows with K >= 4096: v18's 128x64 tiles at three
    // blocks per SM were the fastest of v12, v16 and v18 on 20 of the 27 other points of
    // results/sweeps/narrow-n33-192-v18-blocks3-float32-* (M 2048-16384, K 4096-14336; H100), by
    // 4-37% over v12 at 33-64 columns and 14-52% over v16 (and v09) at 192; v16 was up to 3.5%
    // faster on the others (96 and 128 columns).
    {"sgemm_v18_split_k_multistage",
     "v18's 128x64 tiles at three blocks per SM: for outputs of 33-192 columns and at least 2048 "
     "rows with K >= 4096, where v12's two-stage loop waits on its copies and v16's 128-column "
     "tiles are padding",
     0, 0, 0, 0, 90, 4096, 192, false, 2, 0, nullptr, 0, false, 0, 2048, 33},
    {"sgemm_v12_split_k_narrow",
     "v11 on 64x128 or 128x64 tiles (32x128 or 128x32 up to 32 rows or columns): for outputs of "
     "at most 64 rows or columns, where v11's tile is at least half padding",
     0, 0, 0, 0, 90, 0, 64},
    // Outputs of 65-128 rows over at most 16 tiles of 128x128 (N <= 2048) with K >= 16384: v16's
    // split of up to 16 shares was 2-22% faster than v18's of up to 8 on all 4 such points of
    // results/sweeps/rows-v18-blocks3-deep-m96-192-float32-* (96 and 128 rows, 1024x32768 and
    // 2048x16384; at 192 rows v18 was 9-14% faster).
    {"sgemm_v16_split_k_waves",
     "v16 for outputs of 65-128 rows over at most SMs/8.25 tiles of 128x128 with K >= 16384, "
     "where its split of up to 16 shares fills more of the SMs than v18's of up to 8",
     0, 128, 128, 128, 90, 16384, 0, false, 8.25, 0, &kSgemmV16Split, 0, false, 0, 65},
    // Outputs of 65-192 rows with at least 1024 columns and K >= 1024: v18 at three blocks per
    // SM was the fastest of v12, v16 and v18 on 59 of the 60 points of
    // results/sweeps/rows-v18-blocks3-m65-192-float32-* (H100; 72-192 rows, N 1024-28672, K
    // 1024-18944), by 1-20% over v16 at 72-128 rows and 5-35% over v12 and v16 at 160-192 (v09,
    // which auto ran at 160-192x15360x5120, 26% slower); v16 was 5% faster on the other
    // (128x3584x18944). With K >= 12288 (rows-v18-blocks3-deep-*), v18 was faster on all 8
    // points at 192 rows and 6 of 8 at 96, and v16 on 5 of 8 at 128 rows (by 4-9% where N is
    // 3584 or 5120; v18 by 5-6% where it is 4096 or 8192): v16's unpadded 128-row tile on a deep
    // K, with no rule in that pattern.
    {"sgemm_v18_split_k_multistage",
     "v18's 64x128 tiles at three blocks per SM (v12's split of K on v17's three-stage loop): for "
     "outputs of 65-192 rows and at least 1024 columns with K >= 1024, where v16's 128-row tiles "
     "are padding past 128 rows and its blocks run v09's two-stage loop",
     0, 0, 0, 192, 90, 1024, 0, false, 2, 0, nullptr, 0, false, 0, 65, 1024},
    // Outputs of 193-768 rows with at least 3584 columns and 4096 <= K < 16384: v18's 64x128
    // tiles at three blocks per SM were 3-9% faster than v16 (auto's pick there, v09 on
    // 256x15360x5120) on all 20 such points of results/sweeps/rows-v18-wide-m256-1024-float32-*
    // (256-768 rows, N 4096-28672, K 4096-14336; H100); with K = 18944 v16's split of up to 16
    // shares was 4-10% faster on all 4, and at 1024 rows v17 took 3 of 6.
    {"sgemm_v18_split_k_multistage",
     "v18's 64x128 tiles at three blocks per SM: for outputs of 193-768 rows and at least 3584 "
     "columns with 4096 <= K < 16384, where v16's eight-warp blocks run v09's two-stage loop",
     0, 0, 0, 768, 90, 4096, 0, false, 2, 0, nullptr, 16383, false, 0, 193, 3584},
    // Outputs of 65-128 rows over at most 16 tiles of 128x128 with 1024 <= K <= 4096: v18, whose
    // edge tiles move inside along M, was 5-18% faster than v12 and v16 on all 23 such points of
    // results/sweeps/rows-m65-160-inside-* and rows-m65-191-inside-* (H100; 8 and 16 tiles, K
    // 1024-4096, 65-128 rows). On so few tiles both kernels' splits fill one round of blocks
    // alike (v18: up to 8 shares of 64-row tiles, v16: up to 16 of 128-row ones), and v18's
    // three-stage loop is the faster.
    {"sgemm_v18_split_k_multistage",
     "v18's 64x128 tiles (v12's split of K on v17's three-stage loop): for outputs of 65-128 "
     "rows over at most 16 tiles of 128x128 with 1024 <= K <= 4096, where its split fills the "
     "SMs as v16's does and its loop is the faster",
     0, 128, 128, 128, 90, 1024, 0, false, 8.25, 0, nullptr, 4096, false, 0, 65},
    {"sgemm_v12_split_k_narrow",
     "v12's four-warp 64x128 or 128x64 tiles (twice as many as 128x128 ones, two blocks per SM), "
     "K split across a cluster: for outputs of at most 16 tiles of 128x128 with K <= 2048, where "
     "a 128x128 block of v11 or v16 runs its share of K at half the warps per FMA",
     0, 128, 128, 0, 90, 0, 0, false, 8.25, 0, nullptr, 2048},
    {"sgemm_v12_split_k_narrow",
     "v12 for outputs of at most 6 tiles of 128x128 with K <= 4096 (the same trade; past 6 "
     "tiles, v16's split of up to 16 shares is the shorter)",
     0, 128, 128, 0, 90, 0, 0, false, 22, 0, nullptr, 4096},
    {"sgemm_v11_split_k_tile",
     "v09's 128x128 tile with K split across a cluster of up to 8 blocks, summed through "
     "distributed shared memory: for outputs of at most 64 tiles of 128x128 with K <= 512, "
     "where the short shares make v16's reduction through global memory the larger cost",
     0, 128, 128, 0, 90, 0, 0, false, 2.0625, 0, nullptr, 512},
    // Outputs of 129-192 rows (and more columns) where v16 would split K: v18 on the same 64x128
    // tiles as v12 below, with v17's three-stage loop, was 1-13% faster than both v12 and v16 on
    // all 18 points at 160 and 192 rows of results/sweeps/rows-m80-192-float32-* (H100).
    {"sgemm_v18_split_k_multistage",
     "v18's 64x128 tiles (v12's split of K on v17's three-stage loop): for outputs of 129-192 "
     "rows and more columns where v16's model splits K, where v16's 128-row tiles are a quarter "
     "or more padding and v12's two-stage loop waits on its copies",
     0, 0, 0, 192, 90, 0, 0, false, 2, 0, &kSgemmV16Split, 0, false, 0, 129, 193},
    // Outputs of 129-192 rows where v16 would split K: v12's 64-row tiles cover 192 rows
    // exactly where v16's 128-row ones pad them to 256; v12 was 5-26% faster at 192 rows on all
    // five (N, K) of results/sweeps/prefill-v18-float32-* (H100), v16 at 128 and from 256 rows;
    // checked after at 144-176 rows (prefill-m144-176-*: v12 2-15% faster on three (N, K) of
    // four, v16 1-2% on 4096x4096).
    {"sgemm_v12_split_k_narrow",
     "v12's 64x128 tiles with K split across a cluster: for outputs of 129-192 rows where v16's "
     "model splits K, where v16's 128-row tiles are a quarter or more padding",
     0, 0, 0, 192, 90, 0, 0, false, 2, 0, &kSgemmV16Split, 0, false, 0, 129},
    // Outputs whose shorter side (at most 768) ends 1-64 past a multiple of 128, K >= 256
    // (results/sweeps/tiles-float32-*): v18's 64-wide tiles along that side were 1.05-1.75x
    // faster than auto's v16 or v09 on all 12 such points (372x310x2401: 39.5 -> 22.5 us,
    // 298x6385x351: 68.1 -> 45.0); where the side fills its last 128-wide tile more, mixed
    // (0.81-1.23x), and with K < 256 too (0.87-1.10x).
    {"sgemm_v18_split_k_multistage",
     "v18's 64x128 or 128x64 tiles at three blocks per SM: for outputs whose shorter side, at "
     "most 768, ends 1-64 past a multiple of 128, with K >= 256, where 128-wide tiles leave 64 "
     "more of its rows or columns as padding",
     0, 0, 0, 0, 90, 256, 768, false, 2, 0, nullptr, 0, false, 0, 0, 0, 0, 0, nullptr, false,
     true},
    {"sgemm_v16_split_k_waves",
     "v09's 128x128 tile with K split over every resident block (two per SM), the partial tiles "
     "summed in global memory, S from a model of the launch's rounds of blocks: where that model "
     "splits K (few tiles, a long K, or a last round of whole tiles that leaves SMs idle)",
     0, 0, 0, 0, 90, 0, 0, false, 2, 0, &kSgemmV16Split},
    {"sgemm_v17_multistage",
     "fastest SGEMM rung on sm_90 for outputs of at least 2^22 elements (2048x2048, 1024x4096: "
     "two 128x128 tiles per SM "
     "and more) with K >= 1024: four-warp tiles, three cp.async stages, fragments read a k "
     "ahead; on fewer tiles its blocks run alone on an SM, and on a shorter K its three-stage "
     "prologue weighs, where v09 is faster",
     int64_t(1) << 22, 0, 0, 0, 90, 1024},
    // A short K with an under-aligned operand where nothing above applies
    // (results/sweeps/short-k-float32-*): on the 61 of 120 random problems with K 8-512 that ran
    // v09 on 4-byte copies, v16 (v09's tile and loop, K split only where its round model says
    // so) was faster on all but one (1.7x geometric mean; 2.5x at K <= 32, 1.1x at 129-512). With
    // every operand 16-byte aligned they were level (5 points, 0.97-1.15x; on 3 aligned random
    // points v16 was 5% slower), so v09 keeps those. Longer K was not swept.
    {"sgemm_v16_split_k_waves",
     "v09's tile with K split over the resident blocks where the round model splits it: for an "
     "under-aligned operand with a K of at most 512 on outputs of at least 2^16 elements, where "
     "v09's 4-byte copies were measured slower",
     65536, 0, 0, 0, 90, 0, 0, false, 2, 0, nullptr, 512, false, 0, 0, 0, 0, 0, "ABC"},
    {"sgemm_v09_cp_async", "fastest SGEMM rung: warp tiles, double-buffered cp.async copies", 0},
    {"sgemm_v08_warptile", "fastest SGEMM rung without cp.async (pre-sm_80 GPUs)", 0},
    {"sgemm_v05_blocktile_2d", "fastest SGEMM rung without 16-byte vector access", 0},
};

// fp32 below ieee: the tensor-core rungs, tried before the ieee rules (which follow them in
// decide(), so a shape they are not preferred for runs in fp32 arithmetic: at least as accurate).
// tf32x3: results/sweeps/tf32x3-sizes-* and tf32x3-deep-* (the tf32 sweeps' shapes, with each
// result's error against float64), H100.
constexpr const char* kV14Why =
    "3xTF32 on the tensor cores (three tf32 products per product, fp32-level accuracy): for "
    "outputs of at least 2^21 elements with K >= 1024 (1.1-1.6x fp32 arithmetic), and of at "
    "least 2^22 (2048x2048) with K >= 512, where the packing pass is small against the math "
    "(2048x2048x256: 73 against 52 us in fp32 arithmetic; sm_90a only)";
const std::vector<AutoRule> kTf32x3Rules = {
    {"sgemm_v24_wgmma_tf32x3_split_k",
     "3xTF32 on the tensor cores with K split across a cluster (fp32-level accuracy, K summed in "
     "blocks): for outputs of at least 2^20 elements over at most SMs tiles of 128x128 with "
     "1024 <= K <= 32768, 1.02-1.5x fp32 arithmetic there (1.2x v14); on smaller outputs, a "
     "shorter or a longer K fp32 arithmetic is as fast or faster (sm_90a only)",
     int64_t(1) << 20, 128, 128, 0, 90, 1024, 0, false, 1, 0, nullptr, 32768},
    {"sgemm_v14_wgmma_tf32x3", kV14Why,
     int64_t(1) << 21, 0, 0, 0, 90, 1024},
    {"sgemm_v14_wgmma_tf32x3", kV14Why,
     int64_t(1) << 22, 0, 0, 0, 90, 512},
};
// tf32: results/sweeps/tf32-sizes-* (every pair of sides 128-2048, K 256-4096) and tf32-deep-*
// (sides 256-2048, K 8192-65536), row-major operands, H100: v23's split against v22 and fp32
// arithmetic (auto's ieee kernel).
const std::vector<AutoRule> kTf32Rules = {
    {"sgemm_v23_wgmma_tf32_split_k",
     "TF32 tensor cores with K split across a cluster: for outputs of at most SMs tiles of "
     "128x128 and at least 2^18 elements with K >= 256, where v22's 128x256 tiles leave SMs "
     "idle (1.2-10x v22 on every such point but two; 1024x1024x65536 1267 -> 533 us; sm_90a "
     "only)",
     int64_t(1) << 18, 128, 128, 0, 90, 256, 0, false, 1},
    {"sgemm_v23_wgmma_tf32_split_k",
     "TF32 tensor cores with K split across a cluster: for outputs of at least 2^17 elements "
     "with K >= 4096 over at most SMs tiles of 128x128, where fp32 arithmetic was 1.4-4.8x "
     "slower (sm_90a only)",
     int64_t(1) << 17, 128, 128, 0, 90, 4096, 0, false, 1},
    {"sgemm_v23_wgmma_tf32_split_k",
     "TF32 tensor cores with K split across a cluster: for outputs of at least 2^16 elements "
     "with K >= 8192 over at most SMs tiles of 128x128 (256x256x8192: 28 against 31 us in fp32 "
     "arithmetic; sm_90a only)",
     int64_t(1) << 16, 128, 128, 0, 90, 8192, 0, false, 1},
    {"sgemm_v22_wgmma_tf32_regs",
     "TF32 tensor cores, an MN-major operand read through registers (no packing pass but for a "
     "column-major A with a row-major B): for outputs of at least 2^19 elements (512x1024) "
     "with K >= 256 over more than SMs tiles of 128x128 (at most SMs: v23), 1.26x fp32 "
     "arithmetic at worst in tf32-sizes-*; on smaller outputs fp32 arithmetic is as fast or "
     "faster (sm_90a only)",
     int64_t(1) << 19, 0, 0, 0, 90, 256},
};
const std::vector<AutoRule> kNoRules = {};

// M*N*K >= threshold without overflowing int64.
bool macs_at_least(int64_t M, int64_t N, int64_t K, int64_t threshold) {
  return static_cast<unsigned __int128>(M) * static_cast<unsigned __int128>(N) *
             static_cast<unsigned __int128>(K) >=
         static_cast<unsigned __int128>(threshold);
}

}  // namespace

Target device_target(int device) {
  const DeviceProps& p = device_props(device);
  return Target{p.cc, p.smem_per_block, p.sm_count};
}

// SMs of an architecture's common data-centre part, for answering without its GPU: 132 for cc 9.0
// (H100 SXM, H200), 108 for 8.0 (A100); a device's own count is queried.
int documented_sm_count(int cc) { return cc == 90 ? 132 : cc == 80 ? 108 : 0; }

Target documented_target(int cc) {
  return Target{cc, documented_smem_per_block(cc), documented_sm_count(cc)};
}

const std::vector<AutoRule>& auto_rules(DType dtype) {
  return dtype == DType::f32 ? kSgemmRules : kHgemmRules;
}

Precision parse_precision(std::string_view name) {
  if (name == "ieee") return Precision::ieee;
  if (name == "tf32x3") return Precision::tf32x3;
  if (name == "tf32") return Precision::tf32;
  throw std::invalid_argument("precision must be 'ieee', 'tf32x3' or 'tf32', got '" +
                              std::string(name) + "'");
}

const char* precision_name(Precision p) {
  return p == Precision::ieee ? "ieee" : p == Precision::tf32x3 ? "tf32x3" : "tf32";
}

Precision kernel_precision(const KernelEntry& k) {
  return k.precision[0] ? parse_precision(k.precision) : Precision::ieee;
}

bool at_least(Precision have, Precision want) {
  auto rank = [](Precision p) { return p == Precision::ieee ? 2 : p == Precision::tf32x3 ? 1 : 0; };
  return rank(have) >= rank(want);
}

const std::vector<AutoRule>& precision_rules(Precision p) {
  return p == Precision::tf32x3 ? kTf32x3Rules : p == Precision::tf32 ? kTf32Rules : kNoRules;
}

int alignment_of(std::initializer_list<uint64_t> values, int cap) {
  uint64_t bits = 0;
  for (uint64_t v : values) bits |= v;  // lowest set bit of the OR = lowest over the values
  if (bits == 0) return cap;
  const uint64_t low = bits & (~bits + 1);
  return low >= uint64_t(cap) ? cap : static_cast<int>(low);
}

std::string runnable_problem(const char* name, int min_cc, int max_cc, int smem_bytes,
                             int need_alignment, const Target& t, int alignment) {
  if (t.cc < min_cc) {
    return std::string(name) + " needs compute capability " + fmt_cc(min_cc) + "; this GPU is " +
           fmt_cc(t.cc);
  }
  if (max_cc && t.cc > max_cc) {
    return std::string(name) + " runs only on compute capability " + fmt_cc(min_cc) +
           (max_cc == min_cc ? "" : "-" + fmt_cc(max_cc)) + "; this GPU is " + fmt_cc(t.cc);
  }
  if (smem_bytes > t.smem_per_block) {
    return std::string(name) + " needs " + std::to_string(smem_bytes) +
           " bytes of shared memory per block; compute capability " + fmt_cc(t.cc) + " allows " +
           std::to_string(t.smem_per_block);
  }
  if (alignment % need_alignment != 0) {
    return std::string(name) + " needs " + std::to_string(need_alignment) +
           "-byte aligned operands (base addresses and leading dimensions); these are only " +
           std::to_string(alignment) + "-byte aligned";
  }
  return {};
}

std::string runnable_problem(const KernelEntry& k, const Target& t, int alignment) {
  return runnable_problem(k.name, k.min_cc, k.max_cc, k.smem_bytes ? k.smem_bytes() : 0,
                          k.alignment, t, alignment);
}

namespace {

// FASTGEMM_DEV_PAD=0 never takes the padded path, =1 takes it wherever it can run (for the
// sweeps that fit kF32PadIntensity and the fp16/bf16 rule). Read at every decide(), so that a
// sweep can switch it and clear the plan cache between candidates; not for users.
int dev_pad_override() {
  const char* v = std::getenv("FASTGEMM_DEV_PAD");
  return v == nullptr ? -1 : std::string_view(v) == "0" ? 0 : std::string_view(v) == "1" ? 1 : -1;
}

// The fp32 padded path pays where the problem's multiply-adds are at least this many per element
// it copies (A and B, and C twice, in and out, where it goes through a work buffer): the
// CUDA-core rungs copy under-aligned rows 4 bytes at a time, and the copies cost about what that
// saves at this intensity. Fitted to results/sweeps/pad-float32-* (H100, 18 shapes with an
// under-aligned MN-contiguous operand and C): from 512 the padded path was 3-19% faster on all 9,
// below it 2-36% slower on 7 of 9 and at most 1% faster on the other 2.
constexpr double kF32PadIntensity = 500;

// fp16/bf16, a flip rule's kernel on a tall narrow output whose large operand is aligned but
// whose small operand or C has rows under 16 bytes: copies of those (the small operand, C through
// a work buffer: KB to a few MB) and the rule's kernel transposed, where the large operand holds
// at least this many elements; below it v37 / v38 transposed, which read everything in place by
// element loads, cost less than the copies' launches. Fitted to
// results/sweeps/narrow-padflip-float16-* (H200, `benchmarks/sweep.py --pad-modes`, 66 tall
// narrow outputs of 2-36 columns on an aligned row-major A, B row-major): on the 48 points from
// 2^24 elements the copies and a decode rung ran 1.52x faster than v37 / v38 in the geometric
// mean (0.97-3.5x), 1.10x the faster peer (0.63-1.67x; 1.16x on 2-20 columns, where v37 ran
// 0.77x); at 2^22-2^23 they lost 0.70-0.84x on 2-12 columns.
constexpr int64_t kPadFlipMinWeights = int64_t(1) << 24;

// The plan for aligned copies of the under-aligned operands (their rows 128 bytes apart, as the
// padded path makes them) where it runs a flip rule's kernel: then the padded path, transposed.
std::optional<Plan> padded_flip(const Target& t, DType dtype, int64_t M, int64_t N, int64_t K,
                                int align_a, int align_b, int align_c, bool a_col, bool b_col) {
  const int mode = dev_pad_override();
  // The large operand of a tall narrow output (A; B for a wide one) is read in place: copying
  // it would cost more traffic than the kernel's.
  const int64_t weights = std::max(M, N) * K;
  if (dtype == DType::f32 || t.cc < 90 || mode == 0 || (M >= N ? align_a : align_b) < 16 ||
      (mode < 0 && weights < kPadFlipMinWeights)) {
    return std::nullopt;
  }
  const auto copied = [](int align) { return align < 16 ? int(kPlanAlignCap) : align; };
  Plan plan = decide(t, dtype, M, N, K, copied(align_a), copied(align_b), copied(align_c),
                     Precision::ieee, a_col, b_col);
  if (!plan.flip || plan.pad) return std::nullopt;
  plan.pad = true;
  plan.pad_alignment = plan.kernel->alignment;
  plan.reason = std::make_shared<const std::string>(
      *plan.reason + "; the operands with rows under 16 bytes (and C, through a work buffer) are " +
      "copied first into temporaries with 128-byte rows (" +
      (mode == 1 ? std::string("FASTGEMM_DEV_PAD")
                 : "the large operand holds at least " + std::to_string(kPadFlipMinWeights) +
                       " elements: the copies of the small ones cost less than v37 / v38's "
                       "element loads of it") +
      ")");
  return plan;
}

// fp32 on the CUDA cores with an MN-contiguous operand or C under 16-byte alignment: the problem
// grown to M and N multiples of 4 and K of 16 on zero-filled, aligned copies of A and B (so that
// an edge tile moved inside the output keeps its 16-byte copies aligned: with M or N as they were,
// it falls back to checked copies, and the padded problem ran slower than the 4-byte one), where
// the copies cost less than the 4-byte loop (kF32PadIntensity) and the grown problem runs a
// CUDA-core rung untransposed; nullopt otherwise.
std::optional<Plan> f32_padded_plan(const Target& t, int64_t M, int64_t N, int64_t K, int align_a,
                                    int align_b, int align_c, Precision precision, bool a_col,
                                    bool b_col) {
  if (t.cc < 90) return std::nullopt;  // measured on sm_90 only
  // A K-contiguous operand is copied 4 bytes at a time into its transposed place whatever its
  // alignment (v17); the MN-contiguous ones and C decide.
  if ((!a_col || align_a >= 16) && (b_col || align_b >= 16) && align_c >= 16) return std::nullopt;
  const int mode = dev_pad_override();
  if (mode == 0) return std::nullopt;
  const int64_t m4 = (M + 3) / 4 * 4, n4 = (N + 3) / 4 * 4, k16 = (K + 15) / 16 * 16;
  const bool work = align_c < 16 || m4 != M || n4 != N;  // C through a work buffer
  const double copied = double(M) * K + double(K) * N + (work ? 2 * double(M) * N : 0);
  const double intensity = double(M) * N * K / copied;
  if (mode < 0 && intensity < kF32PadIntensity) return std::nullopt;
  Plan plan = decide(t, DType::f32, m4, n4, k16, 16, 16, 16, precision, a_col, b_col);
  if (plan.pad || plan.flip || std::string_view(plan.kernel->family) != "simt") return std::nullopt;
  plan.pad = true;
  plan.pad_alignment = 16;
  plan.grown_m = m4, plan.grown_n = n4, plan.grown_k = k16;
  char why[96];
  std::snprintf(why, sizeof why, "%.0f multiply-adds per element copied >= %.0f", intensity,
                kF32PadIntensity);
  plan.reason = std::make_shared<const std::string>(
      *plan.reason + "; operands below 16-byte alignment: A and B are copied into aligned " +
      "temporaries, zero-filled to " + std::to_string(m4) + "x" + std::to_string(n4) + "x" +
      std::to_string(k16) + (work ? ", C through an aligned work buffer" : "") + " (" +
      (mode == 1 ? std::string("FASTGEMM_DEV_PAD=1") : std::string(why)) +
      ": the copies cost less than the CUDA-core loop's 4-byte copies)");
  return plan;
}

}  // namespace

namespace {

// The rule walk (decide() adds the copies of operands whose rows are off 128 bytes).
Plan decide_rules(const Target& t, DType dtype, int64_t M_, int64_t N_, int64_t K, int align_a,
                  int align_b, int align_c, Precision precision, bool a_col, bool b_col) {
  // What the kernels need is at most 16 bytes (the runnable checks and the words say that);
  // row_align rules read the alignment as given, up to kPlanAlignCap.
  const int row_alignment = std::min(align_a, std::min(align_b, align_c));
  const int alignment = std::min(row_alignment, 16);
  std::vector<std::string> skipped;
  auto joined = [&skipped] {  // each reason once (two rules of one kernel may skip alike)
    std::string out;
    for (size_t i = 0; i < skipped.size(); ++i) {
      if (std::find(skipped.begin(), skipped.begin() + i, skipped[i]) != skipped.begin() + i) continue;
      out += (out.empty() ? "" : "; ") + skipped[i];
    }
    return out;
  };
  bool fastest_for_cc = true;  // the first rule this GPU can run at all
  std::optional<Plan> deferred_pad;  // fp16/bf16 below kPadMinMacs: the padded plan, if v01 runs
  // fp32 below ieee: that precision's rules, then the ieee ones (more accurate, never less).
  std::vector<const AutoRule*> rules;
  if (dtype == DType::f32) {
    for (const AutoRule& rule : precision_rules(precision)) rules.push_back(&rule);
  }
  const size_t first_ieee = rules.size();
  for (const AutoRule& rule : auto_rules(dtype)) rules.push_back(&rule);
  for (size_t i = 0; i < rules.size(); ++i) {
    const AutoRule& rule = *rules[i];
    // A flip rule reads the transposed problem (N x M); its words say so.
    const int64_t M = rule.flip ? N_ : M_, N = rule.flip ? M_ : N_;
    const char* const rows = rule.flip ? " columns" : " rows";
    if (i == first_ieee && first_ieee > 0) {
      skipped.push_back(std::string("no ") + precision_name(precision) +
                        " kernel is preferred here, so fp32 arithmetic (precision 'ieee', at "
                        "least as accurate) runs");
    }
    // A rule for under-aligned operands says nothing about aligned ones: skipped without a word.
    if (rule.unaligned != nullptr) {
      const int a = rule.flip ? align_b : align_a, b = rule.flip ? align_a : align_b;
      const bool a_counts = std::string_view(rule.unaligned).find('A') != std::string_view::npos;
      const bool c_counts = std::string_view(rule.unaligned).find('C') != std::string_view::npos;
      if (b >= 16 && (!a_counts || a >= 16) && (!c_counts || align_c >= 16)) continue;
      if (rule.flip) {  // v37 / v38 transposed: or the aligned rules on copies (kPadFlipMinWeights)
        if (auto padded = padded_flip(t, dtype, M_, N_, K, align_a, align_b, align_c, a_col, b_col)) {
          return *padded;
        }
      }
      if (dev_pad_override() == 1) continue;  // a sweep of the padded path against these
      if (rule.pad_deep_few && K >= kV34PadK &&
          ((M + 127) / 128) * ((N + 127) / 128) <= kV34PadTiles) {
        skipped.push_back(std::string(rule.kernel) + " is for K below " + std::to_string(kV34PadK) +
                          " on outputs of at most " + std::to_string(kV34PadTiles) +
                          " tiles of 128x128 (the padded path's split is faster there)");
        continue;
      }
    }
    const KernelEntry* k = find_kernel(rule.kernel, dtype);
    if (k == nullptr) {
      skipped.push_back(std::string(rule.kernel) + " is not in this build");
      continue;
    }
    if (!macs_at_least(M, N, 1, rule.min_mn)) {
      skipped.push_back(std::string(rule.kernel) + " is for outputs of at least " +
                        std::to_string(rule.min_mn) + " elements");
      continue;
    }
    if (rule.max_m > 0 && M > rule.max_m) {
      skipped.push_back(std::string(rule.kernel) + " is for outputs of at most " +
                        std::to_string(rule.max_m) + rows);
      continue;
    }
    if (rule.min_m > 0 && M < rule.min_m) {
      skipped.push_back(std::string(rule.kernel) + " is for outputs of at least " +
                        std::to_string(rule.min_m) + rows);
      continue;
    }
    if (rule.min_n > 0 && N < rule.min_n) {
      skipped.push_back(std::string(rule.kernel) + " is for outputs of at least " +
                        std::to_string(rule.min_n) + (rule.flip ? " rows" : " columns"));
      continue;
    }
    if (rule.b_order != 0 && (rule.b_order == 2) != (rule.flip ? !a_col : b_col)) {
      skipped.push_back(std::string(rule.kernel) + " is for a " +
                        (rule.b_order == 2 ? "column-major (K-contiguous)" : "row-major") + " B" +
                        (rule.flip ? " in the transposed problem" : ""));
      continue;
    }
    if (rule.row_align > 0 && row_alignment < rule.row_align) {
      skipped.push_back(std::string(rule.kernel) + " is for operands whose rows are " +
                        std::to_string(rule.row_align) + "-byte aligned (these are " +
                        std::to_string(row_alignment) + ")");
      continue;
    }
    if (rule.max_short > 0 && std::min(M, N) > rule.max_short) {
      skipped.push_back(std::string(rule.kernel) + " is for outputs of at most " +
                        std::to_string(rule.max_short) + " rows or columns");
      continue;
    }
    if (rule.min_cc > 0 && t.cc < rule.min_cc) {
      skipped.push_back(std::string(rule.kernel) + " is preferred from compute capability " +
                        fmt_cc(rule.min_cc) + " on (where it was measured)");
      continue;
    }
    if (rule.min_k > 0 && K < rule.min_k) {
      skipped.push_back(std::string(rule.kernel) + " is for K of at least " +
                        std::to_string(rule.min_k));
      continue;
    }
    if (rule.max_k > 0 && K > rule.max_k) {
      skipped.push_back(std::string(rule.kernel) + " is for K of at most " +
                        std::to_string(rule.max_k));
      continue;
    }
    if (rule.b_off_line > 0) {
      const int b = rule.flip ? align_a : align_b;
      if (b < 16 || b >= rule.b_off_line) {
        skipped.push_back(std::string(rule.kernel) + " is for a B whose rows are 16- but not " +
                          std::to_string(rule.b_off_line) + "-byte aligned (these are " +
                          std::to_string(b) + "-byte aligned)");
        continue;
      }
    }
    if (rule.a_off_line > 0) {
      const int a = rule.flip ? align_b : align_a;
      const bool a_mn = rule.flip ? !b_col : a_col;  // B row-major: B^T is column-major
      if (!a_mn || a < 16 || a >= rule.a_off_line) {
        skipped.push_back(std::string(rule.kernel) + " is for an MN-major A whose rows are 16- but "
                          "not " + std::to_string(rule.a_off_line) + "-byte aligned" +
                          (rule.flip ? " (B^T: a row-major B)" : ""));
        continue;
      }
    }
    if (rule.max_pad > 0 && rule.few_m > 0 &&
        double((M + rule.few_m - 1) / rule.few_m * rule.few_m) >
            rule.max_pad * double((M + 127) / 128 * 128)) {
      char pad[32];
      std::snprintf(pad, sizeof pad, "%g", rule.max_pad);
      skipped.push_back(std::string(rule.kernel) + " is for outputs whose rows its " +
                        std::to_string(rule.few_m) + "-row tiles pad at most " + pad +
                        "x as far as 128-row tiles do");
      continue;
    }
    if (rule.half_edge && !half_edge(M, N)) {
      skipped.push_back(std::string(rule.kernel) + " is for outputs whose shorter side ends 1-64 "
                        "past a multiple of 128 (its 64-wide tiles pad less there)");
      continue;
    }
    const int64_t tiles =
        rule.few_m > 0 ? ((M + rule.few_m - 1) / rule.few_m) * ((N + rule.few_n - 1) / rule.few_n) : 0;
    // The last, partial round of those tiles, and whether a persistent kernel that splits its
    // last round (v31, v32: at most sm_count / 2 tiles, split along K) would split it.
    const int64_t last = t.sm_count > 0 ? tiles % t.sm_count : 0;
    const bool splits_last = last != 0 && 2 * last <= t.sm_count;
    if (rule.few_m > 0 && rule.last_round) {
      if (tiles <= t.sm_count || !splits_last) {
        skipped.push_back(std::string(rule.kernel) + " is for outputs of more than one round of " +
                          std::to_string(t.sm_count) + " tiles of " + std::to_string(rule.few_m) +
                          "x" + std::to_string(rule.few_n) + " whose last round holds at most " +
                          std::to_string(t.sm_count / 2) + "; this one has " +
                          std::to_string(tiles) + " (a last round of " + std::to_string(last) +
                          ")");
        continue;
      }
    } else if (rule.few_m > 0) {
      // few_parts 0: no limit on the tile count (a rule that weighs tiles otherwise: vs_n).
      if (rule.few_parts > 0 && (t.sm_count <= 0 || rule.few_parts * tiles > t.sm_count)) {
        skipped.push_back(std::string(rule.kernel) + " is for outputs of at most " +
                          std::to_string(static_cast<int64_t>(t.sm_count / rule.few_parts)) +
                          " tiles of " +
                          std::to_string(rule.few_m) + "x" + std::to_string(rule.few_n) +
                          (rule.flip ? " transposed" : "") + " (" +
                          std::to_string(t.sm_count) + " SMs); this one has " +
                          std::to_string(tiles));
        continue;
      }
      if (rule.over_parts > 0 && rule.over_parts * tiles <= t.sm_count) {
        skipped.push_back(std::string(rule.kernel) + " is for outputs of more than " +
                          std::to_string(static_cast<int64_t>(t.sm_count / rule.over_parts)) +
                          " tiles of " + std::to_string(rule.few_m) + "x" +
                          std::to_string(rule.few_n) + " (" + std::to_string(t.sm_count) +
                          " SMs); this one has " + std::to_string(tiles));
        continue;
      }
      if (rule.split_cost > 0) {
        const int64_t k_tiles = (K + 63) / 64;
        const int64_t split = std::max<int64_t>(1, std::min<int64_t>({16, k_tiles / 4, t.sm_count / tiles}));
        if (split < 2 || k_tiles < rule.split_cost * split * (split - 1)) {
          skipped.push_back(std::string(rule.kernel) + " is for K shares of at least " +
                            std::to_string(rule.split_cost) + " k-tiles per partial tile summed (" +
                            std::to_string(split) + " shares of " + std::to_string(k_tiles / split) +
                            " k-tiles here)");
          continue;
        }
      }
    }
    if (rule.vs_n > 0) {
      const double mine = last_round_cost(M, N, K, rule.few_m, rule.few_n, t.sm_count);
      const double wide = last_round_cost(M, N, K, rule.few_m, rule.vs_n, t.sm_count);
      if (t.sm_count <= 0 || !(mine < wide)) {
        skipped.push_back(std::string(rule.kernel) + " is for outputs whose " +
                          std::to_string(rule.few_m) + "x" + std::to_string(rule.few_n) +
                          " tiles fill the rounds of " + std::to_string(t.sm_count) +
                          " SMs better than " + std::to_string(rule.few_m) + "x" +
                          std::to_string(rule.vs_n) + " ones (last-round model: " +
                          std::to_string(static_cast<int>(mine)) + " against " +
                          std::to_string(static_cast<int>(wide)) + ")");
        continue;
      }
    }
    if (rule.wave_rounds) {
      // The rule's tile against the other two of 128x128, 192x128 and 128x256: beaten by one
      // that costs less, or as much with a larger area (a tie goes to the taller or wider tile:
      // more math per byte brought in).
      const double mine = t.sm_count > 0 ? wave_cost(M, N, rule.few_m, rule.few_n, t.sm_count) : 0;
      double other = 1e300;
      bool beaten = false;
      for (const auto& [tm, tn] : {std::pair{128, 128}, std::pair{192, 128}, std::pair{128, 256}}) {
        if ((tm != rule.few_m || tn != rule.few_n) && t.sm_count > 0) {
          const double cost = wave_cost(M, N, tm, tn, t.sm_count);
          other = std::min(other, cost);
          beaten = beaten || cost < mine || (cost == mine && tm * tn > rule.few_m * rule.few_n);
        }
      }
      if (t.sm_count <= 0 || tiles > 2 * t.sm_count || beaten) {
        char costs[64];
        std::snprintf(costs, sizeof costs, "%g against %g", mine, std::min(other, 1e9));
        skipped.push_back(std::string(rule.kernel) + " is for outputs of at most two rounds of " +
                          std::to_string(t.sm_count) + " tiles of " + std::to_string(rule.few_m) +
                          "x" + std::to_string(rule.few_n) +
                          " that take less time than the other tiles of 128x128, 192x128 and "
                          "128x256 (rounds times the tile's area, in 128x128 tiles: " +
                          costs + "; " + std::to_string(tiles) + " tiles here)");
        continue;
      }
    }
    if (rule.unsplit_last_round) {
      if (t.sm_count <= 0 || splits_last) {
        skipped.push_back(std::string(rule.kernel) + " is for outputs whose " +
                          std::to_string(rule.few_m) + "x" + std::to_string(rule.few_n) +
                          " tiles leave no last round of at most " +
                          std::to_string(t.sm_count / 2) + " to split; this one has " +
                          std::to_string(tiles) + " (a last round of " + std::to_string(last) +
                          ")");
        continue;
      }
    }
    if (rule.round_split != nullptr) {
      const RoundSplit& r = *rule.round_split;
      const int split = round_split_count(r, M, N, K, t.sm_count, r.blocks_per_sm);
      if (split < 2) {
        skipped.push_back(std::string(rule.kernel) +
                          " is for outputs whose K its round model splits (" +
                          std::to_string(r.blocks_per_sm) + " blocks per SM on " +
                          std::to_string(t.sm_count) +
                          " SMs; whole tiles fill the rounds here)");
        continue;
      }
    }
    std::string problem = runnable_problem(*k, t, alignment);
    if (problem.empty() && dtype == DType::f32 && !rule.flip &&
        std::string_view(k->family) == "simt") {
      if (auto padded = f32_padded_plan(t, M_, N_, K, align_a, align_b, align_c, precision,
                                        a_col, b_col)) {
        return *padded;
      }
    }
    if (problem.empty() && deferred_pad && k->version == 1) {
      const bool v01_faster = K <= kV01MaxK && !macs_at_least(M, N, 1, kV01MaxOutputs + 1);
      if (!v01_faster) return *deferred_pad;
    }
    if (problem.empty()) {
      const std::string note = skipped.empty() ? "" : " (" + joined() + ")";
      Plan plan{k, false, rule.flip,
                  std::make_shared<const std::string>(
                      std::string(rule.why) +
                      (rule.flip ? "; runs the transposed problem C^T = B^T A^T (" +
                                       std::to_string(M) + "x" + std::to_string(N) +
                                       ", C written column-major)"
                                 : std::string()) +
                      "; runs on cc " + fmt_cc(t.cc) + " with " + std::to_string(alignment) +
                      "-byte alignment" + note)};
      plan.in_place = rule.in_place;
      return plan;
    }
    // Operands too little aligned: a flip rule gives way (the padded path runs untransposed).
    if (!rule.flip && fastest_for_cc && runnable_problem(*k, t, k->alignment).empty()) {
      fastest_for_cc = false;
      const int mode = dtype == DType::f32 ? -1 : dev_pad_override();
      const std::string copied =
          std::string(rule.why) + "; operands are only " + std::to_string(alignment) +
          "-byte aligned, so they are copied into " + std::to_string(k->alignment) +
          "-byte aligned temporaries first";
      if (mode == 1 || (mode < 0 && macs_at_least(M, N, K, kPadMinMacs))) {
        Plan plan{k, true, false, std::make_shared<const std::string>(
                                      copied + " (M*N*K >= " + std::to_string(kPadMinMacs) +
                                      ": the O(n^2) copy costs less than a slower kernel)")};
        plan.pad_alignment = k->alignment;
        return plan;
      }
      if (mode < 0 && dtype != DType::f32 && t.cc >= 90) {  // where v01 would run (above)
        deferred_pad = Plan{k, true, false, std::make_shared<const std::string>(
                                                copied + " (smaller problems too, where " +
                                                "v01 would run them in place: v01 copies " +
                                                "element by element, about 5 us per 32 of K)")};
        deferred_pad->pad_alignment = k->alignment;
      }
    }
    skipped.push_back(std::move(problem));
  }
  throw std::runtime_error(std::string("no ") + dtype_name(dtype) +
                           " kernel runs on compute capability " + fmt_cc(t.cc) +
                           (skipped.empty() ? " in this build" : ": " + joined()));
}

// FASTGEMM_DEV_REALIGN=0 never copies an operand for its rows' 128-byte alignment; =A, =B or =AB
// copies those operands wherever their rows are off 128 bytes and a TMA rung runs, whatever the
// problem's size, except where a rule reads them in place (AutoRule::in_place: v45) (for the
// sweeps that compare the ways; read at every decide(), as FASTGEMM_DEV_PAD). -1 where unset:
// decide() chooses. Not for users.
int dev_realign_mode() {
  const char* v = std::getenv("FASTGEMM_DEV_REALIGN");
  if (v == nullptr) return -1;
  const std::string_view s(v);
  return s == "A" ? 1 : s == "B" ? 2 : s == "AB" ? 3 : 0;
}

// fp16/bf16: operands whose rows are 16- but not 128-byte aligned (a pitch or base off whole L2
// lines: N, K or M not a multiple of 64 elements). Each 128-byte row of a TMA box then straddles
// two lines, and what it costs depends on the offset: rows 32-byte aligned touch four whole
// 32-byte sectors, rows only 16-byte aligned five. Rows of 32 or 64 bytes read at nearly full
// speed (results/sweeps/realign-shapes-*: 4000^3 and 6000^3 in place beat any copy on both GPUs).
// Rows only 16-byte aligned get tensor maps with 128-byte L2 promotion (hopper/tensor_map.cu),
// and still cost the kernel up to 1.4x (14916x664x6424 on the H100: 342 us in place, 248 with B's
// rows on 128 bytes; C's rows did not matter). Copying B costs about 4 K N bytes of HBM traffic,
// which the kernel's loss outweighs where B's rows are only 16-byte aligned, the output has at
// least kRealignMinRowsB rows (B read again by every row of tiles) and the problem at least 2^33
// multiply-adds (a few us of launches and copies). A's rows cost less, and a copy of A pays only
// where B is not copied, A's rows are only 16-byte aligned and B's at most 32-byte aligned, on at
// least kRealignMinColsA columns (wide outputs, where A is the small operand); with B copied, A's
// copy cost more than it saved on every point of realign-large-* and realign-shapes-*. Fitted to
// results/sweeps/realign-large-* (random problems of 2^31-2^36 multiply-adds, `python
// benchmarks/deep_small.py 60 --seed 31 --realign-large`: each copy timed against the in-place run
// in interleaved rounds) and realign-shapes-* (squares and model-like shapes, `... --shapes`).
// Over the in-place run (128-byte promotion), H100 1.057x (random) and 1.119x (shapes), H200
// 1.022x and 1.047x. The copies gain less on the H200, and some lose there: the random sweep's
// 2928x4304x1000 (K = 1000) ran 0.91x (the H100 1.08x), and 4096x1000x4096 0.89x in
// results/sweeps/l2-promotion-* (the H100 1.04-1.13x).
constexpr int64_t kRealignMinRowsB = 2048;
constexpr int64_t kRealignMinColsA = 3072;
constexpr int64_t kRealignMinMacs = int64_t(1) << 33;

bool reads_by_tma(const KernelEntry& k) {
  return std::string_view(k.family) == "wgmma" && std::string_view(k.copy) == "tma" &&
         k.alignment == 16;
}

}  // namespace

Plan decide(const Target& t, DType dtype, int64_t M, int64_t N, int64_t K, int align_a,
            int align_b, int align_c, Precision precision, bool a_col, bool b_col) {
  Plan plan = decide_rules(t, dtype, M, N, K, align_a, align_b, align_c, precision, a_col, b_col);
  const int mode = dev_realign_mode();
  if (dtype == DType::f32 || t.cc < 90 || plan.pad || plan.flip || plan.in_place ||
      !reads_by_tma(*plan.kernel) || mode == 0) {
    return plan;
  }
  const bool off_a = align_a >= 16 && align_a < 128, off_b = align_b >= 16 && align_b < 128;
  const bool large = macs_at_least(M, N, K, kRealignMinMacs);
  const bool copy_b = align_b == 16 && M >= kRealignMinRowsB && large;
  const int copies =
      mode > 0 ? (off_a && (mode & 1) ? 1 : 0) | (off_b && (mode & 2) ? 2 : 0)
      : copy_b ? 2
               : (align_a == 16 && off_b && align_b <= 32 && N >= kRealignMinColsA && large ? 1 : 0);
  if (copies == 0) return plan;
  Plan again = decide_rules(t, dtype, M, N, K, copies & 1 ? 128 : align_a,
                            copies & 2 ? 128 : align_b, align_c, precision, a_col, b_col);
  if (again.pad || again.flip || !reads_by_tma(*again.kernel)) return plan;
  again.realign = copies;
  const char* which = copies == 3 ? "A's and B's rows are off 128 bytes, so they are"
                      : copies == 1 ? "A's rows are off 128 bytes, so it is"
                                    : "B's rows are off 128 bytes, so it is";
  again.reason = std::make_shared<const std::string>(
      *again.reason + "; " + which + " copied first into a temporary with 128-byte rows " +
      "(TMA reads rows only 16-byte aligned up to 1.4x slower; " +
      (mode > 0 ? std::string("FASTGEMM_DEV_REALIGN")
                : "a copy pays on 2^33 multiply-adds where the rows are only 16-byte aligned: "
                  "B's from " +
                      std::to_string(kRealignMinRowsB) + " rows, A's from " +
                      std::to_string(kRealignMinColsA) +
                      " columns where B's rows are at most 32-byte aligned and B is not copied") +
      ")");
  return again;
}

bool PlanKey::operator==(const PlanKey& o) const {
  return device == o.device && dtype == o.dtype && M == o.M && N == o.N && K == o.K &&
         a_col == o.a_col && b_col == o.b_col && beta_nonzero == o.beta_nonzero &&
         align_a == o.align_a && align_b == o.align_b && align_c == o.align_c &&
         precision == o.precision;
}

namespace {

struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(uint64_t(k.M));
    mix(uint64_t(k.N));
    mix(uint64_t(k.K));
    mix(uint64_t(k.device) << 32 | uint64_t(k.dtype) << 24 | uint64_t(k.a_col) << 18 |
        uint64_t(k.b_col) << 17 | uint64_t(k.beta_nonzero) << 16);
    mix(uint64_t(uint32_t(k.align_a)) << 32 | uint64_t(uint32_t(k.align_b)));
    mix(uint64_t(uint32_t(k.align_c)) << 8 | uint64_t(k.precision));
    return static_cast<size_t>(h);
  }
};

constexpr size_t kPlanCacheEntries = 16384;

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<PlanKey, Plan, PlanKeyHash>& cache() {
  static std::unordered_map<PlanKey, Plan, PlanKeyHash> c;
  return c;
}

// Bumped by every clear: a thread's memo of its last plan holds only for the generation it was
// made in.
std::atomic<uint64_t> cache_generation{1};

}  // namespace

Plan plan_for(const PlanKey& key) {
  // A program that repeats one call (the common loop) meets its last key again: no lock, no hash.
  struct Memo {
    uint64_t generation = 0;
    PlanKey key{};
    Plan plan{};
  };
  thread_local Memo memo;
  const uint64_t generation = cache_generation.load(std::memory_order_acquire);
  if (memo.generation == generation && memo.key == key) return memo.plan;
  Plan plan;
  bool hit = false;
  {
    std::lock_guard<std::mutex> lock(cache_mutex());
    const auto found = cache().find(key);
    if (found != cache().end()) plan = found->second, hit = true;
  }
  if (!hit) {
    plan = decide(device_target(key.device), key.dtype, key.M, key.N, key.K, key.align_a,
                  key.align_b, key.align_c, key.precision, key.a_col, key.b_col);
    std::lock_guard<std::mutex> lock(cache_mutex());
    // A clear while decide() ran (a sweep switching FASTGEMM_DEV_* between candidates) may have
    // made this plan stale: it serves this call, but stays out of the cleared cache and the memo.
    if (cache_generation.load(std::memory_order_acquire) != generation) return plan;
    if (cache().size() >= kPlanCacheEntries) cache().clear();
    cache().emplace(key, plan);
  }
  memo = Memo{generation, key, plan};
  return plan;
}

void clear_plan_cache() {
#ifdef FASTGEMM_HAS_HOPPER
  hopper::reset_dev_promotion();
#endif
  std::lock_guard<std::mutex> lock(cache_mutex());
  cache().clear();
  cache_generation.fetch_add(1, std::memory_order_acq_rel);
}

size_t plan_cache_size() {
  std::lock_guard<std::mutex> lock(cache_mutex());
  return cache().size();
}

}  // namespace fastgemm
