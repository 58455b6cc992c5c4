//===- ElementwiseFunctions.h - which function of x a node chain is -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An activation and its derivative are written in as many ways as there are
// exporters and authors (`F.gelu(x, approximate="tanh")` as one Gelu node or
// eight arithmetic nodes, ttt-lm-pytorch's hand-written `gelu_bwd` with its
// rounded constants). The raise identifies such a chain of elementwise
// nodes of one tensor by the function it computes: it evaluates the chain in
// double precision at sample points over the range activations see and
// compares with the closed form, to float32 accuracy.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOTTT_ELEMENTWISEFUNCTIONS_H
#define TTT_LIB_CONVERSION_ONNXTOTTT_ELEMENTWISEFUNCTIONS_H

#include "GraphQueries.h"

namespace mlir::ttt::raise {

/// The tanh approximation of GELU, `x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715
/// x^3)))`, and its derivative.
double geluTanh(double x);
double geluTanhDerivative(double x);

/// If `y` is `f(x)` elementwise for one tensor `x` (a chain of arithmetic
/// and activation nodes whose only non-constant input is `x`, computed in
/// `x`'s shape), returns `x`; null otherwise.
Value elementwiseArgument(Value y, llvm::function_ref<double(double)> f);

/// If `y` is `x/2 (1 + tanh(c (x + 0.044715 x^3)))` elementwise for one
/// tensor with a constant c written in the chain that is near sqrt(2/pi) but
/// not it (torch-mlir lowers `gelu(approximate="tanh")` with c =
/// 0.7977240352), returns c: the chain is not gelu, and the remark says why.
std::optional<double> misscaledGeluTanh(Value y);

} // namespace mlir::ttt::raise

#endif // TTT_LIB_CONVERSION_ONNXTOTTT_ELEMENTWISEFUNCTIONS_H
