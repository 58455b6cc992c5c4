//===- DepthwiseConvForm.cpp - ViT^3's conv branch as ttt.dwconv_layer ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads ViT^3's depth-wise convolution branch: one full-batch step on the
// kernel of a depth-wise convolution, then the queries convolved with the
// stepped kernel. With the batch folded into the channels (one group per
// sample and channel, as the research code writes it):
//
//   G  = Conv(Pad(k, p), e, group = B*C)      e = c * v   (c = -s / (h w))
//   w' = w0 + a * clip(G)                     clip(G) = G / (|G|_F + 1)
//   o  = Conv(q, w', pads = p, group = B*C)
//
// G is the gradient of `-(s / (h w)) sum <conv(k; w), v>` by the kernel (ONNX
// Conv is a cross-correlation, so the same taps), which is ttt.dwconv_layer
// with the `dot` loss, scale s and mean reduction.
//
//===----------------------------------------------------------------------===//

#include "LayerMatcher.h"
#include "Normalize.h"

#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

namespace {

std::optional<SmallVector<int64_t>> intsAttr(onnx::NodeOp node,
                                             StringRef name) {
  if (auto ints = dyn_cast_or_null<DenseI64ArrayAttr>(node.getONNXAttr(name)))
    return SmallVector<int64_t>(ints.asArrayRef());
  return std::nullopt;
}

/// A 2-d Conv with unit strides and dilations, one input channel per group:
/// returns its square padding (0 when it has none), or nullopt.
std::optional<int64_t> depthwisePadding(onnx::NodeOp conv) {
  if (!conv || conv.getInputs().size() < 2 ||
      (conv.getInputs().size() > 2 &&
       !isa<NoneType>(conv.getInputs()[2].getType())))
    return std::nullopt;
  auto input = dyn_cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto kernel = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
  if (!input || !kernel || input.getRank() != 4 || kernel.getRank() != 4 ||
      !input.hasStaticShape() || !kernel.hasStaticShape())
    return std::nullopt;
  int64_t group = intAttr(conv, "group").value_or(1);
  if (group != input.getDimSize(1) || kernel.getDimSize(0) != group ||
      kernel.getDimSize(1) != 1)
    return std::nullopt;
  for (StringRef unit : {"strides", "dilations"})
    if (std::optional<SmallVector<int64_t>> values = intsAttr(conv, unit))
      if (llvm::any_of(*values, [](int64_t x) { return x != 1; }))
        return std::nullopt;
  if (auto autoPad = dyn_cast_or_null<StringAttr>(conv.getONNXAttr("auto_pad")))
    if (autoPad.getValue() != "NOTSET")
      return std::nullopt;
  std::optional<SmallVector<int64_t>> pads = intsAttr(conv, "pads");
  if (!pads)
    return 0;
  if (pads->size() != 4 ||
      llvm::any_of(*pads, [&](int64_t x) { return x != pads->front(); }))
    return std::nullopt;
  return pads->front();
}

/// `Pad(x, [0, 0, p, p, 0, 0, p, p])` with zeros: returns x and p.
std::optional<std::pair<Value, int64_t>> zeroPadded(Value value) {
  onnx::NodeOp pad = nodeOf(skipLayout(value), "Pad");
  if (!pad || pad.getInputs().size() < 2)
    return std::nullopt;
  auto mode = dyn_cast_or_null<StringAttr>(pad.getONNXAttr("mode"));
  if (mode && mode.getValue() != "constant")
    return std::nullopt;
  if (pad.getInputs().size() > 2 &&
      !isa<NoneType>(pad.getInputs()[2].getType()) &&
      scalarConstant(pad.getInputs()[2]) != 0.0)
    return std::nullopt;
  if (pad.getInputs().size() > 3 &&
      !isa<NoneType>(pad.getInputs()[3].getType()))
    return std::nullopt; // axes
  std::optional<SmallVector<int64_t>> pads = intConstant(pad.getInputs()[1]);
  if (!pads || pads->size() != 8)
    return std::nullopt;
  int64_t p = (*pads)[2];
  SmallVector<int64_t> expected{0, 0, p, p, 0, 0, p, p};
  if (*pads != expected)
    return std::nullopt;
  return std::make_pair(pad.getInputs()[0], p);
}

/// `G / (|G|_F + 1)` over the two kernel axes: returns G.
Value frobeniusClipped(Value value) {
  std::optional<std::pair<Value, Value>> quotient;
  value = skipLayout(value);
  if (onnx::NodeOp div = nodeOf(value, "Div"))
    quotient = std::make_pair(div.getInputs()[0], div.getInputs()[1]);
  if (!quotient)
    return nullptr;
  Value g = quotient->first;
  Value norm;
  bool plusOne = matchCommutative(skipLayout(quotient->second), "Add",
                                  [&](Value n, Value one) {
                                    norm = n;
                                    return scalarConstant(one) == 1.0;
                                  });
  onnx::NodeOp sqrt = plusOne ? nodeOf(skipLayout(norm), "Sqrt") : nullptr;
  onnx::NodeOp sum =
      sqrt ? nodeOf(skipLayout(sqrt.getInputs()[0]), "ReduceSum") : nullptr;
  if (!sum || intAttr(sum, "keepdims").value_or(1) != 1)
    return nullptr;
  std::optional<SmallVector<int64_t>> axes = reduceAxes(sum);
  SmallVector<int64_t> inner{-2, -1}, innerPositive{2, 3};
  if (!axes || (*axes != inner && *axes != innerPositive))
    return nullptr;
  onnx::NodeOp square = nodeOf(skipLayout(sum.getInputs()[0]), "Mul");
  onnx::NodeOp pow = nodeOf(skipLayout(sum.getInputs()[0]), "Pow");
  bool squares =
      (square && skipLayout(square.getInputs()[0]) == skipLayout(g) &&
       skipLayout(square.getInputs()[1]) == skipLayout(g)) ||
      (pow && skipLayout(pow.getInputs()[0]) == skipLayout(g) &&
       scalarConstant(pow.getInputs()[1]) == 2.0);
  return squares ? g : Value();
}

/// The run-time extents a value is the product of (`Shape(x)[d]`, cast,
/// multiplied), or false.
bool extentProduct(Value value, SmallVectorImpl<ShapeDim> &dims) {
  value = skipLayout(value);
  if (onnx::NodeOp cast = nodeOf(value, "Cast"))
    return extentProduct(cast.getInputs()[0], dims);
  if (std::optional<ShapeDim> dim = shapeDim(value)) {
    dims.push_back(*dim);
    return true;
  }
  onnx::NodeOp mul = nodeOf(value, "Mul");
  return mul && extentProduct(mul.getInputs()[0], dims) &&
         extentProduct(mul.getInputs()[1], dims);
}

/// `c * x / (e_1 ... e_n)`, however the constant factors are spelled and with
/// the divisors `e_i` run-time extents of tensors (a mean over positions
/// whose count is read from a shape).
struct Scaled {
  Value x;
  double factor = 1.0;
  SmallVector<ShapeDim> divisors;
};

Scaled scaled(Value value) {
  Scaled result;
  while (true) {
    value = skipLayout(value);
    if (onnx::NodeOp neg = nodeOf(value, "Neg")) {
      result.factor = -result.factor;
      value = neg.getInputs()[0];
      continue;
    }
    if (onnx::NodeOp div = nodeOf(value, "Div")) {
      std::optional<double> d = scalarConstant(div.getInputs()[1]);
      if (d && *d != 0.0) {
        result.factor /= *d;
        value = div.getInputs()[0];
        continue;
      }
      SmallVector<ShapeDim> dims;
      if (!d && extentProduct(div.getInputs()[1], dims)) {
        llvm::append_range(result.divisors, dims);
        value = div.getInputs()[0];
        continue;
      }
    }
    bool peeled = matchCommutative(value, "Mul", [&](Value c, Value x) {
      std::optional<double> s = scalarConstant(c);
      if (!s)
        return false;
      result.factor *= *s;
      value = x;
      return true;
    });
    if (!peeled) {
      result.x = value;
      return result;
    }
  }
}

/// True if `a` and `b` have the same shape for every input the model
/// accepts.
bool sameShape(Value a, Value b) {
  auto type = dyn_cast<RankedTensorType>(a.getType());
  if (!type || a.getType() != b.getType())
    return false;
  for (int64_t axis = 0, e = type.getRank(); axis < e; ++axis)
    if (!sameExtent(a, b, axis))
      return false;
  return true;
}

/// True if `type` is `[B, C, h, w]` with batch and channels merged into one
/// axis of B*C groups (`[1, B*C, h, w]` or `[B*C, 1, h, w]`).
bool foldsBatchIntoChannels(Type type, ArrayRef<int64_t> bchw) {
  auto to = dyn_cast<RankedTensorType>(type);
  if (!to || !to.hasStaticShape() || to.getRank() != 4 || bchw.size() != 4)
    return false;
  int64_t groups = bchw[0] * bchw[1];
  bool merged = (to.getDimSize(0) == 1 && to.getDimSize(1) == groups) ||
                (to.getDimSize(0) == groups && to.getDimSize(1) == 1);
  return merged && to.getDimSize(2) == bchw[2] && to.getDimSize(3) == bchw[3];
}

/// The `[B, C, h, w]` of an image (a static channel count; the batch and
/// the image size may be known at run time only), or nothing.
std::optional<SmallVector<int64_t>> imageShape(Value x) {
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type || type.getRank() != 4 || type.isDynamicDim(1))
    return std::nullopt;
  return SmallVector<int64_t>(type.getShape());
}

