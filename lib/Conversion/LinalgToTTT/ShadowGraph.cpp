//===- ShadowGraph.cpp - a linalg program as an ONNX graph ----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ShadowGraph.h"
#include "EinsumPolynomial.h"

#include "../ONNXToTTT/AssumedSizes.h"

#include "ttt/Dialect/ONNX/IR/ONNXAttrs.h"
#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

/// True if the value bounds of the function prove `size` to be size `d` of
/// `tensor` (`b * 2` of a `[b, 2, ..]` tensor viewed as `[b * 2, ..]`).
static bool provedEqual(Value size, Value tensor, int64_t d) {
  FailureOr<bool> equal = ValueBoundsConstraintSet::areEqual(
      ValueBoundsConstraintSet::Variable(size),
      ValueBoundsConstraintSet::Variable(tensor, d));
  return succeeded(equal) && *equal;
}

/// The tensor a loop-carried `tensor` starts as, if each iteration yields
/// it back written into (so that it keeps its sizes): a chunk loop's
/// output buffer.
static Value carriedFrom(Value tensor) {
  auto arg = dyn_cast<BlockArgument>(tensor);
  auto loop =
      arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : scf::ForOp();
  if (!loop || arg == loop.getInductionVar())
    return {};
  Value yielded = loop.getTiedLoopYieldedValue(arg)->get();
  while (auto insert = yielded.getDefiningOp<tensor::InsertSliceOp>())
    yielded = insert.getDest();
  return yielded == arg ? loop.getTiedLoopInit(arg)->get() : Value();
}

Value linalg_raise::sizeValueOf(Value tensor, int64_t d) {
  if (Value initial = carriedFrom(tensor))
    tensor = initial;
  while (auto result = dyn_cast<OpResult>(tensor)) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
    if (!dps || isa<tensor::InsertSliceOp>(result.getOwner()))
      break;
    tensor = dps.getTiedOpOperand(result)->get();
  }
  if (auto slice = tensor.getDefiningOp<tensor::ExtractSliceOp>())
    return slice.getType().getRank() == slice.getSourceType().getRank()
               ? dyn_cast<Value>(slice.getMixedSizes()[d])
               : Value();
  if (auto empty = tensor.getDefiningOp<tensor::EmptyOp>())
    return empty.getType().isDynamicDim(d) ? empty.getDynamicSize(d) : Value();
  if (auto expand = tensor.getDefiningOp<tensor::ExpandShapeOp>())
    return dyn_cast<Value>(expand.getMixedOutputShape()[d]);
  return {};
}

namespace {

/// The newest opset the raise writes its parallel form in.
constexpr int64_t kShadowOpset = 20;

bool isStaticFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         isa<FloatType>(tensor.getElementType());
}

/// A ranked tensor of floats whose dims may be dynamic: what a signature
/// and a loop may carry (the sequence length known only at run time).
bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// True if `value` is all zeros: a zero constant, or a fill of zero.
bool isZeroTensor(Value value) {
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  // A generic that yields its one input, a zero: torch-mlir's zeros of a
  // size known at run time (`torch.zeros(B, ..)`).
  if (auto generic = value.getDefiningOp<linalg::GenericOp>())
    return generic.getNumDpsInputs() == 1 &&
           generic.getBlock()->getTerminator()->getOperand(0) ==
               generic.getBlock()->getArgument(0) &&
           isZeroTensor(generic.getDpsInputs()[0]);
  return matchPattern(value, m_AnyZeroFloat());
}

class Translator {
public:
  Translator(ShadowGraph &shadow, OpBuilder &builder)
      : shadow(shadow), b(builder) {}

