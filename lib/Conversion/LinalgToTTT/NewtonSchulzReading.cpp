//===- NewtonSchulzReading.cpp - Muon's orthogonalization, read ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "NewtonSchulzReading.h"
#include "EinsumPolynomial.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

#include <array>

using namespace mlir;
using namespace mlir::ttt::linalg_raise;

namespace {

/// How far back from a step's result its input is looked for.
constexpr unsigned kSearchDepth = 8;
/// More steps than any Muon variant runs.
constexpr int64_t kMaxSteps = 16;

/// `poly` without its labels of size-1 dimensions, which index nothing.
Polynomial withoutUnits(const Polynomial &poly, const EinsumReader &reader) {
  auto real = [&](ArrayRef<unsigned> labels) {
    SmallVector<unsigned> kept;
    for (unsigned label : labels)
      if (!reader.isUnit(label))
        kept.push_back(label);
    return kept;
  };
  Polynomial result;
  result.labels = real(poly.labels);
  for (const Term &term : poly.terms) {
    Term copy{term.coeff, {}};
    for (const Factor &factor : term.factors)
      copy.factors.push_back({factor.leaf, real(factor.labels)});
    result.terms.push_back(std::move(copy));
  }
  return result;
}

/// The values `value` is computed from, up to `depth` ops back, nearest
/// first.
SmallVector<Value> readsOf(Value value, unsigned depth) {
  llvm::SetVector<Value> seen;
  SmallVector<Value> frontier{value};
  for (unsigned level = 0; level < depth && !frontier.empty(); ++level) {
    SmallVector<Value> next;
    for (Value v : frontier)
      if (Operation *op = v.getDefiningOp())
        for (Value operand : op->getOperands())
          if (operand != value && seen.insert(operand))
            next.push_back(operand);
    frontier = std::move(next);
  }
  return SmallVector<Value>(seen.begin(), seen.end());
}

/// The value a reshape chain (collapse, expand) starts from.
Value throughReshapes(Value value) {
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  return value;
}

/// The one payload op of an all-parallel generic of one result, or null.
Operation *payloadOp(linalg::GenericOp generic) {
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return nullptr;
  Block &body = generic.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(0);
  return yielded.getDefiningOp();
}

/// The input a generic reads for payload argument `arg`, or null.
Value inputFor(linalg::GenericOp generic, Value arg) {
  auto blockArg = dyn_cast<BlockArgument>(arg);
  if (!blockArg || blockArg.getOwner() != &generic.getRegion().front() ||
      blockArg.getArgNumber() >= generic.getNumDpsInputs())
    return {};
  return generic.getDpsInputs()[blockArg.getArgNumber()];
}

/// A scalar the payload reads: a constant in it, or a splat constant input.
std::optional<double> payloadScalar(linalg::GenericOp generic, Value value) {
  if (std::optional<double> constant = floatConstant(value))
    return constant;
  Value input = inputFor(generic, value);
  auto constant = input ? input.getDefiningOp<arith::ConstantOp>() : nullptr;
  auto splat =
      constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue()) : nullptr;
  if (!splat || !splat.isSplat())
    return std::nullopt;
  return splat.getSplatValue<APFloat>().convertToDouble();
}

