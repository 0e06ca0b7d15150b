// bindings.cpp — the pybind11 module fastgemm._C: the GEMM entry (entry.cpp), the kernel table,
// the auto decision as select() explains it (plan.cpp), the array adapter as Python sees it
// (operands.cpp), device utilities and the CPU tests' hooks. Policy lives in those files; this
// one only converts.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "board.h"
#include "common/dlpack_abi.h"
#include "common/launch.cuh"
#include "common/runtime.h"
#include "common/swizzle.cuh"
#include "entry.h"
#ifdef FASTGEMM_HAS_HOPPER
#include "hopper/gated.h"
#endif
#include "operands.h"
#include "plan.h"
#include "registry.h"

namespace py = pybind11;
using namespace fastgemm;

namespace {

py::object none_if(bool absent, py::object value) { return absent ? py::none() : value; }

py::dict kernel_info(const KernelEntry& k) {
  py::dict d;
  d["name"] = k.name;
  d["dtype"] = k.dtype;
  d["version"] = k.version;
  d["min_cc"] = k.min_cc;
  d["max_cc"] = none_if(k.max_cc == 0, py::int_(k.max_cc));
  d["alignment"] = k.alignment;
  d["techniques"] = k.techniques;
  d["smem_bytes"] = k.smem_bytes ? k.smem_bytes() : 0;
  d["family"] = k.family;
  d["copy"] = k.copy;
  d["epilogue"] = k.epilogue;
  d["parent"] = k.parent;
  d["branch"] = k.branch;
  d["precision"] = k.precision;
  return d;
}

// The adapter's description of one object, for fastgemm._arrays.Matrix.
py::dict describe(py::handle obj, const std::string& name, std::optional<int64_t> dlpack_stream) {
  Operand m = read_operand(obj, name.c_str(), dlpack_stream);
  py::dict d;
  d["ptr"] = m.ptr;
  d["shape"] = py::make_tuple(m.rows, m.cols);
  d["strides"] = py::make_tuple(m.rs, m.cs);
  d["dtype"] = m.dtype;
  d["itemsize"] = m.itemsize;
  d["device"] = none_if(m.device < 0, py::int_(m.device));
  d["stream"] = none_if(!m.stream, py::int_(m.stream.value_or(0)));
  d["readonly"] = m.readonly;
  d["library"] = library_name(m.library);
  d["keepalive"] = m.keepalive ? m.keepalive : py::none();
  return d;
}

DType dtype_or_type_error(const std::string& dtype) {
  if (dtype == "float32" || dtype == "float16" || dtype == "bfloat16") return parse_dtype(dtype);
  throw py::type_error("no kernels for dtype '" + dtype +
                       "'; expected float32, float16 or bfloat16");
}

void require_gpu() {
  if (device_count() == 0) {
    throw std::runtime_error("fastgemm needs a CUDA GPU, and the CUDA runtime found none (" +
                             runtime_status() + ")");
  }
}

// What kernel="auto" runs for C[M,N] = A[M,K] @ B[K,N]: the current GPU's cached plan (the one a
// call of this shape and alignment runs), or, with cc, the decision for that architecture.
py::dict select_plan(int64_t M, int64_t N, int64_t K, const std::string& dtype_str,
                std::optional<int> cc, std::optional<int> alignment,
                const std::string& precision_str, const std::string& order) {
  const DType dtype = dtype_or_type_error(dtype_str);
  if (order.size() != 2 || (order[0] != 'C' && order[0] != 'F') ||
      (order[1] != 'C' && order[1] != 'F')) {
    throw py::value_error("order must be two of 'C' (row-major) and 'F' (column-major), for A "
                          "and B: 'CC', 'CF', 'FC' or 'FF'; got '" + order + "'");
  }
  const Precision precision = parse_precision(precision_str);
  if (dtype != DType::f32 && precision != Precision::ieee) {
    throw py::value_error("precision '" + precision_str + "' is for float32; " + dtype_str +
                          " products run on the tensor cores with fp32 accumulation");
  }
  if (M < 0 || N < 0 || K < 0) {
    throw py::value_error("negative problem size M=" + std::to_string(M) + ", N=" +
                          std::to_string(N) + ", K=" + std::to_string(K));
  }
  const int size = dtype_size(dtype);
  // The layouts a call reads contiguous operands of these orders in (unit_stride_layout, as
  // entry.cpp: a one-row or one-column operand by its shape). A column-major C (N == 1: a
  // column) runs as C^T = B^T A^T, the plan of the N x M problem with A' = B^T and B' = A^T.
  auto read = [size](int64_t rows, int64_t cols, char o) {
    const bool c = o == 'C';
    return unit_stride_layout(rows, cols, c ? cols : 1, c ? 1 : rows, size)->col_major;
  };
  const bool a_in = read(M, K, order[0]), b_in = read(K, N, order[1]);
  const bool column = !alignment && read(M, N, 'C');
  const bool a_col = column ? !b_in : a_in, b_col = column ? !a_in : b_in;
  // Each fresh operand's alignment, as a call reads it (entry.cpp): its row pitch in bytes (A: K
  // or M elements, B: N or K, C: N, or M for a column) on a 256-byte base; `alignment` stands for
  // all three. A column's problem exchanges A and B.
  auto fresh = [&](int64_t pitch) {
    return alignment ? *alignment : alignment_of({256, uint64_t(pitch * size)}, kPlanAlignCap);
  };
  const int align_a = fresh(a_in ? M : K), align_b = fresh(b_in ? K : N);
  const int align_c = fresh(column ? M : N);
  const int align_ak = column ? align_b : align_a, align_bk = column ? align_a : align_b;
  if (column) std::swap(M, N);
  Plan plan;
  if (cc) {
    plan = decide(documented_target(*cc), dtype, M, N, K, align_ak, align_bk, align_c, precision,
                  a_col, b_col);
  } else {
    require_gpu();
    plan = plan_for(PlanKey{current_device(), dtype, M, N, K, a_col, b_col, false, align_ak,
                            align_bk, align_c, precision});
  }
  py::dict d;
  d["name"] = plan.kernel->name;
  d["dtype"] = plan.kernel->dtype;
  d["reason"] = (column ? "an output of one column runs as its transpose, one row of " +
                              std::to_string(N) + ": "
                        : std::string()) +
                *plan.reason;
  d["pad"] = plan.pad;
  d["flip"] = plan.flip;
  return d;
}

// A capsule as a producer would make it, for testing the reader without a GPU.
struct TestTensor {
  std::vector<int64_t> shape, strides;
  dlpack::ManagedTensorVersioned versioned{};
  dlpack::ManagedTensor legacy{};
};

py::capsule dlpack_test_capsule(uintptr_t ptr, std::vector<int64_t> shape,
                                std::optional<std::vector<int64_t>> strides, int code, int bits,
                                int device_type, int device_id, bool versioned, bool readonly,
                                int lanes) {
  auto* t = new TestTensor;
  t->shape = std::move(shape);
  if (strides) t->strides = std::move(*strides);
  dlpack::Tensor dl{};
  dl.data = reinterpret_cast<void*>(ptr);
  dl.device = {device_type, device_id};
  dl.ndim = static_cast<int32_t>(t->shape.size());
  dl.dtype = {static_cast<uint8_t>(code), static_cast<uint8_t>(bits),
              static_cast<uint16_t>(lanes)};
  dl.shape = t->shape.data();
  dl.strides = strides ? t->strides.data() : nullptr;
  if (versioned) {
    t->versioned.version = {1, 0};
    t->versioned.manager_ctx = t;
    t->versioned.flags = readonly ? dlpack::kFlagReadOnly : 0;
    t->versioned.dl_tensor = dl;
    t->versioned.deleter = [](dlpack::ManagedTensorVersioned* m) {
      delete static_cast<TestTensor*>(m->manager_ctx);
    };
    // An unconsumed capsule frees itself, as producers' capsules do.
    return py::capsule(&t->versioned, dlpack::kCapsuleVersioned, [](PyObject* cap) {
      if (PyCapsule_IsValid(cap, dlpack::kCapsuleVersioned)) {
        auto* m = static_cast<dlpack::ManagedTensorVersioned*>(
            PyCapsule_GetPointer(cap, dlpack::kCapsuleVersioned));
        m->deleter(m);
      }
    });
  }
  t->legacy.dl_tensor = dl;
  t->legacy.manager_ctx = t;
  t->legacy.deleter = [](dlpack::ManagedTensor* m) {
    delete static_cast<TestTensor*>(m->manager_ctx);
  };
  return py::capsule(&t->legacy, dlpack::kCapsule, [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, dlpack::kCapsule)) {
      auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(cap, dlpack::kCapsule));
      m->deleter(m);
    }
  });
}

