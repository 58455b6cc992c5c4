//===- ElementwiseReadings.h - pieces of a fast-weight step -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The few non-polynomial pieces a fast-weight network's step is made of,
// read off linalg on tensors: the logistic sigmoid, Euclidean norms over
// one axis and a division by them (weight norm, gradient clipping), and
// the terms in which a reader writes the gradient it expects, named by the
// roles of their dimensions. The SwiGLU and GLU readers share them.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_ELEMENTWISEREADINGS_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_ELEMENTWISEREADINGS_H

#include "EinsumPolynomial.h"
#include "FastWeightLayer.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::ttt::linalg_raise {

/// What a dimension is to the layer. Streams (batch, heads) are numbered
/// from kStream; a dimension of size 1 that has no role is a unit.
enum LayerRole : unsigned {
  kStream = 0,
  kTime = 1u << 20,
  kIn,
  kHidden,
  kOut,
  kUnit = 1u << 21,
};

/// Labels of sums the expected gradients introduce.
constexpr unsigned kFresh = 1u << 22;

/// Whether `value` is the float constant 1.
bool isConstantOne(Value value);

/// A float constant that is one number (a scalar, a splat or a one-element
/// tensor).
std::optional<double> splatConstant(Value value);

/// A linalg.generic of `numInputs` inputs and no reduction.
linalg::GenericOp parallelGeneric(Value value, unsigned numInputs);

/// Whether `generic` reads its input `i` element for element as it writes
/// its output: one map for both, each loop once, a dimension of one element
/// possibly read at index 0 instead.
bool readsInPlace(linalg::GenericOp generic, unsigned i);

/// What the payload of `generic` yields.
Value yielded(linalg::GenericOp generic);

/// The input of `value` when it is the logistic sigmoid of it,
/// `1 / (1 + exp(-x))` elementwise.
Value sigmoidInput(Value value);

/// Whether leaves `a` and `b` are one value: the same, or sigmoids of
/// inputs that `reader` reads as the same sums of products (two ops
/// computing one gate).
bool sameUpToSigmoids(EinsumReader &reader, Value a, Value b);

/// `value` without the reshapes it is made by.
Value throughReshapes(Value value);

/// The Euclidean norms of a tensor over one axis: the axis, and the
/// tensor's dimensions the sum keeps, in order.
struct ColumnNorms {
  unsigned axis = 0;
  SmallVector<int64_t> kept;
};

/// `norms` (reshapes around it allowed) read as `sqrt(sum over one axis of
/// x^2)`, or nullopt.
std::optional<ColumnNorms> readColumnNorms(Value norms, Value x);

/// `x / (sqrt(sum over one axis of x^2) + eps)`, broadcast along that axis.
struct ColumnNormDivision {
  Value x;
  unsigned axis = 0;
  double eps = 0.0;
};

std::optional<ColumnNormDivision> readColumnNormDivision(Value divided);

/// Whether `target` holds the norms of `weight` over `axis` (each kept
/// dimension in order, as `labels` name the target's dimensions against
/// the weight's `weightLabels`).
bool holdsColumnNorms(Value target, ArrayRef<unsigned> labels, Value weight,
                      ArrayRef<unsigned> weightLabels, unsigned axis);

/// A term whose factors are named by roles; `rename` gives the labels of
/// roles summed within a part of it.
struct RoleTerm {
  Term term;
  unsigned &fresh;

  RoleTerm(double coeff, unsigned &fresh) : fresh(fresh) { term.coeff = coeff; }
  RoleTerm &
  add(Value leaf, ArrayRef<unsigned> roles,
      std::initializer_list<std::pair<unsigned, unsigned>> rename = {});
};

/// The keys' sigmoid `sigma(k W)` that the one term of `gradient` reads, W
/// the state `gate` before the update (the roles of its dimensions
/// `gateRoles`): the sigmoid, the keys' window with the roles of its
/// dimensions (streams, time and the input features), and the sigmoid's.
struct KeysGate {
  Value sigmoid;
  RoledWindow keys;
  SmallVector<unsigned> sigmoidRoles;
};

/// Reads the KeysGate of a SwiGLU's or a GLU's gradient; `notBound` is the
/// reason when the gradient has no such factor, `gateName` W's name in the
/// reasons.
FailureOr<KeysGate> readKeysGate(ChunkLoopOp loop, EinsumReader &reader,
                                 const Polynomial &gradient, unsigned gate,
                                 ArrayRef<unsigned> gateRoles,
                                 unsigned numStreams, StringRef notBound,
                                 StringRef gateName, std::string &why);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_ELEMENTWISEREADINGS_H
