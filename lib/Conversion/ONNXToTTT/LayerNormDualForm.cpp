//===- LayerNormDualForm.cpp - TTT-Linear's dual form as ttt.kvb_layer ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads ttt-lm-pytorch's TTT-Linear. Each chunk (mini-batch) computes, with
// `eta_ij = token_eta_i * lr_j` and `G = LNbwd(XK W + b, target)` the
// gradient of `1/2 |gamma LN(XK W + b) + beta - target|^2` by its argument:
//
//   Zbar = XQ W - (eta * tril(XQ XK^T)) G + b - tril(eta) G
//   out  = [XQ +] gamma LN(Zbar) + beta
//   W'   = W - (eta_last * XK)^T G,    b' = b - sum_i eta_last,i G_i
//
// which is ttt.kvb_layer's `causal` order with the `layernorm_mse` loss, a
// trained bias and per-position factors `token_eta`. How the sums associate,
// the order of products and where constant factors sit do not matter.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseFunctions.h"
#include "LayerMatcher.h"
#include "LoopBounds.h"
#include "Normalize.h"
#include "SwiGLUForms.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

namespace {

/// A value computed from scalar constants only (`Reciprocal(16) * 1`, the
/// exporter's spelling of `1.0 / D`), or from the extent of a tensor's last
/// axis (`x.shape[-1]`).
std::optional<double> scalarValue(Value value) {
  if (std::optional<double> constant = scalarConstant(value))
    return constant;
  auto node = skipLayout(value).getDefiningOp<onnx::NodeOp>();
  if (!node || !node.getDomain().empty())
    return std::nullopt;
  auto inputs = node.getInputs();
  StringRef op = node.getOpType();
  // `x.shape[-1]` (torch's `D = x.shape[-1]`), as a Gather or a Slice of
  // the shape.
  onnx::NodeOp shapeOf =
      inputs.empty() ? nullptr : nodeOf(skipLayout(inputs[0]), "Shape");
  if ((op == "Gather" || op == "Slice") && shapeOf && inputs.size() > 1) {
    std::optional<SmallVector<int64_t>> index = intConstant(inputs[1]);
    std::optional<int64_t> rank = rankOf(shapeOf.getInputs()[0]);
    bool last = index && index->size() == 1 &&
                (index->front() == -1 || (rank && index->front() == *rank - 1));
    if (op == "Slice" && last) {
      std::optional<SmallVector<int64_t>> ends = intConstant(inputs[2]);
      if (!ends || ends->size() != 1 || (rank && ends->front() < *rank))
        return std::nullopt;
    }
    if (last)
      if (std::optional<int64_t> dim = lastDimOf(shapeOf.getInputs()[0]))
        return static_cast<double>(*dim);
  }
  if (op == "Gather" && nodeOf(inputs[0], "Shape")) {
    std::optional<SmallVector<int64_t>> dims = shapeConstant(inputs[0]);
    std::optional<SmallVector<int64_t>> index = intConstant(inputs[1]);
    if (!dims || !index || index->size() != 1)
      return std::nullopt;
    int64_t at =
        index->front() < 0 ? index->front() + dims->size() : index->front();
    if (at < 0 || at >= static_cast<int64_t>(dims->size()) ||
        ShapedType::isDynamic((*dims)[at]))
      return std::nullopt;
    return static_cast<double>((*dims)[at]);
  }
  if (op == "Cast" && inputs.size() == 1)
    return scalarValue(inputs[0]);
  if (inputs.size() == 1) {
    std::optional<double> x = scalarValue(inputs[0]);
    if (!x)
      return std::nullopt;
    if (op == "Reciprocal" && *x != 0.0)
      return 1.0 / *x;
    if (op == "Neg")
      return -*x;
    if (op == "Sqrt" && *x >= 0.0)
      return std::sqrt(*x);
    return std::nullopt;
  }
  if (inputs.size() != 2)
    return std::nullopt;
  std::optional<double> a = scalarValue(inputs[0]);
  std::optional<double> b = a ? scalarValue(inputs[1]) : std::nullopt;
  if (!b)
    return std::nullopt;
  if (op == "Mul")
    return *a * *b;
  if (op == "Div" && *b != 0.0)
    return *a / *b;
  if (op == "Add")
    return *a + *b;
  if (op == "Sub")
    return *a - *b;
  return std::nullopt;
}

bool nearly(double a, double b) {
  return std::abs(a - b) <= 1e-6 * std::max({1.0, std::abs(a), std::abs(b)});
}

bool same(Value a, Value b) { return a && b && skipLayout(a) == skipLayout(b); }

/// One term of a sum and its constant coefficient.
struct Term {
  Value value;
  double coeff;
};

/// Spreads `coeff * value` over its sums and differences; constant factors
/// (Mul, Div, Neg) multiply into the coefficients. The `atoms` (a chunk's
/// start weights, themselves the previous chunk's sums) are not spread.
void spreadSum(Value value, double coeff, SmallVectorImpl<Term> &terms,
               ArrayRef<Value> atoms = {}) {
  value = skipLayout(value);
  if (llvm::any_of(atoms, [&](Value atom) { return same(atom, value); })) {
    terms.push_back({value, coeff});
    return;
  }
  if (onnx::NodeOp add = nodeOf(value, "Add")) {
    spreadSum(add.getInputs()[0], coeff, terms, atoms);
    spreadSum(add.getInputs()[1], coeff, terms, atoms);
    return;
  }
  if (onnx::NodeOp sub = nodeOf(value, "Sub")) {
    spreadSum(sub.getInputs()[0], coeff, terms, atoms);
    spreadSum(sub.getInputs()[1], -coeff, terms, atoms);
    return;
  }
  if (onnx::NodeOp neg = nodeOf(value, "Neg")) {
    spreadSum(neg.getInputs()[0], -coeff, terms, atoms);
    return;
  }
  if (onnx::NodeOp div = nodeOf(value, "Div")) {
    std::optional<double> d = scalarValue(div.getInputs()[1]);
    if (d && *d != 0.0) {
      spreadSum(div.getInputs()[0], coeff / *d, terms, atoms);
      return;
    }
  }
  if (onnx::NodeOp mul = nodeOf(value, "Mul")) {
    for (unsigned i = 0; i < 2; ++i)
      if (std::optional<double> c = scalarValue(mul.getInputs()[i])) {
        spreadSum(mul.getInputs()[1 - i], coeff * *c, terms, atoms);
        return;
      }
  }
  terms.push_back({value, coeff});
}

/// The dim of `value` that is `fromEnd` from the end, if static.
std::optional<int64_t> dimFromEnd(Value value, int64_t fromEnd) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() < fromEnd ||
      type.isDynamicDim(type.getRank() - fromEnd))
    return std::nullopt;
  return type.getDimSize(type.getRank() - fromEnd);
}

