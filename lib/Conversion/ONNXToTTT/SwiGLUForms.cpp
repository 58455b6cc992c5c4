//===- SwiGLUForms.cpp - what a trained SwiGLU layer's nodes compute ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "SwiGLUForms.h"
#include "Normalize.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

bool raise::sameNumbers(Value a, Value b) {
  a = skipLayout(a);
  b = skipLayout(b);
  if (a == b)
    return true;
  auto x = constantBytes(a), y = constantBytes(b);
  return x && y && x->first.getElementType() == y->first.getElementType() &&
         x->first.getNumElements() == y->first.getNumElements() &&
         x->second == y->second;
}

bool raise::isTransposeOf(Value value, Value weight) {
  // The transpose may read the weight as given (a weight expanded over the
  // batch, then transposed) or what its layout nodes read.
  if (computesTransposeOf(skipLayout(value), weight) ||
      computesTransposeOf(skipLayout(value), skipLayout(weight)))
    return true;
  if (transposedInput(value))
    return false;
  auto x = constantBytes(skipLayout(value)),
       w = constantBytes(skipLayout(weight));
  if (!x || !w || x->first.getElementType() != w->first.getElementType() ||
      !x->first.hasRank() || !w->first.hasRank() ||
      x->first.getRank() != w->first.getRank() || w->first.getRank() < 2)
    return false;
  return isInnerTransposeOf(x->first, x->second, w->first, w->second);
}

Value raise::storedOperandOf(Value applied, Value stored) {
  auto node = skipLayout(stored).getDefiningOp<onnx::NodeOp>();
  if (!node || (node.getOpType() != "Add" && node.getOpType() != "Sub"))
    return nullptr;
  for (Value operand : node.getInputs())
    if (isTransposeOf(applied, operand))
      return operand;
  return nullptr;
}

/// True if `reduce` reduces exactly the second-to-last axis of its input and
/// keeps it as an axis of one.
static bool reducesRowsKept(onnx::NodeOp reduce) {
  if (intAttr(reduce, "keepdims").value_or(1) != 1)
    return false;
  std::optional<SmallVector<int64_t>> axes = reduceAxes(reduce);
  std::optional<int64_t> rank = rankOf(reduce.getInputs()[0]);
  if (!axes || axes->size() != 1)
    return false;
  if ((*axes)[0] == -2)
    return true;
  if (!rank)
    return false;
  int64_t axis = (*axes)[0] < 0 ? (*axes)[0] + *rank : (*axes)[0];
  return axis == *rank - 2;
}

Value raise::columnNormOf(Value norm) {
  if (onnx::NodeOp l2 = nodeOf(norm, "ReduceL2"))
    return reducesRowsKept(l2) ? l2.getInputs()[0] : Value();
  onnx::NodeOp sqrt = nodeOf(norm, "Sqrt");
  if (!sqrt)
    return nullptr;
  Value sum = sqrt.getInputs()[0];
  if (onnx::NodeOp squares = nodeOf(sum, "ReduceSumSquare"))
    return reducesRowsKept(squares) ? squares.getInputs()[0] : Value();
  onnx::NodeOp reduce = nodeOf(sum, "ReduceSum");
  if (!reduce || !reducesRowsKept(reduce))
    return nullptr;
  Value squared = reduce.getInputs()[0];
  if (onnx::NodeOp mul = nodeOf(squared, "Mul"))
    return mul.getInputs()[0] == mul.getInputs()[1] ? mul.getInputs()[0]
                                                    : Value();
  if (onnx::NodeOp pow = nodeOf(squared, "Pow")) {
    std::optional<double> exponent = scalarConstant(pow.getInputs()[1]);
    return exponent == 2.0 ? pow.getInputs()[0] : Value();
  }
  return nullptr;
}

