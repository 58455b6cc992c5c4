//===- NormalizeTypes.cpp - constant Ifs and the types shape inference lost
//-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// TorchScript exports spell rank-dependent ops (`torch.tile` with more
// repeats than dims, `x.var()`, ...) as an `If` on a constant condition.
// ONNX's shape inference merges both branches, so everything after such an
// If has an unknown shape, and the views and products of a layer cannot be
// read. The normalization takes the branch the condition picks and gives
// the nodes after it the static types their inputs determine.
//
//===----------------------------------------------------------------------===//

#include "GraphQueries.h"
#include "Normalize.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

namespace {
/// If(c) with a constant c -> the nodes of the branch c picks, in place.
struct FoldConstantIf : OpRewritePattern<onnx::NodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::NodeOp node,
                                PatternRewriter &rewriter) const override {
    if (!node.isDefaultDomain() || node.getOpType() != "If" ||
        node.getInputs().size() != 1 || node->getNumRegions() != 2)
      return failure();
    std::optional<SmallVector<int64_t>> condition =
        intConstant(node.getInputs()[0]);
    if (!condition || condition->size() != 1)
      return rewriter.notifyMatchFailure(node, "condition not a constant");
    auto taken = dyn_cast_or_null<onnx::GraphAttr>(
        node.getONNXAttr((*condition)[0] != 0 ? "then_branch" : "else_branch"));
    Region *branch = taken && taken.getRegion() < node->getNumRegions()
                         ? &node->getRegion(taken.getRegion())
                         : nullptr;
    if (!branch || !branch->hasOneBlock() ||
        branch->front().getNumArguments() != 0)
      return rewriter.notifyMatchFailure(node, "no branch for the condition");
    auto yield = dyn_cast<onnx::YieldOp>(branch->front().getTerminator());
    if (!yield || yield.getValues().size() != node->getNumResults())
      return rewriter.notifyMatchFailure(node, "branch yields another arity");
    SmallVector<Value> results(yield.getValues());
    rewriter.inlineBlockBefore(&branch->front(), node);
    rewriter.eraseOp(yield);
    rewriter.replaceOp(node, results);
    return success();
  }
};

/// The static shape of a value, if its type has one.
std::optional<SmallVector<int64_t>> staticShape(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return SmallVector<int64_t>(type.getShape());
}

/// NumPy broadcasting of two static shapes.
std::optional<SmallVector<int64_t>> broadcast(ArrayRef<int64_t> a,
                                              ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    shape[i] = x == 1 ? y : x;
  }
  return shape;
}

enum class Rule {
  None,
  SameAsFirst,
  Broadcast,
  MatMul,
  Transpose,
  Reduce,
  Reshape,
  Expand,
  Tile,
  Gather,
  Slice,
  Concat,
  Unsqueeze,
  Squeeze,
  Einsum,
  ConstantOfShape,
  Pad
};

Rule ruleOf(StringRef opType) {
  return llvm::StringSwitch<Rule>(opType)
      .Cases({"Identity",
              "Cast",
              "Neg",
              "Sqrt",
              "Reciprocal",
              "Abs",
              "Exp",
              "Log",
              "Tanh",
              "Sigmoid",
              "Relu",
              "Erf",
              "Softplus",
              "Clip",
              "Trilu",
              "Softmax",
              "Gelu",
              "LayerNormalization",
              "ScatterElements",
              "ScatterND",
              "Cos",
              "Sin",
              "Not",
              "Floor",
              "Ceil"},
             Rule::SameAsFirst)
      .Cases({"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Equal", "Less",
              "Greater", "And", "Or", "Where"},
             Rule::Broadcast)
      .Case("MatMul", Rule::MatMul)
      .Case("Transpose", Rule::Transpose)
      .Cases({"ReduceMean", "ReduceSum", "ReduceSumSquare", "ReduceL2",
              "ReduceMax", "ReduceMin"},
             Rule::Reduce)
      .Case("Reshape", Rule::Reshape)
      .Case("Expand", Rule::Expand)
      .Case("Tile", Rule::Tile)
      .Case("Gather", Rule::Gather)
      .Case("Slice", Rule::Slice)
      .Case("Concat", Rule::Concat)
      .Case("Unsqueeze", Rule::Unsqueeze)
      .Case("Squeeze", Rule::Squeeze)
      .Case("Einsum", Rule::Einsum)
      .Case("ConstantOfShape", Rule::ConstantOfShape)
      .Case("Pad", Rule::Pad)
      .Default(Rule::None);
}