/// True if `value`'s last axis has one element: by its type, or because a
/// Reshape's target shape (dims joined by Concat) ends in a constant 1.
bool lastExtentIsOne(Value value) {
  if (dimFromEnd(value, 1) == 1)
    return true;
  onnx::NodeOp reshape = nodeOf(value, "Reshape");
  if (!reshape)
    return false;
  Value shape = reshape.getInputs()[1];
  if (onnx::NodeOp concat = nodeOf(shape, "Concat"))
    shape = concat.getInputs().back();
  std::optional<SmallVector<int64_t>> dims = intConstant(shape);
  return dims && !dims->empty() && dims->back() == 1;
}

/// True if `reduce` reduces the last axis of its input (or the one
/// `fromEnd` from the end) and keeps it, or drops it (`keepsAxis` false: a
/// layout node puts it back).
bool reducesLastAxis(onnx::NodeOp reduce, int64_t fromEnd = 1,
                     bool keepsAxis = true) {
  if (!reduce || (keepsAxis && intAttr(reduce, "keepdims").value_or(1) != 1))
    return false;
  std::optional<SmallVector<int64_t>> axes = reduceAxes(reduce);
  std::optional<int64_t> rank = rankOf(reduce.getInputs()[0]);
  return axes && axes->size() == 1 &&
         ((*axes)[0] == -fromEnd || (rank && (*axes)[0] == *rank - fromEnd));
}

/// `x / y` or `x * Reciprocal(y)`: returns (x, y).
std::optional<std::pair<Value, Value>> matchQuotient(Value value) {
  value = skipLayout(value);
  if (onnx::NodeOp div = nodeOf(value, "Div"))
    return std::make_pair(div.getInputs()[0], div.getInputs()[1]);
  std::optional<std::pair<Value, Value>> quotient;
  matchCommutative(value, "Mul", [&](Value x, Value inverse) {
    onnx::NodeOp reciprocal = nodeOf(skipLayout(inverse), "Reciprocal");
    if (!reciprocal)
      return false;
    quotient = std::make_pair(x, reciprocal.getInputs()[0]);
    return true;
  });
  return quotient;
}

/// `x - mean(x)` over the last axis: returns x.
Value centeredInput(Value value) {
  onnx::NodeOp sub = nodeOf(skipLayout(value), "Sub");
  if (!sub)
    return nullptr;
  onnx::NodeOp mean = nodeOf(skipLayout(sub.getInputs()[1]), "ReduceMean");
  if (!reducesLastAxis(mean) || !same(mean.getInputs()[0], sub.getInputs()[0]))
    return nullptr;
  return sub.getInputs()[0];
}

/// The biased variance of `x` over the last axis: the mean of the squares
/// of `x - mean(x)` (`d * d` or `Pow(d, 2)`).
bool isVarianceOf(Value value, Value x) {
  onnx::NodeOp mean = nodeOf(skipLayout(value), "ReduceMean");
  // torch.var's export drops the axis and reshapes it back.
  if (!reducesLastAxis(mean) &&
      (dimFromEnd(value, 1) != 1 ||
       !reducesLastAxis(mean, 1, /*keepsAxis=*/false)))
    return false;
  Value square = skipLayout(mean.getInputs()[0]);
  if (onnx::NodeOp pow = nodeOf(square, "Pow"))
    return scalarValue(pow.getInputs()[1]) == 2.0 &&
           same(centeredInput(pow.getInputs()[0]), x);
  onnx::NodeOp mul = nodeOf(square, "Mul");
  return mul && same(centeredInput(mul.getInputs()[0]), x) &&
         same(centeredInput(mul.getInputs()[1]), x);
}

/// `gamma * LN(x) + beta` over the last axis.
struct LayerNormOf {
  Value x, gamma, beta;
  double eps = 0.0;
  /// `(x - mean) / std` and `std`, when the model computes them as nodes.
  Value normalized, std;
};

/// `(x - mean(x)) / sqrt(var(x) + eps)`: fills x, eps, normalized and std.
bool matchNormalized(Value value, LayerNormOf &ln) {
  std::optional<std::pair<Value, Value>> quotient = matchQuotient(value);
  if (!quotient)
    return false;
  Value x = centeredInput(quotient->first);
  onnx::NodeOp sqrt = nodeOf(skipLayout(quotient->second), "Sqrt");
  if (!x || !sqrt)
    return false;
  std::optional<double> eps;
  matchCommutative(skipLayout(sqrt.getInputs()[0]), "Add",
                   [&](Value var, Value e) {
                     eps = scalarValue(e);
                     return eps && isVarianceOf(var, x);
                   });
  if (!eps)
    return false;
  ln.x = x;
  ln.eps = *eps;
  ln.normalized = skipLayout(value);
  ln.std = skipLayout(quotient->second);
  return true;
}

/// `gamma * normalized + beta` (LayerNormalization or its steps).
std::optional<LayerNormOf> matchLayerNorm(Value value) {
  value = skipLayout(value);
  LayerNormOf ln;
  if (onnx::NodeOp node = nodeOf(value, "LayerNormalization")) {
    auto inputs = node.getInputs();
    std::optional<int64_t> rank = rankOf(inputs[0]);
    int64_t axis = intAttr(node, "axis").value_or(-1);
    if (inputs.size() < 3 || isa<NoneType>(inputs[2].getType()) ||
        !(axis == -1 || (rank && axis == *rank - 1)))
      return std::nullopt;
    auto eps = dyn_cast_or_null<FloatAttr>(node.getONNXAttr("epsilon"));
    ln.x = inputs[0];
    ln.gamma = inputs[1];
    ln.beta = inputs[2];
    ln.eps = eps ? eps.getValueAsDouble() : 1e-5;
    return ln;
  }
  bool found = matchCommutative(value, "Add", [&](Value scaled, Value beta) {
    return matchCommutative(skipLayout(scaled), "Mul",
                            [&](Value gamma, Value normalized) {
                              if (!matchNormalized(normalized, ln))
                                return false;
                              ln.gamma = gamma;
                              ln.beta = beta;
                              return true;
                            });
  });
  if (!found)
    return std::nullopt;
  return ln;
}

/// True if two LayerNorms have the same scale, shift and epsilon.
bool sameParameters(const LayerNormOf &a, const LayerNormOf &b) {
  return sameNumbers(a.gamma, b.gamma) && sameNumbers(a.beta, b.beta) &&
         nearly(a.eps, b.eps);
}

