// board.h — a few integers exchanged between the processes of one host through a shared page:
// the tensor-parallel pair's argument check (fastgemm.distributed) without a socket round trip.
//
// The page (mapped by every process; zero-filled when made) holds one slot per rank. A slot is a
// sequence number and two value buffers: exchange number s writes its values into buffer s % 2,
// then publishes s (release); a reader waits for every rank's sequence number to reach s
// (acquire) and reads buffer s % 2. A rank can write buffer s % 2 again only at exchange s + 2,
// which it reaches only after every rank has published s + 1, i.e. after every rank has finished
// reading exchange s: two buffers are enough. A rank that gives up waiting (the timeout) marks
// its slot, and every exchange of the group fails from then on, on every rank: a late rank never
// pairs its call with an abandoned one.
#pragma once
#include <cstdint>
#include <vector>

namespace fastgemm {

constexpr int kBoardValues = 15;      // values per rank and exchange
constexpr int kBoardSlotWords = 48;   // int64 words per rank: 384 bytes, whole cache lines
constexpr int64_t board_bytes(int ranks) { return int64_t(ranks) * kBoardSlotWords * 8; }

// Exchange number `seq` (1, 2, ... in the same order on every rank) of `values` (at most
// kBoardValues) through the page at `page`: every rank's values, in rank order. Waits at most
// `timeout_ms` for the others, then marks the page given up and throws std::runtime_error naming
// the ranks that did not arrive; throws at once where a rank has given up before. Call without
// the GIL held where other threads must run meanwhile.
std::vector<std::vector<int64_t>> board_exchange(uintptr_t page, int ranks, int rank, int64_t seq,
                                                 const std::vector<int64_t>& values,
                                                 int64_t timeout_ms);

}  // namespace fastgemm