/// True if two lists of divisors are the same extents of the same tensors.
bool sameDivisors(ArrayRef<ShapeDim> a, ArrayRef<ShapeDim> b) {
  return a.size() == b.size() && llvm::all_of(llvm::zip(a, b), [](auto pair) {
           auto [x, y] = pair;
           return x.tensor == y.tensor && x.axis == y.axis;
         });
}

/// A window of a zero-padded image at tap (a, b): Slices of its two spatial
/// axes, `[a, a + h)` and `[b, b + w)`, of `Pad(x, p)`.
struct Tap {
  Value image;
  int64_t pad = 0, a = 0, b = 0;
};

/// A Slice of one axis with unit steps, a constant start and an end that is
/// a constant or a run-time extent plus a constant.
struct Cut {
  int64_t axis = 0, start = 0;
  std::optional<int64_t> end;
  std::optional<ShapeDim> extent;
  int64_t offset = 0;
};

std::optional<Cut> cutOf(onnx::NodeOp slice) {
  if (auto cut = singleAxisCut(slice)) {
    auto [axis, start, end] = *cut;
    return Cut{axis, start, end, std::nullopt, 0};
  }
  auto inputs = slice.getInputs();
  std::optional<int64_t> rank = rankOf(inputs[0]);
  if (inputs.size() < 4 || inputs.size() > 5 || !rank)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> starts = intConstant(inputs[1]);
  std::optional<SmallVector<int64_t>> axes = intConstant(inputs[3]);
  if (!starts || !axes || starts->size() != 1 || axes->size() != 1)
    return std::nullopt;
  if (inputs.size() == 5 && !isa<NoneType>(inputs[4].getType()) &&
      intConstant(inputs[4]) != SmallVector<int64_t>{1})
    return std::nullopt;
  Cut cut;
  cut.axis = (*axes)[0] < 0 ? (*axes)[0] + *rank : (*axes)[0];
  cut.start = (*starts)[0];
  Value end = skipLayout(inputs[2]);
  cut.extent = shapeDim(end);
  if (!cut.extent)
    matchCommutative(end, "Add", [&](Value dim, Value offset) {
      std::optional<SmallVector<int64_t>> c = intConstant(offset);
      cut.extent = shapeDim(dim);
      if (!cut.extent || !c || c->size() != 1)
        return false;
      cut.offset = c->front();
      return true;
    });
  if (!cut.extent || cut.axis < 0 || cut.axis >= *rank)
    return std::nullopt;
  return cut;
}