/// The result shape of `node` from its inputs' static shapes and constant
/// operands, by ONNX's rule for its op.
std::optional<SmallVector<int64_t>> inferShape(onnx::NodeOp node, Rule rule) {
  ValueRange inputs = node.getInputs();
  std::optional<SmallVector<int64_t>> x = staticShape(inputs[0]);
  if (!x)
    return std::nullopt;
  switch (rule) {
  case Rule::None:
    return std::nullopt;
  case Rule::SameAsFirst:
    return x;
  case Rule::Broadcast: {
    for (Value other : inputs.drop_front()) {
      std::optional<SmallVector<int64_t>> y = staticShape(other);
      if (!y || !(x = broadcast(*x, *y)))
        return std::nullopt;
    }
    return x;
  }
  case Rule::MatMul: {
    std::optional<SmallVector<int64_t>> y = staticShape(inputs[1]);
    if (!y || x->size() < 2 || y->size() < 2 ||
        (*x)[x->size() - 1] != (*y)[y->size() - 2])
      return std::nullopt;
    std::optional<SmallVector<int64_t>> batch = broadcast(
        ArrayRef<int64_t>(*x).drop_back(2), ArrayRef<int64_t>(*y).drop_back(2));
    if (!batch)
      return std::nullopt;
    batch->push_back((*x)[x->size() - 2]);
    batch->push_back(y->back());
    return batch;
  }
  case Rule::Transpose: {
    std::optional<SmallVector<int64_t>> perm = transposePerm(node);
    if (!perm || perm->size() != x->size())
      return std::nullopt;
    SmallVector<int64_t> shape;
    for (int64_t axis : *perm) {
      if (axis < 0 || axis >= static_cast<int64_t>(x->size()))
        return std::nullopt;
      shape.push_back((*x)[axis]);
    }
    return shape;
  }
  case Rule::Reduce: {
    std::optional<SmallVector<int64_t>> axes = reduceAxes(node);
    int64_t rank = x->size();
    if (!axes || (axes->empty() &&
                  intAttr(node, "noop_with_empty_axes").value_or(0) != 0))
      return std::nullopt;
    SmallVector<bool> reduced(rank, axes->empty());
    for (int64_t axis : *axes) {
      if (axis < -rank || axis >= rank)
        return std::nullopt;
      reduced[axis < 0 ? axis + rank : axis] = true;
    }
    bool keep = intAttr(node, "keepdims").value_or(1) != 0;
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        shape.push_back((*x)[d]);
      else if (keep)
        shape.push_back(1);
    return shape;
  }
  case Rule::Reshape: {
    std::optional<SmallVector<int64_t>> target =
        inputs.size() == 2 ? shapeConstant(inputs[1]) : std::nullopt;
    if (!target)
      return std::nullopt;
    bool allowZero = intAttr(node, "allowzero").value_or(0) != 0;
    int64_t elements = 1, known = 1;
    for (int64_t d : *x)
      elements *= d;
    std::optional<size_t> open;
    SmallVector<int64_t> shape(*target);
    for (auto [i, d] : llvm::enumerate(shape)) {
      if (d == 0 && !allowZero) {
        if (i >= x->size())
          return std::nullopt;
        d = (*x)[i];
      }
      if (d == -1) {
        if (open)
          return std::nullopt;
        open = i;
        continue;
      }
      if (d < 0)
        return std::nullopt;
      known *= d;
    }
    if (open) {
      if (known == 0 || elements % known != 0)
        return std::nullopt;
      shape[*open] = elements / known;
    } else if (known != elements) {
      return std::nullopt;
    }
    return shape;
  }
  case Rule::Expand: {
    std::optional<SmallVector<int64_t>> target =
        inputs.size() == 2 ? shapeConstant(inputs[1]) : std::nullopt;
    return target ? broadcast(*x, *target) : std::nullopt;
  }
  case Rule::Tile: {
    std::optional<SmallVector<int64_t>> repeats =
        inputs.size() == 2 ? shapeConstant(inputs[1]) : std::nullopt;
    if (!repeats || repeats->size() != x->size())
      return std::nullopt;
    SmallVector<int64_t> shape;
    for (auto [d, r] : llvm::zip(*x, *repeats)) {
      if (r < 0)
        return std::nullopt;
      shape.push_back(d * r);
    }
    return shape;
  }
  case Rule::Gather: {
    auto indices = dyn_cast<RankedTensorType>(inputs[1].getType());
    int64_t rank = x->size();
    int64_t axis = intAttr(node, "axis").value_or(0);
    if (!indices || !indices.hasStaticShape() || axis < -rank || axis >= rank)
      return std::nullopt;
    if (axis < 0)
      axis += rank;
    SmallVector<int64_t> shape(x->begin(), x->begin() + axis);
    llvm::append_range(shape, indices.getShape());
    shape.append(x->begin() + axis + 1, x->end());
    return shape;
  }
  case Rule::Slice: {
    // Bounds as constant inputs (opset 10 on); clamped as ONNX clamps them.
    auto input = [&](size_t i) -> std::optional<SmallVector<int64_t>> {
      return i < inputs.size() ? shapeConstant(inputs[i]) : std::nullopt;
    };
    std::optional<SmallVector<int64_t>> starts = input(1), ends = input(2);
    if (!starts || !ends || starts->size() != ends->size())
      return std::nullopt;
    int64_t rank = x->size();
    SmallVector<int64_t> axes, steps(starts->size(), 1);
    for (int64_t i = 0; i < static_cast<int64_t>(starts->size()); ++i)
      axes.push_back(i);
    if (inputs.size() > 3) {
      std::optional<SmallVector<int64_t>> given = input(3);
      if (!given || given->size() != starts->size())
        return std::nullopt;
      axes = *given;
    }
    if (inputs.size() > 4) {
      std::optional<SmallVector<int64_t>> given = input(4);
      if (!given || given->size() != starts->size())
        return std::nullopt;
      steps = *given;
    }
    SmallVector<int64_t> shape(*x);
    for (auto [i, axis] : llvm::enumerate(axes)) {
      if (axis < -rank || axis >= rank || steps[i] <= 0)
        return std::nullopt;
      if (axis < 0)
        axis += rank;
      int64_t dim = (*x)[axis];
      auto clamp = [dim](int64_t at) {
        if (at < 0)
          at = at < -dim ? 0 : at + dim;
        return std::min(at, dim);
      };
      int64_t start = clamp((*starts)[i]), end = clamp((*ends)[i]);
      shape[axis] = end > start ? (end - start + steps[i] - 1) / steps[i] : 0;
    }
    return shape;
  }
  case Rule::Concat: {
    int64_t rank = x->size();
    int64_t axis = intAttr(node, "axis").value_or(0);
    if (axis < -rank || axis >= rank)
      return std::nullopt;
    if (axis < 0)
      axis += rank;
    SmallVector<int64_t> shape(*x);
    for (Value other : inputs.drop_front()) {
      std::optional<SmallVector<int64_t>> y = staticShape(other);
      if (!y || static_cast<int64_t>(y->size()) != rank)
        return std::nullopt;
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && (*y)[d] != shape[d])
          return std::nullopt;
      shape[axis] += (*y)[axis];
    }
    return shape;
  }
  case Rule::ConstantOfShape:
    return shapeConstant(inputs[0]);
  case Rule::Pad: {
    // Pads as an input from opset 11 (with optional axes from opset 18), an
    // attribute before; [begin of each axis…, end of each axis…], negative
    // ones crop.
    int64_t rank = x->size();
    std::optional<SmallVector<int64_t>> pads =
        inputs.size() > 1 ? shapeConstant(inputs[1]) : std::nullopt;
    if (inputs.size() == 1)
      if (auto attr =
              dyn_cast_or_null<DenseI64ArrayAttr>(node.getONNXAttr("pads")))
        pads = SmallVector<int64_t>(attr.asArrayRef());
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    if (inputs.size() > 3 && !isa<NoneType>(inputs[3].getType())) {
      std::optional<SmallVector<int64_t>> given = shapeConstant(inputs[3]);
      if (!given)
        return std::nullopt;
      axes = *given;
    }
    auto count = static_cast<int64_t>(axes.size());
    if (!pads || static_cast<int64_t>(pads->size()) != 2 * count)
      return std::nullopt;
    SmallVector<int64_t> shape(*x);
    for (auto [i, axis] : llvm::enumerate(axes)) {
      if (axis < -rank || axis >= rank)
        return std::nullopt;
      if (axis < 0)
        axis += rank;
      int64_t size = shape[axis];
      if (llvm::AddOverflow(size, (*pads)[i], size) ||
          llvm::AddOverflow(size, (*pads)[i + count], size) || size < 0)
        return std::nullopt;
      shape[axis] = size;
    }
    return shape;
  }
  case Rule::Einsum: {
    // Explicit output letters only; no ellipsis.
    auto equation = dyn_cast_or_null<StringAttr>(node.getONNXAttr("equation"));
    if (!equation)
      return std::nullopt;
    std::string text;
    for (char c : equation.getValue())
      if (c != ' ')
        text += c;
    size_t arrow = text.find("->");
    if (arrow == std::string::npos || text.find('.') != std::string::npos)
      return std::nullopt;
    SmallVector<StringRef> terms;
    StringRef(text).take_front(arrow).split(terms, ',');
    if (terms.size() != inputs.size())
      return std::nullopt;
    llvm::DenseMap<char, int64_t> sizes;
    for (auto [term, input] : llvm::zip(terms, inputs)) {
      std::optional<SmallVector<int64_t>> shape = staticShape(input);
      if (!shape || shape->size() != term.size())
        return std::nullopt;
      for (auto [letter, size] : llvm::zip(term, *shape)) {
        auto [it, inserted] = sizes.try_emplace(letter, size);
        // Sizes of one letter broadcast as in NumPy.
        if (!inserted && it->second != size) {
          if (it->second != 1 && size != 1)
            return std::nullopt;
          it->second = std::max(it->second, size);
        }
      }
    }
    SmallVector<int64_t> shape;
    for (char letter : StringRef(text).drop_front(arrow + 2)) {
      auto it = sizes.find(letter);
      if (it == sizes.end())
        return std::nullopt;
      shape.push_back(it->second);
    }
    return shape;
  }
  case Rule::Unsqueeze:
  case Rule::Squeeze: {
    // Axes as an input from opset 13, an attribute before.
    std::optional<SmallVector<int64_t>> axes =
        inputs.size() > 1 ? shapeConstant(inputs[1]) : std::nullopt;
    if (!axes)
      if (auto attr =
              dyn_cast_or_null<DenseI64ArrayAttr>(node.getONNXAttr("axes")))
        axes = SmallVector<int64_t>(attr.asArrayRef());
    if (rule == Rule::Squeeze) {
      if (!axes)
        return std::nullopt;
      int64_t rank = x->size();
      SmallVector<bool> dropped(rank, false);
      for (int64_t axis : *axes) {
        if (axis < -rank || axis >= rank)
          return std::nullopt;
        dropped[axis < 0 ? axis + rank : axis] = true;
      }
      SmallVector<int64_t> shape;
      for (int64_t d = 0; d < rank; ++d)
        if (!dropped[d])
          shape.push_back((*x)[d]);
        else if ((*x)[d] != 1)
          return std::nullopt;
      return shape;
    }
    if (!axes)
      return std::nullopt;
    int64_t rank = x->size() + axes->size();
    SmallVector<bool> added(rank, false);
    for (int64_t axis : *axes) {
      if (axis < -rank || axis >= rank)
        return std::nullopt;
      added[axis < 0 ? axis + rank : axis] = true;
    }
    SmallVector<int64_t> shape;
    size_t next = 0;
    for (int64_t d = 0; d < rank; ++d)
      shape.push_back(added[d] ? 1 : (*x)[next++]);
    return next == x->size() ? std::optional(shape) : std::nullopt;
  }
  }
  return std::nullopt;
}

