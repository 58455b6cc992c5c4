//===- LayerMatcher.cpp - a found layer's exact ttt.kvb_layer form --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LayerMatcher.h"
#include "LoopBounds.h"
#include "Normalize.h"
#include "SwiGLUForms.h"

#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <limits>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

bool UpdateRule::operator==(const UpdateRule &other) const {
  return v == other.v && lr == other.lr && momentum == other.momentum &&
         lrColumn == other.lrColumn && loss == other.loss &&
         reduction == other.reduction && sign == other.sign &&
         lrScale == other.lrScale && lossScale == other.lossScale &&
         nsCoeffs == other.nsCoeffs && nsEps == other.nsEps &&
         weightNorm == other.weightNorm && wnEps == other.wnEps &&
         momentumTimeBeforeLast == other.momentumTimeBeforeLast &&
         momentumPerChunk == other.momentumPerChunk &&
         transposedWeight == other.transposedWeight &&
         clipColumns == other.clipColumns;
}

bool UpdateRule::sharedBy(const UpdateRule &other) const {
  UpdateRule same = other;
  same.lrColumn = lrColumn;
  return *this == same;
}
namespace {

/// The static feature map in front of the trained output weight.
struct FeatureMap {
  ModelKind model = ModelKind::linear;
  SliceChain input;
  Value w0, w2; ///< swiglu: gate and up projections
};

/// One chunk's update of the trained weight, `next = prev + U`.
struct Update {
  Value prev;
  FeatureMap keys;
  UpdateRule rule;
  Value momentumPrev, momentumNext;
  /// What a weight norm restores the columns to (the initial norms).
  Value normTarget;
  /// The chunk of values the update reads (its start: `keyStart`).
  SliceChain valueChunk;
  std::optional<int64_t> keyStart;
  /// The chunk of per-token learning rates the keys are scaled by, and the
  /// chunk of per-token momentum coefficients averaged, if any.
  std::optional<SliceChain> lrChunk, momentumChunk;
  /// The index a per-chunk momentum is read at (a constant, or a Loop's
  /// iteration counter).
  Value momentumIndex;
  /// A mean's divisor computed in a Loop body (`end - start` of its own
  /// kind), which the Loop-bounds check proves to be the chunk length.
  Value lengthDivisor;
  /// The product of the constant factors around the gradient (step size,
  /// signs, constant divisors); the reader turns it into the rule's sign,
  /// step size and reduction once it has seen every chunk.
  double factor = 1.0;
  /// With Newton-Schulz: the magnitude of the constant factors inside it
  /// (their sign joins `factor`), which the normalization does not cancel
  /// exactly: they become the loss scale and the reduction.
  double innerFactor = 1.0;
};

/// True if `value` is the same tensor as `expected` up to layout nodes.
bool same(Value value, Value expected) {
  return value && expected && skipLayout(value) == skipLayout(expected);
}

/// A weight that no chunk computes: an initializer or a graph input.
bool isConstantWeight(Value value) {
  Value base = skipLayout(value);
  // The transpose of a constant weight (applied output x input) is one too,
  // and so is its repetition over the batch (`w.repeat(B, 1, 1)`).
  if (Value stored = transposedInput(base))
    base = skipLayout(stored);
  if (onnx::NodeOp tile = nodeOf(base, "Tile"))
    base = skipLayout(tile.getInputs()[0]);
  return base.getDefiningOp<onnx::InitializerOp>() ||
         nodeOf(base, "Constant") ||
         (isa<BlockArgument>(base) &&
          isa<onnx::GraphOp>(base.getParentRegion()->getParentOp()));
}

/// True if `value` is the number of tokens `chunk` cuts: the constant
/// `end - start` (the end clamped to a static length), or `end - start`
/// computed from the cut's own bounds (a scripted export's `e - s`).
bool isChunkLength(Value value, const SliceChain &chunk) {
  if (chunk.whole)
    return isTimeLengthOf(value, chunk.root);
  if (std::optional<double> n = scalarConstant(value)) {
    if (!chunk.start || !chunk.end)
      return false;
    int64_t end = *chunk.end;
    if (std::optional<int64_t> length = staticTimeLength(chunk.root))
      end = std::min(end, *length);
    return *n == static_cast<double>(end - *chunk.start);
  }
  onnx::NodeOp cast = nodeOf(value, "Cast");
  onnx::NodeOp sub = cast ? nodeOf(cast.getInputs()[0], "Sub") : nullptr;
  onnx::NodeOp cut = chunk.timeSlice;
  if (!sub || !cut || cut.getOpType() != "Slice")
    return false;
  return skipLayout(sub.getInputs()[0]) == skipLayout(cut.getInputs()[2]) &&
         skipLayout(sub.getInputs()[1]) == skipLayout(cut.getInputs()[1]);
}

/// The number of tokens `chunk` cuts, if its bounds are constants.
std::optional<int64_t> chunkLength(const SliceChain &chunk) {
  if (!chunk.start || !chunk.end)
    return std::nullopt;
  int64_t end = *chunk.end;
  if (std::optional<int64_t> length = staticTimeLength(chunk.root))
    end = std::min(end, *length);
  return end - *chunk.start;
}

bool nearlyEqual(double a, double b) {
  return std::abs(a - b) <= 1e-6 * std::max(std::abs(a), std::abs(b));
}

class Matcher {
public:
  explicit Matcher(std::string &why) : why(why) {}

  /// `silu(z) = z * sigmoid(z)`: returns z.
  Value matchSilu(Value value) {
    Value z;
    matchCommutative(value, "Mul", [&](Value a, Value b) {
      onnx::NodeOp sigmoid = nodeOf(b, "Sigmoid");
      if (!sigmoid || sigmoid.getInputs()[0] != a)
        return false;
      z = a;
      return true;
    });
    return z;
  }

  /// `x W`: returns (x, W).
  std::optional<std::pair<Value, Value>> matchProjection(Value value) {
    onnx::NodeOp matmul = nodeOf(value, "MatMul");
    if (!matmul)
      return std::nullopt;
    return std::make_pair(matmul.getInputs()[0], matmul.getInputs()[1]);
  }

  /// A chunk of a tensor (linear model) or `silu(x W0) * (x W2)` of one (W0
  /// and W2 constant, or the chunk's fast weights).
  std::optional<FeatureMap> matchFeatures(Value value) {
    FeatureMap map;
    if (std::optional<SliceChain> chain = window(value)) {
      map.input = *chain;
      return map;
    }
    bool found = matchCommutative(value, "Mul", [&](Value a, Value b) {
      Value gate = matchSilu(a);
      if (!gate)
        return false;
      auto gateProj = matchProjection(gate);
      auto upProj = matchProjection(b);
      if (!gateProj || !upProj || gateProj->first != upProj->first)
        return false;
      std::optional<SliceChain> chain = window(gateProj->first);
      if (!chain)
        return false;
      map.model = ModelKind::swiglu;
      map.input = *chain;
      map.w0 = skipLayout(gateProj->second);
      map.w2 = skipLayout(upProj->second);
      return true;
    });
    if (!found)
      return std::nullopt;
    return map;
  }

  /// Muon's Newton-Schulz iteration ending in `value`; fills the
  /// coefficients and epsilon and returns its input M, without the
  /// transposes around the iteration (a model orthogonalizes a tall term
  /// transposed). `turned` is set when `value` is NS(M)^T: one transpose
  /// is left, at the input or the output (the normalization reads
  /// `(k^T v)^T` as `v^T k`, and cancels the output's transpose against a
  /// weight's).
  Value matchNewtonSchulz(Value value, Update &update, bool &turned) {
    turned = false;
    bool transposed = false;
    if (Value inner = transposedInput(value)) {
      value = inner;
      transposed = true;
    }
    SmallVector<std::array<double, 3>> steps;
    Value x = value;
    while (true) {
      std::optional<std::array<double, 3>> coeffs;
      Value previous;
      matchCommutative(x, "Add", [&](Value linear, Value poly) {
        return matchNSStep(linear, poly, coeffs, previous);
      });
      if (!coeffs)
        break;
      steps.push_back(*coeffs);
      x = previous;
    }
    if (steps.empty())
      return nullptr;
    // x = X0 / (|X0|_F + eps), or X0 * Reciprocal(|X0|_F + eps)
    Value x0, size;
    if (onnx::NodeOp div = nodeOf(x, "Div")) {
      x0 = div.getInputs()[0];
      size = div.getInputs()[1];
    } else {
      matchCommutative(x, "Mul", [&](Value a, Value inverse) {
        onnx::NodeOp reciprocal = nodeOf(inverse, "Reciprocal");
        if (!reciprocal)
          return false;
        x0 = a;
        size = reciprocal.getInputs()[0];
        return true;
      });
    }
    if (!x0)
      return nullptr;
    std::optional<double> eps;
    matchCommutative(size, "Add", [&](Value norm, Value e) {
      eps = scalarConstant(e);
      return eps && isFrobeniusNorm(norm, x0);
    });
    if (!eps)
      return nullptr;
    // NS(X^T) = NS(X)^T: a transpose at either end turns the term round,
    // and two cancel.
    if (Value input = transposedInput(x0)) {
      x0 = input;
      turned = !transposed;
    } else {
      turned = transposed;
    }
    for (auto it = steps.rbegin(); it != steps.rend(); ++it)
      update.rule.nsCoeffs.append(it->begin(), it->end());
    update.rule.nsEps = *eps;
    return x0;
  }

  FailureOr<Update> matchUpdate(Value next, Value prev, Value weightForMSE);
  /// The causal (dual-form) term of a chunk's output, `factor * Trilu(phi(q)
  /// phi(k)^T) G` with G what the gradient `phi(k)^T G` of the update reads
  /// (the values, or the residual at `weight`): read as that gradient, with
  /// the queries it scores set to `queries`.
  FailureOr<Update> matchIntraTerm(Value term, Value weight, Value &queries);
  /// matchUpdate without looking through a transposed weight.
  FailureOr<Update> matchUpdateAsApplied(Value next, Value prev,
                                         Value weightForMSE);

  /// `next = start ± clip(c Kᵀ (V ⊙ ...))`: the step of GLU weight `role`
  /// (2: Wa, 0: Wg, as in matchInnerGradient) with gradients at `glu`, the
  /// clip optional.
  FailureOr<Update> matchGLUUpdate(Value next, Value start, unsigned role,
                                   const SwiGLUWeights &glu);

  /// Strips the constant factors off `value` however they are spelled (a
  /// Mul by a constant, a Div by one, a Neg) and multiplies them into
  /// `factor`; with `divisor`, also one Div by a computed value (the
  /// chunk's length), which it sets. Returns what is inside.
  static Value peelScalars(Value value, double &factor, Value *divisor) {
    while (true) {
      if (onnx::NodeOp neg = nodeOf(value, "Neg")) {
        factor = -factor;
        value = neg.getInputs()[0];
        continue;
      }
      bool scaled = matchCommutative(value, "Mul", [&](Value c, Value x) {
        std::optional<double> s = scalarConstant(c);
        if (!s || isa<BlockArgument>(x))
          return false;
        factor *= *s;
        value = x;
        return true;
      });
      if (scaled)
        continue;
      // `x * (c / n)` and `x * Reciprocal(n)`: the mean's division by a
      // length computed at run time, written as a product.
      bool divided =
          divisor && !*divisor &&
          matchCommutative(value, "Mul", [&](Value inverse, Value x) {
            if (onnx::NodeOp reciprocal = nodeOf(inverse, "Reciprocal")) {
              *divisor = reciprocal.getInputs()[0];
              value = x;
              return true;
            }
            onnx::NodeOp div = nodeOf(inverse, "Div");
            std::optional<double> c =
                div ? scalarConstant(div.getInputs()[0]) : std::nullopt;
            if (!c || scalarConstant(div.getInputs()[1]))
              return false;
            factor *= *c;
            *divisor = div.getInputs()[1];
            value = x;
            return true;
          });
      if (divided)
        continue;
      onnx::NodeOp div = nodeOf(value, "Div");
      if (!div)
        return value;
      std::optional<double> s = scalarConstant(div.getInputs()[1]);
      if (s && *s != 0.0) {
        factor /= *s;
      } else if (divisor && !*divisor) {
        *divisor = div.getInputs()[1];
      } else {
        return value;
      }
      value = div.getInputs()[0];
    }
  }

  std::string &why;
  /// While reading a SwiGLU layer whose inner weights train: the weights
  /// the chunk's gradients are taken at, and which of them the update moves.
  const SwiGLUWeights *at = nullptr;
  unsigned role = 1;
  /// While reading the update of a weight the model stores transposed.
  bool transposedWeight = false;
  /// While reading a causal term next to an output that applies the stored
  /// weight as `(W_s phi(q)^T)^T` (readApplied): a residual predicts
  /// `(W_s k^T)^T`.
  bool appliedAsStored = false;
  /// The scripted form's Loop, whose bounds check proves a mean's divisor
  /// computed in its body.
  onnx::NodeOp loop;
  /// Set when the layer is one full-batch step: its keys, values and rates
  /// are whole sequences, not chunks.
  const WholeSequences *wholeSequence = nullptr;

private:
  /// The tokens `value` holds: a chunk, or the whole sequence of a
  /// full-batch step.
  std::optional<SliceChain> window(Value value, bool timeLast = false) const {
    return tokenWindow(value, wholeSequence, timeLast);
  }

  bool fail(const Twine &reason) {
    if (why.empty())
      why = reason.str();
    return false;
  }

  /// `||x||_F` over the two innermost axes: ReduceL2, Sqrt of
  /// ReduceSumSquare, or Sqrt of ReduceSum of `x * x`, `x ^ 2` or `|x| ^ 2`
  /// (the square root also as `^ 0.5`: torch-mlir's `x.norm()`).
  static bool isFrobeniusNorm(Value norm, Value x) {
    if (onnx::NodeOp l2 = nodeOf(norm, "ReduceL2"))
      return reducesInnerMatrix(l2) && l2.getInputs()[0] == x;
    Value sumOf;
    if (onnx::NodeOp sqrt = nodeOf(norm, "Sqrt"))
      sumOf = sqrt.getInputs()[0];
    else if (onnx::NodeOp root = nodeOf(norm, "Pow");
             root && scalarConstant(root.getInputs()[1]) == 0.5)
      sumOf = root.getInputs()[0];
    if (!sumOf)
      return false;
    if (onnx::NodeOp squares = nodeOf(sumOf, "ReduceSumSquare"))
      return reducesInnerMatrix(squares) && squares.getInputs()[0] == x;
    onnx::NodeOp sum = nodeOf(sumOf, "ReduceSum");
    if (!sum || !reducesInnerMatrix(sum))
      return false;
    if (onnx::NodeOp pow = nodeOf(sum.getInputs()[0], "Pow")) {
      Value base = pow.getInputs()[0];
      if (onnx::NodeOp abs = nodeOf(base, "Abs"))
        base = abs.getInputs()[0];
      return base == x && scalarConstant(pow.getInputs()[1]) == 2.0;
    }
    onnx::NodeOp square = nodeOf(sum.getInputs()[0], "Mul");
    return square && square.getInputs()[0] == x && square.getInputs()[1] == x;
  }