/// True if `cut` takes as many entries as `image` has on its axis, from the
/// start: a constant end with a static size, or the end `start + extent`
/// of a tensor of the image's extent.
bool spans(const Cut &cut, Value image) {
  auto type = cast<RankedTensorType>(image.getType());
  if (cut.end)
    return !type.isDynamicDim(cut.axis) &&
           *cut.end - cut.start == type.getDimSize(cut.axis);
  return cut.offset == cut.start && cut.extent->axis == cut.axis &&
         sameExtent(cut.extent->tensor, image, cut.axis);
}

std::optional<Tap> tapOf(Value value) {
  SmallVector<Cut> cuts;
  Value at = skipLayout(value);
  while (onnx::NodeOp slice = nodeOf(at, "Slice")) {
    std::optional<Cut> cut = cutOf(slice);
    if (!cut)
      return std::nullopt;
    cuts.push_back(*cut);
    at = skipLayout(slice.getInputs()[0]);
  }
  std::optional<std::pair<Value, int64_t>> padded = zeroPadded(at);
  if (!padded || !imageShape(padded->first))
    return std::nullopt;
  Tap tap;
  // The image itself, unless the nodes in front of it change its shape.
  Value source = padded->first;
  tap.image = skipLayout(source).getType() == source.getType()
                  ? skipLayout(source)
                  : source;
  tap.pad = padded->second;
  std::optional<int64_t> rows, cols;
  for (const Cut &cut : cuts) {
    // A window inside the padding: 0 <= a <= 2p, so no end is clamped.
    if (cut.start < 0 || cut.start > 2 * tap.pad || !spans(cut, source))
      return std::nullopt;
    if (cut.axis == 2 && !rows)
      rows = cut.start;
    else if (cut.axis == 3 && !cols)
      cols = cut.start;
    else
      return std::nullopt;
  }
  if (!rows || !cols)
    return std::nullopt;
  tap.a = *rows;
  tap.b = *cols;
  return tap;
}