  void translate(Operation *op);
  /// The shadow of `value`; an opaque node's result if it has none yet.
  Value get(Value value);
  void map(Value original, Value node) {
    values[original] = node;
    if (auto result = dyn_cast<OpResult>(node))
      if (auto named = dyn_cast<onnx::NodeOp>(result.getOwner()))
        if (ArrayAttr outputs = named.getOutputsAttr())
          shadow.original[cast<StringAttr>(outputs[result.getResultNumber()])
                              .getValue()] = original;
  }

private:
  /// A node with one result of `type`, named so that it leads back.
  Value node(Location loc, StringRef opType, ValueRange inputs, Type type,
             ArrayRef<NamedAttribute> attrs = {}, StringRef domain = "") {
    std::string name = "t" + std::to_string(next++);
    DictionaryAttr dict =
        attrs.empty() ? DictionaryAttr() : b.getDictionaryAttr(attrs);
    auto op =
        onnx::NodeOp::create(b, loc, TypeRange{type}, opType, domain, dict,
                             /*node_name=*/nullptr, b.getStrArrayAttr({name}),
                             /*doc_string=*/nullptr, inputs,
                             /*subgraphsCount=*/0);
    return op->getResult(0);
  }
  Value i64s(Location loc, ArrayRef<int64_t> values) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      b.getI64Type());
    return constant(loc, DenseElementsAttr::get(type, values));
  }
  Value constant(Location loc, DenseElementsAttr value) {
    return node(loc, "Constant", {}, value.getType(),
                {b.getNamedAttr("value", value)});
  }
  /// `x` as `to`, which has at most one dim of run-time size (the Reshape
  /// infers it: -1).
  Value reshape(Location loc, Value x, RankedTensorType to) {
    if (x.getType() == to)
      return x;
    SmallVector<int64_t> target(to.getShape());
    for (int64_t &size : target)
      if (ShapedType::isDynamic(size))
        size = -1;
    return node(loc, "Reshape", {x, i64s(loc, target)}, to);
  }
  /// A node of the opaque domain standing for `op`; `why` (its doc string)
  /// says why it is not translated, where that is known.
  void opaque(Operation *op, StringRef why = {});
  /// An expand_shape or collapse_shape with several dims of run-time size
  /// (a batch and a chunk length): a Reshape whose target copies each such
  /// dim that is its own group from the source's Shape, and infers the one
  /// such dim a merge or split leaves at most.
  Value viewOfRunTimeSizes(Operation *op);
  /// Before the outermost node being built: in the graph's own block,
  /// where what is built is seen by every Loop body and after it.
  void setInsertionAtGraphLevel();
  LogicalResult linalgOp(linalg::LinalgOp op);
  LogicalResult contraction(linalg::LinalgOp op);
  LogicalResult elementwise(linalg::LinalgOp op);
  /// The payload ops of `op` that compute `scalar`, as nodes over its
  /// iteration space (aligned operands); the ops from `stop` on are not
  /// translated, nor the operands only `stop` reads. Null if some op or
  /// operand has no node.
  Value payload(linalg::LinalgOp op, Value scalar, Operation *stop);
  /// A payload that only reads one element of a captured tensor at the
  /// loop's indices or constant ones (torch-mlir's index_select and
  /// select): a Slice of the constant indices laid out on the loop dims.
  LogicalResult gather(linalg::LinalgOp op);
  /// A payload that yields one loop index (torch-mlir's arange): the
  /// constant it is, when small.
  LogicalResult iota(linalg::LinalgOp op);
  LogicalResult reduction(linalg::LinalgOp op);
  /// `operand` of `op` laid out on the loop dims in order, of rank
  /// `numLoops`, with 1 for the dims its map does not use.
  Value aligned(linalg::LinalgOp op, OpOperand &operand);
  LogicalResult extractSlice(tensor::ExtractSliceOp op);
  LogicalResult insertSlices(tensor::InsertSliceOp op);
  /// An insert_slice at a computed offset of one axis (or, with
  /// `constantOffset`, a constant one): a ScatterND of the window
  /// `base + offset * e_axis` (what a Loop's buffer writes are).
  LogicalResult insertAtOffset(tensor::InsertSliceOp op, bool constantOffset);
  LogicalResult indexArithmetic(Operation *op);
  /// `tensor.dim` of a constant dim: the constant for a static size, else
  /// `Gather(Shape(x), d)`, as a scripted export reads a length.
  LogicalResult dim(tensor::DimOp op);
  /// A `tensor.empty` with run-time sizes as zeros of its shape: its
  /// values are unspecified, so zeros are one of the values it may hold,
  /// and the shape leads the raise back to the lengths it was made of.
  LogicalResult emptyOfRunTimeSize(tensor::EmptyOp op);
  /// `affine.apply`, `affine.min` and `affine.max` of sums of multiples of
  /// their operands: integer nodes (a chunk's size min(C, T - i)).
  LogicalResult affineIndex(Operation *op);
  Value affineExpr(AffineExpr expr, ValueRange dims, ValueRange symbols,
                   Location loc);
  /// An insert_slice of a window of run-time size at an offset of one axis
  /// (computed, or with `constantOffset` also a constant one):
  /// a ScatterND at the grid of the buffer's Range of each leading axis,
  /// the offset axis's cut to the window (how a scripted `out[:, :, s:e] =
  /// o` writes).
  LogicalResult insertWindowOfRunTimeSize(tensor::InsertSliceOp op,
                                          bool constantOffset);
  /// The [1]-shaped start of a window at `offset`, and its end after
  /// `size` (each a constant or a value).
  std::pair<Value, Value> window(OpFoldResult offset, OpFoldResult size,
                                 Location loc);
  /// The trip count of a loop whose bounds are known only at run time:
  /// ceil((ub - lb) / step) as integer nodes, for a constant positive step.
  Value tripCount(scf::ForOp loop, int64_t step);
  /// scf.for with constant bounds -> a Loop of (ub - lb) / step trips whose
  /// body computes the induction variable as lb + iteration * step.
  LogicalResult forLoop(scf::ForOp loop);
  Type i64Scalar() { return RankedTensorType::get({}, b.getI64Type()); }
  /// The Shape of a ranked shadow tensor, and one size of it as a scalar:
  /// `Gather(Shape(x), d)`, as a scripted export reads a length.
  Value shapeOf(Location loc, Value x) {
    auto rank = cast<RankedTensorType>(x.getType()).getRank();
    return node(loc, "Shape", {x},
                RankedTensorType::get({rank}, b.getI64Type()));
  }
  Value sizeOf(Location loc, Value shape, int64_t d) {
    return node(loc, "Gather", {shape, i64Scalar(loc, d)}, i64Scalar(),
                {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
  }
  Value i64Scalar(Location loc, int64_t value) {
    return constant(
        loc, DenseElementsAttr::get(cast<ShapedType>(i64Scalar()), value));
  }
  /// A name that leads back to `original`, for a node that is not its own.
  std::string nameFor(Value original) {
    std::string name = "t" + std::to_string(next++);
    shadow.original[name] = original;
    return name;
  }
  /// The shape of `op`'s result as an i64 vector: a constant when it is
  /// static, else the Shape of its init, which has the result's sizes.
  Value resultShape(Location loc, linalg::LinalgOp op) {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (type.hasStaticShape())
      return i64s(loc, type.getShape());
    return shapeOf(loc, get(op.getDpsInits()[0]));
  }

  ShadowGraph &shadow;
  OpBuilder &b;
  llvm::DenseMap<Value, Value> values;
  int64_t next = 0;
};

Value Translator::viewOfRunTimeSizes(Operation *op) {
  Value source = op->getOperand(0);
  auto to = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<ReassociationIndices> groups;
  bool expand = isa<tensor::ExpandShapeOp>(op);
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(op))
    groups = e.getReassociationIndices();
  else
    groups = cast<tensor::CollapseShapeOp>(op).getReassociationIndices();
  // The source dim each result dim is alone with in its group, if any.
  SmallVector<std::optional<int64_t>> copyOf(to.getRank());
  for (auto [g, group] : llvm::enumerate(groups))
    if (group.size() == 1)
      copyOf[expand ? group[0] : static_cast<int64_t>(g)] =
          expand ? static_cast<int64_t>(g) : group[0];
  // A Reshape infers one dim at most.
  if (llvm::count_if(llvm::seq<int64_t>(0, to.getRank()), [&](int64_t d) {
        return to.isDynamicDim(d) && !copyOf[d];
      }) > 1)
    return {};
  Location loc = op->getLoc();
  Value x = get(source);
  Value shape;
  Type one = RankedTensorType::get({1}, b.getI64Type());
  SmallVector<Value> pieces;
  for (int64_t d = 0; d < to.getRank(); ++d) {
    if (!to.isDynamicDim(d)) {
      pieces.push_back(i64s(loc, {to.getDimSize(d)}));
      continue;
    }
    if (!copyOf[d]) {
      pieces.push_back(i64s(loc, {-1}));
      continue;
    }
    if (!shape)
      shape = shapeOf(loc, x);
    pieces.push_back(node(loc, "Unsqueeze",
                          {sizeOf(loc, shape, *copyOf[d]), i64s(loc, {0})},
                          one));
  }
  Value target = node(loc, "Concat", pieces,
                      RankedTensorType::get({to.getRank()}, b.getI64Type()),
                      {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
  return node(loc, "Reshape", {x, target}, to);
}

void Translator::setInsertionAtGraphLevel() {
  if (Operation *inside = b.getInsertionBlock()->getParentOp();
      !isa<onnx::GraphOp>(inside)) {
    while (!isa<onnx::GraphOp>(inside->getParentOp()))
      inside = inside->getParentOp();
    b.setInsertionPoint(inside);
  }
}

Value Translator::get(Value value) {
  auto it = values.find(value);
  if (it != values.end())
    return it->second;
  // Captured scalars and values of ops the walk has not seen (their op is
  // opaque or defines them later) get an opaque placeholder.
  Type type = value.getType();
  Location loc = value.getLoc();
  // They are remembered, so they go in the graph's own block, before the
  // node being built: a Loop body's nodes are not seen after the Loop.
  OpBuilder::InsertionGuard guard(b);
  setInsertionAtGraphLevel();
  if (auto tensor = dyn_cast<RankedTensorType>(type); !tensor) {
    if (isa<FloatType, IntegerType, IndexType>(type)) {
      Type element = isa<IndexType>(type) ? b.getI64Type() : type;
      type = RankedTensorType::get({}, element);
      if (Attribute attr; matchPattern(value, m_Constant(&attr))) {
        if (auto f = dyn_cast<FloatAttr>(attr))
          return values[value] = constant(
                     loc, DenseElementsAttr::get(cast<ShapedType>(type), f));
        if (auto i = dyn_cast<IntegerAttr>(attr))
          return values[value] = constant(
                     loc,
                     DenseElementsAttr::get(cast<ShapedType>(type),
                                            static_cast<int64_t>(i.getInt())));
      }
    } else {
      type = onnx::UnknownType::get(b.getContext());
    }
  }
  Value placeholder =
      node(loc, "Value", {}, type, {}, raise::kUntranslatedDomain);
  values[value] = placeholder;
  return placeholder;
}

void Translator::opaque(Operation *op, StringRef why) {
  ++shadow.opaque;
  SmallVector<Value> inputs;
  for (Value operand : op->getOperands())
    inputs.push_back(get(operand));
  SmallVector<Type> types;
  for (Type type : op->getResultTypes())
    types.push_back(isa<RankedTensorType>(type)
                        ? type
                        : onnx::UnknownType::get(b.getContext()));
  SmallVector<Attribute> names;
  for (size_t i = 0; i < types.size(); ++i)
    names.push_back(b.getStringAttr("t" + std::to_string(next++)));
  auto node = onnx::NodeOp::create(
      b, op->getLoc(), types, op->getName().getStringRef(),
      raise::kUntranslatedDomain,
      /*attrs=*/nullptr, /*node_name=*/nullptr, b.getArrayAttr(names),
      why.empty() ? StringAttr() : b.getStringAttr(why), inputs,
      /*subgraphsCount=*/0);
  for (auto [result, shadowResult] :
       llvm::zip(op->getResults(), node->getResults()))
    map(result, shadowResult);
}

void Translator::translate(Operation *op) {
  LogicalResult done = failure();
  StringRef why;
  Location loc = op->getLoc();
  if (auto constantOp = dyn_cast<arith::ConstantOp>(op)) {
    if (DenseElementsAttr dense = denseConstantValue(constantOp.getValue())) {
      map(constantOp, constant(loc, dense));
      done = success();
    } else if (!isa<ShapedType>(constantOp.getType())) {
      return; // a scalar: made a constant where it is read
    }
  } else if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    // Only ever an init whose values the ops do not read, or a buffer the
    // chunks fill; one of a run-time size says how long it is.
    if (empty.getType().hasStaticShape())
      return;
    done = emptyOfRunTimeSize(empty);
  } else if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    if (isa<RankedTensorType>(fill.getResult(0).getType())) {
      map(fill.getResult(0),
          node(loc, "Expand",
               {get(fill.getInputs()[0]),
                resultShape(loc, cast<linalg::LinalgOp>(*fill))},
               fill.getResult(0).getType()));
      done = success();
    }
  } else if (auto linalg = dyn_cast<linalg::LinalgOp>(op)) {
    done = linalgOp(linalg);
  } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    done = extractSlice(slice);
  } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    // A window at a constant offset is a piece of a chain of inserts that
    // tiles a fresh tensor (a Concat) if it can be, else a single write
    // (the chunk a loop leaves to the code after it).
    done = insertAtOffset(insert, /*constantOffset=*/false);
    if (failed(done))
      done = insertWindowOfRunTimeSize(insert, /*constantOffset=*/false);
    if (failed(done))
      done = insertSlices(insert);
    if (failed(done))
      done = insertAtOffset(insert, /*constantOffset=*/true);
    if (failed(done))
      done = insertWindowOfRunTimeSize(insert, /*constantOffset=*/true);
  } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
    done = forLoop(loop);
  } else if (auto dimOp = dyn_cast<tensor::DimOp>(op)) {
    done = dim(dimOp);
  } else if (isa<affine::AffineApplyOp, affine::AffineMinOp,
                 affine::AffineMaxOp>(op)) {
    done = affineIndex(op);
  } else if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::MinSIOp,
                 arith::MaxSIOp, arith::DivSIOp, arith::DivUIOp,
                 arith::IndexCastOp, arith::CmpIOp, arith::SelectOp>(op)) {
    done = indexArithmetic(op);
  } else if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    SmallVector<Value> inputs;
    for (Value input : concat.getInputs())
      inputs.push_back(get(input));
    map(concat,
        node(loc, "Concat", inputs, concat.getType(),
             {b.getNamedAttr("axis", b.getI64IntegerAttr(concat.getDim()))}));
    done = success();
  } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
    auto to = cast<RankedTensorType>(op->getResult(0).getType());
    if (to.getNumDynamicDims() <= 1) {
      map(op->getResult(0), reshape(loc, get(op->getOperand(0)), to));
      done = success();
    } else if (Value view = viewOfRunTimeSizes(op)) {
      map(op->getResult(0), view);
      done = success();
    } else {
      why = "it splits or merges several dims of run-time size";
    }
  } else if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    map(cast, get(cast.getSource()));
    done = success();
  }
  if (failed(done))
    opaque(op, why);
  else
    ++shadow.translated;
}

