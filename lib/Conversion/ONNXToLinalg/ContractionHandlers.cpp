//===- ContractionHandlers.cpp - MatMul, Gemm, Einsum and Conv -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every contraction becomes one `linalg.generic` that sums products into a
// zero-filled tensor, its operands' layouts in the indexing maps: a
// transposed operand or a broadcast batch is a map, not an op, so the
// einsum reader sees the same product however the node spelled it.
//
//===----------------------------------------------------------------------===//

#include "NodeHandlers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

/// `Σ lhs · rhs` over the loop dims that `resultMap` leaves out, into a
/// zero tensor of `type`.
static Value contract(OpBuilder &b, Location loc, Value lhs, Value rhs,
                      RankedTensorType type, AffineMap lhsMap, AffineMap rhsMap,
                      AffineMap resultMap) {
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d = 0; d < lhsMap.getNumDims(); ++d)
    iterators.push_back(resultMap.isFunctionOfDim(d)
                            ? utils::IteratorType::parallel
                            : utils::IteratorType::reduction);
  Value init = filledTensor(b, loc, type, 0.0);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{lhs, rhs}, ValueRange{init},
      ArrayRef<AffineMap>{lhsMap, rhsMap, resultMap}, iterators,
      [](OpBuilder &nb, Location nl, ValueRange args) {
        Value product = arith::MulFOp::create(nb, nl, args[0], args[1]);
        Value sum = arith::AddFOp::create(nb, nl, args[2], product);
        linalg::YieldOp::create(nb, nl, sum);
      });
  return generic.getResult(0);
}

/// Checks the float operands and result the contractions need.
static bool floatOperands(const NodeView &node, unsigned count,
                          std::string &why) {
  RankedTensorType type = node.resultType();
  if (!type || !isa<FloatType>(type.getElementType())) {
    why = "its result is not a float tensor of static shape";
    return false;
  }
  for (unsigned i = 0; i < count; ++i) {
    RankedTensorType input = node.inputType(i);
    if (!input || input.getElementType() != type.getElementType()) {
      why = "input " + std::to_string(i) +
            " is not a converted tensor of the result's element type";
      return false;
    }
  }
  return true;
}

/// The map of a batch operand's leading dims onto `batch` loop dims, right
/// aligned, a dimension of size 1 read at 0 where the batch is wider.
static bool batchExprs(OpBuilder &b, RankedTensorType type, int64_t own,
                       ArrayRef<int64_t> batch,
                       SmallVectorImpl<AffineExpr> &exprs) {
  int64_t lead = static_cast<int64_t>(batch.size()) - own;
  if (lead < 0)
    return false;
  for (int64_t d = 0; d < own; ++d) {
    int64_t size = type.getDimSize(d);
    if (size == batch[lead + d])
      exprs.push_back(b.getAffineDimExpr(lead + d));
    else if (size == 1)
      exprs.push_back(b.getAffineConstantExpr(0));
    else
      return false;
  }
  return true;
}

static LogicalResult matmul(OpBuilder &b, const NodeView &node,
                            SmallVectorImpl<Value> &results, std::string &why) {
  if (node.numInputs() != 2 || !floatOperands(node, 2, why)) {
    if (why.empty())
      why = "it does not have two inputs";
    return failure();
  }
  RankedTensorType lhsType = node.inputType(0), rhsType = node.inputType(1);
  RankedTensorType type = node.resultType();
  int64_t lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();
  if (lhsRank == 0 || rhsRank == 0) {
    why = "a MatMul operand is a scalar";
    return failure();
  }
  bool hasM = lhsRank >= 2, hasN = rhsRank >= 2;
  int64_t batchRank = type.getRank() - hasM - hasN;
  if (batchRank < 0) {
    why = "its result's rank does not fit its operands";
    return failure();
  }
  ArrayRef<int64_t> batch = type.getShape().take_front(batchRank);
  // Loop dims: the result's, then the summed one.
  unsigned numDims = type.getRank() + 1;
  AffineExpr m = b.getAffineDimExpr(batchRank);
  AffineExpr n = b.getAffineDimExpr(batchRank + hasM);
  AffineExpr k = b.getAffineDimExpr(numDims - 1);
  SmallVector<AffineExpr> lhsExprs, rhsExprs, resultExprs;
  if (!batchExprs(b, lhsType, std::max<int64_t>(lhsRank - 2, 0), batch,
                  lhsExprs) ||
      !batchExprs(b, rhsType, std::max<int64_t>(rhsRank - 2, 0), batch,
                  rhsExprs)) {
    why = "its operands' batch dims do not broadcast to its result's";
    return failure();
  }
  if (hasM)
    lhsExprs.push_back(m);
  lhsExprs.push_back(k);
  rhsExprs.push_back(k);
  if (hasN)
    rhsExprs.push_back(n);
  int64_t kSize = lhsType.getDimSize(lhsRank - 1);
  int64_t rhsK = rhsType.getDimSize(hasN ? rhsRank - 2 : 0);
  if (kSize != rhsK ||
      (hasM && lhsType.getDimSize(lhsRank - 2) != type.getDimSize(batchRank)) ||
      (hasN && rhsType.getDimSize(rhsRank - 1) !=
                   type.getDimSize(type.getRank() - 1))) {
    why = "its operands' sizes do not match its result's";
    return failure();
  }
  for (unsigned d = 0; d < type.getRank(); ++d)
    resultExprs.push_back(b.getAffineDimExpr(d));
  MLIRContext *context = b.getContext();
  results.push_back(contract(b, node.loc(), node.inputs[0], node.inputs[1],
                             type,
                             AffineMap::get(numDims, 0, lhsExprs, context),
                             AffineMap::get(numDims, 0, rhsExprs, context),
                             AffineMap::get(numDims, 0, resultExprs, context)));
  return success();
}

