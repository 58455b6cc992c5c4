//===- LoopBounds.cpp - does a scripted chunk loop walk the sequence ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LoopBounds.h"
#include "Normalize.h"

#include "mlir/Analysis/Presburger/IntegerRelation.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;
using presburger::IntegerPolyhedron;
using presburger::PresburgerSpace;
using presburger::VarKind;

namespace {
/// Variables 0 and 1 of every system: the sequence length T and the
/// iteration number i. Every node read adds one variable for its value.
constexpr unsigned kLength = 0, kIteration = 1;

/// One piece of an integer function: where it holds (the constraints of
/// `set`), the function is variable `var` of the set.
struct Piece {
  IntegerPolyhedron set;
  unsigned var;
};
using Pieces = SmallVector<Piece, 2>;

struct Term {
  unsigned var;
  int64_t coefficient;
};

/// Adds `sum(terms) + constant == 0` (`equal`) or `>= 0` to `set`.
void constrain(IntegerPolyhedron &set, ArrayRef<Term> terms, int64_t constant,
               bool equal) {
  SmallVector<int64_t> row(set.getNumCols(), 0);
  for (const Term &term : terms)
    row[term.var] += term.coefficient;
  row.back() = constant;
  if (equal)
    set.addEquality(row);
  else
    set.addInequality(row);
}

unsigned freshVar(IntegerPolyhedron &set) {
  return set.appendVar(VarKind::SetDim);
}

/// A new variable equal to `sum(terms) + constant`.
unsigned linear(IntegerPolyhedron &set, ArrayRef<Term> terms,
                int64_t constant) {
  unsigned y = freshVar(set);
  SmallVector<Term> all(terms);
  all.push_back({y, -1});
  constrain(set, all, constant, /*equal=*/true);
  return y;
}

/// A new variable equal to floor(`x` / `divisor`), divisor > 0.
unsigned floorDiv(IntegerPolyhedron &set, unsigned x, int64_t divisor) {
  unsigned q = freshVar(set);
  // divisor q <= x <= divisor q + divisor - 1
  constrain(set, {{x, 1}, {q, -divisor}}, 0, false);
  constrain(set, {{q, divisor}, {x, -1}}, divisor - 1, false);
  return q;
}

/// The pieces of min(a, b) (or max) over `set`; empty pieces dropped.
Pieces minOrMax(const IntegerPolyhedron &set, unsigned a, unsigned b,
                bool max) {
  Pieces pieces;
  for (int first = 0; first < 2; ++first) {
    Piece piece{set, 0};
    unsigned chosen = first == 0 ? a : b, other = first == 0 ? b : a;
    piece.var = linear(piece.set, {{chosen, 1}}, 0);
    // Ties go to the first piece: `other - chosen >= 0` (min) there,
    // `other - chosen >= 1` in the second.
    int64_t sign = max ? -1 : 1;
    constrain(piece.set, {{other, sign}, {chosen, -sign}}, first == 0 ? 0 : -1,
              false);
    if (!piece.set.isIntegerEmpty())
      pieces.push_back(std::move(piece));
  }
  return pieces;
}

/// True if `sum(terms) + constant >= 0` on every integer point of `set`.
bool alwaysNonNegative(const IntegerPolyhedron &set, ArrayRef<Term> terms,
                       int64_t constant) {
  IntegerPolyhedron violated = set;
  SmallVector<Term> negated;
  for (const Term &term : terms)
    negated.push_back({term.var, -term.coefficient});
  // sum + constant <= -1  <=>  -sum - constant - 1 >= 0
  constrain(violated, negated, -constant - 1, false);
  return violated.isIntegerEmpty();
}

/// Builds the pieces of an expected function on (a copy of) a set.
using Expected = function_ref<Pieces(const IntegerPolyhedron &)>;

/// True if every piece of `actual` equals `expected` wherever both hold.
bool alwaysEqual(const Pieces &actual, Expected expected) {
  return llvm::all_of(actual, [&](const Piece &a) {
    return llvm::all_of(expected(a.set), [&](const Piece &e) {
      return alwaysNonNegative(e.set, {{a.var, 1}, {e.var, -1}}, 0) &&
             alwaysNonNegative(e.set, {{e.var, 1}, {a.var, -1}}, 0);
    });
  });
}

/// Integer arithmetic on shapes as pieces of a quasi-affine function of the
/// sequence length and the iteration number.
class ShapeArithmetic {
public:
  ShapeArithmetic(ArrayRef<Value> sequences, Value iteration)
      : sequences(sequences), iteration(iteration) {}

