//===- ExportONNX.cpp - write the onnx dialect as an ONNX model -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The inverse of ImportONNX.cpp. ONNX refers to values by name, MLIR by
// use-def edges, so the writer first gives every value a name that is unique
// in the whole model (ONNX forbids shadowing across subgraphs): the name the
// IR records where there is one, else a fresh one. A graph output whose
// value carries another name (a graph input, a value yielded twice, a value
// a pass renamed) is renamed with an Identity node.
//
//===----------------------------------------------------------------------===//

#include "ttt/Target/ONNX/ExportONNX.h"

#include "ProtoChecks.h"
#include "ProtoUtils.h"
#include "TensorConversion.h"
#include "TypeConversion.h"

#include "ttt/Dialect/ONNX/IR/ONNXOps.h"
#include "ttt/Support/OutputFile.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <unistd.h>

using namespace mlir;
using namespace mlir::ttt::onnx;

/// Initializers whose data the exporter left where it was, with those
/// bytes (Exporter::getDeferredTensors).
using DeferredTensors = llvm::MapVector<pb::TensorProto *, ArrayRef<char>>;

namespace {

class Exporter {
public:
  Exporter(StringRef fileName, const ExportOptions &options)
      : fileName(fileName.str()), options(options) {}

  /// Fills `model` from `module`; checks it with the ONNX checker.
  LogicalResult exportModule(ModuleOp module, pb::ModelProto &model);

  const std::string &getError() const { return error; }
  /// The initializers the IR marks as stored externally.
  ArrayRef<pb::TensorProto *> getExternalTensors() const {
    return externalTensors;
  }
  /// The initializers whose data stayed where it was, in a resource blob of
  /// the module (a memory-mapped external data file, a large tensor), with
  /// those bytes: the proto marks them as stored externally, at
  /// kDeferredLocation, until the caller writes them out or copies them in
  /// (copyDeferredData). Copying a tensor of gigabytes into the protobuf
  /// only to write it to a .data file would hold it in memory twice.
  const DeferredTensors &getDeferredTensors() const { return deferredTensors; }

private:
  LogicalResult fail(const Twine &message) {
    if (error.empty())
      error = fileName + ": " + message.str();
    return failure();
  }
  LogicalResult failNode(NodeOp node, const Twine &message) {
    StringRef firstOutput;
    for (unsigned i = 0, e = node->getNumResults();
         i < e && firstOutput.empty(); ++i)
      firstOutput = node.getOutputName(i);
    return fail(describeNode(node.getNodeName().value_or(""), firstOutput,
                             node.getDomain(), node.getOpType(), opsets) +
                ": " + message);
  }

  LogicalResult exportModelAttributes(ModuleOp module, pb::ModelProto &model);
  /// Names the values of `block` (a graph body) and of its subgraphs. ONNX
  /// names must differ from every name visible where they are defined: the
  /// names defined earlier in the same graph or in an enclosing graph.
  LogicalResult assignNamesIn(Block &block);
  void assignName(Value value);
  bool isTaken(StringRef name, Value candidate) const;
  std::string freshName(StringRef base);
  LogicalResult exportMainGraph(GraphOp graph, pb::GraphProto &proto);
  LogicalResult exportBlock(Block &block, pb::GraphProto &proto);
  LogicalResult exportNode(NodeOp node, pb::GraphProto &proto);
  LogicalResult exportAttribute(NodeOp node, NamedAttribute attr,
                                pb::AttributeProto &proto);
  LogicalResult exportSubgraph(NodeOp node, GraphAttr graph,
                               pb::GraphProto &proto);
  /// Adds `value` as output `name` of `proto`, through an Identity node when
  /// the value carries another name.
  void exportOutput(Value value, StringRef name, pb::GraphProto &proto);

  std::string fileName;
  const ExportOptions &options;
  OpsetTable opsets;
  /// Domains nodes use, to import those the module does not list.
  llvm::StringSet<> usedDomains;

