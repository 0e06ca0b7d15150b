// bindings.cpp — the only pybind11 file: exposes the kernel table, the launcher, the device
// utilities and the DLPack capsule reader to fastgemm/_C. All argument policy (shapes, layouts,
// streams, errors a user sees first) lives in Python; this layer re-checks what would otherwise
// crash (compute capability, alignment) and turns CUDA errors into exceptions.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/dlpack_abi.h"
#include "common/launch.cuh"
#include "common/runtime.h"
#include "common/swizzle.cuh"
#include "registry.h"

namespace py = pybind11;
using namespace fastgemm;

namespace {

py::dict kernel_info(const KernelEntry& k) {
  py::dict d;
  d["name"] = k.name;
  d["dtype"] = k.dtype;
  d["version"] = k.version;
  d["min_cc"] = k.min_cc;
  d["max_cc"] = k.max_cc ? py::object(py::int_(k.max_cc)) : py::object(py::none());
  d["alignment"] = k.alignment;
  d["techniques"] = k.techniques;
  d["smem_bytes"] = k.smem_bytes ? k.smem_bytes() : 0;
  return d;
}

void check_alignment(const KernelEntry& k, uintptr_t ptr, int64_t ld, int elem_bytes,
                     const char* operand) {
  const bool ok = ptr % k.alignment == 0 && (ld * elem_bytes) % k.alignment == 0;
  if (!ok) {
    std::ostringstream msg;
    msg << k.name << " needs " << k.alignment << "-byte aligned rows; operand " << operand
        << " has address 0x" << std::hex << ptr << std::dec << " and a leading dimension of " << ld
        << " elements";
    throw std::invalid_argument(msg.str());
  }
}

void run_gemm(const std::string& name, const std::string& dtype, int64_t M, int64_t N, int64_t K, uintptr_t A, int64_t lda,
              bool a_col_major, uintptr_t B, int64_t ldb, bool b_col_major, uintptr_t C,
              int64_t ldc, float alpha, float beta, uintptr_t stream, int device) {
  const KernelEntry& k = find_kernel(name, dtype);
  const int cc = device_cc(device);
  if (cc < k.min_cc || (k.max_cc && cc > k.max_cc)) {
    std::ostringstream msg;
    msg << k.name << " needs compute capability " << k.min_cc / 10 << "." << k.min_cc % 10;
    if (k.max_cc) msg << " (and runs only up to " << k.max_cc / 10 << "." << k.max_cc % 10 << ")";
    msg << "; this GPU is " << cc / 10 << "." << cc % 10;
    throw std::runtime_error(msg.str());
  }
  const int elem = std::strcmp(k.dtype, "float32") == 0 ? 4 : 2;
  check_alignment(k, A, lda, elem, "A");
  check_alignment(k, B, ldb, elem, "B");
  check_alignment(k, C, ldc, elem, "C");
  GemmArgs args;
  args.M = M, args.N = N, args.K = K;
  args.A = reinterpret_cast<const void*>(A), args.lda = lda, args.a_col_major = a_col_major;
  args.B = reinterpret_cast<const void*>(B), args.ldb = ldb, args.b_col_major = b_col_major;
  args.C = reinterpret_cast<void*>(C), args.ldc = ldc;
  args.alpha = alpha, args.beta = beta;
  args.stream = reinterpret_cast<cudaStream_t>(stream);
  py::gil_scoped_release release;
  DeviceGuard guard(device);
  k.launch(args);
}

// --- DLPack ------------------------------------------------------------------------------------

py::dict describe(const dlpack::Tensor& t, bool readonly) {
  py::dict d;
  d["ptr"] = reinterpret_cast<uintptr_t>(t.data) + t.byte_offset;
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  d["shape"] = py::tuple(py::cast(shape));
  if (t.strides) {
    std::vector<int64_t> strides(t.strides, t.strides + t.ndim);
    d["strides"] = py::tuple(py::cast(strides));
  } else {
    d["strides"] = py::none();
  }
  d["dtype_code"] = int(t.dtype.code);
  d["dtype_bits"] = int(t.dtype.bits);
  d["dtype_lanes"] = int(t.dtype.lanes);
  d["device_type"] = t.device.device_type;
  d["device_id"] = t.device.device_id;
  d["readonly"] = readonly;
  return d;
}

// Takes ownership of a DLPack capsule: returns (description, keepalive). The producer's deleter
// runs when `keepalive` is garbage-collected, i.e. after the consumer no longer needs the memory.
py::tuple dlpack_take(py::capsule capsule) {
  PyObject* cap = capsule.ptr();
  if (PyCapsule_IsValid(cap, dlpack::kCapsuleVersioned)) {
    auto* mt = static_cast<dlpack::ManagedTensorVersioned*>(
        PyCapsule_GetPointer(cap, dlpack::kCapsuleVersioned));
    if (mt->version.major != 1) {
      throw std::invalid_argument("unsupported DLPack major version " +
                                  std::to_string(mt->version.major));
    }
    PyCapsule_SetName(cap, dlpack::kUsedCapsuleVersioned);
    py::dict info = describe(mt->dl_tensor, (mt->flags & dlpack::kFlagReadOnly) != 0);
    py::capsule keep(mt, [](void* p) {
      auto* m = static_cast<dlpack::ManagedTensorVersioned*>(p);
      if (m->deleter) m->deleter(m);
    });
    return py::make_tuple(info, keep);
  }
  if (PyCapsule_IsValid(cap, dlpack::kCapsule)) {
    auto* mt = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(cap, dlpack::kCapsule));
    PyCapsule_SetName(cap, dlpack::kUsedCapsule);
    py::dict info = describe(mt->dl_tensor, false);
    py::capsule keep(mt, [](void* p) {
      auto* m = static_cast<dlpack::ManagedTensor*>(p);
      if (m->deleter) m->deleter(m);
    });
    return py::make_tuple(info, keep);
  }
  throw std::invalid_argument(
      "not a DLPack capsule (expected an unused 'dltensor' or 'dltensor_versioned' capsule)");
}