  /// The pieces of `value` over `domain`; nullopt if it is not read.
  std::optional<Pieces> eval(Value value, const IntegerPolyhedron &domain) {
    return evaluate(value, domain, /*depth=*/0);
  }

private:
  std::optional<Pieces> single(IntegerPolyhedron set, unsigned var) {
    Pieces pieces;
    pieces.push_back({std::move(set), var});
    return pieces;
  }

  std::optional<Pieces> evaluate(Value value, const IntegerPolyhedron &set,
                                 int depth) {
    // Shape arithmetic is short; a deep chain is not what this reads.
    if (depth > 64)
      return std::nullopt;
    if (iteration && value == iteration)
      return single(set, kIteration);
    if (std::optional<int64_t> c = scalarInt(value)) {
      IntegerPolyhedron copy = set;
      unsigned y = linear(copy, {}, *c);
      return single(std::move(copy), y);
    }
    auto node = value.getDefiningOp<onnx::NodeOp>();
    if (!node || !node.isDefaultDomain() || node.getInputs().empty() ||
        node->getNumResults() != 1)
      return std::nullopt;
    StringRef type = node.getOpType();
    auto inputs = node.getInputs();
    if (llvm::is_contained(
            {"Identity", "Cast", "Unsqueeze", "Squeeze", "Reshape"}, type))
      return evaluate(inputs[0], set, depth + 1);
    if (type == "Gather" || type == "Slice" || type == "Shape") {
      std::optional<std::optional<int64_t>> dim = dimension(node);
      if (!dim)
        return std::nullopt;
      if (!*dim)
        return single(set, kLength);
      IntegerPolyhedron copy = set;
      unsigned y = linear(copy, {}, **dim);
      return single(std::move(copy), y);
    }
    if (type == "Neg" && inputs.size() == 1)
      return map(inputs[0], set, depth, [](IntegerPolyhedron &s, unsigned a) {
        return linear(s, {{a, -1}}, 0);
      });
    // Products, quotients and remainders by a constant stay quasi-affine.
    if (llvm::is_contained({"Mul", "Div", "Mod"}, type) && inputs.size() == 2) {
      std::optional<int64_t> rhs = scalarInt(inputs[1]);
      std::optional<int64_t> lhs = scalarInt(inputs[0]);
      if (type == "Mul" && (lhs || rhs)) {
        int64_t c = rhs ? *rhs : *lhs;
        return map(rhs ? inputs[0] : inputs[1], set, depth,
                   [&](IntegerPolyhedron &s, unsigned a) {
                     return linear(s, {{a, c}}, 0);
                   });
      }
      // ONNX integer Div truncates and Mod takes the divisor's sign: both
      // are floor division for a positive divisor and a dividend >= 0.
      if (!rhs || *rhs <= 0 || (type == "Mod" && intAttr(node, "fmod") == 1))
        return std::nullopt;
      std::optional<Pieces> dividend = evaluate(inputs[0], set, depth + 1);
      if (!dividend)
        return std::nullopt;
      Pieces result;
      for (Piece &piece : *dividend) {
        if (type == "Div" && !alwaysNonNegative(piece.set, {{piece.var, 1}}, 0))
          return std::nullopt;
        unsigned q = floorDiv(piece.set, piece.var, *rhs);
        unsigned y = type == "Div"
                         ? q
                         : linear(piece.set, {{piece.var, 1}, {q, -*rhs}}, 0);
        result.push_back({std::move(piece.set), y});
      }
      return result;
    }
    if ((type == "Ceil" || type == "Floor") && inputs.size() == 1)
      return roundedQuotient(node, set, depth);
    bool minOrMaxNode = type == "Min" || type == "Max";
    if ((type == "Add" || type == "Sub" || minOrMaxNode) &&
        (inputs.size() == 2 || (minOrMaxNode && inputs.size() > 2))) {
      std::optional<Pieces> acc = evaluate(inputs[0], set, depth + 1);
      for (Value operand : inputs.drop_front()) {
        if (!acc)
          return std::nullopt;
        Pieces next;
        for (Piece &a : *acc) {
          std::optional<Pieces> bs = evaluate(operand, a.set, depth + 1);
          if (!bs)
            return std::nullopt;
          for (Piece &b : *bs) {
            if (minOrMaxNode) {
              for (Piece &p : minOrMax(b.set, a.var, b.var, type == "Max"))
                next.push_back(std::move(p));
              continue;
            }
            unsigned y =
                linear(b.set, {{a.var, 1}, {b.var, type == "Add" ? 1 : -1}}, 0);
            next.push_back({std::move(b.set), y});
          }
        }
        acc = std::move(next);
      }
      return acc;
    }
    return std::nullopt;
  }

