//===- TTTAttrs.cpp - ttt layer attributes --------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/TTT/IR/TTTAttrs.h"
#include "ttt/Dialect/TTT/IR/TTTDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ttt;

//===----------------------------------------------------------------------===//
// Parameter parsers and printers
//===----------------------------------------------------------------------===//

FailureOr<llvm::APFloat> mlir::ttt::parseF64Param(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return llvm::APFloat(value);
}

void mlir::ttt::printF64Param(AsmPrinter &printer, const llvm::APFloat &value) {
  printer.printFloat(value);
}

FailureOr<DenseF64ArrayAttr> mlir::ttt::parseF64ListParam(AsmParser &parser) {
  SmallVector<double> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        double value;
        if (parser.parseFloat(value))
          return failure();
        values.push_back(value);
        return success();
      }))
    return failure();
  return DenseF64ArrayAttr::get(parser.getContext(), values);
}

void mlir::ttt::printF64ListParam(AsmPrinter &printer,
                                  DenseF64ArrayAttr values) {
  printer << '[';
  llvm::interleaveComma(values.asArrayRef(), printer, [&](double v) {
    printF64Param(printer, llvm::APFloat(v));
  });
  printer << ']';
}

FailureOr<SmallVector<int64_t>>
mlir::ttt::parseI64ListParam(AsmParser &parser) {
  SmallVector<int64_t> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        int64_t value;
        if (parser.parseInteger(value))
          return failure();
        values.push_back(value);
        return success();
      }))
    return failure();
  return values;
}

void mlir::ttt::printI64ListParam(AsmPrinter &printer,
                                  ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

//===----------------------------------------------------------------------===//
// FastWeightModelAttr
//===----------------------------------------------------------------------===//

static unsigned numWeightsOf(ModelKind kind, bool bias) {
  switch (kind) {
  case ModelKind::linear:
    return bias ? 2 : 1;
  case ModelKind::mlp:
    return bias ? 4 : 2;
  case ModelKind::swiglu:
    return 3;
  case ModelKind::glu:
    return 2;
  }
  llvm_unreachable("unknown model kind");
}

unsigned FastWeightModelAttr::getNumWeights() const {
  return numWeightsOf(getKind(), getBias());
}

bool FastWeightModelAttr::isBias(unsigned index) const {
  if (!getBias())
    return false;
  // linear: (W, b); mlp: (W0, b0, W1, b1).
  return index % 2 == 1;
}

bool FastWeightModelAttr::isTrained(unsigned index) const {
  return llvm::is_contained(getTrained(), static_cast<int64_t>(index));
}

unsigned FastWeightModelAttr::getOutputWeightIndex() const {
  switch (getKind()) {
  case ModelKind::linear:
    return 0;
  case ModelKind::mlp:
    return getBias() ? 2 : 1;
  case ModelKind::swiglu:
    return 1;
  case ModelKind::glu:
    return 0;
  }
  llvm_unreachable("unknown model kind");
}

std::optional<unsigned> FastWeightModelAttr::getOutputBiasIndex() const {
  if (!getBias())
    return std::nullopt;
  return getKind() == ModelKind::linear ? 1u : 3u;
}

StringRef FastWeightModelAttr::getWeightRole(unsigned index) const {
  switch (getKind()) {
  case ModelKind::linear:
    return index == 0 ? "W" : "b";
  case ModelKind::mlp:
    if (getBias())
      return std::array<StringRef, 4>{"W0", "b0", "W1", "b1"}[index];
    return index == 0 ? "W0" : "W1";
  case ModelKind::swiglu:
    return std::array<StringRef, 3>{"W0 (gate)", "W1 (out)", "W2 (up)"}[index];
  case ModelKind::glu:
    return index == 0 ? "Wa" : "Wg";
  }
  llvm_unreachable("unknown model kind");
}

LogicalResult
FastWeightModelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            ModelKind kind, ArrayRef<int64_t> trained,
                            bool bias, Activation activation) {
  if (bias && kind != ModelKind::linear && kind != ModelKind::mlp)
    return emitError() << "'bias = true' is only supported for linear and mlp "
                          "models; "
                       << stringifyModelKind(kind) << " has no bias weights";
  if (activation != Activation::silu && kind != ModelKind::mlp)
    return emitError() << "'activation' only applies to mlp models; remove it "
                          "from the "
                       << stringifyModelKind(kind) << " model";
  if (trained.empty())
    return emitError() << "'trained' must list at least one weight index; a "
                          "layer that trains nothing is not a TTT layer";
  unsigned numWeights = numWeightsOf(kind, bias);
  for (auto [i, index] : llvm::enumerate(trained)) {
    if (index < 0 || index >= static_cast<int64_t>(numWeights))
      return emitError() << "trained weight index " << index
                         << " is out of range: a " << stringifyModelKind(kind)
                         << (bias ? " model with bias" : " model") << " has "
                         << numWeights << " weights (0.." << numWeights - 1
                         << ")";
    if (i > 0 && trained[i - 1] >= index)
      return emitError() << "'trained' must be sorted and free of duplicates, "
                            "got "
                         << trained[i - 1] << " before " << index;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LossAttr
//===----------------------------------------------------------------------===//

LogicalResult LossAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               LossKind kind, APFloat scaleValue,
                               Reduction reduction, APFloat epsValue) {
  double scale = scaleValue.convertToDouble();
  double eps = epsValue.convertToDouble();
  if (!std::isfinite(scale))
    return emitError() << "loss 'scale' must be finite, got " << scale;
  if (!(eps > 0.0) || !std::isfinite(eps))
    return emitError() << "loss 'eps' must be a positive finite number, got "
                       << eps;
  return success();
}

//===----------------------------------------------------------------------===//
// NewtonSchulzAttr
//===----------------------------------------------------------------------===//

LogicalResult
NewtonSchulzAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t steps, DenseF64ArrayAttr coeffsAttr,
                         APFloat epsValue, Type compute) {
  if (!coeffsAttr)
    return emitError() << "newton_schulz needs 'coeffs'";
  ArrayRef<double> coeffs = coeffsAttr.asArrayRef();
  double eps = epsValue.convertToDouble();
  // No steps: the update is only normalized (LaCT-NVS's default).
  if (steps < 0)
    return emitError() << "newton_schulz 'steps' must not be negative, got "
                       << steps;
  if (coeffs.size() != 3 && static_cast<int64_t>(coeffs.size()) != 3 * steps)
    return emitError() << "newton_schulz 'coeffs' must hold one (a, b, c) "
                          "triple or one per step (3 or "
                       << 3 * steps << " numbers), got " << coeffs.size();
  if (!llvm::all_of(coeffs, [](double c) { return std::isfinite(c); }))
    return emitError() << "newton_schulz 'coeffs' must be finite";
  if (!(eps > 0.0) || !std::isfinite(eps))
    return emitError() << "newton_schulz 'eps' must be a positive finite "
                          "number, got "
                       << eps;
  auto narrow = dyn_cast_or_null<FloatType>(compute);
  if (compute && (!narrow || narrow.getWidth() != 16))
    return emitError() << "newton_schulz 'compute' must be bf16 or f16, got "
                       << compute;
  return success();
}