LogicalResult Translator::linalgOp(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1)
    return failure();
  // An Einsum and the nodes of a payload on operands already laid on the
  // loop dims need no static shape: a chunk of run-time size is read too.
  auto allParallel = [&] {
    return llvm::all_of(op.getIteratorTypesArray(), [](utils::IteratorType t) {
      return t == utils::IteratorType::parallel;
    });
  };
  if (isFloatTensor(op->getResult(0).getType()) &&
      !isStaticFloatTensor(op->getResult(0).getType())) {
    if (linalg::isaContractionOpInterface(op))
      return contraction(op);
    if (!allParallel())
      return reduction(op);
    return succeeded(gather(op)) ? success() : elementwise(op);
  }
  if (!isStaticFloatTensor(op->getResult(0).getType())) {
    // Integer and boolean tensors: index arithmetic (torch-mlir's masks).
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape() ||
        !isa<IntegerType>(type.getElementType()) || !allParallel())
      return failure();
    return succeeded(iota(op)) ? success() : elementwise(op);
  }
  if (linalg::isaContractionOpInterface(op))
    return contraction(op);
  if (allParallel())
    return succeeded(gather(op)) ? success() : elementwise(op);
  return reduction(op);
}

/// Letters for an einsum equation, one per loop dim.
static std::string letters(AffineMap map) {
  std::string text;
  for (AffineExpr expr : map.getResults())
    text += static_cast<char>(
        'a' + static_cast<int>(cast<AffineDimExpr>(expr).getPosition()));
  return text;
}

LogicalResult Translator::contraction(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (op.getNumDpsInputs() != 2 || op.getNumLoops() > 26 ||
      llvm::any_of(maps,
                   [](AffineMap m) { return !m.isProjectedPermutation(); }))
    return failure();
  // The payload must be `out + a * b` (mul then add, in either order).
  Block *body = op.getBlock();
  Operation *yielded = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!yielded || !isa<arith::AddFOp>(yielded))
    return failure();
  std::string equation =
      letters(maps[0]) + "," + letters(maps[1]) + "->" + letters(maps[2]);
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  Value product = node(
      loc, "Einsum", {get(op.getDpsInputs()[0]), get(op.getDpsInputs()[1])},
      type, {b.getNamedAttr("equation", b.getStringAttr(equation))});
  Value init = op.getDpsInits()[0];
  map(op->getResult(0), isZeroTensor(init)
                            ? product
                            : node(loc, "Add", {get(init), product}, type));
  return success();
}

Value Translator::aligned(linalg::LinalgOp op, OpOperand &operand) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  Value value = get(operand.get());
  auto type = dyn_cast<RankedTensorType>(operand.get().getType());
  // Already laid on the loop dims, whatever its sizes (a chunk of run-time
  // size too).
  if (type && map.isIdentity())
    return value;
  // Several dims of run-time size (a batch and a chunk length) only in a
  // permutation of the loop dims: a Transpose, with no view to build.
  if (!type || (type.getNumDynamicDims() > 1 &&
                !(map.isPermutation() && map.getNumDims() == op.getNumLoops())))
    return nullptr;
  Location loc = op.getLoc();
  // A unit dim read at the constant index 0 is a broadcast (torch-mlir's
  // spelling of numpy broadcasting): drop it, the loop dims it stood for
  // become 1 below.
  SmallVector<int64_t> kept, keptShape;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (isa<AffineDimExpr>(expr)) {
      kept.push_back(i);
      keptShape.push_back(type.getDimSize(i));
      continue;
    }
    auto index = dyn_cast<AffineConstantExpr>(expr);
    if (!index || index.getValue() != 0 || type.getDimSize(i) != 1)
      return nullptr;
  }
  auto position = [&](int64_t k) {
    return cast<AffineDimExpr>(map.getResult(kept[k])).getPosition();
  };
  llvm::SmallDenseSet<unsigned> seen;
  for (size_t k = 0; k < kept.size(); ++k)
    if (!seen.insert(position(k)).second)
      return nullptr; // a diagonal
  // The operand's dims in the order of the loop dims they index.
  SmallVector<int64_t> perm(kept.size());
  llvm::iota_range<int64_t> order(0, kept.size(), false);
  std::copy(order.begin(), order.end(), perm.begin());
  llvm::sort(perm,
             [&](int64_t x, int64_t y) { return position(x) < position(y); });
  SmallVector<int64_t> turnedShape;
  for (int64_t d : perm)
    turnedShape.push_back(keptShape[d]);
  if (!llvm::equal(perm, order))
    value =
        node(loc, "Transpose",
             {reshape(loc, value,
                      RankedTensorType::get(keptShape, type.getElementType()))},
             RankedTensorType::get(turnedShape, type.getElementType()),
             {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
  SmallVector<int64_t> shape(op.getNumLoops(), 1);
  for (size_t k = 0; k < kept.size(); ++k)
    shape[position(k)] = keptShape[k];
  return reshape(loc, value,
                 RankedTensorType::get(shape, type.getElementType()));
}

/// The shape numpy broadcasting gives two shapes of one rank.
static SmallVector<int64_t> broadcast(ArrayRef<int64_t> a,
                                      ArrayRef<int64_t> b) {
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(a, b))
    shape.push_back(x == 1 ? y : x);
  return shape;
}

/// The loop dim a payload value reads: `linalg.index d`, maybe cast.
static std::optional<int64_t> loopIndexOf(Value value) {
  if (auto cast = value.getDefiningOp<arith::IndexCastOp>())
    value = cast.getIn();
  if (auto index = value.getDefiningOp<linalg::IndexOp>())
    return index.getDim();
  return std::nullopt;
}

/// The loop dim d of `size == 1 ? 0 : linalg.index d`: torch-mlir's read of
/// a dim of run-time size that numpy broadcasting may stretch from 1.
static std::optional<int64_t> broadcastIndexOf(Value value) {
  auto select = value.getDefiningOp<arith::SelectOp>();
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpIOp>()
                    : arith::CmpIOp();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq ||
      !matchPattern(select.getTrueValue(), m_Zero()) ||
      !(matchPattern(cmp.getRhs(), m_One()) ||
        matchPattern(cmp.getLhs(), m_One())))
    return std::nullopt;
  return loopIndexOf(select.getFalseValue());
}

namespace {
/// An `arith.select` of a payload as the ONNX node it computes.
struct SelectForm {
  StringRef opType;
  SmallVector<Value> operands; // payload values
  int64_t k = 0;               // Trilu's diagonal
  bool upper = false;          // Trilu's triangle
};
} // namespace

/// select(a < b, b, a) is Max(a, b) and select(a < b, a, b) Min(a, b) (the
/// clamps torch-mlir writes; they differ from Max and Min only on NaN);
/// select(col <= row, x, 0) over the two innermost loop dims is
/// Trilu(x, upper = 0) (a causal mask), with the other comparisons the other
/// diagonals and triangles.
static std::optional<SelectForm> selectForm(arith::SelectOp select,
                                            unsigned numLoops) {
  Value t = select.getTrueValue(), f = select.getFalseValue();
  if (auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>()) {
    Value a = cmp.getLhs(), b = cmp.getRhs();
    switch (cmp.getPredicate()) {
    case arith::CmpFPredicate::OLT:
    case arith::CmpFPredicate::ULT:
    case arith::CmpFPredicate::OLE:
    case arith::CmpFPredicate::ULE:
      break;
    case arith::CmpFPredicate::OGT:
    case arith::CmpFPredicate::UGT:
    case arith::CmpFPredicate::OGE:
    case arith::CmpFPredicate::UGE:
      std::swap(a, b);
      break;
    default:
      return std::nullopt;
    }
    // Now the condition is a < b (or a <= b).
    if (t == b && f == a)
      return SelectForm{"Max", {a, b}};
    if (t == a && f == b)
      return SelectForm{"Min", {a, b}};
    return std::nullopt;
  }
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || numLoops < 2)
    return std::nullopt;
  std::optional<int64_t> lhs = loopIndexOf(cmp.getLhs());
  std::optional<int64_t> rhs = loopIndexOf(cmp.getRhs());
  int64_t row = numLoops - 2, col = numLoops - 1;
  arith::CmpIPredicate predicate = cmp.getPredicate();
  if (lhs == row && rhs == col)
    predicate = swapped(predicate);
  else if (lhs != col || rhs != row)
    return std::nullopt;
  // Now the condition compares col with row.
  Value kept = t;
  if (matchPattern(t, m_AnyZeroFloat())) {
    kept = f;
    predicate = arith::invertPredicate(predicate);
  } else if (!matchPattern(f, m_AnyZeroFloat())) {
    return std::nullopt;
  }
  switch (predicate) {
  case arith::CmpIPredicate::sle:
  case arith::CmpIPredicate::ule:
    return SelectForm{"Trilu", {kept}, 0, false};
  case arith::CmpIPredicate::slt:
  case arith::CmpIPredicate::ult:
    return SelectForm{"Trilu", {kept}, -1, false};
  case arith::CmpIPredicate::sge:
  case arith::CmpIPredicate::uge:
    return SelectForm{"Trilu", {kept}, 0, true};
  case arith::CmpIPredicate::sgt:
  case arith::CmpIPredicate::ugt:
    return SelectForm{"Trilu", {kept}, 1, true};
  default:
    return std::nullopt;
  }
}

