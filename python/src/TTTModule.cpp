//===- TTTModule.cpp - nanobind bindings of the ttt C++ API ---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `ttt._ttt`: a thin binding of include/ttt/API/Compiler.h. Results come back
// as dicts; the pure-Python package (python/ttt) turns failures into
// exceptions and buffers into NumPy arrays. The GIL is released while the
// compiler works.
//
//===----------------------------------------------------------------------===//

#include "ttt/API/Compiler.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;
using namespace ttt::api;

namespace {

const char *kindName(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::None:
    return "";
  case ErrorKind::Parse:
    return "parse";
  case ErrorKind::Invalid:
    return "invalid";
  case ErrorKind::Compile:
    return "compile";
  case ErrorKind::Export:
    return "export";
  case ErrorKind::Run:
    return "run";
  }
  return "error";
}

nb::dict statusDict(const Status &status) {
  nb::dict d;
  d["ok"] = status.ok();
  d["kind"] = kindName(status.kind);
  d["message"] = status.message;
  return d;
}

nb::list stringList(const std::vector<std::string> &lines) {
  nb::list list;
  for (const std::string &line : lines)
    list.append(nb::str(line.data(), line.size()));
  return list;
}

/// The bytes of `data`: bytes, a C-contiguous buffer (a NumPy array, so
/// that ttt.run copies its inputs once, here) or str.
std::string toStdString(nb::handle data) {
  if (nb::isinstance<nb::bytes>(data)) {
    nb::bytes b = nb::borrow<nb::bytes>(data);
    return std::string(b.c_str(), b.size());
  }
  if (PyObject_CheckBuffer(data.ptr())) {
    Py_buffer view;
    if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0)
      throw nb::python_error();
    std::string bytes(static_cast<const char *>(view.buf), view.len);
    PyBuffer_Release(&view);
    return bytes;
  }
  return nb::cast<std::string>(data);
}

} // namespace

NB_MODULE(_ttt, m) {
  m.doc() = "Bindings of the ttt compiler's C++ API (use the `ttt` package).";
  m.def("version", &version);
  m.def("simplifications", &simplifications);
  m.def("available_memory", &availableMemory);

  m.def(
      "optimize",
      [](nb::handle input, const std::string &inputFormat,
         const std::vector<std::string> &simplify, const std::string &emit,
         const std::string &name, nb::object onRemark) {
        std::string data = toStdString(input);
        // Remarks reach Python as they are emitted (progress on a large
        // model); an exception in the callback only drops that line.
        std::function<void(const std::string &)> forward;
        if (!onRemark.is_none())
          forward = [&onRemark](const std::string &line) {
            nb::gil_scoped_acquire acquire;
            try {
              onRemark(line);
            } catch (nb::python_error &error) {
              error.discard_as_unraisable("ttt.optimize on_remark");
            }
          };
        OptimizeResult result;
        {
          nb::gil_scoped_release release;
          result = optimize(data, inputFormat, simplify, emit, name, forward);
        }
        nb::dict d = statusDict(result.status);
        if (emit == "onnx")
          d["output"] = nb::bytes(result.output.data(), result.output.size());
        else
          d["output"] = nb::str(result.output.data(), result.output.size());
        d["remarks"] = stringList(result.remarks);
        return d;
      },
      nb::arg("input"), nb::arg("input_format"), nb::arg("simplify"),
      nb::arg("emit"), nb::arg("name") = "<input>",
      nb::arg("on_remark") = nb::none());

  m.def(
      "explain",
      [](nb::handle input, const std::string &inputFormat,
         const std::string &name) {
        std::string data = toStdString(input);
        ExplainResult result;
        {
          nb::gil_scoped_release release;
          result = explain(data, inputFormat, name);
        }
        nb::dict d = statusDict(result.status);
        nb::list layers;
        for (const LayerReport &r : result.layers) {
          nb::dict l;
          l["location"] = r.location;
          l["op"] = r.op;
          l["lowering"] = r.lowering;
          l["update"] = r.update;
          l["output_linear"] = r.outputLinear;
          l["static_kernel"] = r.staticKernel;
          l["rewritable"] = r.rewritable;
          l["proven"] = stringList(r.proven);
          l["blockers"] = stringList(r.blockers);
          l["unsupported"] = stringList(r.unsupported);
          l["explanation"] = r.explanation;
          layers.append(l);
        }
        d["layers"] = layers;
        return d;
      },
      nb::arg("input"), nb::arg("input_format"), nb::arg("name") = "<input>");

  m.def(
      "run",
      [](nb::handle mlirText, nb::list inputs, const std::string &device,
         const std::string &entry, const std::string &name) {
        std::string text = toStdString(mlirText);
        // Each input: (dtype: str, shape: list[int], data: bytes or a
        // C-contiguous array).
        std::vector<Buffer> buffers;
        for (nb::handle item : inputs) {
          nb::tuple t = nb::cast<nb::tuple>(item);
          Buffer b;
          b.dtype = nb::cast<std::string>(t[0]);
          b.shape = nb::cast<std::vector<int64_t>>(t[1]);
          b.data = toStdString(t[2]);
          buffers.push_back(std::move(b));
        }
        RunResult result;
        {
          nb::gil_scoped_release release;
          result = run(text, buffers, device, entry, name);
        }
        nb::dict d = statusDict(result.status);
        nb::list outputs;
        for (const Buffer &b : result.outputs)
          outputs.append(
              nb::make_tuple(b.dtype, nb::cast(b.shape),
                             nb::bytes(b.data.data(), b.data.size())));
        d["outputs"] = outputs;
        d["function"] = result.function;
        return d;
      },
      nb::arg("mlir"), nb::arg("inputs"), nb::arg("device") = "cpu",
      nb::arg("entry") = "", nb::arg("name") = "<input>");
}