/// The f32 numbers of a constant, with its shape.
static std::optional<std::pair<ShapedType, ArrayRef<float>>>
floatConstant(Value value) {
  auto bytes = constantBytes(skipLayout(value));
  if (!bytes || !bytes->first.getElementType().isF32() ||
      !bytes->first.hasStaticShape() ||
      bytes->second.size() !=
          static_cast<size_t>(bytes->first.getNumElements()) * sizeof(float))
    return std::nullopt;
  return std::make_pair(
      bytes->first,
      ArrayRef<float>(reinterpret_cast<const float *>(bytes->second.data()),
                      bytes->first.getNumElements()));
}

bool raise::isColumnNormOf(Value norms, Value weight) {
  if (!norms)
    return false;
  if (Value x = columnNormOf(skipLayout(norms)))
    return sameNumbers(x, weight);
  auto w = floatConstant(weight);
  // Sqrt(ReduceSum(W * W)) with the squares folded into a constant.
  onnx::NodeOp sqrt = nodeOf(skipLayout(norms), "Sqrt");
  onnx::NodeOp sum = sqrt ? nodeOf(sqrt.getInputs()[0], "ReduceSum") : nullptr;
  if (sum && reducesRowsKept(sum)) {
    auto squares = floatConstant(sum.getInputs()[0]);
    if (!w || !squares || squares->second.size() != w->second.size())
      return false;
    for (auto [square, x] : llvm::zip(squares->second, w->second))
      if (std::abs(square - x * x) > 1e-6f * std::max(1.0f, x * x))
        return false;
    return true;
  }
  auto target = floatConstant(norms);
  if (!target || !w || w->first.getRank() < 2)
    return false;
  ArrayRef<int64_t> shape = w->first.getShape();
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  int64_t matrices =
      w->first.getNumElements() / std::max<int64_t>(rows * cols, 1);
  if (static_cast<int64_t>(target->second.size()) != matrices * cols)
    return false;
  for (int64_t m = 0; m < matrices; ++m)
    for (int64_t c = 0; c < cols; ++c) {
      double sum = 0.0;
      for (int64_t r = 0; r < rows; ++r) {
        double x = w->second[(m * rows + r) * cols + c];
        sum += x * x;
      }
      double expected = std::sqrt(sum), actual = target->second[m * cols + c];
      if (std::abs(actual - expected) > 1e-6 * std::max(1.0, expected))
        return false;
    }
  return true;
}

/// If `node` is `LpNormalization(x)` with p = 2 over the second-to-last
/// axis (each column divided by its L2 norm, no epsilon), x.
static Value columnNormalized(onnx::NodeOp node) {
  if (!node || node.getInputs().size() != 1 ||
      intAttr(node, "p").value_or(2) != 2)
    return nullptr;
  Value x = node.getInputs()[0];
  int64_t axis = intAttr(node, "axis").value_or(-1);
  std::optional<int64_t> rank = rankOf(x);
  if (axis == -2 || (rank && *rank >= 2 && axis == *rank - 2))
    return x;
  return nullptr;
}

Value raise::matchWeightNorm(Value value, double &eps, Value &target) {
  Value weight;
  matchCommutative(value, "Mul", [&](Value normalized, Value r) {
    if (Value x = columnNormalized(nodeOf(normalized, "LpNormalization"))) {
      eps = 0.0;
      target = r;
      weight = x;
      return true;
    }
    onnx::NodeOp div = nodeOf(normalized, "Div");
    if (!div)
      return false;
    Value x = div.getInputs()[0];
    return matchCommutative(
        div.getInputs()[1], "Add", [&](Value norm, Value e) {
          std::optional<double> constant = scalarConstant(e);
          Value normed = columnNormOf(norm);
          if (!constant || !normed || skipLayout(normed) != skipLayout(x))
            return false;
          eps = *constant;
          target = r;
          weight = x;
          return true;
        });
  });
  return weight;
}