// _C.gemm as a plain METH_FASTCALL function: the eight or nine positional arguments arrive as
// an array, without pybind11's per-call argument vectors and overload walk. Exceptions map as
// pybind11 maps them (its builtin errors, then the module's translator's, then RuntimeError).
PyObject* gemm_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 8 && nargs != 9) {
    PyErr_Format(PyExc_TypeError, "gemm() takes 8 or 9 positional arguments (%zd given)", nargs);
    return nullptr;
  }
  const long fn = PyLong_AsLong(args[0]);
  if (fn == -1 && PyErr_Occurred()) return nullptr;
  try {
    return gemm_call(static_cast<int>(fn), args[1], args[2], args[3], args[4],
                     args[5], args[6], args[7], nargs == 9 ? py::handle(args[8]) : py::handle())
        .release()
        .ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const DeviceAccessForbidden& e) {
    PyErr_SetString(PyExc_AssertionError, e.what());
  } catch (const std::out_of_range& e) {
    PyErr_SetString(PyExc_KeyError, e.what());
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception in fastgemm._C.gemm");
  }
  return nullptr;
}

PyMethodDef gemm_def = {
    "gemm", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&gemm_fastcall)),
    METH_FASTCALL,
    "gemm(fn, A, B, C, alpha, beta, kernel, stream[, precision]) -> C: the entry of "
    "fastgemm.gemm (fn 0), sgemm (1) and hgemm (2)."};

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "fastgemm native module: the GEMM entry, kernel table, auto plans, device utilities";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const DeviceAccessForbidden& e) {
      PyErr_SetString(PyExc_AssertionError, e.what());
    } catch (const std::out_of_range& e) {
      PyErr_SetString(PyExc_KeyError, e.what());
    }
  });

  // --- the GEMM entry ----------------------------------------------------------------------------
  m.add_object("gemm", py::reinterpret_steal<py::object>(PyCFunction_NewEx(&gemm_def, nullptr, m.ptr())));

  // --- the kernel table and the auto decision ----------------------------------------------------
