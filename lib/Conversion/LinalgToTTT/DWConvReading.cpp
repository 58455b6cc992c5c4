//===- DWConvReading.cpp - a depth-wise convolution layer off a loop ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "DWConvReading.h"
#include "ChunkLoopForms.h"
#include "EinsumPolynomial.h"
#include "ElementwiseReadings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

namespace {

/// The positions of the dimensions of more than one element.
SmallVector<unsigned> nonUnitDims(Type type) {
  SmallVector<unsigned> dims;
  for (auto [d, size] :
       llvm::enumerate(cast<RankedTensorType>(type).getShape()))
    if (size != 1)
      dims.push_back(d);
  return dims;
}

/// Whether `value` is a tensor of zeros: a fill of 0.
bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  std::optional<double> zero =
      fill ? floatConstant(fill.getInputs()[0]) : std::nullopt;
  return zero && *zero == 0.0;
}

/// Whether the payload of `op` is `out + in0 * in1` (in any order).
bool isMultiplyAccumulate(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto add = yielded(op).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body.getArgument(2);
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

/// A depth-wise convolution: `out[c, y, x] = sum_{a, b} in[c, y + a, x + b]
/// * kernel[c, a, b]` on the dimensions of more than one element (the
/// others have one index).
struct Convolution {
  Value input, kernel;
  int64_t channels = 0, height = 0, width = 0, kh = 0, kw = 0;
};

std::optional<Convolution> readConvolution(Value output) {
  auto op = throughReshapes(output).getDefiningOp<linalg::GenericOp>();
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !isMultiplyAccumulate(op) || !isZeroFill(op.getDpsInits()[0]))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  auto exprsOf = [&](unsigned operand) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : nonUnitDims(op->getOperand(operand).getType()))
      exprs.push_back(maps[operand].getResult(d));
    return exprs;
  };
  auto dimOf = [](AffineExpr expr) -> std::optional<unsigned> {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      return dim.getPosition();
    return std::nullopt;
  };
  SmallVector<AffineExpr> out = exprsOf(2);
  if (out.size() != 3 ||
      llvm::any_of(out, [&](AffineExpr e) { return !dimOf(e); }))
    return std::nullopt;
  for (unsigned kernelInput : {0u, 1u}) {
    SmallVector<AffineExpr> kernel = exprsOf(kernelInput),
                            input = exprsOf(1 - kernelInput);
    if (kernel.size() != 3 || input.size() != 3 || kernel[0] != out[0] ||
        input[0] != out[0] ||
        llvm::any_of(kernel, [&](AffineExpr e) { return !dimOf(e); }))
      continue;
    // The input's spatial index is the output's plus the kernel's.
    bool shifted = true;
    for (unsigned s : {1u, 2u})
      shifted &=
          input[s] == out[s] + kernel[s] || input[s] == kernel[s] + out[s];
    // Every other loop has one iteration.
    llvm::SmallBitVector used(extents.size());
    for (AffineExpr e : {out[0], out[1], out[2], kernel[1], kernel[2]})
      used.set(*dimOf(e));
    for (unsigned d = 0; d < extents.size(); ++d)
      shifted &= used.test(d) || extents[d] == 1;
    if (!shifted)
      continue;
    Convolution conv;
    conv.input = op.getDpsInputs()[1 - kernelInput];
    conv.kernel = op.getDpsInputs()[kernelInput];
    conv.channels = extents[*dimOf(out[0])];
    conv.height = extents[*dimOf(out[1])];
    conv.width = extents[*dimOf(out[2])];
    conv.kh = extents[*dimOf(kernel[1])];
    conv.kw = extents[*dimOf(kernel[2])];
    return conv;
  }
  return std::nullopt;
}

/// `source` written into a zero map at `offsets` (static, unit strides):
/// the map a "same" convolution pads.
struct Padded {
  Value source;
  SmallVector<int64_t> offsets;
};

std::optional<Padded> readPadded(Value value) {
  auto insert = throughReshapes(value).getDefiningOp<tensor::InsertSliceOp>();
  if (!insert || !isZeroFill(insert.getDest()) || !insert.hasUnitStride() ||
      ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
      insert.getSourceType().getRank() != insert.getDestType().getRank() ||
      !insert.getSourceType().hasStaticShape())
    return std::nullopt;
  return Padded{insert.getSource(),
                SmallVector<int64_t>(insert.getStaticOffsets())};
}

