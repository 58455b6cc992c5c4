//===- Normalize.cpp - the normalization driver and its pass --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Normalize.h"
#include "GraphQueries.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTNORMALIZEONNX
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

std::optional<int64_t> raise::intAttr(onnx::NodeOp node, StringRef name) {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(node.getONNXAttr(name)))
    return attr.getInt();
  return std::nullopt;
}

std::optional<SmallVector<int64_t>>
raise::splitSizes(onnx::NodeOp split, int64_t length,
                  std::optional<SmallVector<int64_t>> given) {
  unsigned count = split->getNumResults();
  std::optional<SmallVector<int64_t>> sizes = std::move(given);
  if (!sizes)
    if (auto attr =
            dyn_cast_or_null<DenseI64ArrayAttr>(split.getONNXAttr("split")))
      sizes = SmallVector<int64_t>(attr.asArrayRef());
  if (!sizes && intAttr(split, "num_outputs")) {
    int64_t chunk = (length + count - 1) / count;
    sizes.emplace();
    for (unsigned i = 0; i < count; ++i)
      sizes->push_back(
          std::max<int64_t>(0, std::min(chunk, length - i * chunk)));
  }
  if (!sizes && split.getInputs().size() <= 1 && count > 0 &&
      length % count == 0)
    sizes.emplace(count, length / count);
  if (!sizes || sizes->size() != count)
    return std::nullopt;
  int64_t total = 0;
  for (int64_t size : *sizes) {
    if (size < 0)
      return std::nullopt;
    total += size;
  }
  if (total != length)
    return std::nullopt;
  return sizes;
}

std::optional<SmallVector<int64_t>>
raise::transposePerm(onnx::NodeOp transpose) {
  if (auto perm =
          dyn_cast_or_null<DenseI64ArrayAttr>(transpose.getONNXAttr("perm")))
    return SmallVector<int64_t>(perm.asArrayRef());
  auto type = dyn_cast<ShapedType>(transpose.getInputs()[0].getType());
  if (!type || !type.hasRank())
    return std::nullopt;
  SmallVector<int64_t> reversed;
  for (int64_t i = type.getRank() - 1; i >= 0; --i)
    reversed.push_back(i);
  return reversed;
}

bool raise::isPermutation(ArrayRef<int64_t> perm) {
  SmallVector<bool> seen(perm.size(), false);
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= static_cast<int64_t>(perm.size()) || seen[axis])
      return false;
    seen[axis] = true;
  }
  return true;
}

Type raise::permutedType(Type type, ArrayRef<int64_t> perm) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || ranked.getRank() != static_cast<int64_t>(perm.size()))
    return type;
  SmallVector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(ranked.getDimSize(axis));
  return RankedTensorType::get(shape, ranked.getElementType());
}

Type raise::elementTypeOf(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.getElementType();
  return Float32Type::get(type.getContext());
}