/// ttt-lm-pytorch's `ln_fused_l2_bwd(x, target)`: the gradient of
/// `1/2 |gamma LN(x) + beta - target|^2` by x,
/// `(1/D) (D gx - sum(gx) - xhat sum(gx xhat)) / std` with
/// `gx = (gamma xhat + beta - target) gamma`.
struct LayerNormGradient {
  LayerNormOf ln;
  Value target;
};

std::optional<LayerNormGradient> matchLayerNormGradient(Value value) {
  SmallVector<Term> outer;
  spreadSum(value, 1.0, outer);
  if (outer.size() != 1)
    return std::nullopt;
  std::optional<std::pair<Value, Value>> quotient =
      matchQuotient(outer.front().value);
  if (!quotient)
    return std::nullopt;
  SmallVector<Term> terms;
  spreadSum(quotient->first, outer.front().coeff, terms);
  if (terms.size() != 3)
    return std::nullopt;
  // Which term is which: sum(gx), xhat * sum(gx * xhat), and gx.
  std::optional<Term> sumTerm, projection, direct;
  Value projected, projectedOnto;
  for (const Term &term : terms) {
    onnx::NodeOp sum = nodeOf(term.value, "ReduceSum");
    if (sum && reducesLastAxis(sum) && !sumTerm) {
      sumTerm = term;
      continue;
    }
    bool isProjection =
        !projection &&
        matchCommutative(term.value, "Mul", [&](Value xhat, Value s) {
          onnx::NodeOp inner = nodeOf(skipLayout(s), "ReduceSum");
          onnx::NodeOp product =
              reducesLastAxis(inner)
                  ? nodeOf(skipLayout(inner.getInputs()[0]), "Mul")
                  : nullptr;
          if (!product)
            return false;
          return matchCommutative(product.getResult(0), "Mul",
                                  [&](Value gx, Value xhat2) {
                                    if (!same(xhat, xhat2))
                                      return false;
                                    projected = gx;
                                    projectedOnto = xhat;
                                    return true;
                                  });
        });
    if (isProjection) {
      projection = term;
      continue;
    }
    if (direct)
      return std::nullopt;
    direct = term;
  }
  if (!sumTerm || !projection || !direct)
    return std::nullopt;
  Value gx = direct->value;
  onnx::NodeOp summed = nodeOf(sumTerm->value, "ReduceSum");
  if (!same(summed.getInputs()[0], gx) || !same(projected, gx))
    return std::nullopt;
  // gx = (y - target) * gamma, y = gamma * xhat + beta.
  std::optional<LayerNormGradient> gradient;
  matchCommutative(skipLayout(gx), "Mul", [&](Value residual, Value gamma) {
    onnx::NodeOp sub = nodeOf(skipLayout(residual), "Sub");
    std::optional<LayerNormOf> ln =
        sub ? matchLayerNorm(sub.getInputs()[0]) : std::nullopt;
    if (!ln || !ln->normalized || !sameNumbers(ln->gamma, gamma))
      return false;
    gradient = LayerNormGradient{*ln, sub.getInputs()[1]};
    return true;
  });
  if (!gradient || !same(projectedOnto, gradient->ln.normalized) ||
      !same(quotient->second, gradient->ln.std))
    return std::nullopt;
  std::optional<int64_t> features = lastDimOf(gradient->ln.x);
  if (!features)
    return std::nullopt;
  double d = static_cast<double>(*features);
  if (!nearly(direct->coeff, 1.0) || !nearly(sumTerm->coeff, -1.0 / d) ||
      !nearly(projection->coeff, -1.0 / d))
    return std::nullopt;
  return gradient;
}

/// A column of per-token learning rates of a chunk, as a row `[.., 1, n]`:
/// a cut of `lr` whose last axis is indexed (Gather) or cut to one column,
/// or a cut of rates whose time axis is the last (`timeLast` is set).
std::optional<SliceChain> rateWindow(Value value, bool *timeLast = nullptr) {
  value = skipLayout(value);
  if (onnx::NodeOp gather = nodeOf(value, "Gather")) {
    std::optional<int64_t> rank = rankOf(gather.getInputs()[0]);
    int64_t axis = intAttr(gather, "axis").value_or(0);
    std::optional<SmallVector<int64_t>> index =
        intConstant(gather.getInputs()[1]);
    if (!rank || (axis != -1 && axis != *rank - 1) || !index ||
        index->size() != 1)
      return std::nullopt;
    std::optional<SliceChain> chain =
        tokenWindow(gather.getInputs()[0], nullptr);
    if (chain)
      chain->column = index->front();
    return chain;
  }
  std::optional<SliceChain> chain = tokenWindow(value, nullptr);
  // A cut of rates with one column (`[B*H, T, 1]`) is that column.
  if (chain && !chain->column && dimFromEnd(chain->root, 1) == 1)
    chain->column = 0;
  if (chain && chain->column)
    return chain;
  // Rates `[B, H, T]` (one per token, time last), cut to the chunk.
  chain = tokenWindow(value, nullptr, /*timeLast=*/true);
  if (!chain)
    return std::nullopt;
  if (timeLast)
    *timeLast = true;
  return chain;
}

/// The length of a cut whose end is computed at run time.
constexpr int64_t kUnknownLength = -1;

/// The first n entries of a vector (`token_eta[:n]`): returns the vector
/// and n, or (vector, its length) for the whole vector. With `dynamicEnd`,
/// an n computed at run time is returned there (and kUnknownLength as n).
std::optional<std::pair<Value, int64_t>> vectorPrefix(Value value,
                                                      Value *dynamicEnd) {
  value = skipLayout(value);
  if (onnx::NodeOp slice = nodeOf(value, "Slice")) {
    auto inputs = slice.getInputs();
    std::optional<SmallVector<int64_t>> starts = intConstant(inputs[1]);
    std::optional<SmallVector<int64_t>> ends = intConstant(inputs[2]);
    if (inputs.size() > 3 && !isa<NoneType>(inputs[3].getType())) {
      std::optional<SmallVector<int64_t>> axes = intConstant(inputs[3]);
      if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))
        return std::nullopt;
    }
    if (inputs.size() > 4 && !isa<NoneType>(inputs[4].getType())) {
      std::optional<SmallVector<int64_t>> steps = intConstant(inputs[4]);
      if (!steps || steps->size() != 1 || (*steps)[0] != 1)
        return std::nullopt;
    }
    auto type = dyn_cast<RankedTensorType>(inputs[0].getType());
    if (!starts || starts->size() != 1 || (*starts)[0] != 0 || !type ||
        type.getRank() != 1 || type.isDynamicDim(0))
      return std::nullopt;
    // A scripted export cuts token_eta[:n] with n computed in its Loop.
    if (!ends && dynamicEnd) {
      *dynamicEnd = inputs[2];
      return std::make_pair(inputs[0], kUnknownLength);
    }
    if (!ends || ends->size() != 1)
      return std::nullopt;
    return std::make_pair(inputs[0], std::min((*ends)[0], type.getDimSize(0)));
  }
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() != 1 || type.isDynamicDim(0))
    return std::nullopt;
  return std::make_pair(value, type.getDimSize(0));
}

