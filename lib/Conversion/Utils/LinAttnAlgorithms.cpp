//===- LinAttnAlgorithms.cpp - the algorithms every back end shares -------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Utils/LinAttnAlgorithms.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::ttt;

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

// gelu_tanh(z) = z/2 (1 + tanh(c (z + a z^3))), c = sqrt(2/pi).
static constexpr double kGeluC = 0.7978845608028654;
static constexpr double kGeluA = 0.044715;

Value mlir::ttt::silu(ElementwiseMath &m, Value z) {
  return m.mul(z, m.sigmoid(z));
}

Value mlir::ttt::siluDerivative(ElementwiseMath &m, Value z) {
  Value sig = m.sigmoid(z);
  Value one = m.constant(1.0);
  Value oneMinusSig = m.sub(one, sig);
  return m.mul(sig, m.add(one, m.mul(z, oneMinusSig)));
}

/// tanh(c (z + a z^3)), the inner term of gelu_tanh.
static Value geluTanh(ElementwiseMath &m, Value z) {
  Value z3 = m.mul(z, m.mul(z, z));
  Value cubic = m.mul(m.constant(kGeluA), z3);
  Value c = m.constant(kGeluC);
  return m.tanh(m.mul(c, m.add(z, cubic)));
}

Value mlir::ttt::activation(ElementwiseMath &m, Nonlinearity f, Value z) {
  switch (f) {
  case Nonlinearity::silu:
    return silu(m, z);
  case Nonlinearity::relu:
    return m.relu(z);
  case Nonlinearity::gelu_tanh: {
    Value halfZ = m.mul(m.constant(0.5), z);
    Value one = m.constant(1.0);
    return m.mul(halfZ, m.add(one, geluTanh(m, z)));
  }
  }
  llvm_unreachable("unknown activation");
}

Value mlir::ttt::activationDerivative(ElementwiseMath &m, Nonlinearity f,
                                      Value z) {
  switch (f) {
  case Nonlinearity::silu:
    return siluDerivative(m, z);
  case Nonlinearity::relu:
    return m.positive(z);
  case Nonlinearity::gelu_tanh: {
    // (1 + t)/2 + z/2 (1 - t^2) c (1 + 3a z^2), t = tanh(c (z + a z^3)).
    Value one = m.constant(1.0), half = m.constant(0.5);
    Value t = geluTanh(m, z);
    Value z2 = m.mul(z, z);
    Value slope = m.add(one, m.mul(m.constant(3 * kGeluA), z2));
    Value dInner = m.mul(m.constant(kGeluC), slope);
    Value left = m.mul(half, m.add(one, t));
    Value oneMinusT2 = m.sub(one, m.mul(t, t));
    Value halfZ = m.mul(half, z);
    Value right = m.mul(halfZ, m.mul(oneMinusT2, dInner));
    return m.add(left, right);
  }
  }
  llvm_unreachable("unknown activation");
}

//===----------------------------------------------------------------------===//
// Feature maps
//===----------------------------------------------------------------------===//

Value mlir::ttt::mlpFeatures(TensorAlgebra &t, Value x, Value weight,
                             Value bias, Nonlinearity f) {
  Value z = t.matmul(x, weight, /*transposeB=*/false);
  if (!bias)
    return t.map({z}, [&](ElementwiseMath &m, ValueRange v) {
      return activation(m, f, v[0]);
    });
  return t.mapBroadcast({z}, bias, [&](ElementwiseMath &m, ValueRange v) {
    return activation(m, f, m.add(v[0], v[1]));
  });
}

Value mlir::ttt::swigluFeatures(TensorAlgebra &t, Value x, Value gate,
                                Value up) {
  Value g = t.matmul(x, gate, /*transposeB=*/false);
  Value u = t.matmul(x, up, /*transposeB=*/false);
  return t.map({g, u}, [](ElementwiseMath &m, ValueRange v) {
    return m.mul(silu(m, v[0]), v[1]);
  });
}

