//===- WriteBack.cpp - what the canonical route changed, as ONNX --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "WriteBack.h"

#include "../ONNXToTTT/LayerFinder.h"

#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"
#include "ttt/Dialect/TTT/IR/TTTDialect.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <map>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

namespace {
class GraphWriter {
public:
  GraphWriter(ConvertedGraph &converted, std::string &why)
      : cg(converted), why(why) {}

  FailureOr<onnx::GraphOp> run(SmallVectorImpl<Replacement> &replaced);

private:
  LogicalResult collectAlive();
  LogicalResult nodeStates();
  Value current(int64_t id);
  /// The ONNX value (in the copy) computing the function's `value`.
  Value emit(Value value);
  Value emitOp(Operation *op, unsigned resultNumber);
  Value node(StringRef opType, ValueRange inputs, Type result,
             ArrayRef<NamedAttribute> attrs = {});
  Value i64s(ArrayRef<int64_t> values);
  LogicalResult fail(const Twine &reason) {
    if (why.empty())
      why = reason.str();
    return failure();
  }

  ConvertedGraph &cg;
  std::string &why;
  /// The op of each record that is still in the function.
  llvm::DenseMap<int64_t, Operation *> alive;
  /// For each id: the record and result that computed it.
  llvm::DenseMap<int64_t, std::pair<int64_t, unsigned>> producer;
  llvm::DenseMap<int64_t, unsigned> argumentOf;
  /// Nodes (and initializers) all of whose ops the rewrite took away.
  llvm::SetVector<Operation *> dead;
  /// Converted nodes that stay.
  llvm::DenseSet<Operation *> staying;

  IRMapping toCopy;
  onnx::GraphOp copy;
  std::unique_ptr<OpBuilder> builder;
  llvm::DenseMap<Value, Value> emitted;
  SmallVector<Operation *> layerOps;
};
} // namespace

LogicalResult GraphWriter::collectAlive() {
  for (Operation &op : cg.func.getBody().front()) {
    auto index = op.getAttrOfType<IntegerAttr>(kRecordAttr);
    if (!index)
      continue;
    int64_t record = index.getInt();
    if (record < 0 || record >= static_cast<int64_t>(cg.ops.size()) ||
        !alive.try_emplace(record, &op).second)
      return fail("the rewrite copied an op of the graph, so the copy's "
                  "node cannot be told from the original");
  }
  for (auto [record, info] : llvm::enumerate(cg.ops))
    for (auto [result, id] : llvm::enumerate(info.resultIds))
      if (id >= 0)
        producer.try_emplace(id, record, result);
  for (auto [index, id] : llvm::enumerate(cg.argumentIds))
    argumentOf[id] = index;
  return success();
}

LogicalResult GraphWriter::nodeStates() {
  // Per node (an initializer's constant keyed by the initializer): how many
  // of its ops stay, and how many of those that compute its results. A node
  // stays whole or goes: what made its results went (the ops only they read
  // may be left, unread), or nothing did.
  struct Count {
    int kept = 0, total = 0, resultsKept = 0, results = 0;
  };
  llvm::MapVector<Operation *, Count> counts;
  for (auto [record, info] : llvm::enumerate(cg.ops)) {
    Operation *key = info.node;
    if (!key) {
      int64_t id = info.resultIds.front();
      key = cg.values[id].getDefiningOp();
    }
    Count &count = counts[key];
    bool computesResult =
        llvm::any_of(info.resultIds, [](int64_t id) { return id >= 0; });
    bool kept = alive.count(record);
    ++count.total;
    count.kept += kept;
    count.results += computesResult;
    count.resultsKept += computesResult && kept;
  }
  // The passes replace values only by equal ones (a no-op folded, an
  // unread Split piece dropped), so a node one of whose results is still
  // computed stays as the model has it, whatever went of its inside.
  for (auto &[op, count] : counts) {
    if (count.kept == count.total || count.resultsKept > 0)
      staying.insert(op);
    else if (count.results > 0)
      dead.insert(op);
    else
      return fail("the rewrite took away part of what node '" +
                  (isa<onnx::NodeOp>(op)
                       ? cast<onnx::NodeOp>(op).getOpType().str()
                       : op->getName().getStringRef().str()) +
                  "' became");
  }
  return success();
}