/// The terms of a sum of Adds.
void addends(Value value, SmallVectorImpl<Value> &terms) {
  value = skipLayout(value);
  if (onnx::NodeOp add = nodeOf(value, "Add")) {
    addends(add.getInputs()[0], terms);
    addends(add.getInputs()[1], terms);
    return;
  }
  terms.push_back(value);
}

/// Entry (a, b) of a kernel `[.., kh, kw]`: one-wide Slices of its last two
/// axes; returns the kernel.
Value kernelEntry(Value value, int64_t &a, int64_t &b) {
  std::optional<int64_t> row, col;
  Value at = skipLayout(value);
  while (onnx::NodeOp slice = nodeOf(at, "Slice")) {
    auto cut = singleAxisCut(slice);
    if (!cut || std::get<2>(*cut) != std::get<1>(*cut) + 1)
      return nullptr;
    auto [axis, start, end] = *cut;
    if (axis == 2 && !row)
      row = start;
    else if (axis == 3 && !col)
      col = start;
    else
      return nullptr;
    at = skipLayout(slice.getInputs()[0]);
  }
  if (!row || !col)
    return nullptr;
  a = *row;
  b = *col;
  return at;
}

class ConvReader {
public:
  ConvReader(const FoundLayer &layer, std::string &why)
      : layer(layer), why(why) {}

  FailureOr<DWConvConfig> read();

private:
  LogicalResult fail(const Twine &reason) {
    why = reason.str();
    return failure();
  }
  /// The output as taps: `sum_{a,b} w'[.., a, b] * Pad(q)[a:a+h, b:b+w]`.
  LogicalResult readShiftedOutput(Value output);
  /// `w' = w0 -/+ a clip(G)`: fills the kernel, clip, sign and step; returns
  /// G.
  Value readStep(Value stepped, int64_t kh, int64_t kw);
  /// G = Conv(Pad(k), c v) with the batch in the groups, or the taps
  /// `sum_{y,x} c v * Pad(k)[a:a+h, b:b+w]` stacked as (a, b).
  LogicalResult readGradient(Value gradient);
  LogicalResult readTapGradient(Value gradient);
  LogicalResult finish();

  const FoundLayer &layer;
  std::string &why;
  DWConvConfig config;
  SmallVector<int64_t> image;
  int64_t padding = 0, kh = 0, kw = 0;
  double step = 0.0;
  /// The values as the kernel's step scales them.
  Scaled values;
};

