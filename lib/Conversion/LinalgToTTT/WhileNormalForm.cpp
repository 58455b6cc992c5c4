//===- WhileNormalForm.cpp - torch-mlir's scf.while as a counted loop -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// torch-mlir lowers torch's `while_loop` to an scf.while shaped like the
// Python it came from: the counter a 0-d tensor, stepped and compared by 0-d
// linalg.generic ops; the condition computed at the end of the body and
// carried into the next iteration as an i1 (a do-while); each chunk offset
// clamped to the tensor's bounds, as PyTorch's slices clamp; a counter that
// starts at the sum of a tensor of zeros when torch-mlir could not fold the
// start. Each rewrite here keeps what the function computes.
//
//===----------------------------------------------------------------------===//

#include "LoopReadings.h"
#include "ShadowGraph.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/Utils/InferIntRangeCommon.h"
#include "mlir/Transforms/CSE.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

namespace {

/// Whether `type` is a 0-d tensor of integers, floats or indices, which a
/// loop can carry as the scalar it holds.
bool isScalarTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == 0 &&
         tensor.getElementType().isIntOrIndexOrFloat();
}

/// A linalg.generic over 0-d tensors (no loops) as the scalar ops of its
/// body, between tensor.extract and tensor.from_elements.
struct ScalarizeZeroRankGeneric : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumLoops() != 0 || !op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not a generic of 0-d tensors");
    if (!llvm::all_of(op->getOperandTypes(), isScalarTensor))
      return rewriter.notifyMatchFailure(op, "an operand is not a 0-d tensor");
    Block *body = op.getBody();
    IRMapping scalars;
    for (OpOperand &operand : op->getOpOperands()) {
      Value element = tensor::ExtractOp::create(rewriter, op.getLoc(),
                                                operand.get(), ValueRange{});
      scalars.map(body->getArgument(operand.getOperandNumber()), element);
    }
    for (Operation &inner : body->without_terminator())
      rewriter.clone(inner, scalars);
    SmallVector<Value> results;
    for (auto [yielded, type] : llvm::zip_equal(
             body->getTerminator()->getOperands(), op->getResultTypes())) {
      Value tensor = tensor::FromElementsOp::create(
          rewriter, op.getLoc(), type, scalars.lookupOrDefault(yielded));
      results.push_back(tensor);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Whether `value` is a tensor of integer zeros: a splat constant, a fill,
/// or a copy (a broadcast) of one.
bool isIntegerZeros(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.getElementType().isIntOrIndex())
    return false;
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.value(), m_Zero());
  if (auto copy = value.getDefiningOp<linalg::GenericOp>()) {
    Block *body = copy.getBody();
    return copy.getNumDpsInputs() == 1 && copy->getNumResults() == 1 &&
           body->getOperations().size() == 1 &&
           body->getTerminator()->getOperand(0) == body->getArgument(0) &&
           isIntegerZeros(copy.getDpsInputs()[0]);
  }
  return matchPattern(value, m_Zero());
}

/// A sum of integer zeros into an init is the init. torch-mlir makes one of
/// `zeros_like(x, dtype=int64).sum()`, a loop counter's start it cannot
/// fold. (Floats are left: -0.0 + 0.0 is +0.0.)
struct FoldSumOfZeros : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
        !op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not one input into one init");
    if (!isIntegerZeros(op.getDpsInputs()[0]))
      return rewriter.notifyMatchFailure(op, "its input is not integer zeros");
    Block *body = op.getBody();
    auto add = dyn_cast<arith::AddIOp>(body->front());
    if (!add || body->getTerminator()->getOperand(0) != add.getResult() ||
        !llvm::is_contained(add->getOperands(), body->getArgument(0)) ||
        !llvm::is_contained(add->getOperands(), body->getArgument(1)))
      return rewriter.notifyMatchFailure(op, "its body is not in + out");
    rewriter.replaceOp(op, op.getDpsInits()[0]);
    return success();
  }
};

/// index_cast(x + c) of an i64 as index_cast(x) + c: truncation, the only
/// thing a cast of i64 to index can do, commutes with wrapping addition.
/// torch-mlir casts a chunk's start i * C and its end i * C + C apart; cast
/// together, the chunk's length end - start folds to C.
struct IndexCastOfAddConstant : OpRewritePattern<arith::IndexCastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::IndexCastOp op,
                                PatternRewriter &rewriter) const override {
    auto add = op.getIn().getDefiningOp<arith::AddIOp>();
    APInt c;
    if (!add || !op.getIn().getType().isInteger(64) ||
        !isa<IndexType>(op.getType()) ||
        !matchPattern(add.getRhs(), m_ConstantInt(&c)))
      return rewriter.notifyMatchFailure(op, "not a cast of i64 x + c");
    Value x = arith::IndexCastOp::create(rewriter, op.getLoc(), op.getType(),
                                         add.getLhs());
    Value offset =
        arith::ConstantIndexOp::create(rewriter, op.getLoc(), c.getSExtValue());
    rewriter.replaceOpWithNewOp<arith::AddIOp>(op, x, offset);
    return success();
  }
};

