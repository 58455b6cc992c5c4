//===- NormalizeConstants.cpp - shape arithmetic and constants folded -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Exporters leave integer arithmetic on constants in the graph (torch.onnx
// builds the indices of a slice assignment from ConstantOfShape, Where,
// Expand and Concat of constants), and fold transposes of weights
// into new initializers. Integer nodes whose inputs are all constants become
// Constants, and so does the transpose of a constant tensor, so that the
// views and windows they describe can be read.
//
//===----------------------------------------------------------------------===//

#include "GraphQueries.h"
#include "Normalize.h"

#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

namespace {
/// An integer (or bool) tensor held in full.
struct IntTensor {
  SmallVector<int64_t> shape;
  std::vector<int64_t> data;

  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};
} // namespace

/// Folded results stay small: shape arithmetic and index tensors.
static constexpr int64_t kMaxFoldedElements = 1 << 20;

/// True if `shape` is a tensor's (no negative dim) of at most
/// kMaxFoldedElements elements. Shapes read from a model's integers (a
/// ConstantOfShape's input, an Expand's or Reshape's target) may be neither.
static bool isFoldableShape(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > kMaxFoldedElements / d))
      return false;
    n *= d;
  }
  return true;
}

/// The dense elements of a Constant node or an initializer.
static DenseElementsAttr denseOf(Value value) {
  if (auto init = value.getDefiningOp<onnx::InitializerOp>())
    return dyn_cast<DenseElementsAttr>(init.getValue());
  if (onnx::NodeOp node = nodeOf(value, "Constant"))
    return dyn_cast_or_null<DenseElementsAttr>(node.getONNXAttr("value"));
  return nullptr;
}

static std::optional<IntTensor> intTensorOf(Value value) {
  if (onnx::NodeOp node = nodeOf(value, "Constant")) {
    if (auto i = dyn_cast_or_null<IntegerAttr>(node.getONNXAttr("value_int")))
      return IntTensor{{}, {i.getInt()}};
    if (auto is =
            dyn_cast_or_null<DenseI64ArrayAttr>(node.getONNXAttr("value_ints")))
      return IntTensor{
          {static_cast<int64_t>(is.size())},
          std::vector<int64_t>(is.asArrayRef().begin(), is.asArrayRef().end())};
  }
  ElementsAttr elements;
  if (auto init = value.getDefiningOp<onnx::InitializerOp>())
    elements = init.getValue();
  else if (onnx::NodeOp node = nodeOf(value, "Constant"))
    elements = dyn_cast_or_null<ElementsAttr>(node.getONNXAttr("value"));
  if (!elements || !elements.getShapedType().hasStaticShape() ||
      elements.getNumElements() > kMaxFoldedElements)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> ints = readInts(elements);
  if (!ints)
    return std::nullopt;
  IntTensor tensor;
  llvm::append_range(tensor.shape, elements.getShapedType().getShape());
  tensor.data.assign(ints->begin(), ints->end());
  return tensor;
}

/// Numpy broadcasting of two shapes.
static std::optional<SmallVector<int64_t>> broadcast(ArrayRef<int64_t> a,
                                                     ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

/// The element of `t` (broadcast to `shape`) at flat position `flat`.
static int64_t at(const IntTensor &t, ArrayRef<int64_t> shape, int64_t flat) {
  int64_t index = 0, stride = 1;
  size_t offset = shape.size() - t.shape.size();
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t coord = flat % shape[d];
    flat /= shape[d];
    if (d >= offset) {
      int64_t dim = t.shape[d - offset];
      index += (dim == 1 ? 0 : coord) * stride;
      stride *= dim;
    }
  }
  return index < static_cast<int64_t>(t.data.size()) ? t.data[index] : 0;
}

static std::optional<IntTensor>
elementwise(ArrayRef<IntTensor> in,
            llvm::function_ref<std::optional<int64_t>(ArrayRef<int64_t>)> f) {
  SmallVector<int64_t> shape;
  for (const IntTensor &t : in) {
    std::optional<SmallVector<int64_t>> b = broadcast(shape, t.shape);
    if (!b)
      return std::nullopt;
    shape = *b;
  }
  IntTensor out{shape, {}};
  if (!isFoldableShape(out.shape))
    return std::nullopt;
  SmallVector<int64_t> args(in.size());
  for (int64_t i = 0; i < out.size(); ++i) {
    for (auto [j, t] : llvm::enumerate(in))
      args[j] = at(t, shape, i);
    std::optional<int64_t> r = f(args);
    if (!r)
      return std::nullopt;
    out.data.push_back(*r);
  }
  return out;
}