  /// `a X + (b A + c A A) X` with `A = X X^T`; the scalars may sit
  /// anywhere in their products (`(c A) A` is `c A A`).
  bool matchNSStep(Value linear, Value poly,
                   std::optional<std::array<double, 3>> &coeffs,
                   Value &previous) {
    std::optional<double> a;
    Value x;
    matchCommutative(linear, "Mul", [&](Value c, Value v) {
      a = scalarConstant(c);
      x = v;
      return a.has_value();
    });
    onnx::NodeOp apply = nodeOf(poly, "MatMul");
    if (!a || !apply || apply.getInputs()[1] != x)
      return false;
    onnx::NodeOp sum = nodeOf(apply.getInputs()[0], "Add");
    if (!sum)
      return false;
    auto first = gramTerm(sum.getInputs()[0], x);
    auto second = gramTerm(sum.getInputs()[1], x);
    if (!first || !second || first->second == second->second)
      return false;
    if (first->second == 2)
      std::swap(first, second);
    coeffs = {*a, first->first, second->first};
    previous = x;
    return true;
  }

  /// `s A` (power 1) or `s A A` (power 2) with `A = X X^T`: (s, power).
  static std::optional<std::pair<double, int>> gramTerm(Value term, Value x) {
    double factor = 1.0;
    Value rest = peelScalars(term, factor, /*divisor=*/nullptr);
    if (isGram(rest, x))
      return std::make_pair(factor, 1);
    onnx::NodeOp square = nodeOf(rest, "MatMul");
    if (!square)
      return std::nullopt;
    Value left = peelScalars(square.getInputs()[0], factor, nullptr);
    Value right = peelScalars(square.getInputs()[1], factor, nullptr);
    if (!isGram(left, x) || !isGram(right, x))
      return std::nullopt;
    return std::make_pair(factor, 2);
  }

  /// A ReduceSum over exactly the two innermost axes.
  static bool reducesInnerMatrix(onnx::NodeOp sum) {
    std::optional<SmallVector<int64_t>> axes = reduceAxes(sum);
    std::optional<int64_t> rank = rankOf(sum.getInputs()[0]);
    if (!axes || axes->size() != 2)
      return false;
    // Negative axes name the innermost ones whatever the (untyped) rank.
    if (!rank)
      return llvm::is_contained(*axes, -1) && llvm::is_contained(*axes, -2);
    SmallVector<int64_t> sorted = *axes;
    for (int64_t &axis : sorted)
      if (axis < 0)
        axis += *rank;
    llvm::sort(sorted);
    return sorted[0] == *rank - 2 && sorted[1] == *rank - 1;
  }

  static bool isGram(Value gram, Value x) {
    onnx::NodeOp matmul = gram ? nodeOf(gram, "MatMul") : nullptr;
    return matmul && matmul.getInputs()[0] == x &&
           computesTransposeOf(matmul.getInputs()[1], x);
  }

  bool matchDelta(Value delta, Update &update, Value weight);
  /// `(k W_s^T - v)^T` or `W_s k^T - v^T` (either order) for a weight W_s
  /// stored transposed: sets the key and value chunks, and whether the
  /// prediction comes first (the MSE gradient's sign).
  void readTransposedResidual(Value lhs, Value stored,
                              std::optional<SliceChain> &keys,
                              std::optional<SliceChain> &values,
                              bool &predictedFirst) {
    auto read = [&](Value predicted, Value target, bool outer) {
      onnx::NodeOp predict = nodeOf(predicted, "MatMul");
      if (!predict)
        return false;
      Value x = predict.getInputs()[0], w = predict.getInputs()[1];
      // outer: (k W_s^T - v)^T; inner: W_s k^T - v^T.
      std::optional<SliceChain> k =
          outer ? (same(transposedInput(w), stored) ? window(x) : std::nullopt)
                : (same(x, stored) ? window(transposedInput(w)) : std::nullopt);
      std::optional<SliceChain> v =
          window(outer ? target : transposedInput(target));
      if (!k || !v)
        return false;
      keys = k;
      values = v;
      return true;
    };
    for (bool outer : {true, false}) {
      Value diff = outer ? transposedInput(lhs) : lhs;
      onnx::NodeOp sub = diff ? nodeOf(diff, "Sub") : nullptr;
      if (!sub)
        continue;
      Value a = sub.getInputs()[0], b = sub.getInputs()[1];
      if (read(a, b, outer)) {
        predictedFirst = true;
        return;
      }
      if (read(b, a, outer)) {
        predictedFirst = false;
        return;
      }
    }
  }
  bool matchGradient(Value value, Value weight, Update &update);
  bool readDivisor(Value divisor, const SliceChain &chunk, Update &update,
                   StringRef what);
  bool
  matchValueSide(Value right, Value weight, Update &update,
                 llvm::function_ref<bool(const SliceChain &)> checkDivisor);
  bool matchKeySide(Value value, Update &update);
  /// The values `v` of a dot-loss gradient, or `v ⊙ η` with the per-token
  /// rates η (Kᵀ (V ⊙ η) is (K ⊙ η)ᵀ V: LaCT's `vi * lr1i`), which it reads
  /// when the keys took none; constant factors of them are the update's.
  std::optional<SliceChain> valuesOf(Value value, Update &update);
  /// valuesOf without the constant factors.
  std::optional<SliceChain> scaledValuesOf(Value value, Update &update);
  bool matchScaledKeys(Value features, Value rate, Update &update);
  bool matchTransposedKeySide(Value value, Update &update);
  bool matchMomentum(Value value, Update &update, Value &gradient);
};
} // namespace

/// The per-token learning rates `rates` (a chunk of lr, maybe one column of
/// it) scale the update's keys.
static void readRates(const SliceChain &rates, Update &update) {
  update.rule.lr = rates.root;
  update.rule.lrColumn = rates.column;
  update.lrChunk = rates;
}

/// The key side `phi(k_c)` of a gradient, with an optional per-token rate.
bool Matcher::matchKeySide(Value value, Update &update) {
  auto scaled = [&] {
    return matchCommutative(value, "Mul", [&](Value features, Value rate) {
      return matchScaledKeys(features, rate, update);
    });
  };
  // A whole sequence may be any tensor, `k * lr` too: the rates are read
  // first.
  if (wholeSequence && scaled())
    return true;
  if (std::optional<FeatureMap> keys = matchFeatures(value)) {
    update.keys = *keys;
    return true;
  }
  if (scaled())
    return true;
  // Constant factors on the keys are the update's: an einsum of `s * k`
  // and v reads as Transpose(s * k) v.
  double factor = 1;
  Value inner = peelScalars(value, factor, /*divisor=*/nullptr);
  if (inner == value || !matchKeySide(inner, update))
    return false;
  update.factor *= factor;
  return true;
}

/// True if `rates` holds one number per token: one column, or a tensor
/// whose last axis has one entry.
static bool isRateColumn(const SliceChain &rates) {
  auto type = dyn_cast<ShapedType>(rates.root.getType());
  return rates.column || (type && type.hasRank() && type.getRank() >= 1 &&
                          type.getShape().back() == 1);
}

std::optional<SliceChain> Matcher::valuesOf(Value value, Update &update) {
  std::optional<SliceChain> found = scaledValuesOf(value, update);
  if (found || !value)
    return found;
  // Constant factors on the values are the update's (`v^T (s k)` of a
  // weight stored transposed, an einsum of `s * v`).
  double factor = 1;
  Value inner = peelScalars(value, factor, /*divisor=*/nullptr);
  if (inner == value || !(found = scaledValuesOf(inner, update)))
    return std::nullopt;
  update.factor *= factor;
  return found;
}

std::optional<SliceChain> Matcher::scaledValuesOf(Value value, Update &update) {
  std::optional<SliceChain> scaled;
  if (value && !update.rule.lr)
    matchCommutative(value, "Mul", [&](Value values, Value rate) {
      std::optional<SliceChain> rates = window(rate);
      std::optional<SliceChain> chunk = window(values);
      if (!rates || !chunk || !isRateColumn(*rates))
        return false;
      readRates(*rates, update);
      scaled = chunk;
      return true;
    });
  return scaled ? scaled : window(value);
}

/// `phi(k_c) * lr_c`: the keys and their per-token rates.
bool Matcher::matchScaledKeys(Value features, Value rate, Update &update) {
  std::optional<FeatureMap> keys = matchFeatures(features);
  std::optional<SliceChain> lr = window(rate);
  if (!keys || !lr || (wholeSequence && !isRateColumn(*lr)))
    return false;
  update.keys = *keys;
  readRates(*lr, update);
  return true;
}

/// `phi(k_c)^T` with the keys' optional rates, also as the normalization may
/// leave a transposed product: `phi(k)^T * lr^T`.
bool Matcher::matchTransposedKeySide(Value value, Update &update) {
  if (Value keys = transposedInput(value))
    return matchKeySide(keys, update);
  return matchCommutative(value, "Mul", [&](Value a, Value b) {
    Value features = transposedInput(a), rate = transposedInput(b);
    return features && rate && matchScaledKeys(features, rate, update);
  });
}

/// The keys' learning rates are the keys' own tokens'.
static bool ratesMatchKeys(const Update &update) {
  return !update.lrChunk || sameWindow(*update.lrChunk, update.keys.input);
}

/// A mean's divisor is the length of `chunk`: a constant, or (in a Loop) a
/// value the Loop-bounds check must prove so, kept as the update's
/// `lengthDivisor`. No divisor is fine too.
bool Matcher::readDivisor(Value divisor, const SliceChain &chunk,
                          Update &update, StringRef what) {
  if (!divisor || isChunkLength(divisor, chunk))
    return true;
  onnx::NodeOp cut = chunk.timeSlice;
  if (loop && cut && loop->isProperAncestor(cut) && !scalarConstant(divisor)) {
    update.lengthDivisor = divisor;
    return true;
  }
  return fail(what + " divides by a value that is not the chunk length");
}

/// `phi(k)^T v` (dot loss) or `-phi(k)^T (k W - v)` (MSE), possibly divided
/// by the chunk length and scaled.
bool Matcher::matchGradient(Value value, Value weight, Update &update) {
  Value divisor;
  value = peelScalars(value, update.factor, &divisor);
  if (divisor)
    update.rule.reduction = Reduction::mean;
  auto checkDivisor = [&](const SliceChain &chunk) {
    return readDivisor(divisor, chunk, update, "the update");
  };
  if (at && role != 1) {
    std::optional<InnerGradient> inner =
        matchInnerGradient(value, role, *at, wholeSequence, why);
    if (!inner)
      return false;
    update.factor *= inner->factor;
    update.keys.model = ModelKind::swiglu;
    update.keys.input = inner->keys;
    update.keys.w0 = (*at)[0];
    update.keys.w2 = (*at)[2];
    update.rule.v = inner->values.root;
    update.valueChunk = inner->values;
    update.keyStart = inner->values.start;
    if (inner->lr)
      readRates(*inner->lr, update);
    return checkDivisor(inner->values);
  }
  onnx::NodeOp outer = nodeOf(value, "MatMul");
  if (!outer)
    return fail("the update is not a product of keys and values");
  // Constant factors of either operand are the update's: PyTorch evaluates
  // `w + lr * k.T @ v` as `(lr * k^T) v`.
  Value lhs = peelScalars(outer.getInputs()[0], update.factor, &divisor);
  Value rhs = peelScalars(outer.getInputs()[1], update.factor, &divisor);
  if (divisor)
    update.rule.reduction = Reduction::mean;
  if (transposedWeight) {
    // v_c^T phi(k_c) (dot loss) or (k_c W - v_c)^T k_c (MSE): the update of
    // a weight stored transposed.
    bool keysRead = matchKeySide(rhs, update);
    std::optional<SliceChain> values =
        keysRead ? valuesOf(transposedInput(lhs), update) : std::nullopt;
    std::optional<SliceChain> keysRaw;
    bool predictedFirst = false;
    if (!values) {
      values.reset();
      readTransposedResidual(lhs, weight, keysRaw, values, predictedFirst);
    }
    if (!values || !keysRead)
      return fail("the update of the transposed weight is not v^T phi(k) or "
                  "(k W - v)^T k of the chunk");
    update.rule.v = values->root;
    update.valueChunk = *values;
    update.keyStart = values->start;
    if (!sameWindow(update.keys.input, *values) || !ratesMatchKeys(update))
      return fail("the update's keys, values and learning rates come from "
                  "different chunks");
    if (keysRaw) {
      if (keysRaw->root != update.keys.input.root ||
          update.keys.model != ModelKind::linear ||
          !sameWindow(*keysRaw, *values))
        return fail("the update's residual is not k W - v of the chunk");
      update.rule.loss = LossKind::mse;
      if (predictedFirst)
        update.rule.sign =
            update.rule.sign == Sign::descent ? Sign::ascent : Sign::descent;
    }
    return checkDivisor(*values);
  }
  if (!matchTransposedKeySide(lhs, update))
    return fail("the update's left factor is not the transposed keys of the "
                "chunk");
  return matchValueSide(rhs, weight, update, checkDivisor);
}

