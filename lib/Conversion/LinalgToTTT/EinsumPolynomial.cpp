//===- EinsumPolynomial.cpp - tensor values as sums of einsum terms -------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "EinsumPolynomial.h"

#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallBitVector.h"

#include <set>

using namespace mlir;
using namespace mlir::ttt::linalg_raise;

/// Bounds that keep a read linear in the size of the program.
static constexpr unsigned kMaxDepth = 64;
static constexpr size_t kMaxTerms = 256;
static constexpr size_t kMaxFactors = 16;

SmallVector<const Factor *> Term::factorsOf(Value leaf) const {
  SmallVector<const Factor *> result;
  for (const Factor &factor : factors)
    if (factor.leaf == leaf)
      result.push_back(&factor);
  return result;
}

namespace {

/// The sum of products a payload computes, each block argument a
/// polynomial over the op's loop labels.
class PayloadAlgebra {
public:
  PayloadAlgebra(EinsumReader &reader, ArrayRef<unsigned> loopLabels)
      : reader(reader), loopLabels(loopLabels.begin(), loopLabels.end()) {}

  std::optional<SmallVector<Term>> product(ArrayRef<Term> lhs,
                                           ArrayRef<Term> rhs) {
    SmallVector<Term> result;
    if (lhs.size() * rhs.size() > kMaxTerms)
      return std::nullopt;
    for (const Term &a : lhs) {
      for (const Term &b : rhs) {
        Term renamed = renameSummed(b);
        Term term;
        term.coeff = a.coeff * renamed.coeff;
        term.factors = a.factors;
        llvm::append_range(term.factors, renamed.factors);
        if (term.factors.size() > kMaxFactors)
          return std::nullopt;
        result.push_back(std::move(term));
      }
    }
    return result;
  }

  static std::optional<SmallVector<Term>> sum(ArrayRef<Term> lhs,
                                              ArrayRef<Term> rhs, double sign) {
    if (lhs.size() + rhs.size() > kMaxTerms)
      return std::nullopt;
    SmallVector<Term> result(lhs);
    for (Term term : rhs) {
      term.coeff *= sign;
      result.push_back(std::move(term));
    }
    return result;
  }

  static SmallVector<Term> scaled(ArrayRef<Term> terms, double factor) {
    SmallVector<Term> result(terms);
    for (Term &term : result)
      term.coeff *= factor;
    return result;
  }

private:
  /// `term` with the labels it sums over renamed, so that a product of two
  /// terms never joins two sums by accident.
  Term renameSummed(const Term &term) {
    llvm::DenseMap<unsigned, unsigned> renamed;
    Term result = term;
    for (Factor &factor : result.factors)
      for (unsigned &label : factor.labels) {
        // The parts of a merged loop label are as free as the label (and
        // known only once the operands that split it are read).
        if (loopLabels.contains(label) || reader.isPartOf(label, loopLabels))
          continue;
        auto [it, inserted] = renamed.try_emplace(label, 0);
        if (inserted)
          it->second = reader.freshLabelLike(label);
        label = it->second;
      }
    return result;
  }

  EinsumReader &reader;
  llvm::DenseSet<unsigned> loopLabels;
};

} // namespace

std::optional<double> mlir::ttt::linalg_raise::floatConstant(Value value) {
  FloatAttr attr;
  if (matchPattern(value, m_Constant(&attr)))
    return attr.getValueAsDouble();
  // A constant written in another precision (torch-mlir's f64 scalars):
  // the value the conversion gives, rounded as the program rounds it.
  Operation *op = value.getDefiningOp();
  if (!isa_and_nonnull<arith::TruncFOp, arith::ExtFOp>(op) ||
      !matchPattern(op->getOperand(0), m_Constant(&attr)))
    return std::nullopt;
  auto type = dyn_cast<FloatType>(value.getType());
  if (!type)
    return std::nullopt;
  APFloat converted = attr.getValue();
  bool lost = false;
  converted.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &lost);
  return converted.convertToDouble();
}

DenseElementsAttr mlir::ttt::linalg_raise::denseConstantValue(Attribute value) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense;
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (!resource)
    return {};
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob)
    return {};
  ArrayRef<char> data = blob->getData();
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(resource.getType(), data, splat))
    return {};
  return DenseElementsAttr::getFromRawBuffer(resource.getType(), data);
}

