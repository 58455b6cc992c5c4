//===- GraphToFunc.cpp - an ONNX graph read as linalg on tensors --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "GraphToFunc.h"
#include "NodeHandlers.h"

#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

static RankedTensorType staticTensor(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.hasStaticShape() ? ranked : RankedTensorType();
}

ConvertedGraph::ConvertedGraph(onnx::GraphOp graph) : graph(graph) {
  MLIRContext *context = graph.getContext();
  OpBuilder b(context);
  module = ModuleOp::create(graph.getLoc());
  b.setInsertionPointToEnd(module->getBody());
  func = func::FuncOp::create(b, graph.getLoc(), graph.getSymName(),
                              b.getFunctionType({}, {}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  Block &graphBody = graph.getBody().front();
  for (BlockArgument arg : graphBody.getArguments()) {
    int64_t id = idFor(arg);
    if (RankedTensorType type = staticTensor(arg.getType())) {
      counterpart[id] = body->addArgument(type, arg.getLoc());
      argumentIds.push_back(id);
    }
  }
  // A model without an opset import is read as the newest.
  int64_t opset = onnx::getDefaultOpset(graph).value_or(INT64_MAX);
  for (Operation &op : graphBody.without_terminator()) {
    if (auto init = dyn_cast<onnx::InitializerOp>(op)) {
      int64_t id = idFor(init.getResult());
      // Integer tensors are shapes and indices, read from the graph; masks
      // (bool) and float tensors are data.
      Type element = init.getValue().getElementType();
      if (!(isa<FloatType>(element) || element.isInteger(1)) ||
          !staticTensor(init.getType()))
        continue;
      Operation *before = body->empty() ? nullptr : &body->back();
      Value constant = arith::ConstantOp::create(
          b, init.getLoc(), cast<TypedAttr>(init.getValue()));
      counterpart[id] = constant;
      tagNewOps(before, onnx::NodeOp(), {}, {}, constant, id);
      continue;
    }
    if (auto node = dyn_cast<onnx::NodeOp>(op)) {
      convertNode(b, node, opset);
      continue;
    }
    if (isa<onnx::NoneOp>(op))
      continue;
    // An op of another dialect (a layer an earlier pass raised) is opaque.
    for (Value result : op.getResults()) {
      int64_t id = idFor(result);
      if (RankedTensorType type = staticTensor(result.getType())) {
        counterpart[id] = body->addArgument(type, op.getLoc());
        argumentIds.push_back(id);
      }
    }
    op.walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (operand.getParentBlock() == &graphBody)
          markLiveOut(operand);
    });
  }
  for (Value output : graphBody.getTerminator()->getOperands())
    markLiveOut(output);
  SmallVector<Value> returned;
  for (int64_t id : liveOut)
    returned.push_back(counterpart.lookup(id));
  returnIds.assign(liveOut.begin(), liveOut.end());
  func::ReturnOp::create(b, graph.getLoc(), returned);
  func.setFunctionType(b.getFunctionType(body->getArgumentTypes(),
                                         ValueRange(returned).getTypes()));
}

ConvertedGraph::~ConvertedGraph() = default;

int64_t ConvertedGraph::idFor(Value value) {
  auto [it, inserted] = idOf.try_emplace(value, values.size());
  if (inserted)
    values.push_back(value);
  return it->second;
}

int64_t ConvertedGraph::canonical(int64_t id) const {
  for (auto it = aliasOf.find(id); it != aliasOf.end(); it = aliasOf.find(id))
    id = it->second;
  return id;
}

void ConvertedGraph::markLiveOut(Value onnxValue) {
  auto it = idOf.find(onnxValue);
  if (it != idOf.end() && counterpart.lookup(it->second))
    liveOut.insert(it->second);
}

void ConvertedGraph::makeOpaque(OpBuilder &b, onnx::NodeOp node,
                                std::string reason) {
  Block *body = &func.getBody().front();
  for (Value result : node.getResults()) {
    int64_t id = idFor(result);
    if (RankedTensorType type = staticTensor(result.getType())) {
      counterpart[id] = body->addArgument(type, node.getLoc());
      argumentIds.push_back(id);
    }
  }
  // What the node reads must stay computed, in its subgraphs too.
  Block *graphBody = &graph.getBody().front();
  node.walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      if (operand.getParentBlock() == graphBody)
        markLiveOut(operand);
  });
  opaque.push_back({node, std::move(reason)});
}

void ConvertedGraph::convertNode(OpBuilder &b, onnx::NodeOp node,
                                 int64_t opset) {
  if (!node.isDefaultDomain())
    return makeOpaque(
        b, node, "its domain '" + node.getDomain().str() + "' has no handlers");
  if (node->getNumRegions() != 0)
    return makeOpaque(b, node, "control flow is not converted yet");
  Handler handler = findHandler(node.getOpType(), opset);
  if (!handler)
    return makeOpaque(b, node,
                      "no handler for " + node.getOpType().str() +
                          " at opset " + std::to_string(opset));
  SmallVector<Value> inputs;
  SmallVector<int64_t> inputIds;
  for (Value input : node.getInputs()) {
    auto it = idOf.find(input);
    inputIds.push_back(it == idOf.end() ? -1 : it->second);
    inputs.push_back(it == idOf.end() ? Value()
                                      : counterpart.lookup(it->second));
  }
  Block *body = &func.getBody().front();
  Operation *before = body->empty() ? nullptr : &body->back();
  SmallVector<Value> results;
  std::string why;
  NodeView view{node, inputs};
  LogicalResult converted = handler(b, view, results, why);
  if (succeeded(converted) && results.size() != node->getNumResults()) {
    converted = failure();
    why = "its handler gave " + std::to_string(results.size()) +
          " results for " + std::to_string(node->getNumResults());
  }
  if (failed(converted)) {
    // Take back what the handler built, last op first.
    while (!body->empty() && &body->back() != before)
      body->back().erase();
    return makeOpaque(b, node, why);
  }
  SmallVector<int64_t> resultIds;
  for (auto [result, value] : llvm::zip(node.getResults(), results)) {
    int64_t id = idFor(result);
    resultIds.push_back(id);
    if (!value)
      continue;
    counterpart[id] = value;
    // A result that is an input (Identity, a cast to the same type).
    for (auto [input, inputId] : llvm::zip(inputs, inputIds))
      if (input == value && inputId >= 0) {
        aliasOf[id] = inputId;
        break;
      }
  }
  tagNewOps(before, node, inputs, inputIds, results, resultIds);
  ++this->converted;
}

void ConvertedGraph::tagNewOps(Operation *before, onnx::NodeOp node,
                               ValueRange inputs, ArrayRef<int64_t> inputIds,
                               ValueRange results,
                               ArrayRef<int64_t> resultIds) {
  Block *body = &func.getBody().front();
  auto it = before ? std::next(Block::iterator(before)) : body->begin();
  MLIRContext *context = func.getContext();
  for (; it != body->end(); ++it) {
    OpRecord record;
    record.node = node;
    for (Value operand : it->getOperands()) {
      int64_t id = -1;
      for (auto [input, inputId] : llvm::zip(inputs, inputIds))
        if (input == operand) {
          id = inputId;
          break;
        }
      record.operandIds.push_back(id);
    }
    for (Value result : it->getResults()) {
      int64_t id = -1;
      for (auto [value, resultId] : llvm::zip(results, resultIds))
        if (value == result) {
          id = resultId;
          break;
        }
      record.resultIds.push_back(id);
    }
    it->setAttr(kRecordAttr,
                IntegerAttr::get(IntegerType::get(context, 64), ops.size()));
    ops.push_back(std::move(record));
  }
}