/// The right factor of a gradient: the chunk's values `v_c` (dot loss) or
/// the residual `k_c W - v_c` (MSE), token by token.
bool Matcher::matchValueSide(
    Value right, Value weight, Update &update,
    llvm::function_ref<bool(const SliceChain &)> checkDivisor) {
  if (!ratesMatchKeys(update))
    return fail("the update's keys and learning rates come from different "
                "chunks");
  if (std::optional<SliceChain> values = valuesOf(right, update)) {
    if (!ratesMatchKeys(update))
      return fail("the update's values and learning rates come from "
                  "different chunks");
    update.rule.v = values->root;
    update.valueChunk = *values;
    update.keyStart = values->start;
    if (!sameWindow(update.keys.input, *values))
      return fail("the update's keys and values come from different chunks");
    return checkDivisor(*values);
  }
  onnx::NodeOp residual = nodeOf(right, "Sub");
  if (!residual)
    return fail("the update's right factor is neither the values nor a "
                "residual");
  // k W - v is the MSE gradient direction; v - k W its negative.
  Value a = residual.getInputs()[0], b = residual.getInputs()[1];
  // `k W`, or `(W_s k^T)^T` of a weight the output applies as stored.
  auto prediction = [&](Value value) -> std::optional<SliceChain> {
    if (onnx::NodeOp product = nodeOf(value, "MatMul"))
      return same(product.getInputs()[1], weight)
                 ? window(product.getInputs()[0])
                 : std::nullopt;
    Value inner = appliedAsStored ? transposedInput(value) : Value();
    onnx::NodeOp product = inner ? nodeOf(inner, "MatMul") : nullptr;
    Value keys = product ? transposedInput(product.getInputs()[1]) : Value();
    if (!keys || !same(product.getInputs()[0], weight))
      return std::nullopt;
    return window(keys);
  };
  bool predictedFirst = prediction(a).has_value();
  Value predicted = predictedFirst ? a : b, target = predictedFirst ? b : a;
  std::optional<SliceChain> values = window(target);
  std::optional<SliceChain> keysRaw = prediction(predicted);
  if (!values || !keysRaw || keysRaw->root != update.keys.input.root ||
      update.keys.model != ModelKind::linear)
    return fail("the update's residual is not k W - v of the chunk");
  update.rule.loss = LossKind::mse;
  update.rule.v = values->root;
  update.valueChunk = *values;
  update.keyStart = values->start;
  if (!sameWindow(update.keys.input, *values) || !sameWindow(*keysRaw, *values))
    return fail("the update's keys and values come from different chunks");
  if (!checkDivisor(*values))
    return false;
  if (predictedFirst)
    update.rule.sign =
        update.rule.sign == Sign::descent ? Sign::ascent : Sign::descent;
  return true;
}

FailureOr<Update> Matcher::matchIntraTerm(Value term, Value weight,
                                          Value &queries) {
  Update update;
  Value divisor;
  term = peelScalars(term, update.factor, &divisor);
  if (divisor)
    update.rule.reduction = Reduction::mean;
  onnx::NodeOp outer = nodeOf(term, "MatMul");
  // The per-token rates scale the keys, or (TTT-Linear's `eta * Attn`) the
  // score matrix's columns, outside or inside the mask.
  std::optional<SliceChain> columnRates;
  auto peelRates = [&](Value scores) {
    Value inner = scores;
    matchCommutative(scores, "Mul", [&](Value s, Value row) {
      std::optional<SliceChain> rates = window(transposedInput(row));
      if (!rates)
        return false;
      columnRates = rates;
      inner = s;
      return true;
    });
    return inner;
  };
  Value scores = outer ? peelRates(outer.getInputs()[0]) : Value();
  scores = scores ? lowerTriangleOf(scores) : Value();
  if (scores && !columnRates)
    scores = peelRates(scores);
  onnx::NodeOp product = scores ? nodeOf(scores, "MatMul") : nullptr;
  if (!product || !matchTransposedKeySide(product.getInputs()[1], update) ||
      (columnRates && update.rule.lr)) {
    fail("the chunk's causal term is not Trilu(phi(q) phi(k)^T) times the "
         "values");
    return failure();
  }
  if (columnRates)
    readRates(*columnRates, update);
  queries = product.getInputs()[0];
  auto checkDivisor = [&](const SliceChain &chunk) {
    return readDivisor(divisor, chunk, update, "the causal term");
  };
  if (!matchValueSide(outer.getInputs()[1], weight, update, checkDivisor))
    return failure();
  return update;
}

/// `lr_scale * NS(m)` etc.: the term added to the trained weight.
bool Matcher::matchDelta(Value delta, Update &update, Value weight) {
  delta = peelScalars(delta, update.factor, /*divisor=*/nullptr);
  bool turned = false;
  Value orthogonalized = matchNewtonSchulz(delta, update, turned);
  double outside = update.factor;
  if (orthogonalized) {
    delta = orthogonalized;
    update.factor = 1.0;
  }
  Value gradient = delta;
  if (!matchMomentum(delta, update, gradient))
    gradient = delta;
  bool matched;
  if (!turned) {
    matched = matchGradient(gradient, weight, update);
  } else {
    // The transposed term: v^T phi(k), as a weight stored transposed is
    // updated (the dot loss only: an MSE term reads the weight).
    transposedWeight = !transposedWeight;
    matched = matchGradient(gradient, weight, update);
    transposedWeight = !transposedWeight;
    if (matched && update.rule.loss != LossKind::dot)
      return fail("its orthogonalized MSE term is transposed");
  }
  if (orthogonalized) {
    // NS(c G) = sign(c) NS(|c| G): the sign leaves, |c| stays inside.
    update.innerFactor = std::abs(update.factor);
    update.factor = update.factor < 0 ? -outside : outside;
  }
  return matched;
}

/// `m_c = mean(momentum_c) m_{c-1} + g_c`: fills the momentum fields and
/// returns g_c.
bool Matcher::matchMomentum(Value value, Update &update, Value &gradient) {
  // One value per chunk: Gather(M, c) on M's last axis.
  // One value per chunk: Gather(M, c) on M's last axis (or on the middle
  // one of a [B, N, H] tensor, once its layout transpose moved behind the
  // cut), or Slice(M, [c], [c + 1]) on it (c a constant or a Loop's counter).
  bool chunkBeforeLast = false;
  auto chunkIndex = [&](Value mu, Value &rates) -> Value {
    if (onnx::NodeOp gather = nodeOf(skipLayout(mu), "Gather")) {
      if (gather.getInputs().size() != 2)
        return nullptr;
      rates = gather.getInputs()[0];
      Value index = gather.getInputs()[1];
      std::optional<int64_t> rank = rankOf(rates);
      auto attr = dyn_cast_or_null<IntegerAttr>(gather.getONNXAttr("axis"));
      int64_t axis = attr ? attr.getInt() : 0;
      auto indexType = dyn_cast<ShapedType>(index.getType());
      chunkBeforeLast = rank && *rank == 3 && (axis == -2 || axis == *rank - 2);
      if (!rank || *rank < 2 ||
          (axis != -1 && axis != *rank - 1 && !chunkBeforeLast) || !indexType ||
          !indexType.hasRank() || indexType.getRank() != 0)
        return nullptr;
      return index;
    }
    chunkBeforeLast = false;
    onnx::NodeOp slice = nodeOf(skipLayout(mu), "Slice");
    if (!slice || slice.getInputs().size() < 4 || slice.getInputs().size() > 5)
      return nullptr;
    rates = slice.getInputs()[0];
    std::optional<int64_t> rank = rankOf(rates);
    std::optional<SmallVector<int64_t>> axes =
        intConstant(slice.getInputs()[3]);
    if (!rank || *rank < 2 || !axes || axes->size() != 1 ||
        ((*axes)[0] != -1 && (*axes)[0] != *rank - 1))
      return nullptr;
    if (slice.getInputs().size() == 5 &&
        intConstant(slice.getInputs()[4]) != SmallVector<int64_t>{1})
      return nullptr;
    Value start = slice.getInputs()[1], end = slice.getInputs()[2];
    std::optional<SmallVector<int64_t>> from = intConstant(start);
    std::optional<SmallVector<int64_t>> to = intConstant(end);
    if (from && to)
      return from->size() == 1 && to->size() == 1 && (*to)[0] == (*from)[0] + 1
                 ? start
                 : nullptr;
    // In a Loop: [i, i + 1).
    bool nextOne =
        matchCommutative(skipLayout(end), "Add", [&](Value a, Value b) {
          return skipLayout(a) == skipLayout(start) && scalarConstant(b) == 1.0;
        });
    return nextOne ? start : nullptr;
  };
  auto matchPerChunk = [&](Value mu, Value state, Value g) {
    Value rates;
    Value index = chunkIndex(mu, rates);
    if (!index)
      return false;
    update.rule.momentum = rates;
    update.rule.momentumPerChunk = true;
    update.rule.momentumTimeBeforeLast = chunkBeforeLast;
    update.momentumIndex = index;
    update.momentumPrev = state;
    update.momentumNext = value;
    gradient = g;
    return true;
  };
  auto matchDecayed = [&](Value decayed, Value g) {
    return matchCommutative(decayed, "Mul", [&](Value mu, Value state) {
      if (matchPerChunk(mu, state, g))
        return true;
      onnx::NodeOp mean = nodeOf(skipLayout(mu), "ReduceMean");
      if (!mean)
        return false;
      std::optional<SmallVector<int64_t>> axes = reduceAxes(mean);
      std::optional<int64_t> rank = rankOf(mean.getInputs()[0]);
      if (!axes || axes->size() != 1)
        return false;
      int64_t axis = (*axes)[0];
      bool last = axis == -1 || (rank && axis == *rank - 1);
      // Research code averages `momentum[:, s:e]` of a [B, T, H] tensor
      // over its time axis, the second-to-last.
      bool beforeLast =
          !last && rank && *rank == 3 && (axis == -2 || axis == *rank - 2);
      std::optional<SliceChain> chain =
          window(mean.getInputs()[0], /*timeLast=*/last);
      if (!chain || (!last && !beforeLast))
        return false;
      update.rule.momentum = chain->root;
      update.rule.momentumTimeBeforeLast = beforeLast;
      update.momentumChunk = *chain;
      update.momentumPrev = state;
      update.momentumNext = value;
      gradient = g;
      return true;
    });
  };
  if (matchCommutative(value, "Add", matchDecayed))
    return true;
  // `mu m - g`: the state carries the negated term.
  onnx::NodeOp sub = nodeOf(value, "Sub");
  if (!sub || !matchDecayed(sub.getInputs()[0], sub.getInputs()[1]))
    return false;
  update.factor = -update.factor;
  return true;
}

FailureOr<Update> Matcher::matchUpdate(Value next, Value prev,
                                       Value weightForMSE) {
  // A weight applied transposed is updated as the model stores it:
  // W^T_next = (W + U)^T, with U = v^T phi(k) for the dot loss.
  Value storedNext = transposedInput(skipLayout(next));
  Value storedPrev = prev ? transposedInput(skipLayout(prev)) : Value();
  // The first chunk may apply a constant the exporter folded from the
  // transpose of the stored weight.
  if (storedNext && prev && !storedPrev && isConstantWeight(prev))
    storedPrev = storedOperandOf(prev, storedNext);
  auto matchStored = [&]() {
    transposedWeight = true;
    FailureOr<Update> update = matchUpdate(storedNext, storedPrev, nullptr);
    transposedWeight = false;
    if (succeeded(update))
      update->rule.transposedWeight = true;
    return update;
  };
  if (storedNext && storedPrev && !transposedWeight && !at)
    return matchStored();
  // Before the first chunk (update then apply) there is no previous weight
  // to compare with: the weight is read as applied, else as stored.
  if (storedNext && !prev && !transposedWeight && !at) {
    std::string saved = why;
    FailureOr<Update> applied = matchUpdateAsApplied(next, prev, weightForMSE);
    if (succeeded(applied))
      return applied;
    why = saved;
    return matchStored();
  }
  return matchUpdateAsApplied(next, prev, weightForMSE);
}

FailureOr<Update> Matcher::matchUpdateAsApplied(Value next, Value prev,
                                                Value weightForMSE) {
  Update update;
  bool found = false;
  // A weight norm renormalizes the columns after the step.
  double wnEps = 0.0;
  Value normTarget;
  if (Value stepped = matchWeightNorm(skipLayout(next), wnEps, normTarget))
    next = stepped;
  for (StringRef op : {"Add", "Sub"}) {
    onnx::NodeOp node = nodeOf(skipLayout(next), op);
    if (!node || node.getInputs().size() != 2)
      continue;
    for (int first = 0; first < 2 && !found; ++first) {
      Value before = node.getInputs()[first],
            delta = node.getInputs()[1 - first];
      if (op == "Sub" && first == 1)
        continue; // delta - W is not an update of W
      if (prev && !same(before, prev))
        continue;
      Update candidate;
      candidate.prev = before;
      candidate.rule.weightNorm = static_cast<bool>(normTarget);
      candidate.rule.wnEps = wnEps;
      candidate.normTarget = normTarget;
      // W - U is W + (-1) U: the sign joins the constant factors, so that
      // chunks spelled W - U and W + (-1) U (a step size that is -1 for a
      // short chunk) read alike.
      if (op == "Sub")
        candidate.factor = -candidate.factor;
      std::string saved = why;
      why.clear();
      if (matchDelta(delta, candidate, weightForMSE ? weightForMSE : before)) {
        update = candidate;
        found = true;
      }
      if (!found && saved.size())
        why = saved;
    }
  }
  if (!found) {
    if (why.empty())
      why = "the trained weight is not updated by adding a term to it";
    return failure();
  }
  return update;
}

FailureOr<Update> Matcher::matchGLUUpdate(Value next, Value start,
                                          unsigned role,
                                          const SwiGLUWeights &glu) {
  Value delta;
  double outer = 1.0;
  for (StringRef op : {"Add", "Sub"}) {
    onnx::NodeOp node = nodeOf(skipLayout(next), op);
    if (!node || node.getInputs().size() != 2 || delta)
      continue;
    for (int first = 0; first < (op == "Sub" ? 1 : 2) && !delta; ++first) {
      if (!same(node.getInputs()[first], start))
        continue;
      delta = node.getInputs()[1 - first];
      outer = op == "Sub" ? -1.0 : 1.0;
    }
  }
  if (!delta) {
    fail("the trained weight is not updated by adding a term to it");
    return failure();
  }
  delta = peelScalars(delta, outer, /*divisor=*/nullptr);
  Update update;
  Value term = matchColumnClip(delta);
  update.rule.clipColumns = static_cast<bool>(term);
  if (!term)
    term = delta;
  std::optional<InnerGradient> inner =
      matchInnerGradient(term, role, glu, wholeSequence, why);
  if (!inner)
    return failure();
  update.keys.model = ModelKind::glu;
  update.keys.input = inner->keys;
  update.rule.v = inner->values.root;
  update.valueChunk = inner->values;
  if (inner->lr)
    readRates(*inner->lr, update);
  update.rule.reduction = inner->mean ? Reduction::mean : Reduction::sum;
  // clip(c X) = sign(c) clip(|c| X): |c| is the loss scale, the sign joins
  // the step's.
  double step = update.rule.clipColumns ? outer * (inner->factor < 0 ? -1 : 1)
                                        : outer * inner->factor;
  if (update.rule.clipColumns)
    update.rule.lossScale = std::abs(inner->factor);
  if (step == 0.0 || update.rule.lossScale == 0.0) {
    fail("its update is multiplied by zero");
    return failure();
  }
  update.rule.lrScale = std::abs(step);
  update.rule.sign = step > 0 ? Sign::descent : Sign::ascent;
  return update;
}

//===----------------------------------------------------------------------===//
// The whole layer
//===----------------------------------------------------------------------===//

