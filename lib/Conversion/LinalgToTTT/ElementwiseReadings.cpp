//===- ElementwiseReadings.cpp - pieces of a fast-weight step -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ElementwiseReadings.h"
#include "ChunkLoopForms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

bool linalg_raise::isConstantOne(Value value) {
  FloatAttr attr;
  return matchPattern(value, m_Constant(&attr)) &&
         attr.getValueAsDouble() == 1.0;
}

std::optional<double> linalg_raise::splatConstant(Value value) {
  if (std::optional<double> scalar = floatConstant(value))
    return scalar;
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  if (!attr.isSplat() && attr.getNumElements() != 1)
    return std::nullopt;
  return (*attr.getValues<APFloat>().begin()).convertToDouble();
}

linalg::GenericOp linalg_raise::parallelGeneric(Value value,
                                                unsigned numInputs) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != numInputs ||
      generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0)
    return nullptr;
  return generic;
}

bool linalg_raise::readsInPlace(linalg::GenericOp generic, unsigned i) {
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (maps[i] != maps.back())
    return false;
  auto type = cast<ShapedType>(generic.getDpsInits()[0].getType());
  llvm::SmallBitVector seen(maps[i].getNumDims());
  for (auto [d, expr] : llvm::enumerate(maps[i].getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (seen.test(dim.getPosition()))
        return false;
      seen.set(dim.getPosition());
      continue;
    }
    auto zero = dyn_cast<AffineConstantExpr>(expr);
    if (!zero || zero.getValue() != 0 || type.getDimSize(d) != 1)
      return false;
  }
  return seen.all();
}

Value linalg_raise::yielded(linalg::GenericOp generic) {
  return cast<linalg::YieldOp>(generic.getRegion().front().getTerminator())
      .getOperand(0);
}

Value linalg_raise::sigmoidInput(Value value) {
  linalg::GenericOp generic = parallelGeneric(value, 1);
  if (!generic || !readsInPlace(generic, 0))
    return {};
  auto div = yielded(generic).getDefiningOp<arith::DivFOp>();
  if (!div || !isConstantOne(div.getLhs()))
    return {};
  auto add = div.getRhs().getDefiningOp<arith::AddFOp>();
  if (!add)
    return {};
  Value exp = isConstantOne(add.getRhs())   ? add.getLhs()
              : isConstantOne(add.getLhs()) ? add.getRhs()
                                            : Value();
  auto expOp = exp ? exp.getDefiningOp<math::ExpOp>() : nullptr;
  auto neg =
      expOp ? expOp.getOperand().getDefiningOp<arith::NegFOp>() : nullptr;
  if (!neg || neg.getOperand() != generic.getRegion().front().getArgument(0))
    return {};
  return generic.getDpsInputs()[0];
}

Value linalg_raise::throughReshapes(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      break;
    value = op->getOperand(0);
  }
  return value;
}

std::optional<ColumnNorms> linalg_raise::readColumnNorms(Value norms, Value x) {
  linalg::GenericOp sqrt = parallelGeneric(throughReshapes(norms), 1);
  if (!sqrt || !readsInPlace(sqrt, 0) ||
      !yielded(sqrt).getDefiningOp<math::SqrtOp>() ||
      yielded(sqrt).getDefiningOp<math::SqrtOp>().getOperand() !=
          sqrt.getRegion().front().getArgument(0))
    return std::nullopt;
  Value squares = sqrt.getDpsInputs()[0];
  EinsumReader reader({x});
  std::optional<Polynomial> sum = reader.read(squares);
  if (!sum || sum->terms.size() != 1 || sum->terms[0].coeff != 1.0 ||
      sum->terms[0].factors.size() != 2)
    return std::nullopt;
  const Factor &a = sum->terms[0].factors[0], &b = sum->terms[0].factors[1];
  if (a.leaf != x || b.leaf != x ||
      ArrayRef<unsigned>(a.labels) != ArrayRef<unsigned>(b.labels))
    return std::nullopt;
  ColumnNorms reading;
  std::optional<unsigned> axis;
  for (auto [position, label] : llvm::enumerate(a.labels)) {
    if (llvm::is_contained(sum->labels, label))
      continue;
    if (axis)
      return std::nullopt;
    axis = position;
  }
  if (!axis)
    return std::nullopt;
  // A label of the sum that x lacks is a unit dimension a reshape added
  // (`keepdim` spelled as an expand_shape).
  for (unsigned label : sum->labels) {
    if (const unsigned *at = llvm::find(a.labels, label); at != a.labels.end())
      reading.kept.push_back(at - a.labels.begin());
    else if (!reader.isUnit(label))
      return std::nullopt;
  }
  reading.axis = *axis;
  return reading;
}