Value mlir::ttt::appendOne(TensorAlgebra &t, Value phi) {
  int64_t last = cast<RankedTensorType>(phi.getType()).getRank() - 1;
  return t.padEnd(phi, last, t.size(1), /*value=*/1.0);
}

//===----------------------------------------------------------------------===//
// Newton-Schulz
//===----------------------------------------------------------------------===//

/// The Newton-Schulz steps computed in the 16-bit type `compute`, each
/// intermediate rounded to it where PyTorch's bf16 tensors round: the norm,
/// the shifted norm and the quotient; per step A = X X^T, c A, (c A) A,
/// b A and its sum with that, (b A + c A A) X, a X and the new X.
static Value roundedNewtonSchulz(TensorAlgebra &t, Value x, int64_t steps,
                                 ArrayRef<double> coeffs, double eps,
                                 ArrayRef<int64_t> leading, FloatType compute) {
  auto round = [&](ElementwiseMath &m, Value v) {
    return m.roundTo(v, compute);
  };
  auto rounded = [&](Value v) {
    return t.map(
        {v}, [&](ElementwiseMath &m, ValueRange e) { return round(m, e[0]); });
  };
  x = rounded(x);
  x = t.mapWith({x}, t.sumSquaresInner(x), leading,
                [&](ElementwiseMath &m, ValueRange v) {
                  Value norm = round(m, m.sqrt(v[1]));
                  Value shifted = round(m, m.add(norm, m.constant(eps)));
                  return round(m, m.div(v[0], shifted));
                });
  for (int64_t step = 0; step < steps; ++step) {
    size_t base = coeffs.size() == 3 ? 0 : 3 * step;
    double a = coeffs[base], b = coeffs[base + 1], c = coeffs[base + 2];
    Value gram = rounded(t.matmul(x, x, /*transposeB=*/true));
    Value scaled = t.map({gram}, [&](ElementwiseMath &m, ValueRange v) {
      return round(m, m.mul(m.constant(c), v[0]));
    });
    Value square = rounded(t.matmul(scaled, gram, /*transposeB=*/false));
    Value poly = t.map({gram, square}, [&](ElementwiseMath &m, ValueRange v) {
      return round(m, m.add(round(m, m.mul(m.constant(b), v[0])), v[1]));
    });
    Value px = rounded(t.matmul(poly, x, /*transposeB=*/false));
    x = t.map({x, px}, [&](ElementwiseMath &m, ValueRange v) {
      return round(m, m.add(round(m, m.mul(m.constant(a), v[0])), v[1]));
    });
  }
  return x;
}

Value mlir::ttt::newtonSchulz(TensorAlgebra &t, Value x, int64_t steps,
                              ArrayRef<double> coeffs, double eps,
                              FloatType compute) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  bool transposed = type.getDimSize(rank - 2) > type.getDimSize(rank - 1) &&
                    !type.isDynamicDim(rank - 1);
  if (transposed)
    x = t.transposeInner(x);
  SmallVector<int64_t> leading;
  for (int64_t d = 0; d < rank - 2; ++d)
    leading.push_back(d);
  if (compute) {
    x = roundedNewtonSchulz(t, x, steps, coeffs, eps, leading, compute);
    return transposed ? t.transposeInner(x) : x;
  }
  x = t.mapWith({x}, t.sumSquaresInner(x), leading,
                [&](ElementwiseMath &m, ValueRange v) {
                  Value norm = m.sqrt(v[1]);
                  return m.div(v[0], m.add(norm, m.constant(eps)));
                });
  for (int64_t step = 0; step < steps; ++step) {
    size_t base = coeffs.size() == 3 ? 0 : 3 * step;
    double a = coeffs[base], b = coeffs[base + 1], c = coeffs[base + 2];
    Value gram = t.matmul(x, x, /*transposeB=*/true);
    Value gram2 = t.symmetricSquare(gram);
    Value poly = t.map({gram, gram2}, [&](ElementwiseMath &m, ValueRange v) {
      Value first = m.mul(m.constant(b), v[0]);
      return m.add(first, m.mul(m.constant(c), v[1]));
    });
    Value px = t.matmul(poly, x, /*transposeB=*/false);
    x = t.map({x, px}, [&](ElementwiseMath &m, ValueRange v) {
      return m.add(m.mul(m.constant(a), v[0]), v[1]);
    });
  }
  return transposed ? t.transposeInner(x) : x;
}