/// ONNX Slice of an integer tensor: `in` is data, starts, ends, and
/// optionally axes and steps (negative steps walk backwards; bounds clamp).
static std::optional<IntTensor> sliceOf(ArrayRef<IntTensor> in) {
  const IntTensor &x = in[0];
  int64_t rank = x.shape.size();
  size_t count = in[1].data.size();
  if (in[2].data.size() != count ||
      (in.size() > 3 && in[3].data.size() != count) ||
      (in.size() > 4 && in[4].data.size() != count))
    return std::nullopt;
  SmallVector<SmallVector<int64_t>> picks;
  for (int64_t dim : x.shape)
    picks.push_back(llvm::to_vector(llvm::seq<int64_t>(0, dim)));
  for (size_t j = 0; j < count; ++j) {
    int64_t axis = in.size() > 3 ? in[3].data[j] : static_cast<int64_t>(j);
    int64_t step = in.size() > 4 ? in[4].data[j] : 1;
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank || step == 0)
      return std::nullopt;
    int64_t dim = x.shape[axis];
    int64_t start = in[1].data[j], end = in[2].data[j];
    if (start < 0)
      start = start < -dim ? -1 : start + dim;
    if (end < 0)
      end = end < -dim ? -1 : end + dim;
    SmallVector<int64_t> pick;
    // The bounds clamp to the axis, so `end - i` cannot overflow; `i + step`
    // could, and is taken only while it stays inside.
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      for (int64_t i = start; i < end; i += step) {
        pick.push_back(i);
        if (step >= end - i)
          break;
      }
    } else {
      start = std::clamp<int64_t>(start, -1, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      for (int64_t i = start; i > end; i += step) {
        pick.push_back(i);
        if (step <= end - i)
          break;
      }
    }
    picks[axis] = std::move(pick);
  }
  IntTensor out;
  for (const SmallVector<int64_t> &pick : picks)
    out.shape.push_back(pick.size());
  for (int64_t flat = 0; flat < out.size(); ++flat) {
    int64_t rest = flat, source = 0, stride = 1;
    for (int64_t d = rank; d-- > 0;) {
      int64_t coord = rest % out.shape[d];
      rest /= out.shape[d];
      source += picks[d][coord] * stride;
      stride *= x.shape[d];
    }
    out.data.push_back(x.data[source]);
  }
  return out;
}

