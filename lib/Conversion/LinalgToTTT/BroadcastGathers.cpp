//===- BroadcastGathers.cpp - torch-mlir's run-time broadcasts as views ---===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// torch-mlir gives each run-time size of a model exported with a dynamic
// batch its own `?`, and writes numpy broadcasting of one such size against
// another as a gather: a linalg.generic with no inputs whose body extracts
// `src[s == 1 ? 0 : i, j, ...]` into a tensor of the other size. Where the
// two sizes are equal, which is the only case the exported model is made
// for, the gather is its source; the chunk steps then read the sequences
// themselves, as the static export's do. The equality is asserted where the
// gather was, so the program computes what it computed or stops there with
// the assertion's message.
//
//===----------------------------------------------------------------------===//

#include "ChunkLoopForms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::ttt;

namespace {

/// A gather that broadcasts `source` into the shape of its output: per
/// dimension, the output index, or `size == 1 ? 0 : index` with `size`
/// defined outside the gather.
struct BroadcastGather {
  linalg::GenericOp op;
  Value source;
  /// For each dimension, the size the gather compares with one, or null
  /// where it reads the output index as it is.
  SmallVector<Value> comparedSizes;
};

/// The dimension whose `linalg.index` `value` is, if it is one.
std::optional<int64_t> indexDim(Value value) {
  if (auto index = value.getDefiningOp<linalg::IndexOp>())
    return index.getDim();
  return std::nullopt;
}

/// `size` where `value` is `select(size == 1, 0, index d)`.
Value comparedWithOne(Value value, int64_t d, Block *body) {
  auto select = value.getDefiningOp<arith::SelectOp>();
  if (!select || !matchPattern(select.getTrueValue(), m_Zero()) ||
      indexDim(select.getFalseValue()) != d)
    return Value();
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return Value();
  Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
  if (matchPattern(lhs, m_One()))
    std::swap(lhs, rhs);
  if (!matchPattern(rhs, m_One()) || lhs.getParentBlock() == body)
    return Value();
  return lhs;
}

std::optional<BroadcastGather> readBroadcastGather(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 0 || op.getNumDpsInits() != 1 ||
      op.getNumResults() != 1 || op.getNumReductionLoops() != 0 ||
      !op.getIndexingMapsArray()[0].isIdentity())
    return std::nullopt;
  Block *body = op.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto extract = yield.getValues()[0].getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract.getTensor().getParentBlock() == body)
    return std::nullopt;
  auto source = cast<RankedTensorType>(extract.getTensor().getType());
  auto result = cast<RankedTensorType>(op.getResult(0).getType());
  if (source.getRank() != result.getRank() ||
      source.getElementType() != result.getElementType())
    return std::nullopt;
  BroadcastGather gather{op, extract.getTensor(), {}};
  for (auto [d, index] : llvm::enumerate(extract.getIndices())) {
    int64_t dim = d;
    if (source.getDimSize(dim) != result.getDimSize(dim) &&
        !source.isDynamicDim(dim) && !result.isDynamicDim(dim))
      return std::nullopt;
    if (indexDim(index) == dim) {
      gather.comparedSizes.push_back(Value());
      continue;
    }
    Value size = comparedWithOne(index, dim, body);
    if (!size)
      return std::nullopt;
    gather.comparedSizes.push_back(size);
  }
  // Nothing else in the body: the indices, the comparisons, the extract.
  for (Operation &inner : body->without_terminator())
    if (!isa<linalg::IndexOp, arith::SelectOp, arith::CmpIOp, arith::ConstantOp,
             tensor::ExtractOp>(inner))
      return std::nullopt;
  return gather;
}

/// Whether `a` and `b` are one size: one value, or the same dimension of
/// one tensor read twice.
bool sameSize(Value a, Value b) {
  if (a == b)
    return true;
  auto x = a.getDefiningOp<tensor::DimOp>(),
       y = b.getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> i = x ? x.getConstantIndex() : std::nullopt;
  std::optional<int64_t> j = y ? y.getConstantIndex() : std::nullopt;
  return i && j && *i == *j && x.getSource() == y.getSource();
}

cf::AssertOp assertEqual(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (lhs == rhs)
    return cf::AssertOp();
  Value same =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs, rhs);
  return cf::AssertOp::create(b, loc, same, linalg_raise::kEqualSizesMessage);
}

} // namespace

void linalg_raise::foldEqualSizeBroadcasts(func::FuncOp func) {
  SmallVector<Operation *> sizes;
  SmallVector<cf::AssertOp> asserts;
  SmallVector<BroadcastGather> gathers;
  func.walk([&](linalg::GenericOp op) {
    if (std::optional<BroadcastGather> gather = readBroadcastGather(op))
      gathers.push_back(*gather);
  });
  for (BroadcastGather &gather : gathers) {
    linalg::GenericOp op = gather.op;
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value init = op.getDpsInits()[0];
    auto source = cast<RankedTensorType>(gather.source.getType());
    auto result = cast<RankedTensorType>(op.getResult(0).getType());
    // With the source as long as the output, `s == 1 ? 0 : i` is `i`
    // whatever s is where the length is one, and if s is the source's
    // length otherwise.
    for (auto [d, compared] : llvm::enumerate(gather.comparedSizes)) {
      int64_t dim = d;
      bool dynamic = source.isDynamicDim(dim) || result.isDynamicDim(dim);
      if (!dynamic && (!compared || source.getDimSize(dim) == 1))
        continue;
      Value sourceSize = b.createOrFold<tensor::DimOp>(loc, gather.source, dim);
      if (Operation *made = sourceSize.getDefiningOp<tensor::DimOp>())
        sizes.push_back(made);
      if (dynamic) {
        Value resultSize = b.createOrFold<tensor::DimOp>(loc, init, dim);
        if (Operation *made = resultSize.getDefiningOp<tensor::DimOp>())
          sizes.push_back(made);
        asserts.push_back(assertEqual(b, loc, sourceSize, resultSize));
      }
      if (compared)
        asserts.push_back(assertEqual(b, loc, compared, sourceSize));
    }
    Value replacement = gather.source;
    if (source != result)
      replacement = tensor::CastOp::create(b, loc, result, replacement);
    op.getResult(0).replaceAllUsesWith(replacement);
    op.erase();
  }
  // The sizes are read where the program made them (the arguments' sizes,
  // a tensor.empty's operands), not off the chunk steps' values: the
  // assertions read nothing of a step, which the reroll would take for a
  // reader of the step.
  MLIRContext *context = func.getContext();
  RewritePatternSet patterns(context);
  tensor::DimOp::getCanonicalizationPatterns(patterns, context);
  memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(sizes, std::move(patterns), config);
  // Sizes that are one value now need no assertion, and a pair asserted
  // once (every gather of one batch) needs it once.
  SmallVector<std::pair<Value, Value>> asserted;
  for (cf::AssertOp op : asserts) {
    if (!op)
      continue;
    auto same = op.getArg().getDefiningOp<arith::CmpIOp>();
    Value lhs = same.getLhs(), rhs = same.getRhs();
    bool known = llvm::any_of(asserted, [&](std::pair<Value, Value> pair) {
      return (sameSize(pair.first, lhs) && sameSize(pair.second, rhs)) ||
             (sameSize(pair.first, rhs) && sameSize(pair.second, lhs));
    });
    if (sameSize(lhs, rhs) || known) {
      op.erase();
      if (same->use_empty())
        same.erase();
      continue;
    }
    asserted.push_back({lhs, rhs});
  }
}
