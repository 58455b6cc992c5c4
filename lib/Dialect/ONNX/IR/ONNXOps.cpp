//===- ONNXOps.cpp - onnx ops ---------------------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::ttt::onnx;

#define GET_OP_CLASSES
#include "ttt/Dialect/ONNX/IR/ONNXOps.cpp.inc"

/// The string attribute `name` of `attrs`, or "".
static StringRef getStringEntry(DictionaryAttr attrs, StringRef name) {
  if (!attrs)
    return {};
  if (auto value = attrs.getAs<StringAttr>(name))
    return value.getValue();
  return {};
}

//===----------------------------------------------------------------------===//
// GraphOp
//===----------------------------------------------------------------------===//

ParseResult GraphOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void GraphOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

StringRef GraphOp::getInputName(unsigned index) {
  return getStringEntry(getArgAttrDict(index), ONNXDialect::kName);
}

StringRef GraphOp::getOutputName(unsigned index) {
  return getStringEntry(getResultAttrDict(index), ONNXDialect::kName);
}

void GraphOp::getAsmBlockArgumentNames(Region &region,
                                       OpAsmSetValueNameFn setNameFn) {
  if (region.empty())
    return;
  for (BlockArgument arg : region.front().getArguments()) {
    StringRef name = getInputName(arg.getArgNumber());
    if (!name.empty())
      setNameFn(arg, name);
  }
}

LogicalResult GraphOp::verify() {
  Block &body = getBody().front();
  if (body.empty() || !isa<YieldOp>(body.back()))
    return emitOpError() << "body must end with onnx.yield";
  return success();
}

//===----------------------------------------------------------------------===//
// NodeOp
//===----------------------------------------------------------------------===//

bool NodeOp::isDefaultDomain() {
  StringRef domain = getDomain();
  return domain.empty() || domain == "ai.onnx";
}

StringRef NodeOp::getOutputName(unsigned index) {
  std::optional<ArrayAttr> outputs = getOutputs();
  if (!outputs || index >= outputs->size())
    return {};
  return cast<StringAttr>((*outputs)[index]).getValue();
}

Attribute NodeOp::getONNXAttr(StringRef name) {
  std::optional<DictionaryAttr> attrs = getAttrs();
  return attrs ? attrs->get(name) : Attribute();
}

GraphAttr NodeOp::getGraphAttrOfRegion(unsigned index) {
  std::optional<DictionaryAttr> attrs = getAttrs();
  if (!attrs)
    return {};
  for (NamedAttribute attr : *attrs) {
    if (auto graph = dyn_cast<GraphAttr>(attr.getValue()))
      if (graph.getRegion() == index)
        return graph;
    if (auto array = dyn_cast<ArrayAttr>(attr.getValue()))
      for (Attribute element : array)
        if (auto graph = dyn_cast<GraphAttr>(element))
          if (graph.getRegion() == index)
            return graph;
  }
  return {};
}

void NodeOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  for (OpResult result : getResults()) {
    StringRef name = getOutputName(result.getResultNumber());
    if (!name.empty())
      setNameFn(result, name);
    else if (isa<NoneType>(result.getType()))
      setNameFn(result, "omitted");
  }
}

void NodeOp::getAsmBlockArgumentNames(Region &region,
                                      OpAsmSetValueNameFn setNameFn) {
  GraphAttr graph = getGraphAttrOfRegion(region.getRegionNumber());
  if (!graph || region.empty())
    return;
  for (auto [arg, name] :
       llvm::zip(region.front().getArguments(), graph.getInputs()))
    if (!cast<StringAttr>(name).getValue().empty())
      setNameFn(arg, cast<StringAttr>(name).getValue());
}

/// Default-domain ops whose results depend on more than their inputs.
static bool isNondeterministic(StringRef opType) {
  return llvm::is_contained({"Bernoulli", "Dropout", "Multinomial",
                             "RandomNormal", "RandomNormalLike",
                             "RandomUniform", "RandomUniformLike"},
                            opType);
}

void NodeOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Standard ONNX ops are functions of their inputs, so passes may drop or
  // merge them; an op of another domain, a random op, or an op with
  // subgraphs is kept as it is.
  if (isDefaultDomain() && getNumRegions() == 0 &&
      !isNondeterministic(getOpType()))
    return;
  effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}

/// Appends the region numbers `attr` refers to (a #onnx.graph or an array
/// of them) to `regions`.
static void collectGraphRefs(Attribute attr,
                             SmallVectorImpl<unsigned> &regions) {
  if (auto graph = dyn_cast<GraphAttr>(attr))
    regions.push_back(graph.getRegion());
  else if (auto array = dyn_cast<ArrayAttr>(attr))
    for (Attribute element : array)
      collectGraphRefs(element, regions);
}