/// Evaluates `node` on its integer inputs.
static std::optional<IntTensor> evaluate(onnx::NodeOp node,
                                         ArrayRef<IntTensor> in) {
  StringRef type = node.getOpType();
  auto binary = [&](auto op) -> std::optional<IntTensor> {
    if (in.size() != 2)
      return std::nullopt;
    return elementwise(in, [&](ArrayRef<int64_t> a) { return op(a[0], a[1]); });
  };
  using R = std::optional<int64_t>;
  // Arithmetic that overflows int64 is left to run: the model's own kernels
  // decide what it means.
  if (type == "Add")
    return binary([](int64_t a, int64_t b) -> R {
      int64_t r;
      return llvm::AddOverflow(a, b, r) ? R() : R(r);
    });
  if (type == "Sub")
    return binary([](int64_t a, int64_t b) -> R {
      int64_t r;
      return llvm::SubOverflow(a, b, r) ? R() : R(r);
    });
  if (type == "Mul")
    return binary([](int64_t a, int64_t b) -> R {
      int64_t r;
      return llvm::MulOverflow(a, b, r) ? R() : R(r);
    });
  if (type == "Div")
    return binary([](int64_t a, int64_t b) -> R {
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
        return R();
      return a / b;
    });
  if (type == "Mod") {
    // fmod = 0: the remainder takes the divisor's sign (Python's %); 1: the
    // dividend's (C's %).
    auto fmodAttr = dyn_cast_or_null<IntegerAttr>(node.getONNXAttr("fmod"));
    bool cStyle = fmodAttr && fmodAttr.getInt() != 0;
    return binary([cStyle](int64_t a, int64_t b) -> R {
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
        return R();
      int64_t r = a % b;
      if (!cStyle && r != 0 && ((r < 0) != (b < 0)))
        r += b;
      return r;
    });
  }
  if (type == "Equal")
    return binary([](int64_t a, int64_t b) -> R { return a == b; });
  if (type == "Less")
    return binary([](int64_t a, int64_t b) -> R { return a < b; });
  if (type == "Greater")
    return binary([](int64_t a, int64_t b) -> R { return a > b; });
  if (type == "LessOrEqual")
    return binary([](int64_t a, int64_t b) -> R { return a <= b; });
  if (type == "GreaterOrEqual")
    return binary([](int64_t a, int64_t b) -> R { return a >= b; });
  if (type == "Min")
    return binary([](int64_t a, int64_t b) -> R { return std::min(a, b); });
  if (type == "Max")
    return binary([](int64_t a, int64_t b) -> R { return std::max(a, b); });
  if (type == "Where" && in.size() == 3)
    return elementwise(
        in, [](ArrayRef<int64_t> a) -> R { return a[0] ? a[1] : a[2]; });
  if ((type == "Neg" || type == "Cast" || type == "Identity") &&
      in.size() == 1) {
    IntTensor out = in[0];
    if (type == "Neg")
      for (int64_t &x : out.data) {
        if (x == std::numeric_limits<int64_t>::min())
          return std::nullopt;
        x = -x;
      }
    return out;
  }
  if (type == "Expand" && in.size() == 2) {
    std::optional<SmallVector<int64_t>> shape =
        broadcast(in[0].shape, in[1].data);
    if (!shape)
      return std::nullopt;
    IntTensor out{*shape, {}};
    if (!isFoldableShape(out.shape))
      return std::nullopt;
    for (int64_t i = 0; i < out.size(); ++i)
      out.data.push_back(at(in[0], *shape, i));
    return out;
  }
  if ((type == "Unsqueeze" || type == "Squeeze" || type == "Reshape") &&
      !in.empty()) {
    IntTensor out = in[0];
    if (type == "Reshape") {
      if (in.size() != 2 || intAttr(node, "allowzero").value_or(0))
        return std::nullopt;
      SmallVector<int64_t> shape;
      int64_t known = 1, unknown = -1;
      for (auto [i, d] : llvm::enumerate(in[1].data)) {
        int64_t dim = d == 0 && i < in[0].shape.size() ? in[0].shape[i] : d;
        if (dim < -1 || (dim == -1 && unknown >= 0))
          return std::nullopt;
        if (dim == -1)
          unknown = i;
        else if (llvm::MulOverflow(known, dim, known))
          return std::nullopt;
        shape.push_back(dim);
      }
      if (unknown >= 0) {
        if (known == 0)
          return std::nullopt;
        shape[unknown] = in[0].size() / known;
      }
      out.shape = shape;
      if (!isFoldableShape(shape) || out.size() != in[0].size())
        return std::nullopt;
      return out;
    }
    std::optional<SmallVector<int64_t>> axes;
    if (in.size() > 1)
      axes = SmallVector<int64_t>(in[1].data.begin(), in[1].data.end());
    else if (auto attr =
                 dyn_cast_or_null<DenseI64ArrayAttr>(node.getONNXAttr("axes")))
      axes = SmallVector<int64_t>(attr.asArrayRef());
    if (type == "Unsqueeze") {
      if (!axes)
        return std::nullopt;
      int64_t rank = out.shape.size() + axes->size();
      SmallVector<int64_t> sorted;
      for (int64_t a : *axes)
        sorted.push_back(a < 0 ? a + rank : a);
      llvm::sort(sorted);
      for (int64_t a : sorted) {
        if (a < 0 || a > static_cast<int64_t>(out.shape.size()))
          return std::nullopt;
        out.shape.insert(out.shape.begin() + a, 1);
      }
      return out;
    }
    SmallVector<int64_t> shape;
    for (auto [i, d] : llvm::enumerate(out.shape)) {
      bool squeezed =
          axes ? llvm::any_of(*axes,
                              [&, i = i](int64_t a) {
                                return (a < 0 ? a + int64_t(out.shape.size())
                                              : a) == int64_t(i);
                              })
               : d == 1;
      // Squeezing an axis longer than 1 is an invalid model, not a fold.
      if (squeezed && d != 1)
        return std::nullopt;
      if (!squeezed)
        shape.push_back(d);
    }
    out.shape = shape;
    return out;
  }
  if (type == "Concat" && !in.empty()) {
    int64_t rank = in[0].shape.size();
    int64_t axis = intAttr(node, "axis").value_or(0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return std::nullopt;
    IntTensor out{in[0].shape, {}};
    out.shape[axis] = 0;
    for (const IntTensor &t : in) {
      if (static_cast<int64_t>(t.shape.size()) != rank)
        return std::nullopt;
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && t.shape[d] != in[0].shape[d])
          return std::nullopt;
      out.shape[axis] += t.shape[axis];
    }
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= in[0].shape[d];
    for (int64_t o = 0; o < outer; ++o)
      for (const IntTensor &t : in) {
        int64_t block = t.size() / std::max<int64_t>(outer, 1);
        out.data.insert(out.data.end(), t.data.begin() + o * block,
                        t.data.begin() + (o + 1) * block);
      }
    return out;
  }
  if (type == "Gather" && in.size() == 2 && in[0].shape.size() == 1) {
    IntTensor out{in[1].shape, {}};
    int64_t n = in[0].shape[0];
    for (int64_t i : in[1].data) {
      int64_t j = i < 0 ? i + n : i;
      if (j < 0 || j >= n)
        return std::nullopt;
      out.data.push_back(in[0].data[j]);
    }
    return out;
  }
  if (type == "Slice" && in.size() >= 3)
    return sliceOf(in);
  if (type == "Transpose" && in.size() == 1) {
    // F.pad's pads as TorchScript spells them: [[b0, e0], …] reversed and
    // transposed into ONNX's order.
    std::optional<SmallVector<int64_t>> perm = raise::transposePerm(node);
    int64_t rank = in[0].shape.size();
    if (!perm || static_cast<int64_t>(perm->size()) != rank)
      return std::nullopt;
    IntTensor out{{}, {}};
    for (int64_t axis : *perm) {
      if (axis < 0 || axis >= rank)
        return std::nullopt;
      out.shape.push_back(in[0].shape[axis]);
    }
    SmallVector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 1; d > 0; --d)
      strides[d - 1] = strides[d] * in[0].shape[d];
    for (int64_t flat = 0; flat < out.size(); ++flat) {
      int64_t rest = flat, source = 0;
      for (int64_t d = rank; d-- > 0;) {
        source += (rest % out.shape[d]) * strides[(*perm)[d]];
        rest /= out.shape[d];
      }
      out.data.push_back(in[0].data[source]);
    }
    return out;
  }
  if (type == "ConstantOfShape" && in.size() == 1) {
    auto fill = dyn_cast_or_null<DenseElementsAttr>(node.getONNXAttr("value"));
    if (!fill || !isa<IntegerType>(fill.getElementType()))
      return std::nullopt;
    IntTensor out{SmallVector<int64_t>(in[0].data.begin(), in[0].data.end()),
                  {}};
    if (!isFoldableShape(out.shape))
      return std::nullopt;
    out.data.assign(out.size(),
                    (*fill.getValues<APInt>().begin()).getSExtValue());
    return out;
  }
  if (type == "Range" && in.size() == 3 && in[0].data.size() == 1 &&
      in[1].data.size() == 1 && in[2].data.size() == 1 && in[2].data[0] != 0) {
    IntTensor out{{0}, {}};
    int64_t limit = in[1].data[0], delta = in[2].data[0];
    for (int64_t x = in[0].data[0]; delta > 0 ? x < limit : x > limit;) {
      out.data.push_back(x);
      if (static_cast<int64_t>(out.data.size()) > kMaxFoldedElements)
        return std::nullopt;
      // x + delta without overflow: the range ends where it would pass limit.
      if (delta > 0 ? delta >= limit - x : delta <= limit - x)
        break;
      x += delta;
    }
    out.shape[0] = out.data.size();
    return out;
  }
  return std::nullopt;
}

