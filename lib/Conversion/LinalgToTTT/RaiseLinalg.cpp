//===- RaiseLinalg.cpp - TTT layers of linalg programs to ttt.kvb_layer ---===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Runs the ONNX raise on each function's shadow graph (ShadowGraph.h) and
// writes every layer op it raised back into the function: the op's operands
// are traced back to the function's values (through the layout nodes the
// raise puts in front of the op), and the value the layer's output stood
// for is replaced.
//
//===----------------------------------------------------------------------===//

#include "ChunkLoopForms.h"
#include "LoopReadings.h"
#include "ShadowGraph.h"

#include "../ONNXToTTT/AssumedSizes.h"
// The doc_string the ONNX raise gives a rewritten layer's output.
#include "../ONNXToTTT/LayerFinder.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"
#include "ttt/Dialect/TTT/Analysis/LayerAnalysis.h"
#include "ttt/Dialect/TTT/IR/TTTDialect.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTRAISELINALG
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

namespace {

/// Marks the program's own ops while the canonical route reads a copy
/// (true: the program leaves it unread).
constexpr StringLiteral kProgramOpAttr = "ttt.program_op";

/// Writes shadow values back as values of the function.
class WriteBack {
public:
  WriteBack(ShadowGraph &shadow, func::FuncOp func, OpBuilder &b)
      : shadow(shadow), func(func), b(b) {}

  /// The function's value for `value`, built before the builder's
  /// insertion point; failure with `why` if some node has no counterpart.
  FailureOr<Value> get(Value value);
  std::string why;

private:
  FailureOr<Value> build(Value value);
  /// A program that walks the queries' chunks reads only as many keys,
  /// values and per-token rates as there are queries; when their length is
  /// known at run time only, nothing says they are not longer, so the
  /// layer reads them cut to the queries' length.
  void cutToQueryLength(KVBLayerOp layer);
  FailureOr<Value> reshaped(Value x, RankedTensorType to, Location loc);
  /// The index values an i64 vector of the shadow graph holds: constants,
  /// and sizes the translation read from the function (named after them).
  FailureOr<SmallVector<OpFoldResult>> indices(Value vector);
  /// A Slice from constant starts to such ends: a cut of the keys to the
  /// queries' batch, which the translation sliced on its own.
  FailureOr<Value> slice(onnx::NodeOp node, Location loc);

  ShadowGraph &shadow;
  func::FuncOp func;
  OpBuilder &b;
  llvm::DenseMap<Value, Value> done;
};

FailureOr<Value> WriteBack::get(Value value) {
  auto it = done.find(value);
  if (it != done.end())
    return it->second;
  FailureOr<Value> built = build(value);
  if (succeeded(built))
    done[value] = *built;
  return built;
}

FailureOr<Value> WriteBack::reshaped(Value x, RankedTensorType to,
                                     Location loc) {
  auto from = dyn_cast<RankedTensorType>(x.getType());
  if (!from)
    return failure();
  if (from == to)
    return x;
  // A dim of run-time size (a dynamic batch) stays in a group of its own
  // and unit dims, which the reassociation keeps.
  if (from.getRank() > to.getRank()) {
    if (auto assoc = getReassociationIndicesForReshape(from, to))
      return tensor::CollapseShapeOp::create(b, loc, to, x, *assoc).getResult();
  } else if (from.getRank() < to.getRank()) {
    // The expand infers each group's one size of run-time length at most.
    auto inferable = [&](ArrayRef<ReassociationIndices> groups) {
      return llvm::all_of(groups, [&](const ReassociationIndices &group) {
        return llvm::count_if(
                   group, [&](int64_t d) { return to.isDynamicDim(d); }) <= 1;
      });
    };
    if (auto assoc = getReassociationIndicesForReshape(to, from);
        assoc && inferable(*assoc))
      return tensor::ExpandShapeOp::create(b, loc, to, x, *assoc).getResult();
  }
  if (!from.hasStaticShape() || !to.hasStaticShape() ||
      from.getNumElements() != to.getNumElements())
    return failure();
  // Through one flat dim.
  auto flat =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < from.getRank(); ++d)
    all[0].push_back(d);
  Value collapsed = tensor::CollapseShapeOp::create(b, loc, flat, x, all);
  SmallVector<ReassociationIndices> back(1);
  for (int64_t d = 0; d < to.getRank(); ++d)
    back[0].push_back(d);
  return tensor::ExpandShapeOp::create(b, loc, to, collapsed, back).getResult();
}