// A capsule as a producer would make it, for testing the reader without a GPU.
struct TestTensor {
  std::vector<int64_t> shape, strides;
  dlpack::ManagedTensorVersioned versioned{};
  dlpack::ManagedTensor legacy{};
};

py::capsule dlpack_test_capsule(uintptr_t ptr, std::vector<int64_t> shape,
                                std::optional<std::vector<int64_t>> strides, int code, int bits,
                                int device_type, int device_id, bool versioned, bool readonly) {
  auto* t = new TestTensor;
  t->shape = std::move(shape);
  if (strides) t->strides = std::move(*strides);
  dlpack::Tensor dl{};
  dl.data = reinterpret_cast<void*>(ptr);
  dl.device = {device_type, device_id};
  dl.ndim = static_cast<int32_t>(t->shape.size());
  dl.dtype = {static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
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

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "fastgemm native module: kernel table, launchers and device utilities";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::out_of_range& e) {
      PyErr_SetString(PyExc_KeyError, e.what());
    }
  });

  m.def("kernels", [] {
    py::list out;
    for (const auto& k : kernel_table()) out.append(kernel_info(k));
    return out;
  }, "The kernel table as a list of dicts.");
  m.def("gemm", &run_gemm, "Launch one registered kernel on canonical (row-major C) arguments.",
        py::arg("name"), py::arg("dtype"), py::arg("M"), py::arg("N"), py::arg("K"), py::arg("A"), py::arg("lda"),
        py::arg("a_col_major"), py::arg("B"), py::arg("ldb"), py::arg("b_col_major"),
        py::arg("C"), py::arg("ldc"), py::arg("alpha"), py::arg("beta"), py::arg("stream"),
        py::arg("device"));
  m.def("scale", [](const std::string& dtype, uintptr_t C, int64_t M, int64_t N, int64_t ldc,
                    float beta, uintptr_t stream, int device) {
    const DType dt = parse_dtype(dtype);
    py::gil_scoped_release release;
    DeviceGuard guard(device);
    scale_matrix(dt, reinterpret_cast<void*>(C), M, N, ldc, beta,
                 reinterpret_cast<cudaStream_t>(stream));
  }, "C = beta*C on a row-major matrix; beta == 0 writes zeros without reading C.");
  m.def("copy_strided", [](int elem_bytes, uintptr_t src, int64_t rows, int64_t cols, int64_t rs,
                           int64_t cs, uintptr_t dst, int64_t dst_ld, uintptr_t stream,
                           int device) {
    py::gil_scoped_release release;
    DeviceGuard guard(device);
    copy_strided(elem_bytes, reinterpret_cast<const void*>(src), rows, cols, rs, cs,
                 reinterpret_cast<void*>(dst), dst_ld, reinterpret_cast<cudaStream_t>(stream));
  }, "Copy a strided matrix into a row-major buffer with leading dimension dst_ld.");
  m.def("stream_wait", [](uintptr_t producer, uintptr_t consumer, int device) {
    DeviceGuard guard(device);
    stream_wait(reinterpret_cast<cudaStream_t>(producer), reinterpret_cast<cudaStream_t>(consumer));
  }, "Make `consumer` wait for the work queued on `producer` (an event, no device sync).");
  py::class_<DeviceBuffer>(m, "DeviceBuffer")
      .def(py::init<size_t, uintptr_t, int>(), py::arg("bytes"), py::arg("stream"),
           py::arg("device"))
      .def_property_readonly("ptr", &DeviceBuffer::ptr)
      .def_property_readonly("bytes", &DeviceBuffer::bytes);
  m.def("device_count", &device_count);
  m.def("runtime_status", &runtime_status);
  m.def("device_cc", &device_cc);
  m.def("device_name", &device_name);
  m.def("current_device", &current_device);
  m.def("pointer_device", &pointer_device);
  m.def("runtime_version", &runtime_version);
  m.def("dlpack_take", &dlpack_take,
        "Consume a DLPack capsule: (description dict, keepalive that runs the deleter).");
  m.def("_dlpack_test_capsule", &dlpack_test_capsule, py::arg("ptr"), py::arg("shape"),
        py::arg("strides"), py::arg("code"), py::arg("bits"), py::arg("device_type"),
        py::arg("device_id"), py::arg("versioned") = true, py::arg("readonly") = false);
  m.def("swizzle_chunk", &swizzle_chunk_dynamic, py::arg("chunks_per_row"), py::arg("row"),
        py::arg("chunk"),
        "The shared-memory swizzle of the tensor-core kernels: physical 16-byte chunk of logical "
        "chunk `chunk` in row `row` of a tile with `chunks_per_row` chunks per row (-1 if that "
        "width is unsupported).");
  m.attr("cuda_archs") = FASTGEMM_CUDA_ARCHS;
  m.attr("__version__") = FASTGEMM_VERSION;
}