  /// True if a sequence is `Reshape(x, Concat(.., Shape(x)[t], ..))` with
  /// the time axis t of x at its own time axis: the heads folded into the
  /// batch by a reshape read off x's shape, which keeps x's length.
  bool foldedIntoSequence(Value x) {
    std::optional<int64_t> xRank = rankOf(x);
    for (Value sequence : sequences) {
      onnx::NodeOp reshape = nodeOf(sequence, "Reshape");
      onnx::NodeOp concat = reshape && reshape.getInputs()[0] == x
                                ? nodeOf(reshape.getInputs()[1], "Concat")
                                : onnx::NodeOp();
      std::optional<int64_t> rank = rankOf(sequence);
      if (!concat || !xRank || !rank || *rank < 2 ||
          static_cast<int64_t>(concat.getInputs().size()) != *rank ||
          llvm::any_of(concat.getInputs(), [](Value piece) {
            auto type = dyn_cast<RankedTensorType>(piece.getType());
            return !type || type.getShape() != ArrayRef<int64_t>{1};
          }))
        continue;
      std::optional<ShapeDim> length = shapeDim(concat.getInputs()[*rank - 2]);
      if (length && length->tensor == x && isTimeAxis(length->axis, xRank))
        return true;
    }
    return false;
  }

  /// `Ceil(x / c)` or `Floor(x / c)` in floating point, c a whole positive
  /// constant: the trip count a traced `range(0, T, C)` computes,
  /// `Cast(Ceil(Cast(T) / C))`. For 0 <= x < 2^(m-1), m the type's mantissa
  /// bits, x converts exactly and x / c rounds to within 1 / (2c) of the
  /// quotient, which is that far from no whole number but itself: the
  /// rounding is that of integer arithmetic. The pieces cover only the
  /// lengths T < 2^(m-1) (2^23 in float32), where the model's own float
  /// arithmetic counts right.
  std::optional<Pieces> roundedQuotient(onnx::NodeOp rounding,
                                        const IntegerPolyhedron &set,
                                        int depth) {
    onnx::NodeOp div = nodeOf(rounding.getInputs()[0], "Div");
    auto element = div ? dyn_cast<FloatType>(
                             getElementTypeOrSelf(div->getResult(0).getType()))
                       : FloatType();
    std::optional<double> c =
        div ? scalarConstant(div.getInputs()[1]) : std::nullopt;
    if (!element || element.getFPMantissaWidth() < 12 || !c || *c < 1.0 ||
        *c > 0x1p30 || *c != std::trunc(*c))
      return std::nullopt;
    auto divisor = static_cast<int64_t>(*c);
    int64_t limit = int64_t{1}
                    << std::min<unsigned>(element.getFPMantissaWidth() - 1, 52);
    IntegerPolyhedron bounded = set;
    constrain(bounded, {{kLength, -1}}, limit - 1, /*equal=*/false);
    std::optional<Pieces> dividend =
        evaluate(div.getInputs()[0], bounded, depth + 1);
    if (!dividend)
      return std::nullopt;
    bool ceil = rounding.getOpType() == "Ceil";
    for (Piece &piece : *dividend) {
      if (!alwaysNonNegative(piece.set, {{piece.var, 1}}, 0) ||
          !alwaysNonNegative(piece.set, {{piece.var, -1}}, limit - 1))
        return std::nullopt;
      unsigned x =
          ceil ? linear(piece.set, {{piece.var, 1}}, divisor - 1) : piece.var;
      piece.var = floorDiv(piece.set, x, divisor);
    }
    return dividend;
  }