#ifdef FASTGEMM_HAS_HOPPER
  // The multi-GPU GEMM's remote pieces (hopper/gated.cu): pointers and strides as integers; the
  // caller (fastgemm.distributed) orders the work on the streams.
  m.def("_gemm_gated",
        [](const std::string& dtype, int64_t M, int64_t N, int64_t K, uintptr_t A, int64_t lda,
           bool a_col, uintptr_t B, int64_t ldb, bool b_col, uintptr_t C, int64_t ldc, float alpha,
           uintptr_t flag_a, uintptr_t flags_b, int chunk_cols, int slice_k, int64_t timeout_ms,
           uintptr_t stream, int device) {
          if (dtype != "float16" && dtype != "bfloat16") {
            throw py::value_error("_gemm_gated: float16 or bfloat16 operands, not " + dtype);
          }
          GemmArgs a;
          a.M = M, a.N = N, a.K = K;
          a.A = reinterpret_cast<const void*>(A), a.lda = lda, a.a_col_major = a_col;
          a.B = reinterpret_cast<const void*>(B), a.ldb = ldb, a.b_col_major = b_col;
          a.C = reinterpret_cast<void*>(C), a.ldc = ldc;
          a.alpha = alpha;
          a.stream = reinterpret_cast<cudaStream_t>(stream);
          Landed landed;
          landed.flag_a = reinterpret_cast<const int*>(flag_a);
          landed.flags_b = reinterpret_cast<const int*>(flags_b);
          landed.chunk_cols = chunk_cols, landed.slice_k = slice_k, landed.timeout_ms = timeout_ms;
          py::gil_scoped_release release;
          DeviceGuard guard(device);
          hgemm_gated(a, dtype == "float16" ? DType::f16 : DType::bf16, landed);
        },
        py::arg("dtype"), py::arg("M"), py::arg("N"), py::arg("K"), py::arg("A"), py::arg("lda"),
        py::arg("a_col_major"), py::arg("B"), py::arg("ldb"), py::arg("b_col_major"), py::arg("C"),
        py::arg("ldc"), py::arg("alpha"), py::arg("flag_a"), py::arg("flags_b"),
        py::arg("chunk_cols"), py::arg("slice_k"), py::arg("timeout_ms"), py::arg("stream"),
        py::arg("device"),
        "C = alpha * A @ B (fp16/bf16, row-major C), each k-tile's copies issued once the flags "
        "say its slice of A and B has landed; sm_90 only.");
  m.def("_write_flag",
        [](uintptr_t stream, uintptr_t flag, int value, int device) {
          py::gil_scoped_release release;
          DeviceGuard guard(device);
          stream_write_flag(reinterpret_cast<cudaStream_t>(stream), reinterpret_cast<int*>(flag),
                            value);
        },
        py::arg("stream"), py::arg("flag"), py::arg("value"), py::arg("device"),
        "*flag = value (int32) on `stream` after its earlier work (cuStreamWriteValue32).");