Value GraphWriter::current(int64_t id) {
  id = cg.canonical(id);
  if (auto it = argumentOf.find(id); it != argumentOf.end())
    return cg.func.getArgument(it->second);
  auto it = producer.find(id);
  if (it == producer.end())
    return {};
  Operation *op = alive.lookup(it->second.first);
  return op ? op->getResult(it->second.second) : Value();
}

Value GraphWriter::node(StringRef opType, ValueRange inputs, Type result,
                        ArrayRef<NamedAttribute> attrs) {
  DictionaryAttr dict =
      attrs.empty() ? DictionaryAttr() : builder->getDictionaryAttr(attrs);
  return onnx::NodeOp::create(*builder, copy.getLoc(), TypeRange{result},
                              opType, /*domain=*/"", dict,
                              /*node_name=*/nullptr, /*outputs=*/nullptr,
                              /*doc_string=*/nullptr, inputs,
                              /*subgraphsCount=*/0)
      ->getResult(0);
}

Value GraphWriter::i64s(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    builder->getI64Type());
  return node(
      "Constant", {}, type,
      {builder->getNamedAttr("value", DenseElementsAttr::get(type, values))});
}

Value GraphWriter::emit(Value value) {
  if (Value known = emitted.lookup(value))
    return known;
  Value result;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    result = toCopy.lookup(cg.values[cg.argumentIds[arg.getArgNumber()]]);
  } else if (auto record = value.getDefiningOp()->getAttrOfType<IntegerAttr>(
                 kRecordAttr)) {
    unsigned number = cast<OpResult>(value).getResultNumber();
    int64_t id = cg.ops[record.getInt()].resultIds[number];
    if (id >= 0) {
      result = toCopy.lookup(cg.values[id]);
    } else {
      // A value inside what one node became (the collapse of a Reshape
      // that the reader's no-op folding exposed): written as its own node
      // when it is a view the writer knows.
      std::string before = why;
      result = emitOp(value.getDefiningOp(), number);
      if (!result) {
        why = before;
        (void)fail("the rewrite reads a value inside what node '" +
                   cg.ops[record.getInt()].node.getOpType() + "' became");
        return {};
      }
    }
  } else {
    result =
        emitOp(value.getDefiningOp(), cast<OpResult>(value).getResultNumber());
  }
  if (result)
    emitted[value] = result;
  return result;
}

/// A `linalg.generic` that writes `c * x` (or adds it to its init), `x`
/// read in the result's trailing dims (a NumPy broadcast): what the reader
/// builds to scale rates and to read an initial weight in a wider shape.
/// `c` is a constant of the payload or a splat constant input (a scaling
/// the no-op folding respelled).
struct ScaledCopy {
  double scale = 1.0;
  bool accumulate = false;
  /// Which input is `x`.
  unsigned input = 0;
};

/// The value of a splat float constant tensor.
static std::optional<double> splatValue(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  auto dense = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue())
                        : DenseFPElementsAttr();
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// Whether `generic` writes `a - b` element for element, both inputs read
/// as it writes its output (the no-op folding's spelling of `a + (-b)`).
static bool isElementwiseDifference(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  for (AffineMap map : generic.getIndexingMapsArray())
    if (!map.isIdentity())
      return false;
  Type type = generic.getResult(0).getType();
  if (generic.getDpsInputs()[0].getType() != type ||
      generic.getDpsInputs()[1].getType() != type)
    return false;
  Block &body = generic.getRegion().front();
  auto sub = body.getTerminator()->getOperand(0).getDefiningOp<arith::SubFOp>();
  return sub && sub.getLhs() == body.getArgument(0) &&
         sub.getRhs() == body.getArgument(1);
}