  std::optional<Pieces>
  map(Value operand, const IntegerPolyhedron &set, int depth,
      function_ref<unsigned(IntegerPolyhedron &, unsigned)> apply) {
    std::optional<Pieces> pieces = evaluate(operand, set, depth + 1);
    if (!pieces)
      return std::nullopt;
    for (Piece &piece : *pieces)
      piece.var = apply(piece.set, piece.var);
    return pieces;
  }

  static std::optional<int64_t> scalarInt(Value value) {
    std::optional<SmallVector<int64_t>> ints = intConstant(value);
    if (!ints || ints->size() != 1)
      return std::nullopt;
    return (*ints)[0];
  }

  /// One dim of a tensor's shape: `Gather(Shape(x), d)`, `Slice(Shape(x),
  /// [d], [d + 1])` or `Shape(x, start = d, end = d + 1)`. Returns nullopt
  /// inside for the time axis of a sequence tensor (T), a size for a static
  /// dim; nullopt if neither.
  std::optional<std::optional<int64_t>> dimension(onnx::NodeOp node) {
    onnx::NodeOp shape;
    std::optional<int64_t> index;
    StringRef type = node.getOpType();
    if (type == "Shape") {
      shape = node;
      std::optional<int64_t> start = intAttr(node, "start");
      std::optional<int64_t> end = intAttr(node, "end");
      if (start && end && *end == *start + 1)
        index = start;
    } else if (type == "Gather" && node.getInputs().size() == 2) {
      shape = nodeOf(node.getInputs()[0], "Shape");
      index = scalarInt(node.getInputs()[1]);
    } else if (type == "Slice" && node.getInputs().size() >= 3 &&
               node.getInputs().size() <= 4) {
      shape = nodeOf(node.getInputs()[0], "Shape");
      std::optional<int64_t> start = scalarInt(node.getInputs()[1]);
      std::optional<int64_t> end = scalarInt(node.getInputs()[2]);
      std::optional<int64_t> axis =
          node.getInputs().size() == 4 ? scalarInt(node.getInputs()[3]) : 0;
      if (start && end && axis == 0 && *start >= 0 && *end == *start + 1)
        index = start;
    }
    if (!shape || !index || (shape != node && shape.getAttrs()))
      return std::nullopt;
    Value source = shape.getInputs()[0];
    int64_t dim = *index;
    std::optional<int64_t> rank = rankOf(source);
    if (dim < 0 && rank)
      dim += *rank;
    bool time = isTimeAxis(dim, rank) || dim == lastAxisTime(source);
    if ((time && (llvm::is_contained(sequences, source) ||
                  foldedIntoSequence(source))) ||
        isTurnedTimeAxis(source, dim))
      return std::optional<int64_t>();
    auto shaped = dyn_cast<ShapedType>(source.getType());
    if (!shaped || !shaped.hasRank() || dim < 0 || dim >= shaped.getRank() ||
        shaped.isDynamicDim(dim) || time)
      return std::nullopt;
    return std::optional<int64_t>(shaped.getDimSize(dim));
  }