/// The f32 numbers of a constant (splat or not) and its shape.
std::optional<std::pair<ShapedType, SmallVector<double>>>
constantValues(Value value) {
  ElementsAttr elements;
  if (auto init = value.getDefiningOp<onnx::InitializerOp>())
    elements = init.getValue();
  else if (onnx::NodeOp node = nodeOf(value, "Constant"))
    elements = dyn_cast_or_null<ElementsAttr>(node.getONNXAttr("value"));
  auto type = elements ? dyn_cast<ShapedType>(elements.getType()) : nullptr;
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return std::nullopt;
  SmallVector<double> numbers;
  if (auto dense = dyn_cast<DenseElementsAttr>(elements)) {
    for (float x : dense.getValues<float>())
      numbers.push_back(x);
    return std::make_pair(type, numbers);
  }
  auto bytes = constantBytes(value);
  if (!bytes || bytes->second.size() !=
                    static_cast<size_t>(type.getNumElements()) * sizeof(float))
    return std::nullopt;
  ArrayRef<float> floats(reinterpret_cast<const float *>(bytes->second.data()),
                         type.getNumElements());
  numbers.assign(floats.begin(), floats.end());
  return std::make_pair(type, numbers);
}

/// A constant `[.., n, 1]` whose every `[n]` column is the same vector (the
/// exporter folded `token_eta` and broadcast it): that vector.
std::optional<SmallVector<double>> constantColumn(Value value) {
  auto constant = constantValues(value);
  if (!constant || constant->first.getRank() < 2 ||
      constant->first.getShape().back() != 1)
    return std::nullopt;
  int64_t n = constant->first.getShape().drop_back().back();
  const SmallVector<double> &numbers = constant->second;
  for (size_t i = n; i < numbers.size(); ++i)
    if (numbers[i] != numbers[i % n])
      return std::nullopt;
  return SmallVector<double>(numbers.begin(), numbers.begin() + n);
}

/// Entry `index` of the vector `vector`, which may be reshaped to more axes
/// of size 1: a Gather or a one-wide Slice of its long axis.
bool isVectorEntry(Value value, Value vector, int64_t index) {
  value = skipLayout(value);
  onnx::NodeOp node = nodeOf(value, "Gather");
  bool gather = static_cast<bool>(node);
  if (!node)
    node = nodeOf(value, "Slice");
  if (!node || !same(node.getInputs()[0], vector))
    return false;
  auto inputs = node.getInputs();
  auto type = dyn_cast<RankedTensorType>(inputs[0].getType());
  if (!type || !type.hasStaticShape())
    return false;
  std::optional<int64_t> longAxis;
  for (auto [axis, dim] : llvm::enumerate(type.getShape())) {
    if (dim == 1)
      continue;
    if (longAxis)
      return false;
    longAxis = axis;
  }
  if (!longAxis)
    return false;
  int64_t rank = type.getRank(), length = type.getDimSize(*longAxis);
  std::optional<int64_t> axis = 0;
  if (gather) {
    axis = intAttr(node, "axis").value_or(0);
  } else if (inputs.size() > 3 && !isa<NoneType>(inputs[3].getType())) {
    std::optional<SmallVector<int64_t>> axes = intConstant(inputs[3]);
    axis = axes && axes->size() == 1 ? std::optional<int64_t>(axes->front())
                                     : std::nullopt;
  }
  if (!axis || (*axis < 0 ? *axis + rank : *axis) != *longAxis)
    return false;
  auto position = [&](int64_t at) { return at < 0 ? at + length : at; };
  std::optional<SmallVector<int64_t>> starts = intConstant(inputs[1]);
  if (!starts || starts->size() != 1 || position(starts->front()) != index)
    return false;
  if (gather)
    return true;
  std::optional<SmallVector<int64_t>> ends = intConstant(inputs[2]);
  return ends && ends->size() == 1 &&
         std::min(position(ends->front()), length) == index + 1;
}

/// One layer's dual-form sum `A W + b - (eta * tril(A K^T)) G - tril(eta) G`:
/// the weights after the gradients of tokens 1..i applied to query i.
struct DualSum {
  /// A: what the weight is applied to; K: what the scores read as keys.
  Value applied, keys;
  Value w, b, gradient, eta;
  /// The coefficient of the gradient terms (-1 for plain descent).
  double step = 0.0;
};

/// What one chunk of the dual form reads.
struct DualChunk {
  SliceChain q, k, v;
  std::optional<SliceChain> kSubtracted, lr;
  /// The model's layers in order: one (TTT-Linear) or two (TTT-MLP).
  SmallVector<DualSum, 2> layers;
  /// TTT-MLP: gelu(XK W1 + b1), the keys of its second layer.
  Value hidden;
  Value eta, tokenEta;
  /// `token_eta[:n]` when the exporter folded it into a constant.
  SmallVector<double> tokenEtaValues;
  /// The chunk's length n, or kUnknownLength with `lengthValue` the n a
  /// Loop computes.
  int64_t length = 0;
  Value lengthValue;
  bool ratesTimeLast = false;
  bool residual = false;
  LayerNormOf ln;
  double step = 0.0;
};

class DualFormReader {
public:
  DualFormReader(const FoundLayer &layer, std::string &why)
      : layer(layer), why(why) {}

  FailureOr<LayerConfig> read();

private:
  LogicalResult fail(const Twine &reason) {
    why = reason.str();
    return failure();
  }
  LogicalResult readChunk(const ChunkStep &step, DualChunk &chunk);
  LogicalResult readLayers(Value zbar, DualChunk &chunk, ArrayRef<Value> state);
  LogicalResult readEta(Value eta, DualChunk &chunk);
  FailureOr<DualSum> readSum(Value zbar, ArrayRef<Value> state);
  LogicalResult checkUpdate(const DualChunk &chunk, const DualSum &sum,
                            Value keys, Value nextW, Value nextB);
  bool isLastEta(Value value, const DualChunk &chunk);
  bool isWindow(Value value, std::optional<SliceChain> &into);
  bool isKeyWindow(Value value, const DualChunk &chunk);
  LogicalResult assignSlots(const DualChunk &first);
  FailureOr<LayerConfig> readLoop();
  FailureOr<LayerConfig> configFor(const DualChunk &first,
                                   ArrayRef<Value> initial);