namespace {
/// A node of integer arithmetic whose inputs are all known -> a Constant.
struct FoldIntegerNode : OpRewritePattern<onnx::NodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::NodeOp node,
                                PatternRewriter &rewriter) const override {
    if (!node.isDefaultDomain() || node->getNumResults() != 1 ||
        node->getNumRegions() != 0 || node.getOpType() == "Constant")
      return failure();
    auto type = dyn_cast<RankedTensorType>(node->getResult(0).getType());
    Type element = type ? type.getElementType() : Type();
    SmallVector<IntTensor> inputs;
    for (Value input : node.getInputs()) {
      std::optional<IntTensor> tensor = intTensorOf(input);
      if (!tensor)
        return rewriter.notifyMatchFailure(node, "an input is not known");
      inputs.push_back(std::move(*tensor));
    }
    if (inputs.empty())
      return rewriter.notifyMatchFailure(node, "no inputs");
    if (!element) {
      DenseElementsAttr first = denseOf(node.getInputs()[0]);
      element = first ? first.getElementType() : rewriter.getI64Type();
    }
    if (!isa<IntegerType>(element))
      return rewriter.notifyMatchFailure(node, "not integer arithmetic");
    std::optional<IntTensor> result = evaluate(node, inputs);
    if (!result)
      return rewriter.notifyMatchFailure(node, "not evaluated");
    // A constant whose elements disagree with its shape would be read past
    // its end by the next fold.
    if (!isFoldableShape(result->shape) ||
        result->size() != static_cast<int64_t>(result->data.size()))
      return rewriter.notifyMatchFailure(node, "inconsistent result shape");
    replaceByConstant(node, *result, element, rewriter);
    return success();
  }

private:
  static void replaceByConstant(onnx::NodeOp node, const IntTensor &tensor,
                                Type element, PatternRewriter &rewriter) {
    auto type = RankedTensorType::get(tensor.shape, element);
    unsigned width = element.getIntOrFloatBitWidth();
    SmallVector<APInt> values;
    for (int64_t x : tensor.data)
      values.push_back(APInt(width, static_cast<uint64_t>(x),
                             /*isSigned=*/width > 1, /*implicitTrunc=*/true));
    onnx::OnnxBuilder b(rewriter, node.getLoc(), element);
    rewriter.replaceOp(node, b.constant(DenseElementsAttr::get(type, values)));
  }
};

/// Split of a known integer tensor (a shape cut into parts, as a Slice of
/// it would be) -> one Constant per part.
struct FoldIntegerSplit : OpRewritePattern<onnx::NodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::NodeOp node,
                                PatternRewriter &rewriter) const override {
    if (!node.isDefaultDomain() || node.getOpType() != "Split" ||
        node.getInputs().empty())
      return failure();
    std::optional<IntTensor> in = intTensorOf(node.getInputs()[0]);
    DenseElementsAttr dense = denseOf(node.getInputs()[0]);
    if (!in || !dense || !isa<IntegerType>(dense.getElementType()))
      return rewriter.notifyMatchFailure(node, "its input is not known");
    auto rank = static_cast<int64_t>(in->shape.size());
    int64_t axis = intAttr(node, "axis").value_or(0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return rewriter.notifyMatchFailure(node, "its axis is out of range");
    int64_t dim = in->shape[axis];
    std::optional<SmallVector<int64_t>> given;
    if (node.getInputs().size() > 1) {
      std::optional<IntTensor> split = intTensorOf(node.getInputs()[1]);
      if (!split)
        return rewriter.notifyMatchFailure(node, "its sizes are not known");
      given = SmallVector<int64_t>(split->data.begin(), split->data.end());
    }
    std::optional<SmallVector<int64_t>> sizes =
        splitSizes(node, dim, std::move(given));
    if (!sizes)
      return rewriter.notifyMatchFailure(node, "its sizes do not cut its axis");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= in->shape[d];
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= in->shape[d];
    Type element = dense.getElementType();
    unsigned width = element.getIntOrFloatBitWidth();
    onnx::OnnxBuilder b(rewriter, node.getLoc(), element);
    SmallVector<Value> results;
    int64_t offset = 0;
    for (int64_t size : *sizes) {
      SmallVector<int64_t> shape(in->shape);
      shape[axis] = size;
      SmallVector<APInt> values;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = (o * dim + offset) * inner,
                     e = (o * dim + offset + size) * inner;
             i < e; ++i)
          values.push_back(APInt(width, static_cast<uint64_t>(in->data[i]),
                                 /*isSigned=*/width > 1,
                                 /*implicitTrunc=*/true));
      results.push_back(b.constant(DenseElementsAttr::get(
          RankedTensorType::get(shape, element), values)));
      offset += size;
    }
    rewriter.replaceOp(node, results);
    return success();
  }
};

} // namespace

SmallVector<int64_t> raise::dimsBetween(ArrayRef<int64_t> dims, int64_t start,
                                        int64_t end) {
  auto rank = static_cast<int64_t>(dims.size());
  auto clamp = [&](int64_t axis) {
    return std::clamp<int64_t>(axis < 0 ? axis + rank : axis, 0, rank);
  };
  start = clamp(start);
  end = clamp(end);
  return SmallVector<int64_t>(dims.begin() + start,
                              dims.begin() + std::max(start, end));
}