LogicalResult NodeOp::verify() {
  if (getOpType().empty())
    return emitOpError() << "needs a non-empty op_type";
  if (std::optional<ArrayAttr> outputs = getOutputs()) {
    if (outputs->size() != getNumResults())
      return emitOpError() << "names " << outputs->size() << " outputs but has "
                           << getNumResults() << " results";
    for (OpResult result : getResults()) {
      bool omitted = isa<NoneType>(result.getType());
      bool unnamed = getOutputName(result.getResultNumber()).empty();
      if (omitted != unnamed)
        return emitOpError()
               << "result #" << result.getResultNumber()
               << (omitted ? " is an omitted output (type none) but is named"
                           : " needs a name; only omitted outputs (type "
                             "none) have the empty name");
    }
  }

  SmallVector<unsigned> regions;
  if (std::optional<DictionaryAttr> attrs = getAttrs()) {
    for (NamedAttribute attr : *attrs) {
      if (!getAttrKind(attr.getValue()))
        return emitOpError() << "attribute '" << attr.getName().getValue()
                             << "' has no ONNX form: " << attr.getValue();
      collectGraphRefs(attr.getValue(), regions);
    }
  }
  llvm::SmallBitVector seen(getNumRegions());
  for (unsigned region : regions) {
    if (region >= getNumRegions())
      return emitOpError() << "a graph attribute refers to region " << region
                           << " but the node has " << getNumRegions()
                           << " regions";
    if (seen.test(region))
      return emitOpError() << "region " << region
                           << " is referred to by two graph attributes";
    seen.set(region);
  }
  if (!seen.all())
    return emitOpError() << "region " << seen.find_first_unset()
                         << " is not referred to by any graph attribute";
  return success();
}

LogicalResult NodeOp::verifyRegions() {
  for (Region &region : getSubgraphs()) {
    GraphAttr graph = getGraphAttrOfRegion(region.getRegionNumber());
    if (!graph)
      continue;
    Block &block = region.front();
    if (block.empty() || !isa<YieldOp>(block.back()))
      return emitOpError() << "subgraph '" << graph.getName().getValue()
                           << "' must end with onnx.yield";
    if (block.getNumArguments() != graph.getInputs().size())
      return emitOpError() << "subgraph '" << graph.getName().getValue()
                           << "' names " << graph.getInputs().size()
                           << " inputs but takes " << block.getNumArguments();
  }
  std::string error = getSubgraphSignatureError();
  if (!error.empty())
    return emitOpError() << error;
  return success();
}

/// The number of values the terminator of `region` yields, or std::nullopt
/// when it has none (reported elsewhere).
static std::optional<size_t> getNumYielded(Region &region) {
  if (region.empty() || region.front().empty())
    return std::nullopt;
  if (auto yield = dyn_cast<YieldOp>(region.front().back()))
    return yield.getValues().size();
  return std::nullopt;
}

/// "1 input", "2 inputs".
static std::string count(size_t n, StringRef noun) {
  return std::to_string(n) + " " + noun.str() + (n == 1 ? "" : "s");
}