Polynomial EinsumReader::leaf(Value value, ArrayRef<unsigned> labels) {
  Polynomial poly;
  poly.labels.assign(labels.begin(), labels.end());
  Term term;
  term.factors.push_back({value, SmallVector<unsigned>(labels)});
  poly.terms.push_back(std::move(term));
  return poly;
}

bool EinsumReader::isPartOf(unsigned label,
                            const llvm::DenseSet<unsigned> &merged) const {
  for (unsigned candidate : merged) {
    auto it = splits.find(candidate);
    if (it == splits.end())
      continue;
    SmallVector<unsigned> parts(it->second.parts);
    while (!parts.empty()) {
      unsigned part = parts.pop_back_val();
      if (part == label)
        return true;
      if (auto nested = splits.find(part); nested != splits.end())
        llvm::append_range(parts, nested->second.parts);
    }
  }
  return false;
}

/// Whether a label of merged dimensions and one of its parts meet in a term
/// (or the value's own labels): the two would then be read as independent
/// indices, which they are not.
bool EinsumReader::mixesMergedAndParts(const Polynomial &poly) const {
  auto mixes = [&](const llvm::SmallDenseSet<unsigned> &used) {
    for (unsigned label : used) {
      auto it = splits.find(label);
      if (it == splits.end())
        continue;
      SmallVector<unsigned> parts(it->second.parts);
      while (!parts.empty()) {
        unsigned part = parts.pop_back_val();
        if (used.contains(part))
          return true;
        if (auto nested = splits.find(part); nested != splits.end())
          llvm::append_range(parts, nested->second.parts);
      }
    }
    return false;
  };
  for (const Term &term : poly.terms) {
    llvm::SmallDenseSet<unsigned> used(poly.labels.begin(), poly.labels.end());
    for (const Factor &factor : term.factors)
      used.insert(factor.labels.begin(), factor.labels.end());
    if (mixes(used))
      return true;
  }
  return false;
}

std::optional<Polynomial> EinsumReader::read(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return std::nullopt;
  SmallVector<unsigned> labels;
  for (int64_t d = 0; d < type.getRank(); ++d)
    labels.push_back(freshLabel());
  std::optional<Polynomial> poly = readWithLabels(value, labels, 0);
  if (!poly || !mixesMergedAndParts(*poly))
    return poly;
  // Read again with merging reshapes as leaves: coarser, but sound.
  readMerges = false;
  unreadable.clear();
  poly = readWithLabels(value, labels, 0);
  readMerges = true;
  unreadable.clear();
  return poly;
}

std::optional<Polynomial>
EinsumReader::readWithLabels(Value value, ArrayRef<unsigned> labels,
                             unsigned depth) {
  // A dimension of size 1 has one index: its label sums nothing.
  if (auto type = dyn_cast<RankedTensorType>(value.getType()))
    for (auto [d, label] : llvm::enumerate(labels))
      if (type.getDimSize(d) == 1)
        unitLabels.insert(label);
  Operation *op = value.getDefiningOp();
  // A loop invariant that is a constant outside (a factor the exporter
  // computed, `1 / D`) is that constant in every chunk.
  if (auto arg = dyn_cast<BlockArgument>(value);
      arg && !stops.contains(value) && depth <= kMaxDepth)
    if (auto loop =
            dyn_cast_or_null<ChunkLoopOp>(arg.getOwner()->getParentOp());
        loop && arg.getOwner() == &loop.getBody().front() &&
        arg.getArgNumber() >=
            loop.getInits().size() + loop.getSequences().size()) {
      Value outside =
          loop.getInvariants()[arg.getArgNumber() - loop.getInits().size() -
                               loop.getSequences().size()];
      std::optional<Polynomial> poly =
          readWithLabels(outside, labels, depth + 1);
      if (poly && llvm::all_of(poly->terms, [](const Term &term) {
            return term.factors.empty();
          }))
        return poly;
    }
  if (stops.contains(value) || !op || depth > kMaxDepth)
    return leaf(value, labels);
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
    if (std::optional<Polynomial> poly = readReshape(op, labels, depth))
      return poly;
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    if (std::optional<double> constant = floatConstant(fill.value())) {
      Polynomial poly;
      poly.labels.assign(labels.begin(), labels.end());
      if (*constant != 0.0)
        poly.terms.push_back(Term{*constant, {}});
      return poly;
    }
    return leaf(value, labels);
  }
  // A splat constant tensor (an ONNX scalar factor) is a coefficient.
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    if (auto splat = dyn_cast<DenseFPElementsAttr>(constant.getValue());
        splat && splat.isSplat()) {
      Polynomial poly;
      poly.labels.assign(labels.begin(), labels.end());
      double value = splat.getSplatValue<APFloat>().convertToDouble();
      if (value != 0.0)
        poly.terms.push_back(Term{value, {}});
      return poly;
    }
  // A value found unreadable once (past the bounds, or not a sum of
  // products) is a leaf wherever the DAG reaches it again: reading it anew
  // at every use would be exponential in the depth of shared subterms.
  if (isa<linalg::LinalgOp>(op) && !unreadable.contains(value)) {
    if (std::optional<Polynomial> poly = readLinalg(op, labels, depth))
      return poly;
    unreadable.insert(value);
  }
  return leaf(value, labels);
}

