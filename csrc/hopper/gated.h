// hopper/gated.h — a GEMM whose producer waits for its operands to land (see gated.cu), and the
// flag writes that say they have.
#pragma once
#include <cstdint>

#include "common/gemm_args.h"
#include "common/runtime.h"

namespace fastgemm {

// The flags a gated GEMM waits on: flag_a counts the slices of slice_k of K landed of its A
// (all of its rows), flags_b[c] those of B's columns c * chunk_cols .. (c + 1) * chunk_cols - 1.
// A wait longer than timeout_ms traps.
struct Landed {
  const int* flag_a = nullptr;
  const int* flags_b = nullptr;
  int chunk_cols = 0, slice_k = 0;
  int64_t timeout_ms = 0;
};

// C = alpha * A @ B (row-major C, fp16/bf16, a.beta unused) on the current device (sm_90),
// each k-tile's copies issued once its slice of A and of its chunk of B have landed.
void hgemm_gated(const GemmArgs& a, DType dtype, const Landed& landed);

// *flag = value on `stream`, after the stream's earlier work and its memory writes
// (cuStreamWriteValue32: no kernel, so it runs beside a GEMM that holds every SM).
void stream_write_flag(cudaStream_t stream, int* flag, int value);

}  // namespace fastgemm