  const FoundLayer &layer;
  std::string &why;
  /// Each layer's weight and bias slot in the found layer's weights.
  SmallVector<unsigned> wSlots, bSlots;
};

bool DualFormReader::isWindow(Value value, std::optional<SliceChain> &into) {
  into = tokenWindow(skipLayout(value), nullptr);
  return into.has_value();
}

LogicalResult DualFormReader::readEta(Value eta, DualChunk &chunk) {
  bool found =
      matchCommutative(skipLayout(eta), "Mul", [&](Value tokens, Value rates) {
        Value end;
        std::optional<std::pair<Value, int64_t>> prefix =
            vectorPrefix(tokens, &end);
        std::optional<SmallVector<double>> folded =
            prefix ? std::nullopt : constantColumn(tokens);
        bool timeLast = false;
        std::optional<SliceChain> lr = rateWindow(rates, &timeLast);
        // token_eta varies along the rows (queries), lr along the columns.
        if ((!prefix && !folded) || !lr || !lastExtentIsOne(tokens) ||
            dimFromEnd(rates, 2) != 1)
          return false;
        if (prefix) {
          chunk.tokenEta = prefix->first;
          chunk.length = prefix->second;
          chunk.lengthValue = end;
        } else {
          chunk.tokenEtaValues = *folded;
          chunk.length = folded->size();
        }
        chunk.lr = lr;
        chunk.ratesTimeLast = timeLast;
        return true;
      });
  if (!found)
    return fail("its step sizes are not token_eta[i] * lr[j] (a column of "
                "per-position factors times a row of per-token rates)");
  chunk.eta = skipLayout(eta);
  return success();
}

FailureOr<DualSum> DualFormReader::readSum(Value zbar, ArrayRef<Value> state) {
  SmallVector<Term> terms;
  spreadSum(zbar, 1.0, terms, state);
  // A W, b, (eta * tril(A K^T)) G and tril(eta) G, in any order.
  std::optional<Term> apply, bias, intra, biasIntra;
  DualSum sum;
  Value scores;
  for (const Term &term : terms) {
    onnx::NodeOp matmul = nodeOf(term.value, "MatMul");
    if (!matmul) {
      if (bias)
        return fail("its output adds more than the bias to the dual form");
      bias = term;
      continue;
    }
    Value left = matmul.getInputs()[0];
    if (Value masked = lowerTriangleOf(left)) {
      if (biasIntra)
        return fail("its output has two tril(eta) G terms");
      biasIntra = term;
      sum.eta = skipLayout(masked);
      sum.gradient = skipLayout(matmul.getInputs()[1]);
      continue;
    }
    bool scored =
        matchCommutative(skipLayout(left), "Mul", [&](Value eta, Value masked) {
          Value inner = lowerTriangleOf(masked);
          if (!inner)
            return false;
          scores = inner;
          return true;
        });
    if (scored) {
      if (intra)
        return fail("its output has two causal terms");
      intra = term;
      continue;
    }
    if (apply)
      return fail("its output applies two weights to the queries");
    apply = term;
  }
  if (!apply || !bias || !intra || !biasIntra)
    return fail("its output is not A W + b - (eta * tril(A K^T)) G - "
                "tril(eta) G (TTT-Linear's dual form)");
  if (!nearly(apply->coeff, 1.0) || !nearly(bias->coeff, 1.0) ||
      !nearly(intra->coeff, biasIntra->coeff))
    return fail("its dual form weighs its terms unlike one gradient step");
  sum.step = intra->coeff;
  sum.b = bias->value;
  onnx::NodeOp applied = nodeOf(apply->value, "MatMul");
  sum.applied = applied.getInputs()[0];
  sum.w = skipLayout(applied.getInputs()[1]);
  onnx::NodeOp intraProduct = nodeOf(intra->value, "MatMul");
  if (!same(intraProduct.getInputs()[1], sum.gradient))
    return fail("its causal terms read two different gradients");
  // eta * tril(A K^T): the same eta as tril(eta) G's.
  bool etaMatches =
      matchCommutative(skipLayout(intraProduct.getInputs()[0]), "Mul",
                       [&](Value eta, Value masked) {
                         return same(eta, sum.eta) && lowerTriangleOf(masked);
                       });
  if (!etaMatches)
    return fail("its causal terms weigh the scores and the bias by "
                "different step sizes");
  onnx::NodeOp product = nodeOf(skipLayout(scores), "MatMul");
  sum.keys =
      product ? transposedInput(skipLayout(product.getInputs()[1])) : Value();
  if (!product || !sum.keys || !same(product.getInputs()[0], sum.applied))
    return fail("its causal term does not score what the weight is applied "
                "to against the chunk's keys");
  return sum;
}

bool DualFormReader::isLastEta(Value value, const DualChunk &chunk) {
  value = skipLayout(value);
  int64_t last = chunk.length - 1;
  // eta[.., -1, :]: the last row of eta (Gather or a one-wide Slice).
  auto isLastRow = [&](Value row) {
    row = skipLayout(row);
    onnx::NodeOp node = nodeOf(row, "Gather");
    if (!node)
      node = nodeOf(row, "Slice");
    if (!node || !same(node.getInputs()[0], chunk.eta))
      return false;
    // The row axis of eta [.., n, n] is its second-to-last.
    std::optional<int64_t> rank = rankOf(node.getInputs()[0]);
    std::optional<int64_t> axis;
    if (nodeOf(row, "Gather")) {
      axis = intAttr(node, "axis").value_or(0);
    } else if (node.getInputs().size() > 3) {
      std::optional<SmallVector<int64_t>> axes =
          intConstant(node.getInputs()[3]);
      if (axes && axes->size() == 1)
        axis = axes->front();
    }
    if (!rank || !axis || (*axis != -2 && *axis != *rank - 2))
      return false;
    std::optional<SmallVector<int64_t>> at = intConstant(node.getInputs()[1]);
    return at && at->size() == 1 && (at->front() == -1 || at->front() == last);
  };
  if (isLastRow(value))
    return true;
  // token_eta[n-1] * lr[j] (the exporter cut the product's last row).
  auto isTokenEntry = [&](Value entry) {
    entry = skipLayout(entry);
    if (!chunk.tokenEtaValues.empty()) {
      auto constant = constantValues(entry);
      return constant && llvm::all_of(constant->second, [&](double x) {
               return x == chunk.tokenEtaValues[last];
             });
    }
    onnx::NodeOp node = nodeOf(entry, "Slice");
    if (!node)
      node = nodeOf(entry, "Gather");
    if (!node)
      return false;
    Value vector = node.getInputs()[0];
    std::optional<std::pair<Value, int64_t>> prefix =
        vectorPrefix(vector, nullptr);
    return chunk.length != kUnknownLength && prefix &&
           same(prefix->first, chunk.tokenEta) && prefix->second > last &&
           isVectorEntry(entry, vector, last);
  };
  return matchCommutative(value, "Mul", [&](Value entry, Value rates) {
    std::optional<SliceChain> lr = rateWindow(rates);
    return isTokenEntry(entry) && lr && chunk.lr &&
           lr->root == chunk.lr->root && sameWindow(*lr, *chunk.lr) &&
           lr->column == chunk.lr->column;
  });
}

