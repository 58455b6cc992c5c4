//===- FoldNoOps.cpp - ops that return their input, removed --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Unrolled chunk steps are proven equal op for op. An exporter, a rewriting
// tool or a hand that adds a no-op to one step — a scaling by one, a
// double negation, a round trip through float64 or a unit dimension, a
// split joined again — makes equal steps differ in spelling only. Such ops
// are removed before the steps are compared. Each rule returns a value the
// op computes exactly (up to the sign of a zero), so nothing the program
// computes changes.
//
//===----------------------------------------------------------------------===//

#include "ChunkLoopForms.h"
#include "EinsumPolynomial.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

namespace {
/// An elementwise linalg.generic of one tensor: its input read through an
/// identity map into a result of the same type, every other input a splat
/// constant.
struct Elementwise {
  linalg::GenericOp op;
  Value input;
  BlockArgument arg;
  /// The splat value of each constant input's block argument.
  llvm::SmallDenseMap<Value, double> constants;
  Value yielded;
  /// Whether the result has the input's element type (no conversion).
  bool sameType = false;

  /// With every input a constant, the `constantChoice`-th one read through
  /// an identity map is taken as the input (`0 + c` is `c`, not `0`).
  static std::optional<Elementwise> of(Operation *op,
                                       unsigned constantChoice = 0) {
    auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
    if (!generic || generic.getNumResults() != 1 ||
        generic.getNumDpsInits() != 1)
      return std::nullopt;
    Elementwise e;
    e.op = generic;
    Block &body = generic.getRegion().front();
    // A constant read through an identity map is the input when every
    // input is a constant (a scaling of a constant by one).
    OpOperand *constantInput = nullptr;
    for (OpOperand *operand : generic.getDpsInputOperands()) {
      auto constant = operand->get().getDefiningOp<arith::ConstantOp>();
      auto splat = constant ? dyn_cast<SplatElementsAttr>(constant.getValue())
                            : SplatElementsAttr();
      BlockArgument arg = body.getArgument(operand->getOperandNumber());
      bool identity = generic.getMatchingIndexingMap(operand).isIdentity();
      if (splat && isa<FloatType>(splat.getElementType())) {
        e.constants[arg] = splat.getSplatValue<APFloat>().convertToDouble();
        if (identity && !constantInput && constantChoice-- == 0)
          constantInput = operand;
        continue;
      }
      if (e.input || !identity)
        return std::nullopt;
      e.input = operand->get();
      e.arg = arg;
    }
    if (!e.input && constantInput) {
      e.input = constantInput->get();
      e.arg = body.getArgument(constantInput->getOperandNumber());
      e.constants.erase(e.arg);
    }
    auto inputType = e.input ? dyn_cast<RankedTensorType>(e.input.getType())
                             : RankedTensorType();
    auto resultType =
        dyn_cast<RankedTensorType>(generic.getResult(0).getType());
    if (!inputType || !resultType ||
        inputType.getShape() != resultType.getShape() ||
        !generic.getIndexingMapMatchingResult(generic->getResult(0))
             .isIdentity())
      return std::nullopt;
    e.yielded = body.getTerminator()->getOperand(0);
    e.sameType = inputType == resultType;
    return e;
  }

  /// Whether `value` is the float constant `c` (in the body or an input).
  bool is(Value value, double c) const {
    auto it = constants.find(value);
    if (it != constants.end())
      return it->second == c;
    std::optional<double> constant = floatConstant(value);
    return constant && *constant == c;
  }

  /// The one op of the body that makes the yielded value from the input.
  template <typename OpTy> OpTy unaryOfArg() const {
    auto def = yielded.getDefiningOp<OpTy>();
    return def && def->getOperand(0) == arg ? def : OpTy();
  }
};
} // namespace

/// The operand an elementwise op `e` returns the value of (`x * 1`, `x + 0`,
/// `-(-x)`, a float64 round trip), or null.
static Value elementwiseNoOpSource(const Elementwise &e) {
  if (e.yielded == e.arg && e.sameType)
    return e.input;
  Operation *def = e.yielded.getDefiningOp();
  if (!def || def->getNumOperands() == 0)
    return {};
  Value lhs = def->getOperand(0);
  if (!e.sameType && !isa<arith::TruncFOp>(def))
    return {};
  Value rhs = def->getNumOperands() > 1 ? def->getOperand(1) : Value();
  if (isa<arith::MulFOp>(def) &&
      ((lhs == e.arg && e.is(rhs, 1.0)) || (rhs == e.arg && e.is(lhs, 1.0))))
    return e.input;
  if (isa<arith::DivFOp>(def) && lhs == e.arg && e.is(rhs, 1.0))
    return e.input;
  if (isa<arith::AddFOp>(def) &&
      ((lhs == e.arg && e.is(rhs, 0.0)) || (rhs == e.arg && e.is(lhs, 0.0))))
    return e.input;
  if (isa<arith::SubFOp>(def) && lhs == e.arg && e.is(rhs, 0.0))
    return e.input;
  // -(-x) and the float64 round trip, each spelled as two generics.
  std::optional<Elementwise> inner = Elementwise::of(e.input.getDefiningOp());
  if (!inner || !inner->constants.empty())
    return {};
  if (e.unaryOfArg<arith::NegFOp>() && inner->unaryOfArg<arith::NegFOp>())
    return inner->input;
  if (auto trunc = e.unaryOfArg<arith::TruncFOp>())
    if (auto ext = inner->unaryOfArg<arith::ExtFOp>())
      if (ext.getIn().getType() == trunc.getType())
        return inner->input;
  return {};
}