  /// True if `dim` of `source` is the time axis of a sequence that is
  /// `source` transposed (the length of `[B, T, H, D]` inputs cut as
  /// `[B, H, T, D]`).
  bool isTurnedTimeAxis(Value source, int64_t dim) {
    return llvm::any_of(sequences, [&](Value sequence) {
      onnx::NodeOp transpose = nodeOf(sequence, "Transpose");
      if (!transpose || transpose.getInputs()[0] != source)
        return false;
      std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
      int64_t rank = perm ? perm->size() : 0;
      for (int64_t axis = 0; axis < rank; ++axis)
        if ((*perm)[axis] == dim &&
            (isTimeAxis(axis, rank) || axis == lastAxisTime(sequence)))
          return true;
      return false;
    });
  }

  /// The last axis of a sequence one rank below the queries (momentum,
  /// [B, H, T] next to [B, H, T, D]), whose time axis is its last; or -1.
  int64_t lastAxisTime(Value source) {
    std::optional<int64_t> rank = rankOf(source);
    std::optional<int64_t> queryRank =
        sequences.empty() ? std::nullopt : rankOf(sequences.front());
    if (!rank || !queryRank || *rank + 1 != *queryRank)
      return -1;
    return *rank - 1;
  }

  ArrayRef<Value> sequences;
  Value iteration;
};
} // namespace

/// The start and end operands of a cut on the time axis: a Slice of one
/// axis, stepping by one.
static std::optional<std::pair<Value, Value>> boundsOf(const SliceChain &cut) {
  onnx::NodeOp slice = cut.timeSlice;
  if (!slice || slice.getOpType() != "Slice" || slice.getInputs().size() < 3)
    return std::nullopt;
  return std::make_pair(slice.getInputs()[1], slice.getInputs()[2]);
}