bool DualFormReader::isKeyWindow(Value value, const DualChunk &chunk) {
  std::optional<SliceChain> keys;
  return isWindow(value, keys) && keys->root == chunk.k.root &&
         sameWindow(*keys, chunk.k);
}

LogicalResult DualFormReader::checkUpdate(const DualChunk &chunk,
                                          const DualSum &sum, Value keys,
                                          Value nextW, Value nextB) {
  auto stepOf = [&](Value next, Value prev,
                    llvm::function_ref<bool(Value)> isDelta) {
    SmallVector<Term> terms;
    spreadSum(next, 1.0, terms, {prev});
    if (terms.size() != 2)
      return false;
    for (unsigned i = 0; i < 2; ++i)
      if (same(terms[i].value, prev) && nearly(terms[i].coeff, 1.0) &&
          nearly(terms[1 - i].coeff, sum.step) && isDelta(terms[1 - i].value))
        return true;
    return false;
  };
  // (eta_last * K)^T G
  bool weight = stepOf(nextW, sum.w, [&](Value delta) {
    onnx::NodeOp matmul = nodeOf(delta, "MatMul");
    Value scaled =
        matmul ? transposedInput(skipLayout(matmul.getInputs()[0])) : Value();
    if (!scaled || !same(matmul.getInputs()[1], sum.gradient))
      return false;
    return matchCommutative(skipLayout(scaled), "Mul", [&](Value e, Value k) {
      return isLastEta(e, chunk) &&
             (keys ? same(k, keys) : isKeyWindow(k, chunk));
    });
  });
  if (!weight)
    return fail("its weight update is not W - (eta_last * K)^T G with the "
                "gradient and step sizes of its output");
  // sum over the tokens of eta_last * G
  bool bias = stepOf(nextB, sum.b, [&](Value delta) {
    onnx::NodeOp total = nodeOf(delta, "ReduceSum");
    if (!reducesLastAxis(total, /*fromEnd=*/2))
      return false;
    return matchCommutative(
        skipLayout(total.getInputs()[0]), "Mul", [&](Value e, Value g) {
          return same(g, sum.gradient) && isLastEta(e, chunk);
        });
  });
  if (!bias)
    return fail("its bias update is not b - sum_i eta_last,i G_i with the "
                "gradient and step sizes of its output");
  return success();
}

/// TTT-MLP's two layers: the output sum applies its weight to gelu of the
/// first layer's sum, and scores against gelu(XK W1 + b1).
LogicalResult DualFormReader::readLayers(Value zbar, DualChunk &chunk,
                                         ArrayRef<Value> state) {
  FailureOr<DualSum> top = readSum(zbar, state);
  if (failed(top))
    return failure();
  std::optional<SliceChain> q;
  if (isWindow(top->applied, q)) {
    chunk.layers = {*top};
    return success();
  }
  Value inner = elementwiseArgument(top->applied, geluTanh);
  if (!inner) {
    // A tanh gelu with another constant is another function (torch-mlir
    // lowers gelu so): the remark names it rather than finding no gelu.
    if (std::optional<double> scale = misscaledGeluTanh(top->applied))
      return fail(llvm::formatv("its activation is gelu's tanh approximation "
                                "with sqrt(2/pi) written {0:F7} instead of "
                                "0.7978846 (as torch-mlir lowers gelu), so it "
                                "is not gelu and the layer op would compute "
                                "another function",
                                *scale)
                      .str());
    return fail("its output applies the weight to something other than a "
                "chunk of the queries or gelu of a dual form");
  }
  FailureOr<DualSum> first = readSum(inner, state);
  if (failed(first))
    return failure();
  if (!same(first->eta, top->eta) || !nearly(first->step, top->step))
    return fail("its two layers take different steps");
  chunk.hidden = skipLayout(top->keys);
  chunk.layers = {*first, *top};
  return success();
}