/// Shape(x) of a statically shaped graph input x -> its dims (the graph
/// declares them, and onnxruntime holds inputs to them), so that the shape
/// arithmetic around it folds: `lr.chunk(3, -1)` of a traced export cuts at
/// (dim + 2) / 3. Shapes of computed values stay for ttt-raise-onnx (the
/// views that read them are normalized as they are); with `computedToo`
/// (the canonical route, which reads nodes by their static types) they fold
/// too, their types being what shape inference derived from the inputs.
/// The static type of `node`'s one input when its shape may be folded: a
/// graph input's (declared), or with `computedToo` any value's; null
/// otherwise.
static RankedTensorType foldableInputType(onnx::NodeOp node, bool computedToo) {
  if (node.getInputs().size() != 1)
    return {};
  auto type = dyn_cast<RankedTensorType>(node.getInputs()[0].getType());
  auto input = dyn_cast<BlockArgument>(node.getInputs()[0]);
  bool graphInput =
      input && isa<onnx::GraphOp>(input.getOwner()->getParentOp());
  if (!type || !type.hasStaticShape() || !(graphInput || computedToo))
    return {};
  return type;
}

struct FoldShapeOfStatic : NodePattern {
  explicit FoldShapeOfStatic(MLIRContext *context, bool computedToo = false)
      : NodePattern(context, "Shape"), computedToo(computedToo) {}
  bool computedToo;

  LogicalResult matchNode(onnx::NodeOp shape,
                          PatternRewriter &rewriter) const override {
    RankedTensorType type = foldableInputType(shape, computedToo);
    if (!type)
      return rewriter.notifyMatchFailure(shape,
                                         "not of a statically shaped input");
    SmallVector<int64_t> kept =
        dimsBetween(type.getShape(), intAttr(shape, "start").value_or(0),
                    intAttr(shape, "end").value_or(type.getRank()));
    onnx::OnnxBuilder b(rewriter, shape.getLoc(), rewriter.getI64Type());
    rewriter.replaceOp(shape, b.i64s(kept));
    return success();
  }
};

/// Cast of an integer constant to a float type -> the float constant, when
/// every element is a whole number the float type holds exactly (a length
/// cast for `torch.arange(float(T))`).
struct FoldFloatCastOfIntegers : NodePattern {
  explicit FoldFloatCastOfIntegers(MLIRContext *context)
      : NodePattern(context, "Cast") {}

  LogicalResult matchNode(onnx::NodeOp cast,
                          PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(cast->getResult(0).getType());
    auto element =
        type ? dyn_cast<FloatType>(type.getElementType()) : FloatType();
    if (!element || cast.getInputs().size() != 1 ||
        !isa<IntegerType>(getElementTypeOrSelf(cast.getInputs()[0].getType())))
      return rewriter.notifyMatchFailure(cast, "not a cast of integers to "
                                               "floats");
    std::optional<IntTensor> ints = intTensorOf(cast.getInputs()[0]);
    if (!ints || !type.hasStaticShape() ||
        type.getNumElements() != static_cast<int64_t>(ints->data.size()))
      return rewriter.notifyMatchFailure(cast, "not of an integer constant");
    int64_t exact = int64_t(1) << element.getFPMantissaWidth();
    SmallVector<APFloat> values;
    for (int64_t x : ints->data) {
      if (x > exact || x < -exact)
        return rewriter.notifyMatchFailure(cast, "a value the float type "
                                                 "rounds");
      APFloat value(static_cast<double>(x));
      bool lost = false;
      value.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &lost);
      values.push_back(value);
    }
    onnx::OnnxBuilder b(rewriter, cast.getLoc(), element);
    rewriter.replaceOp(cast, b.constant(DenseElementsAttr::get(type, values)));
    return success();
  }
};

/// Range of three scalar constants -> its elements, computed as ONNX defines
/// them (each the one before plus delta, in the element type).
struct FoldRangeOfConstants : NodePattern {
  explicit FoldRangeOfConstants(MLIRContext *context)
      : NodePattern(context, "Range") {}

  LogicalResult matchNode(onnx::NodeOp range,
                          PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(range->getResult(0).getType());
    if (!type || type.getRank() != 1 || range.getInputs().size() != 3)
      return rewriter.notifyMatchFailure(range, "not a 1-D Range");
    Type element = type.getElementType();
    onnx::OnnxBuilder b(rewriter, range.getLoc(), element);
    if (auto floatType = dyn_cast<FloatType>(element)) {
      SmallVector<double> bounds;
      for (Value input : range.getInputs()) {
        std::optional<double> value = scalarConstant(input);
        if (!value)
          return rewriter.notifyMatchFailure(range, "a bound is not known");
        bounds.push_back(*value);
      }
      double count = std::ceil((bounds[1] - bounds[0]) / bounds[2]);
      if (!std::isfinite(count) || count > kMaxFoldedElements)
        return rewriter.notifyMatchFailure(range, "too many elements");
      const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
      auto inType = [&](double x) {
        APFloat value(x);
        bool lost = false;
        value.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
        return value;
      };
      APFloat value = inType(bounds[0]), delta = inType(bounds[2]);
      SmallVector<APFloat> values;
      for (int64_t i = 0; i < static_cast<int64_t>(std::max(count, 0.0)); ++i) {
        values.push_back(value);
        value.add(delta, APFloat::rmNearestTiesToEven);
      }
      auto result =
          RankedTensorType::get({static_cast<int64_t>(values.size())}, element);
      if (failed(verifyCompatibleShape(type.getShape(), result.getShape())))
        return rewriter.notifyMatchFailure(range, "contradicts its type");
      rewriter.replaceOp(range,
                         b.constant(DenseElementsAttr::get(result, values)));
      return success();
    }
    auto intType = dyn_cast<IntegerType>(element);
    SmallVector<int64_t> bounds;
    for (Value input : range.getInputs()) {
      std::optional<IntTensor> value = intTensorOf(input);
      if (!value || value->data.size() != 1)
        return rewriter.notifyMatchFailure(range, "a bound is not known");
      bounds.push_back(value->data.front());
    }
    if (!intType || bounds[2] == 0)
      return rewriter.notifyMatchFailure(range, "not an integer Range");
    int64_t span = bounds[1] - bounds[0];
    int64_t count = std::max<int64_t>(
        0, span / bounds[2] +
               (span % bounds[2] != 0 && (span > 0) == (bounds[2] > 0)));
    if (count > kMaxFoldedElements)
      return rewriter.notifyMatchFailure(range, "too many elements");
    SmallVector<APInt> values;
    for (int64_t i = 0; i < count; ++i)
      values.push_back(APInt(intType.getWidth(),
                             static_cast<uint64_t>(bounds[0] + i * bounds[2]),
                             /*isSigned=*/true, /*implicitTrunc=*/true));
    auto result = RankedTensorType::get({count}, element);
    if (failed(verifyCompatibleShape(type.getShape(), result.getShape())))
      return rewriter.notifyMatchFailure(range, "contradicts its type");
    rewriter.replaceOp(range,
                       b.constant(DenseElementsAttr::get(result, values)));
    return success();
  }
};