LogicalResult Translator::gather(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto extract =
      body->getTerminator()->getOperand(0).getDefiningOp<tensor::ExtractOp>();
  auto source = extract
                    ? dyn_cast<RankedTensorType>(extract.getTensor().getType())
                    : RankedTensorType();
  if (!extract || extract->getBlock() != body || !source ||
      extract.getTensor().getParentBlock() == body)
    return failure();
  // Per source dim: the loop dim it follows (maybe through torch-mlir's
  // broadcast index), or the constant it is cut at. A dim of run-time size
  // can only be followed.
  SmallVector<std::optional<int64_t>> loopDim;
  SmallVector<int64_t> starts, ends, axes;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  for (auto [d, index] : llvm::enumerate(extract.getIndices())) {
    int64_t size = source.getDimSize(d);
    std::optional<int64_t> dim = loopIndexOf(index);
    if (!dim && (ShapedType::isDynamic(size) || size == 1))
      dim = broadcastIndexOf(index);
    if (dim) {
      int64_t extent = type.getDimSize(*dim);
      if (!ShapedType::isDynamic(size) && !ShapedType::isDynamic(extent) &&
          size != extent)
        return failure();
      loopDim.push_back(dim);
      continue;
    }
    if (ShapedType::isDynamic(size))
      return failure();
    std::optional<int64_t> at = getConstantIntValue(index);
    // An index read from a one-element constant input.
    Value read = index;
    if (auto cast = read.getDefiningOp<arith::IndexCastOp>())
      read = cast.getIn();
    if (auto arg = dyn_cast<BlockArgument>(read);
        !at && arg && arg.getOwner() == body &&
        arg.getArgNumber() < op.getNumDpsInputs()) {
      DenseIntElementsAttr values;
      if (matchPattern(op.getDpsInputs()[arg.getArgNumber()],
                       m_Constant(&values)) &&
          values.getNumElements() == 1)
        at = (*values.begin()).getSExtValue();
    }
    if (!at || *at < 0 || *at >= size)
      return failure();
    loopDim.push_back(std::nullopt);
    if (size == 1)
      continue; // the whole of a unit dim
    starts.push_back(*at);
    ends.push_back(*at + 1);
    axes.push_back(d);
  }
  // The loop dims the source follows, each once, in increasing order after
  // a transpose.
  SmallVector<int64_t> followed, followedShape;
  for (auto [d, dim] : llvm::enumerate(loopDim))
    if (dim) {
      followed.push_back(d);
      followedShape.push_back(source.getDimSize(d));
    }
  SmallVector<int64_t> perm(followed.size());
  for (size_t i = 0; i < perm.size(); ++i)
    perm[i] = i;
  llvm::sort(perm, [&](int64_t x, int64_t y) {
    return *loopDim[followed[x]] < *loopDim[followed[y]];
  });
  for (size_t i = 1; i < perm.size(); ++i)
    if (*loopDim[followed[perm[i]]] == *loopDim[followed[perm[i - 1]]])
      return failure();
  SmallVector<int64_t> shape(op.getNumLoops(), 1);
  for (int64_t i : perm)
    shape[*loopDim[followed[i]]] = source.getDimSize(followed[i]);
  // A dim of run-time size is read as the result's, which the raise asserts
  // (the result's static size could be a prefix of it, which the reading
  // does not take). A Reshape infers one such dim at most.
  bool reordered = !axes.empty() || !llvm::is_sorted(perm) ||
                   followed.size() != loopDim.size() ||
                   source.getRank() != type.getRank();
  if (reordered && llvm::count_if(shape, ShapedType::isDynamic) > 1)
    return failure();
  // (source dim, result dim) pairs of run-time size read as equal.
  SmallVector<std::pair<int64_t, int64_t>> assumed;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (!ShapedType::isDynamic(size))
      continue;
    if (!type.isDynamicDim(d))
      return failure();
    int64_t from =
        llvm::find(loopDim, static_cast<int64_t>(d)) - loopDim.begin();
    Value sourceSize = sizeValueOf(extract.getTensor(), from);
    if (!sourceSize || sourceSize != sizeValueOf(op.getDpsInits()[0], d))
      assumed.push_back({from, static_cast<int64_t>(d)});
  }
  Location loc = op.getLoc();
  Type element = source.getElementType();
  Value value = get(extract.getTensor());
  if (!axes.empty()) {
    SmallVector<int64_t> cut(source.getShape());
    for (int64_t axis : axes)
      cut[axis] = 1;
    Value from = i64s(loc, starts);
    Value to = i64s(loc, ends);
    Value along = i64s(loc, axes);
    value = node(loc, "Slice", {value, from, to, along},
                 RankedTensorType::get(cut, element));
  }
  value = reshape(loc, value, RankedTensorType::get(followedShape, element));
  SmallVector<int64_t> turnedShape;
  for (int64_t i : perm)
    turnedShape.push_back(followedShape[i]);
  if (!llvm::is_sorted(perm))
    value = node(loc, "Transpose", {value},
                 RankedTensorType::get(turnedShape, element),
                 {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
  value = reshape(loc, value, RankedTensorType::get(shape, element));
  if (value.getType() != type)
    value = node(loc, "Expand", {value, resultShape(loc, op)}, type);
  if (!assumed.empty()) {
    // Names of their own: a shadow value's name leads to the last value
    // it was mapped to, which may be this read.
    std::string read = nameFor(op->getResult(0));
    std::string source = nameFor(extract.getTensor());
    std::string init = nameFor(op.getDpsInits()[0]);
    for (auto [from, to] : assumed)
      raise::assumeEqualSizes(shadow.graph, {source, from, init, to, read});
  }
  map(op->getResult(0), value);
  return success();
}

/// The ONNX comparison of an arith comparison, "" for the others.
static StringRef comparisonOpType(Operation &op) {
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::slt:
    case arith::CmpIPredicate::ult:
      return "Less";
    case arith::CmpIPredicate::sle:
    case arith::CmpIPredicate::ule:
      return "LessOrEqual";
    case arith::CmpIPredicate::sgt:
    case arith::CmpIPredicate::ugt:
      return "Greater";
    case arith::CmpIPredicate::sge:
    case arith::CmpIPredicate::uge:
      return "GreaterOrEqual";
    case arith::CmpIPredicate::eq:
      return "Equal";
    default:
      return "";
    }
  }
  switch (cast<arith::CmpFOp>(op).getPredicate()) {
  case arith::CmpFPredicate::OLT:
    return "Less";
  case arith::CmpFPredicate::OLE:
    return "LessOrEqual";
  case arith::CmpFPredicate::OGT:
    return "Greater";
  case arith::CmpFPredicate::OGE:
    return "GreaterOrEqual";
  case arith::CmpFPredicate::OEQ:
    return "Equal";
  default:
    return "";
  }
}

/// The TensorProto data type of a float element type.
static int64_t onnxElementType(Type element) {
  if (element.isInteger(1))
    return 9; // bool
  if (element.isInteger(32))
    return 6;
  if (element.isInteger(64))
    return 7;
  if (element.isF16())
    return 10;
  if (element.isBF16())
    return 16;
  if (element.isF64())
    return 11;
  return 1; // float
}

LogicalResult Translator::iota(linalg::LinalgOp op) {
  constexpr int64_t kMaxElements = 1 << 16;
  Block *body = op.getBlock();
  std::optional<int64_t> dim =
      loopIndexOf(body->getTerminator()->getOperand(0));
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!dim || op.getNumDpsInputs() != 0 ||
      !op.getIndexingMapsArray().back().isIdentity() ||
      type.getNumElements() > kMaxElements)
    return failure();
  auto elements = RankedTensorType::get(type.getShape(), b.getI64Type());
  SmallVector<int64_t> values(type.getNumElements());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t inner = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d > *dim; --d)
    inner *= shape[d];
  for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i)
    values[i] = (i / inner) % shape[*dim];
  Value result = constant(
      op.getLoc(), DenseElementsAttr::get(elements, ArrayRef<int64_t>(values)));
  if (type.getElementType() != b.getI64Type())
    result = node(op.getLoc(), "Cast", {result}, type,
                  {b.getNamedAttr("to", b.getI64IntegerAttr(onnxElementType(
                                            type.getElementType())))});
  map(op->getResult(0), result);
  return success();
}

LogicalResult Translator::elementwise(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!maps.back().isIdentity())
    return failure();
  Location loc = op.getLoc();
  Value result =
      payload(op, op.getBlock()->getTerminator()->getOperand(0), nullptr);
  if (!result)
    return failure();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (result.getType() != type)
    result =
        cast<RankedTensorType>(result.getType()).getRank() == type.getRank()
            ? node(loc, "Expand", {result, resultShape(loc, op)}, type)
            : Value();
  if (!result)
    return failure();
  map(op->getResult(0), result);
  return success();
}