namespace {
/// A run-time window of a buffer write (gridWindow): every index of the
/// written axes but `axis`, which runs from `start` to `end`.
struct GridWindow {
  int64_t axis;
  Value start, end;
};

/// Collects a layer's configuration from its output and its updates, and
/// insists that every chunk agrees.
class LayerReader {
public:
  LayerReader(const FoundLayer &layer, std::string &why)
      : layer(layer), why(why), matcher(why) {
    matcher.loop = layer.loop;
  }

  FailureOr<LayerConfig> read();

private:
  LogicalResult fail(const Twine &reason) {
    if (why.empty())
      why = reason.str();
    return failure();
  }

  /// The output `o = phi(q_c) S` of `step` (plus, in the dual form, the
  /// causal term of the chunk's own tokens): returns S and fills the model.
  FailureOr<Value> readOutput(const ChunkStep &step);
  /// `phi(q_c) S` as `output`.
  FailureOr<Value> readApplied(Value output, const ChunkStep &step);
  /// A dual-form layer's causal terms compute the update's gradient token
  /// by token: the order is `causal`.
  LogicalResult checkCausalTerms();
  /// Adds one chunk's update to the configuration.
  LogicalResult addUpdate(const Update &update);
  /// The step size, sign and reduction of the updates' constant factors.
  LogicalResult settleScale(UpdateRule &rule);
  /// The chunk-to-chunk updates of the two forms; set `initial` to the
  /// weight before the first chunk.
  LogicalResult readUnrolled(Value &initial);
  LogicalResult readLoop(Value state, Value &initial);
  /// A full-batch step: `state` is the initial weight plus one update on
  /// every key and value.
  LogicalResult readFullBatch(Value state, Value &initial);
  /// True if a full-batch step may start from `weight`: a constant weight,
  /// or one that no graph input but itself is computed into (a low-rank
  /// product of parameters, a fast weight passed to the layer).
  bool isStartWeight(Value weight);
  /// The weight a full-batch step starts from: `next` is `W + U` or `W - U`,
  /// maybe renormalized, with W a start weight. Null if not.
  Value stepStart(Value next);
  /// True if the features read `root` as the queries: the step's query
  /// tensor (a full-batch step's up to layout nodes and transposes, or a cut
  /// of it: LaCT-NVS's target views after the input views).
  bool readsQuery(Value root, const ChunkStep &step) const {
    if (root == step.query)
      return true;
    if (!config.fullBatch)
      return false;
    Value base = skipLayoutAndTransposes(root);
    if (std::optional<SliceChain> cut = sliceChain(base))
      base = skipLayoutAndTransposes(cut->root);
    return base == step.query;
  }
  /// A Loop's update reads its output's tokens, and the loop walks the
  /// sequences it cuts chunk by chunk.
  LogicalResult checkLoopWalk(const Update &update);
  /// A Loop's momentum is loop-carried and starts from zero.
  LogicalResult checkLoopMomentum(const Update &update);
  /// Chunk i's queries start at i * C, and the last chunk reaches the end.
  LogicalResult checkChunkOrder();
  /// Update i of an unrolled layer (the first the one before chunk 0's
  /// output, if any) reads the tokens of chunk i's queries: a layer whose
  /// later chunks add an earlier chunk's update again is no prefix sum.
  LogicalResult checkUpdatesInSequence(ArrayRef<Update> updates);
  /// A Loop that writes its chunks into a carried buffer writes each
  /// chunk's output at its queries' tokens, and the writes cover the
  /// buffer: it then holds the chunk outputs joined along the time axis.
  LogicalResult checkBufferWrites();
  /// True if `initial` is zeros whose `time` axis is the queries' time axis
  /// and as long (`zeros_like(v)`, `new_zeros(B, T, ..)` with T read off
  /// the queries, `tensor.empty(dim(q, t))`).
  bool isZerosAsLongAsQueries(Value initial, int64_t time);
  /// The same for writes at indices built at run time (gridWindow).
  LogicalResult checkGridWrites(const GridWindow &grid, int64_t time,
                                Value initial);
  /// An unrolled layer's momentum starts from zero and is carried from
  /// chunk to chunk.
  LogicalResult checkMomentumChain(ArrayRef<Update> updates);
  /// The learning-rate column a rule reads belongs to weight `index` of
  /// `numWeights`.
  LogicalResult checkRateColumn(const UpdateRule &rule, int64_t index,
                                int64_t numWeights);

  /// A full-batch GLU layer, `(x Wa) ⊙ silu(x Wg)` with Wa and Wg stepped
  /// (ViT^3's first branch).
  FailureOr<LayerConfig> readTrainedGLU();
  /// True if some chunk's gate or up projection is not a constant weight.
  bool trainsInnerWeights();
  /// A SwiGLU layer whose gate or up projection trains as well (LaCT).
  FailureOr<LayerConfig> readTrainedSwiGLU();
  /// The three weights a chunk's output applies.
  FailureOr<SwiGLUWeights> readChunkWeights(const ChunkStep &step);
  /// Reads the trained weights' updates of the two forms into `updates`
  /// (per weight, in chunk order) and sets `initial`.
  LogicalResult readTrainedUnrolled(std::array<std::vector<Update>, 3> &updates,
                                    SwiGLUWeights &initial);
  LogicalResult readTrainedLoop(std::array<std::vector<Update>, 3> &updates,
                                SwiGLUWeights &initial);
  LogicalResult
  readTrainedFullBatch(std::array<std::vector<Update>, 3> &updates,
                       SwiGLUWeights &initial);
  /// Matches the update of weight `role` from `prev` to `next`, with
  /// gradients taken at `at`.
  FailureOr<Update> matchTrainedUpdate(Value next, Value prev, unsigned role,
                                       const SwiGLUWeights &at);

  const FoundLayer &layer;
  std::string &why;
  Matcher matcher;
  /// Set by readOutput: the weight it returned is the stored one, applied
  /// transposed.
  bool outputReadsStored = false;
  LayerConfig config;
  /// The queries the output's features read.
  Value queries;
  /// What a full-batch step reads whole.
  DependenceCache deps;
  WholeSequences sequences;
  std::optional<FeatureMap> features;
  std::optional<Update> firstUpdate;
  /// Every update's constant factor and the length of the chunk it reads.
  SmallVector<std::pair<double, std::optional<int64_t>>> factors;
  /// The same for the factors inside a Newton-Schulz step.
  SmallVector<std::pair<double, std::optional<int64_t>>> innerFactors;
  /// A dual-form layer's causal terms, one per chunk read, and their
  /// factors.
  std::vector<Update> intraTerms;
  SmallVector<std::pair<double, std::optional<int64_t>>> intraFactors;
  unsigned slot = 0;
};
} // namespace

FailureOr<Value> LayerReader::readOutput(const ChunkStep &step) {
  if (step.chunkData.empty())
    return readApplied(step.output, step);
  if (layer.outputSwapped)
    return fail("its buffer writes turn each chunk's W phi(q)^T, which the "
                "raise does not read for a causal, dual-form step");
  // The dual form: phi(q_c) W_c plus (or minus) the chunk's causal term.
  onnx::NodeOp sum = nodeOf(skipLayout(step.output), "Add");
  onnx::NodeOp difference =
      sum ? nullptr : nodeOf(skipLayout(step.output), "Sub");
  onnx::NodeOp node = sum ? sum : difference;
  if (!node || node.getInputs().size() != 2)
    return fail("each chunk's output reads the chunk's own keys but is not "
                "phi(q) W plus a causal term of the chunk's tokens (the dual "
                "form)");
  std::string before = why;
  for (int i = 0; i < (sum ? 2 : 1); ++i) {
    why = before;
    FailureOr<Value> state = readApplied(node.getInputs()[i], step);
    if (failed(state))
      continue;
    Value queries;
    matcher.appliedAsStored = outputReadsStored;
    FailureOr<Update> intra =
        matcher.matchIntraTerm(node.getInputs()[1 - i], *state, queries);
    matcher.appliedAsStored = false;
    if (failed(intra))
      return failure();
    if (difference)
      intra->factor = -intra->factor;
    std::optional<FeatureMap> scored = matcher.matchFeatures(queries);
    const SliceChain &window = step.querySlices.front();
    if (!scored || scored->input.root != step.query ||
        !sameWindow(scored->input, window) ||
        scored->model != features->model || scored->w0 != features->w0 ||
        scored->w2 != features->w2 || !sameWindow(intra->keys.input, window))
      return fail("the causal term does not score the chunk's own queries "
                  "against its own keys through the output's feature map");
    intraFactors.push_back({intra->factor, chunkLength(intra->valueChunk)});
    intraTerms.push_back(*intra);
    return state;
  }
  return failure();
}

LogicalResult LayerReader::checkCausalTerms() {
  if (config.order != UpdateOrder::apply_then_update)
    return fail("its causal terms read the chunk-start weights, but its "
                "output applies the updated ones");
  const UpdateRule &rule = firstUpdate->rule;
  if (rule.momentum || !rule.nsCoeffs.empty() || rule.weightNorm)
    return fail("a causal (dual-form) layer with momentum, Muon or weight "
                "norm, which ttt.kvb_layer's causal order does not take");
  // Their constant factors were settled with the updates' (read()): token i
  // reads the steps of tokens 1..i, each scaled as its chunk's update. A
  // Loop's mean divides by the value the Loop-bounds check proves to be the
  // chunk length for the updates.
  for (const Update &intra : intraTerms)
    if (intra.keys.input.root != firstUpdate->keys.input.root ||
        intra.keys.model != firstUpdate->keys.model ||
        intra.keys.w0 != firstUpdate->keys.w0 ||
        intra.keys.w2 != firstUpdate->keys.w2 || intra.rule.lr != rule.lr ||
        intra.rule.lrColumn != rule.lrColumn || intra.rule.v != rule.v ||
        intra.rule.loss != rule.loss || intra.rule.sign != rule.sign ||
        intra.rule.reduction != rule.reduction ||
        intra.lengthDivisor != firstUpdate->lengthDivisor)
      return fail("its causal terms do not weigh the tokens as its updates "
                  "do");
  config.order = UpdateOrder::causal;
  return success();
}

FailureOr<Value> LayerReader::readApplied(Value value, const ChunkStep &step) {
  Value output = skipLayout(value);
  onnx::NodeOp apply = nodeOf(output, "MatMul");
  Value inputs = apply ? apply.getInputs()[0] : Value();
  Value state = apply ? apply.getInputs()[1] : Value();
  // `(W phi(q)^T)^T` with W stored output x input: in a Loop whose carried
  // W changes rank (it broadcasts over the batch once updated) no Transpose
  // can move inside, so the product is read as written, as phi(q) W^T. A
  // buffer whose writes turn W phi(q)^T into place (outputSwapped) holds the
  // product itself.
  outputReadsStored = false;
  Value inner;
  if (layer.outputSwapped) {
    inner = output;
    apply = nullptr;
  } else if (!apply && layer.form == LayerForm::Loop) {
    inner = transposedInput(output);
  }
  if (inner) {
    onnx::NodeOp product = nodeOf(skipLayout(inner), "MatMul");
    inputs = product ? transposedInput(product.getInputs()[1]) : Value();
    if (inputs) {
      apply = product;
      state = product.getInputs()[0];
      outputReadsStored = true;
    }
  }
  if (!apply && nodeOf(output, "Conv"))
    return fail("its output convolves the queries with the trained weight "
                "(ViT^3's depth-wise branch, ttt.dwconv_layer), which the "
                "raise does not read");
  if (!apply)
    return fail("its output is not a product with the trained weight");
  std::optional<FeatureMap> map = matcher.matchFeatures(inputs);
  if (!map || !readsQuery(map->input.root, step) ||
      (map->model == ModelKind::swiglu &&
       (!isConstantWeight(map->w0) || !isConstantWeight(map->w2))))
    return fail("its query features are neither the queries nor "
                "silu(q W0) * (q W2) with constant W0, W2");
  if (features && (map->model != features->model || map->w0 != features->w0 ||
                   map->w2 != features->w2))
    return fail("its chunks use different feature maps");
  features = map;
  queries = map->input.root;
  return state;
}

LogicalResult LayerReader::addUpdate(const Update &update) {
  if (update.momentumChunk &&
      !sameWindow(*update.momentumChunk, update.keys.input))
    return fail("its momentum averages other tokens than its update reads");
  if (update.rule.momentumPerChunk) {
    // Chunk c must read the momentum of chunk c.
    std::optional<SmallVector<int64_t>> index =
        intConstant(update.momentumIndex);
    onnx::NodeOp loop = layer.loop;
    bool own = index ? index->size() == 1 && update.keyStart &&
                           (*index)[0] * layer.chunkSize == *update.keyStart
                     : loop && skipLayout(update.momentumIndex) ==
                                   loop->getRegion(0).front().getArgument(0);
    if (!own)
      return fail("its per-chunk momentum is not read at the chunk's own "
                  "index");
  }
  if (update.keys.model != features->model || update.keys.w0 != features->w0 ||
      update.keys.w2 != features->w2)
    return fail("its keys and queries go through different feature maps");
  factors.push_back({update.factor, chunkLength(update.valueChunk)});
  innerFactors.push_back({update.innerFactor, chunkLength(update.valueChunk)});
  if (!firstUpdate) {
    firstUpdate = update;
    return success();
  }
  const Update &u = *firstUpdate;
  if (update.keys.input.root != u.keys.input.root || update.rule != u.rule)
    return fail("its chunks update the weight differently");
  return success();
}

/// One constant factor for every chunk is the step size of a sum (or of the
/// mean the graph computes itself); factors that are one number over each
/// chunk's length are the step size of a mean (an exporter that folded the
/// division by each chunk's own length into constants).
/// The one factor of `entries` (one per chunk), or, when they are one
/// number over each chunk's length, that number (a mean); nullopt if
/// neither.
static std::optional<double>
commonFactor(ArrayRef<std::pair<double, std::optional<int64_t>>> entries,
             bool &perLength) {
  double factor = entries.front().first;
  perLength = false;
  if (llvm::all_of(entries, [&](auto &entry) {
        return nearlyEqual(entry.first, factor);
      }))
    return factor;
  std::optional<int64_t> length = entries.front().second;
  if (!length || *length <= 0 || !llvm::all_of(entries, [&](auto &entry) {
        return entry.second &&
               nearlyEqual(entry.first * *entry.second, factor * *length);
      }))
    return std::nullopt;
  perLength = true;
  return factor * static_cast<double>(*length);
}

