// entry.cpp — see entry.h.
#include "entry.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <tuple>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/launch.cuh"
#include "common/runtime.h"
#include "operands.h"
#include "plan.h"
#include "registry.h"

namespace py = pybind11;

namespace fastgemm {

namespace {

constexpr std::array<DType, 3> kDTypes = {DType::f32, DType::f16, DType::bf16};

py::object steal(PyObject* p) { return py_steal(p); }

// Python objects the entry needs, looked up lazily with the GIL held (so never by two threads at
// once, and never inside a C++ static initialiser that another thread could wait on while this
// one waits for the GIL); kept for the life of the process.
struct PyRefs {
  PyObject* real = nullptr;      // numbers.Real
  PyObject* integral = nullptr;  // numbers.Integral
  PyObject* ptr = PyUnicode_InternFromString("ptr");
  PyObject* cuda_stream = PyUnicode_InternFromString("cuda_stream");
  PyObject* torch_raw_stream = nullptr;  // torch._C._cuda_getCurrentRawStream, or
  PyObject* torch_current_stream = nullptr;  // torch.cuda.current_stream where that is missing
  PyObject* cupy_current_stream = nullptr;   // cupy.cuda.get_current_stream
};
PyRefs& refs() {
  static PyRefs* r = new PyRefs();  // immortal: no teardown ordering at interpreter exit
  return *r;
}

PyObject* module_attr(const char* module, const char* attr) {
  py::object m = steal(PyImport_ImportModule(module));
  return steal(PyObject_GetAttrString(m.ptr(), attr)).release().ptr();
}

// numbers.Real / numbers.Integral, for NumPy scalars and other registered number types; the
// answer is kept per type (a few types in practice).
bool is_number(py::handle v, bool integral) {
  PyRefs& r = refs();
  PyObject*& abc = integral ? r.integral : r.real;
  if (abc == nullptr) abc = module_attr("numbers", integral ? "Integral" : "Real");
  struct Seen {
    PyTypeObject* type;
    bool integral, answer;
  };
  static std::vector<Seen> seen;  // guarded by the GIL
  PyTypeObject* type = Py_TYPE(v.ptr());
  for (const Seen& e : seen) {
    if (e.type == type && e.integral == integral) return e.answer;
  }
  const int answer = PyObject_IsInstance(v.ptr(), abc);
  if (answer < 0) throw py::error_already_set();
  if (seen.size() < 64) {
    Py_INCREF(type);  // the address then cannot be reused by another type
    seen.push_back({type, integral, answer == 1});
  }
  return answer == 1;
}

std::string type_name_of(py::handle v) {
  return py::str(py::type::handle_of(v).attr("__name__")).cast<std::string>();
}

// alpha and beta: a Python float or int (not bool), or any numbers.Real (NumPy scalars).
double scalar(py::handle v, const char* name) {
  PyObject* p = v.ptr();
  if (PyFloat_Check(p)) return PyFloat_AS_DOUBLE(p);
  if (PyBool_Check(p) || (!PyLong_Check(p) && !is_number(v, false))) {
    throw py::type_error(std::string(name) + " must be a real number, got " + type_name_of(v));
  }
  const double d = PyLong_Check(p) ? PyLong_AsDouble(p) : PyFloat_AsDouble(p);
  if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  return d;
}

int64_t to_int64(py::handle v) {
  py::object index = steal(PyNumber_Index(v.ptr()));
  long long x = PyLong_AsLongLong(index.ptr());
  if (x == -1 && PyErr_Occurred()) {  // cudaStream_t values above 2^63 read as unsigned
    PyErr_Clear();
    const unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
    if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw py::error_already_set();
    x = static_cast<long long>(u);
  }
  return x;
}

// An int cudaStream_t from an int, a cupy.cuda.Stream (.ptr) or a torch.cuda.Stream
// (.cuda_stream); nullopt for None.
std::optional<int64_t> stream_handle(py::handle s) {
  if (s.is_none()) return std::nullopt;
  constexpr const char* kWhat = "stream must be an int, a cupy.cuda.Stream or a torch.cuda.Stream";
  if (PyBool_Check(s.ptr())) throw py::type_error(kWhat);
  if (PyLong_Check(s.ptr()) || is_number(s, true)) return to_int64(s);
  for (PyObject* attr : {refs().cuda_stream, refs().ptr}) {
    py::object handle = py_get_optional(s, attr);
    if (handle && !PyBool_Check(handle.ptr()) &&
        (PyLong_Check(handle.ptr()) || is_number(handle, true))) {
      return to_int64(handle);
    }
  }
  throw py::type_error(std::string(kWhat) + ", got " + type_name_of(s));
}

// The current stream of the calling thread, as the library that made the arrays sees it.
// PyTorch: torch._C._cuda_getCurrentRawStream(device), the call torch's own generated code
// (Inductor's kernel launchers) makes for the raw cudaStream_t; the public
// torch.cuda.current_stream(device).cuda_stream where a build lacks it. CuPy:
// cupy.cuda.get_current_stream(device).ptr. Both are thread-local, as the libraries define them.
int64_t torch_current_stream(int device) {
  PyRefs& r = refs();
  if (r.torch_raw_stream == nullptr && r.torch_current_stream == nullptr) {
    try {
      r.torch_raw_stream = module_attr("torch._C", "_cuda_getCurrentRawStream");
    } catch (const py::error_already_set&) {
      r.torch_current_stream = module_attr("torch.cuda", "current_stream");
    }
  }
  if (r.torch_raw_stream != nullptr) {
    py::object index = steal(PyLong_FromLong(device));
    PyObject* args[1] = {index.ptr()};
    return to_int64(steal(PyObject_Vectorcall(r.torch_raw_stream, args, 1, nullptr)));
  }
  py::object stream = steal(PyObject_CallFunction(r.torch_current_stream, "i", device));
  return to_int64(steal(PyObject_GetAttr(stream.ptr(), r.cuda_stream)));
}

int64_t cupy_current_stream(int device) {
  PyRefs& r = refs();
  if (r.cupy_current_stream == nullptr) {
    r.cupy_current_stream = module_attr("cupy.cuda", "get_current_stream");
  }
  py::object index = steal(PyLong_FromLong(device));
  PyObject* args[1] = {index.ptr()};  // a vectorcall: no argument tuple built per call
  py::object stream = steal(PyObject_Vectorcall(r.cupy_current_stream, args, 1, nullptr));
  return to_int64(steal(PyObject_GetAttr(stream.ptr(), r.ptr)));
}

std::string join_dtypes(const std::vector<const char*>& names, const char* sep) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : sep) + std::string(n);
  return out;
}