/// A reshape that only adds or drops dimensions of size 1 (every group of
/// the reassociation has at most one dimension of another size) renames
/// dimensions: the source is read with the labels of the result's.
std::optional<Polynomial> EinsumReader::readReshape(Operation *op,
                                                    ArrayRef<unsigned> labels,
                                                    unsigned depth) {
  Value source = op->getOperand(0);
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  bool collapse = isa<tensor::CollapseShapeOp>(op);
  SmallVector<ReassociationIndices> groups =
      collapse ? cast<tensor::CollapseShapeOp>(op).getReassociationIndices()
               : cast<tensor::ExpandShapeOp>(op).getReassociationIndices();
  // The wide side's dims in a group, one of which carries the narrow side's
  // label; the others have size 1.
  RankedTensorType wide = collapse ? sourceType : resultType;
  SmallVector<unsigned> sourceLabels(sourceType.getRank(), ~0u);
  for (auto [narrow, group] : llvm::enumerate(groups)) {
    SmallVector<int64_t> sized;
    for (int64_t d : group)
      if (wide.getDimSize(d) != 1)
        sized.push_back(d);
    if (sized.size() > 1) {
      if (!readMerges)
        return std::nullopt;
      // Several dimensions merged into one (batch and heads as B*H): the
      // merged label stands for its parts, the same parts wherever it is
      // split, so that every factor carries the parts.
      SmallVector<int64_t> sizes;
      for (int64_t d : sized)
        sizes.push_back(wide.getDimSize(d));
      SmallVector<unsigned> parts;
      if (collapse) {
        auto it = splits.find(labels[narrow]);
        if (it != splits.end()) {
          if (it->second.sizes != sizes)
            return std::nullopt;
          parts = it->second.parts;
        } else {
          for (size_t i = 0; i < sized.size(); ++i)
            parts.push_back(freshLabel());
          splits[labels[narrow]] = {parts, sizes};
        }
        size_t next = 0;
        for (int64_t d : group) {
          if (wide.getDimSize(d) != 1) {
            sourceLabels[d] = parts[next++];
            continue;
          }
          sourceLabels[d] = freshLabel();
          unitLabels.insert(sourceLabels[d]);
        }
      } else {
        for (int64_t d : sized)
          parts.push_back(labels[d]);
        unsigned merged = freshLabel();
        splits[merged] = {parts, sizes};
        sourceLabels[narrow] = merged;
      }
      continue;
    }
    int64_t carrier = sized.empty() ? group.front() : sized.front();
    for (int64_t d : group) {
      if (collapse) {
        unsigned label = d == carrier ? labels[narrow] : freshLabel();
        if (d != carrier)
          unitLabels.insert(label);
        sourceLabels[d] = label;
      } else if (d == carrier) {
        sourceLabels[narrow] = labels[d];
      }
    }
  }
  std::optional<Polynomial> poly =
      readWithLabels(source, sourceLabels, depth + 1);
  if (!poly)
    return std::nullopt;
  poly->labels.assign(labels.begin(), labels.end());
  return poly;
}