std::array<double, 3> NewtonSchulzAttr::getStepCoeffs(int64_t step) const {
  ArrayRef<double> coeffs = getCoeffs().asArrayRef();
  size_t base = coeffs.size() == 3 ? 0 : 3 * step;
  return {coeffs[base], coeffs[base + 1], coeffs[base + 2]};
}

//===----------------------------------------------------------------------===//
// UpdateAttr
//===----------------------------------------------------------------------===//

LogicalResult UpdateAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Sign sign, APFloat lrScaleValue, ClipKind clip,
                                 NewtonSchulzAttr orthogonalize,
                                 WeightNormKind weightNorm,
                                 APFloat weightNormEpsValue, UpdateBase base) {
  double lrScale = lrScaleValue.convertToDouble();
  double weightNormEps = weightNormEpsValue.convertToDouble();
  if (!std::isfinite(lrScale))
    return emitError() << "update 'lr_scale' must be finite, got " << lrScale;
  if (!(weightNormEps > 0.0) || !std::isfinite(weightNormEps))
    return emitError() << "update 'weight_norm_eps' must be a positive finite "
                          "number, got "
                       << weightNormEps;
  if (base == UpdateBase::update && !orthogonalize)
    return emitError() << "update 'base = update' adds Muon's result to the "
                          "update it orthogonalized, and needs "
                          "'orthogonalize'";
  return success();
}

//===----------------------------------------------------------------------===//
// ScheduleAttr
//===----------------------------------------------------------------------===//

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ScheduleKind kind, int64_t size,
                                   UpdateOrder order, int64_t innerSteps) {
  if (innerSteps < 1)
    return emitError() << "schedule 'inner_steps' must be at least 1, got "
                       << innerSteps;
  if (kind == ScheduleKind::chunked) {
    if (size < 1)
      return emitError() << "a chunked schedule needs 'size' >= 1 (the chunk "
                            "length in tokens), got "
                         << size;
    if (order == UpdateOrder::causal && innerSteps != 1)
      return emitError() << "the causal order takes exactly one inner step; "
                            "remove 'inner_steps = "
                         << innerSteps << "'";
    return success();
  }
  if (size != 0)
    return emitError() << "a full_batch schedule updates once on all tokens; "
                          "remove 'size = "
                       << size << "' or use kind = chunked";
  if (order != UpdateOrder::apply_then_update)
    return emitError() << "a full_batch schedule always updates, then applies; "
                          "remove 'order = "
                       << stringifyUpdateOrder(order) << "'";
  return success();
}

#include "ttt/Dialect/TTT/IR/TTTEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ttt/Dialect/TTT/IR/TTTAttrs.cpp.inc"

void TTTDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ttt/Dialect/TTT/IR/TTTAttrs.cpp.inc"
      >();
}