/// The operand a transpose, reshape pair or concat of slices returns the
/// value of, or null.
static Value otherNoOpSource(Operation *op) {
  // A transpose undone by the next, or one that keeps the order.
  if (auto outer = dyn_cast<linalg::TransposeOp>(op)) {
    ArrayRef<int64_t> perm = outer.getPermutation();
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      return outer.getInput();
    if (auto inner = outer.getInput().getDefiningOp<linalg::TransposeOp>()) {
      // result[i] = mid[perm[i]] = input[innerPerm[perm[i]]].
      ArrayRef<int64_t> innerPerm = inner.getPermutation();
      bool identity = true;
      for (auto [i, p] : llvm::enumerate(perm))
        identity &= innerPerm[p] == static_cast<int64_t>(i);
      if (identity)
        return inner.getInput();
    }
  }
  // A unit dimension added and dropped again, or dims merged and split.
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    if (auto expand = collapse.getSrc().getDefiningOp<tensor::ExpandShapeOp>())
      if (expand.getSrc().getType() == collapse.getType() &&
          expand.getReassociationIndices() ==
              collapse.getReassociationIndices())
        return expand.getSrc();
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    if (auto collapse =
            expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>())
      if (collapse.getSrc().getType() == expand.getType() &&
          expand.getReassociationIndices() ==
              collapse.getReassociationIndices())
        return collapse.getSrc();
  // Consecutive slices of one tensor joined again along the cut axis.
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    int64_t axis = concat.getDim(), offset = 0;
    Value source;
    for (Value input : concat.getInputs()) {
      auto slice = input.getDefiningOp<tensor::ExtractSliceOp>();
      if (!slice || !slice.hasUnitStride() || !slice.getOffsets().empty() ||
          !slice.getSizes().empty() ||
          slice.getResultType().getRank() != slice.getSourceType().getRank() ||
          (source && slice.getSource() != source))
        return {};
      source = slice.getSource();
      for (int64_t d = 0; d < slice.getSourceType().getRank(); ++d) {
        int64_t at = slice.getStaticOffsets()[d];
        int64_t size = slice.getStaticSizes()[d];
        if (d == axis ? at != offset
                      : at != 0 || size != slice.getSourceType().getDimSize(d))
          return {};
      }
      offset += slice.getStaticSizes()[axis];
    }
    if (source && source.getType() == concat.getType())
      return source;
  }
  return {};
}

/// The value `op` computes when it is one of its operands' values.
static Value noOpSource(Operation *op) {
  // An op of constants alone is tried with each as its input.
  for (unsigned choice = 0; choice < 2; ++choice) {
    std::optional<Elementwise> e = Elementwise::of(op, choice);
    if (!e)
      break;
    if (Value source = elementwiseNoOpSource(*e))
      return source;
    if (!e->input.getDefiningOp<arith::ConstantOp>())
      break;
  }
  return otherNoOpSource(op);
}

bool linalg_raise::isCommutativePair(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 2 ||
      generic.getNumResults() != 1)
    return false;
  Block &body = generic.getRegion().front();
  if (!llvm::hasSingleElement(body.without_terminator()) ||
      body.getArgument(0).getType() != body.getArgument(1).getType())
    return false;
  Operation &inner = body.front();
  if (!isa<arith::AddFOp, arith::MulFOp>(inner) ||
      body.getTerminator()->getOperand(0) != inner.getResult(0))
    return false;
  llvm::SmallDenseSet<Value> args(inner.operand_begin(), inner.operand_end());
  return args.size() == 2 && args.contains(body.getArgument(0)) &&
         args.contains(body.getArgument(1));
}

void linalg_raise::swapCommutativeInputs(Operation *op) {
  auto generic = cast<linalg::GenericOp>(op);
  Value a = op->getOperand(0), b = op->getOperand(1);
  op->setOperand(0, b);
  op->setOperand(1, a);
  SmallVector<Attribute> maps(generic.getIndexingMaps().getValue());
  std::swap(maps[0], maps[1]);
  generic.setIndexingMapsAttr(ArrayAttr::get(op->getContext(), maps));
}

