//===- ElementwiseFunctions.cpp - which function of x a node chain is -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ElementwiseFunctions.h"
#include "Normalize.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

static constexpr double kSqrt2OverPi = 0.79788456080286535588;
static constexpr double kGeluCubic = 0.044715;

double raise::geluTanh(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
}

double raise::geluTanhDerivative(double x) {
  double t = std::tanh(kSqrt2OverPi * x * (1.0 + kGeluCubic * x * x));
  return 0.5 * x * (1.0 - t * t) *
             (kSqrt2OverPi + 3.0 * kGeluCubic * kSqrt2OverPi * x * x) +
         0.5 * (1.0 + t);
}

namespace {
/// Evaluates a chain of elementwise nodes of one tensor at a point.
class Evaluator {
public:
  explicit Evaluator(Value x) : x(skipLayout(x)) {}

  std::optional<double> at(Value value, double point) {
    this->point = point;
    cache.clear();
    return eval(value, 0);
  }

private:
  static constexpr unsigned kMaxDepth = 64;

  std::optional<double> eval(Value value, unsigned depth) {
    Value base = skipLayout(value);
    if (base == x)
      return point;
    if (std::optional<double> c = scalarConstant(base))
      return c;
    if (depth > kMaxDepth)
      return std::nullopt;
    auto it = cache.find(base);
    if (it != cache.end())
      return it->second;
    auto node = base.getDefiningOp<onnx::NodeOp>();
    if (!node || !node.isDefaultDomain() || node->getNumResults() != 1)
      return std::nullopt;
    SmallVector<double> in;
    for (Value input : node.getInputs()) {
      std::optional<double> v = eval(input, depth + 1);
      if (!v)
        return std::nullopt;
      in.push_back(*v);
    }
    std::optional<double> out = apply(node, in);
    if (out && std::isfinite(*out))
      cache[base] = *out;
    return out;
  }

  static std::optional<double> apply(onnx::NodeOp node, ArrayRef<double> in) {
    StringRef op = node.getOpType();
    if (in.size() == 1) {
      double a = in[0];
      if (op == "Neg")
        return -a;
      if (op == "Tanh")
        return std::tanh(a);
      if (op == "Sqrt" && a >= 0.0)
        return std::sqrt(a);
      if (op == "Reciprocal" && a != 0.0)
        return 1.0 / a;
      if (op == "Sigmoid")
        return 1.0 / (1.0 + std::exp(-a));
      if (op == "Exp")
        return std::exp(a);
      if (op == "Erf")
        return std::erf(a);
      if (op == "Abs")
        return std::abs(a);
      if (op == "Relu")
        return std::max(a, 0.0);
      if (op == "Cast" || op == "Identity")
        return a;
      if (op == "Gelu") {
        auto approximate =
            dyn_cast_or_null<StringAttr>(node.getONNXAttr("approximate"));
        if (approximate && approximate.getValue() == "tanh")
          return geluTanh(a);
        return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0)));
      }
      return std::nullopt;
    }
    if (in.size() != 2)
      return std::nullopt;
    double a = in[0], b = in[1];
    if (op == "Add")
      return a + b;
    if (op == "Sub")
      return a - b;
    if (op == "Mul")
      return a * b;
    if (op == "Div" && b != 0.0)
      return a / b;
    if (op == "Pow")
      return std::pow(a, b);
    return std::nullopt;
  }

  Value x;
  double point = 0.0;
  llvm::DenseMap<Value, double> cache;
};

/// True if the chain from `y` down to `x` computes f at sample points where
/// activations live (denser near 0, and both tails), to float32 accuracy.
bool evaluatesTo(Value y, Value x, llvm::function_ref<double(double)> f) {
  Evaluator evaluator(x);
  for (int i = -160; i <= 160; ++i) {
    double point = i / 20.0 + 0.013;
    std::optional<double> got = evaluator.at(y, point);
    double want = f(point);
    if (!got || std::abs(*got - want) > 1e-6 * std::max(1.0, std::abs(want)))
      return false;
  }
  return true;
}

