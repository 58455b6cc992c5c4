//===- SwiGLUForms.h - what trained SwiGLU layers compute -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pieces of a LaCT layer whose inner weights train too: the descent
// directions of the gate and up projections (backpropagated through
// `silu(x W0) * (x W2)`), products read as multisets of factors, and the
// post-update weight norm. Each matcher reads the math, not one spelling:
// a product may be associated and ordered in any way, per-token learning
// rates may scale either factor of the outer product, and a column norm may
// be written with Sqrt/ReduceSum/Mul, Pow, ReduceSumSquare or ReduceL2.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOTTT_SWIGLUFORMS_H
#define TTT_LIB_CONVERSION_ONNXTOTTT_SWIGLUFORMS_H

#include "GraphQueries.h"

#include <array>
#include <string>

namespace mlir::ttt::raise {

/// The weights one SwiGLU chunk applies, in ttt.kvb_layer's order: W0 (gate),
/// W1 (output), W2 (up).
using SwiGLUWeights = std::array<Value, 3>;

/// True if two values hold the same numbers: the same value up to layout
/// nodes, or two constants with equal types and bytes.
bool sameNumbers(Value a, Value b);

/// True if `value` is `weight` with its two innermost axes swapped: a
/// Transpose of it, or a constant that holds the transposed numbers of a
/// constant `weight` (an exporter that folded `W.T` of a parameter).
bool isTransposeOf(Value value, Value weight);

/// The operand of the update `stored = W + U` (or `W - U`) whose transpose
/// `applied` holds: the first chunk of a weight applied transposed may read
/// a constant the exporter folded from the stored weight's transpose. Null
/// if there is none.
Value storedOperandOf(Value applied, Value stored);

/// If `norm` is the L2 norm of `x` over its second-to-last axis, kept as an
/// axis of one (one norm per output column of an [.., in, out] weight), in
/// any spelling: Sqrt(ReduceSum(x * x)), Sqrt(ReduceSum(Pow(x, 2))),
/// Sqrt(ReduceSumSquare(x)) or ReduceL2(x). Returns x.
Value columnNormOf(Value norm);

/// True if `norms` are the column norms of `weight`: computed from a tensor
/// with the same numbers (a parameter the exporter copied), or a constant
/// that holds them (to float rounding).
bool isColumnNormOf(Value norms, Value weight);

/// `x / (colnorm(x) + eps) * target` in either operand order, or with
/// `x / colnorm(x)` spelled `LpNormalization(x, axis = -2, p = 2)` (eps 0):
/// returns x and sets `eps` and `target`.
Value matchWeightNorm(Value value, double &eps, Value &target);

/// `g / (colnorm(g) + 1)` (ViT^3's gradient clipping, one norm per output
/// column), the column norm in any spelling: returns g, or null.
Value matchColumnClip(Value value);

/// The leaves of the Mul tree at `value` (what it multiplies elementwise),
/// with scalar constant factors, divisions by them and Negs multiplied into
/// `factor`.
void productFactors(Value value, SmallVectorImpl<Value> &leaves,
                    double &factor);

/// What the descent direction of an inner SwiGLU weight reads.
struct InnerGradient {
  SliceChain keys, values;
  /// The per-token learning rate that scales it, if any.
  std::optional<SliceChain> lr;
  /// The product of the constant factors inside the outer product.
  double factor = 1.0;
  /// Whether the values are divided by the number of tokens (a mean).
  bool mean = false;
};

/// Matches `(K ⊙ η)ᵀ (P ⊙ ...)`, the descent direction -dL/dW of the dot
/// loss for W0 (`role` 0: `Kᵀ (P ⊙ (K W2) ⊙ silu'(K W0))`) or W2 (`role` 2:
/// `Kᵀ (P ⊙ silu(K W0))`), with `P = V W1ᵀ` and every weight as in `at`.
/// η, a per-token learning-rate column, may scale either factor. K, V and η
/// are chunks, or with `wholeSequence` whole sequences (a full-batch step).
/// Without `at[1]` the layer is a GLU, `(x Wa) ⊙ silu(x Wg)`: `at[0]` is Wg
/// and `at[2]` Wa, and P is the values themselves (maybe divided by the
/// number of tokens). On failure, sets `why`.
std::optional<InnerGradient>
matchInnerGradient(Value value, unsigned role, const SwiGLUWeights &at,
                   const WholeSequences *wholeSequence, std::string &why);

} // namespace mlir::ttt::raise

#endif // TTT_LIB_CONVERSION_ONNXTOTTT_SWIGLUFORMS_H
