// board.cpp — see board.h.
#include "board.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace fastgemm {

std::vector<std::vector<int64_t>> board_exchange(uintptr_t page, int ranks, int rank, int64_t seq,
                                                 const std::vector<int64_t>& values,
                                                 int64_t timeout_ms) {
  if (page == 0 || page % 64 != 0) throw std::invalid_argument("board: the page must be 64-byte aligned");
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    throw std::invalid_argument("board: rank " + std::to_string(rank) + " of " + std::to_string(ranks));
  }
  if (seq < 1) throw std::invalid_argument("board: exchanges are numbered from 1");
  if (values.size() > size_t(kBoardValues)) {
    throw std::invalid_argument("board: at most " + std::to_string(kBoardValues) + " values");
  }
  auto* const base = reinterpret_cast<int64_t*>(page);
  // Slot layout: [0] the last published exchange, [1] set once the rank has given up waiting
  // (every later exchange of the group then fails: a late rank must not pair its call with one
  // that was abandoned), [8, 24) and [24, 40) the buffers (a count, then the values).
  auto slot = [base](int r) { return base + int64_t(r) * kBoardSlotWords; };
  auto given_up = [&]() -> int {
    for (int q = 0; q < ranks; ++q) {
      if (__atomic_load_n(slot(q) + 1, __ATOMIC_ACQUIRE) != 0) return q;
    }
    return -1;
  };
  auto broken = [](int q) {
    return std::runtime_error("rank " + std::to_string(q) +
                              " gave up waiting in an earlier argument check; the group's ranks "
                              "are out of step");
  };
  if (const int q = given_up(); q >= 0) throw broken(q);
  auto buffer = [&](int r) { return slot(r) + 8 + (seq & 1) * 16; };
  int64_t* const mine = buffer(rank);
  mine[0] = int64_t(values.size());
  for (size_t i = 0; i < values.size(); ++i) mine[1 + i] = values[i];
  __atomic_store_n(slot(rank), seq, __ATOMIC_RELEASE);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::vector<std::vector<int64_t>> every(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const int64_t* const published = slot(r);
    // Spin first (the ranks of one step arrive within microseconds), then yield, then sleep.
    for (long spins = 0; __atomic_load_n(published, __ATOMIC_ACQUIRE) < seq; ++spins) {
      if (spins < 4096) continue;
      if (spins % 256 == 0) {
        if (const int q = given_up(); q >= 0) throw broken(q);
      }
      if (spins % 256 == 0 && Clock::now() - start > std::chrono::milliseconds(timeout_ms)) {
        __atomic_store_n(slot(rank) + 1, int64_t(1), __ATOMIC_RELEASE);
        std::string late;
        for (int q = r; q < ranks; ++q) {
          if (__atomic_load_n(slot(q), __ATOMIC_ACQUIRE) < seq) {
            late += (late.empty() ? "" : ", ") + std::to_string(q);
          }
        }
        throw std::runtime_error("rank(s) " + late + " did not reach the argument check within " +
                                 std::to_string(timeout_ms) + " ms (a rank failed or stopped calling)");
      }
      if (spins < 65536) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
    const int64_t* const b = buffer(r);
    const int64_t n = b[0];
    if (n < 0 || n > kBoardValues) throw std::runtime_error("board: rank " + std::to_string(r) + " wrote a bad count");
    every[size_t(r)].assign(b + 1, b + 1 + n);
  }
  return every;
}

}  // namespace fastgemm