FailureOr<SmallVector<OpFoldResult>> WriteBack::indices(Value vector) {
  if (std::optional<SmallVector<int64_t>> values = raise::intConstant(vector)) {
    SmallVector<OpFoldResult> attrs;
    for (int64_t v : *values)
      attrs.push_back(b.getIndexAttr(v));
    return attrs;
  }
  auto node = vector.getDefiningOp<onnx::NodeOp>();
  if (!node)
    return failure();
  if (ArrayAttr outputs = node.getOutputsAttr()) {
    auto name =
        cast<StringAttr>(outputs[cast<OpResult>(vector).getResultNumber()]);
    auto it = shadow.original.find(name.getValue());
    if (it != shadow.original.end() && it->second.getType().isIndex())
      return SmallVector<OpFoldResult>{it->second};
  }
  if (node.getOpType() == "Unsqueeze" && !node.getInputs().empty())
    return indices(node.getInputs()[0]);
  if (node.getOpType() != "Concat")
    return failure();
  SmallVector<OpFoldResult> all;
  for (Value part : node.getInputs()) {
    FailureOr<SmallVector<OpFoldResult>> some = indices(part);
    if (failed(some))
      return failure();
    llvm::append_range(all, *some);
  }
  return all;
}

FailureOr<Value> WriteBack::slice(onnx::NodeOp node, Location loc) {
  ValueRange inputs = node.getInputs();
  if (inputs.size() != 4)
    return failure();
  std::optional<SmallVector<int64_t>> starts = raise::intConstant(inputs[1]);
  std::optional<SmallVector<int64_t>> axes = raise::intConstant(inputs[3]);
  FailureOr<SmallVector<OpFoldResult>> ends = indices(inputs[2]);
  if (!starts || !axes || failed(ends) || starts->size() != axes->size() ||
      ends->size() != axes->size())
    return failure();
  FailureOr<Value> input = get(inputs[0]);
  if (failed(input))
    return failure();
  auto type = dyn_cast<RankedTensorType>(input->getType());
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes(rank);
  for (auto [axis, start, end] : llvm::zip(*axes, *starts, *ends)) {
    if (axis < 0 || axis >= rank)
      return failure();
    std::optional<int64_t> last = getConstantIntValue(end);
    // Only a cut from a constant start to a run-time end, or a constant
    // window: ONNX clamps its bounds, tensor.extract_slice does not.
    if (start < 0 ||
        (last && (*last < start || (!type.isDynamicDim(axis) &&
                                    *last > type.getDimSize(axis)))) ||
        (!last && start != 0))
      return failure();
    offsets[axis] = b.getIndexAttr(start);
    sizes[axis] = last ? b.getIndexAttr(*last - start) : end;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (!sizes[d])
      sizes[d] = tensor::getMixedSize(b, loc, *input, d);
  return tensor::ExtractSliceOp::create(b, loc, *input, offsets, sizes, strides)
      .getResult();
}

void WriteBack::cutToQueryLength(KVBLayerOp layer) {
  auto queries = dyn_cast<RankedTensorType>(layer.getQ().getType());
  if (!queries)
    return;
  int64_t rank = queries.getRank(), time = rank - 2;
  if (layer.getSchedule().getKind() == ScheduleKind::full_batch || rank < 3 ||
      !queries.isDynamicDim(time))
    return;
  Location loc = layer.getLoc();
  Value length;
  for (OpOperand *operand : {&layer.getKMutable(), &layer.getVMutable()}) {
    auto type = dyn_cast<RankedTensorType>(operand->get().getType());
    if (operand->get() == layer.getQ() || !type || type.getRank() != rank ||
        !type.isDynamicDim(time))
      continue;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(layer);
    if (!length)
      length = tensor::DimOp::create(b, loc, layer.getQ(), time);
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == time)
        sizes.push_back(length);
      else if (type.isDynamicDim(d))
        sizes.push_back(
            tensor::DimOp::create(b, loc, operand->get(), d).getResult());
      else
        sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    }
    operand->set(tensor::ExtractSliceOp::create(b, loc, operand->get(), offsets,
                                                sizes, strides));
  }
}