#endif
  m.def("kernels", [] {
    py::list out;
    for (const auto& k : kernel_table()) out.append(kernel_info(k));
    return out;
  }, "The kernel table as a list of dicts.");
  m.def("select", &select_plan, py::arg("M"), py::arg("N"), py::arg("K"), py::arg("dtype"),
        py::arg("cc") = py::none(), py::arg("alignment") = py::none(),
        py::arg("precision") = "ieee", py::arg("order") = "CC",
        "The kernel auto runs (dict: name, dtype, reason, pad, flip).");
  m.def("check_runnable",
        [](const std::string& name, int min_cc, int max_cc, int smem_bytes, int need_alignment,
           int cc, int alignment) -> py::object {
          const std::string problem = runnable_problem(name.c_str(), min_cc, max_cc, smem_bytes,
                                                       need_alignment, documented_target(cc),
                                                       alignment);
          return none_if(problem.empty(), py::str(problem));
        },
        py::arg("name"), py::arg("min_cc"), py::arg("max_cc"), py::arg("smem_bytes"),
        py::arg("need_alignment"), py::arg("cc"), py::arg("alignment"),
        "Why a kernel with these needs cannot run on compute capability cc (None if it can).");
  m.def("auto_rules", [](const std::string& precision) {
    auto as_list = [](const std::vector<AutoRule>& table) {
      py::list rules;
      for (const AutoRule& r : table) {
        py::object few = r.few_m > 0 ? py::object(py::make_tuple(r.few_m, r.few_n, r.few_parts))
                                     : py::none();
        py::object split_cost = r.split_cost > 0 ? py::object(py::int_(r.split_cost)) : py::none();
        py::object max_m = r.max_m > 0 ? py::object(py::int_(r.max_m)) : py::none();
        py::object min_cc = r.min_cc > 0 ? py::object(py::int_(r.min_cc)) : py::none();
        py::object min_k = r.min_k > 0 ? py::object(py::int_(r.min_k)) : py::none();
        py::object max_short = r.max_short > 0 ? py::object(py::int_(r.max_short)) : py::none();
        py::object rounds = py::none();
        if (const RoundSplit* q = r.round_split) {
          rounds = py::dict(py::arg("tile_m") = q->tile_m, py::arg("tile_n") = q->tile_n,
                            py::arg("k_unit") = q->k_unit, py::arg("min_units") = q->min_units,
                            py::arg("most") = q->most, py::arg("max_partials") = q->max_partials,
                            py::arg("blocks_per_sm") = q->blocks_per_sm,
                            py::arg("publish") = q->costs.publish, py::arg("add") = q->costs.add,
                            py::arg("solo") = q->costs.solo);
        }
        py::object max_k = r.max_k > 0 ? py::object(py::int_(r.max_k)) : py::none();
        rules.append(py::make_tuple(r.kernel, r.why, r.min_mn, few, max_m, min_cc, min_k,
                                    max_short, r.flip, split_cost, rounds, max_k, r.last_round,
                                    r.vs_n > 0 ? py::object(py::int_(r.vs_n)) : py::none(),
                                    r.min_m > 0 ? py::object(py::int_(r.min_m)) : py::none(),
                                    r.min_n > 0 ? py::object(py::int_(r.min_n)) : py::none(),
                                    r.b_order == 1   ? py::object(py::str("C"))
                                    : r.b_order == 2 ? py::object(py::str("F"))
                                                     : py::none(),
                                    r.row_align > 0 ? py::object(py::int_(r.row_align)) : py::none(),
                                    r.unaligned != nullptr ? py::object(py::str(r.unaligned))
                                                           : py::none(),
                                    r.half_edge, r.unsplit_last_round, r.wave_rounds,
                                    r.b_off_line > 0 ? py::object(py::int_(r.b_off_line))
                                                     : py::none(),
                                    r.over_parts > 0 ? py::object(py::float_(r.over_parts))
                                                     : py::none(),
                                    r.max_pad > 0 ? py::object(py::float_(r.max_pad))
                                                  : py::none(),
                                    r.in_place,
                                    r.a_off_line > 0 ? py::object(py::int_(r.a_off_line))
                                                     : py::none()));
      }
      return rules;
    };
    py::dict out;
    const Precision p = parse_precision(precision);
    if (p != Precision::ieee) {
      out[dtype_name(DType::f32)] = as_list(precision_rules(p));
      return out;
    }
    for (DType d : {DType::f32, DType::f16, DType::bf16}) out[dtype_name(d)] = as_list(auto_rules(d));
    return out;
  }, py::arg("precision") = "ieee",
  "The auto rules: dtype -> [(kernel, why, smallest M*N, (tile_m, tile_n, parts) or None: at most SMs / parts such tiles, largest M or None, smallest cc or None, smallest K or None, largest min(M, N) or None, flip: run as C^T = B^T A^T with the limits read on it, split cost or None: K split over the SMs in S = min(16, K / 256, SMs / tiles) >= 2 shares of at least that many k-tiles of 64 per partial tile summed, times S - 1, round split or None: the round model of common/split_model.h (a dict of its fields) splits K, S >= 2, largest K or None, last round: preferred only where (tile_m, tile_n) tiles fill more than one round of SMs and leave a last round of at most SMs / 2, parts then unused, wider tile width or None: preferred only where (tile_m, tile_n) tiles cost less than (tile_m, that width) ones by last_round_cost, smallest M or None, smallest N or None, B's layout or None: preferred only where the kernel's B is row-major ('C') or column-major ('F'; in a flip rule, the transposed problem's B, A^T), row alignment or None: preferred only where every operand's rows are aligned to that many bytes, under-aligned operands or None: preferred only where the rows of an operand named ('B', 'AB', 'ABC') are aligned to fewer than 16 bytes, half edge: preferred only where min(M, N) ends 1-64 past a multiple of 128, unsplit last round: preferred only where (tile_m, tile_n) tiles leave no last round of at most SMs / 2 to split, wave rounds: preferred only where (tile_m, tile_n) tiles take at most two rounds of SMs and less time than the others of 128x128, 192x128 and 128x256 by wave_cost, B off line, over parts, largest padding, in place, A off line or None: preferred only where the kernel's A is MN-major with rows aligned to at least 16 and fewer than that many bytes)], fastest first. precision 'tf32x3' / 'tf32': the float32 rules tried before the ieee ones.");
  m.def("last_round_cost", &last_round_cost, py::arg("M"), py::arg("N"), py::arg("K"),
        py::arg("tile_m"), py::arg("tile_n"), py::arg("sms"),
        "The last-round model of the auto rules (plan.h): rounds of tiles, a split last round, "
        "times the tile width.");
  m.def("wave_cost", &wave_cost, py::arg("M"), py::arg("N"), py::arg("tile_m"), py::arg("tile_n"),
        py::arg("sms"),
        "The wave model of the auto rules (plan.h): rounds of sms tiles, the last one whole, "
        "times the tile's area in 128x128 tiles.");
  m.def("cluster_split_choice",
        [](const std::vector<std::vector<std::vector<int>>>& capacity,
           const std::vector<double>& rates, int sms, int64_t tiles, int64_t k_units,
           int64_t min_units, int most, double add) {
          ClusterCapacity cap;
          for (size_t b = 0; b < 2 && b < capacity.size(); ++b)
            for (size_t n = 0; n <= size_t(kCapacityBlocks) && n < capacity[b].size(); ++n)
              for (size_t s = 0; s <= size_t(kCapacitySplit) && s < capacity[b][n].size(); ++s)
                cap.clusters[b][n][s] = capacity[b][n][s];
          if (rates.empty() || rates.size() > size_t(kCapacityBlocks)) {
            throw py::value_error("rates: 1 to " + std::to_string(kCapacityBlocks) + " entries");
          }
          SplitRates r{static_cast<int>(rates.size()), {}};
          std::copy(rates.begin(), rates.end(), r.rate);
          const ClusterChoice c =
              cluster_split_choice(cap, r, sms, tiles, k_units, min_units, most, add);
          return py::make_tuple(c.split, c.balance);
        },
        py::arg("capacity"), py::arg("rates"), py::arg("sms"), py::arg("tiles"),
        py::arg("k_units"), py::arg("min_units"), py::arg("most"), py::arg("add"),
        "The cluster split model (common/split_model.h): capacity[balance][n][S] clusters of S "
        "resident at n blocks per SM, rates[n - 1] an SM's throughput at n blocks -> (S, balance).");
  m.def("grid_split_choice",
        [](const std::vector<double>& rates, int sms, int64_t tiles, int64_t k_units,
           int64_t min_units, int most, double partial) {
          if (rates.empty() || rates.size() > size_t(kCapacityBlocks)) {
            throw py::value_error("rates: 1 to " + std::to_string(kCapacityBlocks) + " entries");
          }
          SplitRates r{static_cast<int>(rates.size()), {}};
          std::copy(rates.begin(), rates.end(), r.rate);
          return grid_split_choice(r, sms, tiles, k_units, min_units, most, partial);
        },
        py::arg("rates"), py::arg("sms"), py::arg("tiles"), py::arg("k_units"),
        py::arg("min_units"), py::arg("most"), py::arg("partial"),
        "The split of a grid whose partial tiles a second kernel sums (common/split_model.h, "
        "sgemm v21): rates[n - 1] an SM's throughput at n blocks -> S.");
  m.def("cluster_capacity", [](int device) {
          const ClusterCapacity& c = cluster_capacity(device);
          py::list out;
          for (const auto& per_policy : c.clusters) {
            py::list b;
            for (const auto& per_n : per_policy) {
              py::list n;
              for (int v : per_n) n.append(v);
              b.append(n);
            }
            out.append(b);
          }
          return out;
        }, py::arg("device"),
        "The device's cluster capacity table [balance][n][S] (common/split_model.h).");
  m.attr("PAD_MIN_MACS") = kPadMinMacs;
  m.attr("PLAN_ALIGN_CAP") = kPlanAlignCap;
  m.def("documented_smem_per_block", [](int cc) { return documented_target(cc).smem_per_block; },
        "Shared memory per block (bytes) that select(cc=...) assumes for an architecture.");
  m.def("alignment_of",
        [](const std::vector<uint64_t>& values, int cap) {
          int a = cap;
          for (uint64_t v : values) a = std::min(a, alignment_of({v}, cap));
          return a;
        },
        py::arg("values"), py::arg("cap") = 16);
  m.def("plan_cache_size", &plan_cache_size, "Number of cached auto plans.");
  m.def("_clear_plan_cache", &clear_plan_cache,
        "Forget every auto plan and read FASTGEMM_DEV_L2PROMO again (sweeps that switch "
        "FASTGEMM_DEV_PAD, FASTGEMM_DEV_REALIGN or FASTGEMM_DEV_L2PROMO between candidates).");

  // --- the array adapter ---------------------------------------------------------------------------
  m.def("describe", &describe, py::arg("obj"), py::arg("name"),
        py::arg("dlpack_stream") = py::none(),
        "How the GEMM entry reads one operand (a dict).");
  m.def("layout", [](int64_t rows, int64_t cols, int64_t rs, int64_t cs, int itemsize) -> py::object {
    const auto l = unit_stride_layout(rows, cols, rs, cs, itemsize);
    return l ? py::object(py::make_tuple(l->col_major, l->ld)) : py::object(py::none());
  }, "(column-major, leading dimension) of a matrix with unit stride along one dimension, or None.");
  m.def("byte_span", [](uintptr_t ptr, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                        int itemsize) { return byte_span(ptr, rows, cols, rs, cs, itemsize); });

  // --- device utilities ------------------------------------------------------------------------------
  m.def("copy_strided", [](int elem_bytes, uintptr_t src, int64_t rows, int64_t cols, int64_t rs,
                           int64_t cs, uintptr_t dst, int64_t dst_ld, uintptr_t stream,
                           int device) {
    py::gil_scoped_release release;
    DeviceGuard guard(device);
    copy_strided(elem_bytes, reinterpret_cast<const void*>(src), rows, cols, rs, cs,
                 reinterpret_cast<void*>(dst), dst_ld, reinterpret_cast<cudaStream_t>(stream));
  }, "Copy a strided matrix into a row-major buffer with leading dimension dst_ld.");
  m.def("device_count", &device_count);
  m.def("runtime_status", &runtime_status);
  m.def("device_cc", &device_cc);
  m.def("device_name", &device_name);
  m.def("current_device", &current_device);
  m.def("set_reserved_sms", &set_reserved_sms);
  m.def("pointer_device", &pointer_device);
  m.def("runtime_version", &runtime_version);

  // --- the host board of fastgemm.distributed ------------------------------------------------------
  m.def("board_bytes", &board_bytes, py::arg("ranks"), "Bytes of a board page for `ranks` ranks.");
  m.def("board_exchange",
        [](uintptr_t page, int ranks, int rank, int64_t seq, const std::vector<int64_t>& values,
           int64_t timeout_ms) {
          py::gil_scoped_release release;  // other threads run while this one waits
          return board_exchange(page, ranks, rank, seq, values, timeout_ms);
        },
        py::arg("page"), py::arg("ranks"), py::arg("rank"), py::arg("seq"), py::arg("values"),
        py::arg("timeout_ms"),
        "Exchange number `seq` of `values` between the ranks sharing the board page at address "
        "`page` (board.h): every rank's values, in rank order; RuntimeError after timeout_ms.");

  // --- for the CPU tests ---------------------------------------------------------------------------
  m.def("_set_runtime_hooks",
        [](bool forbid, int device_count, int pointer_device, int cc, bool record) {
          runtime_hooks() = RuntimeHooks{forbid, device_count, pointer_device, cc,
                                         cc > 0 ? documented_target(cc).smem_per_block : 0,
                                         record};
          clear_plan_cache();  // plans made for a pretended GPU must not outlive it
        },
        py::arg("forbid") = false, py::arg("device_count") = -1, py::arg("pointer_device") = -2,
        py::arg("cc") = 0, py::arg("record") = false,
        "forbid: device queries raise AssertionError; device_count >= 0, pointer_device >= -1, "
        "cc > 0: answers that replace the runtime's; record: calls log their work (see "
        "_take_recorded) instead of queuing it. No arguments: back to the runtime.");
  m.def("_take_recorded", [] {
    py::list out;
    for (auto& [op, kernel, args] : take_recorded()) {
      py::list values;
      for (double v : args) {
        const bool integral = v == double(int64_t(v));
        values.append(integral ? py::object(py::int_(int64_t(v))) : py::object(py::float_(v)));
      }
      out.append(py::make_tuple(op, kernel, py::tuple(values)));
    }
    return out;
  }, "The work logged under the record hook since the last call: [(op, kernel, numbers)].");
  m.def("_dlpack_test_capsule", &dlpack_test_capsule, py::arg("ptr"), py::arg("shape"),
        py::arg("strides"), py::arg("code"), py::arg("bits"), py::arg("device_type"),
        py::arg("device_id"), py::arg("versioned") = true, py::arg("readonly") = false,
        py::arg("lanes") = 1);
  m.def("swizzle_chunk", &swizzle_chunk_dynamic, py::arg("chunks_per_row"), py::arg("row"),
        py::arg("chunk"),
        "The shared-memory swizzle of the tensor-core kernels: physical 16-byte chunk of logical "
        "chunk `chunk` in row `row` of a tile with `chunks_per_row` chunks per row (-1 if that "
        "width is unsupported).");
  m.attr("cuda_archs") = FASTGEMM_CUDA_ARCHS;
  m.attr("__version__") = FASTGEMM_VERSION;
}