bool is_one_of(const std::string& dtype, const std::vector<const char*>& allowed) {
  for (const char* a : allowed) {
    if (dtype == a) return true;
  }
  return false;
}

// A matrix as a kernel reads it: address, leading dimension, column-major flag.
struct Mat {
  uintptr_t ptr;
  int64_t ld;
  bool col;
};

// A temporary's rows are 128 bytes apart at least (a multiple of 128 bytes): whole L2 lines, so
// that each row of a TMA box (128 bytes under the 128-byte swizzle) is one line. With a pitch a
// multiple of only 16 bytes, a box row straddles two lines, and the wgmma rungs read such an
// operand 1.2-1.4x slower (NOTES: rows not on 128 bytes); the CUDA-core rungs need only 16.
int64_t aligned_ld(int64_t cols, int64_t itemsize) {
  const int64_t per128 = 128 / itemsize;
  return (cols + per128 - 1) / per128 * per128;
}

// Where a call's work goes: the device, or (the CPU tests' `record` hook) a log.
struct Ops {
  virtual ~Ops() = default;
  virtual void wait(cudaStream_t producer) = 0;
  // One allocation for the call's temporaries that follow (temporary_bytes: their sum), so that
  // a call with several pays for one; the others then come out of it.
  virtual void reserve(size_t /*bytes*/) {}
  // A row-major temporary with 128-byte aligned rows, alive until the call's work is queued.
  virtual Mat alloc(int64_t rows, int64_t cols) = 0;
  // dst (row-major) = the rows x cols matrix at src with element strides (rs, cs).
  virtual void copy(uintptr_t src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                    const Mat& dst) = 0;
  // dst (row-major, dst_rows x dst_cols) = the rows x cols matrix at src (rows rs elements
  // apart, contiguous) in its top-left corner, zeros elsewhere.
  virtual void pad(uintptr_t src, int64_t rows, int64_t cols, int64_t rs, const Mat& dst,
                   int64_t dst_rows, int64_t dst_cols) = 0;
  virtual void gemm(const KernelEntry& k, const GemmArgs& args) = 0;
  virtual void scale(DType dtype, uintptr_t C, int64_t rows, int64_t cols, int64_t ld,
                     float beta) = 0;
};

// Bytes of a temporary of rows x cols, its rows 128-byte aligned, rounded up to 256 so that the
// next one in a shared allocation starts aligned.
size_t temporary_size(int64_t rows, int64_t cols, int64_t itemsize) {
  return (size_t(rows * aligned_ld(cols, itemsize) * itemsize) + 255) / 256 * 256;
}