/// Whether `value` keeps its declared type: a graph yields it, and the graph
/// is no copy read with its sizes fixed (kSizesFixedAttr).
static bool keepsDeclaredType(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    return isa<onnx::YieldOp>(user) &&
           !user->getParentOp()->hasAttr(kSizesFixedAttr);
  });
}

/// The readers of a value whose type was refined: their shapes may follow
/// now, so the driver visits them again.
static void revisitReaders(PatternRewriter &rewriter, Value value) {
  for (Operation *user : llvm::make_early_inc_range(value.getUsers()))
    rewriter.modifyOpInPlace(user, [] {});
}

/// A node whose result type does not have the static shape its inputs
/// determine gets it. Values a graph yields keep their declared type,
/// except in a copy whose run-time sizes were fixed (kSizesFixedAttr).
struct RefineInferredType : OpRewritePattern<onnx::NodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::NodeOp node,
                                PatternRewriter &rewriter) const override {
    Rule rule = ruleOf(node.getOpType());
    if (rule == Rule::None || !node.isDefaultDomain() ||
        node->getNumResults() != 1 || node->getNumRegions() != 0 ||
        node.getInputs().empty())
      return failure();
    Value result = node->getResult(0);
    auto type = dyn_cast<TensorType>(result.getType());
    if (!type || (type.hasRank() && type.hasStaticShape()))
      return rewriter.notifyMatchFailure(node, "nothing to refine");
    if (keepsDeclaredType(result))
      return rewriter.notifyMatchFailure(node, "a yielded value");
    // Between float types only a Cast that keeps the type is refined (an
    // exporter's no-op); a change of precision keeps its declared type,
    // except in a copy read with its sizes fixed, where every type follows.
    // Integers and masks (positions cast to floats, comparisons, Where on a
    // mask) have their shapes refined like the floats they meet.
    auto input = dyn_cast<TensorType>(node.getInputs()[0].getType());
    auto graph = node->getParentOfType<onnx::GraphOp>();
    bool sizesFixed = graph && graph->hasAttr(kSizesFixedAttr);
    if (!input || (!sizesFixed && isa<FloatType>(input.getElementType()) &&
                   isa<FloatType>(type.getElementType()) &&
                   input.getElementType() != type.getElementType()))
      return rewriter.notifyMatchFailure(node, "another float type");
    std::optional<SmallVector<int64_t>> shape = inferShape(node, rule);
    if (!shape)
      return rewriter.notifyMatchFailure(node, "inputs do not fix the shape");
    if (type.hasRank() &&
        failed(verifyCompatibleShape(type.getShape(), *shape)))
      return rewriter.notifyMatchFailure(node, "contradicts its type");
    rewriter.modifyOpInPlace(node, [&] {
      result.setType(RankedTensorType::get(*shape, type.getElementType()));
    });
    revisitReaders(rewriter, result);
    return success();
  }
};
/// A Split of a static input whose results have run-time sizes gets their
/// static types: every dim but the axis is the input's, the axis sizes
/// those of the `split` input or attribute, of `num_outputs` (opset 18) or
/// already in the result types.
struct RefineSplitTypes : OpRewritePattern<onnx::NodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::NodeOp node,
                                PatternRewriter &rewriter) const override {
    if (!node.isDefaultDomain() || node.getOpType() != "Split" ||
        node.getInputs().empty())
      return failure();
    std::optional<SmallVector<int64_t>> x = staticShape(node.getInputs()[0]);
    if (!x)
      return rewriter.notifyMatchFailure(node, "a run-time input shape");
    int64_t rank = x->size();
    int64_t axis = intAttr(node, "axis").value_or(0);
    if (axis < -rank || axis >= rank)
      return rewriter.notifyMatchFailure(node, "axis out of range");
    if (axis < 0)
      axis += rank;
    if (llvm::all_of(node->getResults(),
                     [](Value r) { return staticShape(r).has_value(); }))
      return rewriter.notifyMatchFailure(node, "nothing to refine");
    if (llvm::any_of(node->getResults(), keepsDeclaredType))
      return rewriter.notifyMatchFailure(node, "a yielded value");
    std::optional<SmallVector<int64_t>> sizes = splitSizes(
        node, (*x)[axis],
        node.getInputs().size() > 1 ? shapeConstant(node.getInputs()[1])
                                    : std::nullopt);
    if (!sizes)
      return rewriter.notifyMatchFailure(node, "the sizes do not cut the axis");
    SmallVector<Type> types;
    for (auto [result, size] : llvm::zip(node->getResults(), *sizes)) {
      auto type = dyn_cast<TensorType>(result.getType());
      SmallVector<int64_t> shape(*x);
      shape[axis] = size;
      if (!type || (type.hasRank() &&
                    failed(verifyCompatibleShape(type.getShape(), shape))))
        return rewriter.notifyMatchFailure(node, "contradicts its type");
      types.push_back(RankedTensorType::get(shape, type.getElementType()));
    }
    rewriter.modifyOpInPlace(node, [&] {
      for (auto [result, type] : llvm::zip(node->getResults(), types))
        result.setType(type);
    });
    for (Value result : node->getResults())
      revisitReaders(rewriter, result);
    return success();
  }
};
} // namespace

void raise::populateTypeNormalizations(RewritePatternSet &patterns) {
  patterns.add<FoldConstantIf, RefineInferredType, RefineSplitTypes>(
      patterns.getContext());
}