  /// One per graph being named, innermost last.
  struct Scope {
    llvm::StringSet<> names;
    /// Output names of the graph, and the value that may carry each.
    llvm::StringMap<Value> outputs;
  };
  std::vector<Scope> scopes;
  llvm::DenseMap<Value, std::string> preferred;
  llvm::DenseMap<Value, std::string> names;
  unsigned nextFresh = 0;
  std::vector<pb::TensorProto *> externalTensors;
  DeferredTensors deferredTensors;
  std::string error;
};

} // namespace

/// Where a deferred tensor's data is while the model is built and checked:
/// the ONNX checker accepts a location starting with '#' without looking
/// for the file.
static constexpr llvm::StringLiteral kDeferredLocation("#ttt-deferred-data");

/// Copies the data of a deferred tensor into its raw_data.
static void copyDeferredData(pb::TensorProto *tensor, ArrayRef<char> bytes) {
  tensor->clear_external_data();
  tensor->clear_data_location();
  tensor->set_raw_data(bytes.data(), bytes.size());
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

/// The name `value` has in the IR, or "".
static StringRef getRecordedName(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *parent = arg.getOwner()->getParentOp();
    if (auto graph = dyn_cast<GraphOp>(parent))
      return graph.getInputName(arg.getArgNumber());
    if (auto node = dyn_cast<NodeOp>(parent))
      if (GraphAttr attr = node.getGraphAttrOfRegion(
              arg.getOwner()->getParent()->getRegionNumber()))
        if (arg.getArgNumber() < attr.getInputs().size())
          return cast<StringAttr>(attr.getInputs()[arg.getArgNumber()])
              .getValue();
    return {};
  }
  Operation *op = value.getDefiningOp();
  if (auto init = dyn_cast<InitializerOp>(op))
    return init.getName();
  if (auto node = dyn_cast<NodeOp>(op))
    return node.getOutputName(cast<OpResult>(value).getResultNumber());
  return {};
}

/// The output names of the graph `yield` ends.
static SmallVector<StringRef> getOutputNames(YieldOp yield) {
  SmallVector<StringRef> names;
  Operation *parent = yield->getParentOp();
  if (auto graph = dyn_cast<GraphOp>(parent)) {
    for (unsigned i = 0, e = graph.getNumResults(); i < e; ++i)
      names.push_back(graph.getOutputName(i));
  } else if (auto node = dyn_cast<NodeOp>(parent)) {
    if (GraphAttr attr = node.getGraphAttrOfRegion(
            yield->getParentRegion()->getRegionNumber()))
      for (Attribute name : attr.getOutputs())
        names.push_back(cast<StringAttr>(name).getValue());
  }
  return names;
}

/// The name of the graph `yield` ends, for messages.
static std::string getGraphName(YieldOp yield) {
  Operation *parent = yield->getParentOp();
  if (auto graph = dyn_cast<GraphOp>(parent))
    return graph.getSymName().str();
  if (auto node = dyn_cast<NodeOp>(parent))
    if (GraphAttr attr = node.getGraphAttrOfRegion(
            yield->getParentRegion()->getRegionNumber()))
      return attr.getName().str();
  return "?";
}

bool Exporter::isTaken(StringRef name, Value candidate) const {
  for (auto [depth, scope] : llvm::enumerate(scopes)) {
    if (scope.names.contains(name))
      return true;
    auto it = scope.outputs.find(name);
    // An output name is free only for the value the graph yields under it.
    if (it != scope.outputs.end() &&
        (depth + 1 != scopes.size() || it->second != candidate))
      return true;
  }
  return false;
}

std::string Exporter::freshName(StringRef base) {
  std::string stem = base.empty() ? std::string("ttt_value") : base.str();
  while (true) {
    std::string candidate = stem + "__" + std::to_string(nextFresh++);
    if (!isTaken(candidate, Value()))
      return candidate;
  }
}

void Exporter::assignName(Value value) {
  if (isa<NoneType>(value.getType()))
    return;
  std::string name = getRecordedName(value).str();
  if (name.empty())
    name = preferred.lookup(value);
  if (name.empty() || isTaken(name, value))
    name = freshName(name);
  scopes.back().names.insert(name);
  names[value] = name;
}