/// (a + b) - a as b (and (a + b) - b as a), exact in wrapping arithmetic:
/// a chunk's length, its end minus its start.
struct SubOfAdd : OpRewritePattern<arith::SubIOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::SubIOp op,
                                PatternRewriter &rewriter) const override {
    auto add = op.getLhs().getDefiningOp<arith::AddIOp>();
    if (!add)
      return rewriter.notifyMatchFailure(op, "not (a + b) - c");
    if (add.getLhs() == op.getRhs())
      rewriter.replaceOp(op, add.getRhs());
    else if (add.getRhs() == op.getRhs())
      rewriter.replaceOp(op, add.getLhs());
    else
      return rewriter.notifyMatchFailure(op, "c is neither a nor b");
    return success();
  }
};

/// Carries each 0-d tensor of `loop` as the scalar it holds: tensor.extract
/// where a value enters a region or the loop, tensor.from_elements where it
/// is read as a tensor (canonicalization then folds the pairs).
void scalarizeCarriedTensors(scf::WhileOp loop) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto toScalar = [&](Value tensor) -> Value {
    return tensor::ExtractOp::create(b, loc, tensor, ValueRange{});
  };
  auto asTensorAtStart = [&](BlockArgument arg, Type tensorType) {
    b.setInsertionPointToStart(arg.getOwner());
    auto tensor = tensor::FromElementsOp::create(b, loc, tensorType, arg);
    arg.replaceAllUsesExcept(tensor, tensor);
  };
  scf::ConditionOp condition = loop.getConditionOp();
  scf::YieldOp yield = loop.getYieldOp();
  // Inits, before arguments and yielded values.
  for (unsigned i = 0, e = loop.getInits().size(); i < e; ++i) {
    Type type = loop.getInits()[i].getType();
    if (!isScalarTensor(type))
      continue;
    b.setInsertionPoint(loop);
    loop->setOperand(i, toScalar(loop.getInits()[i]));
    b.setInsertionPoint(yield);
    yield->setOperand(i, toScalar(yield->getOperand(i)));
    BlockArgument arg = loop.getBeforeArguments()[i];
    arg.setType(cast<RankedTensorType>(type).getElementType());
    asTensorAtStart(arg, type);
  }
  // Values passed on by the condition: after arguments and results.
  for (unsigned i = 0, e = condition.getArgs().size(); i < e; ++i) {
    Type type = condition.getArgs()[i].getType();
    if (!isScalarTensor(type))
      continue;
    Type element = cast<RankedTensorType>(type).getElementType();
    b.setInsertionPoint(condition);
    condition.getArgsMutable()[i].set(toScalar(condition.getArgs()[i]));
    BlockArgument arg = loop.getAfterArguments()[i];
    arg.setType(element);
    asTensorAtStart(arg, type);
    OpResult result = loop->getResult(i);
    result.setType(element);
    b.setInsertionPointAfter(loop);
    auto tensor = tensor::FromElementsOp::create(b, loc, type, result);
    result.replaceAllUsesExcept(tensor, tensor);
  }
}

/// The computation of a do-while loop's next condition from the values its
/// body yields: the ops of the after block it takes (in block order), and
/// for each yielded value it reads, the position it is yielded at.
struct NextCondition {
  SmallVector<Operation *> ops;
  DenseMap<Value, unsigned> yielded;
};