// On the device, in the operands' device and stream. Temporaries are stream-ordered
// (cudaMallocAsync, cudaFreeAsync once the work is queued), carved out of one reserved
// allocation where the call reserved one; captured into a CUDA graph, their allocation and
// release become the graph's own memory nodes, made anew on each replay.
struct DeviceOps final : Ops {
  DeviceGuard guard;
  cudaStream_t stream;
  int device;
  int64_t itemsize;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  size_t reserved = 0, used = 0;  // of buffers.front(), where reserve() made it
  DeviceOps(int dev, cudaStream_t s, int64_t size)
      : guard(dev), stream(s), device(dev), itemsize(size) {}
  void wait(cudaStream_t producer) override { stream_wait(producer, stream); }
  void reserve(size_t bytes) override {
    if (bytes == 0 || !buffers.empty()) return;
    buffers.push_back(
        std::make_unique<DeviceBuffer>(bytes, reinterpret_cast<uintptr_t>(stream), device));
    reserved = bytes;
  }
  Mat alloc(int64_t rows, int64_t cols) override {
    const int64_t ld = aligned_ld(cols, itemsize);
    const size_t bytes = temporary_size(rows, cols, itemsize);
    if (used + bytes <= reserved) {
      used += bytes;
      return Mat{buffers.front()->ptr() + (used - bytes), ld, false};
    }
    buffers.push_back(std::make_unique<DeviceBuffer>(size_t(rows * ld * itemsize),
                                                     reinterpret_cast<uintptr_t>(stream), device));
    return Mat{buffers.back()->ptr(), ld, false};
  }
  void copy(uintptr_t src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
            const Mat& dst) override {
    copy_strided(int(itemsize), reinterpret_cast<const void*>(src), rows, cols, rs, cs,
                 reinterpret_cast<void*>(dst.ptr), dst.ld, stream);
  }
  void pad(uintptr_t src, int64_t rows, int64_t cols, int64_t rs, const Mat& dst,
           int64_t dst_rows, int64_t dst_cols) override {
    copy_zero_padded(int(itemsize), reinterpret_cast<const void*>(src), rows, cols, rs,
                     reinterpret_cast<void*>(dst.ptr), dst.ld, dst_rows, dst_cols, stream);
  }
  void gemm(const KernelEntry& k, const GemmArgs& args) override { k.launch(args); }
  void scale(DType dtype, uintptr_t C, int64_t rows, int64_t cols, int64_t ld,
             float beta) override {
    scale_matrix(dtype, reinterpret_cast<void*>(C), rows, cols, ld, beta, stream);
  }
};

// The `record` hook: the work as a log of (operation, kernel, numbers), fake temporaries.
struct Recorded {
  std::string op, kernel;
  std::vector<double> args;
};
std::mutex& record_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Recorded>& record_log() {
  static std::vector<Recorded> log;
  return log;
}
struct RecordOps final : Ops {
  cudaStream_t stream;
  int64_t itemsize;
  void add(std::string op, std::string kernel, std::vector<double> args) {
    std::lock_guard<std::mutex> lock(record_mutex());
    record_log().push_back({std::move(op), std::move(kernel), std::move(args)});
  }
  static double p(const void* x) { return double(reinterpret_cast<uintptr_t>(x)); }
  RecordOps(cudaStream_t s, int64_t size) : stream(s), itemsize(size) {}
  void wait(cudaStream_t producer) override { add("wait", "", {p(producer), p(stream)}); }
  void reserve(size_t bytes) override {
    if (bytes > 0) add("reserve", "", {double(bytes), double(itemsize)});
  }
  Mat alloc(int64_t rows, int64_t cols) override {
    static std::atomic<uint64_t> next{0};
    const Mat m{0x7e00'0000'0000ull + (next++ << 32), aligned_ld(cols, itemsize), false};
    add("alloc", "", {double(m.ptr), double(rows), double(cols), double(m.ld)});
    return m;
  }
  void copy(uintptr_t src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
            const Mat& dst) override {
    add("copy", "", {double(src), double(rows), double(cols), double(rs), double(cs),
                     double(dst.ptr), double(dst.ld)});
  }
  void pad(uintptr_t src, int64_t rows, int64_t cols, int64_t rs, const Mat& dst,
           int64_t dst_rows, int64_t dst_cols) override {
    add("pad", "", {double(src), double(rows), double(cols), double(rs), double(dst.ptr),
                    double(dst.ld), double(dst_rows), double(dst_cols)});
  }
  void gemm(const KernelEntry& k, const GemmArgs& a) override {
    add("gemm", k.name, {double(a.M), double(a.N), double(a.K), p(a.A), double(a.lda),
                         double(a.a_col_major), p(a.B), double(a.ldb), double(a.b_col_major),
                         p(a.C), double(a.ldc), a.alpha, a.beta, p(a.stream),
                         double(a.c_col_major)});
  }
  void scale(DType, uintptr_t C, int64_t rows, int64_t cols, int64_t ld, float beta) override {
    add("scale", "", {double(C), double(rows), double(cols), double(ld), beta, p(stream)});
  }
};