LogicalResult LayerReader::settleScale(UpdateRule &rule) {
  bool perLength = false;
  std::optional<double> common = commonFactor(factors, perLength);
  if (!common || (perLength && rule.reduction != Reduction::sum))
    return fail("its chunks scale their updates by different constants");
  double factor = *common;
  // Muon normalizes what it orthogonalizes: a mean (or any factor) inside
  // it is the loss's, the one outside the step size.
  if (!rule.nsCoeffs.empty()) {
    if (perLength)
      return fail("its chunks scale their orthogonalized updates by "
                  "different constants");
    bool innerPerLength = false;
    std::optional<double> inner = commonFactor(innerFactors, innerPerLength);
    if (!inner || (innerPerLength && rule.reduction != Reduction::sum))
      return fail("its chunks scale the terms they orthogonalize by "
                  "different constants");
    if (innerPerLength)
      rule.reduction = Reduction::mean;
    rule.lossScale = *inner;
  } else if (perLength) {
    rule.reduction = Reduction::mean;
  }
  if (factor == 0.0)
    return fail("its updates are multiplied by zero");
  rule.lrScale = std::abs(factor);
  if (factor < 0.0)
    rule.sign = rule.sign == Sign::descent ? Sign::ascent : Sign::descent;
  return success();
}

/// The number of columns of an lr tensor, if static.
static std::optional<int64_t> numColumns(Value lr) { return lastDimOf(lr); }

LogicalResult LayerReader::readUnrolled(Value &initial) {
  const SmallVector<ChunkStep> &steps = layer.steps;
  std::vector<Update> updates;
  for (size_t i = 0; i + 1 < steps.size(); ++i) {
    if (failed(readOutput(steps[i + 1])))
      return failure();
    Value prev = steps[i].weightsRead[slot];
    Value next = steps[i + 1].weightsRead[slot];
    FailureOr<Update> update = matcher.matchUpdate(next, prev, prev);
    if (failed(update) || failed(addUpdate(*update)))
      return failure();
    updates.push_back(*update);
  }
  if (failed(checkChunkOrder()))
    return failure();
  // The first update reads chunk 0 (apply then update) or chunk 1 (update
  // then apply, whose chunk 0 was updated from the initial weight).
  std::optional<int64_t> keyStart = updates.front().keyStart;
  initial = steps.front().weightsRead[slot];
  if (keyStart == steps[0].querySlices.front().start) {
    config.order = UpdateOrder::apply_then_update;
  } else if (keyStart == steps[1].querySlices.front().start) {
    config.order = UpdateOrder::update_then_apply;
    FailureOr<Update> update = matcher.matchUpdate(initial, nullptr, nullptr);
    if (failed(update) || failed(addUpdate(*update)))
      return failure();
    initial = update->prev;
    config.transposeInitial = update->rule.transposedWeight;
    updates.insert(updates.begin(), *update);
  } else {
    return fail("its updates do not read the chunks in sequence order");
  }
  if (failed(checkUpdatesInSequence(updates)))
    return failure();
  return checkMomentumChain(updates);
}

bool LayerReader::isStartWeight(Value weight) {
  if (isConstantWeight(weight))
    return true;
  auto graph = layer.assembly->getParentOfType<onnx::GraphOp>();
  Value base = skipLayout(weight);
  return graph && llvm::none_of(
                      graph.getBody().getArguments(), [&](BlockArgument input) {
                        return input != base && deps.dependsOn(weight, input);
                      });
}

Value LayerReader::stepStart(Value next) {
  double eps = 0.0;
  Value target;
  // (W + U)^T starts from W as the model stores it.
  next = skipLayoutAndTransposes(next);
  if (Value stepped = matchWeightNorm(next, eps, target))
    next = stepped;
  for (StringRef op : {"Add", "Sub"}) {
    onnx::NodeOp node = nodeOf(skipLayout(next), op);
    if (!node || node.getInputs().size() != 2)
      continue;
    // U - W is no step of W.
    for (int i = 0; i < (op == "Sub" ? 1 : 2); ++i)
      if (isStartWeight(node.getInputs()[i]))
        return node.getInputs()[i];
  }
  return nullptr;
}

LogicalResult LayerReader::readFullBatch(Value state, Value &initial) {
  FailureOr<Update> update = matcher.matchUpdate(state, nullptr, nullptr);
  if (failed(update) || failed(addUpdate(*update)))
    return failure();
  initial = update->prev;
  if (!isStartWeight(initial))
    return fail("its step does not start from a weight that no other input "
                "is computed into");
  if (update->rule.momentum)
    return fail("its full-batch step carries momentum, which one step does "
                "not have");
  config.transposeInitial = update->rule.transposedWeight;
  return success();
}

LogicalResult LayerReader::checkChunkOrder() {
  const SmallVector<ChunkStep> &steps = layer.steps;
  for (auto [index, step] : llvm::enumerate(steps)) {
    const SliceChain &slice = step.querySlices.front();
    if (!slice.start ||
        *slice.start != static_cast<int64_t>(index) * layer.chunkSize)
      return fail("its chunk outputs are not concatenated in sequence order");
  }
  const SliceChain &last = steps.back().querySlices.front();
  std::optional<int64_t> length = staticTimeLength(last.root);
  if (last.end && length && *last.end < *length)
    return fail("its chunks stop before the end of the sequence");
  return success();
}

LogicalResult LayerReader::checkUpdatesInSequence(ArrayRef<Update> updates) {
  // A cut past the end of its tensor ends at the end (`k[:, :, 48:2**63]`).
  auto end = [](const SliceChain &chunk) -> std::optional<int64_t> {
    std::optional<int64_t> length = staticTimeLength(chunk.root);
    if (!chunk.end || !length)
      return chunk.end;
    return std::min(*chunk.end, *length);
  };
  for (auto [index, update] : llvm::enumerate(updates)) {
    const SliceChain &queries = layer.steps[index].querySlices.front();
    const SliceChain &keys = update.keys.input;
    std::optional<int64_t> keyEnd = end(keys), queryEnd = end(queries);
    if (!update.keyStart || update.keyStart != queries.start ||
        (keyEnd && queryEnd && keyEnd != queryEnd))
      return fail("its update after chunk " + std::to_string(index) +
                  " reads other tokens than that chunk's (the chunks' "
                  "updates are not read in sequence order)");
  }
  return success();
}

/// True if `start` is `iteration * chunkSize` in a Loop body.
static bool isChunkStart(Value start, Block &body, int64_t chunkSize) {
  return matchCommutative(start, "Mul", [&](Value i, Value c) {
    return skipLayout(i) == body.getArgument(0) &&
           scalarConstant(c) == static_cast<double>(chunkSize);
  });
}

/// `indices` is `base + start * e_axis`, maybe cut to its first rows on
/// `axis` (`out[:, :, s:e] = o` in a scripted Loop), where `isStart(start)`:
/// returns `base`. ScatterND's shape rule makes the rows that are kept as
/// many as the update has, so the cut's end needs no reading.
static Value shiftedWindowBase(Value indices, int64_t axis,
                               llvm::function_ref<bool(Value)> isStart) {
  if (onnx::NodeOp cut = nodeOf(indices, "Slice")) {
    ValueRange in = cut.getInputs();
    std::optional<SmallVector<int64_t>> starts = intConstant(in[1]);
    std::optional<SmallVector<int64_t>> axes =
        in.size() > 3 ? intConstant(in[3]) : std::nullopt;
    std::optional<double> step =
        in.size() > 4 ? scalarConstant(in[4]) : std::optional<double>(1.0);
    if (!starts || !axes || starts->size() != 1 || (*starts)[0] != 0 ||
        axes->size() != 1 || (*axes)[0] != axis || step != 1.0)
      return nullptr;
    indices = in[0];
  }
  Value base;
  matchCommutative(indices, "Add", [&](Value a, Value shift) {
    return matchCommutative(shift, "Mul", [&](Value s, Value unit) {
      std::optional<SmallVector<int64_t>> e = intConstant(unit);
      if (!isStart(skipLayout(s)) || !e || axis >= (int64_t)e->size())
        return false;
      for (auto [d, entry] : llvm::enumerate(*e))
        if (entry != (static_cast<int64_t>(d) == axis ? 1 : 0))
          return false;
      base = a;
      return true;
    });
  });
  return base;
}

/// ScatterND indices that a scripted `out[:, :, s:e] = o` builds at run
/// time: the grid of the ranges of `buffer`'s leading axes, every index of
/// each axis but one, which runs from `start` to `end`. Column d of the
/// last axis is `Range(0, Shape(buffer)[d], 1)`, maybe cut, reshaped to
/// vary along axis d of a rank-K grid (`[-1, 1, ..]` with K - 1 - d ones)
/// and broadcast over it.
static std::optional<GridWindow> gridWindow(Value indices, Value buffer) {
  onnx::NodeOp concat = nodeOf(indices, "Concat");
  auto columns = concat ? concat.getInputs() : ValueRange();
  auto k = static_cast<int64_t>(columns.size());
  std::optional<int64_t> rank = rankOf(buffer);
  if (!concat || k == 0 || !rank || k > *rank)
    return std::nullopt;
  std::optional<GridWindow> window;
  for (auto [d, column] : llvm::enumerate(columns)) {
    // Unsqueeze(Expand(x, shape), -1): the broadcasts Concat needs equal.
    onnx::NodeOp unsqueeze = nodeOf(column, "Unsqueeze");
    std::optional<SmallVector<int64_t>> axes =
        unsqueeze ? reduceAxes(unsqueeze) : std::nullopt;
    if (!axes || axes->size() != 1 || ((*axes)[0] != -1 && (*axes)[0] != k))
      return std::nullopt;
    Value x = unsqueeze.getInputs()[0];
    if (onnx::NodeOp expand = nodeOf(x, "Expand")) {
      auto shape = dyn_cast<RankedTensorType>(expand.getInputs()[1].getType());
      if (!shape || shape.getRank() != 1 || shape.getDimSize(0) != k)
        return std::nullopt;
      x = expand.getInputs()[0];
    }
    // The last column varies along the last axis as it is.
    onnx::NodeOp reshape = nodeOf(x, "Reshape");
    bool last = static_cast<int64_t>(d) == k - 1;
    std::optional<SmallVector<int64_t>> target =
        reshape ? intConstant(reshape.getInputs()[1]) : std::nullopt;
    SmallVector<int64_t> along{-1};
    along.append(k - 1 - static_cast<int64_t>(d), 1);
    if ((!last || reshape) && (!target || *target != along))
      return std::nullopt;
    Value range = reshape ? reshape.getInputs()[0] : x;
    if (rankOf(range) != 1)
      return std::nullopt;
    onnx::NodeOp cut = nodeOf(range, "Slice");
    if (cut) {
      if (isWholeSlice(cut)) {
        cut = nullptr;
      } else {
        ValueRange in = cut.getInputs();
        std::optional<SmallVector<int64_t>> cutAxes =
            in.size() > 3 ? intConstant(in[3]) : std::nullopt;
        std::optional<double> step =
            in.size() > 4 ? scalarConstant(in[4]) : std::optional<double>(1.0);
        if (in.size() < 4 || cutAxes != SmallVector<int64_t>{0} ||
            step != 1.0 || window)
          return std::nullopt;
        window = GridWindow{static_cast<int64_t>(d), skipLayout(in[1]),
                            skipLayout(in[2])};
      }
      range = cut ? cut.getInputs()[0] : skipLayout(range);
    }
    onnx::NodeOp numbers = nodeOf(range, "Range");
    std::optional<ShapeDim> extent =
        numbers ? shapeDim(numbers.getInputs()[1]) : std::nullopt;
    if (!numbers || scalarConstant(numbers.getInputs()[0]) != 0.0 ||
        scalarConstant(numbers.getInputs()[2]) != 1.0 || !extent ||
        skipLayout(extent->tensor) != buffer ||
        extent->axis != static_cast<int64_t>(d))
      return std::nullopt;
  }
  return window;
}

bool LayerReader::isZerosAsLongAsQueries(Value initial, int64_t time) {
  const SliceChain &window = layer.steps.front().querySlices.front();
  Value queries = window.root;
  std::optional<int64_t> rank = rankOf(queries);
  int64_t queryTime = rank ? *rank - 2 : -1;
  // The normalization turns [B, T, H, D] inputs to [B, H, T, D] first.
  if (onnx::NodeOp turn = nodeOf(queries, "Transpose"))
    if (std::optional<SmallVector<int64_t>> perm = transposePerm(turn);
        perm && queryTime >= 0 && static_cast<int64_t>(perm->size()) == *rank) {
      queryTime = (*perm)[queryTime];
      queries = turn.getInputs()[0];
    }
  auto asLongAsQueries = [&](Value tensor, int64_t axis) {
    return axis == queryTime && rankOf(tensor) == rankOf(queries) &&
           sameExtent(tensor, queries, axis);
  };
  onnx::NodeOp zeros = nodeOf(initial, "ConstantOfShape");
  Value shape = zeros ? zeros.getInputs()[0] : Value();
  // A scalar broadcast to a shape of `rank` entries has that shape (a fill
  // of a buffer of run-time size); the shape of zeros made of a shape is
  // that shape.
  if (onnx::NodeOp expand = nodeOf(initial, "Expand");
      expand && expand.getInputs().size() == 2) {
    auto scalar = dyn_cast<RankedTensorType>(expand.getInputs()[0].getType());
    auto entries = dyn_cast<RankedTensorType>(expand.getInputs()[1].getType());
    std::optional<int64_t> bufferRank = rankOf(initial);
    if (scalar && entries && entries.hasStaticShape() &&
        entries.getRank() == 1 && bufferRank &&
        entries.getDimSize(0) == *bufferRank &&
        scalar.getRank() <= *bufferRank &&
        llvm::all_of(scalar.getShape(), [](int64_t d) { return d == 1; }))
      shape = expand.getInputs()[1];
  }
  if (onnx::NodeOp of = shape ? nodeOf(shape, "Shape") : onnx::NodeOp())
    if (onnx::NodeOp made = nodeOf(of.getInputs()[0], "ConstantOfShape");
        made && of.getInputs().size() == 1 && !of.getONNXAttr("start") &&
        !of.getONNXAttr("end"))
      shape = made.getInputs()[0];
  bool longEnough = false;
  if (onnx::NodeOp of = shape ? nodeOf(shape, "Shape") : onnx::NodeOp())
    longEnough = of.getInputs().size() == 1 && !of.getONNXAttr("start") &&
                 !of.getONNXAttr("end") &&
                 asLongAsQueries(of.getInputs()[0], time);
  else if (onnx::NodeOp dims = shape ? nodeOf(shape, "Concat") : onnx::NodeOp())
    if (static_cast<int64_t>(dims.getInputs().size()) == rank &&
        llvm::all_of(dims.getInputs(), [](Value piece) {
          auto type = dyn_cast<RankedTensorType>(piece.getType());
          return type && type.getShape() == ArrayRef<int64_t>{1};
        })) {
      Value dim = dims.getInputs()[time];
      if (std::optional<ShapeDim> length = shapeDim(dim))
        longEnough = asLongAsQueries(length->tensor, length->axis);
      // Zeros of a static length and a run-time batch.
      else if (std::optional<int64_t> queryLength =
                   staticTimeLength(window.root))
        longEnough = time == queryTime &&
                     intConstant(dim) == SmallVector<int64_t>{*queryLength};
    }
  return longEnough && isZeroConstant(initial) && time == queryTime;
}

