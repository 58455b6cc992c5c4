//===- LoopBounds.cpp - does a scripted chunk loop walk the sequence ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LoopBounds.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

namespace {
/// Evaluates scalar integer arithmetic on shapes for one sequence length
/// and one iteration number.
class ShapeArithmetic {
public:
  ShapeArithmetic(ArrayRef<Value> sequences, Value iteration)
      : sequences(sequences), iteration(iteration) {}

  std::optional<int64_t> eval(Value value, int64_t length, int64_t step) {
    this->length = length;
    this->step = step;
    return evaluate(value, /*depth=*/0);
  }

private:
  std::optional<int64_t> evaluate(Value value, int depth) {
    // Shape arithmetic is short; a deep chain is not what this reads.
    if (depth > 64)
      return std::nullopt;
    if (iteration && value == iteration)
      return step;
    if (std::optional<SmallVector<int64_t>> ints = intConstant(value))
      return ints->size() == 1 ? std::optional<int64_t>((*ints)[0])
                               : std::nullopt;
    auto node = value.getDefiningOp<onnx::NodeOp>();
    if (!node || !node.isDefaultDomain() || node.getInputs().empty())
      return std::nullopt;
    StringRef type = node.getOpType();
    if (llvm::is_contained(
            {"Identity", "Cast", "Unsqueeze", "Squeeze", "Reshape"}, type))
      return evaluate(node.getInputs()[0], depth + 1);
    if (type == "Gather")
      return dimension(node);
    if (node.getInputs().size() != 2)
      return std::nullopt;
    std::optional<int64_t> a = evaluate(node.getInputs()[0], depth + 1);
    std::optional<int64_t> b = evaluate(node.getInputs()[1], depth + 1);
    if (!a || !b)
      return std::nullopt;
    if (type == "Add")
      return *a + *b;
    if (type == "Sub")
      return *a - *b;
    if (type == "Mul")
      return *a * *b;
    if (type == "Div" && *b != 0)
      return *a / *b; // ONNX integer Div truncates, as C++ does
    if (type == "Min")
      return std::min(*a, *b);
    if (type == "Max")
      return std::max(*a, *b);
    return std::nullopt;
  }

  /// `Gather(Shape(x), d)`: the sequence length for the time axis of a
  /// sequence tensor, or a static size.
  std::optional<int64_t> dimension(onnx::NodeOp gather) {
    onnx::NodeOp shape = nodeOf(gather.getInputs()[0], "Shape");
    if (!shape || gather.getInputs().size() != 2 || shape.getAttrs())
      return std::nullopt;
    std::optional<SmallVector<int64_t>> index =
        intConstant(gather.getInputs()[1]);
    if (!index || index->size() != 1)
      return std::nullopt;
    Value source = shape.getInputs()[0];
    int64_t dim = (*index)[0];
    bool time = isTimeAxis(dim, rankOf(source)) || dim == lastAxisTime(source);
    if (time && llvm::is_contained(sequences, source))
      return length;
    auto type = dyn_cast<ShapedType>(source.getType());
    if (!type || !type.hasRank() || dim < 0 || dim >= type.getRank() ||
        type.isDynamicDim(dim) || time)
      return std::nullopt;
    return type.getDimSize(dim);
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
  int64_t length = 0, step = 0;
};
} // namespace

/// [start, end) of a Slice cut on the time axis, the end clamped to `length`.
static std::optional<std::pair<int64_t, int64_t>>
windowOf(const SliceChain &cut, ShapeArithmetic &arithmetic, int64_t length,
         int64_t step) {
  onnx::NodeOp slice = cut.timeSlice;
  if (!slice || slice.getOpType() != "Slice" || slice.getInputs().size() < 3)
    return std::nullopt;
  std::optional<int64_t> start =
      arithmetic.eval(slice.getInputs()[1], length, step);
  std::optional<int64_t> end =
      arithmetic.eval(slice.getInputs()[2], length, step);
  if (!start || !end || *start < 0)
    return std::nullopt;
  return std::make_pair(*start, std::min(*end, length));
}

LogicalResult
raise::checkLoopWalksChunks(onnx::NodeOp loop, const SliceChain &window,
                            const SliceChain *tail, int64_t chunkSize,
                            ArrayRef<Value> sequences, std::string &why) {
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

  ShapeArithmetic arithmetic(sequences, body.getArgument(0));
  int64_t c = chunkSize;
  // A model exported for one sequence length is checked at that length; a
  // symbolic one at lengths around every chunk boundary case.
  SmallVector<int64_t> lengths = {1, c - 1, c, c + 1, 2 * c, 3 * c + 5};
  if (std::optional<int64_t> fixed =
          sequences.empty() ? std::nullopt : staticTimeLength(sequences[0]))
    lengths = {*fixed};
  for (int64_t length : lengths) {
    if (length < 1)
      continue;
    std::optional<int64_t> trips =
        arithmetic.eval(loop.getInputs()[0], length, 0);
    int64_t expected = tail ? (length - 1) / c : (length + c - 1) / c;
    if (!trips || *trips != expected)
      return fail("its Loop's trip count is not the number of chunks the "
                  "raise can read off the sequence length");
    for (int64_t i : {int64_t(0), *trips - 1}) {
      if (i < 0)
        continue;
      auto cut = windowOf(window, arithmetic, length, i);
      if (!cut || cut->first != i * c ||
          cut->second != std::min(i * c + c, length))
        return fail("its Loop's iterations do not cut the sequence into "
                    "consecutive chunks");
    }
    if (tail) {
      auto cut = windowOf(*tail, arithmetic, length, 0);
      if (!cut || cut->first != *trips * c || cut->second != length)
        return fail("the chunk after its Loop is not the rest of the "
                    "sequence");
    }
  }
  return success();
}