Value Translator::payload(linalg::LinalgOp op, Value wanted, Operation *stop) {
  Block *body = op.getBlock();
  Location loc = op.getLoc();
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  llvm::DenseMap<Value, Value> scalars;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = body->getArgument(operand.getOperandNumber());
    if (llvm::all_of(arg.getUsers(),
                     [&](Operation *user) { return user == stop; }))
      continue;
    Value value = aligned(op, operand);
    if (!value)
      return {};
    scalars[arg] = value;
  }
  auto operandOf = [&](Value scalar) -> Value {
    auto it = scalars.find(scalar);
    if (it != scalars.end())
      return it->second;
    if (scalar.getParentBlock() == body)
      return nullptr;
    return get(scalar); // captured from outside the payload
  };
  for (Operation &inner : body->without_terminator()) {
    if (&inner == stop)
      break;
    StringRef opType =
        llvm::StringSwitch<StringRef>(inner.getName().getStringRef())
            .Case("arith.addf", "Add")
            .Case("arith.subf", "Sub")
            .Case("arith.mulf", "Mul")
            .Case("arith.divf", "Div")
            .Case("arith.negf", "Neg")
            .Case("arith.maximumf", "Max")
            .Case("arith.maxnumf", "Max")
            .Case("arith.minimumf", "Min")
            .Case("arith.minnumf", "Min")
            .Case("math.exp", "Exp")
            .Case("math.tanh", "Tanh")
            .Case("math.sqrt", "Sqrt")
            .Case("math.absf", "Abs")
            .Case("math.powf", "Pow")
            .Case("math.fpowi", "Pow")
            .Case("math.erf", "Erf")
            .Case("math.rsqrt", "Reciprocal(Sqrt)")
            .Cases({"arith.truncf", "arith.extf"}, "Cast")
            .Case("arith.addi", "Add")
            .Case("arith.subi", "Sub")
            .Case("arith.muli", "Mul")
            .Default("");
    // A float constant converted to the element type (torch-mlir keeps
    // Python scalars as f64) is that constant.
    if (FloatAttr converted;
        isa<arith::TruncFOp, arith::ExtFOp>(inner) &&
        matchPattern(inner.getOperand(0), m_Constant(&converted))) {
      scalars[inner.getResult(0)] = constant(
          loc, DenseElementsAttr::get(
                   RankedTensorType::get({}, element),
                   FloatAttr::get(element, converted.getValueAsDouble())));
      continue;
    }
    if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
      if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
        scalars[c] = constant(
            loc, DenseElementsAttr::get(
                     RankedTensorType::get({}, b.getI64Type()),
                     static_cast<int64_t>(i.getValue().getSExtValue())));
        continue;
      }
      auto f = dyn_cast<FloatAttr>(c.getValue());
      if (!f)
        return {};
      scalars[c] = constant(
          loc, DenseElementsAttr::get(RankedTensorType::get({}, element), f));
      continue;
    }
    // Index reads and comparisons are read where a select uses them; an
    // assertion (torch-mlir's division guard) computes no value.
    if (isa<linalg::IndexOp, cf::AssertOp>(inner) ||
        (isa<arith::IndexCastOp>(inner) && loopIndexOf(inner.getResult(0))))
      continue;
    // A comparison only a select reads is read with the select; one only
    // an assertion reads computes nothing.
    if (isa<arith::CmpFOp, arith::CmpIOp>(inner)) {
      if (llvm::all_of(inner.getUsers(), [](Operation *user) {
            return isa<arith::SelectOp, cf::AssertOp>(user);
          }))
        continue;
      opType = comparisonOpType(inner);
    }
    std::optional<SelectForm> form;
    SmallVector<Value> operands(inner.getOperands());
    if (auto select = dyn_cast<arith::SelectOp>(inner)) {
      form = selectForm(select, op.getNumLoops());
      Value condition = select.getCondition();
      if (form) {
        opType = form->opType;
        operands = form->operands;
      } else if (condition.getParentBlock() == body &&
                 !isa<BlockArgument>(condition)) {
        return {};
      } else {
        opType = "Where"; // a mask read from an input
      }
    }
    if (opType.empty() || inner.getNumResults() != 1)
      return {};
    SmallVector<Value> inputs;
    SmallVector<int64_t> shape;
    for (Value operand : operands) {
      Value input = operandOf(operand);
      if (!input)
        return {};
      // Aligned operands have the loop rank; scalars rank 0.
      ArrayRef<int64_t> dims =
          cast<RankedTensorType>(input.getType()).getShape();
      if (!dims.empty())
        shape =
            shape.empty() ? SmallVector<int64_t>(dims) : broadcast(shape, dims);
      inputs.push_back(input);
    }
    SmallVector<NamedAttribute> attrs;
    if (opType == "Trilu") {
      // The triangle is of the two innermost loop dims, which the kept
      // value must span.
      auto full = cast<RankedTensorType>(op->getResult(0).getType());
      if (shape.size() < 2 || shape.end()[-1] != full.getShape().back() ||
          shape.end()[-2] != full.getShape().end()[-2])
        return {};
      inputs.push_back(i64Scalar(loc, form->k));
      attrs.push_back(
          b.getNamedAttr("upper", b.getI64IntegerAttr(form->upper)));
    }
    if (opType == "Cast")
      attrs.push_back(
          b.getNamedAttr("to", b.getI64IntegerAttr(onnxElementType(element))));
    if (opType == "Reciprocal(Sqrt)") {
      Value root =
          node(loc, "Sqrt", inputs, RankedTensorType::get(shape, element));
      scalars[inner.getResult(0)] =
          node(loc, "Reciprocal", {root}, root.getType());
      continue;
    }
    Type resultElement = getElementTypeOrSelf(inner.getResult(0).getType());
    if (isa<IndexType>(resultElement))
      resultElement = b.getI64Type();
    scalars[inner.getResult(0)] =
        node(loc, opType, inputs, RankedTensorType::get(shape, resultElement),
             attrs);
  }
  return operandOf(wanted);
}

LogicalResult Translator::reduction(linalg::LinalgOp op) {
  // out[p] += f(in[p, r]): a sum over the reduction dims of one input or of
  // an elementwise function of it (torch-mlir's norm: |x|^2).
  Block *body = op.getBlock();
  Operation *yielded = body->getTerminator()->getOperand(0).getDefiningOp();
  BlockArgument accumulated = body->getArgument(1);
  if (op.getNumDpsInputs() != 1 || !yielded || !isa<arith::AddFOp>(yielded) ||
      !llvm::is_contained(yielded->getOperands(), accumulated) ||
      !accumulated.hasOneUse())
    return failure();
  Value addend = yielded->getOperand(0) == accumulated ? yielded->getOperand(1)
                                                       : yielded->getOperand(0);
  AffineMap out = op.getIndexingMapsArray().back();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> reduced;
  for (auto [d, kind] : llvm::enumerate(iterators))
    if (kind == utils::IteratorType::reduction)
      reduced.push_back(d);
  // The output indexes the parallel dims in order; it may keep a reduced
  // dim as a unit dim read at index 0 (torch-mlir's keepdim).
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<unsigned> indexed;
  for (auto [i, expr] : llvm::enumerate(out.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      indexed.push_back(dim.getPosition());
      continue;
    }
    auto index = dyn_cast<AffineConstantExpr>(expr);
    if (!index || index.getValue() != 0 || type.getDimSize(i) != 1)
      return failure();
  }
  SmallVector<unsigned> parallel;
  for (auto [d, kind] : llvm::enumerate(iterators))
    if (kind == utils::IteratorType::parallel)
      parallel.push_back(d);
  if (indexed != parallel)
    return failure();
  Value input = addend == body->getArgument(0)
                    ? aligned(op, *op.getDpsInputOperand(0))
                    : payload(op, addend, yielded);
  if (!input ||
      cast<RankedTensorType>(input.getType()).getRank() != op.getNumLoops())
    return failure();
  Location loc = op.getLoc();
  // Every reduced dim kept as a unit dim in its place is keepdims.
  bool keepdims = out.getNumResults() == op.getNumLoops();
  for (auto [d, expr] : llvm::enumerate(out.getResults()))
    keepdims &= iterators[d] == utils::IteratorType::parallel
                    ? isa<AffineDimExpr>(expr)
                    : isa<AffineConstantExpr>(expr);
  SmallVector<int64_t> kept;
  for (auto [d, size] :
       llvm::enumerate(cast<RankedTensorType>(input.getType()).getShape()))
    if (keepdims || iterators[d] == utils::IteratorType::parallel)
      kept.push_back(iterators[d] == utils::IteratorType::parallel ? size : 1);
  Value sum =
      reshape(loc,
              node(loc, "ReduceSum", {input, i64s(loc, reduced)},
                   RankedTensorType::get(kept, type.getElementType()),
                   {b.getNamedAttr("keepdims", b.getI64IntegerAttr(keepdims))}),
              type);
  Value init = op.getDpsInits()[0];
  map(op->getResult(0),
      isZeroTensor(init) ? sum : node(loc, "Add", {get(init), sum}, type));
  return success();
}