LogicalResult DualFormReader::readChunk(const ChunkStep &step,
                                        DualChunk &chunk) {
  Value out = skipLayout(step.output);
  std::optional<SliceChain> residualQ;
  std::optional<LayerNormOf> ln = matchLayerNorm(out);
  if (!ln) {
    matchCommutative(out, "Add", [&](Value x, Value normed) {
      ln = matchLayerNorm(normed);
      if (!ln || !isWindow(x, residualQ)) {
        ln.reset();
        return false;
      }
      chunk.residual = true;
      return true;
    });
  }
  if (!ln)
    return fail("its chunks' outputs are not gamma * LN(Zbar) + beta (or the "
                "queries plus it)");
  chunk.ln = *ln;
  if (failed(readLayers(ln->x, chunk, step.weightsRead)))
    return failure();
  const DualSum &first = chunk.layers.front(), &top = chunk.layers.back();
  std::optional<SliceChain> q, k;
  if (!isWindow(first.applied, q) || !isWindow(first.keys, k) ||
      !sameWindow(*q, *k))
    return fail("its causal term does not score the chunk's queries against "
                "its keys");
  chunk.q = *q;
  chunk.k = *k;
  chunk.eta = top.eta;
  chunk.step = top.step;
  if (residualQ &&
      (residualQ->root != chunk.q.root || !sameWindow(*residualQ, chunk.q)))
    return fail("its output adds queries other than the ones it applies the "
                "weight to");
  std::optional<LayerNormGradient> gradient =
      matchLayerNormGradient(top.gradient);
  if (!gradient)
    return fail("its gradient is not the LayerNorm-MSE gradient "
                "(1/D) (D gx - sum(gx) - xhat sum(gx xhat)) / std of "
                "ttt-lm-pytorch's ln_fused_l2_bwd");
  if (!sameParameters(gradient->ln, *ln))
    return fail("its loss and its output normalize with different "
                "LayerNorm parameters");
  // Z = K W + b at the chunk-start weights: K the chunk's keys, or (TTT-MLP)
  // the hidden layer gelu(XK W1 + b1).
  auto predicts = [&](Value z, const DualSum &sum, Value keys) {
    return matchCommutative(skipLayout(z), "Add", [&](Value xw, Value b) {
      onnx::NodeOp matmul = nodeOf(skipLayout(xw), "MatMul");
      return matmul && same(b, sum.b) && same(matmul.getInputs()[1], sum.w) &&
             (keys ? same(matmul.getInputs()[0], keys)
                   : isKeyWindow(matmul.getInputs()[0], chunk));
    });
  };
  if (!predicts(gradient->ln.x, top, chunk.hidden))
    return fail("its loss does not read K W + b at the weights its output "
                "applies");
  if (chunk.layers.size() == 2) {
    Value z1 = elementwiseArgument(chunk.hidden, geluTanh);
    if (!z1 || !predicts(z1, first, Value()))
      return fail("its second layer's keys are not gelu(XK W1 + b1) at the "
                  "chunk-start weights");
    // G1 = (G2 W2^T) * gelu'(Z1): the gradient carried back to layer 1.
    bool carried = matchCommutative(
        skipLayout(first.gradient), "Mul", [&](Value back, Value slope) {
          onnx::NodeOp matmul = nodeOf(skipLayout(back), "MatMul");
          return matmul && same(matmul.getInputs()[0], top.gradient) &&
                 isTransposeOf(matmul.getInputs()[1], top.w) &&
                 same(elementwiseArgument(slope, geluTanhDerivative), z1);
        });
    if (!carried)
      return fail("its first layer's gradient is not (G2 W2^T) * gelu'(Z1)");
  }
  // The target: a chunk of the values, or of values minus keys.
  std::optional<SliceChain> v;
  if (isWindow(gradient->target, v)) {
    chunk.v = *v;
  } else {
    onnx::NodeOp sub = nodeOf(skipLayout(gradient->target), "Sub");
    std::optional<SliceChain> keys;
    if (!sub || !isWindow(sub.getInputs()[0], v) ||
        !isKeyWindow(sub.getInputs()[1], chunk))
      return fail("its loss's target is neither a chunk of the values nor "
                  "values minus keys");
    isWindow(sub.getInputs()[1], keys);
    chunk.v = *v;
    chunk.kSubtracted = keys;
  }
  if (!sameWindow(chunk.v, chunk.k))
    return fail("its loss reads values of other tokens than its keys");
  if (failed(readEta(chunk.eta, chunk)))
    return failure();
  if (!sameWindow(*chunk.lr, chunk.k))
    return fail("its learning rates are of other tokens than its keys");
  return success();
}

LogicalResult DualFormReader::assignSlots(const DualChunk &first) {
  const ChunkStep &firstStep = layer.steps.front();
  SmallVector<unsigned> slots;
  for (auto [slot, trained] : llvm::enumerate(layer.trained))
    if (trained)
      slots.push_back(slot);
  // Which slots hold each layer's weight and bias; any other trained slot
  // reads a weight's transpose (TTT-MLP carries its gradient back through
  // W2^T).
  wSlots.clear();
  bSlots.clear();
  for (const DualSum &sum : first.layers)
    for (unsigned slot : slots) {
      if (same(firstStep.weightsRead[slot], sum.w))
        wSlots.push_back(slot);
      else if (same(firstStep.weightsRead[slot], sum.b))
        bSlots.push_back(slot);
    }
  if (wSlots.size() != first.layers.size() ||
      bSlots.size() != first.layers.size())
    return fail("its dual form does not apply and add the weights that "
                "change from chunk to chunk");
  for (unsigned slot : slots)
    if (!llvm::is_contained(wSlots, slot) &&
        !llvm::is_contained(bSlots, slot) &&
        llvm::none_of(wSlots, [&](unsigned w) {
          return isTransposeOf(firstStep.weightsRead[slot],
                               firstStep.weightsRead[w]);
        }))
      return fail("it trains " + describeValue(firstStep.weightsRead[slot]) +
                  ", which its dual form does not read");
  return success();
}

FailureOr<LayerConfig> DualFormReader::read() {
  if (layer.form == LayerForm::Loop)
    return readLoop();
  if (layer.form != LayerForm::Unrolled)
    return fail("a dual-form LayerNorm layer reads chunks, not one "
                "full-batch step");
  std::vector<DualChunk> chunks(layer.steps.size());
  for (auto [index, step] : llvm::enumerate(layer.steps))
    if (failed(readChunk(step, chunks[index])))
      return fail("chunk " + Twine(index) + ": " + why);
  const DualChunk &first = chunks.front();
  size_t numLayers = first.layers.size();
  if (failed(assignSlots(first)))
    return failure();
  int64_t c = layer.chunkSize;
  std::optional<int64_t> total = staticTimeLength(first.q.root);
  for (auto [index, chunk] : llvm::enumerate(chunks)) {
    const ChunkStep &step = layer.steps[index];
    if (chunk.layers.size() != numLayers)
      return fail("chunk " + Twine(index) + " has another number of layers");
    for (auto [sum, w, b] : llvm::zip(chunk.layers, wSlots, bSlots))
      if (!same(step.weightsRead[w], sum.w) ||
          !same(step.weightsRead[b], sum.b))
        return fail("chunk " + Twine(index) +
                    " does not start from the previous chunk's weights");
    if (chunk.q.root != first.q.root || chunk.k.root != first.k.root ||
        chunk.v.root != first.v.root || chunk.lr->root != first.lr->root ||
        chunk.lr->column != first.lr->column ||
        chunk.tokenEta != first.tokenEta ||
        !llvm::equal(chunk.tokenEtaValues,
                     ArrayRef(first.tokenEtaValues)
                         .take_front(chunk.tokenEtaValues.size())) ||
        chunk.residual != first.residual ||
        chunk.ratesTimeLast != first.ratesTimeLast ||
        chunk.kSubtracted.has_value() != first.kSubtracted.has_value() ||
        !nearly(chunk.step, first.step) || !sameParameters(chunk.ln, first.ln))
      return fail("chunk " + Twine(index) +
                  " computes another dual form than the first");
    // Chunk i covers tokens [i C, min((i + 1) C, T)), and token_eta[:n].
    int64_t start = static_cast<int64_t>(index) * c;
    int64_t end = total ? std::min(start + c, *total) : start + c;
    std::optional<int64_t> chunkEnd = chunk.q.end;
    if (chunkEnd && total)
      chunkEnd = std::min(*chunkEnd, *total);
    if (chunk.q.start != start || chunkEnd != end ||
        end - start != chunk.length)
      return fail("chunk " + Twine(index) + " is not tokens [" + Twine(start) +
                  ", " + Twine(end) +
                  ") with token_eta[:" + Twine(end - start) + "]");
    if (index + 1 == chunks.size())
      continue;
    const ChunkStep &next = layer.steps[index + 1];
    for (auto [l, sum] : llvm::enumerate(chunk.layers))
      if (failed(checkUpdate(chunk, sum, l == 0 ? Value() : chunk.hidden,
                             next.weightsRead[wSlots[l]],
                             next.weightsRead[bSlots[l]])))
        return failure();
  }
  SmallVector<Value> initial;
  for (auto [w, b] : llvm::zip(wSlots, bSlots)) {
    initial.push_back(layer.initialWeights[w]);
    initial.push_back(layer.initialWeights[b]);
  }
  return configFor(first, initial);
}