LogicalResult LayerReader::checkGridWrites(const GridWindow &grid, int64_t time,
                                           Value initial) {
  const SliceChain &window = layer.steps.front().querySlices.front();
  onnx::NodeOp cut = window.timeSlice;
  // A bound of a window is its query Slice's: the same value, or the same
  // constant (the chunk after the loop is cut at constants).
  auto sameBound = [](Value bound, Value sliceBound) {
    sliceBound = skipLayout(sliceBound);
    if (bound == sliceBound)
      return true;
    std::optional<SmallVector<int64_t>> a = intConstant(bound);
    return a && a == intConstant(sliceBound);
  };
  auto atTokensOf = [&](const GridWindow &write, onnx::NodeOp slice) {
    return write.axis == time && slice && slice.getOpType() == "Slice" &&
           sameBound(write.start, slice.getInputs()[1]) &&
           sameBound(write.end, slice.getInputs()[2]);
  };
  if (!atTokensOf(grid, cut))
    return fail("its buffer writes are not at its queries' tokens");
  if (onnx::NodeOp tail = layer.tailWrite) {
    std::optional<GridWindow> last =
        gridWindow(tail.getInputs()[1], tail.getInputs()[0]);
    if (!last ||
        !atTokensOf(*last, layer.steps.back().querySlices.front().timeSlice))
      return fail("its write after the loop is not at its last chunk's "
                  "queries' tokens");
  }
  // The buffer starts as zeros as long as the queries, so the writes, at
  // the tokens the loop walks, cover all of it.
  if (!isZerosAsLongAsQueries(initial, time))
    return fail("it writes its chunks into a buffer that is not proven to "
                "be as long as the sequence (not zeros shaped like a "
                "sequence the queries' length)");
  return success();
}

LogicalResult LayerReader::checkBufferWrites() {
  const SliceChain &window = layer.steps.front().querySlices.front();
  onnx::NodeOp loop = layer.loop, bodyWrite = layer.bodyWrite,
               tailWrite = layer.tailWrite;
  Block &body = loop->getRegion(0).front();
  // `reduction = add` (or mul, max, min) combines with what the buffer
  // holds: no write of the chunk output.
  auto overwrites = [](onnx::NodeOp write) {
    auto reduction =
        dyn_cast_or_null<StringAttr>(write.getONNXAttr("reduction"));
    return !reduction || reduction.getValue() == "none";
  };
  if (!overwrites(bodyWrite) || (tailWrite && !overwrites(tailWrite)))
    return fail("its buffer writes combine the chunk outputs with the "
                "buffer (a ScatterND reduction)");
  auto carried = cast<BlockArgument>(bodyWrite.getInputs()[0]);
  Value initial = loop.getInputs()[carried.getArgNumber()];
  auto buffer = dyn_cast<RankedTensorType>(initial.getType());
  std::optional<int64_t> length = staticTimeLength(window.root);
  int64_t rank = buffer ? buffer.getRank() : 0;
  // The time axis of a chunk output is the one before its features; the
  // writes may turn it to another axis of the buffer.
  int64_t time = rank - 2;
  ArrayRef<int64_t> turn = layer.outputPerm;
  if (!turn.empty()) {
    const int64_t *at = llvm::find(turn, rank - 2);
    time = static_cast<int64_t>(turn.size()) == rank && at != turn.end()
               ? at - turn.begin()
               : -1;
  }
  if (std::optional<GridWindow> grid =
          gridWindow(bodyWrite.getInputs()[1], carried))
    return checkGridWrites(*grid, time, initial);
  // Rows that no chunk writes would keep the buffer's values: its time axis
  // must be the sequence. A static buffer is as long as static queries; one
  // of a run-time length must be made as long as the queries, and takes no
  // write of a partial last chunk after the loop.
  bool staticallyLong = buffer && buffer.hasStaticShape() && length &&
                        rank >= 3 && time >= 0 &&
                        buffer.getDimSize(time) == *length;
  bool dynamicallyLong = !staticallyLong && !tailWrite && buffer && rank >= 3 &&
                         time >= 0 && buffer.isDynamicDim(time) &&
                         buffer.getNumDynamicDims() == 1 &&
                         isZerosAsLongAsQueries(initial, time);
  if (!staticallyLong && !dynamicallyLong)
    return fail("it writes its chunks into a buffer that is not proven to "
                "be as long as the sequence (its type or the queries' "
                "length is not static, or its time axis is not the one "
                "before the features)");
  // Chunk i's write starts where its queries do: at the queries' own Slice
  // start, or at i * C (a chunk taken by Gather or SequenceAt). The loop walk
  // the readers prove then makes the writes tile the buffer.
  onnx::NodeOp cut = window.timeSlice;
  Value queryStart = cut && cut.getOpType() == "Slice"
                         ? skipLayout(cut.getInputs()[1])
                         : Value();
  Value base =
      shiftedWindowBase(bodyWrite.getInputs()[1], time, [&](Value start) {
        return start == queryStart ||
               isChunkStart(start, body, layer.chunkSize);
      });
  // The loop walk proves that the windows lie in a run-time length.
  SmallVector<int64_t> bounds(buffer.getShape());
  if (dynamicallyLong)
    bounds[time] = std::numeric_limits<int64_t>::max() / 2;
  std::optional<IndexWindow> first =
      base ? indexWindow(base, bounds) : std::nullopt;
  if (!first || first->axis != time || first->start != 0 ||
      first->size != layer.chunkSize)
    return fail("its buffer writes are not at its queries' tokens");
  if (!tailWrite)
    return success();
  int64_t loopEnd = layer.chunkSize * ((*length - 1) / layer.chunkSize);
  std::optional<IndexWindow> last =
      indexWindow(tailWrite.getInputs()[1], buffer.getShape());
  if (!last || last->axis != time || last->start != loopEnd ||
      last->start + last->size != *length)
    return fail("its last chunk's write is not at the tokens after the loop");
  return success();
}

LogicalResult LayerReader::checkMomentumChain(ArrayRef<Update> updates) {
  if (updates.empty() || !updates.front().rule.momentum)
    return success();
  if (!isZeroConstant(updates.front().momentumPrev))
    return fail("its momentum does not start from zero");
  for (size_t i = 1; i < updates.size(); ++i)
    if (!same(updates[i].momentumPrev, updates[i - 1].momentumNext))
      return fail("its momentum is not carried from chunk to chunk");
  return success();
}

LogicalResult LayerReader::checkLoopWalk(const Update &update) {
  const SliceChain &window = layer.steps.front().querySlices.front();
  if (!sameWindow(update.valueChunk, window))
    return fail("its update reads other tokens than its output");
  const SliceChain *tail =
      layer.steps.size() > 1 ? &layer.steps[1].querySlices.front() : nullptr;
  SmallVector<Value> sequences = {layer.steps.front().query,
                                  update.keys.input.root, update.rule.v};
  // (A per-chunk momentum's last axis counts chunks, not tokens.)
  Value tokenMomentum =
      update.rule.momentumPerChunk ? Value() : update.rule.momentum;
  for (Value optional : {update.rule.lr, tokenMomentum})
    if (optional)
      sequences.push_back(optional);
  std::string bounds;
  if (failed(checkLoopWalksChunks(layer.loop, window, tail, layer.chunkSize,
                                  sequences, update.lengthDivisor, bounds)))
    return fail(bounds);
  return success();
}

LogicalResult LayerReader::checkLoopMomentum(const Update &update) {
  if (!update.rule.momentum)
    return success();
  onnx::NodeOp loop = layer.loop;
  Block &body = loop->getRegion(0).front();
  auto yield = cast<onnx::YieldOp>(body.getTerminator());
  auto arg = dyn_cast<BlockArgument>(skipLayout(update.momentumPrev));
  if (!arg || arg.getOwner() != &body || arg.getArgNumber() < 2 ||
      !same(yield.getOperand(arg.getArgNumber() - 1), update.momentumNext))
    return fail("its momentum is not carried by the loop");
  if (!isZeroConstant(loop.getInputs()[arg.getArgNumber()]))
    return fail("its momentum does not start from zero");
  return success();
}

LogicalResult LayerReader::readLoop(Value state, Value &initial) {
  onnx::NodeOp loop = layer.loop;
  Block &body = loop->getRegion(0).front();
  auto yield = cast<onnx::YieldOp>(body.getTerminator());
  auto carriedOut = [&](unsigned arg) { return yield.getOperand(arg - 1); };
  std::optional<unsigned> weightArg;
  // A weight stored output x input is carried as stored and applied
  // transposed (`x W^T`); the update then moves it as stored.
  Value stored = outputReadsStored ? state : transposedInput(skipLayout(state));
  Value applied = outputReadsStored ? Value() : state;
  bool transposed = false;
  for (unsigned arg = 2; arg < body.getNumArguments(); ++arg) {
    for (Value read : {applied, stored}) {
      if (!read || weightArg)
        continue;
      if (same(read, body.getArgument(arg))) {
        config.order = UpdateOrder::apply_then_update;
        weightArg = arg;
      } else if (same(read, carriedOut(arg))) {
        config.order = UpdateOrder::update_then_apply;
        weightArg = arg;
      }
      transposed = weightArg && read == stored;
    }
  }
  if (!weightArg)
    return fail("its output does not read a loop-carried weight");
  Value prev = body.getArgument(*weightArg);
  matcher.transposedWeight = transposed;
  FailureOr<Update> update = matcher.matchUpdate(carriedOut(*weightArg), prev,
                                                 transposed ? Value() : prev);
  matcher.transposedWeight = false;
  if (succeeded(update) && transposed) {
    update->rule.transposedWeight = true;
    config.transposeInitial = true;
  }
  if (failed(update) || failed(addUpdate(*update)))
    return failure();
  if (failed(checkLoopWalk(*update)) || failed(checkLoopMomentum(*update)))
    return failure();
  // The chunk after the loop reads the loop's final weight.
  if (layer.steps.size() > 1) {
    FailureOr<Value> tailState = readOutput(layer.steps[1]);
    Value tailWeight = failed(tailState) ? Value()
                       : !transposed || outputReadsStored
                           ? *tailState
                           : transposedInput(skipLayout(*tailState));
    if (!same(tailWeight, loop->getResult(*weightArg - 2)))
      return fail("its last chunk does not read the loop's final weight");
    if (config.order != UpdateOrder::apply_then_update)
      return fail("its last chunk is applied after the loop, which only "
                  "apply-then-update layers do");
  }
  initial = loop.getInputs()[*weightArg];
  return success();
}

//===----------------------------------------------------------------------===//
// SwiGLU layers whose inner weights train (LaCT)
//===----------------------------------------------------------------------===//

bool LayerReader::trainsInnerWeights() {
  return llvm::any_of(layer.steps, [&](const ChunkStep &step) {
    onnx::NodeOp apply = nodeOf(skipLayout(step.output), "MatMul");
    std::optional<FeatureMap> map =
        apply ? matcher.matchFeatures(apply.getInputs()[0]) : std::nullopt;
    return map && map->model == ModelKind::swiglu &&
           (!isConstantWeight(map->w0) || !isConstantWeight(map->w2));
  });
}

FailureOr<SwiGLUWeights> LayerReader::readChunkWeights(const ChunkStep &step) {
  onnx::NodeOp apply = nodeOf(skipLayout(step.output), "MatMul");
  std::optional<FeatureMap> map =
      apply ? matcher.matchFeatures(apply.getInputs()[0]) : std::nullopt;
  if (!map || map->model != ModelKind::swiglu ||
      !readsQuery(map->input.root, step))
    return fail("its chunk output is not (silu(q W0) * (q W2)) W1 of the "
                "query chunk");
  queries = map->input.root;
  return SwiGLUWeights{map->w0, apply.getInputs()[1], map->w2};
}

static StringRef swigluWeightName(unsigned role) {
  static constexpr StringLiteral names[] = {"W0", "W1", "W2"};
  return names[role];
}

FailureOr<Update> LayerReader::matchTrainedUpdate(Value next, Value prev,
                                                  unsigned role,
                                                  const SwiGLUWeights &at) {
  matcher.at = &at;
  matcher.role = role;
  FailureOr<Update> update = matcher.matchUpdate(next, prev, prev);
  matcher.at = nullptr;
  if (failed(update)) {
    why = ("its update of " + swigluWeightName(role) + ": " + why).str();
    return failure();
  }
  // Every gradient of a chunk is taken at the chunk's weights.
  if (!same(update->keys.w0, at[0]) || !same(update->keys.w2, at[2]))
    return fail("its update of " + swigluWeightName(role) +
                " reads other weights than the chunk applies");
  factors.push_back({update->factor, chunkLength(update->valueChunk)});
  innerFactors.push_back(
      {update->innerFactor, chunkLength(update->valueChunk)});
  return update;
}

LogicalResult
LayerReader::readTrainedUnrolled(std::array<std::vector<Update>, 3> &updates,
                                 SwiGLUWeights &initial) {
  SmallVector<SwiGLUWeights> at;
  for (const ChunkStep &step : layer.steps) {
    FailureOr<SwiGLUWeights> weights = readChunkWeights(step);
    if (failed(weights))
      return failure();
    at.push_back(*weights);
  }
  initial = at.front();
  for (size_t i = 0; i + 1 < at.size(); ++i) {
    for (unsigned role = 0; role < 3; ++role) {
      if (same(at[i + 1][role], at[i][role]))
        continue;
      FailureOr<Update> update =
          matchTrainedUpdate(at[i + 1][role], at[i][role], role, at[i]);
      if (failed(update))
        return failure();
      updates[role].push_back(*update);
    }
  }
  if (failed(checkChunkOrder()))
    return failure();
  for (unsigned role = 0; role < 3; ++role) {
    if (updates[role].empty())
      continue;
    // A weight that trains moves after every chunk but the last.
    if (updates[role].size() + 1 != at.size())
      return fail("its " + swigluWeightName(role) +
                  " is not updated after every chunk");
    if (updates[role].front().keyStart !=
        layer.steps.front().querySlices.front().start)
      return fail("its updates do not read the chunk the output was just "
                  "applied to (the raise reads apply-then-update layers "
                  "that train inner weights)");
    if (failed(checkUpdatesInSequence(updates[role])) ||
        failed(checkMomentumChain(updates[role])))
      return failure();
  }
  return success();
}