Value ConvReader::readStep(Value stepped, int64_t kh, int64_t kw) {
  // w' = w0 - a clip(G) or w0 + a clip(G), the start kernel [C, 1, kh, kw]
  // (ViT^3's layout) or any other layout of it.
  Value next = skipLayout(stepped), startKernel, change;
  auto isStartKernel = [](Value value) {
    Value base = skipLayout(value);
    return base.getDefiningOp<onnx::InitializerOp>() ||
           nodeOf(base, "Constant") ||
           (isa<BlockArgument>(base) &&
            isa<onnx::GraphOp>(base.getParentRegion()->getParentOp()));
  };
  // The step size is a constant: a change divided by the image size is not
  // this form.
  if (onnx::NodeOp sub = nodeOf(next, "Sub")) {
    Scaled scaledChange = scaled(sub.getInputs()[1]);
    if (scaledChange.divisors.empty()) {
      startKernel = sub.getInputs()[0];
      change = scaledChange.x;
      step = -scaledChange.factor;
    }
  } else {
    matchCommutative(next, "Add", [&](Value a, Value b) {
      Scaled scaledChange = scaled(b);
      if (!isStartKernel(a) || !scaledChange.divisors.empty())
        return false;
      startKernel = a;
      change = scaledChange.x;
      step = scaledChange.factor;
      return true;
    });
  }
  if (!startKernel || !isStartKernel(startKernel)) {
    (void)fail("its kernel is not a start kernel plus a step");
    return nullptr;
  }
  auto startType =
      dyn_cast<RankedTensorType>(skipLayout(startKernel).getType());
  if (!startType || !startType.hasStaticShape() ||
      startType.getNumElements() != image[1] * kh * kw) {
    (void)fail("its start kernel is not one kh x kw kernel per channel");
    return nullptr;
  }
  config.kernel = skipLayout(startKernel);
  Value gradient = frobeniusClipped(change);
  config.clip = static_cast<bool>(gradient);
  return gradient ? gradient : change;
}

LogicalResult ConvReader::readGradient(Value gradient) {
  onnx::NodeOp correlate = nodeOf(skipLayout(gradient), "Conv");
  if (!correlate)
    return readTapGradient(gradient);
  if (depthwisePadding(correlate) != 0)
    return fail("its kernel's step is not a depth-wise correlation of the "
                "padded keys with the values");
  std::optional<std::pair<Value, int64_t>> padded =
      zeroPadded(correlate.getInputs()[0]);
  SmallVector<int64_t> paddedImage(image);
  paddedImage[2] += 2 * padding;
  paddedImage[3] += 2 * padding;
  if (!padded || padded->second != padding ||
      !foldsBatchIntoChannels(correlate.getInputs()[0].getType(), paddedImage))
    return fail("its kernel's step does not correlate the keys padded as "
                "the output convolution pads the queries");
  config.k = skipLayout(padded->first);
  values = scaled(correlate.getInputs()[1]);
  config.v = values.x;
  if (!foldsBatchIntoChannels(correlate.getInputs()[1].getType(), image))
    return fail("its kernel's step does not correlate with the values "
                "[B, C, h, w]");
  return success();
}

LogicalResult ConvReader::readTapGradient(Value gradient) {
  // [B, C, kh, kw] from the kh * kw taps stacked on the last axis, (a, b)
  // at a * kw + b.
  onnx::NodeOp stack = nodeOf(skipLayout(gradient), "Concat");
  if (!stack || stack.getInputs().size() != static_cast<size_t>(kh * kw))
    return fail("its kernel's step is neither a correlation nor its taps "
                "stacked");
  for (int64_t index = 0, e = kh * kw; index < e; ++index) {
    Value entry = stack.getInputs()[index];
    onnx::NodeOp sum = nodeOf(skipLayout(entry), "ReduceSum");
    std::optional<SmallVector<int64_t>> axes =
        sum ? reduceAxes(sum) : std::nullopt;
    SmallVector<int64_t> spatial{-2, -1}, positive{2, 3};
    if (!axes || (*axes != spatial && *axes != positive))
      return fail("its kernel's step is not a sum over the positions per "
                  "tap");
    bool read = matchCommutative(
        skipLayout(sum.getInputs()[0]), "Mul", [&](Value e, Value window) {
          std::optional<Tap> tap = tapOf(window);
          if (!tap || tap->pad != padding || tap->a * kw + tap->b != index)
            return false;
          Scaled tapValues = scaled(e);
          if (index == 0) {
            config.k = tap->image;
            config.v = tapValues.x;
            values = tapValues;
          }
          return tap->image == config.k && tapValues.x == config.v &&
                 tapValues.factor == values.factor &&
                 sameDivisors(tapValues.divisors, values.divisors);
        });
    if (!read)
      return fail("tap " + Twine(index) +
                  " of its kernel's step is not the "
                  "values times the padded keys at that tap");
  }
  return success();
}