FailureOr<LayerConfig> DualFormReader::readLoop() {
  if (layer.steps.size() != 1)
    return fail("its Loop leaves its last chunk to after the loop, which a "
                "dual-form layer's chunks do not");
  DualChunk chunk;
  const ChunkStep &step = layer.steps.front();
  if (failed(readChunk(step, chunk)) || failed(assignSlots(chunk)))
    return failure();
  onnx::NodeOp loop = layer.loop;
  Block &body = loop->getRegion(0).front();
  auto yield = cast<onnx::YieldOp>(body.getTerminator());
  // Each weight is carried: read as a body argument, yielded updated, and
  // given its start as the Loop's input.
  SmallVector<Value> initial, next;
  for (auto [w, b] : llvm::zip(wSlots, bSlots))
    for (unsigned slot : {w, b}) {
      auto arg = dyn_cast<BlockArgument>(skipLayout(step.weightsRead[slot]));
      if (!arg || arg.getOwner() != &body || arg.getArgNumber() < 2 ||
          arg.getArgNumber() >= loop.getInputs().size())
        return fail("its Loop does not carry " +
                    describeValue(step.weightsRead[slot]));
      // A start expanded over the batch (`W.expand(B, ...)`) is the
      // stored weight, typed with the sizes the layer op needs.
      Value start = loop.getInputs()[arg.getArgNumber()];
      while (onnx::NodeOp expand = nodeOf(start, "Expand"))
        start = expand.getInputs()[0];
      if (onnx::NodeOp unsqueeze = nodeOf(start, "Unsqueeze")) {
        std::optional<SmallVector<int64_t>> axes = reduceAxes(unsqueeze);
        if (axes && *axes == SmallVector<int64_t>{0} &&
            rankOf(unsqueeze.getInputs()[0]) == 3)
          start = unsqueeze.getInputs()[0];
      }
      initial.push_back(start);
      next.push_back(yield.getOperand(arg.getArgNumber() - 1));
    }
  for (auto [l, sum] : llvm::enumerate(chunk.layers))
    if (failed(checkUpdate(chunk, sum, l == 0 ? Value() : chunk.hidden,
                           next[2 * l], next[2 * l + 1])))
      return failure();
  // Iteration i cuts tokens [i C, min((i + 1) C, T)) of every sequence, and
  // token_eta[:n] with n that chunk's length: proven for every T.
  SmallVector<Value> sequences{chunk.q.root, chunk.k.root, chunk.v.root,
                               chunk.lr->root};
  std::string bounds;
  if (failed(checkLoopWalksChunks(loop, chunk.q, /*tail=*/nullptr,
                                  layer.chunkSize, sequences, Value(), bounds)))
    return fail(bounds);
  if (chunk.length == kUnknownLength &&
      failed(checkLoopWalksChunks(loop, chunk.q, /*tail=*/nullptr,
                                  layer.chunkSize, sequences, chunk.lengthValue,
                                  bounds)))
    return fail("its token_eta[:n] is not cut to its chunk's length");
  if (chunk.length != kUnknownLength && chunk.length != layer.chunkSize)
    return fail("its Loop's chunks read token_eta[:" + Twine(chunk.length) +
                "], not one factor per token of a chunk of " +
                Twine(layer.chunkSize));
  return configFor(chunk, initial);
}

FailureOr<LayerConfig> DualFormReader::configFor(const DualChunk &first,
                                                 ArrayRef<Value> initial) {
  int64_t c = layer.chunkSize;
  auto etaType = first.tokenEta
                     ? dyn_cast<RankedTensorType>(first.tokenEta.getType())
                     : nullptr;
  int64_t etaLength = etaType
                          ? etaType.getDimSize(0)
                          : static_cast<int64_t>(first.tokenEtaValues.size());
  if (etaLength != c)
    return fail("its per-position factors are not one per token of a chunk");
  LayerConfig config;
  config.model = first.layers.size() == 1 ? ModelKind::linear : ModelKind::mlp;
  if (first.layers.size() == 2)
    config.activation = Activation::gelu_tanh;
  config.bias = true;
  for (Value weight : initial) {
    config.trained.push_back(config.weights.size());
    config.weights.push_back(weight);
  }
  config.q = first.q.root;
  config.k = first.k.root;
  config.rule.v = first.v.root;
  config.rule.lr = first.lr->root;
  config.rule.lrColumn = first.lr->column;
  config.ratesTimeLast = first.ratesTimeLast;
  config.rule.loss = LossKind::layernorm_mse;
  config.rule.sign = first.step < 0 ? Sign::descent : Sign::ascent;
  config.rule.lrScale = std::abs(first.step);
  config.order = UpdateOrder::causal;
  config.chunkSize = c;
  config.tokenEta = first.tokenEta;
  config.tokenEtaValues = first.tokenEtaValues;
  config.lnGamma = first.ln.gamma;
  config.lnBeta = first.ln.beta;
  config.lnEps = first.ln.eps;
  config.valuesMinusKeys = first.kSubtracted.has_value();
  config.residualQuery = first.residual;
  return config;
}

} // namespace

FailureOr<LayerConfig> raise::matchLayerNormDualForm(const FoundLayer &layer,
                                                     std::string &why) {
  return DualFormReader(layer, why).read();
}