/// True if `node` is one of the elementwise nodes the evaluator knows.
bool isElementwise(onnx::NodeOp node) {
  static constexpr llvm::StringLiteral kElementwise[] = {
      "Neg", "Tanh", "Sqrt", "Reciprocal", "Sigmoid",  "Exp",
      "Erf", "Abs",  "Relu", "Cast",       "Identity", "Gelu",
      "Add", "Sub",  "Mul",  "Div",        "Pow"};
  return node && node.isDefaultDomain() &&
         llvm::is_contained(kElementwise, node.getOpType());
}

/// The non-constant values an elementwise chain reads when it stops at
/// `stop`; gives up past two.
void leavesOf(Value value, Value stop, llvm::SmallSetVector<Value, 2> &leaves,
              llvm::DenseSet<Value> &seen, bool &relaid) {
  Value base = skipLayout(value);
  if (base != value && !scalarConstant(base))
    relaid = true;
  if (!seen.insert(base).second || scalarConstant(base))
    return;
  auto node = base.getDefiningOp<onnx::NodeOp>();
  if (base == stop || !isElementwise(node)) {
    leaves.insert(base);
    return;
  }
  for (Value input : node.getInputs()) {
    leavesOf(input, stop, leaves, seen, relaid);
    if (leaves.size() > 1)
      return;
  }
}
} // namespace

Value raise::elementwiseArgument(Value y,
                                 llvm::function_ref<double(double)> f) {
  auto yType = dyn_cast<RankedTensorType>(y.getType());
  // The argument is the value nearest to y at which every path of the
  // chain ends (x itself may be a sum, which the chain must not enter).
  SmallVector<Value> candidates{skipLayout(y)};
  llvm::DenseSet<Value> queued{candidates.front()};
  static constexpr size_t kMaxCandidates = 64;
  for (size_t i = 0; i < candidates.size() && i < kMaxCandidates; ++i) {
    Value x = candidates[i];
    if (i > 0) {
      llvm::SmallSetVector<Value, 2> leaves;
      llvm::DenseSet<Value> seen;
      bool relaid = false;
      leavesOf(y, x, leaves, seen, relaid);
      // Elementwise: x's shape kept, by the types or (a Loop body's
      // unranked values) by a chain without layout nodes.
      auto xType = dyn_cast<RankedTensorType>(x.getType());
      bool shapeKept = xType && yType && xType.hasStaticShape() &&
                               xType.getShape() == yType.getShape()
                           ? true
                           : !relaid;
      if (leaves.size() == 1 && leaves.front() == x && shapeKept &&
          evaluatesTo(y, x, f))
        return x;
    }
    auto node = x.getDefiningOp<onnx::NodeOp>();
    if (!isElementwise(node))
      continue;
    for (Value input : node.getInputs()) {
      Value base = skipLayout(input);
      if (!scalarConstant(base) && queued.insert(base).second)
        candidates.push_back(base);
    }
  }
  return nullptr;
}

std::optional<double> raise::misscaledGeluTanh(Value y) {
  // The scalar constants the chain reads.
  SmallVector<double> constants;
  SmallVector<Value> stack{skipLayout(y)};
  llvm::DenseSet<Value> seen;
  static constexpr size_t kMaxNodes = 64;
  while (!stack.empty() && seen.size() < kMaxNodes) {
    Value value = stack.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (std::optional<double> c = scalarConstant(value)) {
      constants.push_back(*c);
      continue;
    }
    auto node = value.getDefiningOp<onnx::NodeOp>();
    if (!isElementwise(node))
      continue;
    for (Value input : node.getInputs())
      stack.push_back(skipLayout(input));
  }
  for (double c : constants) {
    double off = std::abs(c - kSqrt2OverPi);
    if (off < 1e-6 || off > 1e-2 * kSqrt2OverPi)
      continue;
    auto gelu = [c](double x) {
      return 0.5 * x * (1.0 + std::tanh(c * (x + kGeluCubic * x * x * x)));
    };
    if (elementwiseArgument(y, gelu))
      return c;
  }
  return std::nullopt;
}