/// How `loop`, whose condition is the carried before argument `carried`,
/// computes that condition at the end of its body from the other values it
/// yields and values from above; nullopt if it reads anything else (its
/// after arguments, ops with effects or regions).
std::optional<NextCondition> nextConditionOf(scf::WhileOp loop,
                                             unsigned carried) {
  scf::YieldOp yield = loop.getYieldOp();
  Block *after = loop.getAfterBody();
  NextCondition next;
  llvm::SmallPtrSet<Operation *, 8> taken;
  SmallVector<Value> worklist{yield->getOperand(carried)};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (value.getParentRegion()->isProperAncestor(&loop.getAfter()) ||
        next.yielded.count(value))
      continue; // from above, or already taken
    auto operands = yield->getOperands();
    auto at = llvm::find_if(llvm::enumerate(operands), [&](auto operand) {
      return operand.value() == value && operand.index() != carried;
    });
    if (at != llvm::enumerate(operands).end()) {
      next.yielded[value] = (*at).index();
      continue;
    }
    Operation *op = value.getDefiningOp();
    if (!op || op->getBlock() != after || op->getNumRegions() != 0 ||
        !isPure(op))
      return std::nullopt;
    if (!taken.insert(op).second)
      continue;
    next.ops.push_back(op);
    llvm::append_range(worklist, op->getOperands());
  }
  llvm::sort(next.ops,
             [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
  return next;
}

/// The constant `value` takes where each yielded value `next` reads is
/// given its constant init (folding the ops of `next`); null if one is not
/// known.
Attribute constantAtEntry(Value value, const NextCondition &next,
                          scf::WhileOp loop) {
  DenseMap<Value, Attribute> known;
  auto constantOf = [&](Value v) -> Attribute {
    if (Attribute a = known.lookup(v))
      return a;
    Attribute a;
    if (auto it = next.yielded.find(v); it != next.yielded.end())
      matchPattern(loop.getInits()[it->second], m_Constant(&a));
    else if (v.getParentRegion()->isProperAncestor(&loop.getAfter()))
      matchPattern(v, m_Constant(&a));
    return a;
  };
  for (Operation *op : next.ops) {
    SmallVector<Attribute> operands;
    for (Value operand : op->getOperands()) {
      Attribute a = constantOf(operand);
      if (!a)
        return {};
      operands.push_back(a);
    }
    // A detached copy folds: a folder may update its op in place.
    Operation *copy = op->clone();
    SmallVector<OpFoldResult> results;
    bool folded = succeeded(copy->fold(operands, results)) &&
                  results.size() == op->getNumResults();
    SmallVector<Attribute> values;
    for (OpFoldResult result : folded ? results : SmallVector<OpFoldResult>()) {
      Attribute a = dyn_cast<Attribute>(result);
      if (!a)
        a = constantOf(cast<Value>(result));
      values.push_back(a);
    }
    copy->erase();
    if (!folded || llvm::is_contained(values, Attribute()))
      return {};
    for (auto [result, value] : llvm::zip_equal(op->getResults(), values))
      known[result] = value;
  }
  return constantOf(value);
}

/// Whether `value`, computed by `next` from the values the body yields, is
/// `atEntry` when each of them is its init: the same ops on the inits (a
/// comparison also with its operands swapped, as canonicalization puts a
/// constant on the right), or the same constant.
bool sameAtEntry(Value value, Value atEntry, const NextCondition &next,
                 scf::WhileOp loop) {
  std::function<bool(Value, Value)> same = [&](Value v, Value w) -> bool {
    if (auto it = next.yielded.find(v); it != next.yielded.end())
      return loop.getInits()[it->second] == w;
    Operation *op = v.getDefiningOp();
    if (!op || !llvm::is_contained(next.ops, op))
      return v == w;
    Operation *other = w.getDefiningOp();
    auto cmp = dyn_cast<arith::CmpIOp>(op);
    auto otherCmp = dyn_cast_or_null<arith::CmpIOp>(other);
    if (cmp && otherCmp &&
        swapped(cmp.getPredicate()) == otherCmp.getPredicate() &&
        same(cmp.getLhs(), otherCmp.getRhs()) &&
        same(cmp.getRhs(), otherCmp.getLhs()))
      return true;
    return other &&
           cast<OpResult>(v).getResultNumber() ==
               cast<OpResult>(w).getResultNumber() &&
           OperationEquivalence::isEquivalentTo(
               op, other, [&](Value x, Value y) { return success(same(x, y)); },
               /*markEquivalent=*/nullptr,
               OperationEquivalence::IgnoreLocations);
  };
  if (same(value, atEntry))
    return true;
  Attribute first = constantAtEntry(value, next, loop);
  Attribute given;
  return first && matchPattern(atEntry, m_Constant(&given)) && first == given;
}

/// Computes the condition of a do-while `loop` (an i1 carried from the end
/// of its body) at the start of each iteration, from the values it carries,
/// when the condition it starts with is that computation on its inits. The
/// carried i1 is then unread, and canonicalization drops it.
bool computeCarriedCondition(scf::WhileOp loop) {
  scf::ConditionOp condition = loop.getConditionOp();
  auto carried = dyn_cast<BlockArgument>(condition.getCondition());
  if (!carried || carried.getOwner() != loop.getBeforeBody())
    return false;
  unsigned position = carried.getArgNumber();
  std::optional<NextCondition> next = nextConditionOf(loop, position);
  Value computed = loop.getYieldOp()->getOperand(position);
  if (!next || !sameAtEntry(computed, loop.getInits()[position], *next, loop))
    return false;
  OpBuilder b(condition);
  IRMapping atStart;
  for (auto [value, at] : next->yielded)
    atStart.map(value, loop.getBeforeArguments()[at]);
  for (Operation *op : next->ops)
    b.clone(*op, atStart);
  condition.getConditionMutable().set(atStart.lookupOrDefault(computed));
  return true;
}

/// Whether `loop` is in torch-mlir's form: it carries a 0-d tensor or its
/// condition.
bool isTorchWhileForm(scf::WhileOp loop) {
  auto carried = dyn_cast<BlockArgument>(loop.getConditionOp().getCondition());
  return (carried && carried.getOwner() == loop.getBeforeBody()) ||
         llvm::any_of(loop.getInits().getTypes(), isScalarTensor) ||
         llvm::any_of(loop.getConditionOp().getArgs().getTypes(),
                      isScalarTensor);
}

/// The range the integer range analysis gives `value`; null if none.
const ConstantIntRanges *rangeOf(DataFlowSolver &solver, Value value) {
  auto *lattice = solver.lookupState<dataflow::IntegerValueRangeLattice>(value);
  if (!lattice || lattice->getValue().isUninitialized())
    return nullptr;
  return &lattice->getValue().getValue();
}

/// What the ranges of its operands make `op` (an integer comparison or a
/// signed min or max) equal to; null if they do not decide it.
Value decidedByRanges(Operation *op, DataFlowSolver &solver, OpBuilder &b) {
  if (op->getNumOperands() != 2 || !op->getResult(0).getType().isIntOrIndex())
    return {};
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  const ConstantIntRanges *l = rangeOf(solver, lhs);
  const ConstantIntRanges *r = rangeOf(solver, rhs);
  if (!l || !r)
    return {};
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    std::optional<bool> outcome = intrange::evaluatePred(
        static_cast<intrange::CmpPredicate>(cmp.getPredicate()), *l, *r);
    if (!outcome)
      return {};
    b.setInsertionPoint(op);
    return arith::ConstantIntOp::create(b, op->getLoc(), *outcome, 1);
  }
  bool lhsAtLeast = l->smin().sge(r->smax());
  bool rhsAtLeast = r->smin().sge(l->smax());
  if (isa<arith::MaxSIOp>(op))
    return lhsAtLeast ? lhs : rhsAtLeast ? rhs : Value();
  if (isa<arith::MinSIOp>(op))
    return rhsAtLeast ? lhs : lhsAtLeast ? rhs : Value();
  return {};
}