/// `x / (|x|_F + eps)` per stream: x and eps.
std::optional<std::pair<Value, double>> readNormalized(Value value) {
  auto divide = value.getDefiningOp<linalg::GenericOp>();
  auto div = dyn_cast_or_null<arith::DivFOp>(payloadOp(divide));
  if (!div || divide.getNumDpsInputs() != 2)
    return std::nullopt;
  Value x = inputFor(divide, div.getLhs());
  Value norm = inputFor(divide, div.getRhs());
  if (!x || !norm ||
      !divide.getMatchingIndexingMap(divide.getDpsInputOperand(0))
           .isIdentity() ||
      x.getType() != value.getType())
    return std::nullopt;
  // norm + eps
  auto shift = throughReshapes(norm).getDefiningOp<linalg::GenericOp>();
  auto add = dyn_cast_or_null<arith::AddFOp>(payloadOp(shift));
  if (!add)
    return std::nullopt;
  std::optional<double> eps;
  Value root;
  for (auto [mine, other] : {std::pair(add.getLhs(), add.getRhs()),
                             std::pair(add.getRhs(), add.getLhs())})
    if (Value input = inputFor(shift, mine);
        input && !payloadScalar(shift, mine)) {
      root = input;
      eps = payloadScalar(shift, other);
    }
  if (!root || !eps)
    return std::nullopt;
  // sqrt(sum x^2) over the matrix dims.
  auto sqrtOp = throughReshapes(root).getDefiningOp<linalg::GenericOp>();
  auto sqrt = dyn_cast_or_null<math::SqrtOp>(payloadOp(sqrtOp));
  Value squares = sqrt ? inputFor(sqrtOp, sqrt.getOperand()) : Value();
  if (!squares)
    return std::nullopt;
  EinsumReader reader({x});
  std::optional<Polynomial> read = reader.read(squares);
  if (!read)
    return std::nullopt;
  Polynomial poly = withoutUnits(*read, reader);
  if (poly.terms.size() != 1 || poly.terms[0].coeff != 1.0 ||
      poly.terms[0].factors.size() != 2)
    return std::nullopt;
  const Factor &first = poly.terms[0].factors[0];
  const Factor &second = poly.terms[0].factors[1];
  if (first.leaf != x || second.leaf != x || first.labels != second.labels ||
      first.labels.size() != poly.labels.size() + 2 ||
      ArrayRef<unsigned>(first.labels).drop_back(2) !=
          ArrayRef<unsigned>(poly.labels) ||
      llvm::is_contained(poly.labels, first.labels.end()[-1]) ||
      llvm::is_contained(poly.labels, first.labels.end()[-2]))
    return std::nullopt;
  return std::make_pair(x, *eps);
}

/// `a X + b (X X^T) X + c (X X^T)^2 X` with X `prev`, over `labels`
/// (streams, then the matrix's rows and columns).
Polynomial stepPolynomial(EinsumReader &reader, Value prev,
                          ArrayRef<unsigned> labels,
                          const std::array<double, 3> &abc) {
  ArrayRef<unsigned> streams = labels.drop_back(2);
  unsigned i = labels.end()[-2], j = labels.end()[-1];
  auto x = [&](unsigned row, unsigned column) {
    SmallVector<unsigned> factorLabels(streams);
    factorLabels.append({row, column});
    return Factor{prev, factorLabels};
  };
  unsigned k = reader.freshLabel(), l = reader.freshLabel(),
           m = reader.freshLabel(), n = reader.freshLabel();
  Polynomial poly;
  poly.labels.assign(labels.begin(), labels.end());
  if (abc[0] != 0.0)
    poly.terms.push_back(Term{abc[0], {x(i, j)}});
  if (abc[1] != 0.0)
    poly.terms.push_back(Term{abc[1], {x(i, k), x(l, k), x(l, j)}});
  if (abc[2] != 0.0)
    poly.terms.push_back(
        Term{abc[2], {x(i, k), x(l, k), x(l, m), x(n, m), x(n, j)}});
  return poly;
}

/// (a, b, c) if `next` is one Newton-Schulz step of `prev`.
std::optional<std::array<double, 3>> readStep(Value next, Value prev) {
  EinsumReader reader({prev});
  std::optional<Polynomial> read = reader.read(next);
  if (!read)
    return std::nullopt;
  Polynomial poly = withoutUnits(*read, reader);
  if (poly.labels.size() < 2)
    return std::nullopt;
  std::array<double, 3> abc = {0.0, 0.0, 0.0};
  std::array<bool, 3> seen = {false, false, false};
  for (const Term &term : poly.terms) {
    size_t degree = term.factors.size();
    if (degree != 1 && degree != 3 && degree != 5)
      return std::nullopt;
    size_t slot = degree / 2;
    if (seen[slot] || llvm::any_of(term.factors, [&](const Factor &factor) {
          return factor.leaf != prev;
        }))
      return std::nullopt;
    seen[slot] = true;
    abc[slot] = term.coeff;
  }
  if (!seen[0])
    return std::nullopt;
  Polynomial expected = stepPolynomial(reader, prev, poly.labels, abc);
  if (!equivalent(poly, expected, [](Value a, Value b) { return a == b; }))
    return std::nullopt;
  return abc;
}