LogicalResult
LayerReader::readTrainedLoop(std::array<std::vector<Update>, 3> &updates,
                             SwiGLUWeights &initial) {
  onnx::NodeOp loop = layer.loop;
  Block &body = loop->getRegion(0).front();
  auto yield = cast<onnx::YieldOp>(body.getTerminator());
  auto carriedOut = [&](unsigned arg) { return yield.getOperand(arg - 1); };
  FailureOr<SwiGLUWeights> at = readChunkWeights(layer.steps.front());
  if (failed(at))
    return failure();
  initial = *at;
  std::array<std::optional<unsigned>, 3> args;
  for (unsigned role = 0; role < 3; ++role) {
    for (unsigned arg = 2; arg < body.getNumArguments(); ++arg) {
      if (same((*at)[role], body.getArgument(arg)))
        args[role] = arg;
      else if (same((*at)[role], carriedOut(arg)))
        return fail("its chunks update " + swigluWeightName(role) +
                    " before applying it (the raise reads apply-then-update "
                    "layers that train inner weights)");
    }
    if (!args[role]) {
      if (!isConstantWeight((*at)[role]))
        return fail("its " + swigluWeightName(role) +
                    " is neither a loop-carried nor a constant weight");
      continue;
    }
    unsigned arg = *args[role];
    FailureOr<Update> update =
        matchTrainedUpdate(carriedOut(arg), body.getArgument(arg), role, *at);
    if (failed(update))
      return failure();
    if (failed(checkLoopMomentum(*update)))
      return failure();
    initial[role] = loop.getInputs()[arg];
    updates[role].push_back(*update);
  }
  if (llvm::all_of(updates, [](auto &list) { return list.empty(); }))
    return fail("it never updates its weights");
  for (auto &list : updates)
    if (!list.empty() && failed(checkLoopWalk(list.front())))
      return failure();
  // The chunk after the loop applies the loop's final weights.
  if (layer.steps.size() > 1) {
    FailureOr<SwiGLUWeights> last = readChunkWeights(layer.steps[1]);
    if (failed(last))
      return failure();
    for (unsigned role = 0; role < 3; ++role) {
      Value expected =
          args[role] ? loop->getResult(*args[role] - 2) : (*at)[role];
      if (!same((*last)[role], expected))
        return fail("its last chunk does not apply the loop's final "
                    "weights");
    }
  }
  return success();
}

LogicalResult
LayerReader::readTrainedFullBatch(std::array<std::vector<Update>, 3> &updates,
                                  SwiGLUWeights &initial) {
  FailureOr<SwiGLUWeights> applied = readChunkWeights(layer.steps.front());
  if (failed(applied))
    return failure();
  // Every gradient is taken at the weights before the step, so all of them
  // are known before any update is read.
  initial = *applied;
  for (unsigned role = 0; role < 3; ++role) {
    if (isStartWeight(initial[role]))
      continue;
    initial[role] = stepStart((*applied)[role]);
    if (!initial[role])
      return fail("its " + swigluWeightName(role) +
                  " is neither a constant weight nor one step away from one");
  }
  for (unsigned role = 0; role < 3; ++role) {
    if (same((*applied)[role], initial[role]))
      continue;
    FailureOr<Update> update =
        matchTrainedUpdate((*applied)[role], initial[role], role, initial);
    if (failed(update))
      return failure();
    if (update->rule.momentum)
      return fail("its full-batch step of " + swigluWeightName(role) +
                  " carries momentum, which one step does not have");
    updates[role].push_back(*update);
  }
  return success();
}

FailureOr<LayerConfig> LayerReader::readTrainedSwiGLU() {
  std::array<std::vector<Update>, 3> updates;
  SwiGLUWeights initial;
  LogicalResult read = failure();
  switch (layer.form) {
  case LayerForm::Unrolled:
    read = readTrainedUnrolled(updates, initial);
    break;
  case LayerForm::Loop:
    read = readTrainedLoop(updates, initial);
    break;
  case LayerForm::FullBatch:
    read = readTrainedFullBatch(updates, initial);
    break;
  }
  if (failed(read))
    return failure();
  const Update *first = nullptr;
  for (unsigned role = 0; role < 3; ++role) {
    if (updates[role].empty()) {
      if (!isConstantWeight(initial[role]))
        return fail("its " + swigluWeightName(role) +
                    " is neither trained nor a constant weight");
      continue;
    }
    config.trained.push_back(role);
    for (const Update &update : updates[role]) {
      if (update.rule != updates[role].front().rule ||
          update.keys.input.root != updates[role].front().keys.input.root)
        return fail("its chunks update " + swigluWeightName(role) +
                    " differently");
    }
    const Update &u = updates[role].front();
    if (!first) {
      first = &u;
    } else if (!u.rule.sharedBy(first->rule) ||
               u.keys.input.root != first->keys.input.root) {
      return fail("its weights are updated by different rules (one step "
                  "size, momentum, orthogonalization and weight norm for "
                  "every trained weight)");
    }
    if (failed(checkRateColumn(u.rule, role, 3)))
      return failure();
    if (u.rule.weightNorm && !isColumnNormOf(u.normTarget, initial[role]))
      return fail("its weight norm does not restore the columns of " +
                  swigluWeightName(role) + " to their initial norms");
  }
  if (!first)
    return fail("it never updates its weights");
  config.model = ModelKind::swiglu;
  config.weights.assign(initial.begin(), initial.end());
  config.q = queries;
  config.k = first->keys.input.root;
  config.rule = first->rule;
  config.order = UpdateOrder::apply_then_update;
  config.chunkSize = layer.chunkSize;
  if (failed(settleScale(config.rule)))
    return failure();
  return config;
}

/// The weights `(x Wa) ⊙ silu(x Wg)` applies to the queries `x`, and x.
/// Both branches may be turned to another layout by one Transpose each (the
/// einsum of `[B, T, H, D]` research code): `perm` is set to it.
static std::optional<std::array<Value, 3>>
gluOutput(Value output, Matcher &matcher, SmallVectorImpl<int64_t> *perm) {
  std::optional<std::array<Value, 3>> read;
  matchCommutative(skipLayout(output), "Mul", [&](Value linear, Value gated) {
    Value z = matcher.matchSilu(gated);
    if (!z)
      return false;
    onnx::NodeOp turnA = nodeOf(linear, "Transpose");
    onnx::NodeOp turnG = nodeOf(z, "Transpose");
    std::optional<SmallVector<int64_t>> turn;
    if (turnA || turnG) {
      turn = turnA ? transposePerm(turnA) : std::nullopt;
      if (!turnA || !turnG || !turn || turn != transposePerm(turnG))
        return false;
      linear = turnA.getInputs()[0];
      z = turnG.getInputs()[0];
    }
    onnx::NodeOp a = nodeOf(linear, "MatMul");
    onnx::NodeOp g = nodeOf(z, "MatMul");
    if (!a || !g || a.getInputs().size() != 2 || g.getInputs().size() != 2 ||
        a.getInputs()[0] != g.getInputs()[0])
      return false;
    read = {a.getInputs()[1], g.getInputs()[1], a.getInputs()[0]};
    if (perm)
      perm->assign(turn ? *turn : SmallVector<int64_t>());
    return true;
  });
  return read;
}

FailureOr<LayerConfig> LayerReader::readTrainedGLU() {
  const ChunkStep &step = layer.steps.front();
  std::optional<std::array<Value, 3>> read =
      gluOutput(step.output, matcher, &config.outputPerm);
  std::optional<SliceChain> x =
      read ? tokenWindow((*read)[2], &sequences) : std::nullopt;
  if (!x || !readsQuery(x->root, step))
    return fail("its output is not (q Wa) * silu(q Wg) of the queries");
  queries = x->root;
  std::array<Value, 2> applied = {(*read)[0], (*read)[1]};
  std::array<Value, 2> initial = applied;
  for (unsigned i = 0; i < 2; ++i) {
    if (isStartWeight(initial[i]))
      continue;
    initial[i] = stepStart(applied[i]);
    if (!initial[i])
      return fail(Twine(i == 0 ? "Wa" : "Wg") +
                  " is neither a constant weight nor one step away from one");
  }
  // matchInnerGradient's GLU roles: Wg is the gate (0), Wa the up branch (2).
  SwiGLUWeights at = {initial[1], Value(), initial[0]};
  std::optional<Update> first;
  for (unsigned i = 0; i < 2; ++i) {
    if (same(applied[i], initial[i]))
      continue;
    FailureOr<Update> update =
        matcher.matchGLUUpdate(applied[i], initial[i], i == 0 ? 2 : 0, at);
    if (failed(update)) {
      why = ((i == 0 ? "its update of Wa: " : "its update of Wg: ") + why);
      return failure();
    }
    config.trained.push_back(i);
    if (!first) {
      first = *update;
    } else if (!update->rule.sharedBy(first->rule) ||
               update->keys.input.root != first->keys.input.root) {
      return fail("its weights are updated by different rules");
    }
    if (failed(checkRateColumn(update->rule, i, 2)))
      return failure();
  }
  if (!first)
    return fail("it never updates its weights");
  config.model = ModelKind::glu;
  config.weights.assign(initial.begin(), initial.end());
  config.q = queries;
  config.k = first->keys.input.root;
  config.rule = first->rule;
  return config;
}

FailureOr<LayerConfig> LayerReader::read() {
  config.fullBatch = layer.form == LayerForm::FullBatch;
  if (config.fullBatch) {
    // Neither the weights the output applies nor those the step starts
    // from are a sequence the step reads.
    sequences.deps = &deps;
    for (Value read : layer.steps.front().weightsRead) {
      sequences.weights.push_back(read);
      if (Value start = stepStart(read))
        sequences.weights.push_back(start);
    }
    matcher.wholeSequence = &sequences;
  }
  if (!config.fullBatch && layer.chunkSize <= 0)
    return fail("its chunk length is not a constant");
  if (layer.bodyWrite && failed(checkBufferWrites()))
    return failure();
  if (config.fullBatch &&
      gluOutput(layer.steps.front().output, matcher, /*perm=*/nullptr))
    return readTrainedGLU();
  unsigned numTrained = llvm::count(layer.trained, true);
  bool dualForm = llvm::any_of(layer.steps, [](const ChunkStep &step) {
    return !step.chunkData.empty();
  });
  if (dualForm && numTrained >= 2 && !trainsInnerWeights())
    return matchLayerNormDualForm(layer, why);
  if (dualForm && (numTrained != 1 || trainsInnerWeights()))
    return fail("each chunk's output reads the chunk's own keys and the "
                "gradients at the chunk-start weights (a causal, dual-form "
                "step like TTT-Linear's: token i applies the weights after "
                "the gradients of tokens 1..i); the raise reads such layers "
                "when they train one output weight");
  if (trainsInnerWeights())
    return readTrainedSwiGLU();
  if (numTrained != 1)
    return fail("it trains " + Twine(numTrained) +
                " weights; the raise reads layers that train one output "
                "weight or SwiGLU weights");
  slot = llvm::find(layer.trained, true) - layer.trained.begin();

  FailureOr<Value> state = readOutput(layer.steps.front());
  if (failed(state))
    return failure();
  Value initial;
  LogicalResult updates = failure();
  switch (layer.form) {
  case LayerForm::Unrolled:
    updates = readUnrolled(initial);
    break;
  case LayerForm::Loop:
    updates = readLoop(*state, initial);
    break;
  case LayerForm::FullBatch:
    updates = readFullBatch(*state, initial);
    break;
  }
  if (failed(updates))
    return failure();
  if (!firstUpdate)
    return fail("it never updates its weight");

  const Update &u = *firstUpdate;
  config.model = features->model;
  if (config.model == ModelKind::linear) {
    config.weights = {initial};
    config.trained = {0};
  } else {
    config.weights = {features->w0, initial, features->w2};
    config.trained = {1};
  }
  config.q = queries;
  config.k = u.keys.input.root;
  config.rule = u.rule;
  // A causal term is scaled as its chunk's update (the last chunk's has no
  // update): one scale for both.
  llvm::append_range(factors, intraFactors);
  if (failed(settleScale(config.rule)))
    return failure();
  if (!intraTerms.empty() && failed(checkCausalTerms()))
    return failure();
  if (failed(checkRateColumn(config.rule, config.trained[0],
                             config.weights.size())))
    return failure();
  if (config.rule.weightNorm && config.rule.transposedWeight)
    return fail("its weight norm normalizes the rows of the weight it "
                "applies, which ttt.kvb_layer's weight norm does not");
  if (config.rule.weightNorm && !isColumnNormOf(u.normTarget, initial))
    return fail("its weight norm does not restore the columns to the norms "
                "of the initial weight");
  config.chunkSize = layer.chunkSize;
  return config;
}

LogicalResult LayerReader::checkRateColumn(const UpdateRule &rule,
                                           int64_t index, int64_t numWeights) {
  if (!rule.lr)
    return success();
  std::optional<int64_t> columns = numColumns(rule.lr);
  std::optional<int64_t> column = rule.lrColumn;
  bool perWeight = columns == numWeights && column == index;
  bool shared = columns == 1 && column.value_or(0) == 0;
  if (!perWeight && !shared)
    return fail("its learning-rate column does not belong to the trained "
                "weight");
  return success();
}

FailureOr<LayerConfig> raise::matchLayer(const FoundLayer &layer,
                                         std::string &why) {
  return LayerReader(layer, why).read();
}

namespace {
/// Gives a layer's operands the ranks ttt.kvb_layer takes. Heads folded into
/// the batch ([B*H, T, D]) read as one sample of B*H heads, and a weight
/// shared by every head is broadcast to each.
class OperandRanks {
public:
  OperandRanks(OpBuilder &builder, Location loc, Value q,
               SmallVectorImpl<Operation *> &created)
      : builder(builder), loc(loc), created(created), folded(rankOf(q) == 3),
        heads(headCount(q)) {}

  /// A [B*H, ..] sequence tensor as [1, B*H, ..]; a feature size its type
  /// leaves dynamic (a scripted export's projections) made static where the
  /// dataflow says it.
  Value sequence(Value value) {
    value = staticFeatures(value);
    if (!value || !folded)
      return value;
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape{1};
    llvm::append_range(shape, type.getShape());
    return unsqueezed(value,
                      RankedTensorType::get(shape, type.getElementType()));
  }