// Counts the bytes of the temporaries a call's work takes (temporary_size each) and does nothing.
struct SizingOps final : Ops {
  int64_t itemsize;
  size_t bytes = 0;
  explicit SizingOps(int64_t size) : itemsize(size) {}
  void wait(cudaStream_t) override {}
  Mat alloc(int64_t rows, int64_t cols) override {
    const Mat m{uintptr_t(1) << 40 | bytes, aligned_ld(cols, itemsize), false};  // 256-aligned
    bytes += temporary_size(rows, cols, itemsize);
    return m;
  }
  void copy(uintptr_t, int64_t, int64_t, int64_t, int64_t, const Mat&) override {}
  void pad(uintptr_t, int64_t, int64_t, int64_t, const Mat&, int64_t, int64_t) override {}
  void gemm(const KernelEntry&, const GemmArgs&) override {}
  void scale(DType, uintptr_t, int64_t, int64_t, int64_t, float) override {}
};

// Calls f(ops) with the device's Ops, or the recorder under the `record` hook: a stack object
// either way, no allocation per call.
template <typename F>
void with_ops(int device, cudaStream_t stream, int64_t itemsize, F&& f) {
  if (runtime_hooks().record) {
    RecordOps ops(stream, itemsize);
    f(static_cast<Ops&>(ops));
  } else {
    DeviceOps ops(device, stream, itemsize);
    f(static_cast<Ops&>(ops));
  }
}

int alignment(const Mat& m, int64_t itemsize) {
  return alignment_of({uint64_t(m.ptr), uint64_t(m.ld * itemsize)}, kPlanAlignCap);
}

struct Strided {
  uintptr_t ptr;
  int64_t rows, cols, rs, cs;
};

// Everything a launch needs, decided with the GIL held; executed without it.
struct Job {
  const KernelEntry* kernel;
  // The plan's padded path: operands aligned below pad_alignment bytes go through aligned
  // temporaries; or (grown_k > 0) the problem grown to grown_m x grown_n x grown_k (Plan).
  bool pad;
  int pad_alignment;
  int64_t grown_m, grown_n, grown_k;
  int device;
  cudaStream_t stream;
  std::vector<cudaStream_t> waits;
  int64_t itemsize;
  int64_t M, N, K;  // after the swap
  float alpha, beta;
  Mat a, b, c;      // before the swap (a, b: unset where a strided copy replaces them)
  bool swap;
  bool flip = false;  // the plan's: run C^T = B^T A^T after the swap, C written column-major
  std::optional<Strided> copy_a, copy_b;
  int realign = 0;  // the plan's: A (1) and B (2) copied for 128-byte rows (Plan::realign)
};

// A TMA store bounds its writes at whole 16-byte units of a row: where C's N-element rows end
// inside one (a padded view, e.g. 100 fp16 columns of a 128-wide array), it would write the
// elements past the view's edge. Such a C, like an under-aligned one, goes through an aligned
// work buffer.
bool row_edge(const KernelEntry& k, int64_t N, int64_t itemsize) {
  return std::string_view(k.epilogue) == "tma_store" && (N * itemsize) % 16 != 0;
}

