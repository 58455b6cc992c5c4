//===- Compiler.h - the project's small C++ API -----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one entry point other languages bind (the Python package `ttt` binds
// it with nanobind): strings and byte strings in, strings and byte strings
// out, no MLIR types. Every function catches its own failures and reports
// them as a `Status` with a one-line message, the same wording the
// command-line tools use.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_API_COMPILER_H
#define TTT_API_COMPILER_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ttt::api {

/// What went wrong, for callers that map failures to exception types.
enum class ErrorKind {
  None,
  /// The input could not be read or parsed (MLIR text or ONNX bytes).
  Parse,
  /// A bad argument: unknown format, option, device; inputs that do not
  /// match the function's signature.
  Invalid,
  /// A pass or pipeline failed.
  Compile,
  /// The result could not be written (e.g. the ONNX checker rejected it).
  Export,
  /// JIT compilation or the call itself failed.
  Run,
};

struct Status {
  ErrorKind kind = ErrorKind::None;
  /// One line, e.g. "m.onnx: not a valid ONNX model (...)".
  std::string message;
  bool ok() const { return kind == ErrorKind::None; }
};

/// A dense array in row-major order. `dtype` is "float32", "float64",
/// "int32" or "int64"; `data` holds the raw bytes.
struct Buffer {
  std::string dtype;
  std::vector<int64_t> shape;
  std::string data;
};

struct OptimizeResult {
  Status status;
  /// ONNX bytes (emit "onnx") or MLIR text (emit "mlir").
  std::string output;
  /// The remarks and warnings of the passes, one line each
  /// ("LOCATION: remark: ttt-to-linattn: ...").
  std::vector<std::string> remarks;
};

/// What the layer analysis found for one TTT layer.
struct LayerReport {
  std::string location; ///< "file:line:col" of the layer op
  std::string op;       ///< "ttt.kvb_layer" or "ttt.dwconv_layer"
  std::string lowering; ///< exact lowering: "prefix sum", ...
  std::string update;   ///< state update: "additive", "affine", "non-affine"
  bool outputLinear = false;
  bool staticKernel = false;
  bool rewritable = false;
  std::vector<std::string> proven;
  std::vector<std::string> blockers;
  std::vector<std::string> unsupported;
  /// The line `--ttt-explain` prints.
  std::string explanation;
};

struct ExplainResult {
  Status status;
  std::vector<LayerReport> layers;
};

struct RunResult {
  Status status;
  std::vector<Buffer> outputs;
  std::string function; ///< the function that ran
};

/// The project's version, "MAJOR.MINOR.PATCH".
std::string version();

/// The model-changing simplifications `optimize` accepts, in the paper's
/// order (Variants 1-6): freeze-inner, drop-weight-norm, collapse-mlp,
/// drop-token-lr, drop-momentum, drop-muon.
std::vector<std::string> simplifications();

/// Reads `input` (`inputFormat` "mlir": MLIR text or bytecode; "linalg": the
/// same, a linalg-on-tensors program; "onnx": a serialized ModelProto) and
/// rewrites its TTT layers that are linear attention. MLIR: `ttt-simplify`
/// with the named model-changing simplifications (see `simplifications`;
/// none: exact folds only), then `ttt-to-linattn`. Linalg:
/// `ttt-optimize-linalg` (find the layers, rewrite them back into linalg;
/// `emit` "mlir", no simplifications). ONNX: `ttt-onnx-optimize` (find the
/// layers, rewrite the exact ones into standard ONNX nodes). Writes the
/// result as `emit` ("onnx" or "mlir"). `name` names the input in messages
/// and locations. `onRemark`, if given, receives each remark line as it is
/// emitted (one per layer found), before the call returns.
OptimizeResult
optimize(const std::string &input, const std::string &inputFormat,
         const std::vector<std::string> &simplify, const std::string &emit,
         const std::string &name = "<input>",
         const std::function<void(const std::string &)> &onRemark = nullptr);

/// The layer analysis of every `ttt` layer in `input` (same formats as
/// `optimize`), in program order.
ExplainResult explain(const std::string &input, const std::string &inputFormat,
                      const std::string &name = "<input>");

/// The bytes this process may still allocate before the system runs out
/// (MemAvailable plus free swap, less where a memory cgroup leaves less
/// room), or -1 when the system does not say. Callers check arrays of user
/// input against it before copying them.
int64_t availableMemory();

/// Compiles MLIR `mlirText` with `ttt-to-cpu`, JIT-compiles it and calls its
/// entry function (`entry`, or the only public function, or `main`) on
/// `inputs`, checked against its signature first. Only `device` "cpu" is
/// supported here.
RunResult run(const std::string &mlirText, const std::vector<Buffer> &inputs,
              const std::string &device = "cpu", const std::string &entry = "",
              const std::string &name = "<input>");

} // namespace ttt::api

#endif // TTT_API_COMPILER_H