  /// `opType(value, operand)` with a constant i64 `operand` (a shape, the
  /// axes), typed `shape`; both nodes recorded as created.
  Value reshaped(StringRef opType, Value value, ArrayRef<int64_t> operand,
                 ArrayRef<int64_t> shape) {
    Type element = cast<ShapedType>(value.getType()).getElementType();
    onnx::OnnxBuilder b(builder, loc, element);
    Value constant = b.i64s(operand);
    created.push_back(constant.getDefiningOp());
    Value result = b.node(opType, {value, constant},
                          RankedTensorType::get(shape, element));
    created.push_back(result.getDefiningOp());
    return result;
  }

  /// `Reshape(x, [0, .., 0, D])` typed with the static D that lastDimOf
  /// reads: the same numbers, the size the layer op needs.
  Value staticFeatures(Value value) {
    auto type = value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
    if (!type || type.getRank() < 2 || !type.isDynamicDim(type.getRank() - 1))
      return value;
    std::optional<int64_t> features = lastDimOf(value);
    if (!features)
      return value;
    SmallVector<int64_t> dims(type.getRank(), 0), shape(type.getShape());
    dims.back() = shape.back() = *features;
    return reshaped("Reshape", value, dims, shape);
  }

  /// Per-token momentum `[X, T, Y]` with its time axis second-to-last as
  /// `[X, T]` (Y = 1: heads folded into X) or `[X, Y, T]` (Y = heads); null
  /// if its shape says neither. Per-chunk momentum `[B, N, H]` always is
  /// `[B, H, N]` (`perChunk`).
  Value timeLast(Value momentum, bool perChunk) {
    auto type = dyn_cast<RankedTensorType>(momentum.getType());
    if (!type || type.getRank() != 3 || type.isDynamicDim(2))
      return nullptr;
    onnx::OnnxBuilder b(builder, loc, type.getElementType());
    SmallVector<int64_t> shape(type.getShape());
    if (shape[2] == 1 && !perChunk) {
      Value axes = b.i64s({2});
      created.push_back(axes.getDefiningOp());
      Value squeezed = b.node(
          "Squeeze", {momentum, axes},
          RankedTensorType::get({shape[0], shape[1]}, type.getElementType()));
      created.push_back(squeezed.getDefiningOp());
      return squeezed;
    }
    Value transposed =
        b.node("Transpose", {momentum},
               RankedTensorType::get({shape[0], shape[2], shape[1]},
                                     type.getElementType()),
               {builder.getNamedAttr("perm",
                                     builder.getDenseI64ArrayAttr({0, 2, 1}))});
    created.push_back(transposed.getDefiningOp());
    return transposed;
  }

  /// A per-chunk momentum `[X, N]` as the per-token one `[X, T]` the layer
  /// op takes: each chunk's value repeated over its `chunk` tokens, cut to
  /// the length of `q` (whose time axis is its second-to-last).
  Value perToken(Value momentum, int64_t chunk, Value q) {
    auto type = dyn_cast<RankedTensorType>(momentum.getType());
    auto queries = dyn_cast<RankedTensorType>(q.getType());
    if (!type || !queries || type.getRank() < 2 || queries.getRank() < 3)
      return nullptr;
    int64_t rank = type.getRank();
    onnx::OnnxBuilder b(builder, loc, type.getElementType());
    auto make = [&](Value value) {
      created.push_back(value.getDefiningOp());
      return value;
    };
    SmallVector<int64_t> shape(type.getShape());
    shape.push_back(1);
    Value column = make(b.node("Unsqueeze", {momentum, make(b.i64s({rank}))},
                               RankedTensorType::get(shape, b.elementType())));
    SmallVector<int64_t> ones(rank + 1, 1);
    ones.back() = chunk;
    shape.back() = chunk;
    Value repeated =
        make(b.node("Expand", {column, make(b.i64s(ones))},
                    RankedTensorType::get(shape, b.elementType())));
    SmallVector<int64_t> flat(rank - 1, 0);
    flat.push_back(-1);
    SmallVector<int64_t> tokens(type.getShape().drop_back());
    tokens.push_back(ShapedType::kDynamic);
    Value perToken =
        make(b.node("Reshape", {repeated, make(b.i64s(flat))},
                    RankedTensorType::get(tokens, b.elementType())));
    int64_t time = queries.getRank() - 2;
    tokens.back() = queries.getDimSize(time);
    // The length as a Slice of the whole Shape: valid in every opset (Shape
    // takes start and end from opset 15 on).
    Value shapeOfQ = make(b.node("Shape", {q}, b.ints(queries.getRank())));
    Value length = make(b.node("Slice",
                               {shapeOfQ, make(b.i64s({time})),
                                make(b.i64s({time + 1})), make(b.i64s({0}))},
                               b.ints(1)));
    return make(
        b.node("Slice",
               {perToken, make(b.i64s({0})), length, make(b.i64s({rank - 1}))},
               RankedTensorType::get(tokens, b.elementType())));
  }

  /// `w` with its two innermost axes swapped.
  Value transposed(Value w) {
    auto type = cast<RankedTensorType>(w.getType());
    SmallVector<int64_t> shape(type.getShape());
    int64_t rank = shape.size();
    std::swap(shape[rank - 1], shape[rank - 2]);
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
    onnx::OnnxBuilder b(builder, loc, type.getElementType());
    Value result = b.node(
        "Transpose", {w}, RankedTensorType::get(shape, type.getElementType()),
        {builder.getNamedAttr("perm", builder.getDenseI64ArrayAttr(perm))});
    created.push_back(result.getDefiningOp());
    return result;
  }

  /// A weight as [H, r, c] or [B, H, r, c]; null if it cannot be. One
  /// stored [1, H, r, c] (to be expanded over the batch) is [H, r, c].
  Value weight(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (type && type.getRank() == 4 && type.hasStaticShape() &&
        type.getDimSize(0) == 1)
      return reshaped("Squeeze", value, {0}, type.getShape().drop_front());
    if (!type || type.getRank() != 2)
      return value;
    if (!heads || !type.hasStaticShape())
      return nullptr;
    auto shape =
        SmallVector<int64_t>{*heads, type.getDimSize(0), type.getDimSize(1)};
    return reshaped("Expand", value, shape, shape);
  }

  /// A LayerNorm scale or shift `[H, 1, D]`, `[1, D]` etc. as the `[H, D]`
  /// or `[D]` the layer op takes; null if it has another shape, or one row
  /// per head while the heads are folded into the batch.
  Value layerNormParameter(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape())
      return nullptr;
    SmallVector<int64_t> shape;
    for (int64_t dim : type.getShape())
      if (dim != 1)
        shape.push_back(dim);
    if (shape.empty() || shape.size() > 2 || (folded && shape.size() == 2))
      return nullptr;
    if (shape.size() == 2 && shape[0] != heads)
      return nullptr;
    if (shape == type.getShape())
      return value;
    return reshaped("Reshape", value, shape, shape);
  }

  /// The type of the layer op's output for a layer whose output is `type`.
  Type output(Type type) {
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!folded || !ranked)
      return type;
    SmallVector<int64_t> shape{1};
    llvm::append_range(shape, ranked.getShape());
    return RankedTensorType::get(shape, ranked.getElementType());
  }

  /// The layer op's output as the layer's output of `type`.
  Value restore(Value value, Type type) {
    if (!folded)
      return value;
    onnx::OnnxBuilder b(builder, loc, cast<ShapedType>(type).getElementType());
    Value axes = b.i64s({0});
    created.push_back(axes.getDefiningOp());
    Value squeezed = b.node("Squeeze", {value, axes}, type);
    created.push_back(squeezed.getDefiningOp());
    return squeezed;
  }

private:
  static std::optional<int64_t> headCount(Value q) {
    auto type = dyn_cast<RankedTensorType>(q.getType());
    if (!type || type.getRank() < 3)
      return std::nullopt;
    int64_t axis = type.getRank() - 3;
    if (type.isDynamicDim(axis))
      return std::nullopt;
    return type.getDimSize(axis);
  }

  Value unsqueezed(Value value, Type type) {
    onnx::OnnxBuilder b(builder, loc, cast<ShapedType>(type).getElementType());
    Value axes = b.i64s({0});
    created.push_back(axes.getDefiningOp());
    Value result = b.node("Unsqueeze", {value, axes}, type);
    created.push_back(result.getDefiningOp());
    return result;
  }

  OpBuilder &builder;
  Location loc;
  SmallVectorImpl<Operation *> &created;
  bool folded;
  std::optional<int64_t> heads;
};
} // namespace

KVBLayerOp raise::buildLayer(OpBuilder &builder, const FoundLayer &layer,
                             const LayerConfig &config,
                             SmallVectorImpl<Operation *> &created,
                             Value &output) {
  MLIRContext *context = builder.getContext();
  Location loc = layer.assembly->getLoc();
  auto model = FastWeightModelAttr::get(context, config.model, config.trained,
                                        config.bias, config.activation);
  auto loss =
      LossAttr::get(context, config.rule.loss, APFloat(config.rule.lossScale),
                    config.rule.reduction, APFloat(config.lnEps));
  NewtonSchulzAttr ns;
  if (!config.rule.nsCoeffs.empty())
    ns = NewtonSchulzAttr::get(
        context, config.rule.nsCoeffs.size() / 3,
        DenseF64ArrayAttr::get(context, config.rule.nsCoeffs),
        APFloat(config.rule.nsEps), /*compute=*/Type());
  auto update = UpdateAttr::get(
      context, config.rule.sign, APFloat(config.rule.lrScale),
      config.rule.clipColumns ? ClipKind::output_channels : ClipKind::none, ns,
      config.rule.weightNorm ? WeightNormKind::output_channels
                             : WeightNormKind::none,
      APFloat(config.rule.weightNorm ? config.rule.wnEps : 1e-5),
      UpdateBase::weights);
  auto schedule = config.fullBatch
                      ? ScheduleAttr::get(context, ScheduleKind::full_batch, 0,
                                          UpdateOrder::apply_then_update, 1)
                      : ScheduleAttr::get(context, ScheduleKind::chunked,
                                          config.chunkSize, config.order, 1);
  OperandRanks ranks(builder, loc, config.q, created);
  Value q = ranks.sequence(config.q);
  Value k = ranks.sequence(config.k);
  Value v = config.rule.v;
  if (config.valuesMinusKeys) {
    onnx::OnnxBuilder b(builder, loc, elementTypeOf(v.getType()));
    v = b.node("Sub", {v, config.k}, v.getType());
    created.push_back(v.getDefiningOp());
  }
  v = ranks.sequence(v);
  Value lr = config.rule.lr;
  if (lr && config.ratesTimeLast) {
    auto type = dyn_cast<RankedTensorType>(lr.getType());
    if (!type)
      return nullptr;
    SmallVector<int64_t> shape(type.getShape());
    shape.push_back(1);
    onnx::OnnxBuilder b(builder, loc, type.getElementType());
    Value axes = b.i64s({type.getRank()});
    created.push_back(axes.getDefiningOp());
    lr = b.node("Unsqueeze", {lr, axes},
                RankedTensorType::get(shape, type.getElementType()));
    created.push_back(lr.getDefiningOp());
  }
  lr = ranks.sequence(lr);
  Value momentum = config.rule.momentum;
  if (momentum && config.rule.momentumTimeBeforeLast) {
    momentum = ranks.timeLast(momentum, config.rule.momentumPerChunk);
    if (!momentum)
      return nullptr;
  }
  if (momentum && config.rule.momentumPerChunk) {
    momentum = ranks.perToken(momentum, config.chunkSize, config.q);
    if (!momentum)
      return nullptr;
  }
  momentum = ranks.sequence(momentum);
  SmallVector<Value> weights;
  for (auto [index, initial] : llvm::enumerate(config.weights)) {
    Value weight = initial;
    if (config.transposeInitial &&
        llvm::is_contained(config.trained, static_cast<int64_t>(index)))
      weight = ranks.transposed(weight);
    Value shaped = ranks.weight(weight);
    if (!shaped)
      return nullptr;
    weights.push_back(shaped);
  }
  Type type = layer.output.getType();
  // An output turned to another layout: the layer op's is turned back.
  ArrayRef<int64_t> turn =
      config.outputPerm.empty() ? layer.outputPerm : config.outputPerm;
  // A scripted export may not type its Loop's joined outputs (or types them
  // all dynamic); a chunked layer's output has the values' shape.
  auto known = [](Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    return ranked ? llvm::count_if(ranked.getShape(),
                                   [](int64_t d) { return d >= 0; })
                  : -1;
  };
  if (!isa<RankedTensorType>(type) ||
      (!config.fullBatch && turn.empty() &&
       known(config.rule.v.getType()) > known(type)))
    type = config.rule.v.getType();
  // The output feature size the values give, where neither type says it.
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (ranked && ranked.getRank() > 0 &&
      ranked.isDynamicDim(ranked.getRank() - 1) && turn.empty())
    if (std::optional<int64_t> features = lastDimOf(config.rule.v)) {
      SmallVector<int64_t> shape(ranked.getShape());
      shape.back() = *features;
      type = RankedTensorType::get(shape, ranked.getElementType());
    }
  Type layerType = type;
  SmallVector<int64_t> inverse(turn.size());
  if (!turn.empty()) {
    for (auto [i, axis] : llvm::enumerate(turn))
      inverse[axis] = i;
    layerType = permutedType(type, inverse);
  }
  Value tokenEta = config.tokenEta;
  if (!config.tokenEtaValues.empty()) {
    auto type = RankedTensorType::get(
        {static_cast<int64_t>(config.tokenEtaValues.size())},
        builder.getF32Type());
    SmallVector<float> numbers(config.tokenEtaValues.begin(),
                               config.tokenEtaValues.end());
    onnx::OnnxBuilder b(builder, loc, builder.getF32Type());
    tokenEta = b.constant(DenseElementsAttr::get(type, ArrayRef(numbers)));
    created.push_back(tokenEta.getDefiningOp());
  }
  Value gamma, beta;
  if (config.lnGamma) {
    gamma = ranks.layerNormParameter(config.lnGamma);
    beta = ranks.layerNormParameter(config.lnBeta);
    if (!gamma || !beta)
      return nullptr;
  }
  auto op = KVBLayerOp::create(
      builder, loc, ranks.output(layerType), TypeRange(), q, k, v, weights, lr,
      tokenEta, momentum, gamma, beta, model, loss, update, schedule);
  output = ranks.restore(op.getOutput(), layerType);
  if (config.residualQuery) {
    onnx::OnnxBuilder b(builder, loc, elementTypeOf(type));
    output = b.node("Add", {config.q, output}, output.getType());
    created.push_back(output.getDefiningOp());
  }
  if (!turn.empty()) {
    onnx::OnnxBuilder b(builder, loc, cast<ShapedType>(type).getElementType());
    output = b.node("Transpose", {output}, type, {b.attr("perm", turn)});
    created.push_back(output.getDefiningOp());
  }
  return op;
}