/// Size(x) of a statically shaped x -> its number of elements, on the
/// same terms as FoldShapeOfStatic.
struct FoldSizeOfStatic : NodePattern {
  explicit FoldSizeOfStatic(MLIRContext *context, bool computedToo = false)
      : NodePattern(context, "Size"), computedToo(computedToo) {}
  bool computedToo;

  LogicalResult matchNode(onnx::NodeOp size,
                          PatternRewriter &rewriter) const override {
    bool constant = size.getInputs().size() == 1 &&
                    constantBytes(size.getInputs()[0]).has_value();
    RankedTensorType type = foldableInputType(size, computedToo || constant);
    auto result = dyn_cast<RankedTensorType>(size->getResult(0).getType());
    if (!type || !result || result.getRank() != 0 ||
        !result.getElementType().isInteger(64))
      return rewriter.notifyMatchFailure(size,
                                         "not of a statically shaped input");
    onnx::OnnxBuilder b(rewriter, size.getLoc(), rewriter.getI64Type());
    APInt count(64, static_cast<uint64_t>(type.getNumElements()));
    rewriter.replaceOp(size, b.constant(DenseElementsAttr::get(result, count)));
    return success();
  }
};

/// The bytes of a constant's elements, dense or a resource blob, with the
/// constant's type; nullopt for a splat or an unreadable blob.
std::optional<std::pair<ShapedType, ArrayRef<char>>>
raise::constantBytes(Value value) {
  ElementsAttr elements;
  if (auto init = value.getDefiningOp<onnx::InitializerOp>())
    elements = init.getValue();
  else if (onnx::NodeOp node = nodeOf(value, "Constant"))
    elements = dyn_cast_or_null<ElementsAttr>(node.getONNXAttr("value"));
  if (!elements)
    return std::nullopt;
  auto type = cast<ShapedType>(elements.getType());
  if (auto dense = dyn_cast<DenseElementsAttr>(elements)) {
    if (dense.isSplat())
      return std::nullopt;
    return std::make_pair(type, dense.getRawData());
  }
  if (auto blob = dyn_cast<DenseResourceElementsAttr>(elements))
    if (AsmResourceBlob *data = blob.getRawHandle().getBlob())
      return std::make_pair(type, data->getData());
  return std::nullopt;
}

std::optional<InnerTransposeView> InnerTransposeView::of(ShapedType type,
                                                         ArrayRef<char> bytes) {
  if (!type.hasStaticShape() || type.getRank() < 2 ||
      type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  InnerTransposeView view{1, shape[shape.size() - 2], shape.back(),
                          type.getElementTypeBitWidth() / 8};
  for (int64_t d : shape.drop_back(2))
    view.batch *= d;
  if (bytes.size() != static_cast<size_t>(type.getNumElements()) * view.width)
    return std::nullopt;
  return view;
}

bool raise::isInnerTransposeOf(ShapedType turnedType, ArrayRef<char> turned,
                               ShapedType type, ArrayRef<char> bytes) {
  std::optional<InnerTransposeView> view = InnerTransposeView::of(type, bytes);
  if (!view || turnedType.getElementType() != type.getElementType() ||
      !turnedType.hasStaticShape() ||
      ArrayRef<int64_t>(
          cast<ShapedType>(permutedType(type, swapInnerPerm(type.getRank())))
              .getShape()) != turnedType.getShape() ||
      turned.size() != bytes.size())
    return false;
  int64_t count = type.getNumElements();
  for (int64_t flat = 0; flat < count; ++flat)
    if (std::memcmp(&turned[flat * view->width],
                    &bytes[view->offsetOfTurned(flat)], view->width) != 0)
      return false;
  return true;
}

llvm::hash_code raise::innerContentHash(ShapedType type, ArrayRef<char> bytes,
                                        bool turned) {
  std::optional<InnerTransposeView> view = InnerTransposeView::of(type, bytes);
  if (!view)
    return llvm::hash_combine_range(bytes.begin(), bytes.end());
  int64_t count = type.getNumElements();
  constexpr int64_t kWhole = 1 << 16, kSampled = 1 << 12;
  int64_t samples = count <= kWhole ? count : kSampled;
  llvm::hash_code hash = llvm::hash_value(samples);
  for (int64_t s = 0; s < samples; ++s) {
    // Evenly spread flat positions of the (turned) result.
    int64_t flat = samples == count ? s : s * (count / samples);
    size_t offset = turned ? view->offsetOfTurned(flat)
                           : static_cast<size_t>(flat) * view->width;
    hash = llvm::hash_combine(
        hash, llvm::hash_combine_range(bytes.begin() + offset,
                                       bytes.begin() + offset + view->width));
  }
  return hash;
}

std::optional<std::vector<char>> raise::permutedBytes(ShapedType type,
                                                      ArrayRef<char> bytes,
                                                      ArrayRef<int64_t> perm) {
  if (!type.hasStaticShape() || type.getElementTypeBitWidth() % 8 != 0 ||
      type.getRank() != static_cast<int64_t>(perm.size()))
    return std::nullopt;
  ArrayRef<int64_t> from = type.getShape();
  int64_t rank = from.size(), count = type.getNumElements();
  size_t width = type.getElementTypeBitWidth() / 8;
  if (bytes.size() != count * width)
    return std::nullopt;
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 1; d > 0; --d)
    strides[d - 1] = strides[d] * from[d];
  std::vector<char> data(count * width);
  SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t flat = 0;
    for (int64_t d = 0; d < rank; ++d)
      flat += index[d] * strides[perm[d]];
    std::memcpy(&data[i * width], &bytes[flat * width], width);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < from[perm[d]])
        break;
      index[d] = 0;
    }
  }
  return data;
}