//===----------------------------------------------------------------------===//
// Chunk views
//===----------------------------------------------------------------------===//

Chunking mlir::ttt::chunkingOf(TensorAlgebra &t, Value x,
                               std::optional<int64_t> chunk) {
  Value tokens = t.dim(x, 2);
  if (!chunk)
    return {chunk, tokens, tokens, t.size(1)};
  return {chunk, tokens, t.size(*chunk), t.sizeCeilDiv(tokens, *chunk)};
}

Value mlir::ttt::chunked(TensorAlgebra &t, Value x, const Chunking &ch) {
  Value full = x;
  if (ch.size) {
    Value padded = t.sizeMul(ch.count, ch.length);
    full = t.padEnd(x, 2, t.sizeSub(padded, t.dim(x, 2)));
  }
  return t.splitAxis(full, 2, ch.count, ch.length, ch.size);
}

Value mlir::ttt::unchunked(TensorAlgebra &t, Value x, const Chunking &ch) {
  Value flat = t.mergeAxes(x, 2);
  if (!ch.size)
    return flat;
  return t.slice(flat, 2, t.size(0), ch.tokens);
}

//===----------------------------------------------------------------------===//
// The doubling scan
//===----------------------------------------------------------------------===//

Value mlir::ttt::applyTransition(TensorAlgebra &t, TransitionKind kind, Value a,
                                 Value x, Value y) {
  auto add = [](ElementwiseMath &m, ValueRange v) { return m.add(v[0], v[1]); };
  switch (kind) {
  case TransitionKind::none:
    return t.map({x, y}, add);
  case TransitionKind::decay:
    return t.mapWith({x, y}, a, {0, 1, 2},
                     [](ElementwiseMath &m, ValueRange v) {
                       return m.add(m.mul(v[2], v[0]), v[1]);
                     });
  case TransitionKind::matrix:
    return t.map({t.matmul(a, x, /*transposeB=*/false), y}, add);
  }
  llvm_unreachable("unknown transition kind");
}

std::pair<Value, Value> mlir::ttt::doublingScan(TensorAlgebra &t,
                                                TransitionKind kind, Value g,
                                                Value a) {
  bool transitions = kind != TransitionKind::none;
  Value count = t.dim(g, 2);
  SmallVector<Value> init{g};
  if (transitions)
    init.push_back(a);
  SmallVector<Value> final =
      t.doublingLoop(count, init, [&](Value d, ValueRange carried) {
        Value rest = t.sizeSub(count, d); // chunks d.. combine with 0..
        Value zero = t.size(0);
        Value s = carried[0];
        Value sHi = t.slice(s, 2, d, count), sLo = t.slice(s, 2, zero, rest);
        if (!transitions)
          return SmallVector<Value>{
              t.replaceFrom(s, 2, d, applyTransition(t, kind, {}, sLo, sHi))};
        Value cum = carried[1];
        Value aHi = t.slice(cum, 2, d, count),
              aLo = t.slice(cum, 2, zero, rest);
        Value combined = applyTransition(t, kind, aHi, sLo, sHi);
        Value composed =
            kind == TransitionKind::matrix
                ? t.matmul(aHi, aLo, /*transposeB=*/false)
                : t.map({aHi, aLo}, [](ElementwiseMath &m, ValueRange v) {
                    return m.mul(v[0], v[1]);
                  });
        return SmallVector<Value>{t.replaceFrom(s, 2, d, combined),
                                  t.replaceFrom(cum, 2, d, composed)};
      });
  return {final[0], transitions ? final[1] : Value()};
}