LogicalResult Translator::extractSlice(tensor::ExtractSliceOp op) {
  RankedTensorType source = op.getSourceType();
  // A static window of a tensor whose length is known at run time only
  // (a chunk of the sequence) is read too.
  if (!llvm::all_of(op.getStaticStrides(), [](int64_t s) { return s == 1; }))
    return failure();
  Location loc = op.getLoc();
  SmallVector<Value> starts, ends, cutSizes;
  SmallVector<int64_t> axes, cutAxes;
  for (auto [d, offset] : llvm::enumerate(op.getMixedOffsets())) {
    int64_t size = op.getStaticSizes()[d];
    std::optional<int64_t> start = getConstantIntValue(offset);
    // A window of run-time size on a dim of static size would be a guess.
    if (ShapedType::isDynamic(size) && !source.isDynamicDim(d))
      return failure();
    // The whole dim: its static size, or, of run-time size, its tensor.dim
    // or the size value the source was made with.
    auto dim = ShapedType::isDynamic(size)
                   ? op.getDynamicSize(d).getDefiningOp<tensor::DimOp>()
                   : tensor::DimOp();
    bool wholeSize =
        ShapedType::isDynamic(size)
            ? (dim && dim.getSource() == op.getSource() &&
               getConstantIntValue(dim.getIndex()) ==
                   static_cast<int64_t>(d)) ||
                  sizeValueOf(op.getSource(), d) == op.getDynamicSize(d) ||
                  provedEqual(op.getDynamicSize(d), op.getSource(), d)
            : size == source.getDimSize(d);
    if (start && *start == 0 && wholeSize)
      continue;
    // A cut to another tensor's size (keys cut to the queries' batch) is
    // the same in every chunk: sliced first, on its own, it leaves each
    // chunk a window of one cut tensor.
    if (start && *start == 0 && dim) {
      cutAxes.push_back(d);
      cutSizes.push_back(dim);
      continue;
    }
    auto [from, to] = window(offset, op.getMixedSizes()[d], loc);
    axes.push_back(d);
    starts.push_back(from);
    ends.push_back(to);
  }
  Value value = get(op.getSource());
  auto concat = [&](ArrayRef<Value> parts) {
    if (parts.size() == 1)
      return parts[0];
    return node(loc, "Concat", parts,
                RankedTensorType::get({static_cast<int64_t>(parts.size())},
                                      b.getI64Type()),
                {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
  };
  if (!cutAxes.empty()) {
    // Cut once, before a loop whose body slices chunks of the cut tensor,
    // when the tensor and the sizes are the function's own.
    auto topLevel = [&](Value v) {
      return isa<func::FuncOp>(v.getParentRegion()->getParentOp());
    };
    OpBuilder::InsertionGuard guard(b);
    if (topLevel(op.getSource()) && llvm::all_of(cutSizes, topLevel))
      setInsertionAtGraphLevel();
    SmallVector<Value> ends;
    Type one = RankedTensorType::get({1}, b.getI64Type());
    for (Value size : cutSizes)
      ends.push_back(node(loc, "Unsqueeze", {get(size), i64s(loc, {0})}, one));
    Value zeros = i64s(loc, SmallVector<int64_t>(cutAxes.size(), 0));
    value = node(loc, "Slice", {value, zeros, concat(ends), i64s(loc, cutAxes)},
                 source); // a cut dim is of run-time size
  }
  if (!axes.empty()) {
    SmallVector<int64_t> shape(op.getStaticSizes());
    value = node(loc, "Slice",
                 {value, concat(starts), concat(ends), i64s(loc, axes)},
                 RankedTensorType::get(shape, source.getElementType()));
  }
  map(op, reshape(loc, value, op.getType()));
  return success();
}

LogicalResult Translator::insertSlices(tensor::InsertSliceOp op) {
  // Only the last insert of a chain is translated, the whole chain at once:
  // windows of one axis that tile a fresh tensor are its Concat.
  if (llvm::all_of(
          op->getUsers(),
          [](Operation *user) { return isa<tensor::InsertSliceOp>(user); }) &&
      !op->use_empty())
    return success();
  RankedTensorType type = op.getType();
  struct Window {
    int64_t start, size;
    tensor::InsertSliceOp insert;
  };
  SmallVector<Window> windows;
  std::optional<int64_t> axis;
  // The fresh tensor the chain starts from: a dim of run-time size (a
  // dynamic batch) is whole in a window whose size is the tensor's own.
  Value root = op;
  while (auto insert = root.getDefiningOp<tensor::InsertSliceOp>())
    root = insert.getDest();
  Value dest = op;
  while (auto insert = dest.getDefiningOp<tensor::InsertSliceOp>()) {
    if (!insert.hasUnitStride())
      return failure();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      std::optional<int64_t> start =
          getConstantIntValue(insert.getMixedOffsets()[d]);
      int64_t size = insert.getStaticSizes()[d];
      if (start && *start == 0 && ShapedType::isDynamic(size) &&
          type.isDynamicDim(d) &&
          sizeValueOf(root, d) == insert.getDynamicSize(d))
        continue;
      if (!start || ShapedType::isDynamic(size) || type.isDynamicDim(d))
        return failure();
      if (*start == 0 && size == type.getDimSize(d))
        continue;
      if ((axis && *axis != d) ||
          (!windows.empty() && windows.back().insert == insert))
        return failure();
      axis = d;
      windows.push_back({*start, size, insert});
    }
    dest = insert.getDest();
  }
  if (!axis || !(dest.getDefiningOp<tensor::EmptyOp>() || isZeroTensor(dest)))
    return failure();
  llvm::sort(windows, [](const Window &x, const Window &y) {
    return x.start < y.start;
  });
  int64_t next = 0;
  Location loc = op.getLoc();
  SmallVector<Value> parts;
  for (Window &window : windows) {
    if (window.start != next)
      return failure();
    next += window.size;
    SmallVector<int64_t> shape(type.getShape());
    shape[*axis] = window.size;
    parts.push_back(
        reshape(loc, get(window.insert.getSource()),
                RankedTensorType::get(shape, type.getElementType())));
  }
  if (next != type.getDimSize(*axis))
    return failure();
  map(op, parts.size() == 1
              ? parts[0]
              : node(loc, "Concat", parts, type,
                     {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))}));
  return success();
}

LogicalResult Translator::indexArithmetic(Operation *op) {
  Location loc = op->getLoc();
  if (!isa<IndexType, IntegerType>(op->getResult(0).getType()))
    return failure();
  if (isa<arith::IndexCastOp>(op)) {
    map(op->getResult(0), get(op->getOperand(0)));
    return success();
  }
  // torch-mlir's guard of a size, `size < 0 ? 1 : size`.
  if (isa<arith::CmpIOp>(op)) {
    StringRef comparison = comparisonOpType(*op);
    if (comparison.empty())
      return failure();
    map(op->getResult(0),
        node(loc, comparison, {get(op->getOperand(0)), get(op->getOperand(1))},
             RankedTensorType::get({}, b.getI1Type())));
    return success();
  }
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    if (!select.getCondition().getType().isInteger(1))
      return failure();
    map(op->getResult(0),
        node(loc, "Where",
             {get(select.getCondition()), get(select.getTrueValue()),
              get(select.getFalseValue())},
             i64Scalar()));
    return success();
  }
  StringRef opType = llvm::TypeSwitch<Operation *, StringRef>(op)
                         .Case([](arith::AddIOp) { return "Add"; })
                         .Case([](arith::SubIOp) { return "Sub"; })
                         .Case([](arith::MulIOp) { return "Mul"; })
                         .Case([](arith::MinSIOp) { return "Min"; })
                         .Case([](arith::MaxSIOp) { return "Max"; })
                         // Index values are sizes and counters, never
                         // negative: ONNX's truncating Div is both.
                         .Case([](arith::DivSIOp) { return "Div"; })
                         .Case([](arith::DivUIOp) { return "Div"; })
                         .Default([](Operation *) { return ""; });
  map(op->getResult(0),
      node(loc, opType, {get(op->getOperand(0)), get(op->getOperand(1))},
           i64Scalar()));
  return success();
}

LogicalResult Translator::dim(tensor::DimOp op) {
  std::optional<int64_t> index = getConstantIntValue(op.getIndex());
  auto type = dyn_cast<RankedTensorType>(op.getSource().getType());
  if (!index || !type || *index < 0 || *index >= type.getRank())
    return failure();
  Location loc = op.getLoc();
  if (!type.isDynamicDim(*index)) {
    map(op, i64Scalar(loc, type.getDimSize(*index)));
    return success();
  }
  map(op, sizeOf(loc, shapeOf(loc, get(op.getSource())), *index));
  return success();
}