/// `value` as a window of a tensor cut by a chain of extract_slices (unit
/// strides, static offsets and sizes): the tensor and the offsets.
std::pair<Value, SmallVector<int64_t>> slicedFrom(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> offsets(type.getRank(), 0);
  while (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!slice.hasUnitStride() ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
        slice.getSourceType().getRank() != type.getRank())
      break;
    for (auto [offset, add] : llvm::zip(offsets, slice.getStaticOffsets()))
      offset += add;
    value = slice.getSource();
  }
  return {value, offsets};
}

/// `x / (sqrt(sum over `reduced` of x^2) + eps)`: x and eps.
std::optional<std::pair<Value, double>>
readNormDivision(Value divided, ArrayRef<unsigned> reduced) {
  linalg::GenericOp div = parallelGeneric(divided, 2);
  if (!div || !readsInPlace(div, 0) ||
      yielded(div).getDefiningOp<arith::DivFOp>() == nullptr)
    return std::nullopt;
  Block &body = div.getRegion().front();
  auto quotient = yielded(div).getDefiningOp<arith::DivFOp>();
  if (quotient.getLhs() != body.getArgument(0) ||
      quotient.getRhs() != body.getArgument(1))
    return std::nullopt;
  Value x = div.getDpsInputs()[0];
  // divisor = sqrt(s) + eps, eps a splat operand or a payload constant.
  Value root;
  double eps = 0.0;
  Value divisor = throughReshapes(div.getDpsInputs()[1]);
  if (linalg::GenericOp shift = parallelGeneric(divisor, 2)) {
    for (unsigned i = 0; i < 2; ++i)
      if (std::optional<double> constant =
              splatConstant(shift.getDpsInputs()[i])) {
        eps = *constant;
        root = shift.getDpsInputs()[1 - i];
      }
    if (!yielded(shift).getDefiningOp<arith::AddFOp>())
      return std::nullopt;
  } else if (linalg::GenericOp shift = parallelGeneric(divisor, 1)) {
    auto add = yielded(shift).getDefiningOp<arith::AddFOp>();
    Value arg = shift.getRegion().front().getArgument(0);
    std::optional<double> constant =
        !add                  ? std::nullopt
        : add.getLhs() == arg ? floatConstant(add.getRhs())
        : add.getRhs() == arg ? floatConstant(add.getLhs())
                              : std::nullopt;
    if (!constant)
      return std::nullopt;
    eps = *constant;
    root = shift.getDpsInputs()[0];
  }
  linalg::GenericOp sqrt =
      root ? parallelGeneric(throughReshapes(root), 1) : nullptr;
  if (!sqrt || !yielded(sqrt).getDefiningOp<math::SqrtOp>())
    return std::nullopt;
  // The sum of squares of x over exactly the `reduced` dimensions: squared
  // in the sum's payload, or apart (TorchScript of torch 1.13 spells
  // `norm` as Mul then ReduceSum).
  auto sum = throughReshapes(sqrt.getDpsInputs()[0])
                 .getDefiningOp<linalg::GenericOp>();
  if (!sum || sum.getNumDpsInputs() != 1)
    return std::nullopt;
  Block &sumBody = sum.getRegion().front();
  auto add = yielded(sum).getDefiningOp<arith::AddFOp>();
  Value summed = !add                                     ? Value()
                 : add.getLhs() == sumBody.getArgument(1) ? add.getRhs()
                                                          : add.getLhs();
  if (!summed)
    return std::nullopt;
  if (sum.getDpsInputs()[0] == x) {
    auto mul = summed.getDefiningOp<arith::MulFOp>();
    if (!mul || mul.getLhs() != sumBody.getArgument(0) ||
        mul.getRhs() != sumBody.getArgument(0))
      return std::nullopt;
  } else {
    linalg::GenericOp square = parallelGeneric(sum.getDpsInputs()[0], 2);
    auto mul = square ? yielded(square).getDefiningOp<arith::MulFOp>()
                      : arith::MulFOp();
    Block *squareBody = square ? &square.getRegion().front() : nullptr;
    if (summed != sumBody.getArgument(0) || !mul ||
        square.getDpsInputs()[0] != x || square.getDpsInputs()[1] != x ||
        !readsInPlace(square, 0) || !readsInPlace(square, 1) ||
        !((mul.getLhs() == squareBody->getArgument(0) &&
           mul.getRhs() == squareBody->getArgument(1)) ||
          (mul.getLhs() == squareBody->getArgument(1) &&
           mul.getRhs() == squareBody->getArgument(0))))
      return std::nullopt;
  }
  AffineMap read = sum.getIndexingMapsArray()[0];
  SmallVector<utils::IteratorType> iterators = sum.getIteratorTypesArray();
  for (auto [d, expr] : llvm::enumerate(read.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return std::nullopt;
    bool isReduced =
        iterators[dim.getPosition()] == utils::IteratorType::reduction;
    if (isReduced != llvm::is_contained(reduced, d))
      return std::nullopt;
  }
  return std::make_pair(x, eps);
}

class DWConvReader {
public:
  explicit DWConvReader(ChunkLoopOp loop) : loop(loop) {}

  FailureOr<DWConvLayer> read(bool &isConv, std::string &why);

private:
  /// The per-position sums stacked into `gradient`, proved to be the
  /// kernel gradient of the keys and values; their common factor.
  FailureOr<double> readGradient(DWConvLayer &layer, Value gradient,
                                 std::string &why);

  std::optional<unsigned> windowOf(Value leaf) {
    return windowIndex(loop, leaf);
  }

  ChunkLoopOp loop;
};

FailureOr<double> DWConvReader::readGradient(DWConvLayer &layer, Value gradient,
                                             std::string &why) {
  auto fail = [&](const char *reason) {
    why = reason;
    return failure();
  };
  // [N, kh, kw] (in row-major order, as reshapes keep it) stacked from
  // kh * kw sums of N values, position (a, b) the (a kw + b)-th.
  auto concat = throughReshapes(gradient).getDefiningOp<tensor::ConcatOp>();
  int64_t positions = layer.kh * layer.kw;
  if (!concat ||
      static_cast<int64_t>(concat.getDim()) != concat.getType().getRank() - 1 ||
      static_cast<int64_t>(concat.getInputs().size()) != positions ||
      !concat.getType().hasStaticShape() ||
      concat.getType().getNumElements() != layer.channels * positions)
    return fail("its kernel's gradient is not one sum per kernel position, "
                "stacked in the kernel's order");
  std::optional<double> factor;
  Value keys, padded, values;
  for (auto [p, part] : llvm::enumerate(concat.getInputs())) {
    if (cast<RankedTensorType>(part.getType()).getShape().back() != 1)
      return fail("its kernel's gradient is not one sum per kernel position, "
                  "stacked in the kernel's order");
    EinsumReader reader;
    std::optional<Polynomial> sum = reader.read(throughReshapes(part));
    if (!sum || sum->terms.size() != 1 || sum->terms[0].factors.size() != 2)
      return fail("a kernel position's gradient is not a sum of products of "
                  "two windows");
    const Term &term = sum->terms[0];
    const Factor &a = term.factors[0], &b = term.factors[1];
    std::optional<unsigned> wa = windowOf(a.leaf), wb = windowOf(b.leaf);
    size_t rank = a.labels.size();
    if (!wa || !wb || a.labels != b.labels || rank < 3 ||
        ArrayRef<unsigned>(sum->labels) !=
            ArrayRef<unsigned>(a.labels).drop_back(2))
      return fail("a kernel position's gradient is not a sum over the map of "
                  "two windows' product");
    // Which factor is the shifted keys: a window cut from a zero-padded
    // map at this position's offset.
    bool found = false;
    for (auto [shifted, other] : {std::pair{*wa, *wb}, {*wb, *wa}}) {
      auto [source, offsets] = slicedFrom(loop.getSequences()[shifted]);
      std::optional<Padded> pad = readPadded(source);
      auto windowType =
          cast<RankedTensorType>(loop.getSequences()[shifted].getType());
      if (!pad || (padded && source != padded) ||
          (values && loop.getSequences()[other] != values))
        continue;
      auto keyType = cast<RankedTensorType>(pad->source.getType());
      bool fits = keyType.getShape() == windowType.getShape() &&
                  keyType.getDimSize(rank - 2) == layer.height &&
                  keyType.getDimSize(rank - 1) == layer.width &&
                  keyType.getNumElements() ==
                      layer.channels * layer.height * layer.width &&
                  pad->offsets[rank - 2] == layer.kh / 2 &&
                  pad->offsets[rank - 1] == layer.kw / 2 &&
                  offsets[rank - 2] == static_cast<int64_t>(p) / layer.kw &&
                  offsets[rank - 1] == static_cast<int64_t>(p) % layer.kw &&
                  loop.getSequences()[other].getType() == windowType;
      for (size_t d = 0; d + 2 < rank; ++d)
        fits &= offsets[d] == 0 && pad->offsets[d] == 0;
      if (!fits)
        continue;
      padded = source;
      keys = pad->source;
      values = loop.getSequences()[other];
      found = true;
      break;
    }
    if (!found)
      return fail("a kernel position's gradient does not read the keys "
                  "shifted by that position in a zero-padded map");
    if (factor && std::abs(*factor - term.coeff) > 1e-12 * std::abs(*factor))
      return fail("its kernel positions' gradients are scaled differently");
    factor = term.coeff;
  }
  layer.k = keys;
  layer.v = values;
  return *factor;
}

FailureOr<DWConvLayer> DWConvReader::read(bool &isConv, std::string &why) {
  isConv = false;
  if (loop.getInits().size() != 1 || loop.getOutputs().size() != 1 ||
      !loop.isSingleChunk())
    return why = "not one chunk with one state and one output", failure();
  std::optional<Convolution> conv =
      readConvolution(loop.getYield().getOutputs()[0]);
  Value next = loop.getYield().getNextState()[0];
  Value arg = loop.getStateArgs()[0];
  if (!conv || throughReshapes(conv->kernel) != next)
    return why = "its output does not convolve a window with its state",
           failure();
  isConv = true;
  DWConvLayer layer;
  layer.channels = conv->channels;
  layer.height = conv->height;
  layer.width = conv->width;
  layer.kh = conv->kh;
  layer.kw = conv->kw;
  auto stateType = cast<RankedTensorType>(arg.getType());
  SmallVector<unsigned> stateDims = nonUnitDims(stateType);
  if (layer.kh % 2 == 0 || layer.kw % 2 == 0 || stateDims.size() != 3 ||
      stateType.getDimSize(stateDims[0]) != layer.channels ||
      stateType.getDimSize(stateDims[1]) != layer.kh ||
      stateType.getDimSize(stateDims[2]) != layer.kw ||
      !stateType.getElementType().isF32())
    return why = "its kernel is not one odd-sized f32 kernel per channel",
           failure();
  // The queries: a window holding them zero-padded by half the kernel.
  std::optional<unsigned> queries = windowOf(throughReshapes(conv->input));
  std::optional<Padded> pad =
      queries ? readPadded(loop.getSequences()[*queries]) : std::nullopt;
  auto qType =
      pad ? cast<RankedTensorType>(pad->source.getType()) : RankedTensorType();
  if (!pad ||
      qType.getNumElements() != layer.channels * layer.height * layer.width ||
      qType.getDimSize(qType.getRank() - 2) != layer.height ||
      qType.getDimSize(qType.getRank() - 1) != layer.width ||
      pad->offsets[qType.getRank() - 2] != layer.kh / 2 ||
      pad->offsets[qType.getRank() - 1] != layer.kw / 2)
    return why = "its convolution's input is not the queries zero-padded by "
                 "half the kernel ('same' padding)",
           failure();
  layer.q = pad->source;
  // W' = W + c D, D the gradient or its clipped value.
  std::optional<Polynomial> poly = EinsumReader({arg}).read(next);
  const Factor *delta = nullptr;
  double step = 0.0;
  bool keeps = false;
  for (const Term &term : poly ? poly->terms : SmallVector<Term>()) {
    if (term.factors.size() != 1 ||
        ArrayRef<unsigned>(term.factors[0].labels) !=
            ArrayRef<unsigned>(poly->labels))
      return why = "its kernel is not updated by adding a term to it",
             failure();
    if (term.factors[0].leaf == arg && term.coeff == 1.0 && !keeps)
      keeps = true;
    else if (!delta) {
      delta = &term.factors[0];
      step = term.coeff;
    } else {
      return why = "its kernel is not updated by adding a term to it",
             failure();
    }
  }
  if (!keeps || !delta)
    return why = "its kernel is not updated by adding a term to it", failure();
  Value gradient = delta->leaf;
  if (auto clip = readNormDivision(delta->leaf, {stateDims[1], stateDims[2]});
      clip && clip->first.getType() == stateType) {
    if (clip->second != 1.0)
      return why = "its gradient is divided by its norm per channel plus " +
                   std::to_string(clip->second) +
                   ", not plus 1 (the clipping ttt.dwconv_layer knows)",
             failure();
    layer.clipped = true;
    gradient = clip->first;
  }
  FailureOr<double> ratio = readGradient(layer, gradient, why);
  if (failed(ratio))
    return failure();
  // W' = W + c clip(r E): the op adds step * clip(U), U = -+|scale| E.
  double r = *ratio;
  if (!layer.clipped) {
    r *= step;
    step = 1.0;
  } else if (step < 0) {
    step = -step;
    r = -r;
  }
  layer.lossScale = r;
  layer.step = step;
  return layer;
}

/// `value` with its elements in order, shaped `shape`.
Value reshapedTo(OpBuilder &b, Location loc, Value value,
                 ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  Value flat = value;
  if (type.getRank() != 1) {
    ReassociationIndices all;
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.push_back(d);
    flat = tensor::CollapseShapeOp::create(
        b, loc, value, SmallVector<ReassociationIndices>{all});
  }
  ReassociationIndices all;
  for (int64_t d = 0, e = shape.size(); d < e; ++d)
    all.push_back(d);
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), flat,
      SmallVector<ReassociationIndices>{all});
}

} // namespace