/// The input of an all-parallel generic that only converts it with `Cast`
/// (arith.extf or arith.truncf) in place, or null.
template <typename Cast> Value convertedFrom(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  auto cast = dyn_cast_or_null<Cast>(payloadOp(generic));
  if (!cast || generic.getNumDpsInputs() != 1 ||
      cast.getIn() != generic.getRegion().front().getArgument(0) ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  return generic.getDpsInputs()[0];
}

/// `output` as Newton-Schulz steps in its own type.
std::optional<NewtonSchulzReading> readSteps(Value output) {
  auto type = dyn_cast<RankedTensorType>(output.getType());
  if (!type || type.getRank() < 2 ||
      type.getDimSize(type.getRank() - 2) > type.getDimSize(type.getRank() - 1))
    return std::nullopt;
  SmallVector<std::array<double, 3>> steps;
  Value current = output;
  for (int64_t step = 0; step <= kMaxSteps; ++step) {
    if (std::optional<std::pair<Value, double>> normalized =
            readNormalized(current)) {
      // No steps (LaCT-NVS's default): the update only normalized; the
      // coefficients are then an identity step no one applies.
      if (steps.empty())
        steps.push_back({1.0, 0.0, 0.0});
      bool none = current == output;
      NewtonSchulzReading reading;
      reading.input = normalized->first;
      reading.eps = normalized->second;
      reading.steps = none ? 0 : steps.size();
      for (const std::array<double, 3> &abc : llvm::reverse(steps))
        reading.coeffs.append(abc.begin(), abc.end());
      return reading;
    }
    bool found = false;
    for (Value candidate : readsOf(current, kSearchDepth)) {
      if (candidate.getType() != current.getType())
        continue;
      if (std::optional<std::array<double, 3>> abc =
              readStep(current, candidate)) {
        steps.push_back(*abc);
        current = candidate;
        found = true;
        break;
      }
    }
    if (!found)
      return std::nullopt;
  }
  return std::nullopt;
}

} // namespace

std::optional<NewtonSchulzReading>
mlir::ttt::linalg_raise::readNewtonSchulz(Value output) {
  // Steps in a 16-bit type: `widen(NS(narrow(U)))`.
  if (Value narrowed = convertedFrom<arith::ExtFOp>(output)) {
    auto narrow = dyn_cast<FloatType>(getElementTypeOrSelf(narrowed));
    std::optional<NewtonSchulzReading> reading =
        narrow && narrow.getWidth() == 16 ? readSteps(narrowed) : std::nullopt;
    Value update =
        reading ? convertedFrom<arith::TruncFOp>(reading->input) : Value();
    if (!update || update.getType() != output.getType())
      return std::nullopt;
    reading->input = update;
    reading->compute = narrow;
    return reading;
  }
  return readSteps(output);
}

std::optional<std::pair<Value, NewtonSchulzReading>>
mlir::ttt::linalg_raise::findNewtonSchulzOf(Value value, Value input) {
  SmallVector<Value> candidates{value};
  llvm::append_range(candidates, readsOf(value, 4));
  for (Value candidate : candidates) {
    auto type = dyn_cast<RankedTensorType>(candidate.getType());
    if (!type || type.getRank() < 2 || !candidate.getDefiningOp())
      continue;
    std::optional<NewtonSchulzReading> reading = readNewtonSchulz(candidate);
    if (reading && (!input || reading->input == input))
      return std::make_pair(candidate, *reading);
  }
  return std::nullopt;
}