static LogicalResult gemm(OpBuilder &b, const NodeView &node,
                          SmallVectorImpl<Value> &results, std::string &why) {
  if (node.numInputs() < 2 || !floatOperands(node, 2, why)) {
    if (why.empty())
      why = "it has fewer than two inputs";
    return failure();
  }
  RankedTensorType type = node.resultType();
  if (node.inputType(0).getRank() != 2 || node.inputType(1).getRank() != 2 ||
      type.getRank() != 2) {
    why = "a Gemm operand is not a matrix";
    return failure();
  }
  bool transA = node.intAttr("transA", 0) != 0;
  bool transB = node.intAttr("transB", 0) != 0;
  double alpha = node.floatAttr("alpha").value_or(1.0);
  double beta = node.floatAttr("beta").value_or(1.0);
  AffineExpr m = b.getAffineDimExpr(0), n = b.getAffineDimExpr(1),
             k = b.getAffineDimExpr(2);
  MLIRContext *context = b.getContext();
  auto map = [&](ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(3, 0, exprs, context);
  };
  AffineMap lhsMap = transA ? map({k, m}) : map({m, k});
  AffineMap rhsMap = transB ? map({n, k}) : map({k, n});
  if (node.inputType(0).getDimSize(transA ? 0 : 1) !=
      node.inputType(1).getDimSize(transB ? 1 : 0)) {
    why = "its operands' summed sizes differ";
    return failure();
  }
  Location loc = node.loc();
  Value product = contract(b, loc, node.inputs[0], node.inputs[1], type, lhsMap,
                           rhsMap, map({m, n}));
  bool hasBias = node.hasInput(2) && beta != 0.0;
  if (alpha == 1.0 && !hasBias) {
    results.push_back(product);
    return success();
  }
  Type elem = type.getElementType();
  SmallVector<Value> inputs{product};
  if (hasBias) {
    RankedTensorType bias = node.inputType(2);
    if (!bias || bias.getElementType() != elem) {
      why = "its bias is not a converted tensor of its element type";
      return failure();
    }
    inputs.push_back(node.inputs[2]);
  }
  Value result = broadcastElementwise(
      b, loc, inputs, type, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value sum = args[0];
        if (alpha != 1.0)
          sum = arith::MulFOp::create(
              nb, nl, sum,
              arith::ConstantOp::create(nb, nl, FloatAttr::get(elem, alpha)));
        if (args.size() > 1) {
          Value bias = args[1];
          if (beta != 1.0)
            bias = arith::MulFOp::create(
                nb, nl, bias,
                arith::ConstantOp::create(nb, nl, FloatAttr::get(elem, beta)));
          sum = arith::AddFOp::create(nb, nl, sum, bias);
        }
        return sum;
      });
  if (!result) {
    why = "its bias does not broadcast to its result";
    return failure();
  }
  results.push_back(result);
  return success();
}