// reserve: the bytes of the temporaries that follow (SizingOps), reserved once the waits are
// queued, so that a capture the waits join owns the allocation too.
void execute(const Job& job, Ops& work, size_t reserve = 0) {
  Ops* const ops = &work;
  for (cudaStream_t w : job.waits) ops->wait(w);
  ops->reserve(reserve);
  const int64_t M = job.M, N = job.N;
  const int64_t K = job.K, size = job.itemsize;
  // A copy of rows x cols at src (strides rs, cs) into a fresh aligned temporary.
  auto copied = [&](uintptr_t src, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
    const Mat dst = ops->alloc(rows, cols);
    ops->copy(src, rows, cols, rs, cs, dst);
    return dst;
  };
  Mat pa = job.a, pb = job.b, pc = job.c;
  if (job.copy_a) pa = copied(job.copy_a->ptr, job.copy_a->rows, job.copy_a->cols, job.copy_a->rs, job.copy_a->cs);
  if (job.copy_b) pb = copied(job.copy_b->ptr, job.copy_b->rows, job.copy_b->cols, job.copy_b->rs, job.copy_b->cs);
  if (job.swap) {  // C^T = B^T A^T: the operands exchange places, each read transposed
    const Mat a2{pb.ptr, pb.ld, !pb.col}, b2{pa.ptr, pa.ld, !pa.col};
    pa = a2, pb = b2;
  }
  // A copy of m (rows x cols as the kernel reads it) in its own layout, its rows 128 bytes apart:
  // `rows` rows of `cols` elements, or (column-major) `cols` rows of `rows`.
  auto relaid = [&](const Mat& m, int64_t rows, int64_t cols) {
    Mat copy = m.col ? copied(m.ptr, cols, rows, m.ld, 1) : copied(m.ptr, rows, cols, m.ld, 1);
    copy.col = m.col;
    return copy;
  };
  if (job.realign & 1) pa = relaid(pa, M, K);
  if (job.realign & 2) pb = relaid(pb, K, N);
  const KernelEntry& k = *job.kernel;
  GemmArgs args;
  args.alpha = job.alpha, args.beta = job.beta;
  args.stream = job.stream;
  auto run = [&](const Mat& ma, const Mat& mb, const Mat& mc) {
    args.A = reinterpret_cast<const void*>(ma.ptr), args.lda = ma.ld, args.a_col_major = ma.col;
    args.B = reinterpret_cast<const void*>(mb.ptr), args.ldb = mb.ld, args.b_col_major = mb.col;
    args.C = reinterpret_cast<void*>(mc.ptr), args.ldc = mc.ld, args.c_col_major = mc.col;
    ops->gemm(k, args);
  };
  if (job.pad && job.grown_k > 0) {
    // fp32 (never transposed): A, B (and C where it grew or is under-aligned) copied into aligned
    // temporaries, zero-filled to the grown problem, each in its own layout. A (M x K) is stored
    // as M rows of K or (column-major) K rows of M, B (K x N) as K rows of N or N rows of K.
    if (job.flip) throw std::logic_error(std::string(k.name) + ": no transposed grown problem");
    const int64_t gm = job.grown_m, gn = job.grown_n, gk = job.grown_k;
    auto grown = [&](const Mat& m, int64_t rows, int64_t cols, int64_t grown_rows,
                     int64_t grown_cols) {
      const int64_t r = m.col ? cols : rows, c = m.col ? rows : cols;
      const int64_t gr = m.col ? grown_cols : grown_rows, gc = m.col ? grown_rows : grown_cols;
      Mat copy = ops->alloc(gr, gc);
      ops->pad(m.ptr, r, c, m.ld, copy, gr, gc);
      copy.col = m.col;
      return copy;
    };
    const Mat ga = grown(pa, M, K, gm, gk), gb = grown(pb, K, N, gk, gn);
    args.M = gm, args.N = gn, args.K = gk;
    if (gm == M && gn == N && alignment(pc, size) >= 16) {
      run(ga, gb, pc);
      return;
    }
    const Mat work = ops->alloc(gm, gn);  // beta = 0 never reads C: then no copy of it
    if (job.beta != 0.0f) ops->pad(pc.ptr, M, N, pc.ld, work, gm, gn);
    run(ga, gb, work);
    ops->copy(work.ptr, M, N, work.ld, 1, pc);
    return;
  }
  if (job.pad) {  // under-aligned operands go through aligned temporaries, in their own layouts
    auto aligned = [&](const Mat& m, int64_t rows, int64_t cols) {
      return alignment(m, size) >= job.pad_alignment ? m : relaid(m, rows, cols);
    };
    pa = aligned(pa, M, K);
    pb = aligned(pb, K, N);
  }
  // C through an aligned work buffer where a TMA store would write past its rows' edge, or where
  // the padded path's kernel needs C aligned; beta = 0 never reads C: then no copy of it.
  const bool work_c = row_edge(k, N, size) || (job.pad && alignment(pc, size) < job.pad_alignment);
  const Mat buffer = !work_c             ? pc
                     : job.beta != 0.0f ? copied(pc.ptr, M, N, pc.ld, 1)
                                        : ops->alloc(M, N);
  Mat out = buffer;
  if (job.flip) {  // the transposed problem: operands exchanged again, C column-major
    // The epilogues that write a column-major C: the clusters' split_k, and the mma.sync rungs
    // whose partial tiles a second kernel sums (split_k_global, sum_partial_tiles_kernel).
    const std::string_view epilogue(k.epilogue);
    const bool col_c = epilogue == "split_k" ||
                       (epilogue == "split_k_global" && std::string_view(k.family) == "mma_sync");
    if (!col_c) throw std::logic_error(std::string(k.name) + ": no transposed run for this plan");
    const Mat a2{pb.ptr, pb.ld, !pb.col}, b2{pa.ptr, pa.ld, !pa.col};
    pa = a2, pb = b2, out.col = true;
  }
  args.M = job.flip ? N : M, args.N = job.flip ? M : N, args.K = K;
  run(pa, pb, out);
  if (work_c) ops->copy(buffer.ptr, M, N, buffer.ld, 1, pc);
}

}  // namespace

