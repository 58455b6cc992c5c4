//===- GeluReadings.cpp - GELU (tanh form) read off linalg ----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "GeluReadings.h"
#include "EinsumPolynomial.h"
#include "ElementwiseReadings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

namespace {

/// A scalar polynomial in x and t: (power of x, power of t) -> coefficient.
using Monomials = std::map<std::pair<unsigned, unsigned>, double>;

bool closeTo(double found, double expected) {
  return std::abs(found - expected) <= kGeluRtol * std::abs(expected);
}

/// Whether `poly` has exactly the monomials of `expected`, each close.
bool sameMonomials(const Monomials &poly, const Monomials &expected) {
  for (const auto &[power, coeff] : poly)
    if (coeff != 0.0 && !expected.count(power))
      return false;
  for (const auto &[power, coeff] : expected) {
    auto it = poly.find(power);
    if (it == poly.end() || !closeTo(it->second, coeff))
      return false;
  }
  return true;
}

/// A payload value as a polynomial of its argument x and of the one tanh it
/// computes (`tanhArg` gets that tanh's operand), within `depth` ops.
std::optional<Monomials> readScalar(Value value, Value x, Value &tanhArg,
                                    unsigned depth = 0) {
  if (value == x)
    return Monomials{{{1, 0}, 1.0}};
  if (std::optional<double> constant = floatConstant(value))
    return Monomials{{{0, 0}, *constant}};
  Operation *op = value.getDefiningOp();
  if (!op || depth > 32)
    return std::nullopt;
  if (auto tanh = dyn_cast<math::TanhOp>(op)) {
    if (tanhArg && tanhArg != tanh.getOperand())
      return std::nullopt;
    tanhArg = tanh.getOperand();
    return Monomials{{{0, 1}, 1.0}};
  }
  auto operand = [&](unsigned i) {
    return readScalar(op->getOperand(i), x, tanhArg, depth + 1);
  };
  if (isa<arith::NegFOp>(op)) {
    std::optional<Monomials> a = operand(0);
    if (a)
      for (auto &[power, coeff] : *a)
        coeff = -coeff;
    return a;
  }
  if (!isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp>(op))
    return std::nullopt;
  std::optional<Monomials> a = operand(0), b = operand(1);
  if (!a || !b)
    return std::nullopt;
  if (isa<arith::DivFOp>(op)) {
    if (b->size() != 1 ||
        b->begin()->first != std::pair<unsigned, unsigned>{0, 0} ||
        b->begin()->second == 0.0)
      return std::nullopt;
    for (auto &[power, coeff] : *a)
      coeff /= b->begin()->second;
    return a;
  }
  if (isa<arith::MulFOp>(op)) {
    Monomials product;
    for (const auto &[pa, ca] : *a)
      for (const auto &[pb, cb] : *b)
        product[{pa.first + pb.first, pa.second + pb.second}] += ca * cb;
    return product;
  }
  double sign = isa<arith::SubFOp>(op) ? -1.0 : 1.0;
  for (const auto &[power, coeff] : *b)
    (*a)[power] += sign * coeff;
  return a;
}

/// The tanh's argument c (z + 0.044715 z^3) as a polynomial of z.
const Monomials &tanhArgument() {
  static const Monomials argument{{{1, 0}, kGeluC},
                                  {{3, 0}, kGeluC * kGeluCubic}};
  return argument;
}

} // namespace

Value linalg_raise::geluTanhInput(Value value) {
  // One payload: ONNX's Gelu with approximate = "tanh".
  linalg::GenericOp generic = parallelGeneric(value, 1);
  if (!generic || !readsInPlace(generic, 0))
    return {};
  Value x = generic.getRegion().front().getArgument(0), tanhArg;
  std::optional<Monomials> poly = readScalar(yielded(generic), x, tanhArg);
  if (!poly || !tanhArg ||
      !sameMonomials(*poly, {{{1, 0}, 0.5}, {{1, 1}, 0.5}}))
    return {};
  Value none;
  std::optional<Monomials> argument = readScalar(tanhArg, x, none);
  if (!argument || none || !sameMonomials(*argument, tanhArgument()))
    return {};
  return generic.getDpsInputs()[0];
}

bool linalg_raise::isGeluTanh(Value value, Value z) {
  linalg::GenericOp generic = parallelGeneric(value, 1);
  if (!generic || !readsInPlace(generic, 0))
    return false;
  Block &payload = generic.getRegion().front();
  auto tanh = yielded(generic).getDefiningOp<math::TanhOp>();
  Value argument = generic.getDpsInputs()[0];
  if (!tanh || argument.getType() != z.getType())
    return false;
  // tanh of the payload's own polynomial of its input, or of a tensor that
  // reads as that polynomial of z.
  Value none;
  if (tanh.getOperand() != payload.getArgument(0)) {
    std::optional<Monomials> poly =
        argument == z
            ? readScalar(tanh.getOperand(), payload.getArgument(0), none)
            : std::nullopt;
    return poly && !none && sameMonomials(*poly, tanhArgument());
  }
  EinsumReader reader(llvm::DenseSet<Value>{z});
  std::optional<Polynomial> poly = reader.read(argument);
  if (!poly || poly->terms.size() != 2)
    return false;
  Monomials monomials;
  for (const Term &term : poly->terms) {
    if (llvm::any_of(term.factors, [&](const Factor &factor) {
          return factor.leaf != z || factor.labels != poly->labels;
        }))
      return false;
    monomials[{static_cast<unsigned>(term.factors.size()), 0}] += term.coeff;
  }
  return sameMonomials(monomials, tanhArgument());
}