static LogicalResult einsum(OpBuilder &b, const NodeView &node,
                            SmallVectorImpl<Value> &results, std::string &why) {
  auto equation =
      dyn_cast_or_null<StringAttr>(node.node.getONNXAttr("equation"));
  if (!equation || node.numInputs() != 2 || !floatOperands(node, 2, why)) {
    if (why.empty())
      why = "it is not an Einsum of two operands with an equation";
    return failure();
  }
  std::string text;
  for (char c : equation.getValue())
    if (c != ' ')
      text.push_back(c);
  size_t arrow = text.find("->");
  size_t comma = text.find(',');
  if (arrow == std::string::npos || comma == std::string::npos ||
      comma > arrow || text.find("...") != std::string::npos) {
    why = "its equation has no explicit output, or an ellipsis";
    return failure();
  }
  std::string lhs = text.substr(0, comma);
  std::string rhs = text.substr(comma + 1, arrow - comma - 1);
  std::string out = text.substr(arrow + 2);
  RankedTensorType type = node.resultType();
  RankedTensorType lhsType = node.inputType(0), rhsType = node.inputType(1);
  if (lhs.size() != size_t(lhsType.getRank()) ||
      rhs.size() != size_t(rhsType.getRank()) ||
      out.size() != size_t(type.getRank())) {
    why = "its equation does not match its operands' ranks";
    return failure();
  }
  // Loop dims: the output's letters, then the summed ones.
  std::string letters = out;
  for (char c : lhs + rhs)
    if (letters.find(c) == std::string::npos)
      letters.push_back(c);
  llvm::DenseMap<char, int64_t> sizes;
  auto record = [&](const std::string &labels, RankedTensorType t) {
    for (auto [d, c] : llvm::enumerate(labels)) {
      if (labels.find(c) != d)
        return false; // a diagonal
      auto [it, inserted] = sizes.try_emplace(c, t.getDimSize(d));
      if (!inserted && it->second != t.getDimSize(d))
        return false;
    }
    return true;
  };
  if (!record(lhs, lhsType) || !record(rhs, rhsType) || !record(out, type)) {
    why = "its equation takes a diagonal, or sizes of one letter differ";
    return failure();
  }
  MLIRContext *context = b.getContext();
  auto mapOf = [&](const std::string &labels) {
    SmallVector<AffineExpr> exprs;
    for (char c : labels)
      exprs.push_back(b.getAffineDimExpr(letters.find(c)));
    return AffineMap::get(letters.size(), 0, exprs, context);
  };
  results.push_back(contract(b, node.loc(), node.inputs[0], node.inputs[1],
                             type, mapOf(lhs), mapOf(rhs), mapOf(out)));
  return success();
}

