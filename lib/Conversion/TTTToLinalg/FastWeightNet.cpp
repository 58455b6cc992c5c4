//===- FastWeightNet.cpp - forward and backward of fast-weight nets -------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "FastWeightNet.h"

#include "ttt/Conversion/Utils/LinAttnAlgorithms.h"

using namespace mlir;
using namespace mlir::ttt;

Value FastWeightNet::ones(Value rowsLike) {
  OpFoldResult rows = tm.dim(rowsLike, 0);
  Value one = tm.s().constant(1.0);
  return tm.full({rows, tm.builder().getIndexAttr(1)}, one);
}

Value FastWeightNet::silu(Value z) {
  return tm.map({z}, [](ScalarMath &s, ValueRange x) {
    return mlir::ttt::silu(s, x[0]);
  });
}

Value FastWeightNet::siluDerivative(Value z) {
  return tm.map({z}, [](ScalarMath &s, ValueRange x) {
    return mlir::ttt::siluDerivative(s, x[0]);
  });
}

Value FastWeightNet::activation(Value z) {
  Nonlinearity f = nonlinearityOf(model.getActivation());
  return tm.map({z}, [&](ScalarMath &s, ValueRange x) {
    return mlir::ttt::activation(s, f, x[0]);
  });
}

Value FastWeightNet::activationDerivative(Value z) {
  Nonlinearity f = nonlinearityOf(model.getActivation());
  return tm.map({z}, [&](ScalarMath &s, ValueRange x) {
    return mlir::ttt::activationDerivative(s, f, x[0]);
  });
}

Value FastWeightNet::forward(Value x, LayerProduct product,
                             ForwardTrace *trace) {
  ForwardTrace local;
  ForwardTrace &t = trace ? *trace : local;
  t.inputs.assign(model.getNumWeights(), Value());
  auto apply = [&](unsigned index, Value input) {
    t.inputs[index] = input;
    return product(index, input);
  };
  switch (model.getKind()) {
  case ModelKind::linear: {
    Value f = apply(0, x);
    if (model.getBias())
      f = tm.add(f, apply(1, ones(x)));
    return f;
  }
  case ModelKind::mlp: {
    bool bias = model.getBias();
    Value z = apply(0, x);
    if (bias)
      z = tm.add(z, apply(1, ones(x)));
    Value h = activation(z);
    Value f = apply(bias ? 2 : 1, h);
    if (bias)
      f = tm.add(f, apply(3, ones(x)));
    t.z = z;
    t.h = h;
    return f;
  }
  case ModelKind::swiglu: {
    Value gate = apply(0, x);
    Value up = apply(2, x);
    Value act = silu(gate);
    Value h = tm.mul(act, up);
    t.gate = gate;
    t.up = up;
    t.act = act;
    t.h = h;
    return apply(1, h);
  }
  case ModelKind::glu: {
    Value up = apply(0, x);
    Value gate = apply(1, x);
    Value act = silu(gate);
    t.gate = gate;
    t.up = up;
    t.act = act;
    return tm.mul(up, act);
  }
  }
  llvm_unreachable("unknown model kind");
}

// d/d gate of (up * silu(gate)), given the gradient of the product.
Value FastWeightNet::gatedGradient(Value productGrad, const ForwardTrace &t) {
  Value scaled = tm.mul(productGrad, t.up);
  Value derivative = siluDerivative(t.gate);
  return tm.mul(scaled, derivative);
}

SmallVector<std::optional<GradientFactors>>
FastWeightNet::backward(const ForwardTrace &t, Value outputGrad,
                        ArrayRef<Value> weights) {
  unsigned n = model.getNumWeights();
  SmallVector<std::optional<GradientFactors>> factors(n);
  auto record = [&](unsigned index, Value grads) {
    if (model.isTrained(index))
      factors[index] = GradientFactors{t.inputs[index], grads};
  };
  auto anyTrained = [&](std::initializer_list<unsigned> indices) {
    return llvm::any_of(indices,
                        [&](unsigned i) { return model.isTrained(i); });
  };
  switch (model.getKind()) {
  case ModelKind::linear:
    record(0, outputGrad);
    if (model.getBias())
      record(1, outputGrad);
    break;
  case ModelKind::mlp: {
    bool bias = model.getBias();
    unsigned out = bias ? 2 : 1;
    record(out, outputGrad);
    if (bias)
      record(3, outputGrad);
    if (!anyTrained({0, bias ? 1u : 0u}))
      break;
    Value dh = tm.matmul(outputGrad, weights[out], false, true);
    Value dz = tm.mul(dh, activationDerivative(t.z));
    record(0, dz);
    if (bias)
      record(1, dz);
    break;
  }
  case ModelKind::swiglu: {
    record(1, outputGrad);
    if (!anyTrained({0, 2}))
      break;
    Value dh = tm.matmul(outputGrad, weights[1], false, true);
    if (model.isTrained(0))
      record(0, gatedGradient(dh, t));
    if (model.isTrained(2))
      record(2, tm.mul(dh, t.act));
    break;
  }
  case ModelKind::glu:
    if (model.isTrained(0))
      record(0, tm.mul(outputGrad, t.act));
    if (model.isTrained(1))
      record(1, gatedGradient(outputGrad, t));
    break;
  }
  return factors;
}
