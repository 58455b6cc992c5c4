//===- MergeTurnedValues.cpp - One spelling of each transposed value ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Pushing transposes through a chain of updates stops where a push is not
// free and goes on where it is, so one weight can end up spelled twice:
// `Transpose(D)` where a push stopped and the fully turned `D^T` (a MatMul of
// transposed factors) where another went through. The chunks then read two
// "weights". Value numbering modulo the inner transpose finds, for each
// `Transpose(x)`, a node that already computes `x^T`; computesTransposeOf
// confirms it, and the transpose is replaced by that node.
//
//===----------------------------------------------------------------------===//

#include "GraphQueries.h"
#include "Normalize.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/Hashing.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

namespace {
/// The value number of a value and of its inner transpose.
struct Numbers {
  llvm::hash_code plain, turned;
};

class TurnedNumbering {
public:
  /// Numbers `value`, whose operands are numbered already (block order).
  Numbers number(Value value) {
    if (auto it = numbers.find(value); it != numbers.end())
      return it->second;
    Numbers result = compute(value);
    numbers[value] = result;
    return result;
  }

private:
  Numbers compute(Value value) {
    llvm::hash_code self = llvm::hash_value(value.getAsOpaquePointer());
    auto type = dyn_cast<RankedTensorType>(value.getType());
    // A value whose two innermost dims are 1 is its own transpose.
    if (type && llvm::all_of(type.getShape().take_back(
                                 std::min<int64_t>(2, type.getRank())),
                             [](int64_t d) { return d == 1; }))
      return {self, self};
    auto opaque = [&] { return Numbers{self, llvm::hash_combine(1, self)}; };
    if (!type || type.getRank() < 2)
      return opaque();
    // Constants number by content: the exporter folds a weight's transpose
    // into a constant of its own next to the stored weight.
    // Read in place: a weight may be gigabytes of mapped external data.
    if (auto bytes = constantBytes(value)) {
      if (!InnerTransposeView::of(bytes->first, bytes->second))
        return opaque();
      return {innerContentHash(bytes->first, bytes->second, /*turned=*/false),
              innerContentHash(bytes->first, bytes->second, /*turned=*/true)};
    }
    auto node = value.getDefiningOp<onnx::NodeOp>();
    if (!node || !node.isDefaultDomain() || node->getNumResults() != 1 ||
        node->getNumRegions() != 0)
      return opaque();
    StringRef op = node.getOpType();
    SmallVector<Numbers> in;
    for (Value operand : node.getInputs())
      in.push_back(number(operand));
    llvm::hash_code attrs =
        llvm::hash_value(node.getAttrsAttr().getAsOpaquePointer());
    if (op == "Transpose" && in.size() == 1) {
      std::optional<SmallVector<int64_t>> perm = transposePerm(node);
      if (perm && llvm::equal(*perm, swapInnerPerm(perm->size())))
        return {in[0].turned, in[0].plain};
    }
    if (op == "MatMul" && in.size() == 2)
      return {llvm::hash_combine(op, in[0].plain, in[1].plain),
              llvm::hash_combine(op, in[1].turned, in[0].turned)};
    if (llvm::is_contained({"Add", "Sub", "Mul", "Div", "Neg", "Identity",
                            "Cast", "Abs", "Exp", "Sqrt", "Reciprocal",
                            "Sigmoid", "Tanh", "Relu"},
                           op)) {
      llvm::hash_code plain = llvm::hash_combine(op, attrs);
      llvm::hash_code turned = plain;
      for (const Numbers &operand : in) {
        plain = llvm::hash_combine(plain, operand.plain);
        turned = llvm::hash_combine(turned, operand.turned);
      }
      return {plain, turned};
    }
    return opaque();
  }

  llvm::DenseMap<Value, Numbers> numbers;
};
} // namespace

/// Moves `op` and the nodes it reads that are defined after `point` in
/// `point`'s block up before `point`, in their order; false (nothing moved)
/// when they read `point` itself or a node with subgraphs.
static bool moveDefinitionBefore(RewriterBase &rewriter, Operation *op,
                                 Operation *point) {
  Block *block = point->getBlock();
  SmallVector<Operation *> moved;
  llvm::DenseSet<Operation *> seen;
  SmallVector<Operation *> stack{op};
  while (!stack.empty()) {
    Operation *next = stack.pop_back_val();
    if (!seen.insert(next).second)
      continue;
    if (next == point || next->getNumRegions() != 0)
      return false;
    moved.push_back(next);
    for (Value operand : next->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && def->getBlock() == block && !def->isBeforeInBlock(point))
        stack.push_back(def);
    }
  }
  llvm::sort(moved,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *each : moved)
    rewriter.moveOpBefore(each, point);
  return true;
}

bool raise::mergeTurnedValues(onnx::GraphOp graph) {
  IRRewriter rewriter(graph.getContext());
  bool changed = false;
  SmallVector<Block *> blocks;
  graph->walk([&](Block *block) { blocks.push_back(block); });
  for (Block *block : blocks) {
    TurnedNumbering numbering;
    llvm::DenseMap<size_t, SmallVector<Value, 1>> byNumber;
    SmallVector<onnx::NodeOp> transposes;
    for (Operation &op : *block)
      for (Value result : op.getResults()) {
        byNumber[numbering.number(result).plain].push_back(result);
        if (onnx::NodeOp node = nodeOf(result, "Transpose"))
          if (node.getInputs().size() == 1 && transposedInput(result))
            transposes.push_back(node);
      }
    for (onnx::NodeOp transpose : transposes) {
      Value result = transpose->getResult(0), x = transpose.getInputs()[0];
      if (!x.getDefiningOp<onnx::NodeOp>())
        continue;
      auto it = byNumber.find(numbering.number(result).plain);
      if (it == byNumber.end())
        continue;
      for (Value turned : it->second) {
        Operation *other = turned.getDefiningOp();
        if (turned == result || !other || nodeOf(turned, "Transpose") ||
            turned.getType() != result.getType() ||
            !computesTransposeOf(turned, x))
          continue;
        if (!other->isBeforeInBlock(transpose) &&
            !moveDefinitionBefore(rewriter, other, transpose))
          continue;
        rewriter.replaceAllUsesWith(result, turned);
        changed = true;
        break;
      }
    }
  }
  return changed;
}
