//===- ShadowGraph.h - a linalg program as an ONNX graph --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The ONNX raise's finder and matcher read the math of a graph, not its
// spelling; to serve upstream-dialect programs too, a function on tensors is
// written as an `onnx.graph` that computes the same values (its "shadow"):
// contractions become Einsum nodes (whose normalization the raise already
// has), elementwise linalg ops the nodes of their payload on operands
// aligned to the iteration space, sum reductions ReduceSum, views Slice and
// Reshape, a chain of insert_slices that tiles a fresh tensor a Concat.
// Every other op becomes an opaque node of domain `ttt.opaque`
// (raise::kUntranslatedDomain) that keeps the dataflow. Each shadow value of
// a translated op is named, and the name leads back to the function's value.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_SHADOWGRAPH_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_SHADOWGRAPH_H

#include "../ONNXToTTT/LayerFinder.h"
#include "ttt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::ttt::linalg_raise {

struct ShadowGraph {
  /// The module that holds the graph (a model of the newest opset).
  OwningOpRef<ModuleOp> module;
  onnx::GraphOp graph;
  /// The function's value each named shadow value stands for.
  llvm::StringMap<Value> original;
  /// Ops that became opaque nodes, for the remark when nothing is found.
  int64_t translated = 0, opaque = 0;
};

/// The shadow of `func`, or failure, with the reason in `why`, if it is a
/// declaration, has more than one block, or its signature has other than
/// statically shaped tensors of floats.
/// Size d of `tensor` as the index value it was made with, if there is
/// one: a slice's, an empty tensor's or an expand_shape's size, through the
/// inits of destination-style ops and from a loop's buffer to its initial
/// value.
Value sizeValueOf(Value tensor, int64_t d);

FailureOr<ShadowGraph> buildShadowGraph(func::FuncOp func, std::string &why);

/// The predicate of `b op a` when `predicate` is that of `a op b`.
arith::CmpIPredicate swapped(arith::CmpIPredicate predicate);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_SHADOWGRAPH_H