LogicalResult ConvReader::readShiftedOutput(Value output) {
  SmallVector<Value> terms;
  addends(output, terms);
  kh = kw = 3;
  for (int64_t size : {3, 5, 7})
    if (static_cast<int64_t>(terms.size()) == size * size)
      kh = kw = size;
  if (static_cast<int64_t>(terms.size()) != kh * kw)
    return fail("its output is neither a convolution nor a sum of shifted "
                "products with a square kernel's entries");
  padding = (kh - 1) / 2;
  SmallVector<bool> seen(kh * kw, false);
  Value stepped;
  for (Value term : terms) {
    bool read = matchCommutative(term, "Mul", [&](Value entry, Value window) {
      int64_t a = -1, b = -1;
      Value kernel = kernelEntry(entry, a, b);
      Value q = skipLayout(window);
      if (!kernel || (stepped && kernel != stepped) || a < 0 || b < 0 ||
          a >= kh || b >= kw)
        return false;
      if (image.empty()) {
        // The queries' shape, from the padded tensor the window reads.
        Value base = q;
        while (onnx::NodeOp slice = nodeOf(base, "Slice"))
          base = skipLayout(slice.getInputs()[0]);
        std::optional<std::pair<Value, int64_t>> padded = zeroPadded(base);
        std::optional<SmallVector<int64_t>> shape =
            padded ? imageShape(padded->first) : std::nullopt;
        if (!shape)
          return false;
        image = *shape;
      }
      std::optional<Tap> tap = tapOf(window);
      if (!tap || tap->a != a || tap->b != b || tap->pad != padding ||
          seen[a * kw + b] || (config.q && tap->image != config.q))
        return false;
      seen[a * kw + b] = true;
      config.q = tap->image;
      stepped = kernel;
      return true;
    });
    if (!read)
      return fail("a term of its output is not a kernel entry times the "
                  "padded queries at that tap");
  }
  Value gradient = readStep(stepped, kh, kw);
  if (!gradient)
    return failure();
  return readGradient(gradient);
}

FailureOr<DWConvConfig> ConvReader::read() {
  Value output = skipLayout(layer.steps.front().output);
  onnx::NodeOp apply = nodeOf(output, "Conv");
  if (!apply) {
    if (failed(readShiftedOutput(output)) || failed(finish()))
      return failure();
    return config;
  }
  std::optional<int64_t> pads = depthwisePadding(apply);
  if (!pads)
    return fail("its output convolution is not depth-wise (one channel per "
                "group, unit strides and dilations, equal padding)");
  padding = *pads;
  Value stepped = apply.getInputs()[1];
  auto kernelType = cast<RankedTensorType>(stepped.getType());
  kh = kernelType.getDimSize(2);
  kw = kernelType.getDimSize(3);
  if (kh != kw || kh % 2 != 1 || padding != (kh - 1) / 2)
    return fail("its output convolution does not keep the size ('same' "
                "padding of an odd, square kernel)");
  // The queries: [B, C, h, w] with the batch folded into the groups.
  Value folded = apply.getInputs()[0];
  config.q = skipLayout(folded);
  std::optional<SmallVector<int64_t>> shape = imageShape(config.q);
  if (!shape || !foldsBatchIntoChannels(folded.getType(), *shape))
    return fail("its output convolution does not read the queries [B, C, "
                "h, w] with one group per sample and channel");
  image = *shape;
  Value gradient = readStep(stepped, kh, kw);
  if (!gradient || failed(readGradient(gradient)) || failed(finish()))
    return failure();
  return config;
}

LogicalResult ConvReader::finish() {
  for (Value x : {config.k, config.v})
    if (!sameShape(x, config.q))
      return fail("its queries, keys and values differ in shape");
  // G = c * sum v kpad is the gradient of the dot loss with scale -c * h * w
  // and the mean over the positions; c may divide by h * w read from the
  // shape of the image at run time, which is that mean.
  double scale = -values.factor;
  if (values.divisors.empty()) {
    if (ShapedType::isDynamic(image[2]) || ShapedType::isDynamic(image[3]))
      return fail("its kernel's step is scaled by a constant, not by the "
                  "mean over an image size known at run time only");
    scale *= static_cast<double>(image[2] * image[3]);
  } else {
    SmallVector<int64_t> axes;
    for (const ShapeDim &dim : values.divisors) {
      if (!sameExtent(dim.tensor, config.q, dim.axis))
        return fail("its kernel's step divides by an extent of a tensor "
                    "shaped unlike the image");
      axes.push_back(dim.axis);
    }
    llvm::sort(axes);
    if (axes != SmallVector<int64_t>{2, 3})
      return fail("its kernel's step divides by extents other than the "
                  "image's height and width");
  }
  if (scale <= 0.0)
    return fail("its kernel's step ascends the dot loss's gradient scale "
                "it reads (a non-positive loss scale)");
  config.lossScale = scale;
  config.sign = step < 0 ? Sign::descent : Sign::ascent;
  config.lrScale = std::abs(step);
  return success();
}

} // namespace