static std::optional<ScaledCopy> readScaledCopy(linalg::GenericOp generic) {
  unsigned inputs = generic.getNumDpsInputs();
  if (inputs < 1 || inputs > 2 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .isIdentity())
    return std::nullopt;
  ScaledCopy copy;
  Block &body = generic.getRegion().front();
  Value splatArg;
  if (inputs == 2) {
    std::optional<double> first = splatValue(generic.getDpsInputs()[0]),
                          second = splatValue(generic.getDpsInputs()[1]);
    if (first.has_value() == second.has_value())
      return std::nullopt;
    copy.input = first ? 1 : 0;
    splatArg = body.getArgument(1 - copy.input);
  }
  // Each input dim is the result's dim it aligns with from the end, or,
  // of size 1, read at 0: NumPy's broadcast, which an Expand spells.
  AffineMap inputMap =
      generic.getMatchingIndexingMap(generic.getDpsInputOperand(copy.input));
  auto inputType =
      dyn_cast<RankedTensorType>(generic.getDpsInputs()[copy.input].getType());
  unsigned rank = inputMap.getNumResults(), loops = inputMap.getNumDims();
  if (!inputType || inputType.getRank() != rank || rank > loops)
    return std::nullopt;
  for (auto [i, expr] : llvm::enumerate(inputMap.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    auto zero = dyn_cast<AffineConstantExpr>(expr);
    bool aligned = dim && dim.getPosition() == loops - rank + i;
    bool broadcast =
        zero && zero.getValue() == 0 && inputType.getDimSize(i) == 1;
    if (!aligned && !broadcast)
      return std::nullopt;
  }
  Value in = body.getArgument(copy.input), out = body.getArgument(inputs);
  Value yielded = body.getTerminator()->getOperand(0);
  if (auto add = yielded.getDefiningOp<arith::AddFOp>()) {
    if (add.getLhs() != out && add.getRhs() != out)
      return std::nullopt;
    copy.accumulate = true;
    yielded = add.getLhs() == out ? add.getRhs() : add.getLhs();
  }
  if (yielded == in && !splatArg)
    return copy;
  auto mul = yielded.getDefiningOp<arith::MulFOp>();
  if (!mul || (mul.getLhs() != in && mul.getRhs() != in))
    return std::nullopt;
  Value factor = mul.getLhs() == in ? mul.getRhs() : mul.getLhs();
  if (splatArg) {
    if (factor != splatArg)
      return std::nullopt;
    copy.scale = *splatValue(generic.getDpsInputs()[1 - copy.input]);
    return copy;
  }
  auto constant = factor.getDefiningOp<arith::ConstantOp>();
  auto attr = constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
  if (!attr)
    return std::nullopt;
  copy.scale = attr.getValueAsDouble();
  return copy;
}

/// True if `value` is a `linalg.fill` of zero.
static bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  auto constant = fill.value().getDefiningOp<arith::ConstantOp>();
  auto attr = constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
  return attr && attr.getValue().isZero();
}