FailureOr<Value> WriteBack::build(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (isa<onnx::GraphOp>(arg.getOwner()->getParentOp()))
      return func.getArgument(arg.getArgNumber());
    why = "it reads a value of a region";
    return failure();
  }
  Operation *op = value.getDefiningOp();
  Location loc = op->getLoc();
  if (isa<KVBLayerOp, DWConvLayerOp>(op)) {
    IRMapping mapping;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> original = get(operand);
      if (failed(original))
        return failure();
      mapping.map(operand, *original);
    }
    Operation *clone = b.clone(*op, mapping);
    if (auto layer = dyn_cast<KVBLayerOp>(clone))
      cutToQueryLength(layer);
    return clone->getResult(cast<OpResult>(value).getResultNumber());
  }
  if (auto init = dyn_cast<onnx::InitializerOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(init.getValue());
    if (!dense)
      return failure();
    return arith::ConstantOp::create(b, loc, dense).getResult();
  }
  auto node = dyn_cast<onnx::NodeOp>(op);
  if (!node)
    return failure();
  // A node the translation made names the function's value.
  if (ArrayAttr outputs = node.getOutputsAttr()) {
    auto name =
        cast<StringAttr>(outputs[cast<OpResult>(value).getResultNumber()]);
    auto it = shadow.original.find(name.getValue());
    if (it != shadow.original.end() && it->second.getType() == value.getType())
      return it->second;
  }
  StringRef opType = node.getOpType();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (opType == "Constant") {
    auto dense = dyn_cast_or_null<DenseElementsAttr>(node.getONNXAttr("value"));
    if (dense)
      return arith::ConstantOp::create(b, loc, dense).getResult();
  }
  if (opType == "Identity")
    return get(node.getInputs()[0]);
  if (opType == "Slice")
    if (FailureOr<Value> cut = slice(node, loc); succeeded(cut))
      return cut;
  if (type && (opType == "Reshape" || opType == "Unsqueeze" ||
               opType == "Squeeze" || opType == "Flatten")) {
    FailureOr<Value> input = get(node.getInputs()[0]);
    if (succeeded(input))
      if (FailureOr<Value> out = reshaped(*input, type, loc); succeeded(out))
        return out;
  }
  if (type && opType == "Transpose") {
    auto perm = dyn_cast_or_null<DenseI64ArrayAttr>(node.getONNXAttr("perm"));
    FailureOr<Value> input = get(node.getInputs()[0]);
    if (perm && succeeded(input) &&
        perm.size() == static_cast<int64_t>(type.getRank())) {
      // Sizes of run-time length (a dynamic batch) are the input's, turned.
      SmallVector<OpFoldResult> from = tensor::getMixedSizes(b, loc, *input);
      SmallVector<OpFoldResult> sizes;
      for (int64_t axis : perm.asArrayRef())
        sizes.push_back(from[axis]);
      Value init =
          tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
      return linalg::TransposeOp::create(b, loc, *input, init,
                                         perm.asArrayRef())
          ->getResult(0);
    }
  }
  if (type && type.hasStaticShape() && node.getInputs().size() == 2 &&
      (opType == "Add" || opType == "Sub" || opType == "Mul")) {
    FailureOr<Value> lhs = get(node.getInputs()[0]);
    FailureOr<Value> rhs = failed(lhs) ? lhs : get(node.getInputs()[1]);
    if (succeeded(rhs) && lhs->getType() == type && rhs->getType() == type) {
      Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                           type.getElementType());
      SmallVector<Value> ins{*lhs, *rhs};
      if (opType == "Add")
        return linalg::AddOp::create(b, loc, ins, ValueRange{init})
            ->getResult(0);
      if (opType == "Sub")
        return linalg::SubOp::create(b, loc, ins, ValueRange{init})
            ->getResult(0);
      return linalg::MulOp::create(b, loc, ins, ValueRange{init})->getResult(0);
    }
  }
  if (why.empty())
    why = ("its layer op reads a " + opType +
           " node that has no counterpart in the function")
              .str();
  return failure();
}