/// Whether `predicate` is computed in its payload from the loop indices
/// and integer constants alone (comparisons and index arithmetic); `loops`
/// gets the loops it reads, in ascending order.
static bool indexPredicateLoops(Value predicate, SmallVector<int64_t> &loops) {
  SmallVector<Value> stack{predicate};
  llvm::SmallDenseSet<Value> seen;
  std::set<int64_t> found;
  while (!stack.empty()) {
    Value value = stack.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    Operation *op = value.getDefiningOp();
    if (!op)
      return false;
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      found.insert(index.getDim());
      continue;
    }
    if (isa<arith::ConstantOp>(op) && op->getResult(0).getType().isIntOrIndex())
      continue;
    if (!isa<arith::CmpIOp, arith::SubIOp, arith::AddIOp, arith::MulIOp,
             arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op))
      return false;
    llvm::append_range(stack, op->getOperands());
  }
  loops.assign(found.begin(), found.end());
  return !loops.empty();
}

/// The value of an index predicate's `value` with loop `loops[n]` at
/// `indices[n]`.
static std::optional<int64_t> evaluateIndexValue(Value value,
                                                 ArrayRef<int64_t> loops,
                                                 ArrayRef<int64_t> indices) {
  Operation *op = value.getDefiningOp();
  if (auto index = dyn_cast<linalg::IndexOp>(op))
    return indices[llvm::find(loops, static_cast<int64_t>(index.getDim())) -
                   loops.begin()];
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
      return integer.getValue().getSExtValue();
    return std::nullopt;
  }
  std::optional<int64_t> a =
      evaluateIndexValue(op->getOperand(0), loops, indices);
  std::optional<int64_t> b =
      evaluateIndexValue(op->getOperand(1), loops, indices);
  if (!a || !b)
    return std::nullopt;
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::eq:
      return *a == *b;
    case arith::CmpIPredicate::ne:
      return *a != *b;
    case arith::CmpIPredicate::slt:
      return *a < *b;
    case arith::CmpIPredicate::sle:
      return *a <= *b;
    case arith::CmpIPredicate::sgt:
      return *a > *b;
    case arith::CmpIPredicate::sge:
      return *a >= *b;
    default:
      return std::nullopt; // unsigned comparisons of signed differences
    }
  }
  if (isa<arith::SubIOp>(op))
    return *a - *b;
  if (isa<arith::AddIOp>(op))
    return *a + *b;
  if (isa<arith::MulIOp>(op))
    return *a * *b;
  if (isa<arith::AndIOp>(op))
    return *a & *b;
  if (isa<arith::OrIOp>(op))
    return *a | *b;
  if (isa<arith::XOrIOp>(op))
    return *a ^ *b;
  return std::nullopt;
}

std::optional<SmallVector<bool>>
mlir::ttt::linalg_raise::maskTable(Value predicate, int64_t size) {
  SmallVector<int64_t> loops;
  if (!predicate.getType().isInteger(1) ||
      !indexPredicateLoops(predicate, loops) || loops.size() != 2)
    return std::nullopt;
  SmallVector<bool> table;
  for (int64_t a = 0; a < size; ++a)
    for (int64_t b = 0; b < size; ++b) {
      std::optional<int64_t> value =
          evaluateIndexValue(predicate, loops, {a, b});
      if (!value)
        return std::nullopt;
      table.push_back(*value != 0);
    }
  return table;
}

/// Whether every result of `map` is a distinct loop or the constant 0 (a
/// dimension of size 1 read or written at its one index), however many
/// results it has.
static bool readsLoopsOrZero(AffineMap map) {
  llvm::SmallBitVector seen(map.getNumDims());
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (seen.test(dim.getPosition()))
        return false;
      seen.set(dim.getPosition());
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return false;
  }
  return true;
}