/// The ONNX name of `value`: an initializer's, or a node output's.
static std::string describeName(Value value) {
  if (auto init = value.getDefiningOp<onnx::InitializerOp>())
    return init.getName().str();
  if (auto node = value.getDefiningOp<onnx::NodeOp>())
    return node.getOutputName(cast<OpResult>(value).getResultNumber()).str();
  return "";
}

namespace {
/// Transpose of a constant tensor -> the transposed constant.
struct FoldTransposeOfConstant : NodePattern {
  explicit FoldTransposeOfConstant(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    Value input = transpose.getInputs()[0];
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    DenseElementsAttr dense = denseOf(input);
    auto bytes = constantBytes(input);
    auto sourceType = dense   ? cast<ShapedType>(dense.getType())
                      : bytes ? bytes->first
                              : ShapedType();
    if (!perm || !sourceType || !sourceType.hasStaticShape() ||
        sourceType.getNumElements() > kMaxFoldedElements ||
        sourceType.getRank() != static_cast<int64_t>(perm->size()) ||
        sourceType.getElementTypeBitWidth() % 8 != 0)
      return rewriter.notifyMatchFailure(transpose, "not of a constant");
    auto type = cast<RankedTensorType>(permutedType(sourceType, *perm));
    DenseElementsAttr result;
    if (dense && dense.isSplat()) {
      result = dense.reshape(type);
    } else if (bytes) {
      std::optional<std::vector<char>> data =
          permutedBytes(sourceType, bytes->second, *perm);
      if (!data)
        return rewriter.notifyMatchFailure(transpose, "unexpected data size");
      result = DenseElementsAttr::getFromRawBuffer(type, *data);
    } else {
      return rewriter.notifyMatchFailure(transpose, "unreadable constant");
    }
    onnx::OnnxBuilder b(rewriter, transpose.getLoc(), type.getElementType());
    Value folded = b.constant(result);
    // Remarks name the folded weight after the one it turns.
    if (std::string name = describeName(input); !name.empty())
      folded.getDefiningOp()->setAttr(kTurnedFromAttr,
                                      rewriter.getStringAttr(name));
    rewriter.replaceOp(transpose, folded);
    return success();
  }
};

/// Gather of one constant index of a constant tensor -> the constant slab
/// (the dynamo exporter folds `token_eta` broadcast over all mini-batches
/// into one initializer, and each mini-batch takes its row: equal rows are
/// then one constant).
struct FoldGatherOfConstant : NodePattern {
  explicit FoldGatherOfConstant(MLIRContext *context)
      : NodePattern(context, "Gather") {}