Value GraphWriter::emitOp(Operation *op, unsigned resultNumber) {
  auto emitAll = [&](ValueRange operands, SmallVectorImpl<Value> &out) {
    for (Value operand : operands) {
      Value onnx = emit(operand);
      if (!onnx)
        return false;
      out.push_back(onnx);
    }
    return true;
  };
  Type type = op->getResult(resultNumber).getType();
  if (isa<KVBLayerOp>(op)) {
    SmallVector<Value> operands;
    if (!emitAll(op->getOperands(), operands))
      return {};
    IRMapping mapping;
    mapping.map(op->getOperands(), operands);
    Operation *clone = builder->clone(*op, mapping);
    clone->setLoc(op->getLoc());
    layerOps.push_back(clone);
    for (auto [from, to] : llvm::zip(op->getResults(), clone->getResults()))
      emitted[from] = to;
    return clone->getResult(resultNumber);
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    Value input = emit(transpose.getInput());
    if (!input)
      return {};
    return node(
        "Transpose", {input}, type,
        {builder->getNamedAttr("perm", builder->getDenseI64ArrayAttr(
                                           transpose.getPermutation()))});
  }
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op)) {
    auto shaped = cast<RankedTensorType>(type);
    Value input = emit(op->getOperand(0));
    if (!input)
      return {};
    if (!shaped.hasStaticShape()) {
      (void)fail("the raised form reshapes to a shape known only at run "
                 "time");
      return {};
    }
    return node("Reshape", {input, i64s(shaped.getShape())}, type);
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    if (!slice.hasUnitStride() || !slice.getSourceType().hasStaticShape() ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
        ShapedType::isDynamicShape(slice.getStaticSizes()) ||
        slice.getSourceType().getRank() != slice.getType().getRank()) {
      (void)fail("the raised form cuts a slice of run-time bounds");
      return {};
    }
    Value input = emit(slice.getSource());
    if (!input)
      return {};
    SmallVector<int64_t> starts, ends, axes;
    for (auto [d, offset, size] :
         llvm::enumerate(slice.getStaticOffsets(), slice.getStaticSizes())) {
      if (offset == 0 && size == slice.getSourceType().getDimSize(d))
        continue;
      starts.push_back(offset);
      ends.push_back(offset + size);
      axes.push_back(d);
    }
    if (axes.empty())
      return input;
    return node("Slice", {input, i64s(starts), i64s(ends), i64s(axes)}, type);
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    SmallVector<Value> inputs;
    if (!emitAll(concat.getInputs(), inputs))
      return {};
    if (inputs.size() == 1)
      return inputs.front();
    return node("Concat", inputs, type,
                {builder->getNamedAttr(
                    "axis", builder->getI64IntegerAttr(concat.getDim()))});
  }
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    auto shaped = cast<RankedTensorType>(type);
    auto constant = fill.value().getDefiningOp<arith::ConstantOp>();
    auto scalar =
        constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
    if (scalar && shaped.hasStaticShape())
      return node("Constant", {}, type,
                  {builder->getNamedAttr(
                      "value", DenseElementsAttr::get(shaped, scalar))});
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto elements = dyn_cast<ElementsAttr>(constant.getValue()))
      return node("Constant", {}, type,
                  {builder->getNamedAttr("value", elements)});
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    if (isElementwiseDifference(generic)) {
      SmallVector<Value> inputs;
      if (!emitAll(generic.getDpsInputs(), inputs))
        return {};
      return node("Sub", inputs, type);
    }
    if (std::optional<ScaledCopy> copy = readScaledCopy(generic)) {
      auto resultType = cast<RankedTensorType>(type);
      Value input = emit(generic.getDpsInputs()[copy->input]);
      if (!input || !resultType.hasStaticShape())
        return {};
      Type elem = resultType.getElementType();
      if (copy->scale != 1.0) {
        auto scalarType = RankedTensorType::get({}, elem);
        Value factor = node(
            "Constant", {}, scalarType,
            {builder->getNamedAttr(
                "value", DenseElementsAttr::get(
                             scalarType, FloatAttr::get(elem, copy->scale)))});
        input = node("Mul", {input, factor}, input.getType());
      }
      if (input.getType() != type)
        input = node("Expand", {input, i64s(resultType.getShape())}, type);
      Value init = generic.getDpsInits()[0];
      if (!copy->accumulate || isZeroFill(init))
        return input;
      Value base = emit(init);
      if (!base)
        return {};
      return node("Add", {base, input}, type);
    }
  }
  (void)fail("the raised form reads '" + op->getName().getStringRef() +
             "', which the write-back has no ONNX spelling for");
  return {};
}

