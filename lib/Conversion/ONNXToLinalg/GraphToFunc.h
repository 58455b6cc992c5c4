//===- GraphToFunc.h - an ONNX graph read as linalg on tensors --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The ONNX front end of the canonical route: an `onnx.graph` becomes a
// `func.func` on tensors, node by node (NodeHandlers.h), so that the formers
// and the reader of `ttt.chunk_loop` see ONNX models exactly as they see
// torch-mlir's output. What ties the two is kept on the side: every op a
// node became carries `ttt.onnx_op`, an index into `ops`, which says which
// node made it, which of its operands were which ONNX values, and which of
// its results are. After the analysis rewrote the function, the write-back
// (WriteBack.h) reads from those records what the rewrite replaced, and
// writes only that back into the graph.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOLINALG_GRAPHTOFUNC_H
#define TTT_LIB_CONVERSION_ONNXTOLINALG_GRAPHTOFUNC_H

#include "ttt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <string>
#include <vector>

namespace mlir::ttt::onnx_to_linalg {

/// The discardable attribute that ties a function op to its record.
inline constexpr llvm::StringLiteral kRecordAttr = "ttt.onnx_op";

/// One op of the function, as the import made it.
struct OpRecord {
  /// The node it converts; null for an initializer's constant.
  onnx::NodeOp node;
  /// For each operand, the id of the ONNX input it stands for, or -1 for a
  /// value the handler made.
  SmallVector<int64_t> operandIds;
  /// For each result, the id of the ONNX value it is, or -1.
  SmallVector<int64_t> resultIds;
};

/// A node left out of the function, and why.
struct OpaqueNode {
  onnx::NodeOp node;
  std::string reason;
};

class ConvertedGraph {
public:
  /// Converts `graph` into a function inside a new module (owned by this
  /// object, erased with it).
  explicit ConvertedGraph(onnx::GraphOp graph);
  ~ConvertedGraph();
  ConvertedGraph(const ConvertedGraph &) = delete;
  ConvertedGraph &operator=(const ConvertedGraph &) = delete;

  onnx::GraphOp graph;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;

  /// ONNX values by id: the graph's arguments, initializers and node results.
  SmallVector<Value> values;
  llvm::DenseMap<Value, int64_t> idOf;
  /// The id whose converted value another id's is (Identity, a no-op cast).
  llvm::DenseMap<int64_t, int64_t> aliasOf;
  /// The ONNX value each function argument stands for.
  SmallVector<int64_t> argumentIds;
  /// The ONNX value each returned value stands for.
  SmallVector<int64_t> returnIds;
  std::vector<OpRecord> ops;
  std::vector<OpaqueNode> opaque;
  /// The number of nodes converted.
  int64_t converted = 0;

  /// `id` with its aliases followed.
  int64_t canonical(int64_t id) const;

private:
  void convertNode(OpBuilder &b, onnx::NodeOp node, int64_t opset);
  void makeOpaque(OpBuilder &b, onnx::NodeOp node, std::string reason);
  void tagNewOps(Operation *before, onnx::NodeOp node, ValueRange inputs,
                 ArrayRef<int64_t> inputIds, ValueRange results,
                 ArrayRef<int64_t> resultIds);
  int64_t idFor(Value value);
  void markLiveOut(Value onnxValue);

  /// The converted value of each ONNX id (null where none).
  llvm::DenseMap<int64_t, Value> counterpart;
  /// The ids the function returns, in the order they were first needed.
  llvm::SetVector<int64_t> liveOut;
};

} // namespace mlir::ttt::onnx_to_linalg

#endif // TTT_LIB_CONVERSION_ONNXTOLINALG_GRAPHTOFUNC_H