std::optional<ColumnNormDivision>
linalg_raise::readColumnNormDivision(Value divided) {
  linalg::GenericOp generic = parallelGeneric(divided, 2);
  if (!generic || !readsInPlace(generic, 0))
    return std::nullopt;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  Block &body = generic.getRegion().front();
  auto div = yielded(generic).getDefiningOp<arith::DivFOp>();
  if (!div || div.getLhs() != body.getArgument(0) ||
      div.getRhs() != body.getArgument(1))
    return std::nullopt;
  ColumnNormDivision reading;
  reading.x = generic.getDpsInputs()[0];
  Value divisor = generic.getDpsInputs()[1];
  // divisor = sqrt(s) + eps, s = sum of squares; eps an operand or a
  // constant of the payload.
  Value root;
  if (linalg::GenericOp shift = parallelGeneric(divisor, 2)) {
    if (!yielded(shift).getDefiningOp<arith::AddFOp>())
      return std::nullopt;
    for (unsigned i = 0; i < 2; ++i)
      if (std::optional<double> eps = splatConstant(shift.getDpsInputs()[i])) {
        reading.eps = *eps;
        root = shift.getDpsInputs()[1 - i];
      }
    if (!root || !readsInPlace(shift, root == shift.getDpsInputs()[0] ? 0 : 1))
      return std::nullopt;
  } else if (linalg::GenericOp shift = parallelGeneric(divisor, 1)) {
    auto add = yielded(shift).getDefiningOp<arith::AddFOp>();
    Value arg = shift.getRegion().front().getArgument(0);
    if (!add || !readsInPlace(shift, 0))
      return std::nullopt;
    std::optional<double> eps =
        add.getLhs() == arg   ? floatConstant(add.getRhs())
        : add.getRhs() == arg ? floatConstant(add.getLhs())
                              : std::nullopt;
    if (!eps)
      return std::nullopt;
    reading.eps = *eps;
    root = shift.getDpsInputs()[0];
  } else {
    return std::nullopt;
  }
  std::optional<ColumnNorms> norms = readColumnNorms(root, reading.x);
  if (!norms)
    return std::nullopt;
  // The divisor's dimensions of more than one element read those of x that
  // the sum keeps, in order (x's dimension d is the loop's maps[0](d)).
  auto divisorType = cast<RankedTensorType>(divisor.getType());
  SmallVector<int64_t> read;
  for (auto [d, expr] : llvm::enumerate(maps[1].getResults())) {
    if (divisorType.getDimSize(d) == 1)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    std::optional<unsigned> xDim =
        dim ? maps[0].getResultPosition(dim) : std::nullopt;
    if (!xDim)
      return std::nullopt;
    read.push_back(*xDim);
  }
  SmallVector<int64_t> keptNonUnit;
  auto xType = cast<RankedTensorType>(reading.x.getType());
  for (int64_t d : norms->kept)
    if (xType.getDimSize(d) != 1)
      keptNonUnit.push_back(d);
  if (read != keptNonUnit)
    return std::nullopt;
  reading.axis = norms->axis;
  return reading;
}

bool linalg_raise::holdsColumnNorms(Value target, ArrayRef<unsigned> labels,
                                    Value weight,
                                    ArrayRef<unsigned> weightLabels,
                                    unsigned axis) {
  auto type = cast<RankedTensorType>(weight.getType());
  auto targetType = cast<RankedTensorType>(target.getType());
  // The target's non-unit dimensions are the weight's but the axis, in
  // order.
  SmallVector<unsigned> expected, got;
  for (auto [d, label] : llvm::enumerate(weightLabels))
    if (d != axis && type.getDimSize(d) != 1)
      expected.push_back(label);
  for (auto [d, label] : llvm::enumerate(labels))
    if (targetType.getDimSize(d) != 1)
      got.push_back(label);
  if (expected != got)
    return false;
  // Computed from the weight itself (a model whose initial weights are
  // tiled per batch at run time takes their norms there too): the same
  // axis, and the dimensions it keeps in the weight's order, since a
  // reshape keeps the elements' order.
  if (std::optional<ColumnNorms> computed = readColumnNorms(target, weight)) {
    SmallVector<int64_t> keptNonUnit, wanted;
    for (int64_t d : computed->kept)
      if (type.getDimSize(d) != 1)
        keptNonUnit.push_back(d);
    for (int64_t d = 0, e = type.getRank(); d < e; ++d)
      if (d != axis && type.getDimSize(d) != 1)
        wanted.push_back(d);
    return computed->axis == axis && keptNonUnit == wanted;
  }
  // A reshape keeps the elements' order: the values are the constant's,
  // the dimensions the target's.
  Attribute normsAttr, valuesAttr;
  if (!matchPattern(throughReshapes(target), m_Constant(&normsAttr)) ||
      !matchPattern(throughReshapes(weight), m_Constant(&valuesAttr)))
    return false;
  DenseElementsAttr norms = denseConstantValue(normsAttr),
                    values = denseConstantValue(valuesAttr);
  if (!norms || !values || !isa<FloatType>(norms.getElementType()) ||
      !isa<FloatType>(values.getElementType()))
    return false;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < type.getRank(); ++d)
    inner *= shape[d];
  int64_t length = shape[axis];
  int64_t outer = type.getNumElements() / (inner * length);
  SmallVector<double> flat;
  for (const APFloat &value : values.getValues<APFloat>())
    flat.push_back(value.convertToDouble());
  SmallVector<double> wanted;
  for (const APFloat &value : norms.getValues<APFloat>())
    wanted.push_back(value.convertToDouble());
  if (norms.isSplat())
    wanted.assign(outer * inner, wanted.front());
  if (static_cast<int64_t>(wanted.size()) != outer * inner)
    return false;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0.0;
      for (int64_t j = 0; j < length; ++j) {
        double x = flat[(o * length + j) * inner + i];
        sum += x * x;
      }
      double norm = std::sqrt(sum), have = wanted[o * inner + i];
      if (std::abs(norm - have) > 1e-4 * std::max(1.0, norm))
        return false;
    }
  return true;
}

