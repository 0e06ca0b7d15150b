// operands.h — the one array adapter at fastgemm's boundary: a Python object (a PyTorch tensor,
// a CuPy array, anything with __cuda_array_interface__ v2/v3 or DLPack) in, an Operand out.
//
// PyTorch tensors and CuPy arrays are read through their cheap attributes (data_ptr(),
// is_contiguous(), data.ptr, ...): no interface dict, no capsule. Everything else goes through the interface it
// exports. Policy is not decided here: dtypes, layouts and devices are reported faithfully and
// checked by the entry (entry.cpp); only what cannot be described at all is rejected (host
// arrays, masked arrays, vector dtypes, anything that is not 2-D).
//
// Needs the GIL: every function here reads Python objects.
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace fastgemm {

enum class Library : uint8_t { torch, cupy, cai, dlpack };
const char* library_name(Library lib);

struct Operand {
  uintptr_t ptr = 0;                        // address of element (0, 0)
  int64_t rows = 0, cols = 0;
  int64_t rs = 0, cs = 0;                   // strides in elements (may be negative or zero)
  std::string dtype;                        // "float32", "bfloat16", ... as the producer says
  int itemsize = 0;
  int device = -1;                          // -1: not reported (CAI): ask the pointer's owner
  std::optional<int64_t> stream;            // CAI v3 producer stream
  bool readonly = false;
  Library library = Library::cai;
  pybind11::object keepalive;               // DLPack: runs the producer's deleter when dropped
  int64_t size() const { return rows * cols; }
};

// Reads `obj`; `name` ("A", "B", "C") labels error messages. `dlpack_stream` is passed to
// __dlpack__(stream=...) (1 = legacy default stream, 2 = per-thread default, else a
// cudaStream_t); nullopt passes none.
// Raises TypeError (not a CUDA array, host arrays included; vector dtypes), RuntimeError (a
// tensor or capsule outside CUDA device memory), ValueError (not 2-D, masked, strides that are
// not whole elements, an unsupported interface version).
Operand read_operand(pybind11::handle obj, const char* name,
                     std::optional<int64_t> dlpack_stream = std::nullopt);

// (column-major, leading dimension) when the matrix has unit stride along one dimension and a
// leading dimension that covers the other (padded views qualify); nullopt otherwise. A
// dimension of extent 1 is never stepped along, so its stride is free: the leading dimension is
// then the extent rounded up to 16 bytes, which keeps vector kernels eligible.
struct Layout {
  bool col_major;
  int64_t ld;
};
std::optional<Layout> unit_stride_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                                         int itemsize);

// The half-open byte range [lo, hi) the elements occupy (correct for negative strides);
// (ptr, ptr) when there are none.
std::pair<uintptr_t, uintptr_t> byte_span(uintptr_t ptr, int64_t rows, int64_t cols, int64_t rs,
                                          int64_t cs, int itemsize);
// True when the byte ranges of two non-empty matrices intersect (conservative: interleaved
// views that share a range but no element count as overlapping).
bool overlaps(const Operand& a, const Operand& b);

// Small Python C-API helpers shared with the entry (GIL held): a new reference owned, throwing
// the pending Python error on nullptr; an attribute or an empty object when it does not exist.
pybind11::object py_steal(PyObject* p);
pybind11::object py_get_optional(pybind11::handle obj, PyObject* attr);

// "(2, 3)": a tuple of integers as Python writes it, for messages.
std::string tuple_repr(std::initializer_list<int64_t> values);

}  // namespace fastgemm