/// Conv with explicit or no padding, any strides, dilations and groups: the
/// input zero-padded (a fill and an insert_slice), input and weight split
/// by group, and one generic summing over the group's input channels and
/// the kernel, `y[n, g, m, o] = Σ x[n, g, c, o s + k d] w[g, m, c, k]`.
static LogicalResult conv(OpBuilder &b, const NodeView &node,
                          SmallVectorImpl<Value> &results, std::string &why) {
  if (!floatOperands(node, 2, why))
    return failure();
  RankedTensorType type = node.resultType();
  RankedTensorType input = node.inputType(0), weight = node.inputType(1);
  int64_t rank = input.getRank(), spatial = rank - 2;
  if (rank < 3 || weight.getRank() != rank || type.getRank() != rank) {
    why = "its input, weight and result are not of one rank of 3 or more";
    return failure();
  }
  auto autoPad =
      dyn_cast_or_null<StringAttr>(node.node.getONNXAttr("auto_pad"));
  if (autoPad && autoPad.getValue() != "NOTSET" &&
      autoPad.getValue() != "VALID") {
    why = "it pads by auto_pad '" + autoPad.getValue().str() + "'";
    return failure();
  }
  auto listOr = [&](StringRef name, int64_t size, int64_t value) {
    std::optional<SmallVector<int64_t>> list = node.intsAttr(name);
    return list ? *list : SmallVector<int64_t>(size, value);
  };
  SmallVector<int64_t> strides = listOr("strides", spatial, 1);
  SmallVector<int64_t> dilations = listOr("dilations", spatial, 1);
  SmallVector<int64_t> pads = listOr("pads", 2 * spatial, 0);
  if (autoPad && autoPad.getValue() == "VALID")
    pads.assign(2 * spatial, 0);
  int64_t groups = node.intAttr("group", 1);
  int64_t channels = input.getDimSize(1), filters = weight.getDimSize(0);
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial || groups < 1 ||
      channels % groups != 0 || filters % groups != 0 ||
      weight.getDimSize(1) != channels / groups ||
      type.getDimSize(0) != input.getDimSize(0) ||
      type.getDimSize(1) != filters) {
    why = "its strides, dilations, pads or groups do not fit its input and "
          "weight";
    return failure();
  }
  if (std::optional<SmallVector<int64_t>> kernel =
          node.intsAttr("kernel_shape");
      kernel && ArrayRef<int64_t>(*kernel) != weight.getShape().drop_front(2)) {
    why = "its kernel_shape is not its weight's";
    return failure();
  }
  // The padded input, and each output size the padding and strides give.
  SmallVector<int64_t> paddedShape(input.getShape());
  SmallVector<int64_t> offsets(rank, 0);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t before = pads[i], after = pads[i + spatial];
    int64_t size = input.getDimSize(i + 2) + before + after;
    int64_t reach = dilations[i] * (weight.getDimSize(i + 2) - 1) + 1;
    if (before < 0 || after < 0 || strides[i] < 1 || dilations[i] < 1 ||
        size < reach ||
        (size - reach) / strides[i] + 1 != type.getDimSize(i + 2)) {
      why = "its pads, strides and dilations do not give its result's shape";
      return failure();
    }
    paddedShape[i + 2] = size;
    offsets[i + 2] = before;
  }
  Location loc = node.loc();
  Type elem = type.getElementType();
  Value x = node.inputs[0];
  if (llvm::any_of(pads, [](int64_t pad) { return pad != 0; }))
    x = insertBox(
        b, loc, x,
        filledTensor(b, loc, RankedTensorType::get(paddedShape, elem), 0.0),
        offsets);
  // [N, G, C/G, ...], [G, M/G, C/G, ...] and [N, G, M/G, ...].
  auto split = [&](ArrayRef<int64_t> shape, unsigned at, int64_t size) {
    SmallVector<int64_t> result(shape.take_front(at));
    result.push_back(groups);
    result.push_back(size / groups);
    llvm::append_range(result, shape.drop_front(at + 1));
    return RankedTensorType::get(result, elem);
  };
  Value groupedX = reshapeTo(b, loc, x, split(paddedShape, 1, channels));
  Value groupedW =
      reshapeTo(b, loc, node.inputs[1], split(weight.getShape(), 0, filters));
  RankedTensorType groupedType = split(type.getShape(), 1, filters);
  if (!groupedX || !groupedW) {
    why = "its operands cannot be split into groups";
    return failure();
  }
  // Loops: n, g, m, o..., then c, k....
  int64_t numDims = 4 + 2 * spatial;
  AffineExpr n = b.getAffineDimExpr(0), g = b.getAffineDimExpr(1),
             m = b.getAffineDimExpr(2), c = b.getAffineDimExpr(3 + spatial);
  SmallVector<AffineExpr> xExprs{n, g, c}, wExprs{g, m, c}, yExprs{n, g, m};
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr o = b.getAffineDimExpr(3 + i),
               k = b.getAffineDimExpr(4 + spatial + i);
    xExprs.push_back(o * strides[i] + k * dilations[i]);
    wExprs.push_back(k);
    yExprs.push_back(o);
  }
  MLIRContext *context = b.getContext();
  Value grouped = contract(b, loc, groupedX, groupedW, groupedType,
                           AffineMap::get(numDims, 0, xExprs, context),
                           AffineMap::get(numDims, 0, wExprs, context),
                           AffineMap::get(numDims, 0, yExprs, context));
  Value result = reshapeTo(b, loc, grouped, type);
  if (node.hasInput(2)) {
    RankedTensorType bias = node.inputType(2);
    if (!bias || bias.getElementType() != elem || bias.getRank() != 1 ||
        bias.getDimSize(0) != filters) {
      why = "its bias is not a converted vector of one value per filter";
      return failure();
    }
    SmallVector<int64_t> column(rank - 1, 1);
    column[0] = filters;
    Value biasColumn =
        reshapeTo(b, loc, node.inputs[2], RankedTensorType::get(column, elem));
    result = broadcastElementwise(
        b, loc, ValueRange{result, biasColumn}, type,
        [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          return arith::AddFOp::create(nb, nl, args[0], args[1]);
        });
  }
  if (!result) {
    why = "its result cannot be merged from groups";
    return failure();
  }
  results.push_back(result);
  return success();
}

ArrayRef<HandlerRow> onnx_to_linalg::contractionHandlers() {
  // MatMul's later versions only add element types; Gemm's C is optional
  // from 11 on, which the handler reads either way.
  static const HandlerRow rows[] = {
      {"MatMul", 1, matmul},
      {"Gemm", 7, gemm},
      {"Einsum", 12, einsum},
      {"Conv", 1, conv},
  };
  return rows;
}