LogicalResult Exporter::assignNamesIn(Block &block) {
  scopes.emplace_back();
  llvm::scope_exit pop([&] { scopes.pop_back(); });

  // The graph's output names are fixed: reserve them first, for the values
  // yielded under them. An unnamed value (made by a pass) takes the name of
  // the output it is yielded as.
  auto yield = cast<YieldOp>(block.getTerminator());
  for (auto [value, name] :
       llvm::zip(yield.getValues(), getOutputNames(yield))) {
    if (name.empty())
      return fail("an output of graph '" + getGraphName(yield) +
                  "' has no name");
    Value owner;
    if (getRecordedName(value) == name) {
      owner = value;
    } else if (getRecordedName(value).empty() &&
               value.getDefiningOp<NodeOp>() && !preferred.count(value)) {
      preferred[value] = name.str();
      owner = value;
    }
    if (!scopes.back().outputs.try_emplace(name, owner).second)
      return fail("graph '" + getGraphName(yield) +
                  "' has two outputs named '" + name + "'");
  }

  for (BlockArgument arg : block.getArguments())
    assignName(arg);
  for (Operation &op : block.without_terminator()) {
    // A subgraph sees the names defined before its node, not the node's own.
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        if (failed(assignNamesIn(inner)))
          return failure();
    for (Value result : op.getResults())
      assignName(result);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Graphs and nodes
//===----------------------------------------------------------------------===//

void Exporter::exportOutput(Value value, StringRef name,
                            pb::GraphProto &proto) {
  std::string current = names.lookup(value);
  if (current == name)
    return;
  pb::NodeProto *identity = proto.add_node();
  identity->set_op_type("Identity");
  identity->add_input(current);
  identity->add_output(name.str());
  usedDomains.insert("");
}

LogicalResult Exporter::exportAttribute(NodeOp node, NamedAttribute attr,
                                        pb::AttributeProto &proto) {
  proto.set_name(attr.getName().str());
  Attribute value = attr.getValue();
  std::optional<AttrKind> kind = getAttrKind(value);
  auto unsupported = [&](const Twine &why) {
    return failNode(node,
                    "attribute '" + attr.getName().getValue() + "': " + why);
  };
  if (!kind)
    return unsupported("it has no ONNX form");
  auto tensor = [&](Attribute element, pb::TensorProto &out) {
    std::string why;
    if (!writeTensor(cast<ElementsAttr>(element), out, why))
      return unsupported(why);
    return success();
  };
  auto graph = [&](Attribute element, pb::GraphProto &out) {
    return exportSubgraph(node, cast<GraphAttr>(element), out);
  };

  switch (*kind) {
  case AttrKind::Int: {
    APInt bits = cast<IntegerAttr>(value).getValue();
    bool isUnsigned = cast<IntegerAttr>(value).getType().isUnsignedInteger() ||
                      bits.getBitWidth() == 1;
    if (bits.getBitWidth() > 64)
      return unsupported("the integer does not fit in 64 bits");
    proto.set_type(pb::AttributeProto::INT);
    proto.set_i(isUnsigned ? static_cast<int64_t>(bits.getZExtValue())
                           : bits.getSExtValue());
    return success();
  }
  case AttrKind::Float:
    proto.set_type(pb::AttributeProto::FLOAT);
    proto.set_f(static_cast<float>(cast<FloatAttr>(value).getValueAsDouble()));
    return success();
  case AttrKind::String:
    proto.set_type(pb::AttributeProto::STRING);
    proto.set_s(cast<StringAttr>(value).getValue().str());
    return success();
  case AttrKind::Tensor:
    proto.set_type(pb::AttributeProto::TENSOR);
    return tensor(value, *proto.mutable_t());
  case AttrKind::Graph:
    proto.set_type(pb::AttributeProto::GRAPH);
    return graph(value, *proto.mutable_g());
  case AttrKind::Ints:
    proto.set_type(pb::AttributeProto::INTS);
    for (int64_t i : cast<DenseI64ArrayAttr>(value).asArrayRef())
      proto.add_ints(i);
    return success();
  case AttrKind::Floats:
    proto.set_type(pb::AttributeProto::FLOATS);
    for (float f : cast<DenseF32ArrayAttr>(value).asArrayRef())
      proto.add_floats(f);
    return success();
  case AttrKind::Strings:
    proto.set_type(pb::AttributeProto::STRINGS);
    for (Attribute s : cast<ArrayAttr>(value))
      proto.add_strings(cast<StringAttr>(s).getValue().str());
    return success();
  case AttrKind::Tensors:
    proto.set_type(pb::AttributeProto::TENSORS);
    for (Attribute element : cast<ArrayAttr>(value))
      if (failed(tensor(element, *proto.add_tensors())))
        return failure();
    return success();
  case AttrKind::Graphs:
    proto.set_type(pb::AttributeProto::GRAPHS);
    for (Attribute element : cast<ArrayAttr>(value))
      if (failed(graph(element, *proto.add_graphs())))
        return failure();
    return success();
  }
  llvm_unreachable("unknown attribute kind");
}

LogicalResult Exporter::exportNode(NodeOp node, pb::GraphProto &proto) {
  pb::NodeProto *out = proto.add_node();
  out->set_op_type(node.getOpType().str());
  if (!node.getDomain().empty())
    out->set_domain(node.getDomain().str());
  usedDomains.insert(canonicalDomain(node.getDomain()));
  if (std::optional<StringRef> name = node.getNodeName())
    out->set_name(name->str());
  if (std::optional<StringRef> doc = node.getDocString())
    out->set_doc_string(doc->str());
  for (Value input : node.getInputs())
    out->add_input(isa<NoneType>(input.getType()) ? std::string()
                                                  : names.lookup(input));
  for (Value result : node.getResults())
    out->add_output(isa<NoneType>(result.getType()) ? std::string()
                                                    : names.lookup(result));
  if (std::optional<DictionaryAttr> attrs = node.getAttrs())
    for (NamedAttribute attr : *attrs)
      if (failed(exportAttribute(node, attr, *out->add_attribute())))
        return failure();
  return success();
}

LogicalResult Exporter::exportBlock(Block &block, pb::GraphProto &proto) {
  for (Operation &op : block.without_terminator()) {
    if (auto init = dyn_cast<InitializerOp>(op)) {
      pb::TensorProto *tensor = proto.add_initializer();
      std::string why;
      std::optional<ArrayRef<char>> borrowed;
      if (!writeTensor(init.getValue(), *tensor, why, &borrowed))
        return fail("initializer '" + init.getName() + "': " + why);
      tensor->set_name(names.lookup(init.getResult()));
      if (init.getExternalData())
        externalTensors.push_back(tensor);
      if (borrowed) {
        tensor->set_data_location(pb::TensorProto::EXTERNAL);
        pb::StringStringEntryProto *entry = tensor->add_external_data();
        entry->set_key("location");
        entry->set_value(kDeferredLocation.str());
        deferredTensors.insert({tensor, *borrowed});
      }
      continue;
    }
    if (isa<NoneOp>(op))
      continue;
    if (auto node = dyn_cast<NodeOp>(op)) {
      if (failed(exportNode(node, proto)))
        return failure();
      continue;
    }
    return fail("op '" + op.getName().getStringRef() +
                "' has no ONNX form; only onnx dialect ops can be written to "
                "an ONNX model");
  }
  return success();
}

LogicalResult Exporter::exportSubgraph(NodeOp node, GraphAttr graph,
                                       pb::GraphProto &proto) {
  Region &region = node->getRegion(graph.getRegion());
  Block &block = region.front();
  proto.set_name(graph.getName().str());
  for (BlockArgument arg : block.getArguments()) {
    pb::ValueInfoProto *input = proto.add_input();
    input->set_name(names.lookup(arg));
    std::string why;
    if (!fillTypeProto(arg.getType(), {}, *input->mutable_type(), why))
      return failNode(node, "subgraph '" + graph.getName().getValue() +
                                "' input '" + input->name() + "': " + why);
  }
  if (failed(exportBlock(block, proto)))
    return failure();
  auto yield = cast<YieldOp>(block.getTerminator());
  for (auto [value, name] : llvm::zip(yield.getValues(), graph.getOutputs())) {
    StringRef outputName = cast<StringAttr>(name).getValue();
    exportOutput(value, outputName, proto);
    pb::ValueInfoProto *output = proto.add_output();
    output->set_name(outputName.str());
    std::string why;
    if (!fillTypeProto(value.getType(), {}, *output->mutable_type(), why))
      return failNode(node, "subgraph '" + graph.getName().getValue() +
                                "' output '" + outputName + "': " + why);
  }
  return success();
}

LogicalResult Exporter::exportMainGraph(GraphOp graph, pb::GraphProto &proto) {
  proto.set_name(graph.getSymName().str());
  if (std::optional<StringRef> doc = graph.getDocString())
    proto.set_doc_string(doc->str());
  auto declare = [&](pb::ValueInfoProto &info, StringRef name, Type type,
                     DictionaryAttr attrs, StringRef what) {
    info.set_name(name.str());
    if (isa<UnknownType>(type))
      return fail("graph " + what + " '" + name +
                  "' has no type; the main graph's inputs and outputs need "
                  "one");
    ArrayAttr dims =
        attrs ? attrs.getAs<ArrayAttr>(ONNXDialect::kDimParams) : ArrayAttr();
    std::string why;
    if (!fillTypeProto(type, dims, *info.mutable_type(), why))
      return fail("graph " + what + " '" + name + "': " + why);
    return success();
  };

  for (BlockArgument arg : graph.getArguments()) {
    unsigned index = arg.getArgNumber();
    if (graph.getInputName(index).empty())
      return fail("graph input #" + Twine(index) + " has no onnx.name");
    DictionaryAttr attrs = graph.getArgAttrDict(index);
    if (failed(declare(*proto.add_input(), names.lookup(arg), arg.getType(),
                       attrs, "input")))
      return failure();
    if (auto value = attrs ? attrs.getAs<ElementsAttr>(ONNXDialect::kDefault)
                           : ElementsAttr()) {
      pb::TensorProto *tensor = proto.add_initializer();
      std::string why;
      if (!writeTensor(value, *tensor, why))
        return fail("default value of graph input '" + names.lookup(arg) +
                    "': " + why);
      tensor->set_name(names.lookup(arg));
    }
  }
  if (failed(exportBlock(graph.getBody().front(), proto)))
    return failure();
  auto yield = cast<YieldOp>(graph.getBody().front().getTerminator());
  for (auto [index, value] : llvm::enumerate(yield.getValues())) {
    StringRef name = graph.getOutputName(index);
    exportOutput(value, name, proto);
    if (failed(declare(*proto.add_output(), name, graph.getResultTypes()[index],
                       graph.getResultAttrDict(index), "output")))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

LogicalResult Exporter::exportModelAttributes(ModuleOp module,
                                              pb::ModelProto &model) {
  auto getString = [&](StringRef name) -> std::optional<std::string> {
    if (auto value = module->getAttrOfType<StringAttr>(name))
      return value.getValue().str();
    return std::nullopt;
  };
  auto irVersion = module->getAttrOfType<IntegerAttr>(ONNXDialect::kIrVersion);
  model.set_ir_version(irVersion ? irVersion.getInt()
                                 : options.defaultIrVersion);
  if (auto imports =
          module->getAttrOfType<ArrayAttr>(ONNXDialect::kOpsetImport)) {
    for (Attribute attr : imports) {
      auto opset = cast<OpsetAttr>(attr);
      pb::OperatorSetIdProto *out = model.add_opset_import();
      out->set_domain(opset.getDomain().str());
      out->set_version(opset.getVersion());
      opsets.add(opset.getDomain(), opset.getVersion());
    }
  }
  if (auto name = getString(ONNXDialect::kProducerName))
    model.set_producer_name(*name);
  if (auto version = getString(ONNXDialect::kProducerVersion))
    model.set_producer_version(*version);
  if (auto domain = getString(ONNXDialect::kModelDomain))
    model.set_domain(*domain);
  if (auto doc = getString(ONNXDialect::kDocString))
    model.set_doc_string(*doc);
  if (auto version =
          module->getAttrOfType<IntegerAttr>(ONNXDialect::kModelVersion))
    model.set_model_version(version.getInt());
  if (auto functions =
          module->getAttrOfType<ArrayAttr>(ONNXDialect::kFunctions)) {
    for (Attribute attr : functions) {
      auto function = cast<FunctionAttr>(attr);
      if (!model.add_functions()->ParseFromString(function.getProto().str()))
        return fail("function '" + function.getDomain() +
                    "::" + function.getName() +
                    "' does not hold a serialized FunctionProto");
    }
  }
  if (auto props =
          module->getAttrOfType<DictionaryAttr>(ONNXDialect::kMetadataProps)) {
    for (NamedAttribute entry : props) {
      pb::StringStringEntryProto *out = model.add_metadata_props();
      out->set_key(entry.getName().str());
      out->set_value(cast<StringAttr>(entry.getValue()).getValue().str());
    }
  }
  return success();
}

LogicalResult Exporter::exportModule(ModuleOp module, pb::ModelProto &model) {
  GraphOp graph;
  for (Operation &op : *module.getBody()) {
    if (auto candidate = dyn_cast<GraphOp>(op)) {
      if (graph)
        return fail("the module holds more than one onnx.graph; an ONNX "
                    "model has one main graph");
      graph = candidate;
      continue;
    }
    return fail("op '" + op.getName().getStringRef() +
                "' at module level has no ONNX form; the module must hold "
                "only the model's onnx.graph");
  }
  if (!graph)
    return fail("the module holds no onnx.graph to write");

  TimingScope noTiming;
  TimingScope &timing = options.timing ? *options.timing : noTiming;
  TimingScope buildTiming = timing.nest("Build protobuf");
  if (failed(exportModelAttributes(module, model)) ||
      failed(assignNamesIn(graph.getBody().front())) ||
      failed(exportMainGraph(graph, *model.mutable_graph())))
    return failure();

  // Import the domains nodes use but the module does not list (IR written
  // by hand or by a pass).
  for (const auto &entry : usedDomains) {
    StringRef domain = entry.getKey();
    if (opsets.lookup(domain))
      continue;
    int64_t version = domain.empty() ? options.defaultOpset : 1;
    pb::OperatorSetIdProto *out = model.add_opset_import();
    out->set_domain(domain.str());
    out->set_version(version);
    opsets.add(domain, version);
  }

  buildTiming.stop();
  TimingScope checkTiming = timing.nest("ONNX checker");
  if (std::optional<CheckFailure> failure =
          checkModel(model, /*modelDir=*/"", opsets)) {
    if (failure->node)
      return fail(describeNode(*failure->node, opsets) + ": " +
                  failure->reason +
                  " (the ONNX checker rejects the written model)");
    return fail("the written model would not be valid ONNX (" +
                failure->reason + ")");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

/// Protobuf cannot serialize messages of 2 GiB or more; stay clear of it.
static constexpr uint64_t kProtobufLimit = (uint64_t(1) << 31) - (1 << 20);

/// The data of `tensor`.
static ArrayRef<char> getTensorData(pb::TensorProto *tensor,
                                    const DeferredTensors &deferred) {
  auto it = deferred.find(tensor);
  if (it != deferred.end())
    return it->second;
  return ArrayRef<char>(tensor->raw_data().data(), tensor->raw_data().size());
}

/// Picks the initializers to store outside the model: those the IR marks,
/// then the largest others until the model fits in protobuf's limit.
static std::vector<pb::TensorProto *>
selectExternalTensors(pb::ModelProto &model, ArrayRef<pb::TensorProto *> marked,
                      const DeferredTensors &deferred) {
  auto sizeOf = [&](pb::TensorProto *tensor) -> uint64_t {
    return getTensorData(tensor, deferred).size();
  };
  std::vector<pb::TensorProto *> selected(marked.begin(), marked.end());
  // The size of the model with every tensor inline.
  uint64_t size = model.ByteSizeLong();
  for (const auto &entry : deferred)
    size += entry.second.size();
  for (pb::TensorProto *tensor : selected)
    size -= sizeOf(tensor);
  if (size < kProtobufLimit)
    return selected;
  std::vector<pb::TensorProto *> rest;
  for (pb::TensorProto &tensor : *model.mutable_graph()->mutable_initializer())
    if (!llvm::is_contained(selected, &tensor))
      rest.push_back(&tensor);
  llvm::sort(rest, [&](pb::TensorProto *a, pb::TensorProto *b) {
    return sizeOf(a) > sizeOf(b);
  });
  for (pb::TensorProto *tensor : rest) {
    if (size < kProtobufLimit)
      break;
    size -= sizeOf(tensor);
    selected.push_back(tensor);
  }
  return selected;
}

namespace {
/// A temporary file next to its destination, removed unless kept.
class PendingFile {
public:
  static std::optional<PendingFile> create(StringRef path, std::string &error) {
    auto temp = llvm::sys::fs::TempFile::create(path + ".tmp-%%%%%%%%");
    if (!temp) {
      error = "cannot create a file next to '" + path.str() +
              "': " + llvm::toString(temp.takeError());
      return std::nullopt;
    }
    // A model (or its data) written over an old one keeps its mode.
    ::ttt::copyFileAttributes(path, temp->FD);
    return PendingFile(path, std::move(*temp));
  }
  PendingFile(PendingFile &&other) noexcept
      : path(std::move(other.path)), temp(std::move(other.temp)) {
    other.temp.reset();
  }
  PendingFile &operator=(PendingFile &&) = delete;
  ~PendingFile() {
    if (temp)
      llvm::consumeError(temp->discard());
  }
  int fd() const { return temp->FD; }
  bool keep(std::string &error) {
    if (llvm::Error err = temp->keep(path)) {
      error = "cannot write '" + path + "': " + llvm::toString(std::move(err));
      temp.reset();
      return false;
    }
    temp.reset();
    return true;
  }

private:
  PendingFile(StringRef path, llvm::sys::fs::TempFile temp)
      : path(path.str()), temp(std::move(temp)) {}
  std::string path;
  std::optional<llvm::sys::fs::TempFile> temp;
};
} // namespace

/// Moves the data of `tensors` into `data` (64-byte aligned; 64 KiB for
/// tensors of a MiB or more, so that runtimes can map them) and points the
/// tensors at `location`. Deferred data is written from where it is.
static bool writeExternalData(ArrayRef<pb::TensorProto *> tensors,
                              const DeferredTensors &deferred,
                              StringRef location, int fd, std::string &error) {
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/false);
  uint64_t offset = 0;
  for (pb::TensorProto *tensor : tensors) {
    ArrayRef<char> data = getTensorData(tensor, deferred);
    uint64_t size = data.size();
    uint64_t aligned = llvm::alignTo(offset, size >= (1 << 20) ? 65536 : 64);
    os.write_zeros(aligned - offset);
    os.write(data.data(), data.size());
    offset = aligned + size;
    // Freed, not only cleared (clearing a string keeps its buffer).
    std::string().swap(*tensor->mutable_raw_data());
    tensor->clear_raw_data();
    tensor->clear_external_data();
    tensor->set_data_location(pb::TensorProto::EXTERNAL);
    auto add = [&](StringRef key, StringRef value) {
      pb::StringStringEntryProto *entry = tensor->add_external_data();
      entry->set_key(key.str());
      entry->set_value(value.str());
    };
    add("location", location);
    add("offset", std::to_string(aligned));
    add("length", std::to_string(size));
  }
  os.flush();
  if (std::error_code ec = os.error()) {
    os.clear_error();
    error = "cannot write the external data: " + ec.message();
    return false;
  }
  return true;
}

static bool serializeTo(const pb::ModelProto &model, int fd,
                        std::string &error) {
  google::protobuf::io::FileOutputStream stream(fd);
  if (!model.SerializeToZeroCopyStream(&stream) || !stream.Flush()) {
    error = "cannot write the model: " +
            std::string(std::strerror(stream.GetErrno()));
    return false;
  }
  return true;
}

LogicalResult mlir::ttt::onnx::exportONNXFile(ModuleOp module, StringRef path,
                                              const ExportOptions &options) {
  Location unknown = UnknownLoc::get(module.getContext());
  auto report = [&](const Twine &message) {
    emitError(unknown) << message;
    return failure();
  };
  Exporter exporter(path, options);
  pb::ModelProto model;
  if (failed(exporter.exportModule(module, model)))
    return report(exporter.getError());

  TimingScope noTiming;
  TimingScope writeTiming =
      (options.timing ? *options.timing : noTiming).nest("Write file");
  // A FIFO or device is written through, like standard output, with the
  // tensors inline: only a regular file gets a .data file next to it.
  llvm::Expected<::ttt::OutputTarget> target = ::ttt::resolveOutputTarget(path);
  if (!target)
    return report(path + ": " + llvm::toString(target.takeError()));
  bool toStdout = target->kind != ::ttt::OutputTarget::Atomic;
  const DeferredTensors &deferred = exporter.getDeferredTensors();
  std::vector<pb::TensorProto *> external =
      toStdout ? std::vector<pb::TensorProto *>()
               : selectExternalTensors(model, exporter.getExternalTensors(),
                                       deferred);
  std::string error;
  std::string dataPath = target->path + ".data";
  std::optional<PendingFile> dataFile =
      external.empty() ? std::nullopt : PendingFile::create(dataPath, error);
  if (!external.empty()) {
    if (!dataFile || !writeExternalData(external, deferred,
                                        llvm::sys::path::filename(dataPath),
                                        dataFile->fd(), error))
      return report(path + ": " + error);
  }
  // The deferred data that stays in the model.
  for (const auto &[tensor, bytes] : deferred)
    if (!llvm::is_contained(external, tensor))
      copyDeferredData(tensor, bytes);
  if (model.ByteSizeLong() >= kProtobufLimit)
    return report(path + ": the model is larger than protobuf's 2 GiB limit" +
                  (toStdout ? "; write it to a file, so that tensors can go "
                              "to external data"
                            : ""));

  if (target->kind == ::ttt::OutputTarget::Stdout) {
    if (llvm::sys::Process::StandardOutIsDisplayed())
      return report(path + ": " + ::ttt::binaryToTerminalMessage());
    llvm::outs().flush();
    if (!serializeTo(model, /*fd=*/1, error))
      return report(path + ": " + error);
    return success();
  }
  if (target->kind == ::ttt::OutputTarget::Through) {
    int fd;
    if (std::error_code ec = llvm::sys::fs::openFileForWrite(
            target->path, fd, llvm::sys::fs::CD_CreateAlways))
      return report(path + ": cannot open it for writing: " + ec.message());
    bool written = serializeTo(model, fd, error);
    if (::close(fd) != 0 && written) {
      written = false;
      error = "cannot write the model: " + std::string(std::strerror(errno));
    }
    if (!written)
      return report(path + ": " + error);
    return success();
  }
  std::optional<PendingFile> modelFile =
      PendingFile::create(target->path, error);
  if (!modelFile || !serializeTo(model, modelFile->fd(), error) ||
      (dataFile && !dataFile->keep(error)) || !modelFile->keep(error))
    return report(path + ": " + error);
  return success();
}

LogicalResult
mlir::ttt::onnx::exportONNXToString(ModuleOp module, StringRef fileName,
                                    std::string &bytes,
                                    const ExportOptions &options) {
  Exporter exporter(fileName, options);
  pb::ModelProto model;
  if (failed(exporter.exportModule(module, model))) {
    emitError(UnknownLoc::get(module.getContext())) << exporter.getError();
    return failure();
  }
  uint64_t size = model.ByteSizeLong();
  for (const auto &entry : exporter.getDeferredTensors())
    size += entry.second.size();
  if (size >= kProtobufLimit) {
    emitError(UnknownLoc::get(module.getContext()))
        << fileName << ": the model is larger than protobuf's 2 GiB limit";
    return failure();
  }
  for (const auto &[tensor, data] : exporter.getDeferredTensors())
    copyDeferredData(tensor, data);
  bytes.clear();
  model.SerializeToString(&bytes);
  return success();
}