SmallVector<int64_t> raise::swapInnerPerm(int64_t rank) {
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (rank >= 2)
    std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

bool raise::keepsTurnedLayout(onnx::NodeOp inner, ArrayRef<int64_t> perm) {
  std::optional<SmallVector<int64_t>> first = transposePerm(inner);
  if (!first || first->size() != perm.size() || perm.size() < 2 ||
      inner.getInputs().size() != 1)
    return false;
  SmallVector<int64_t> swap = swapInnerPerm(perm.size());
  return ArrayRef<int64_t>(swap) == perm && *first != swap &&
         isa<BlockArgument>(inner.getInputs()[0]);
}

Value raise::createReshape(PatternRewriter &rewriter, Location loc, Value x,
                           RankedTensorType type) {
  onnx::OnnxBuilder b(rewriter, loc, type.getElementType());
  // The one dim of run-time size a caller may leave is inferred.
  SmallVector<int64_t> target(type.getShape());
  for (int64_t &size : target)
    if (ShapedType::isDynamic(size))
      size = -1;
  Value shape = b.i64s(target);
  return b.node("Reshape", {x, shape}, type);
}

Value raise::createBatchReshape(PatternRewriter &rewriter, Location loc,
                                Value x, RankedTensorType type) {
  auto from = dyn_cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  if (!from || type.getNumDynamicDims() <= 1 || rank < 2 || from.getRank() < 2)
    return createReshape(rewriter, loc, x, type);
  onnx::OnnxBuilder b(rewriter, loc, type.getElementType());
  Type i64 = rewriter.getI64Type();
  auto vector = [&](int64_t n) { return RankedTensorType::get({n}, i64); };
  Value shape;
  SmallVector<Value> pieces;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t inner = d - rank + from.getRank(); // x's dim, for the last two
    if (!type.isDynamicDim(d) || d < rank - 2) {
      pieces.push_back(
          b.i64s({type.isDynamicDim(d) ? -1 : type.getDimSize(d)}));
      continue;
    }
    if (!shape)
      shape = b.node("Shape", {x}, vector(from.getRank()));
    Value size =
        b.node("Gather", {shape, b.i64Scalar(inner)},
               RankedTensorType::get({}, i64), {b.attr("axis", int64_t{0})});
    pieces.push_back(b.node("Unsqueeze", {size, b.i64s({0})}, vector(1)));
  }
  Value target =
      b.node("Concat", pieces, vector(rank), {b.attr("axis", int64_t{0})});
  return b.node("Reshape", {x, target}, type);
}

/// The tensor and axis a run-time size is a copy of: through Reshapes whose
/// target reads it as a `Shape(t)[axis]` piece.
static std::pair<Value, int64_t> dimSource(Value value, int64_t d) {
  while (onnx::NodeOp reshape = nodeOf(value, "Reshape")) {
    onnx::NodeOp pieces = nodeOf(reshape.getInputs()[1], "Concat");
    if (!pieces || d >= static_cast<int64_t>(pieces.getInputs().size()))
      break;
    std::optional<ShapeDim> copy = shapeDim(pieces.getInputs()[d]);
    if (!copy)
      break;
    value = copy->tensor;
    d = copy->axis;
  }
  return {value, d};
}

bool raise::sameDimSize(Value a, int64_t da, Value b, int64_t db) {
  auto aType = dyn_cast<RankedTensorType>(a.getType());
  auto bType = dyn_cast<RankedTensorType>(b.getType());
  if (!aType || !bType || da < 0 || db < 0 || da >= aType.getRank() ||
      db >= bType.getRank())
    return false;
  if (!aType.isDynamicDim(da) || !bType.isDynamicDim(db))
    return aType.getDimSize(da) == bType.getDimSize(db);
  return dimSource(a, da) == dimSource(b, db);
}

Value raise::createTranspose(PatternRewriter &rewriter, Location loc, Value x,
                             ArrayRef<int64_t> perm) {
  SmallVector<int64_t> total(perm);
  Value source = x;
  auto inner = x.getDefiningOp<onnx::NodeOp>();
  if (inner && inner.isDefaultDomain() && inner.getOpType() == "Transpose" &&
      inner.getInputs().size() == 1 && !keepsTurnedLayout(inner, perm)) {
    if (std::optional<SmallVector<int64_t>> first = transposePerm(inner);
        first && first->size() == perm.size()) {
      for (auto [i, axis] : llvm::enumerate(perm))
        total[i] = (*first)[axis];
      source = inner.getInputs()[0];
    }
  }
  if (llvm::equal(total, llvm::seq<int64_t>(0, total.size())))
    return source;
  onnx::OnnxBuilder b(rewriter, loc, elementTypeOf(source.getType()));
  return b.node("Transpose", {source}, permutedType(source.getType(), total),
                {b.attr("perm", ArrayRef<int64_t>(total))});
}

/// Rounds of merging turned values and normalizing again; each settles
/// every pair that the one before left.
static constexpr int kTurnedValueRounds = 4;