LogicalResult raise::checkLoopWalksChunks(onnx::NodeOp loop,
                                          const SliceChain &window,
                                          const SliceChain *tail,
                                          int64_t chunkSize,
                                          ArrayRef<Value> sequences,
                                          Value chunkLength, std::string &why) {
  Block &body = loop->getRegion(0).front();
  auto fail = [&](StringRef reason) {
    why = reason.str();
    return failure();
  };
  // The loop must not stop early: a true condition, yielded unchanged.
  auto yield = cast<onnx::YieldOp>(body.getTerminator());
  Value cond = skipLayout(yield.getOperand(0));
  std::optional<double> initialCond = scalarConstant(loop.getInputs()[1]);
  bool alwaysTrue =
      (cond == body.getArgument(1) || scalarConstant(cond) == 1.0) &&
      initialCond == 1.0;
  if (!alwaysTrue)
    return fail("its Loop may stop before its trip count");
  const int64_t c = chunkSize;
  if (c <= 0)
    return fail("its Loop's chunk length is not a constant");

  ShapeArithmetic arithmetic(sequences, body.getArgument(0));
  // Every sequence length 1 <= T <= 2^62 (the one length of a model
  // exported for one), and every iteration 0 <= i < trips(T) of it.
  // (Bounding T keeps an end written as INT64_MAX, "to the end", equal to
  // T after the clamp.)
  IntegerPolyhedron lengths(PresburgerSpace::getSetSpace(2));
  constrain(lengths, {{kLength, 1}}, -1, false);
  constrain(lengths, {{kLength, -1}}, int64_t(1) << 62, false);
  if (std::optional<int64_t> fixed =
          sequences.empty() ? std::nullopt : staticTimeLength(sequences[0]))
    constrain(lengths, {{kLength, 1}}, -*fixed, true);
  IntegerPolyhedron iterations = lengths;
  constrain(iterations, {{kIteration, 1}}, 0, false);
  // i C < T, or (i + 1) C < T when the last chunk follows the loop.
  constrain(iterations, {{kLength, 1}, {kIteration, -c}}, tail ? -1 - c : -1,
            false);

  auto chunks = [&](const IntegerPolyhedron &set) {
    Piece piece{set, 0};
    unsigned shifted = linear(piece.set, {{kLength, 1}}, tail ? -1 : c - 1);
    piece.var = floorDiv(piece.set, shifted, c);
    return Pieces{std::move(piece)};
  };
  std::optional<Pieces> trips = arithmetic.eval(loop.getInputs()[0], lengths);
  if (!trips || !alwaysEqual(*trips, chunks))
    return fail("its Loop's trip count is not the number of chunks the "
                "raise can read off the sequence length");

  // Slice clamps its end to [0, T]: an end >= 0 cuts min(end, T).
  auto clampedEnd = [&](Value end,
                        const IntegerPolyhedron &set) -> std::optional<Pieces> {
    std::optional<Pieces> ends = arithmetic.eval(end, set);
    if (!ends)
      return std::nullopt;
    Pieces clamped;
    for (Piece &piece : *ends) {
      if (!alwaysNonNegative(piece.set, {{piece.var, 1}}, 0))
        return std::nullopt;
      for (Piece &p : minOrMax(piece.set, piece.var, kLength, false))
        clamped.push_back(std::move(p));
    }
    return clamped;
  };
  auto chunkStart = [&](const IntegerPolyhedron &set) {
    Piece piece{set, 0};
    piece.var = linear(piece.set, {{kIteration, c}}, 0);
    return Pieces{std::move(piece)};
  };
  auto chunkEnd = [&](const IntegerPolyhedron &set) {
    IntegerPolyhedron copy = set;
    unsigned end = linear(copy, {{kIteration, c}}, c);
    return minOrMax(copy, end, kLength, false);
  };
  // A cut takes [start, min(end, T)) for the expected start and end.
  auto cutsAs = [&](const SliceChain &cut, const IntegerPolyhedron &domain,
                    Expected start, Expected end) {
    std::optional<std::pair<Value, Value>> bounds = boundsOf(cut);
    std::optional<Pieces> starts =
        bounds ? arithmetic.eval(bounds->first, domain) : std::nullopt;
    std::optional<Pieces> ends =
        bounds ? clampedEnd(bounds->second, domain) : std::nullopt;
    return starts && ends && alwaysEqual(*starts, start) &&
           alwaysEqual(*ends, end);
  };
  if (!cutsAs(window, iterations, chunkStart, chunkEnd))
    return fail("its Loop's iterations do not cut the sequence into "
                "consecutive chunks");

  if (chunkLength) {
    auto tokens = [&](const IntegerPolyhedron &set) {
      Pieces pieces = chunkEnd(set);
      for (Piece &piece : pieces)
        piece.var = linear(piece.set, {{piece.var, 1}, {kIteration, -c}}, 0);
      return pieces;
    };
    std::optional<Pieces> lengthsRead =
        arithmetic.eval(chunkLength, iterations);
    if (!lengthsRead || !alwaysEqual(*lengthsRead, tokens))
      return fail("the update divides by a value that is not the chunk "
                  "length");
  }

  if (tail) {
    // The rest: from C floor((T - 1) / C) to the end.
    auto restStart = [&](const IntegerPolyhedron &set) {
      Piece piece{set, 0};
      unsigned shifted = linear(piece.set, {{kLength, 1}}, -1);
      unsigned q = floorDiv(piece.set, shifted, c);
      piece.var = linear(piece.set, {{q, c}}, 0);
      return Pieces{std::move(piece)};
    };
    auto toEnd = [&](const IntegerPolyhedron &set) {
      return Pieces{Piece{set, kLength}};
    };
    if (!cutsAs(*tail, lengths, restStart, toEnd))
      return fail("the chunk after its Loop is not the rest of the "
                  "sequence");
  }
  return success();
}