std::optional<Polynomial> EinsumReader::readLinalg(Operation *op,
                                                   ArrayRef<unsigned> labels,
                                                   unsigned depth) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (!linalgOp.hasPureTensorSemantics() || linalgOp.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !linalgOp.getBlock())
    return std::nullopt;
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  AffineMap outMap = linalgOp.getMatchingIndexingMap(init);
  if (!readsLoopsOrZero(outMap))
    return std::nullopt;
  // A label per loop: the result's labels on the loops the result has. A 0
  // in the result's map writes a dimension of size 1 (a sum kept as a unit
  // dimension), whose label is bound to no loop.
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<unsigned> loopLabels(linalgOp.getNumLoops(), ~0u);
  for (auto [position, expr] : llvm::enumerate(outMap.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      loopLabels[dim.getPosition()] = labels[position];
      continue;
    }
    if (resultType.getDimSize(position) != 1)
      return std::nullopt;
  }
  bool reduces = false;
  // The reduced loops and their sizes: a summed term that reads none of
  // them adds the same number that many times.
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  SmallVector<std::pair<unsigned, int64_t>> reducedLoops;
  for (auto [loop, label] : llvm::enumerate(loopLabels))
    if (label == ~0u) {
      label = freshLabel();
      reduces = true;
      reducedLoops.push_back({label, ranges[loop]});
    }

  PayloadAlgebra algebra(*this, loopLabels);
  Block *payload = linalgOp.getBlock();
  llvm::DenseMap<Value, SmallVector<Term>> scalars;
  for (OpOperand *input : linalgOp.getDpsInputOperands()) {
    BlockArgument arg = linalgOp.getMatchingBlockArgument(input);
    if (!isa<RankedTensorType>(input->get().getType())) {
      if (std::optional<double> constant = floatConstant(input->get()))
        scalars[arg] = {Term{*constant, {}}};
      else
        scalars[arg] = leaf(input->get(), {}).terms;
      continue;
    }
    AffineMap map = linalgOp.getMatchingIndexingMap(input);
    if (!readsLoopsOrZero(map))
      return std::nullopt;
    // A 0 in the map reads the one index of a dimension of size 1 (a
    // broadcast of it): a unit label of its own.
    auto operandType = cast<RankedTensorType>(input->get().getType());
    SmallVector<unsigned> operandLabels;
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        operandLabels.push_back(loopLabels[dim.getPosition()]);
        continue;
      }
      if (operandType.getDimSize(d) != 1)
        return std::nullopt;
      unsigned unit = freshLabel();
      unitLabels.insert(unit);
      operandLabels.push_back(unit);
    }
    std::optional<Polynomial> poly =
        readWithLabels(input->get(), operandLabels, depth + 1);
    if (!poly)
      return std::nullopt;
    scalars[arg] = std::move(poly->terms);
  }
  // The accumulator stands for itself until the payload is read.
  BlockArgument outArg = linalgOp.getMatchingBlockArgument(init);
  scalars[outArg] = {Term{1.0, {Factor{outArg, {}}}}};

  for (Operation &inner : payload->without_terminator()) {
    // The index arithmetic of a mask's predicate (read at its select).
    if (readMasks && inner.getNumResults() == 1 &&
        inner.getResult(0).getType().isIntOrIndex())
      continue;
    // A constant captured from outside the payload is a coefficient.
    auto operand = [&](unsigned i) -> const SmallVector<Term> * {
      Value value = inner.getOperand(i);
      auto it = scalars.find(value);
      if (it != scalars.end())
        return &it->second;
      if (std::optional<double> constant = floatConstant(value))
        return &(scalars[value] = {Term{*constant, {}}});
      return nullptr;
    };
    std::optional<SmallVector<Term>> result;
    if (auto constant = floatConstant(
            inner.getNumResults() == 1 ? inner.getResult(0) : Value())) {
      result = SmallVector<Term>{Term{*constant, {}}};
    } else if (isa<arith::MulFOp, arith::AddFOp, arith::SubFOp, arith::DivFOp>(
                   inner)) {
      const SmallVector<Term> *lhs = operand(0), *rhs = operand(1);
      if (!lhs || !rhs)
        return std::nullopt;
      if (isa<arith::MulFOp>(inner))
        result = algebra.product(*lhs, *rhs);
      else if (isa<arith::AddFOp>(inner))
        result = PayloadAlgebra::sum(*lhs, *rhs, 1.0);
      else if (isa<arith::SubFOp>(inner))
        result = PayloadAlgebra::sum(*lhs, *rhs, -1.0);
      else if (rhs->size() == 1 && rhs->front().factors.empty() &&
               rhs->front().coeff != 0.0)
        result = PayloadAlgebra::scaled(*lhs, 1.0 / rhs->front().coeff);
    } else if (isa<arith::NegFOp>(inner)) {
      if (const SmallVector<Term> *x = operand(0))
        result = PayloadAlgebra::scaled(*x, -1.0);
    } else if (auto select = dyn_cast<arith::SelectOp>(inner);
               select && readMasks) {
      const SmallVector<Term> *x = operand(1), *otherwise = operand(2);
      SmallVector<int64_t> loops;
      if (x && otherwise &&
          llvm::all_of(*otherwise,
                       [](const Term &t) { return t.coeff == 0.0; }) &&
          indexPredicateLoops(select.getCondition(), loops)) {
        Factor mask{select.getCondition(), {}};
        for (int64_t loop : loops)
          mask.labels.push_back(loopLabels[loop]);
        result = algebra.product(*x, {Term{1.0, {mask}}});
      }
    }
    if (!result)
      return std::nullopt;
    // `x + 0`, `0 * x`: a term with a zero coefficient is no term.
    llvm::erase_if(*result, [](const Term &term) { return term.coeff == 0.0; });
    scalars[inner.getResult(0)] = std::move(*result);
  }
  auto yielded = scalars.find(payload->getTerminator()->getOperand(0));
  if (yielded == scalars.end())
    return std::nullopt;

  // Put the accumulator's value in. Over reduced loops the payload must be
  // `out + f(ins)`: anything else is not a sum.
  Polynomial poly;
  poly.labels.assign(labels.begin(), labels.end());
  std::optional<Polynomial> initPoly;
  if (reduces && llvm::count_if(yielded->second, [&](const Term &term) {
                   return !term.factorsOf(outArg).empty();
                 }) != 1)
    return std::nullopt;
  for (const Term &term : yielded->second) {
    SmallVector<const Factor *> outs = term.factorsOf(outArg);
    if (outs.empty()) {
      Term summed = term;
      llvm::DenseSet<unsigned> used;
      for (const Factor &factor : term.factors)
        used.insert(factor.labels.begin(), factor.labels.end());
      for (auto [label, size] : reducedLoops) {
        if (used.contains(label) || isPartOf(label, used))
          continue;
        if (ShapedType::isDynamic(size))
          return std::nullopt;
        summed.coeff *= static_cast<double>(size);
      }
      poly.terms.push_back(std::move(summed));
      continue;
    }
    if (reduces &&
        (outs.size() != 1 || term.factors.size() != 1 || term.coeff != 1.0))
      return std::nullopt;
    if (!initPoly) {
      initPoly = readWithLabels(init->get(), labels, depth + 1);
      if (!initPoly)
        return std::nullopt;
    }
    SmallVector<Term> partial{Term{term.coeff, {}}};
    for (const Factor &factor : term.factors) {
      std::optional<SmallVector<Term>> next =
          factor.leaf == outArg
              ? algebra.product(partial, initPoly->terms)
              : algebra.product(partial, {Term{1.0, {factor}}});
      if (!next)
        return std::nullopt;
      partial = std::move(*next);
    }
    llvm::append_range(poly.terms, partial);
  }
  if (poly.terms.size() > kMaxTerms)
    return std::nullopt;
  return poly;
}