std::string NodeOp::getSubgraphSignatureError() {
  if (!isDefaultDomain())
    return {};
  StringRef opType = getOpType();
  size_t numInputs = getInputs().size(), numResults = getNumResults();
  auto graphNamed = [&](StringRef name) -> Region * {
    auto graph = dyn_cast_or_null<GraphAttr>(getONNXAttr(name));
    if (!graph || graph.getRegion() >= getNumRegions())
      return nullptr;
    return &getSubgraphs()[graph.getRegion()];
  };

  if (opType == "Loop") {
    Region *body = graphNamed("body");
    if (!body)
      return "a Loop needs a 'body' graph attribute";
    if (numInputs < 2)
      return llvm::formatv("a Loop takes the trip count and the condition "
                           "(either may be omitted) before its loop-carried "
                           "values, but has {0}",
                           count(numInputs, "input"));
    size_t carried = numInputs - 2;
    if (numResults < carried)
      return llvm::formatv("a Loop with {0} has at least {1}, but this one "
                           "has {2}",
                           count(carried, "loop-carried value"),
                           count(carried, "output"), numResults);
    size_t numArgs = body->empty() ? 0 : body->front().getNumArguments();
    if (numArgs != carried + 2)
      return llvm::formatv(
          "its body takes {0}, but a Loop with {1} needs {2}: the iteration "
          "number, the condition and the loop-carried values",
          count(numArgs, "input"), count(carried, "loop-carried value"),
          carried + 2);
    std::optional<size_t> yielded = getNumYielded(*body);
    if (yielded && *yielded != numResults + 1)
      return llvm::formatv(
          "its body yields {0}, but this Loop needs {1}: the condition, {2} "
          "and {3}",
          count(*yielded, "value"), numResults + 1,
          count(carried, "loop-carried value"),
          count(numResults - carried, "scan output"));
    return {};
  }

  if (opType == "If") {
    for (StringRef branch : {"then_branch", "else_branch"}) {
      Region *region = graphNamed(branch);
      if (!region)
        return llvm::formatv("an If needs a '{0}' graph attribute", branch);
      size_t numArgs = region->empty() ? 0 : region->front().getNumArguments();
      if (numArgs != 0)
        return llvm::formatv("its {0} takes {1}, but If branches take none",
                             branch, count(numArgs, "input"));
      std::optional<size_t> yielded = getNumYielded(*region);
      if (yielded && *yielded != numResults)
        return llvm::formatv("its {0} yields {1}, but the If has {2}", branch,
                             count(*yielded, "value"),
                             count(numResults, "output"));
    }
    return {};
  }

  if (opType == "Scan") {
    Region *body = graphNamed("body");
    if (!body)
      return "a Scan needs a 'body' graph attribute";
    auto numScanAttr =
        dyn_cast_or_null<IntegerAttr>(getONNXAttr("num_scan_inputs"));
    if (!numScanAttr)
      return "a Scan needs an integer 'num_scan_inputs' attribute";
    // Scan-8 takes an optional sequence_lens input before the states.
    std::optional<int64_t> opset = getDefaultOpset(getOperation());
    size_t leading = opset && *opset < 9 ? 1 : 0;
    int64_t numScan = numScanAttr.getInt();
    if (numScan < 1 || static_cast<size_t>(numScan) + leading > numInputs)
      return llvm::formatv("'num_scan_inputs' is {0}, but must be between 1 "
                           "and the number of inputs ({1})",
                           numScan, numInputs - leading);
    size_t states = numInputs - leading - numScan;
    if (numResults < states)
      return llvm::formatv("a Scan with {0} has at least {1}, but this one "
                           "has {2}",
                           count(states, "state variable"),
                           count(states, "output"), numResults);
    size_t numArgs = body->empty() ? 0 : body->front().getNumArguments();
    if (numArgs != states + numScan)
      return llvm::formatv("its body takes {0}, but this Scan needs {1}: {2} "
                           "and {3}",
                           count(numArgs, "input"), states + numScan,
                           count(states, "state"),
                           count(numScan, "scan input"));
    std::optional<size_t> yielded = getNumYielded(*body);
    if (yielded && *yielded != numResults)
      return llvm::formatv("its body yields {0}, but this Scan has {1} ({2} "
                           "and {3})",
                           count(*yielded, "value"),
                           count(numResults, "output"), count(states, "state"),
                           count(numResults - states, "scan output"));
    return {};
  }
  return {};
}

//===----------------------------------------------------------------------===//
// InitializerOp
//===----------------------------------------------------------------------===//

void InitializerOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  if (!getName().empty())
    setNameFn(getResult(), getName());
}

LogicalResult InitializerOp::verify() {
  if (!isSupportedElementType(getValue().getElementType()))
    return emitOpError() << "initializer '" << getName()
                         << "' has an element type ONNX tensors cannot have: "
                         << getValue().getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// NoneOp
//===----------------------------------------------------------------------===//

void NoneOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "none");
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

LogicalResult YieldOp::verify() {
  Operation *parent = (*this)->getParentOp();
  if (auto graph = dyn_cast<GraphOp>(parent)) {
    ArrayRef<Type> declared = graph.getResultTypes();
    if (declared.size() != getValues().size())
      return emitOpError() << "yields " << getValues().size()
                           << " values but the graph has " << declared.size()
                           << " outputs";
    for (auto [index, pair] :
         llvm::enumerate(llvm::zip(declared, getValues().getTypes()))) {
      auto [type, actual] = pair;
      if (!areCompatibleTypes(type, actual))
        return emitOpError()
               << "output #" << index << " ('" << graph.getOutputName(index)
               << "') is declared as " << type
               << " but the yielded value has type " << actual;
    }
    return success();
  }
  auto node = cast<NodeOp>(parent);
  unsigned region = (*this)->getParentRegion()->getRegionNumber();
  GraphAttr graph = node.getGraphAttrOfRegion(region);
  if (graph && graph.getOutputs().size() != getValues().size())
    return emitOpError() << "yields " << getValues().size()
                         << " values but subgraph '"
                         << graph.getName().getValue() << "' names "
                         << graph.getOutputs().size() << " outputs";
  return success();
}