Value raise::matchColumnClip(Value value) {
  onnx::NodeOp div = nodeOf(value, "Div");
  if (!div || div.getInputs().size() != 2)
    return nullptr;
  Value g = div.getInputs()[0];
  bool clipped =
      matchCommutative(div.getInputs()[1], "Add", [&](Value norm, Value one) {
        Value normed = columnNormOf(norm);
        return scalarConstant(one) == 1.0 && normed &&
               skipLayout(normed) == skipLayout(g);
      });
  return clipped ? g : nullptr;
}

void raise::productFactors(Value value, SmallVectorImpl<Value> &leaves,
                           double &factor) {
  if (onnx::NodeOp neg = nodeOf(value, "Neg")) {
    factor = -factor;
    productFactors(neg.getInputs()[0], leaves, factor);
    return;
  }
  if (onnx::NodeOp div = nodeOf(value, "Div");
      div && div.getInputs().size() == 2) {
    std::optional<double> divisor = scalarConstant(div.getInputs()[1]);
    if (divisor && *divisor != 0.0) {
      factor /= *divisor;
      productFactors(div.getInputs()[0], leaves, factor);
      return;
    }
  }
  onnx::NodeOp mul = nodeOf(value, "Mul");
  if (!mul) {
    leaves.push_back(value);
    return;
  }
  for (Value operand : mul.getInputs()) {
    if (std::optional<double> constant = scalarConstant(operand))
      factor *= *constant;
    else
      productFactors(operand, leaves, factor);
  }
}

namespace {
/// Reads the factors of an inner weight's descent direction.
class InnerGradientReader {
public:
  InnerGradientReader(const SwiGLUWeights &at,
                      const WholeSequences *wholeSequence, std::string &why)
      : at(at), wholeSequence(wholeSequence), why(why) {}

  std::optional<InnerGradient> read(Value value, unsigned role) {
    onnx::NodeOp outer = nodeOf(value, "MatMul");
    if (!outer)
      return fail("the update is not a product of keys and backpropagated "
                  "values");
    Value left = transposedInput(outer.getInputs()[0]);
    if (!left)
      return fail("the update's left factor is not transposed");
    SmallVector<Value> leftLeaves, rightLeaves;
    productFactors(left, leftLeaves, gradient.factor);
    productFactors(outer.getInputs()[1], rightLeaves, gradient.factor);
    if (!takeRate(leftLeaves) || !takeRate(rightLeaves))
      return fail("the update is scaled by two learning rates");
    std::optional<SliceChain> keys =
        leftLeaves.size() == 1 ? window(leftLeaves.front()) : std::nullopt;
    if (!keys)
      return fail("the update's left factor is not the chunk's keys");
    gradient.keys = *keys;
    // silu'(z) = s (1 + z (1 - s)) with s = sigmoid(z), z = K W0.
    SmallVector<std::function<bool(Value)>> expected = {
        [&](Value v) { return isBackProjectedValues(v); },
        [&](Value v) { return isSigmoidOfGate(v); }};
    if (role == 0) {
      expected.push_back([&](Value v) { return isProjection(v, at[2]); });
      expected.push_back([&](Value v) { return isSiluDerivativeRest(v); });
    } else {
      expected.push_back([&](Value v) { return isProjection(v, at[0]); });
    }
    for (auto &matches : expected) {
      auto *it = llvm::find_if(rightLeaves, matches);
      if (it == rightLeaves.end())
        return fail(
            !at[1] ? (role == 0 ? "the update of Wg is not Kᵀ (V ⊙ K Wa ⊙ "
                                  "silu'(K Wg)), the gradient of the dot loss"
                                : "the update of Wa is not Kᵀ (V ⊙ silu(K "
                                  "Wg)), the gradient of the dot loss")
            : role == 0 ? "the update of W0 is not Kᵀ (V W1ᵀ ⊙ K W2 ⊙ "
                          "silu'(K W0)), the gradient of the dot loss"
                        : "the update of W2 is not Kᵀ (V W1ᵀ ⊙ silu(K W0)), "
                          "the gradient of the dot loss");
      rightLeaves.erase(it);
    }
    if (!rightLeaves.empty())
      return fail("the update multiplies more factors than the gradient has");
    if (!sameWindow(gradient.keys, gradient.values) ||
        (gradient.lr && !sameWindow(gradient.keys, *gradient.lr)))
      return fail("the update's keys, values and rates come from different "
                  "chunks");
    return gradient;
  }

private:
  std::nullopt_t fail(StringRef reason) {
    if (why.empty())
      why = reason.str();
    return std::nullopt;
  }