/// `op` rebuilt in the spelling its equal in another step has, or null:
/// `a + (-b)` as `a - b`, and `(x * c) * 2^k` as `x * (c 2^k)` (a power of
/// two scales exactly). The new op carries no node record: it stands for
/// no ONNX node, only for what the step computes.
static Value respelled(OpBuilder &b, Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumResults() != 1 || generic.getNumDpsInits() != 1)
    return {};
  Block &body = generic.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(0);
  // a + (-b), either order.
  if (generic.getNumDpsInputs() == 2 && isCommutativePair(op) &&
      yielded.getDefiningOp<arith::AddFOp>()) {
    for (unsigned negated = 0; negated < 2; ++negated) {
      std::optional<Elementwise> neg =
          Elementwise::of(generic.getDpsInputs()[negated].getDefiningOp());
      if (!neg || !neg->constants.empty() || !neg->sameType ||
          !neg->unaryOfArg<arith::NegFOp>())
        continue;
      unsigned kept = 1 - negated;
      SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
      auto sub = linalg::GenericOp::create(
          b, op->getLoc(), op->getResultTypes(),
          ValueRange{generic.getDpsInputs()[kept], neg->input},
          generic.getDpsInits(),
          ArrayRef<AffineMap>{maps[kept], maps[negated], maps[2]},
          generic.getIteratorTypesArray(),
          [](OpBuilder &nb, Location loc, ValueRange args) {
            linalg::YieldOp::create(
                nb, loc,
                arith::SubFOp::create(nb, loc, args[0], args[1]).getResult());
          });
      return sub.getResult(0);
    }
    return {};
  }
  // (x * c) * 2^k.
  std::optional<Elementwise> outer = Elementwise::of(op);
  if (!outer || !outer->sameType || outer->constants.size() != 1)
    return {};
  auto mul = outer->yielded.getDefiningOp<arith::MulFOp>();
  double scale = outer->constants.begin()->second;
  int exponent = 0;
  if (!mul || (mul.getLhs() != outer->arg && mul.getRhs() != outer->arg) ||
      !std::isfinite(scale) || std::frexp(scale, &exponent) != 0.5)
    return {};
  auto inner = outer->input.getDefiningOp<linalg::GenericOp>();
  std::optional<Elementwise> scaled = Elementwise::of(inner);
  if (!scaled || !scaled->sameType || scaled->constants.size() != 1 ||
      !outer->input.hasOneUse())
    return {};
  auto innerMul = scaled->yielded.getDefiningOp<arith::MulFOp>();
  if (!innerMul)
    return {};
  for (OpOperand *operand : inner.getDpsInputOperands()) {
    Value arg =
        inner.getRegion().front().getArgument(operand->getOperandNumber());
    auto it = scaled->constants.find(arg);
    if (it == scaled->constants.end())
      continue;
    auto constant = operand->get().getDefiningOp<arith::ConstantOp>();
    auto type = cast<RankedTensorType>(constant.getType());
    APFloat product(it->second * scale);
    bool lost = false;
    product.convert(cast<FloatType>(type.getElementType()).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &lost);
    if (lost || !product.isNormal())
      return {};
    Value folded = arith::ConstantOp::create(
        b, constant.getLoc(), DenseElementsAttr::get(type, product));
    Operation *clone = b.clone(*inner);
    clone->setDiscardableAttrs(DictionaryAttr::get(clone->getContext()));
    clone->setOperand(operand->getOperandNumber(), folded);
    return clone->getResult(0);
  }
  return {};
}

void linalg_raise::foldNoOps(func::FuncOp func) {
  SmallVector<Operation *> ops;
  llvm::DenseSet<Operation *> read;
  func.walk([&](Operation *op) {
    if (op->getParentOp() != func.getOperation())
      return;
    ops.push_back(op);
    if (!op->use_empty())
      read.insert(op);
  });
  // In program order, so that an op sees its operands already folded.
  SmallVector<Operation *> folded;
  OpBuilder b(func.getContext());
  for (Operation *op : ops) {
    b.setInsertionPoint(op);
    Value source = noOpSource(op);
    if (!source) {
      source = respelled(b, op);
      // The new spelling may itself be a no-op (x * 0.5 * 2 is x * 1).
      if (source)
        if (Value again = noOpSource(source.getDefiningOp()))
          source = again;
    }
    if (!source)
      continue;
    op->getResult(0).replaceAllUsesWith(source);
    folded.push_back(op);
  }
  // Pieces of a Split that nothing reads: an unread slice of a tensor
  // another slice of which is read (the tensor may have other readers).
  for (Operation *op : ops)
    if (isa<tensor::ExtractSliceOp>(op) && op->use_empty() &&
        llvm::any_of(op->getOperand(0).getUsers(), [](Operation *user) {
          return isa<tensor::ExtractSliceOp>(user) && !user->use_empty();
        }))
      folded.push_back(op);
  // What the folded ops alone read goes with them; what the program left
  // unread before stays as it was.
  SmallVector<Operation *> worklist(folded.rbegin(), folded.rend());
  llvm::DenseSet<Operation *> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !op->use_empty() || !isPure(op))
      continue;
    SmallVector<Operation *> producers;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (read.contains(def) && def->getParentOp() == func.getOperation())
          producers.push_back(def);
    erased.insert(op);
    op->erase();
    llvm::append_range(worklist, producers);
  }
}