std::vector<std::tuple<std::string, std::string, std::vector<double>>> take_recorded() {
  std::lock_guard<std::mutex> lock(record_mutex());
  std::vector<std::tuple<std::string, std::string, std::vector<double>>> out;
  for (auto& r : record_log()) out.emplace_back(std::move(r.op), std::move(r.kernel), std::move(r.args));
  record_log().clear();
  return out;
}

py::object gemm_call(int fn_id, py::handle A, py::handle B, py::handle C, py::handle alpha,
                     py::handle beta, py::handle kernel, py::handle stream,
                     py::handle precision_arg) {
  GemmFn fn = static_cast<GemmFn>(fn_id);
  // --- arguments, in the order a user reads them ------------------------------------------------
  const double alpha_d = scalar(alpha, "alpha"), beta_d = scalar(beta, "beta");
  const float alpha_f = static_cast<float>(alpha_d), beta_f = static_cast<float>(beta_d);
  // A str argument's UTF-8 in place (valid while the object lives), or the TypeError `what`.
  auto str_arg = [](py::handle obj, const char* what) {
    if (!PyUnicode_Check(obj.ptr())) {
      throw py::type_error(std::string(what) + ", got " + std::string(py::repr(obj)));
    }
    Py_ssize_t len = 0;
    const char* chars = PyUnicode_AsUTF8AndSize(obj.ptr(), &len);
    if (chars == nullptr) throw py::error_already_set();
    return std::string_view(chars, size_t(len));
  };
  const std::string_view kernel_name =
      str_arg(kernel, "kernel must be a str ('auto' or a name from kernels())");
  const bool automatic = kernel_name == "auto";
  const Precision precision =
      precision_arg && !precision_arg.is_none()
          ? parse_precision(str_arg(precision_arg, "precision must be a str ('ieee', 'tf32x3' or 'tf32')"))
          : Precision::ieee;
  const std::optional<int64_t> explicit_stream = stream_handle(stream);
  // DLPack producers order their pending work before this consumer stream (1: legacy default).
  const int64_t dlpack_stream = explicit_stream && *explicit_stream != 0 ? *explicit_stream : 1;

  const Operand a = read_operand(A, "A", dlpack_stream);
  if (fn == GemmFn::gemm) {
    if (a.dtype == "float32") {
      fn = GemmFn::sgemm;
    } else if (a.dtype == "float16" || a.dtype == "bfloat16") {
      fn = GemmFn::hgemm;
    } else {
      throw py::type_error("gemm supports float32, float16 and bfloat16; A is " + a.dtype);
    }
  }
  const Operand b = read_operand(B, "B", dlpack_stream);
  const Operand c = read_operand(C, "C", dlpack_stream);
  const char* fname = fn == GemmFn::sgemm ? "sgemm" : "hgemm";
  static const std::vector<const char*> kSgemmTypes = {"float32"};
  static const std::vector<const char*> kHgemmTypes = {"float16", "bfloat16"};
  const std::vector<const char*>& allowed = fn == GemmFn::sgemm ? kSgemmTypes : kHgemmTypes;

  // --- types, shapes, layouts: all checked before anything touches the GPU --------------------
  for (const auto& [nm, m] : {std::pair{"A", &a}, std::pair{"B", &b}, std::pair{"C", &c}}) {
    if (!is_one_of(m->dtype, allowed)) {
      std::string hint;
      if (m->dtype == "float16" || m->dtype == "bfloat16") hint = " (use hgemm)";
      if (m->dtype == "float32" && fn == GemmFn::hgemm) hint = " (use sgemm)";
      throw py::type_error(std::string(fname) + " needs " + join_dtypes(allowed, " or ") +
                           " operands; " + nm + " is " + m->dtype + hint);
    }
  }
  if (a.dtype != b.dtype || a.dtype != c.dtype) {
    throw py::type_error(std::string(fname) + ": A, B and C must share one dtype; got " + a.dtype +
                         ", " + b.dtype + ", " + c.dtype);
  }
  const DType dtype = parse_dtype(c.dtype);
  if (dtype != DType::f32 && precision != Precision::ieee) {
    throw py::value_error(std::string(fname) + ": precision '" + precision_name(precision) +
                          "' is for float32 operands; " + c.dtype +
                          " products always run on the tensor cores with fp32 accumulation");
  }
  const int64_t M = a.rows, K = a.cols, N = b.cols;
  if (b.rows != K) {
    throw py::value_error(std::string(fname) + ": inner dimensions differ: A is " +
                          std::to_string(M) + "x" + std::to_string(K) + ", B is " +
                          std::to_string(b.rows) + "x" + std::to_string(N));
  }
  if (c.rows != M || c.cols != N) {
    throw py::value_error(std::string(fname) + ": C must be " + std::to_string(M) + "x" +
                          std::to_string(N) + " for A " + std::to_string(M) + "x" +
                          std::to_string(K) + " @ B " + std::to_string(K) + "x" +
                          std::to_string(N) + "; C is " + std::to_string(c.rows) + "x" +
                          std::to_string(c.cols));
  }
  if (c.readonly) throw py::value_error(std::string(fname) + ": C is read-only");
  const std::optional<Layout> c_layout = unit_stride_layout(c.rows, c.cols, c.rs, c.cs, c.itemsize);
  if (!c_layout) {
    throw py::value_error(std::string(fname) +
                          ": C must be row- or column-major with unit stride; its strides are " +
                          tuple_repr({c.rs, c.cs}) + " elements");
  }
  for (const auto& [nm, m] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    if (c.size() && m->size() && overlaps(c, *m)) {
      throw py::value_error(std::string(fname) + ": C overlaps " + nm +
                            "; the output must not alias an input");
    }
  }
  const KernelEntry* named = nullptr;
  if (!automatic) {
    named = find_kernel(kernel_name, dtype);
    if (named == nullptr) {
      if (!kernel_name_exists(kernel_name)) {
        std::string list;
        for (const auto& k : kernel_table()) {
          if (kernel_dtype(k) == dtype) list += (list.empty() ? "" : ", ") + std::string(k.name);
        }
        throw py::value_error("unknown kernel " + std::string(py::repr(kernel)) + "; " +
                              c.dtype + " kernels: " + (list.empty() ? "none" : list));
      }
      std::vector<const char*> kinds;
      for (DType d : kDTypes) {
        if (find_kernel(kernel_name, d)) kinds.push_back(dtype_name(d));
      }
      throw py::value_error("kernel " + std::string(py::repr(kernel)) + " is a " +
                            join_dtypes(kinds, " or ") + " kernel; operands are " + c.dtype);
    }
    if (!at_least(kernel_precision(*named), precision)) {
      throw py::value_error("kernel " + std::string(py::repr(kernel)) + " computes in " +
                            named->precision + " precision, less accurate than precision '" +
                            precision_name(precision) + "' asks; pass precision='" +
                            named->precision + "' to run it");
    }
  }

  // --- the GPU from here on ---------------------------------------------------------------------
  if (device_count() == 0) {
    throw std::runtime_error("fastgemm needs a CUDA GPU, and the CUDA runtime found none (" +
                             runtime_status() + ")");
  }
  py::object result = py::reinterpret_borrow<py::object>(C);
  if (M == 0 || N == 0) return result;
  // Empty operands (A and B when K == 0) may own no memory at all (CuPy gives them address 0).
  int devices[3] = {-1, -1, -1};
  const std::pair<const Operand*, py::handle> ops[3] = {{&a, A}, {&b, B}, {&c, C}};
  for (int i = 0; i < 3; ++i) {
    const Operand& m = *ops[i].first;
    if (!m.size()) continue;
    devices[i] = m.device >= 0 ? m.device : pointer_device(m.ptr);
    if (devices[i] < 0) {
      char address[24];
      std::snprintf(address, sizeof address, "%llx", static_cast<unsigned long long>(m.ptr));
      throw std::runtime_error(
          py::str(py::type::handle_of(ops[i].second).attr("__name__")).cast<std::string>() +
          " operand is not in CUDA device memory (address 0x" + address + ")");
    }
  }
  const int device = devices[2];
  if ((devices[0] >= 0 && devices[0] != device) || (devices[1] >= 0 && devices[1] != device)) {
    std::string list;
    for (int i = 0; i < 3; ++i) {
      if (devices[i] < 0) continue;
      list += (list.empty() ? "'" : ", '") + std::string(1, "ABC"[i]) + "': " +
              std::to_string(devices[i]);
    }
    throw py::value_error(std::string(fname) + ": operands are on different devices: {" + list + "}");
  }
  std::vector<cudaStream_t> waits;
  int64_t launch_stream = 0;
  if (explicit_stream) {
    launch_stream = *explicit_stream;
  } else if (a.library == Library::torch || b.library == Library::torch ||
             c.library == Library::torch) {
    launch_stream = torch_current_stream(device);
  } else if (a.library == Library::cupy || b.library == Library::cupy ||
             c.library == Library::cupy) {
    launch_stream = cupy_current_stream(device);
  }
  if (explicit_stream && (a.library == Library::cupy || b.library == Library::cupy ||
                          c.library == Library::cupy)) {
    // CuPy arrays are read without their interface dict, whose v3 "stream" would name CuPy's
    // current stream: wait on that stream here, as for any CAI v3 producer.
    const int64_t producer = cupy_current_stream(device);
    if (producer != launch_stream) waits.push_back(reinterpret_cast<cudaStream_t>(producer));
  }
  const auto cuda_stream = reinterpret_cast<cudaStream_t>(launch_stream);
  // CAI v3 producer streams: the launch waits on an event recorded there, never a device sync.
  for (const Operand* m : {&a, &b, &c}) {
    if (m->stream && *m->stream != launch_stream) {
      waits.push_back(reinterpret_cast<cudaStream_t>(*m->stream));
    }
  }
  const int64_t size = c.itemsize;

  if (K == 0 || alpha_d == 0.0) {  // C = beta * C without reading A or B
    {
      py::gil_scoped_release release;
      with_ops(device, cuda_stream, c.itemsize, [&](Ops& ops) {
        for (cudaStream_t w : waits) ops.wait(w);
        ops.scale(dtype, c.ptr, c_layout->col_major ? N : M, c_layout->col_major ? M : N,
                  c_layout->ld, beta_f);
      });
    }
    return result;
  }

  // Canonical operands: A or B with arbitrary strides is copied (row-major, aligned rows); an
  // F-ordered C is handled as C^T = B^T A^T with a row-major C^T (operands swapped, layouts
  // flipped).
  std::optional<Layout> a_layout = unit_stride_layout(a.rows, a.cols, a.rs, a.cs, a.itemsize);
  std::optional<Layout> b_layout = unit_stride_layout(b.rows, b.cols, b.rs, b.cs, b.itemsize);
  auto canonical = [](const Operand& m, const std::optional<Layout>& l) {
    // A strided operand's copy: a fresh 128-byte aligned row-major buffer (pointer filled later).
    return l ? Mat{m.ptr, l->ld, l->col_major} : Mat{0, 0, false};
  };
  const Mat pa = canonical(a, a_layout), pb = canonical(b, b_layout);
  const Mat pc{c.ptr, c_layout->ld, false};
  const bool swap = c_layout->col_major;
  const int align_a = a_layout ? alignment(pa, size) : 128;
  const int align_b = b_layout ? alignment(pb, size) : 128;
  // After the swap: (M, N) exchanged, A' = B^T, B' = A^T.
  const int64_t Mk = swap ? N : M, Nk = swap ? M : N;
  const int align_c = alignment(pc, size);
  const int align_ak = swap ? align_b : align_a, align_bk = swap ? align_a : align_b;
  const bool a_col_k = swap ? !pb.col : pa.col, b_col_k = swap ? !pa.col : pb.col;

  const KernelEntry* k = named;
  bool pad = false, flip = false;
  int pad_alignment = 0;
  int64_t grown_m = 0, grown_n = 0, grown_k = 0;
  int realign = 0;
  if (automatic) {
    const PlanKey key{device, dtype, Mk, Nk, K, a_col_k, b_col_k, beta_d != 0.0,
                      align_ak, align_bk, align_c, precision};
    const Plan plan = plan_for(key);
    k = plan.kernel;
    pad = plan.pad;
    pad_alignment = plan.pad_alignment;
    grown_m = plan.grown_m, grown_n = plan.grown_n, grown_k = plan.grown_k;
    flip = plan.flip;
    realign = plan.realign;
  } else {
    const std::string problem = runnable_problem(
        *k, device_target(device), std::min(align_ak, std::min(align_bk, align_c)));
    if (!problem.empty()) throw std::runtime_error(problem);
  }

  // --- launch: no Python from here, so other threads run meanwhile ------------------------------
  Job job{k, pad, pad_alignment, grown_m, grown_n, grown_k, device, cuda_stream, std::move(waits), size, Mk, Nk, K, alpha_f, beta_f,
          pa, pb, pc, swap, flip};
  if (!a_layout) job.copy_a = Strided{a.ptr, a.rows, a.cols, a.rs, a.cs};
  if (!b_layout) job.copy_b = Strided{b.ptr, b.rows, b.cols, b.rs, b.cs};
  job.realign = realign;
  {
    py::gil_scoped_release release;
    with_ops(device, cuda_stream, size, [&job](Ops& ops) {
      // Temporaries come only from the padded path, strided operands, the copies for 128-byte
      // rows and a TMA store's C rows (a transposed run never has a TMA store: N is the kernel's).
      size_t bytes = 0;
      if (job.pad || job.copy_a || job.copy_b || job.realign ||
          row_edge(*job.kernel, job.N, job.itemsize)) {
        SizingOps sizing(job.itemsize);  // the same work, counted: one allocation for it all
        execute(job, sizing);
        bytes = sizing.bytes;
      }
      execute(job, ops, bytes);
    });
  }
  return result;
}

}  // namespace fastgemm