std::optional<Polynomial> EinsumReader::substitute(const Polynomial &poly,
                                                   Value leaf,
                                                   const Polynomial &value) {
  Polynomial result;
  result.labels = poly.labels;
  for (const Term &term : poly.terms) {
    SmallVector<Term> expanded{Term{term.coeff, {}}};
    for (const Factor &factor : term.factors) {
      SmallVector<Term> next;
      if (factor.leaf != leaf) {
        for (Term partial : expanded) {
          partial.factors.push_back(factor);
          next.push_back(std::move(partial));
        }
      } else {
        // `value`'s labels become this factor's; its sums get fresh labels.
        for (const Term &part : value.terms) {
          llvm::DenseMap<unsigned, unsigned> rename;
          for (auto [from, to] : llvm::zip_equal(value.labels, factor.labels))
            rename[from] = to;
          Term renamed = part;
          for (Factor &inner : renamed.factors)
            for (unsigned &label : inner.labels) {
              auto [it, inserted] = rename.try_emplace(label, 0);
              if (inserted)
                it->second = freshLabelLike(label);
              label = it->second;
            }
          for (const Term &partial : expanded) {
            Term product = partial;
            product.coeff *= renamed.coeff;
            llvm::append_range(product.factors, renamed.factors);
            next.push_back(std::move(product));
          }
        }
      }
      if (next.size() > kMaxTerms)
        return std::nullopt;
      expanded = std::move(next);
    }
    llvm::append_range(result.terms, expanded);
    if (result.terms.size() > kMaxTerms)
      return std::nullopt;
  }
  return result;
}