FailureOr<DWConvLayer> linalg_raise::readDWConvLayer(ChunkLoopOp loop,
                                                     bool &isConv,
                                                     std::string &why) {
  return DWConvReader(loop).read(isConv, why);
}

void linalg_raise::buildDWConvLayer(RewriterBase &rewriter, ChunkLoopOp loop,
                                    const DWConvLayer &layer) {
  Location loc = loop.getLoc();
  MLIRContext *context = loop.getContext();
  rewriter.setInsertionPoint(loop);
  SmallVector<int64_t> map{1, layer.channels, layer.height, layer.width};
  Value q = reshapedTo(rewriter, loc, layer.q, map);
  Value k = reshapedTo(rewriter, loc, layer.k, map);
  Value v = reshapedTo(rewriter, loc, layer.v, map);
  Value kernel = reshapedTo(rewriter, loc, loop.getInits()[layer.state],
                            {1, layer.channels, layer.kh, layer.kw});
  bool ascent = layer.lossScale < 0;
  auto loss =
      LossAttr::get(context, LossKind::dot, APFloat(std::abs(layer.lossScale)),
                    Reduction::sum, APFloat(1e-6));
  auto update = UpdateAttr::get(
      context, ascent ? Sign::ascent : Sign::descent, APFloat(layer.step),
      layer.clipped ? ClipKind::frobenius : ClipKind::none, NewtonSchulzAttr(),
      WeightNormKind::none, APFloat(1e-5), UpdateBase::weights);
  Value final = loop.getFinalStates()[layer.state];
  Type finalType = final.use_empty() ? Type() : kernel.getType();
  auto op = DWConvLayerOp::create(rewriter, loc, q.getType(), finalType, q, k,
                                  v, kernel, loss, update, /*inner_steps=*/1);
  auto outputType = cast<RankedTensorType>(loop.getOutputs()[0].getType());
  rewriter.replaceAllUsesWith(
      loop.getOutputs()[0],
      reshapedTo(rewriter, loc, op.getOutput(), outputType.getShape()));
  if (!final.use_empty())
    rewriter.replaceAllUsesWith(
        final, reshapedTo(rewriter, loc, op.getFinalKernel(),
                          cast<RankedTensorType>(final.getType()).getShape()));
  rewriter.eraseOp(loop);
}