LogicalResult Translator::insertAtOffset(tensor::InsertSliceOp op,
                                         bool constantOffset) {
  RankedTensorType type = op.getType(), source = op.getSourceType();
  // The buffer may be as long as a run-time length; the window is static.
  if (!source.hasStaticShape() || source.getRank() != type.getRank() ||
      !op.hasUnitStride())
    return failure();
  std::optional<int64_t> axis;
  OpFoldResult offset;
  for (auto [d, at] : llvm::enumerate(op.getMixedOffsets())) {
    std::optional<int64_t> start = getConstantIntValue(at);
    int64_t size = op.getStaticSizes()[d];
    if (start && *start == 0 && size == type.getDimSize(d))
      continue;
    if (axis || (start && !constantOffset))
      return failure();
    axis = d;
    offset = at;
  }
  if (!axis)
    return failure();
  // Indices of the box [0, size) along every axis up to `axis`, then
  // shifted by the offset on `axis`: ScatterND writes whole rows behind it.
  int64_t k = *axis + 1;
  SmallVector<int64_t> box(source.getShape().take_front(k));
  SmallVector<int64_t> indices;
  SmallVector<int64_t> point(k, 0);
  int64_t count = 1;
  for (int64_t d : box)
    count *= d;
  for (int64_t n = 0; n < count; ++n) {
    indices.append(point);
    for (int64_t d = k - 1; d >= 0; --d) {
      if (++point[d] < box[d])
        break;
      point[d] = 0;
    }
  }
  Location loc = op.getLoc();
  SmallVector<int64_t> indexShape(box);
  indexShape.push_back(k);
  auto indexType = RankedTensorType::get(indexShape, b.getI64Type());
  SmallVector<int64_t> unit(k, 0);
  unit[*axis] = 1;
  Type vector = RankedTensorType::get({k}, b.getI64Type());
  // At a constant offset (the chunk a loop leaves to the code after it), the
  // indices are constants too.
  std::optional<int64_t> fixed = getConstantIntValue(offset);
  Value start = fixed ? i64Scalar(loc, *fixed) : get(cast<Value>(offset));
  Value shift = node(loc, "Mul", {start, i64s(loc, unit)}, vector);
  Value where = node(loc, "Add",
                     {constant(loc, DenseElementsAttr::get(
                                        indexType, ArrayRef<int64_t>(indices))),
                      shift},
                     indexType);
  map(op, node(loc, "ScatterND",
               {get(op.getDest()), where, get(op.getSource())}, type));
  return success();
}

/// The constant an integer value is: a constant, or what the ops' own
/// folders make of constants and static dims (`tensor.dim` of a static
/// tensor, index arithmetic, affine.apply). Folding works on a detached
/// copy of each op, so that the program is not touched.
static std::optional<int64_t> constantIndex(Value value, unsigned depth = 0) {
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return c;
  Operation *op = value.getDefiningOp();
  if (op && depth < 16 && op->getNumRegions() == 0 && isPure(op)) {
    SmallVector<Attribute> operands;
    bool known = true;
    for (Value operand : op->getOperands()) {
      if (!isa<IndexType, IntegerType>(operand.getType())) {
        operands.push_back(nullptr); // a tensor, whose static dims fold
        continue;
      }
      std::optional<int64_t> c = constantIndex(operand, depth + 1);
      known = known && c;
      operands.push_back(c ? IntegerAttr::get(operand.getType(), *c)
                           : Attribute());
    }
    if (known) {
      Operation *copy = op->clone();
      SmallVector<OpFoldResult> folded;
      std::optional<int64_t> result;
      if (succeeded(copy->fold(operands, folded)) && !folded.empty()) {
        OpFoldResult r = folded[cast<OpResult>(value).getResultNumber()];
        if (auto attr = dyn_cast<Attribute>(r))
          result = getConstantIntValue(attr);
        else if (auto other = dyn_cast<Value>(r); other && other != value)
          result = constantIndex(other, depth + 1);
      }
      copy->destroy();
      if (result)
        return result;
    }
  }
  return std::nullopt;
}

std::pair<Value, Value> Translator::window(OpFoldResult offset,
                                           OpFoldResult size, Location loc) {
  Type one = RankedTensorType::get({1}, b.getI64Type());
  auto asVector = [&](OpFoldResult x) {
    if (std::optional<int64_t> c = getConstantIntValue(x))
      return i64s(loc, {*c});
    return node(loc, "Unsqueeze", {get(cast<Value>(x)), i64s(loc, {0})}, one);
  };
  std::optional<int64_t> start = getConstantIntValue(offset);
  std::optional<int64_t> extent = getConstantIntValue(size);
  if (start && extent)
    return {i64s(loc, {*start}), i64s(loc, {*start + *extent})};
  Value at = asVector(offset);
  return {at, node(loc, "Add", {at, asVector(size)}, one)};
}

Value Translator::affineExpr(AffineExpr expr, ValueRange dims,
                             ValueRange symbols, Location loc) {
  if (auto c = dyn_cast<AffineConstantExpr>(expr))
    return i64Scalar(loc, c.getValue());
  if (auto d = dyn_cast<AffineDimExpr>(expr))
    return get(dims[d.getPosition()]);
  if (auto s = dyn_cast<AffineSymbolExpr>(expr))
    return get(symbols[s.getPosition()]);
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary || (expr.getKind() != AffineExprKind::Add &&
                  expr.getKind() != AffineExprKind::Mul))
    return nullptr;
  Value lhs = affineExpr(binary.getLHS(), dims, symbols, loc);
  Value rhs = lhs ? affineExpr(binary.getRHS(), dims, symbols, loc) : Value();
  if (!rhs)
    return nullptr;
  return node(loc, expr.getKind() == AffineExprKind::Add ? "Add" : "Mul",
              {lhs, rhs}, i64Scalar());
}

LogicalResult Translator::affineIndex(Operation *op) {
  AffineMap affineMap;
  ValueRange operands;
  StringRef combine = "";
  if (auto apply = dyn_cast<affine::AffineApplyOp>(op)) {
    affineMap = apply.getAffineMap();
    operands = apply.getMapOperands();
  } else if (auto min = dyn_cast<affine::AffineMinOp>(op)) {
    affineMap = min.getAffineMap();
    operands = min.getMapOperands();
    combine = "Min";
  } else if (auto max = dyn_cast<affine::AffineMaxOp>(op)) {
    affineMap = max.getAffineMap();
    operands = max.getMapOperands();
    combine = "Max";
  }
  if (!affineMap || affineMap.getNumResults() == 0 ||
      (combine.empty() && affineMap.getNumResults() != 1))
    return failure();
  ValueRange dims = operands.take_front(affineMap.getNumDims());
  ValueRange symbols = operands.drop_front(affineMap.getNumDims());
  Location loc = op->getLoc();
  Value result;
  for (AffineExpr expr : affineMap.getResults()) {
    Value value = affineExpr(expr, dims, symbols, loc);
    if (!value)
      return failure();
    result = result ? node(loc, combine, {result, value}, i64Scalar()) : value;
  }
  map(op->getResult(0), result);
  return success();
}

LogicalResult Translator::insertWindowOfRunTimeSize(tensor::InsertSliceOp op,
                                                    bool constantOffset) {
  RankedTensorType type = op.getType(), source = op.getSourceType();
  if (source.getRank() != type.getRank() || !op.hasUnitStride())
    return failure();
  std::optional<int64_t> axis;
  bool runTimeSizes = false;
  for (auto [d, at] : llvm::enumerate(op.getMixedOffsets())) {
    std::optional<int64_t> start = getConstantIntValue(at);
    int64_t size = op.getStaticSizes()[d];
    if (start && *start == 0 && !ShapedType::isDynamic(size) &&
        size == type.getDimSize(d))
      continue;
    // A whole dim of run-time size (a dynamic batch): the size the buffer
    // was made with, or the buffer's own size (`tensor.dim`).
    auto wholeDim = [&, d = d] {
      Value length = op.getDynamicSize(d);
      if (sizeValueOf(op.getDest(), d) == length)
        return true;
      auto dim = length.getDefiningOp<tensor::DimOp>();
      return dim && dim.getSource() == op.getDest() &&
             getConstantIntValue(dim.getIndex()) == int64_t(d);
    };
    if (start && *start == 0 && ShapedType::isDynamic(size) && wholeDim()) {
      runTimeSizes = true;
      continue;
    }
    // One axis takes the window, at a computed offset or (the chunk a loop
    // leaves to the code after it) at a constant one.
    if (axis || (!type.isDynamicDim(d) && start && !constantOffset))
      return failure();
    axis = d;
    runTimeSizes = runTimeSizes || type.isDynamicDim(d);
  }
  // A static buffer with a window at a run-time offset is insertAtOffset's.
  if (!axis || !runTimeSizes)
    return failure();
  // Column d of the indices: every index of axis d, the window's on the
  // offset axis, laid along axis d of the grid and broadcast over it.
  Location loc = op.getLoc();
  int64_t k = *axis + 1;
  Type i64 = b.getI64Type();
  Value dest = get(op.getDest());
  Value shape = shapeOf(loc, dest);
  auto [from, to] =
      window(op.getMixedOffsets()[*axis], op.getMixedSizes()[*axis], loc);
  SmallVector<int64_t> box(source.getShape().take_front(k));
  SmallVector<Value> extents;
  Type one = RankedTensorType::get({1}, i64);
  for (int64_t d = 0; d < k; ++d) {
    if (d == *axis)
      extents.push_back(node(loc, "Sub", {to, from}, one));
    else if (ShapedType::isDynamic(box[d]))
      extents.push_back(
          node(loc, "Unsqueeze", {sizeOf(loc, shape, d), i64s(loc, {0})}, one));
    else
      extents.push_back(i64s(loc, {box[d]}));
  }
  Value grid = node(loc, "Concat", extents, RankedTensorType::get({k}, i64),
                    {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
  auto boxType = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, i64);
  };
  SmallVector<Value> columns;
  for (int64_t d = 0; d < k; ++d) {
    Value extent = sizeOf(loc, shape, d);
    Value range =
        node(loc, "Range", {i64Scalar(loc, 0), extent, i64Scalar(loc, 1)},
             boxType({ShapedType::kDynamic}));
    if (d == *axis)
      range = node(loc, "Slice", {range, from, to, i64s(loc, {0})},
                   boxType({box[d]}));
    SmallVector<int64_t> along(k, 1), alongShape(k, 1);
    along[d] = -1;
    alongShape[d] = box[d];
    Value laid = range;
    if (d != k - 1)
      laid = node(loc, "Reshape",
                  {range, i64s(loc, ArrayRef<int64_t>(along).drop_front(d))},
                  boxType(ArrayRef<int64_t>(alongShape).drop_front(d)));
    Value spread = node(loc, "Expand", {laid, grid}, boxType(box));
    SmallVector<int64_t> column(box);
    column.push_back(1);
    columns.push_back(
        node(loc, "Unsqueeze", {spread, i64s(loc, {-1})}, boxType(column)));
  }
  SmallVector<int64_t> indexShape(box);
  indexShape.push_back(k);
  Value indices = node(loc, "Concat", columns, boxType(indexShape),
                       {b.getNamedAttr("axis", b.getI64IntegerAttr(-1))});
  map(op, node(loc, "ScatterND", {dest, indices, get(op.getSource())}, type));
  return success();
}