FailureOr<onnx::GraphOp>
GraphWriter::run(SmallVectorImpl<Replacement> &replaced) {
  // A loop the reader did not raise has no ONNX form; the whole graph is
  // then left to the other readers.
  if (!cg.func.getBody().getOps<ChunkLoopOp>().empty())
    return fail("a ttt.chunk_loop the reader did not raise would have to be "
                "written back");
  if (failed(collectAlive()) || failed(nodeStates()))
    return failure();
  // What each staying node, and the graph's outputs, now read instead.
  using Key = std::pair<Operation *, int64_t>; // consumer (null: outputs), id
  std::map<Key, Value> requests;
  SmallVector<Key> order;
  auto request = [&](Operation *consumer, int64_t id, Value now) {
    auto [it, inserted] = requests.try_emplace({consumer, id}, now);
    if (inserted)
      order.push_back({consumer, id});
    else if (it->second != now)
      return fail("the rewrite gives one node two different values for one "
                  "input");
    return success();
  };
  for (auto [record, op] : alive) {
    const OpRecord &info = cg.ops[record];
    for (auto [operand, id] : llvm::zip(op->getOperands(), info.operandIds))
      if (id >= 0 && operand != current(id) &&
          failed(request(info.node, id, operand)))
        return failure();
  }
  auto ret = cast<func::ReturnOp>(cg.func.getBody().front().getTerminator());
  for (auto [operand, id] : llvm::zip(ret.getOperands(), cg.returnIds))
    if (operand != current(id) && failed(request(nullptr, id, operand)))
      return failure();
  if (order.empty())
    return fail("the rewrite changed nothing the graph reads");
  // Requests in graph order, so that the copy's new nodes are too.
  llvm::sort(order, [&](const Key &a, const Key &b) {
    return a.second != b.second
               ? a.second < b.second
               : a.first != b.first && b.first &&
                     (!a.first || a.first->isBeforeInBlock(b.first));
  });

  copy = cast<onnx::GraphOp>(cg.graph->clone(toCopy));
  cg.graph->getBlock()->getOperations().insert(
      std::next(Block::iterator(cg.graph)), copy);
  Block &body = copy.getBody().front();
  builder = std::make_unique<OpBuilder>(body.getTerminator());
  llvm::DenseSet<Operation *> stayingCopy, deadCopy;
  for (Operation *op : staying)
    stayingCopy.insert(toCopy.lookup(op));
  for (Operation *op : dead)
    deadCopy.insert(toCopy.lookup(op));
  auto discard = [&] {
    copy->erase();
    return failure();
  };
  llvm::MapVector<Operation *, SmallVector<Operation *>> layersOf;
  for (const Key &key : order) {
    auto [consumer, id] = key;
    size_t layersBefore = layerOps.size();
    Value old = toCopy.lookup(cg.values[id]);
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : old.getUses()) {
      Operation *user = use.getOwner();
      while (user->getParentOp() != copy)
        user = user->getParentOp();
      // A staying node's own request, or (for the outputs) the yield and
      // the nodes left out of the analysis.
      bool take = consumer
                      ? user == toCopy.lookup(consumer)
                      : !stayingCopy.contains(user) && !deadCopy.contains(user);
      if (take)
        uses.push_back(&use);
    }
    Value now = emit(requests[key]);
    if (!now)
      return discard();
    // The node that carries a rewritten layer's output says so, so that a
    // later reader does not take the parallel form for a layer.
    if (layerOps.size() != layersBefore) {
      // It takes the name of the output it replaces when that goes.
      auto original = cg.values[id].getDefiningOp<onnx::NodeOp>();
      bool goes = original && dead.contains(original);
      StringRef name =
          goes ? original.getOutputName(
                     cast<OpResult>(cg.values[id]).getResultNumber())
               : StringRef();
      now = onnx::NodeOp::create(
                *builder, now.getLoc(), TypeRange{now.getType()}, "Identity",
                /*domain=*/"", /*attrs=*/nullptr,
                goes ? original.getNodeNameAttr() : nullptr,
                name.empty() ? nullptr : builder->getStrArrayAttr({name}),
                builder->getStringAttr(raise::kRewrittenDoc +
                                       "read through ttt.chunk_loop"),
                ValueRange{now}, /*subgraphsCount=*/0)
                ->getResult(0);
    }
    for (OpOperand *use : uses)
      use->set(now);
    Operation *original = cg.values[id].getDefiningOp();
    auto &layers = layersOf[original ? original : cg.graph.getOperation()];
    layers.append(layerOps.begin() + layersBefore, layerOps.end());
  }
  // The nodes the rewrite took away, then what only they read.
  SmallVector<Operation *> worklist;
  for (Operation *op : dead)
    worklist.push_back(toCopy.lookup(op));
  llvm::DenseSet<Operation *> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !op->use_empty() || !isMemoryEffectFree(op))
      continue;
    for (Value input : op->getOperands())
      if (Operation *def = input.getDefiningOp();
          def && def->getBlock() == &body)
        worklist.push_back(def);
    erased.insert(op);
    op->erase();
  }
  // A node the passes took away as a no-op (a reshape and its inverse) that
  // a node left as it was still reads stays: it computes what it did, from
  // inputs that stay because it reads them.
  if (!sortTopologically(&body)) {
    (void)fail("the written-back graph has a cycle");
    return discard();
  }
  for (auto &[original, layers] : layersOf)
    if (!layers.empty())
      replaced.push_back({original, layers});
  return copy;
}

FailureOr<onnx::GraphOp>
onnx_to_linalg::writeBack(ConvertedGraph &converted,
                          SmallVectorImpl<Replacement> &replaced,
                          std::string &why) {
  return GraphWriter(converted, why).run(replaced);
}