RoleTerm &linalg_raise::RoleTerm::add(
    Value leaf, ArrayRef<unsigned> roles,
    std::initializer_list<std::pair<unsigned, unsigned>> rename) {
  Factor factor{leaf, {}};
  for (unsigned role : roles) {
    unsigned label = role;
    for (auto [from, to] : rename)
      if (role == from)
        label = to;
    if (role >= kUnit)
      label = fresh++;
    factor.labels.push_back(label);
  }
  term.factors.push_back(std::move(factor));
  return *this;
}

FailureOr<KeysGate> linalg_raise::readKeysGate(
    ChunkLoopOp loop, EinsumReader &reader, const Polynomial &gradient,
    unsigned gate, ArrayRef<unsigned> gateRoles, unsigned numStreams,
    StringRef notBound, StringRef gateName, std::string &why) {
  auto fail = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  if (gradient.terms.size() != 1)
    return fail(notBound);
  const Term &term = gradient.terms[0];
  const Factor *sigma = nullptr;
  for (const Factor &factor : term.factors)
    if (sigmoidInput(factor.leaf))
      sigma = &factor;
  if (!sigma)
    return fail(notBound);
  KeysGate found;
  found.sigmoid = sigma->leaf;
  std::optional<Polynomial> product = reader.read(sigmoidInput(sigma->leaf));
  if (!product || product->terms.size() != 1 ||
      product->terms[0].coeff != 1.0 || product->terms[0].factors.size() != 2)
    return fail(notBound);
  const Factor *weight = nullptr, *keys = nullptr;
  for (const Factor &factor : product->terms[0].factors) {
    if (factor.leaf == loop.getStateArgs()[gate])
      weight = &factor;
    else if (windowIndex(loop, factor.leaf))
      keys = &factor;
  }
  if (!weight || !keys)
    return fail("the keys' sigmoid does not read the keys times " + gateName +
                " as it was before the update");
  llvm::DenseMap<unsigned, unsigned> roles;
  for (auto [label, role] : llvm::zip_equal(weight->labels, gateRoles))
    roles[label] = role;
  found.keys.sequence = *windowIndex(loop, keys->leaf);
  for (unsigned label : keys->labels) {
    auto [it, inserted] = roles.try_emplace(label, kTime);
    found.keys.roles.push_back(it->second);
  }
  ArrayRef<unsigned> keyRoles = found.keys.roles;
  if (llvm::count(keyRoles, kTime) != 1 || llvm::count(keyRoles, kIn) != 1 ||
      llvm::count(keyRoles, kOut) != 0 || llvm::count(keyRoles, kHidden) != 0 ||
      (!loop.isSingleChunk() &&
       keyRoles[loop.getWindowAxes()[found.keys.sequence]] != kTime) ||
      keyRoles.size() != numStreams + 2)
    return fail("the keys' dimensions are not streams, time and features");
  for (unsigned label : product->labels) {
    auto it = roles.find(label);
    if (it == roles.end())
      return fail(notBound);
    found.sigmoidRoles.push_back(it->second);
  }
  return found;
}

bool linalg_raise::sameUpToSigmoids(EinsumReader &reader, Value a, Value b) {
  if (a == b)
    return true;
  Value x = sigmoidInput(a), y = sigmoidInput(b);
  if (!x || !y)
    return false;
  std::optional<Polynomial> px = reader.read(x), py = reader.read(y);
  return px && py && equivalent(*px, *py, [&](Value l, Value r) {
           return sameUpToSigmoids(reader, l, r);
         });
}
