// operands.cpp — see operands.h.
#include "operands.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common/dlpack_abi.h"

namespace py = pybind11;

namespace fastgemm {

namespace {

constexpr const char* kKinds = "CuPy, PyTorch, __cuda_array_interface__ or DLPack";

// --- small Python helpers (GIL held) ----------------------------------------------------------

// Interned attribute names, made once.
PyObject* name(const char* s) { return PyUnicode_InternFromString(s); }
struct Names {
  PyObject* data_ptr = name("data_ptr");
  PyObject* stride = name("stride");
  PyObject* shape = name("shape");
  PyObject* strides = name("strides");
  PyObject* dtype = name("dtype");
  PyObject* layout = name("layout");
  PyObject* get_device = name("get_device");
  PyObject* is_cuda = name("is_cuda");
  PyObject* is_contiguous = name("is_contiguous");
  PyObject* device = name("device");
  PyObject* element_size = name("element_size");
  PyObject* itemsize = name("itemsize");
  PyObject* data = name("data");
  PyObject* ptr = name("ptr");
  PyObject* device_id = name("device_id");
  PyObject* module = name("__module__");
  PyObject* cai = name("__cuda_array_interface__");
  PyObject* dlpack = name("__dlpack__");
  PyObject* dlpack_device = name("__dlpack_device__");
  // __cuda_array_interface__ keys
  PyObject* version = name("version");
  PyObject* typestr = name("typestr");
  PyObject* descr = name("descr");
  PyObject* mask = name("mask");
  PyObject* stream = name("stream");
};
const Names& names() {
  static const Names* n = new Names();  // immortal: no teardown ordering at interpreter exit
  return *n;
}

py::object steal(PyObject* p) { return py_steal(p); }
py::object get(py::handle obj, PyObject* attr) { return steal(PyObject_GetAttr(obj.ptr(), attr)); }
py::object get_optional(py::handle obj, PyObject* attr) { return py_get_optional(obj, attr); }
py::object call0(py::handle obj, PyObject* method) {
  PyObject* self[1] = {obj.ptr()};  // vectorcall: no bound method, no argument tuple
  return steal(PyObject_VectorcallMethod(method, self, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr));
}
int64_t to_int(py::handle v) {
  if (PyLong_Check(v.ptr())) {
    const long long x = PyLong_AsLongLong(v.ptr());
    if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
    return x;
  }
  py::object index = steal(PyNumber_Index(v.ptr()));
  const long long x = PyLong_AsLongLong(index.ptr());
  if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
  return x;
}
uintptr_t to_address(py::handle v) {
  py::object index = PyLong_Check(v.ptr()) ? py::reinterpret_borrow<py::object>(v)
                                            : steal(PyNumber_Index(v.ptr()));
  const unsigned long long x = PyLong_AsUnsignedLongLong(index.ptr());
  if (x == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<uintptr_t>(x);
}
std::vector<int64_t> int_sequence(py::handle seq) {
  py::object fast = steal(PySequence_Fast(seq.ptr(), "expected a sequence of integers"));
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) out[size_t(i)] = to_int(items[i]);
  return out;
}
std::string str_of(py::handle v) { return py::str(v).cast<std::string>(); }
std::string type_name(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }
// type(obj).__name__, as Python prints it (tp_name may carry a module prefix for C types).
std::string short_type_name(py::handle obj) {
  std::string n = type_name(obj);
  const auto dot = n.rfind('.');
  return dot == std::string::npos ? n : n.substr(dot + 1);
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string seq_repr(const std::vector<int64_t>& v) {
  std::string out = "(";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + (v.size() == 1 ? ",)" : ")");
}

void check_2d(const char* nm, const std::vector<int64_t>& shape) {
  if (shape.size() != 2) {
    throw py::value_error(std::string(nm) + " must be a 2-D matrix, got " +
                          std::to_string(shape.size()) + "-D with shape " + seq_repr(shape));
  }
}

// A 2-D shape (or its strides) as two integers: a tuple (torch.Size is one) read in place, any
// other sequence through int_sequence; anything but two entries is "not a 2-D matrix".
std::array<int64_t, 2> int_pair(py::handle seq, const char* nm) {
  PyObject* p = seq.ptr();
  if (PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 2) {
    return {to_int(PyTuple_GET_ITEM(p, 0)), to_int(PyTuple_GET_ITEM(p, 1))};
  }
  const std::vector<int64_t> v = int_sequence(seq);
  check_2d(nm, v);
  return {v[0], v[1]};
}

// --- producer classes, classified once per type -------------------------------------------------

// torch: a tensor (torch.Tensor or a subclass); cupy: a cupy.ndarray; cupy_module: another CuPy
// object (read through its interface, reported as CuPy); numpy: host memory; other: read through
// whichever interface it exports.
enum class Kind : uint8_t { torch, cupy, cupy_module, numpy, other };

Kind classify_uncached(PyTypeObject* type) {
  py::handle t(reinterpret_cast<PyObject*>(type));
  py::object module = get_optional(t, names().module);
  const std::string mod = module && PyUnicode_Check(module.ptr()) ? str_of(module) : "";
  if (starts_with(mod, "torch") && PyObject_HasAttr(t.ptr(), names().data_ptr)) return Kind::torch;
  if (starts_with(mod, "cupy")) {
    const bool ndarray = PyObject_HasAttr(t.ptr(), names().data) &&
                         PyObject_HasAttr(t.ptr(), names().strides) &&
                         PyObject_HasAttr(t.ptr(), names().dtype) &&
                         PyObject_HasAttr(t.ptr(), names().shape);
    return ndarray ? Kind::cupy : Kind::cupy_module;
  }
  if (starts_with(mod, "numpy")) return Kind::numpy;
  return Kind::other;
}

Kind classify(PyObject* obj) {
  // A few types in practice (torch.Tensor, cupy.ndarray, a parameter subclass): a short list,
  // holding a reference to each type so that its address cannot be reused by another.
  struct Entry {
    PyTypeObject* type;
    Kind kind;
  };
  static std::vector<Entry> seen;
  PyTypeObject* type = Py_TYPE(obj);
  for (const Entry& e : seen) {
    if (e.type == type) return e.kind;
  }
  const Kind kind = classify_uncached(type);
  if (seen.size() < 32) {
    Py_INCREF(type);
    seen.push_back({type, kind});
  }
  return kind;
}

// dtype objects (torch.float16, numpy.dtype('float32'), ...) -> (name, itemsize), once per object.
struct DTypeInfo {
  std::string name;
  int itemsize;
};
template <typename Compute>
DTypeInfo dtype_info(py::handle dtype, Compute compute) {
  struct Entry {
    PyObject* dtype;
    DTypeInfo info;
  };
  static std::vector<Entry> seen;
  for (const Entry& e : seen) {
    if (e.dtype == dtype.ptr()) return e.info;
  }
  DTypeInfo info = compute();
  if (seen.size() < 64) {
    Py_INCREF(dtype.ptr());
    seen.push_back({dtype.ptr(), info});
  }
  return info;
}

// --- PyTorch -------------------------------------------------------------------------------------

// A tensor type's attributes as the descriptors its class holds, looked up once per type: a
// getter (is_cuda, shape, dtype) is then called in place and a method (get_device(), ...)
// through its descriptor, with no attribute lookup per call. What a lookup would find is what
// runs: the descriptors are looked up again when the type's version tag says the class changed
// (a patched attribute), a subclass's own Python property or method is found as itself and
// taken the generic way, and so is every attribute of a type with its own __getattribute__.
enum TorchAttr : int { kIsCuda, kGetDevice, kShape, kIsContiguous, kStride, kDType, kDataPtr, kAttrs };

struct TorchType {
  PyTypeObject* type = nullptr;
  unsigned int version = 0;             // the type's version tag when the descriptors were found
  std::array<PyObject*, kAttrs> descr{};  // strong references; nullptr: the generic lookup
};

// Whether the type's version tag stands for its current attributes: from Python 3.12 a change
// to the type resets the tag to 0; before, it clears the "valid" flag and keeps the number.
bool version_valid(PyTypeObject* type) {
#if PY_VERSION_HEX < 0x030C0000
  if (!PyType_HasFeature(type, Py_TPFLAGS_VALID_VERSION_TAG)) return false;
#endif
  return type->tp_version_tag != 0;
}

const TorchType& torch_type(PyTypeObject* type) {
  constexpr size_t kTypes = 16;  // a few types in practice (Tensor, Parameter, a subclass)
  static std::vector<TorchType>* seen = [] {  // guarded by the GIL; never reallocated
    auto* v = new std::vector<TorchType>();
    v->reserve(kTypes);
    return v;
  }();
  static size_t next = 0;
  TorchType* entry = nullptr;
  for (TorchType& e : *seen) {
    if (e.type == type) entry = &e;
  }
  if (entry != nullptr && version_valid(type) && entry->version == type->tp_version_tag) {
    return *entry;
  }
  if (entry == nullptr) {  // a new type: a free slot, or the oldest one's
    if (seen->size() < kTypes) {
      entry = &seen->emplace_back();
    } else {
      entry = &(*seen)[next++ % kTypes];
      for (PyObject*& d : entry->descr) Py_CLEAR(d);
      Py_CLEAR(entry->type);
    }
    Py_INCREF(type);  // held, so that its address is not reused by another type meanwhile
    entry->type = type;
  }
  const Names& n = names();
  PyObject* const attrs[kAttrs] = {n.is_cuda, n.get_device, n.shape, n.is_contiguous,
                                   n.stride, n.dtype, n.data_ptr};
  const bool generic = type->tp_getattro == PyObject_GenericGetAttr;
  for (size_t i = 0; i < size_t(kAttrs); ++i) {
    Py_CLEAR(entry->descr[i]);
    // Read from the class, a getter or method descriptor is itself.
    py::object d = generic ? get_optional(reinterpret_cast<PyObject*>(type), attrs[i]) : py::object();
    // Getters are data descriptors: they win over an instance __dict__, as in a lookup. The
    // methods are taken as the class defines them.
    if (d && (Py_IS_TYPE(d.ptr(), &PyGetSetDescr_Type) || Py_IS_TYPE(d.ptr(), &PyMethodDescr_Type))) {
      entry->descr[i] = d.release().ptr();
    }
  }
  entry->version = version_valid(type) ? type->tp_version_tag : 0;
  return *entry;
}

// t.<attr> (a getter) and t.<attr>() (a method) through the type's descriptors. The getters and
// methods of a tensor subclass may run Python, which may refill the type's slot meanwhile: each
// read takes the descriptor afresh, holds it, and uses it only while the slot is still this
// type's and the descriptor is for it (else the generic lookup).
py::object torch_descr(py::handle t, const TorchType& tt, TorchAttr i, PyTypeObject* kind) {
  PyObject* d = tt.descr[size_t(i)];
  if (d == nullptr || tt.type != Py_TYPE(t.ptr()) || !Py_IS_TYPE(d, kind) ||
      !PyObject_TypeCheck(t.ptr(), PyDescr_TYPE(d))) {
    return py::object();
  }
  return py::reinterpret_borrow<py::object>(d);
}
py::object torch_get(py::handle t, const TorchType& tt, TorchAttr i, PyObject* attr) {
  if (py::object d = torch_descr(t, tt, i, &PyGetSetDescr_Type)) {
    PyGetSetDef* g = reinterpret_cast<PyGetSetDescrObject*>(d.ptr())->d_getset;
    if (g->get != nullptr) return steal(g->get(t.ptr(), g->closure));
  }
  return get(t, attr);
}
py::object torch_call(py::handle t, const TorchType& tt, TorchAttr i, PyObject* method) {
  if (py::object d = torch_descr(t, tt, i, &PyMethodDescr_Type)) {
    PyObject* self[1] = {t.ptr()};
    return steal(PyObject_Vectorcall(d.ptr(), self, 1, nullptr));
  }
  return call0(t, method);
}

Operand from_torch(py::handle t, const char* nm) {
  const Names& n = names();
  const TorchType& tt = torch_type(Py_TYPE(t.ptr()));
  Operand m;
  m.library = Library::torch;
  // is_cuda: not XPU, MPS, meta, ...
  const int is_cuda = PyObject_IsTrue(torch_get(t, tt, kIsCuda, n.is_cuda).ptr());
  if (is_cuda < 0) throw py::error_already_set();
  const int64_t device = is_cuda ? to_int(torch_call(t, tt, kGetDevice, n.get_device)) : -1;
  if (device < 0) {
    throw std::runtime_error(std::string(nm) + " is a PyTorch tensor on device '" +
                             str_of(get(t, n.device)) +
                             "'; fastgemm needs CUDA arrays (move it with .cuda() or .to('cuda'))");
  }
  m.device = static_cast<int>(device);
  // Only a dense tensor reads as one: a sparse or nested one fails somewhere below (stride(),
  // data_ptr(), a shape that is not two integers). Its layout is read then, and names the
  // problem; a dense tensor costs no layout read.
  try {
    const std::array<int64_t, 2> shape = int_pair(torch_get(t, tt, kShape, n.shape), nm);
    // A contiguous tensor's strides follow from its shape (where an extent is 1 its stride
    // may differ, and is never stepped along): is_contiguous() is the cheaper question.
    const int contiguous = PyObject_IsTrue(torch_call(t, tt, kIsContiguous, n.is_contiguous).ptr());
    if (contiguous < 0) throw py::error_already_set();
    const std::array<int64_t, 2> strides =
        contiguous ? std::array<int64_t, 2>{shape[1], 1}
                   : int_pair(torch_call(t, tt, kStride, n.stride), nm);
    py::object dtype = torch_get(t, tt, kDType, n.dtype);
    const DTypeInfo info = dtype_info(dtype, [&] {
      std::string text = str_of(dtype);
      if (starts_with(text, "torch.")) text = text.substr(6);
      return DTypeInfo{text, static_cast<int>(to_int(call0(t, n.element_size)))};
    });
    m.ptr = to_address(torch_call(t, tt, kDataPtr, n.data_ptr));
    m.rows = shape[0], m.cols = shape[1];
    m.rs = strides[0], m.cs = strides[1];
    m.dtype = info.name;
    m.itemsize = info.itemsize;
  } catch (...) {
    PyObject* type = nullptr;
    PyObject* value = nullptr;
    PyObject* trace = nullptr;
    PyErr_Fetch(&type, &value, &trace);  // a pending Python error waits while the layout is read
    if (py::object layout = get_optional(t, n.layout)) {
      const std::string text = str_of(layout);
      if (text != "torch.strided") {
        Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(trace);
        throw py::type_error(std::string(nm) + " is a " + text +
                             " PyTorch tensor; fastgemm needs dense (strided) tensors");
      }
    }
    PyErr_Restore(type, value, trace);
    throw;
  }
  return m;
}

// --- CuPy ---------------------------------------------------------------------------------------

Operand from_cupy(py::handle a, const char* nm) {
  const Names& n = names();
  Operand m;
  m.library = Library::cupy;
  const std::array<int64_t, 2> shape = int_pair(get(a, n.shape), nm);
  py::object dtype = get(a, n.dtype);
  const DTypeInfo info = dtype_info(dtype, [&] {
    return DTypeInfo{str_of(dtype), static_cast<int>(to_int(get(dtype, n.itemsize)))};
  });
  const std::array<int64_t, 2> byte_strides = int_pair(get(a, n.strides), nm);
  for (int64_t s : byte_strides) {
    if (s % info.itemsize) {
      throw py::value_error(std::string(nm) + ": byte strides " +
                            seq_repr({byte_strides[0], byte_strides[1]}) +
                            " are not multiples of the item size (" +
                            std::to_string(info.itemsize) + " bytes for " + info.name + ")");
    }
  }
  py::object data = get(a, n.data);
  m.ptr = to_address(get(data, n.ptr));
  m.device = static_cast<int>(to_int(get(data, n.device_id)));
  m.rows = shape[0], m.cols = shape[1];
  m.rs = byte_strides[0] / info.itemsize, m.cs = byte_strides[1] / info.itemsize;
  m.dtype = info.name;
  m.itemsize = info.itemsize;
  return m;
}

// --- __cuda_array_interface__ -------------------------------------------------------------------

// (dtype name, itemsize) for a CAI typestr such as "<f4": NumPy's names for the standard kinds;
// other kinds keep the typestr (only error messages see them).
DTypeInfo cai_dtype(const std::string& typestr, py::handle descr, const char* nm) {
  auto says_bfloat16 = [&descr] {
    if (!descr || descr.is_none()) return false;
    try {
      for (py::handle entry : descr) {
        if (py::len(entry) == 0) continue;
        std::string field = str_of(entry[py::int_(0)]);
        for (char& ch : field) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (field.find("bfloat16") != std::string::npos) return true;
      }
    } catch (const py::error_already_set&) {
      return false;
    }
    return false;
  };
  int size = 0;
  const bool has_size = typestr.size() > 2 &&
                        typestr.find_first_not_of("0123456789", 2) == std::string::npos &&
                        (size = std::atoi(typestr.c_str() + 2)) > 0;
  const char order = typestr.empty() ? '?' : typestr[0];
  const char kind = typestr.size() > 1 ? typestr[1] : '?';
  if (kind == 'V' && says_bfloat16()) return {"bfloat16", 2};
  if (kind == 'V' && has_size) return {typestr, size};
  if (!has_size) {
    // Not "<kind><bytes>" (e.g. '<M8[ns]'): NumPy names it, as producers write it for NumPy.
    try {
      py::object dt = py::module_::import("numpy").attr("dtype")(typestr);
      const int itemsize = dt.attr("itemsize").cast<int>();
      if (itemsize > 0) return {str_of(dt.attr("name")), itemsize};
    } catch (const py::error_already_set&) {
    }
    throw py::value_error(std::string(nm) + ": cannot read the item size of typestr '" +
                          typestr + "'");
  }
  std::string base;
  switch (kind) {
    case 'f': base = size == 16 ? "float128" : "float" + std::to_string(8 * size); break;
    case 'i': base = "int" + std::to_string(8 * size); break;
    case 'u': base = "uint" + std::to_string(8 * size); break;
    case 'c': base = "complex" + std::to_string(8 * size); break;
    case 'b': base = size == 1 ? "bool" : typestr; break;
    default: return {typestr, size};
  }
  const bool native = order == '|' || order == '=' || (order == '<') == (PY_LITTLE_ENDIAN != 0);
  if (!native && size > 1) return {base + " (non-native byte order " + typestr + ")", size};
  return {base, size};
}

Operand from_cai(py::handle obj, py::handle cai, const char* nm, bool cupy_module) {
  if (!PyDict_Check(cai.ptr())) {
    throw py::type_error(std::string(nm) + ".__cuda_array_interface__ must be a dict, got " +
                         short_type_name(cai));
  }
  // Borrowed references, looked up by interned keys; nullptr when absent.
  auto item = [&cai](PyObject* key) -> py::handle {
    PyObject* v = PyDict_GetItemWithError(cai.ptr(), key);
    if (v == nullptr && PyErr_Occurred()) throw py::error_already_set();
    return v;
  };
  const Names& n = names();
  py::handle version = item(n.version);
  // 2 and 3 as Python compares them (2.0 == 2): any number equal to one of them.
  const double v = version && PyNumber_Check(version.ptr()) && !PyBool_Check(version.ptr())
                       ? PyFloat_AsDouble(version.ptr())
                       : -1.0;
  if (v == -1.0) PyErr_Clear();
  if (v != 2 && v != 3) {
    throw py::value_error(std::string(nm) + ": unsupported __cuda_array_interface__ version " +
                          (version ? std::string(py::repr(version)) : "None") +
                          " (fastgemm reads 2 and 3)");
  }
  py::handle shape_obj = item(n.shape);
  if (!shape_obj) throw py::value_error(std::string(nm) + ": __cuda_array_interface__ has no 'shape'");
  const std::vector<int64_t> shape = int_sequence(shape_obj);
  check_2d(nm, shape);
  py::handle mask = item(n.mask);
  if (mask && !mask.is_none()) throw py::value_error(std::string(nm) + ": masked arrays are not supported");

  py::handle typestr_obj = item(n.typestr);
  if (!typestr_obj) throw py::value_error(std::string(nm) + ": __cuda_array_interface__ has no 'typestr'");
  const std::string typestr = str_of(typestr_obj);
  DTypeInfo info = cai_dtype(typestr, item(n.descr), nm);
  if (info.name == typestr && info.itemsize == 2) {
    // CuPy exports bfloat16 (an ml_dtypes type) as a bare 2-byte void; its own dtype says what
    // the bytes are.
    py::object dtype = get_optional(obj, names().dtype);
    if (dtype && str_of(dtype) == "bfloat16") info.name = "bfloat16";
  }

  Operand m;
  m.library = cupy_module ? Library::cupy : Library::cai;
  m.rows = shape[0], m.cols = shape[1];
  py::handle byte_strides = item(n.strides);
  if (!byte_strides || byte_strides.is_none()) {
    m.rs = shape[1], m.cs = 1;
  } else {
    const std::vector<int64_t> bs = int_sequence(byte_strides);
    if (bs.size() != shape.size()) {
      throw py::value_error(std::string(nm) + ": __cuda_array_interface__ strides " +
                            seq_repr(bs) + " do not match shape " + seq_repr(shape));
    }
    for (int64_t s : bs) {
      if (s % info.itemsize) {
        throw py::value_error(std::string(nm) + ": byte strides " + seq_repr(bs) +
                              " are not multiples of the item size (" +
                              std::to_string(info.itemsize) + " bytes for " + info.name + ")");
      }
    }
    m.rs = bs[0] / info.itemsize, m.cs = bs[1] / info.itemsize;
  }
  if (v >= 3) {
    py::handle stream = item(n.stream);
    if (stream && !stream.is_none()) {
      const int64_t s = to_int(stream);
      if (s == 0) {
        // The CUDA Array Interface forbids 0: it is ambiguous between the legacy and the
        // per-thread default stream.
        throw py::value_error(std::string(nm) +
                              ": __cuda_array_interface__ stream 0 is not allowed (use 1 for the "
                              "legacy default stream or 2 for the per-thread default stream)");
      }
      m.stream = s;
    }
  }
  py::handle data = item(n.data);
  if (!data) throw py::value_error(std::string(nm) + ": __cuda_array_interface__ has no 'data'");
  m.ptr = to_address(data[py::int_(0)]);
  const int readonly = PyObject_IsTrue(data[py::int_(1)].ptr());
  if (readonly < 0) throw py::error_already_set();
  m.readonly = readonly == 1;
  m.dtype = info.name;
  m.itemsize = info.itemsize;
  return m;
}

// --- DLPack -------------------------------------------------------------------------------------

void check_dlpack_device(const char* nm, int device_type) {
  if (device_type == dlpack::kCUDA || device_type == dlpack::kCUDAManaged) return;
  const char* where = device_type == dlpack::kCPU        ? " (CPU)"
                      : device_type == dlpack::kCUDAHost ? " (CUDA pinned host memory)"
                                                         : "";
  throw std::runtime_error(std::string(nm) + " is not in CUDA device memory (DLPack device type " +
                           std::to_string(device_type) + where + "); fastgemm needs CUDA arrays");
}

std::string dlpack_dtype(int code, int bits) {
  switch (code) {
    case dlpack::kFloat: return "float" + std::to_string(bits);
    case dlpack::kBfloat: if (bits == 16) return "bfloat16"; break;
    case dlpack::kInt: return "int" + std::to_string(bits);
    case dlpack::kUInt: return "uint" + std::to_string(bits);
    case 5: return "complex" + std::to_string(bits);
    case 6: if (bits == 8) return "bool"; break;
    default: break;
  }
  return "dlpack(code=" + std::to_string(code) + ",bits=" + std::to_string(bits) + ")";
}

// Takes ownership of a DLPack capsule: the tensor and a keepalive whose release runs the
// producer's deleter.
std::pair<const dlpack::Tensor*, bool> take_capsule(py::handle capsule, py::object* keepalive) {
  PyObject* cap = capsule.ptr();
  if (PyCapsule_IsValid(cap, dlpack::kCapsuleVersioned)) {
    auto* mt = static_cast<dlpack::ManagedTensorVersioned*>(
        PyCapsule_GetPointer(cap, dlpack::kCapsuleVersioned));
    if (mt->version.major != 1) {
      throw py::value_error("unsupported DLPack major version " + std::to_string(mt->version.major));
    }
    PyCapsule_SetName(cap, dlpack::kUsedCapsuleVersioned);
    *keepalive = py::capsule(mt, [](void* p) {
      auto* t = static_cast<dlpack::ManagedTensorVersioned*>(p);
      if (t->deleter) t->deleter(t);
    });
    return {&mt->dl_tensor, (mt->flags & dlpack::kFlagReadOnly) != 0};
  }
  if (PyCapsule_IsValid(cap, dlpack::kCapsule)) {
    auto* mt = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(cap, dlpack::kCapsule));
    PyCapsule_SetName(cap, dlpack::kUsedCapsule);
    *keepalive = py::capsule(mt, [](void* p) {
      auto* t = static_cast<dlpack::ManagedTensor*>(p);
      if (t->deleter) t->deleter(t);
    });
    return {&mt->dl_tensor, false};
  }
  throw py::value_error(
      "not a DLPack capsule (expected an unused 'dltensor' or 'dltensor_versioned' capsule)");
}

Operand from_dlpack(py::handle obj, const char* nm, std::optional<int64_t> stream) {
  if (py::object device_fn = get_optional(obj, names().dlpack_device)) {
    // Reject host memory before consuming anything (__dlpack__ may copy or synchronise).
    py::object dev = device_fn();
    check_dlpack_device(nm, static_cast<int>(to_int(dev[py::int_(0)])));
  }
  py::object export_fn = get(obj, names().dlpack);
  py::dict kwargs;
  if (stream) kwargs["stream"] = *stream;
  py::object capsule;
  try {
    kwargs["max_version"] = py::make_tuple(1, 0);
    capsule = export_fn(**kwargs);
  } catch (py::error_already_set& e) {
    // Producers older than DLPack 1.0 / the 2023 array API do not take max_version.
    if (!e.matches(PyExc_TypeError)) throw;
    PyDict_DelItemString(kwargs.ptr(), "max_version");
    capsule = export_fn(**kwargs);
  }
  Operand m;
  m.library = Library::dlpack;
  const auto [t, readonly] = take_capsule(capsule, &m.keepalive);
  // From here on m.keepalive owns the tensor: if we throw, dropping it runs the deleter.
  check_dlpack_device(nm, t->device.device_type);
  if (t->dtype.lanes != 1) {
    throw py::type_error(std::string(nm) + " has a vector DLPack dtype (" +
                         std::to_string(t->dtype.lanes) + " lanes of code " +
                         std::to_string(t->dtype.code) + ", " + std::to_string(t->dtype.bits) +
                         " bits); fastgemm needs scalar elements");
  }
  const std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
  check_2d(nm, shape);
  m.ptr = reinterpret_cast<uintptr_t>(t->data) + t->byte_offset;
  m.rows = shape[0], m.cols = shape[1];
  if (t->strides) {
    m.rs = t->strides[0], m.cs = t->strides[1];
  } else {
    m.rs = shape[1], m.cs = 1;
  }
  m.dtype = dlpack_dtype(t->dtype.code, t->dtype.bits);
  m.itemsize = (t->dtype.bits + 7) / 8;
  m.device = t->device.device_id;
  m.readonly = readonly;
  return m;
}

}  // namespace

py::object py_steal(PyObject* p) {
  if (p == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(p);
}

py::object py_get_optional(py::handle obj, PyObject* attr) {
  PyObject* r = PyObject_GetAttr(obj.ptr(), attr);
  if (r == nullptr) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
    PyErr_Clear();
    return py::object();
  }
  return py::reinterpret_steal<py::object>(r);
}

const char* library_name(Library lib) {
  switch (lib) {
    case Library::torch: return "torch";
    case Library::cupy: return "cupy";
    case Library::cai: return "cai";
    case Library::dlpack: return "dlpack";
  }
  return "?";
}

Operand read_operand(py::handle obj, const char* nm, std::optional<int64_t> dlpack_stream) {
  const Kind kind = classify(obj.ptr());
  if (kind == Kind::torch) return from_torch(obj, nm);
  if (kind == Kind::cupy) return from_cupy(obj, nm);
  if (py::object cai = get_optional(obj, names().cai)) {
    if (!cai.is_none()) return from_cai(obj, cai, nm, kind == Kind::cupy_module);
  }
  if (kind == Kind::numpy) {
    // NumPy arrays speak DLPack too, but a host array deserves a clearer error than a DLPack
    // device-type complaint.
    throw py::type_error(std::string(nm) + " must be a CUDA array (" + kKinds + "), got " +
                         short_type_name(obj) +
                         ": a NumPy array lives in host memory; copy it to the GPU first (e.g. "
                         "cupy.asarray or torch.from_numpy(...).cuda())");
  }
  if (PyObject_HasAttr(obj.ptr(), names().dlpack)) return from_dlpack(obj, nm, dlpack_stream);
  throw py::type_error(std::string(nm) + " must be a CUDA array (" + kKinds + "), got " +
                       short_type_name(obj));
}

std::optional<Layout> unit_stride_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                                         int itemsize) {
  const int64_t per16 = std::max(1, 16 / itemsize);
  auto padded = [per16](int64_t extent) {
    return (std::max<int64_t>(extent, 1) + per16 - 1) / per16 * per16;
  };
  if (rows == 0 || cols == 0) return Layout{false, padded(cols)};  // no elements: strides free
  // A contiguous column (rows x 1, unit row stride): column-major, so that its leading dimension
  // is the padded extent, not the unit stride (which would make it 1-element aligned).
  if (cols == 1 && rs == 1 && rows > 1) return Layout{true, padded(rows)};
  if (cols == 1 || cs == 1) {
    if (rows == 1) return Layout{false, padded(cols)};
    if (rs >= std::max<int64_t>(cols, 1)) return Layout{false, rs};
  }
  if (rows == 1 || rs == 1) {
    if (cols == 1) return Layout{true, padded(rows)};
    if (cs >= std::max<int64_t>(rows, 1)) return Layout{true, cs};
  }
  return std::nullopt;
}

std::pair<uintptr_t, uintptr_t> byte_span(uintptr_t ptr, int64_t rows, int64_t cols, int64_t rs,
                                          int64_t cs, int itemsize) {
  if (rows == 0 || cols == 0) return {ptr, ptr};
  int64_t lo = 0, hi = 0;
  for (const auto [extent, stride] : {std::pair{rows, rs}, std::pair{cols, cs}}) {
    const int64_t reach = (extent - 1) * stride;
    (reach < 0 ? lo : hi) += reach;
  }
  return {ptr + uintptr_t(lo * itemsize), ptr + uintptr_t((hi + 1) * itemsize)};
}

bool overlaps(const Operand& a, const Operand& b) {
  const auto [a_lo, a_hi] = byte_span(a.ptr, a.rows, a.cols, a.rs, a.cs, a.itemsize);
  const auto [b_lo, b_hi] = byte_span(b.ptr, b.rows, b.cols, b.rs, b.cs, b.itemsize);
  if (a_lo == a_hi || b_lo == b_hi) return false;
  return a_lo < b_hi && b_lo < a_hi;
}

std::string tuple_repr(std::initializer_list<int64_t> values) {
  return seq_repr(std::vector<int64_t>(values));
}

}  // namespace fastgemm