LogicalResult Translator::emptyOfRunTimeSize(tensor::EmptyOp op) {
  RankedTensorType type = op.getType();
  if (!isa<FloatType>(type.getElementType()))
    return failure();
  Location loc = op.getLoc();
  Type one = RankedTensorType::get({1}, b.getI64Type());
  SmallVector<Value> dims;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d)) {
      dims.push_back(i64s(loc, {type.getDimSize(d)}));
      continue;
    }
    Value size = get(op.getDynamicSize(d));
    dims.push_back(node(loc, "Unsqueeze", {size, i64s(loc, {0})}, one));
  }
  Value shape = node(loc, "Concat", dims,
                     RankedTensorType::get({type.getRank()}, b.getI64Type()),
                     {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
  auto zero =
      DenseElementsAttr::get(RankedTensorType::get({1}, type.getElementType()),
                             b.getFloatAttr(type.getElementType(), 0.0));
  map(op, node(loc, "ConstantOfShape", {shape}, type,
               {b.getNamedAttr("value", zero)}));
  return success();
}

Value Translator::tripCount(scf::ForOp loop, int64_t step) {
  Location loc = loop.getLoc();
  Value extent = get(loop.getUpperBound());
  if (std::optional<int64_t> lb = constantIndex(loop.getLowerBound());
      !lb || *lb != 0)
    extent = node(loc, "Sub", {extent, get(loop.getLowerBound())}, i64Scalar());
  if (step == 1)
    return extent;
  Value rounded =
      node(loc, "Add", {extent, i64Scalar(loc, step - 1)}, i64Scalar());
  return node(loc, "Div", {rounded, i64Scalar(loc, step)}, i64Scalar());
}

LogicalResult Translator::forLoop(scf::ForOp loop) {
  std::optional<int64_t> lb = constantIndex(loop.getLowerBound());
  std::optional<int64_t> ub = constantIndex(loop.getUpperBound());
  std::optional<int64_t> step = constantIndex(loop.getStep());
  if (!step || *step <= 0 || !llvm::all_of(loop.getInitArgs(), [](Value init) {
        return isFloatTensor(init.getType());
      }))
    return failure();
  Location loc = loop.getLoc();
  Value trips;
  if (lb && ub)
    trips = i64Scalar(loc, *ub > *lb ? (*ub - *lb + *step - 1) / *step : 0);
  else
    trips = tripCount(loop, *step);
  MLIRContext *context = b.getContext();
  auto names = [&](StringRef prefix, size_t count) {
    SmallVector<Attribute> out;
    for (size_t i = 0; i < count; ++i)
      out.push_back(b.getStringAttr(prefix + std::to_string(next++)));
    return b.getArrayAttr(out);
  };
  size_t carried = loop.getInitArgs().size();
  auto graph = onnx::GraphAttr::get(
      context, /*region=*/0, b.getStringAttr("body" + std::to_string(next++)),
      names("b", carried + 2), names("y", carried + 1));
  SmallVector<Value> inputs{
      trips,
      constant(loc, DenseElementsAttr::get(
                        RankedTensorType::get({}, b.getI1Type()), true))};
  for (Value init : loop.getInitArgs())
    inputs.push_back(get(init));
  SmallVector<Type> types(loop.getResultTypes());
  auto node = onnx::NodeOp::create(
      b, loc, types, "Loop", "",
      b.getDictionaryAttr(b.getNamedAttr("body", graph)),
      /*node_name=*/nullptr, names("t", carried), /*doc_string=*/nullptr,
      inputs, /*subgraphsCount=*/1);
  SmallVector<Type> argTypes{i64Scalar(),
                             RankedTensorType::get({}, b.getI1Type())};
  argTypes.append(types.begin(), types.end());
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&node->getRegion(0), {}, argTypes,
                              SmallVector<Location>(argTypes.size(), loc));
  Value iteration = body->getArgument(0);
  if (*step != 1)
    iteration =
        this->node(loc, "Mul", {iteration, i64Scalar(loc, *step)}, i64Scalar());
  if (!lb || *lb != 0)
    iteration = this->node(loc, "Add", {get(loop.getLowerBound()), iteration},
                           i64Scalar());
  values[loop.getInductionVar()] = iteration;
  for (auto [arg, shadowArg] :
       llvm::zip(loop.getRegionIterArgs(), body->getArguments().drop_front(2)))
    values[arg] = shadowArg;
  Block &source = *loop.getBody();
  for (Operation &op : source.without_terminator())
    translate(&op);
  SmallVector<Value> yielded{body->getArgument(1)};
  for (Value value : source.getTerminator()->getOperands())
    yielded.push_back(get(value));
  onnx::YieldOp::create(b, loc, yielded);
  for (auto [result, shadowResult] :
       llvm::zip(loop.getResults(), node->getResults()))
    map(result, shadowResult);
  return success();
}

} // namespace

FailureOr<ShadowGraph> linalg_raise::buildShadowGraph(func::FuncOp func,
                                                      std::string &why) {
  if (func.isExternal()) {
    why = "it is a declaration";
    return failure();
  }
  if (!func.getBody().hasOneBlock()) {
    why = "its body has more than one block";
    return failure();
  }
  FunctionType type = func.getFunctionType();
  auto notRead = [&](StringRef what, unsigned index, Type t) {
    llvm::raw_string_ostream os(why);
    os << what << " #" << index << " is " << t
       << ", not a ranked tensor of floats";
    return failure();
  };
  for (auto [index, t] : llvm::enumerate(type.getInputs()))
    if (!isFloatTensor(t))
      return notRead("argument", index, t);
  for (auto [index, t] : llvm::enumerate(type.getResults()))
    if (!isFloatTensor(t))
      return notRead("result", index, t);
  MLIRContext *context = func.getContext();
  context->getOrLoadDialect<onnx::ONNXDialect>();
  ShadowGraph shadow;
  Location loc = func.getLoc();
  OpBuilder b(context);
  shadow.module = ModuleOp::create(loc);
  shadow.module->getOperation()->setAttr(
      onnx::ONNXDialect::kOpsetImport,
      b.getArrayAttr({onnx::OpsetAttr::get(context, "", kShadowOpset)}));
  shadow.module->getOperation()->setAttr(onnx::ONNXDialect::kIrVersion,
                                         b.getI64IntegerAttr(9));
  auto named = [&](StringRef prefix, size_t count) {
    SmallVector<Attribute> attrs;
    for (size_t i = 0; i < count; ++i)
      attrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr(onnx::ONNXDialect::kName,
                         b.getStringAttr(prefix + std::to_string(i)))));
    return b.getArrayAttr(attrs);
  };
  b.setInsertionPointToEnd(shadow.module->getBody());
  shadow.graph = onnx::GraphOp::create(
      b, loc, func.getSymName(), type, StringAttr(),
      named("arg", type.getNumInputs()), named("result", type.getNumResults()),
      StringAttr());
  // Its reading may take sizes of run-time length as equal, which the
  // raise asserts in the function.
  shadow.graph->setAttr(raise::kMayAssumeSizes, b.getUnitAttr());
  Block *body = new Block();
  shadow.graph.getBody().push_back(body);
  b.setInsertionPointToStart(body);
  Translator translator(shadow, b);
  for (BlockArgument arg : func.getArguments())
    translator.map(arg, body->addArgument(arg.getType(), arg.getLoc()));
  for (auto [index, arg] : llvm::enumerate(func.getArguments()))
    shadow.original["arg" + std::to_string(index)] = arg;
  Operation *terminator = func.getBody().front().getTerminator();
  for (Operation &op : func.getBody().front().without_terminator())
    translator.translate(&op);
  SmallVector<Value> outputs;
  for (Value result : terminator->getOperands())
    outputs.push_back(translator.get(result));
  onnx::YieldOp::create(b, terminator->getLoc(), outputs);
  return shadow;
}

arith::CmpIPredicate linalg_raise::swapped(arith::CmpIPredicate predicate) {
  using P = arith::CmpIPredicate;
  switch (predicate) {
  case P::slt:
    return P::sgt;
  case P::sgt:
    return P::slt;
  case P::sle:
    return P::sge;
  case P::sge:
    return P::sle;
  case P::ult:
    return P::ugt;
  case P::ugt:
    return P::ult;
  case P::ule:
    return P::uge;
  case P::uge:
    return P::ule;
  default:
    return predicate; // eq, ne
  }
}
