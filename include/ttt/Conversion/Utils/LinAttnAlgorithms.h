//===- LinAttnAlgorithms.h - the algorithms every back end shares -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pieces of the linear-attention forms and of the recurrent reference,
// written once against Algebra.h: the activations and their derivatives,
// Newton-Schulz, the chunk views of a sequence, and the doubling
// (Hillis-Steele) scan over chunks. The linalg lowering, the recurrent
// lowering and the ONNX export all call these.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_CONVERSION_UTILS_LINATTNALGORITHMS_H
#define TTT_CONVERSION_UTILS_LINATTNALGORITHMS_H

#include "ttt/Conversion/Utils/Algebra.h"

#include "llvm/Support/ErrorHandling.h"

#include <optional>
#include <utility>

namespace mlir::ttt {

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

/// The hidden activations of fast-weight nets and feature maps.
enum class Nonlinearity { silu, relu, gelu_tanh };

/// The ttt and linattn dialects' activation enums (same cases) as one.
template <typename ActivationEnum>
Nonlinearity nonlinearityOf(ActivationEnum activation) {
  switch (activation) {
  case ActivationEnum::silu:
    return Nonlinearity::silu;
  case ActivationEnum::relu:
    return Nonlinearity::relu;
  case ActivationEnum::gelu_tanh:
    return Nonlinearity::gelu_tanh;
  }
  llvm_unreachable("unknown activation");
}

/// z sigma(z).
Value silu(ElementwiseMath &m, Value z);
/// sigma(z) (1 + z (1 - sigma(z))).
Value siluDerivative(ElementwiseMath &m, Value z);
/// f(z).
Value activation(ElementwiseMath &m, Nonlinearity f, Value z);
/// f'(z).
Value activationDerivative(ElementwiseMath &m, Nonlinearity f, Value z);

//===----------------------------------------------------------------------===//
// Feature maps
//===----------------------------------------------------------------------===//

/// f(x W (+ b)) for x [.., T, D] and a weight [.., D, F] (shared by x's
/// leading axes or not) and an optional bias row [.., 1, F].
Value mlpFeatures(TensorAlgebra &t, Value x, Value weight, Value bias,
                  Nonlinearity f);
/// silu(x Wg) (x Wu).
Value swigluFeatures(TensorAlgebra &t, Value x, Value gate, Value up);
/// phi with a constant 1 appended to its last axis (the feature that
/// carries a bias).
Value appendOne(TensorAlgebra &t, Value phi);

//===----------------------------------------------------------------------===//
// Newton-Schulz
//===----------------------------------------------------------------------===//

/// The Newton-Schulz orthogonalization of each matrix of x [..., r, c]:
/// X / (|X|_F + eps), then `steps` times X <- a X + (b A + c A^2) X with
/// A = X X^T, iterating on the wide orientation (X^T when r > c, which must
/// then be static) so that A is the smaller Gram matrix. `coeffs` holds one
/// (a, b, c) for every step, or 3 for all of them. With `compute` (bf16 or
/// f16) every intermediate is rounded to that type as PyTorch computes in
/// it: elementwise ops in f32 then rounded, products accumulated in f32 then
/// rounded, `c A A` as `(c A) A`.
Value newtonSchulz(TensorAlgebra &t, Value x, int64_t steps,
                   ArrayRef<double> coeffs, double eps, FloatType compute = {});

//===----------------------------------------------------------------------===//
// Chunk views
//===----------------------------------------------------------------------===//

/// The chunking of a sequence of T tokens (axis 2) into N chunks of C, or
/// into one chunk of all T tokens (no chunk size).
struct Chunking {
  std::optional<int64_t> size; // C
  Value tokens;                // T
  Value length;                // C, or T without a chunk size
  Value count;                 // N = ceil(T / C), or 1
};

Chunking chunkingOf(TensorAlgebra &t, Value x, std::optional<int64_t> chunk);

/// [B, H, T, D...] -> [B, H, N, C, D...], zero-padded to N C tokens (the
/// padding adds nothing to sums and products), or [B, H, 1, T, D...].
Value chunked(TensorAlgebra &t, Value x, const Chunking &chunking);

/// The inverse of chunked(): [B, H, N, C, E...] -> [B, H, T, E...].
Value unchunked(TensorAlgebra &t, Value x, const Chunking &chunking);

//===----------------------------------------------------------------------===//
// The doubling scan
//===----------------------------------------------------------------------===//

/// How a chunk's transition acts on a state [B, H, n, F, E]: none (an
/// additive scan), a decay [B, H, n] that scales it, or a matrix
/// [B, H, n, F, F] that multiplies it from the left.
enum class TransitionKind { none, decay, matrix };

/// a x + y for the transitions a and states x, y of one chunk range.
Value applyTransition(TensorAlgebra &t, TransitionKind kind, Value a, Value x,
                      Value y);

/// The inclusive scan of the pairs (a_c, G_c) over the chunks (axis 2) of
/// g [B, H, N, F, E], from a zero state, in log2(N) rounds: in the round of
/// offset d, chunk i >= d combines with chunk i - d, G_i += a_i G_{i-d} and
/// a_i = a_i a_{i-d}. Transitions are composed as products, never divided
/// out of cumulative ones, so decays near 0 underflow to 0 harmlessly.
/// Returns the partial states and the cumulative transitions (null for
/// an additive scan).
std::pair<Value, Value> doublingScan(TensorAlgebra &t, TransitionKind kind,
                                     Value g, Value a);

} // namespace mlir::ttt

#endif // TTT_CONVERSION_UTILS_LINATTNALGORITHMS_H