/// Canonicalization with torch-mlir's index casts and `extra`, then CSE:
/// torch-mlir computes a value such as a chunk's start once for each use.
void simplify(func::FuncOp func, bool scalarArithmetic = false) {
  MLIRContext *context = func.getContext();
  // What CSE makes one value can fold again ((a + C) - a).
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    RewritePatternSet patterns(context);
    patterns.add<IndexCastOfAddConstant, SubOfAdd>(context);
    if (scalarArithmetic)
      patterns.add<ScalarizeZeroRankGeneric, FoldSumOfZeros>(context);
    canonicalize(func, std::move(patterns));
    IRRewriter rewriter(context);
    DominanceInfo dominance(func);
    bool changed = false;
    eliminateCommonSubExpressions(rewriter, dominance, func, &changed);
    if (!changed)
      return;
  }
}

} // namespace

bool linalg_raise::normalizeWhileLoops(func::FuncOp func) {
  SmallVector<scf::WhileOp> loops;
  func.walk([&](scf::WhileOp loop) {
    if (isTorchWhileForm(loop))
      loops.push_back(loop);
  });
  if (loops.empty())
    return false;
  for (scf::WhileOp loop : loops)
    scalarizeCarriedTensors(loop);
  simplify(func, /*scalarArithmetic=*/true);
  // Canonicalization may have replaced the loops.
  loops.clear();
  func.walk([&](scf::WhileOp loop) { loops.push_back(loop); });
  for (scf::WhileOp loop : loops)
    (void)computeCarriedCondition(loop);
  simplify(func);
  return true;
}

void linalg_raise::foldClampsByRange(func::FuncOp func) {
  // Each round folds what the last one's folds make decidable (a select of a
  // decided comparison feeds a min); a clamp chain is a few ops long. The
  // first simplifies even if nothing is decided: the loops, scf.for now,
  // drop what they carry unchanged.
  constexpr int kRounds = 4;
  for (int round = 0; round < kRounds; ++round) {
    DataFlowSolver solver;
    solver.load<dataflow::DeadCodeAnalysis>();
    solver.load<dataflow::SparseConstantPropagation>();
    solver.load<dataflow::IntegerRangeAnalysis>();
    if (failed(solver.initializeAndRun(func)))
      return;
    SmallVector<std::pair<Operation *, Value>> decided;
    OpBuilder b(func.getContext());
    func.walk([&](Operation *op) {
      if (!isa<arith::CmpIOp, arith::MaxSIOp, arith::MinSIOp>(op))
        return;
      if (Value value = decidedByRanges(op, solver, b))
        decided.push_back({op, value});
    });
    if (decided.empty() && round > 0)
      return;
    for (auto [op, value] : decided)
      op->getResult(0).replaceAllUsesWith(value);
    simplify(func);
  }
}