/// The greedy driver's settings for `graph`. Each rewrite moves a view or
/// transpose one node towards the inputs, so a few per node suffice; the
/// bound keeps a pathological graph from growing without end.
static GreedyRewriteConfig boundedConfig(onnx::GraphOp graph) {
  int64_t nodes = 0;
  graph.walk([&](onnx::NodeOp) { ++nodes; });
  GreedyRewriteConfig config;
  config.setMaxNumRewrites(8 * nodes + 1024);
  config.enableFolding(false);
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  return config;
}

void raise::foldShapeArithmetic(onnx::GraphOp graph) {
  RewritePatternSet patterns(graph.getContext());
  populateShapeArithmeticFolding(patterns);
  populateTypeNormalizations(patterns);
  (void)applyPatternsGreedily(graph, std::move(patterns), boundedConfig(graph));
}

SmallVector<std::string> raise::fixSizes(onnx::GraphOp graph) {
  SmallVector<std::string> fixed;
  Block &body = graph.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.hasStaticShape())
      continue;
    SmallVector<int64_t> shape(type.getShape());
    for (auto [dim, size] : llvm::enumerate(shape)) {
      if (!ShapedType::isDynamic(size))
        continue;
      size = dim == 0 ? kFixedBatch : kFixedLength;
      fixed.push_back(graph.getInputName(arg.getArgNumber()).str() + "[" +
                      std::to_string(dim) + "] = " + std::to_string(size));
    }
    arg.setType(type.clone(shape));
  }
  if (fixed.empty())
    return fixed;
  graph.setFunctionType(
      FunctionType::get(graph.getContext(), body.getArgumentTypes(),
                        graph.getFunctionType().getResults()));
  graph->setAttr(kSizesFixedAttr, UnitAttr::get(graph.getContext()));
  foldShapeArithmetic(graph);
  return fixed;
}

void raise::normalizeGraph(onnx::GraphOp graph) {
  MLIRContext *context = graph.getContext();
  RewritePatternSet patterns(context);
  populateConstantNormalizations(patterns);
  populateViewNormalizations(patterns);
  populateContractionNormalizations(patterns);
  populateAssemblyNormalizations(patterns);
  populateArithmeticNormalizations(patterns);
  populateLoopNormalizations(patterns);
  populateTypeNormalizations(patterns);
  GreedyRewriteConfig config = boundedConfig(graph);
  // Pushed transposes can leave one value spelled both turned and as a
  // Transpose (MergeTurnedValues.cpp); once one, its readers merge and push
  // on, which can leave the next such pair.
  FrozenRewritePatternSet frozen(std::move(patterns));
  loosenRankChangingCarriedTypes(graph);
  mergeEqualNodes(graph);
  (void)applyPatternsGreedily(graph, frozen, config);
  for (int round = 0; round < kTurnedValueRounds; ++round) {
    mergeEqualNodes(graph);
    if (!mergeTurnedValues(graph))
      break;
    (void)applyPatternsGreedily(graph, frozen, config);
  }
  mergeEqualNodes(graph);
}

namespace {
/// Two nodes compute the same value when everything but their names is
/// equal: op, domain, attributes, operands and result types.
struct EqualNodes : llvm::DenseMapInfo<Operation *> {
  static unsigned getHashValue(const Operation *op) {
    auto node = cast<onnx::NodeOp>(const_cast<Operation *>(op));
    return llvm::hash_combine(
        node.getOpTypeAttr().getAsOpaquePointer(),
        node.getAttrsAttr() ? node.getAttrsAttr().getAsOpaquePointer()
                            : nullptr,
        llvm::hash_combine_range(node->getOperands().begin(),
                                 node->getOperands().end()));
  }
  static bool isEqual(const Operation *lhs, const Operation *rhs) {
    if (lhs == rhs)
      return true;
    if (lhs == getEmptyKey() || lhs == getTombstoneKey() ||
        rhs == getEmptyKey() || rhs == getTombstoneKey())
      return false;
    auto a = cast<onnx::NodeOp>(const_cast<Operation *>(lhs));
    auto b = cast<onnx::NodeOp>(const_cast<Operation *>(rhs));
    return a.getOpTypeAttr() == b.getOpTypeAttr() &&
           a.getDomainAttr() == b.getDomainAttr() &&
           a.getAttrsAttr() == b.getAttrsAttr() &&
           a->getOperands() == b->getOperands() &&
           a->getResultTypes() == b->getResultTypes();
  }
};
} // namespace

