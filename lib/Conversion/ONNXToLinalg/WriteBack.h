//===- WriteBack.h - what the canonical route changed, as ONNX --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// After the canonical route rewrote the function of a ConvertedGraph, the
// graph must compute what the function now computes. The records say which
// nodes the rewrite took away (every op they became is gone), and which
// inputs of the nodes that stay now read something else: only that
// something else is written as ONNX (the raised layer op, and the views and
// scalings the reader put around it); every other node stays as the model
// has it.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOLINALG_WRITEBACK_H
#define TTT_LIB_CONVERSION_ONNXTOLINALG_WRITEBACK_H

#include "GraphToFunc.h"

namespace mlir::ttt::onnx_to_linalg {

/// A node whose value the rewrite replaced: where to say what happened.
struct Replacement {
  /// The node (or, for a graph input, the graph) that computed the value.
  Operation *original;
  /// The replacement's new ops in the copy, e.g. the raised layer.
  SmallVector<Operation *> layers;
};

/// A copy of the graph computing what `converted.func` computes, or failure
/// with `why` set (the graph is then left as it is). The copy is inserted
/// after the graph; the caller swaps them.
FailureOr<onnx::GraphOp> writeBack(ConvertedGraph &converted,
                                   SmallVectorImpl<Replacement> &replaced,
                                   std::string &why);

} // namespace mlir::ttt::onnx_to_linalg

#endif // TTT_LIB_CONVERSION_ONNXTOLINALG_WRITEBACK_H
