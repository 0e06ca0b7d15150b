// entry.h — the one C++ entry of fastgemm.sgemm / hgemm / gemm.
//
// A call crosses: Python (signature, docstring) -> gemm_call (reads the operands, validates,
// resolves layouts, device and stream) -> plan (kernel="auto": plan_for, cached; a named kernel:
// one table lookup and runnable_problem) -> launch (the kernel table's launcher, padded copies
// where the plan says so), with the GIL released from the first device call to the last.
// Every check runs once, before any device work; every error a user sees comes from here.
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <tuple>
#include <vector>

namespace fastgemm {

enum class GemmFn : int { gemm = 0, sgemm = 1, hgemm = 2 };

// C <- alpha * A @ B + beta * C in place; returns C. `fn` names the Python function (its dtypes
// and error messages; gemm takes its dtype from A). `precision`: a str ("ieee", "tf32x3",
// "tf32"; fp32 only) or a null handle / None for "ieee".
pybind11::object gemm_call(int fn, pybind11::handle A, pybind11::handle B, pybind11::handle C,
                           pybind11::handle alpha, pybind11::handle beta, pybind11::handle kernel,
                           pybind11::handle stream, pybind11::handle precision = {});

// The `record` test hook's log since the last call: (operation, kernel, numbers) per step, where
// operation is wait / alloc / copy / gemm / scale (see RecordOps in entry.cpp).
std::vector<std::tuple<std::string, std::string, std::vector<double>>> take_recorded();

}  // namespace fastgemm