/// Erases `root` once nothing reads it, and then whatever only it read, so
/// that ops the program already left unused stay.
void eraseComputation(Operation *root) {
  SmallVector<Operation *> worklist{root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    // A payload reads values from outside too (a captured step size).
    SmallVector<Operation *> defs;
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && !op->isAncestor(def))
          defs.push_back(def);
    });
    op->erase();
    for (Operation *def : defs)
      if (!llvm::is_contained(worklist, def))
        worklist.push_back(def);
  }
}

/// Asserts, before `anchor`, every equality of sizes that the reading took
/// (AssumedSizes.h) for a value `anchor` is computed from: the raised layer
/// takes one size for the other. Fails, making nothing, if a size is not
/// known before `anchor` (made inside a loop whose result the layer is).
static LogicalResult assertAssumedSizes(const ShadowGraph &shadow,
                                        onnx::GraphOp graph, Operation *anchor,
                                        OpBuilder &b) {
  SmallVector<raise::EqualSizes> assumed = raise::assumedEqualSizes(graph);
  if (assumed.empty())
    return success();
  SetVector<Operation *> computedFrom;
  BackwardSliceOptions options;
  options.omitUsesFromAbove = false;
  (void)getBackwardSlice(anchor, &computedFrom, options);
  // A loop computes its results with the ops in its body too.
  computedFrom.insert(anchor);
  for (Operation *op : computedFrom.takeVector()) {
    computedFrom.insert(op);
    op->walk([&](Operation *nested) { computedFrom.insert(nested); });
  }
  auto original = [&](StringRef name) {
    auto it = shadow.original.find(name);
    return it == shadow.original.end() ? Value() : it->second;
  };
  // A size as the index value it was made with, else as (tensor, dim).
  using Size = std::pair<Value, int64_t>;
  DominanceInfo dominance(anchor->getParentOfType<func::FuncOp>());
  // A tensor a loop carries has its initial value's sizes: each iteration
  // makes the next from sizes asserted equal here, so by induction the
  // assertions before the loop hold in every iteration.
  auto beforeLoops = [](Value tensor) {
    while (auto arg = dyn_cast<BlockArgument>(tensor)) {
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      OpOperand *init = loop ? loop.getTiedLoopInit(arg) : nullptr;
      if (!init)
        break;
      tensor = init->get();
    }
    return tensor;
  };
  // A size computed in a loop's body from sizes of tensors from before the
  // loop (or that it carries), computed again before `anchor`.
  DenseMap<Value, Value> hoisted;
  std::function<Value(Value)> hoist = [&](Value value) -> Value {
    if (dominance.properlyDominates(value, anchor))
      return value;
    if (Value done = hoisted.lookup(value))
      return done;
    Operation *op = value.getDefiningOp();
    if (!op || op->getNumRegions() != 0 || op->getNumResults() != 1 ||
        !isPure(op))
      return {};
    IRMapping operands;
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      Value source = beforeLoops(dim.getSource());
      Value index = hoist(dim.getIndex());
      if (!index || !dominance.properlyDominates(source, anchor))
        return {};
      operands.map(dim.getSource(), source);
      operands.map(dim.getIndex(), index);
    } else {
      for (Value operand : op->getOperands()) {
        if (!operand.getType().isIntOrIndex())
          return {};
        Value before = hoist(operand);
        if (!before)
          return {};
        operands.map(operand, before);
      }
    }
    Value made = b.clone(*op, operands)->getResult(0);
    hoisted[value] = made;
    return made;
  };
  auto size = [&](Value tensor, int64_t d) -> Size {
    tensor = beforeLoops(tensor);
    if (Value made = sizeValueOf(tensor, d))
      if (Value before = hoist(made))
        return {before, -1};
    return {tensor, d};
  };
  // Each pair once, in the order they were taken.
  SmallVector<std::tuple<Size, Size, Location>> equal;
  llvm::DenseSet<std::pair<Size, Size>> seen;
  for (const raise::EqualSizes &sizes : assumed) {
    Value licensed = original(sizes.licenses);
    Value a = original(sizes.a), c = original(sizes.b);
    Operation *read = licensed ? licensed.getDefiningOp() : nullptr;
    if (!read || !computedFrom.contains(read))
      continue;
    if (!a || !c)
      return failure();
    Size x = size(a, sizes.dimA), y = size(c, sizes.dimB);
    if (!dominance.properlyDominates(x.first, anchor) ||
        !dominance.properlyDominates(y.first, anchor))
      return failure();
    if (x != y && seen.insert({x, y}).second)
      equal.push_back({x, y, read->getLoc()});
  }
  for (auto [x, y, loc] : equal) {
    auto index = [&, loc = loc](Size s) -> Value {
      return s.second < 0 ? s.first
                          : tensor::DimOp::create(b, loc, s.first, s.second);
    };
    Value lhs = index(x);
    Value rhs = index(y);
    Value same =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs, rhs);
    cf::AssertOp::create(b, loc, same, linalg_raise::kEqualSizesMessage);
  }
  return success();
}

