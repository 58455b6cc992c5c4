//===- FastWeightNet.h - fast-weight net forward/backward -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The fast-weight networks of a ttt.kvb_layer, for the rows of one stream.
// Every weight enters the network through one product `x_i W_i` (a bias is a
// product with a column of ones), so the gradient of weight i over a token
// set is always `X_i^T diag(eta) D_i` for the inputs X_i and output
// gradients D_i of that product. forward() records the inputs, backward()
// returns the (X_i, D_i) pairs; the recurrent lowering combines them into
// mini-batch updates and into the per-token dual form of the causal order.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_TTTTOLINALG_FASTWEIGHTNET_H
#define TTT_LIB_CONVERSION_TTTTOLINALG_FASTWEIGHTNET_H

#include "ttt/Conversion/Utils/TensorMath.h"
#include "ttt/Dialect/TTT/IR/TTTAttrs.h"

#include <optional>

namespace mlir::ttt {

/// Evaluates the product `input * W_index` of one layer; the caller decides
/// which weights (chunk-start, per-token) the product uses.
using LayerProduct = function_ref<Value(unsigned index, Value input)>;

/// Intermediate values of one forward pass, needed by backward().
struct ForwardTrace {
  /// The input rows of every weight's product (ones for a bias).
  SmallVector<Value> inputs;
  /// Pre-activations and hidden values, named after the model's math.
  Value z, h, gate, up, act;
};

/// The (X_i, D_i) pair of one trained weight.
struct GradientFactors {
  Value inputs;
  Value outputGrads;
};

class FastWeightNet {
public:
  FastWeightNet(TensorMath &tm, FastWeightModelAttr model)
      : tm(tm), model(model) {}

  /// f(x) for the rows of `x`, each product evaluated by `product`.
  Value forward(Value x, LayerProduct product, ForwardTrace *trace = nullptr);

  /// The gradient factors of every trained weight (std::nullopt for the
  /// others), given dL/df for the rows traced by forward() and the weights
  /// that forward() used.
  SmallVector<std::optional<GradientFactors>>
  backward(const ForwardTrace &trace, Value outputGrad,
           ArrayRef<Value> weights);

private:
  Value ones(Value rowsLike);
  Value activation(Value z);
  Value activationDerivative(Value z);
  Value silu(Value z);
  Value siluDerivative(Value z);
  Value gatedGradient(Value productGrad, const ForwardTrace &trace);

  TensorMath &tm;
  FastWeightModelAttr model;
};

} // namespace mlir::ttt

#endif // TTT_LIB_CONVERSION_TTTTOLINALG_FASTWEIGHTNET_H