  /// Removes the one per-token rate column among `leaves`, if any; false if
  /// a second one turns up.
  bool takeRate(SmallVectorImpl<Value> &leaves) {
    for (auto *it = leaves.begin(); it != leaves.end(); ++it) {
      std::optional<SliceChain> chain = window(*it);
      if (!chain || !chain->column)
        continue;
      if (gradient.lr)
        return false;
      gradient.lr = chain;
      leaves.erase(it);
      return true;
    }
    return true;
  }

  /// `K W` with the chunk's keys.
  bool isProjection(Value value, Value weight) {
    onnx::NodeOp matmul = nodeOf(value, "MatMul");
    if (!matmul || skipLayout(matmul.getInputs()[1]) != skipLayout(weight))
      return false;
    std::optional<SliceChain> chain = window(matmul.getInputs()[0]);
    return chain && chain->root == gradient.keys.root &&
           sameWindow(*chain, gradient.keys);
  }

  /// `V W1ᵀ`: sets the values. A GLU's values are V itself, maybe divided
  /// by the number of tokens.
  bool isBackProjectedValues(Value value) {
    if (!at[1]) {
      onnx::NodeOp div = nodeOf(value, "Div");
      bool mean = div && div.getInputs().size() == 2 &&
                  isTimeLengthOf(div.getInputs()[1], gradient.keys.root);
      SmallVector<Value> leaves;
      double factor = 1.0;
      productFactors(mean ? div.getInputs()[0] : value, leaves, factor);
      std::optional<SliceChain> chain =
          leaves.size() == 1 ? window(leaves.front()) : std::nullopt;
      if (!chain || chain->column)
        return false;
      gradient.values = *chain;
      gradient.factor *= factor;
      gradient.mean = mean;
      return true;
    }
    onnx::NodeOp matmul = nodeOf(value, "MatMul");
    if (!matmul || !isTransposeOf(matmul.getInputs()[1], at[1]))
      return false;
    std::optional<SliceChain> chain = window(matmul.getInputs()[0]);
    if (!chain || chain->column)
      return false;
    gradient.values = *chain;
    return true;
  }

  bool isSigmoidOfGate(Value value) {
    onnx::NodeOp sigmoid = nodeOf(value, "Sigmoid");
    return sigmoid && isProjection(sigmoid.getInputs()[0], at[0]);
  }

  /// `1 + z (1 - sigmoid(z))` with z = K W0.
  bool isSiluDerivativeRest(Value value) {
    return matchCommutative(value, "Add", [&](Value one, Value term) {
      if (scalarConstant(one) != 1.0)
        return false;
      return matchCommutative(term, "Mul", [&](Value z, Value complement) {
        onnx::NodeOp sub = nodeOf(complement, "Sub");
        return sub && isProjection(z, at[0]) &&
               scalarConstant(sub.getInputs()[0]) == 1.0 &&
               isSigmoidOfGate(sub.getInputs()[1]);
      });
    });
  }

  std::optional<SliceChain> window(Value value) const {
    return tokenWindow(value, wholeSequence);
  }

  const SwiGLUWeights &at;
  const WholeSequences *wholeSequence;
  std::string &why;
  InnerGradient gradient;
};
} // namespace

std::optional<InnerGradient>
raise::matchInnerGradient(Value value, unsigned role, const SwiGLUWeights &at,
                          const WholeSequences *wholeSequence,
                          std::string &why) {
  return InnerGradientReader(at, wholeSequence, why).read(value, role);
}