bool raise::convolvesQueries(const FoundLayer &layer) {
  if (layer.form != LayerForm::FullBatch)
    return false;
  Value output = skipLayout(layer.steps.front().output);
  if (nodeOf(output, "Conv"))
    return true;
  // Or written out: a sum of kernel entries times windows of a padded map.
  SmallVector<Value> terms;
  addends(output, terms);
  return terms.size() > 1 &&
         matchCommutative(terms.front(), "Mul", [](Value entry, Value window) {
           int64_t a, b;
           Value base = skipLayout(window);
           while (onnx::NodeOp slice = nodeOf(base, "Slice"))
             base = skipLayout(slice.getInputs()[0]);
           return kernelEntry(entry, a, b) && zeroPadded(base);
         });
}

FailureOr<DWConvConfig> raise::matchDWConvLayer(const FoundLayer &layer,
                                                std::string &why) {
  return ConvReader(layer, why).read();
}

DWConvLayerOp raise::buildDWConvLayer(OpBuilder &builder,
                                      const FoundLayer &layer,
                                      const DWConvConfig &config,
                                      SmallVectorImpl<Operation *> &created,
                                      Value &output) {
  MLIRContext *context = builder.getContext();
  Location loc = layer.assembly->getLoc();
  auto kernelType = cast<RankedTensorType>(config.kernel.getType());
  SmallVector<int64_t> shape;
  for (int64_t dim : kernelType.getShape())
    if (dim != 1)
      shape.push_back(dim);
  if (shape.size() != 3)
    return nullptr;
  onnx::OnnxBuilder b(builder, loc, kernelType.getElementType());
  Value dims = b.i64s(shape);
  created.push_back(dims.getDefiningOp());
  Value kernel =
      b.node("Reshape", {config.kernel, dims},
             RankedTensorType::get(shape, kernelType.getElementType()));
  created.push_back(kernel.getDefiningOp());
  auto loss = LossAttr::get(context, LossKind::dot, APFloat(config.lossScale),
                            Reduction::mean, APFloat(1e-6));
  auto update = UpdateAttr::get(
      context, config.sign, APFloat(config.lrScale),
      config.clip ? ClipKind::frobenius : ClipKind::none, NewtonSchulzAttr(),
      WeightNormKind::none, APFloat(1e-5), UpdateBase::weights);
  // The layer's output ([1, B*C, h, w] of a grouped convolution) is the layer
  // op's reshaped, which needs its static shape.
  auto outputType = dyn_cast<RankedTensorType>(layer.output.getType());
  auto qType = cast<RankedTensorType>(config.q.getType());
  // An output typed less precisely than the queries (a sum of shifted
  // products) is theirs; one of another shape is a reshape of it.
  bool compatible =
      outputType && outputType.getRank() == qType.getRank() &&
      llvm::all_of(llvm::zip(outputType.getShape(), qType.getShape()),
                   [](auto dims) {
                     auto [out, q] = dims;
                     return ShapedType::isDynamic(out) || out == q;
                   });
  bool reshape = !compatible;
  if (reshape && (!outputType || !outputType.hasStaticShape()))
    return nullptr;
  auto op = DWConvLayerOp::create(builder, loc, config.q.getType(), Type(),
                                  config.q, config.k, config.v, kernel, loss,
                                  update, /*inner_steps=*/1);
  output = op.getOutput();
  if (reshape) {
    Value target = b.i64s(outputType.getShape());
    created.push_back(target.getDefiningOp());
    output = b.node("Reshape", {output, target}, layer.output.getType());
    created.push_back(output.getDefiningOp());
  }
  return op;
}
