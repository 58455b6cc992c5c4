//===- LinAttnForms.cpp - linattn ops built on the shared algebra ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Utils/LinAttnForms.h"
#include "ttt/Conversion/Utils/LinAttnAlgorithms.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::linattn;

Value mlir::ttt::buildFeatureMap(TensorAlgebra &t, FeatureMapOp op) {
  Value x = op.getInput();
  Value phi = x;
  ValueRange weights = op.getWeights();
  switch (op.getKind()) {
  case FeatureMapKind::identity:
    break;
  case FeatureMapKind::mlp:
    phi = mlpFeatures(t, x, weights[0],
                      weights.size() == 2 ? weights[1] : Value(),
                      nonlinearityOf(op.getActivation()));
    break;
  case FeatureMapKind::swiglu:
    phi = swigluFeatures(t, x, weights[0], weights[1]);
    break;
  }
  return op.getAppendOne() ? appendOne(t, phi) : phi;
}

Value mlir::ttt::buildStateTransform(TensorAlgebra &t, StateTransformOp op) {
  Value x = newtonSchulz(t, op.getInputs(), op.getSteps(), op.getCoeffs(),
                         op.getEps().convertToDouble());
  double factor = op.getFactor().convertToDouble();
  if (factor == 1.0)
    return x;
  return t.map({x}, [&](ElementwiseMath &m, ValueRange v) {
    return m.mul(v[0], m.constant(factor));
  });
}