/// An integer tensor of a few elements: indices, bounds and axes.
static bool isSmallIndexTensor(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && shaped.hasStaticShape() && shaped.getNumElements() <= 16 &&
         isa<IntegerType>(shaped.getElementType());
}

/// Replaces each pure node by the first equal node of its block (MLIR's CSE
/// would keep both: ONNX names its outputs, so no two nodes' attributes
/// are equal). The first one keeps its name.
void raise::mergeEqualNodes(onnx::GraphOp graph) {
  // Outer blocks first: a Loop body's nodes are equal only once the values
  // they read from outside are merged.
  SmallVector<Block *> blocks;
  graph->walk<WalkOrder::PreOrder>(
      [&](Block *block) { blocks.push_back(block); });
  for (Block *block : blocks) {
    llvm::DenseSet<Operation *, EqualNodes> seen;
    // A constant that holds the same numbers as an earlier one is that one
    // (torch folds the transpose of a weight into a new initializer, which
    // the normalization's own fold then meets).
    llvm::DenseMap<llvm::hash_code, SmallVector<Value, 1>> constants;
    llvm::DenseMap<Attribute, Value> indices;
    auto sameConstant = [&](Value value) -> Value {
      auto bytes = constantBytes(value);
      if (!bytes)
        return nullptr;
      llvm::hash_code key = llvm::hash_combine(
          bytes->first.getAsOpaquePointer(),
          llvm::hash_combine_range(bytes->second.begin(), bytes->second.end()));
      SmallVector<Value, 1> &bucket = constants[key];
      for (Value earlier : bucket) {
        auto other = constantBytes(earlier);
        if (other && other->first == bytes->first &&
            other->second == bytes->second &&
            earlier.getType() == value.getType())
          return earlier;
      }
      bucket.push_back(value);
      return nullptr;
    };
    for (Operation &op : llvm::make_early_inc_range(*block)) {
      auto node = dyn_cast<onnx::NodeOp>(op);
      bool constant =
          isa<onnx::InitializerOp>(op) ||
          (node && node.isDefaultDomain() && node.getOpType() == "Constant");
      if (constant && op.getNumResults() == 1) {
        // Only Constant nodes go: two initializers that happen to hold the
        // same numbers are the model's own (and stay as it has them).
        Value earlier = sameConstant(op.getResult(0));
        if (earlier && node) {
          node->replaceAllUsesWith(ValueRange{earlier});
          node->erase();
          continue;
        }
        // A small integer initializer (a Slice bound, an axis) is read as the
        // earlier one with its numbers, so that the nodes reading either are
        // equal; the initializer itself stays.
        auto init = dyn_cast<onnx::InitializerOp>(op);
        if (init && isSmallIndexTensor(init.getType())) {
          auto [it, first] = indices.try_emplace(init.getValue(), init);
          if (!first)
            init.getResult().replaceAllUsesWith(it->second);
        }
      }
      if (!node || node->getNumRegions() != 0 || !isMemoryEffectFree(node))
        continue;
      auto [it, inserted] = seen.insert(node);
      if (inserted)
        continue;
      node->replaceAllUsesWith(*it);
      node->erase();
    }
  }
}

namespace {
struct TTTNormalizeONNXPass
    : public mlir::ttt::impl::TTTNormalizeONNXBase<TTTNormalizeONNXPass> {
  void runOnOperation() override {
    SmallVector<onnx::GraphOp> graphs;
    getOperation()->walk([&](onnx::GraphOp graph) { graphs.push_back(graph); });
    for (onnx::GraphOp graph : graphs)
      normalizeGraph(graph);
  }
};
} // namespace