namespace {

/// Matches the factors of two terms one to one, with a consistent renaming
/// of labels, by backtracking (terms have a handful of factors).
class TermMatcher {
public:
  TermMatcher(const Term &a, const Term &b, SameLeaf sameLeaf,
              llvm::DenseMap<unsigned, unsigned> labels)
      : a(a), b(b), sameLeaf(sameLeaf), used(b.factors.size(), false) {
    forward = std::move(labels);
    for (auto [from, to] : forward)
      backward[to] = from;
  }

  bool match(size_t index = 0) {
    if (index == a.factors.size())
      return true;
    const Factor &fa = a.factors[index];
    for (auto [j, fb] : llvm::enumerate(b.factors)) {
      if (used[j] || fa.labels.size() != fb.labels.size() ||
          !sameLeaf(fa.leaf, fb.leaf))
        continue;
      auto savedForward = forward;
      auto savedBackward = backward;
      bool consistent = true;
      for (auto [la, lb] : llvm::zip_equal(fa.labels, fb.labels)) {
        auto f = forward.find(la);
        auto g = backward.find(lb);
        if ((f != forward.end() && f->second != lb) ||
            (g != backward.end() && g->second != la)) {
          consistent = false;
          break;
        }
        forward[la] = lb;
        backward[lb] = la;
      }
      if (consistent) {
        used[j] = true;
        if (match(index + 1))
          return true;
        used[j] = false;
      }
      forward = std::move(savedForward);
      backward = std::move(savedBackward);
    }
    return false;
  }

private:
  const Term &a, &b;
  SameLeaf sameLeaf;
  SmallVector<bool> used;
  llvm::DenseMap<unsigned, unsigned> forward, backward;
};

bool sameCoefficient(double x, double y, double rtol) {
  return std::abs(x - y) <= rtol * std::max(std::abs(x), std::abs(y));
}

} // namespace

bool mlir::ttt::linalg_raise::equivalent(const Polynomial &a,
                                         const Polynomial &b, SameLeaf sameLeaf,
                                         double rtol) {
  if (a.labels.size() != b.labels.size() || a.terms.size() != b.terms.size())
    return false;
  llvm::DenseMap<unsigned, unsigned> free;
  for (auto [la, lb] : llvm::zip_equal(a.labels, b.labels))
    free[la] = lb;
  SmallVector<bool> used(b.terms.size(), false);
  for (const Term &ta : a.terms) {
    bool found = false;
    for (auto [j, tb] : llvm::enumerate(b.terms)) {
      if (used[j] || ta.factors.size() != tb.factors.size() ||
          !sameCoefficient(ta.coeff, tb.coeff, rtol))
        continue;
      if (TermMatcher(ta, tb, sameLeaf, free).match()) {
        used[j] = found = true;
        break;
      }
    }
    if (!found)
      return false;
  }
  return true;
}

bool mlir::ttt::linalg_raise::isZeroTensor(Value value) {
  std::optional<Polynomial> poly = EinsumReader().read(value);
  if (poly && poly->terms.empty())
    return true;
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  DenseElementsAttr elements = denseConstantValue(attr);
  return elements && isa<FloatType>(elements.getElementType()) &&
         llvm::all_of(elements.getValues<APFloat>(),
                      [](const APFloat &x) { return x.isZero(); });
}