  LogicalResult matchNode(onnx::NodeOp gather,
                          PatternRewriter &rewriter) const override {
    if (gather.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(gather, "not two inputs");
    Value input = gather.getInputs()[0];
    std::optional<SmallVector<int64_t>> index =
        intConstant(gather.getInputs()[1]);
    auto indexType = dyn_cast<ShapedType>(gather.getInputs()[1].getType());
    DenseElementsAttr dense = denseOf(input);
    auto bytes = constantBytes(input);
    auto sourceType = dense   ? cast<ShapedType>(dense.getType())
                      : bytes ? bytes->first
                              : ShapedType();
    if (!index || index->size() != 1 || !indexType || !indexType.hasRank() ||
        indexType.getRank() != 0 || !sourceType ||
        !sourceType.hasStaticShape() || sourceType.getRank() == 0 ||
        sourceType.getNumElements() > kMaxFoldedElements ||
        sourceType.getElementTypeBitWidth() % 8 != 0)
      return rewriter.notifyMatchFailure(gather, "not one index of a constant");
    int64_t rank = sourceType.getRank();
    int64_t axis = intAttr(gather, "axis").value_or(0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return rewriter.notifyMatchFailure(gather, "axis out of range");
    int64_t count = sourceType.getDimSize(axis), i = (*index)[0];
    if (i < 0)
      i += count;
    if (i < 0 || i >= count)
      return rewriter.notifyMatchFailure(gather, "index out of range");
    SmallVector<int64_t> shape(sourceType.getShape());
    shape.erase(shape.begin() + axis);
    auto type = RankedTensorType::get(shape, sourceType.getElementType());
    DenseElementsAttr result;
    if (dense && dense.isSplat()) {
      result = dense.resizeSplat(type);
    } else if (bytes) {
      // Row-major: `outer` blocks of `count * inner` elements; row i of
      // each block is kept.
      int64_t width = sourceType.getElementTypeBitWidth() / 8, outer = 1,
              inner = width;
      for (int64_t d = 0; d < rank; ++d)
        if (d < axis)
          outer *= sourceType.getDimSize(d);
        else if (d > axis)
          inner *= sourceType.getDimSize(d);
      if (static_cast<int64_t>(bytes->second.size()) != outer * count * inner)
        return rewriter.notifyMatchFailure(gather, "unexpected data size");
      std::vector<char> data;
      data.reserve(outer * inner);
      for (int64_t o = 0; o < outer; ++o) {
        const char *row = bytes->second.data() + (o * count + i) * inner;
        data.insert(data.end(), row, row + inner);
      }
      result = DenseElementsAttr::getFromRawBuffer(type, data);
    } else {
      return rewriter.notifyMatchFailure(gather, "unreadable constant");
    }
    onnx::OnnxBuilder b(rewriter, gather.getLoc(), type.getElementType());
    rewriter.replaceOp(gather, b.constant(result));
    return success();
  }
};

/// Integer `Add(x, 0)` -> x, where x already has the result's type: the
/// scripted export of `for s in range(0, T, C)` starts chunk i at `0 + i * C`.
struct AddOfIntegerZero : NodePattern {
  explicit AddOfIntegerZero(MLIRContext *context)
      : NodePattern(context, "Add") {}

  LogicalResult matchNode(onnx::NodeOp add,
                          PatternRewriter &rewriter) const override {
    Type type = add->getResult(0).getType();
    auto element = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
    if (!element || add.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(add, "not an integer Add");
    for (unsigned i = 0; i < 2; ++i) {
      Value x = add.getInputs()[1 - i];
      std::optional<IntTensor> zero = intTensorOf(add.getInputs()[i]);
      if (x.getType() == type && zero && zero->data.size() == 1 &&
          zero->data.front() == 0) {
        rewriter.replaceOp(add, x);
        return success();
      }
    }
    return rewriter.notifyMatchFailure(add, "no zero added to a value of "
                                            "the result's type");
  }
};

/// `Cast(Ceil(c))` (or Floor, or c itself) to an integer type, c one float
/// constant -> the integer constant: a traced export of
/// `for s in range(0, T, C)` with T known folds the trip count to
/// `Cast(Ceil(T / C))` of a float constant.
struct FoldIntegerCastOfConstant : NodePattern {
  explicit FoldIntegerCastOfConstant(MLIRContext *context)
      : NodePattern(context, "Cast") {}

  LogicalResult matchNode(onnx::NodeOp cast,
                          PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(cast->getResult(0).getType());
    auto element =
        type ? dyn_cast<IntegerType>(type.getElementType()) : IntegerType();
    if (!element || element.getWidth() < 2 || type.getNumElements() != 1 ||
        cast.getInputs().size() != 1)
      return rewriter.notifyMatchFailure(cast, "not a cast to one integer");
    Value input = cast.getInputs()[0];
    onnx::NodeOp ceil = nodeOf(input, "Ceil");
    onnx::NodeOp floor = nodeOf(input, "Floor");
    if (onnx::NodeOp rounding = ceil ? ceil : floor)
      input = rounding.getInputs()[0];
    std::optional<double> value =
        isa<FloatType>(getElementTypeOrSelf(input.getType()))
            ? scalarConstant(input)
            : std::nullopt;
    if (!value || !std::isfinite(*value) || std::abs(*value) > 0x1p52)
      return rewriter.notifyMatchFailure(cast, "not of one float constant");
    double rounded = ceil    ? std::ceil(*value)
                     : floor ? std::floor(*value)
                             : *value;
    // Only a whole number: ONNX leaves the rounding of a Cast open.
    if (rounded != std::trunc(rounded))
      return rewriter.notifyMatchFailure(cast, "not a whole number");
    APInt number(element.getWidth(), static_cast<uint64_t>(rounded),
                 /*isSigned=*/true, /*implicitTrunc=*/true);
    onnx::OnnxBuilder b(rewriter, cast.getLoc(), element);
    rewriter.replaceOp(cast, b.constant(DenseElementsAttr::get(type, number)));
    return success();
  }
};
} // namespace

void raise::populateConstantNormalizations(RewritePatternSet &patterns) {
  patterns.add<AddOfIntegerZero, FoldIntegerCastOfConstant, FoldIntegerNode,
               FoldShapeOfStatic, FoldSizeOfStatic, FoldTransposeOfConstant,
               FoldGatherOfConstant>(patterns.getContext());
}

void raise::populateShapeArithmeticFolding(RewritePatternSet &patterns) {
  patterns.add<AddOfIntegerZero, FoldIntegerCastOfConstant, FoldIntegerNode,
               FoldGatherOfConstant, FoldIntegerSplit>(patterns.getContext());
  patterns.add<FoldShapeOfStatic, FoldSizeOfStatic>(patterns.getContext(),
                                                    /*computedToo=*/true);
  patterns.add<FoldFloatCastOfIntegers, FoldRangeOfConstants>(
      patterns.getContext());
}
