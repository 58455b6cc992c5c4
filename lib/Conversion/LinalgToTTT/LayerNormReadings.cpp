//===- LayerNormReadings.cpp - LayerNorm read off linalg ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LayerNormReadings.h"
#include "EinsumPolynomial.h"
#include "ElementwiseReadings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

/// Whether `a` is `1/d` as a program writes it: rounded to float32 where
/// it takes the reciprocal as a constant (1/3 is 0.333333343).
static bool isReciprocal(double a, int64_t d) {
  return d > 0 &&
         std::abs(a * static_cast<double>(d) - 1.0) <= kFloat32Rounding;
}

/// The one position where a factor's labels leave the value's: the axis a
/// sum runs over, its label summed; nullopt if there is not exactly one.
static std::optional<unsigned> summedAxis(const Factor &factor,
                                          ArrayRef<unsigned> labels) {
  if (factor.labels.size() != labels.size())
    return std::nullopt;
  std::optional<unsigned> axis;
  for (auto [d, label] : llvm::enumerate(factor.labels)) {
    if (label == labels[d])
      continue;
    if (axis || llvm::is_contained(labels, label))
      return std::nullopt;
    axis = d;
  }
  return axis;
}

std::optional<Centered> linalg_raise::readCentered(Value value) {
  linalg::GenericOp generic = parallelGeneric(value, 2);
  if (!generic)
    return std::nullopt;
  auto sub = yielded(generic).getDefiningOp<arith::SubFOp>();
  Block &payload = generic.getRegion().front();
  if (!sub || sub.getLhs() != payload.getArgument(0) ||
      sub.getRhs() != payload.getArgument(1))
    return std::nullopt;
  Value x = generic.getDpsInputs()[0];
  if (x.getType() != value.getType())
    return std::nullopt;
  EinsumReader reader(llvm::DenseSet<Value>{x});
  std::optional<Polynomial> poly = reader.read(value);
  if (!poly || poly->terms.size() != 2)
    return std::nullopt;
  std::optional<unsigned> axis;
  bool itself = false;
  for (const Term &term : poly->terms) {
    if (term.factors.size() != 1 || term.factors[0].leaf != x)
      return std::nullopt;
    if (term.coeff == 1.0 && ArrayRef<unsigned>(term.factors[0].labels) ==
                                 ArrayRef<unsigned>(poly->labels)) {
      itself = true;
      continue;
    }
    axis = summedAxis(term.factors[0], poly->labels);
    if (!axis || !isReciprocal(-term.coeff,
                               cast<ShapedType>(x.getType()).getDimSize(*axis)))
      return std::nullopt;
  }
  if (!itself || !axis)
    return std::nullopt;
  return Centered{x, *axis};
}

std::optional<double> linalg_raise::readStdDev(Value stddev,
                                               const Centered &centered) {
  linalg::GenericOp sqrt = parallelGeneric(stddev, 1);
  if (!sqrt || !readsInPlace(sqrt, 0))
    return std::nullopt;
  auto root = yielded(sqrt).getDefiningOp<math::SqrtOp>();
  if (!root)
    return std::nullopt;
  double eps = 0.0;
  Value radicand = root.getOperand();
  // `sqrt(v + eps)` in one payload.
  if (auto add = radicand.getDefiningOp<arith::AddFOp>()) {
    std::optional<double> constant = floatConstant(add.getRhs());
    if (!constant)
      return std::nullopt;
    eps = *constant;
    radicand = add.getLhs();
  }
  if (radicand != sqrt.getRegion().front().getArgument(0))
    return std::nullopt;
  Value variance = sqrt.getDpsInputs()[0];
  // The centrings of x it squares, wherever they were computed.
  llvm::DenseSet<Value> centrings;
  SmallVector<std::pair<Value, unsigned>> stack{{variance, 0}};
  llvm::DenseSet<Value> seen;
  while (!stack.empty()) {
    auto [value, depth] = stack.pop_back_val();
    if (!seen.insert(value).second || depth > 8)
      continue;
    if (std::optional<Centered> c = readCentered(value);
        c && c->x == centered.x && c->axis == centered.axis) {
      centrings.insert(value);
      continue;
    }
    if (Operation *op = value.getDefiningOp())
      for (Value operand : op->getOperands())
        stack.push_back({operand, depth + 1});
  }
  if (centrings.empty())
    return std::nullopt;
  EinsumReader reader(std::move(centrings));
  std::optional<Polynomial> poly = reader.read(variance);
  auto type = cast<ShapedType>(variance.getType());
  if (!poly || type.getRank() <= centered.axis ||
      type.getDimSize(centered.axis) != 1)
    return std::nullopt;
  int64_t size =
      cast<ShapedType>(centered.x.getType()).getDimSize(centered.axis);
  bool squares = false;
  for (const Term &term : poly->terms) {
    if (term.factors.empty()) {
      eps += term.coeff;
      continue;
    }
    if (squares || term.factors.size() != 2 ||
        !isReciprocal(term.coeff, size) ||
        term.factors[0].labels != term.factors[1].labels)
      return std::nullopt;
    // Both factors summed over the axis, the value's other labels kept.
    std::optional<unsigned> axis = summedAxis(term.factors[0], poly->labels);
    if (!axis || *axis != centered.axis)
      return std::nullopt;
    squares = true;
  }
  if (!squares || !(eps > 0.0))
    return std::nullopt;
  return eps;
}

bool linalg_raise::dividesRows(linalg::GenericOp generic, unsigned axis) {
  if (generic.getNumDpsInputs() != 2 || !readsInPlace(generic, 0))
    return false;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (maps[1].getNumResults() != maps[0].getNumResults() ||
      axis >= maps[0].getNumResults())
    return false;
  for (auto [d, expr] : llvm::enumerate(maps[1].getResults())) {
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    bool broadcast = constant && constant.getValue() == 0;
    if (d == axis ? !broadcast : expr != maps[0].getResult(d))
      return false;
  }
  return true;
}

std::optional<Normalized> linalg_raise::readNormalized(Value value) {
  linalg::GenericOp generic = parallelGeneric(value, 2);
  if (!generic || !readsInPlace(generic, 0))
    return std::nullopt;
  auto div = yielded(generic).getDefiningOp<arith::DivFOp>();
  Block &payload = generic.getRegion().front();
  if (!div || div.getLhs() != payload.getArgument(0) ||
      div.getRhs() != payload.getArgument(1))
    return std::nullopt;
  std::optional<Centered> centered = readCentered(generic.getDpsInputs()[0]);
  if (!centered)
    return std::nullopt;
  if (!dividesRows(generic, centered->axis))
    return std::nullopt;
  Value stddev = generic.getDpsInputs()[1];
  std::optional<double> eps = readStdDev(stddev, *centered);
  if (!eps)
    return std::nullopt;
  return Normalized{centered->x, centered->axis, *eps, stddev};
}