struct TTTRaiseLinalgPass
    : public mlir::ttt::impl::TTTRaiseLinalgBase<TTTRaiseLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      // A function with counted scf.while loops is read, and raised, as its
      // copy with scf.for loops; the function takes the copy's body only if
      // a layer was raised in it, so that it is otherwise left as it was.
      Reading reading;
      func::FuncOp copy = withWhileLoopsAsFor(func);
      reading.whileAsFor = bool(copy);
      FailureOr<bool> raised = raise(copy ? copy : func, reading);
      if (copy) {
        if (succeeded(raised) && *raised)
          func.getBody().takeBody(copy.getBody());
        copy.erase();
      }
      if (failed(raised))
        return signalPassFailure();
    }
  }

  /// How the function that raise() reads differs from the program.
  struct Reading {
    bool whileAsFor = false; // its scf.for loops were counted scf.while loops
    bool unrolled = false;   // loops with a partial last chunk were unrolled
  };

  /// What the canonical route made of a copy of a function.
  struct CanonicalReading {
    OwningOpRef<ModuleOp> module; // holds `copy`
    func::FuncOp copy;
    SmallVector<KVBLayerOp> layers; // raised in `copy`
    SmallVector<std::string> kept;  // TTT layers found and left, and why
    /// What the program's loops over chunks were, by location: a layer
    /// raised from one has its location.
    llvm::DenseMap<Location, std::string> loops;
    /// Whether every layer raised is linear attention and starts from the
    /// function's own weights: a first chunk the reroll left unrolled (its
    /// momentum folded away) computes the initial weights with contractions
    /// the shadow graph's reading takes into the layer.
    bool complete() const {
      return llvm::all_of(layers, [](KVBLayerOp layer) {
        return analyzeLayer(layer).rewritable &&
               llvm::none_of(layer.getWeights(), computedByContraction);
      });
    }
  };

  static bool computedByContraction(Value value) {
    SetVector<Operation *> slice;
    BackwardSliceOptions options;
    options.omitBlockArguments = true;
    if (failed(getBackwardSlice(value, &slice, options)))
      return true;
    if (Operation *def = value.getDefiningOp())
      slice.insert(def);
    return llvm::any_of(slice, [](Operation *op) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      return linalgOp && linalgOp.getNumReductionLoops() > 0;
    });
  }

  /// The canonical route on a copy of `func`: its scf.for loops over
  /// chunks, unrolled chunk steps and single steps formed into
  /// ttt.chunk_loop ops and the math read on each.
  CanonicalReading readCanonically(func::FuncOp func, bool whileAsFor) {
    CanonicalReading reading;
    if (func.isExternal())
      return reading;
    OpBuilder builder(&getContext());
    reading.module = ModuleOp::create(builder, func.getLoc());
    reading.copy = cast<func::FuncOp>(func->clone());
    reading.module->push_back(reading.copy);
    // Marked, not remembered by address: the route erases ops, and the ones
    // it makes may take their addresses. The mark says whether the program
    // already leaves the op unread (it then stays, as written).
    reading.copy.walk([&](Operation *op) {
      if (op != reading.copy)
        op->setAttr(kProgramOpAttr, builder.getBoolAttr(isOpTriviallyDead(op)));
      if (isa<scf::ForOp>(op))
        reading.loops.try_emplace(op->getLoc(),
                                  whileAsFor ? "counted scf.while over chunks"
                                             : "scf.for over chunks");
    });
    // torch-mlir's broadcasts of one run-time batch against another are
    // read as the equal sizes the model is made for, and asserted.
    linalg_raise::foldEqualSizeBroadcasts(reading.copy);
    getOperation().getBody()->push_back(reading.module.get());
    // The route's remarks are its own working; what it raised or found is
    // reported in the raise's words. An error of the route (a former that
    // built an op its verifier refuses) leaves the function to the shadow
    // graph's reading.
    bool routeFailed = false;
    LogicalResult ran = [&] {
      ScopedDiagnosticHandler capture(&getContext(), [&](Diagnostic &diag) {
        routeFailed |= diag.getSeverity() == DiagnosticSeverity::Error;
        return success();
      });
      OpPassManager pm(ModuleOp::getOperationName());
      pm.addPass(createTTTFormChunkLoops());
      pm.addPass(createTTTRerollChunks());
      pm.addPass(createTTTFormSingleSteps());
      pm.addPass(createTTTRaiseChunkLoops());
      return runPipeline(pm, reading.module.get());
    }();
    reading.module.get()->remove();
    if (failed(ran) || routeFailed)
      return reading;
    reading.copy.walk(
        [&](KVBLayerOp layer) { reading.layers.push_back(layer); });
    if (reading.layers.empty())
      reading.copy.walk([&](ChunkLoopOp loop) {
        if (linalg_raise::whyNotATTTLayer(loop).empty())
          reading.kept.push_back(
              linalg_raise::describeChunkLoop(loop) +
              ": left as it was: " + linalg_raise::whyNotAKVBLayer(loop));
      });
    return reading;
  }

  /// `func` takes the body the canonical route raised layers in (a loop
  /// the reader left stays a ttt.chunk_loop, which ttt-lower-recurrent
  /// lowers as it was), and each layer gets its remark.
  void adopt(func::FuncOp func, CanonicalReading &reading) {
    foldRouteReshapes(reading);
    reading.copy.walk([](Operation *op) { op->removeAttr(kProgramOpAttr); });
    func.getBody().takeBody(reading.copy.getBody());
    for (KVBLayerOp layer : reading.layers) {
      LayerFacts facts = analyzeLayer(layer);
      auto loop = reading.loops.find(layer.getLoc());
      std::string form =
          loop == reading.loops.end()
              ? linalg_raise::describeLayerForm(layer)
              : loop->second + " (chunks of " +
                    std::to_string(layer.getSchedule().getSize()) + " tokens)";
      // At the layer's location, not on the op: the program is the user's,
      // the layer op the pass's working.
      InFlightDiagnostic remark = mlir::emitRemark(layer.getLoc())
                                  << "TTT layer: " << form << ", "
                                  << describeWeights(layer)
                                  << ": raised to ttt.kvb_layer (";
      if (facts.rewritable)
        remark << "linear attention, " << stringifyExactLowering(facts.lowering)
               << ")";
      else
        remark << "no linear attention: " << explainLayer(facts) << ")";
    }
  }

  /// The fast weights of `layer` as the remarks name them: the function's
  /// arguments they are views of, by MLIR's names for them.
  static std::string describeWeights(KVBLayerOp layer) {
    std::string text = "fast weights ";
    for (auto [index, weight] : llvm::enumerate(layer.getWeights())) {
      Value source = weight;
      while (Operation *def = source.getDefiningOp()) {
        if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                 tensor::CastOp>(def))
          break;
        source = def->getOperand(0);
      }
      auto arg = dyn_cast<BlockArgument>(source);
      text += index ? ", " : "";
      if (arg)
        text += "'arg" + std::to_string(arg.getArgNumber()) + "'";
      else
        text += argumentsOf(source).empty() ? "(a constant)" : "(computed)";
    }
    return text;
  }

  /// The layer ops' operands are brought to the layer's layout and back by
  /// reshapes that often undo each other; those the route made fold. What
  /// no longer has a reader goes (the chunk loop's buffers, the reshapes
  /// left), the ops the program itself left unread excepted.
  static void foldRouteReshapes(CanonicalReading &reading) {
    MLIRContext *context = reading.copy.getContext();
    auto isRoutes = [](Operation *op) { return !op->hasAttr(kProgramOpAttr); };
    RewritePatternSet patterns(context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    SmallVector<Operation *> made;
    reading.copy.walk([&](Operation *op) {
      if (isRoutes(op) &&
          isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
        made.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(made, std::move(patterns), config);
    reading.copy.walk<WalkOrder::PostOrder, ReverseIterator>(
        [&](Operation *op) {
          auto unread = op->getAttrOfType<BoolAttr>(kProgramOpAttr);
          if (op != reading.copy && !(unread && unread.getValue()) &&
              isOpTriviallyDead(op))
            op->erase();
        });
  }

  /// Raises the layers of `func`; whether it raised one. The canonical
  /// route's reading is taken when it is complete (see
  /// CanonicalReading::complete), or when the shadow graph's raises none.
  FailureOr<bool> raise(func::FuncOp func, Reading reading) {
    CanonicalReading canonical = readCanonically(func, reading.whileAsFor);
    if (!canonical.layers.empty() && canonical.complete()) {
      adopt(func, canonical);
      return true;
    }
    // Its remarks wait for the choice between the two readings.
    SmallVector<std::tuple<Location, DiagnosticSeverity, std::string>> said;
    FailureOr<bool> raised = [&] {
      ScopedDiagnosticHandler capture(&getContext(), [&](Diagnostic &d) {
        said.push_back({d.getLocation(), d.getSeverity(), d.str()});
        return success();
      });
      // The shadow graph reads a loop with a partial last chunk unrolled;
      // the function takes the unrolled body only if a layer was raised.
      func::FuncOp unrolled = withPartialChunkLoopsUnrolled(func);
      Reading shadowReading = reading;
      shadowReading.unrolled = bool(unrolled);
      FailureOr<bool> result = raiseThroughShadow(
          unrolled ? unrolled : func, shadowReading, canonical.kept);
      if (unrolled) {
        if (succeeded(result) && *result)
          func.getBody().takeBody(unrolled.getBody());
        unrolled.erase();
      }
      return result;
    }();
    if (succeeded(raised) && !*raised && !canonical.layers.empty()) {
      adopt(func, canonical);
      return true;
    }
    for (auto &[loc, severity, text] : said) {
      if (severity == DiagnosticSeverity::Error)
        emitError(loc) << text;
      else if (severity == DiagnosticSeverity::Warning)
        emitWarning(loc) << text;
      else
        emitRemark(loc) << text;
    }
    return raised;
  }

  /// Raises the layers of `func` its shadow graph's ONNX raise finds;
  /// whether it raised one. `kept` are the layers the canonical route found
  /// and left, for the raise to report should it find none itself.
  FailureOr<bool> raiseThroughShadow(func::FuncOp func, Reading reading,
                                     ArrayRef<std::string> kept) {
    std::string why;
    FailureOr<ShadowGraph> shadow = buildShadowGraph(func, why);
    if (failed(shadow)) {
      // Declarations have nothing to read and say nothing.
      if (!func.isExternal())
        func.emitRemark() << "not read for TTT layers: " << why;
      return false;
    }
    if (printShadow) {
      if (reading.whileAsFor || reading.unrolled)
        func.print(llvm::errs());
      shadow->module->print(llvm::errs());
    }
    // The layers the canonical route found and left are the raise's to
    // report should it find none itself.
    if (!kept.empty()) {
      SmallVector<Attribute> texts;
      for (const std::string &text : kept)
        texts.push_back(StringAttr::get(&getContext(), text));
      for (onnx::GraphOp graph : shadow->module->getOps<onnx::GraphOp>())
        graph->setAttr(raise::kFoundByChunkRouteAttr,
                       ArrayAttr::get(&getContext(), texts));
    }
    PassManager pm(func.getContext(), ModuleOp::getOperationName());
    pm.addPass(createTTTRaiseONNX());
    // The raise speaks at the locations of the function's own ops; the
    // shadow nodes it would print with them mean nothing to the reader.
    SmallVector<std::pair<Location, std::string>> remarks;
    LogicalResult ran = [&] {
      ScopedDiagnosticHandler capture(func.getContext(), [&](Diagnostic &d) {
        if (d.getSeverity() == DiagnosticSeverity::Remark)
          remarks.push_back({d.getLocation(), d.str()});
        else
          remarks.push_back({d.getLocation(), "(shadow graph) " + d.str()});
        return success();
      });
      return pm.run(*shadow->module);
    }();
    // The shadow's Loop nodes are the function's loops.
    for (auto &[loc, text] : remarks) {
      StringRef shadowLoop = "ONNX Loop over chunks";
      if (size_t at = text.find(shadowLoop.str()); at != std::string::npos)
        text.replace(at, shadowLoop.size(),
                     reading.whileAsFor ? "counted scf.while over chunks"
                                        : "scf.for over chunks");
      StringRef unrolledLoop = "unrolled chunk loop";
      if (size_t at = text.find(unrolledLoop.str());
          reading.unrolled && at != std::string::npos)
        text.replace(at, unrolledLoop.size(),
                     reading.whileAsFor
                         ? "counted scf.while over chunks with a partial "
                           "last chunk (read unrolled)"
                         : "scf.for over chunks with a partial last chunk "
                           "(read unrolled)");
      emitRemark(loc) << text;
    }
    // The function itself is untouched: the shadow is a reading of it.
    if (failed(ran)) {
      func.emitRemark("no TTT layer read: the ONNX raise stopped on the "
                      "function's shadow graph");
      return false;
    }
    // The raise replaced the graph by its normalized copy if it rewrote.
    auto graphs = shadow->module->getOps<onnx::GraphOp>();
    if (graphs.empty())
      return false;
    bool raisedAny = false;
    onnx::GraphOp graph = *graphs.begin();
    SmallVector<onnx::NodeOp> markers;
    graph.walk([&](onnx::NodeOp node) {
      StringAttr doc = node.getDocStringAttr();
      if (node.getOpType() == "Identity" && doc &&
          doc.getValue().starts_with(raise::kRewrittenDoc) &&
          node.getOutputsAttr())
        markers.push_back(node);
    });
    for (onnx::NodeOp marker : markers) {
      StringRef name = cast<StringAttr>(marker.getOutputsAttr()[0]).getValue();
      auto it = shadow->original.find(name);
      Value replaced = it == shadow->original.end() ? Value() : it->second;
      if (!replaced || !replaced.getDefiningOp()) {
        func.emitRemark() << "TTT layer raised in the shadow graph, but the "
                             "value it computes is not one of the function's";
        continue;
      }
      Operation *anchor = replaced.getDefiningOp();
      Operation *before = anchor->getPrevNode();
      OpBuilder b(anchor);
      WriteBack writeBack(*shadow, func, b);
      FailureOr<Value> layer = failure();
      if (succeeded(assertAssumedSizes(*shadow, graph, anchor, b)))
        layer = writeBack.get(marker.getInputs()[0]);
      else
        writeBack.why = "a size its reading takes as equal to another is "
                        "not known before its output";
      if (succeeded(layer) && layer->getType() != replaced.getType()) {
        if (!tensor::CastOp::areCastCompatible(layer->getType(),
                                               replaced.getType()))
          layer = failure();
        else
          layer = tensor::CastOp::create(b, replaced.getLoc(),
                                         replaced.getType(), *layer)
                      .getResult();
      }
      if (failed(layer)) {
        // Take back what the write-back made before it stopped.
        Block *block = anchor->getBlock();
        Block::iterator first =
            before ? std::next(before->getIterator()) : block->begin();
        SmallVector<Operation *> made;
        for (auto it = first; it != anchor->getIterator(); ++it)
          made.push_back(&*it);
        for (Operation *op : llvm::reverse(made))
          op->erase();
        anchor->emitRemark()
            << "TTT layer: left as it was in the function: "
            << (writeBack.why.empty() ? "its layer op has no form here"
                                      : writeBack.why);
        continue;
      }
      Operation *assembly = replaced.getDefiningOp();
      replaced.replaceAllUsesWith(*layer);
      eraseComputation(assembly);
      raisedAny = true;
    }
    return raisedAny;
  }
};

} // namespace
