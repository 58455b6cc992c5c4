//===- ImportONNX.cpp - read an ONNX model into the onnx dialect ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Parse, check (ONNX checker, opset ranges), infer shapes (best effort), then
// walk the graph in order: inputs become onnx.graph arguments, initializers
// onnx.initializer ops, nodes onnx.node ops (subgraph attributes become their
// regions), outputs the operands of onnx.yield. Every failure becomes one
// line that names the file and, where one is at fault, the node.
//
//===----------------------------------------------------------------------===//

#include "ttt/Target/ONNX/ImportONNX.h"

#include "ProtoChecks.h"
#include "ProtoUtils.h"
#include "ShapeInference.h"
#include "TensorConversion.h"
#include "TypeConversion.h"

#include "ttt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <climits>

using namespace mlir;
using namespace mlir::ttt::onnx;

namespace {

/// Keeps protobuf's own log lines off stderr while a model is parsed: a
/// corrupt file gets the reader's one-line error, nothing else.
class ProtobufLogSilencer {
public:
  ProtobufLogSilencer() : previous(google::protobuf::SetLogHandler(&ignore)) {}
  ~ProtobufLogSilencer() { google::protobuf::SetLogHandler(previous); }

private:
  static void ignore(google::protobuf::LogLevel, const char *, int,
                     const std::string &) {}
  google::protobuf::LogHandler *previous;
};

/// protobuf's default nesting limit for parsing (CodedInputStream), and a
/// deeper one used only to tell a too-deep model from a corrupt one.
static constexpr int kProtobufRecursionLimit = 100;
static constexpr int kDeepRecursionLimit = 2000;

/// The (possibly inferred) types of the values of one graph, by name.
using TypeTable = llvm::StringMap<const pb::TypeProto *>;

class Importer {
public:
  Importer(MLIRContext *context, StringRef fileName, const TensorReader &reader,
           const OpsetTable &opsets)
      : context(context), builder(context), fileName(fileName.str()),
        reader(reader), opsets(opsets),
        fileLoc(FileLineColLoc::get(context, fileName, 0, 0)) {}

  /// Imports `model` whose main graph declares `inputTypes` and
  /// `outputTypes` (taken before shape inference refined them). The raw
  /// data of the main graph's initializers is released from `model` as
  /// each is copied into the IR, so that a model's weights are held twice
  /// at most, not three times with the file's bytes.
  OwningOpRef<ModuleOp> importModel(pb::ModelProto &model,
                                    ArrayRef<pb::TypeProto> inputTypes,
                                    ArrayRef<pb::TypeProto> outputTypes);

  const std::string &getError() const { return error; }
  ArrayRef<std::string> getWarnings() const { return warnings; }

private:
  LogicalResult fail(const Twine &message) {
    if (error.empty())
      error = fileName + ": " + message.str();
    return failure();
  }
  LogicalResult failNode(const pb::NodeProto &node, const Twine &message) {
    std::string where = describeNode(node, opsets);
    if (!graphPath.empty())
      where += " in graph '" + graphPath.back() + "'";
    return fail(where + ": " + message);
  }

  void importModelAttributes(const pb::ModelProto &model, ModuleOp module);
  LogicalResult importMainGraph(pb::GraphProto &graph,
                                ArrayRef<pb::TypeProto> inputTypes,
                                ArrayRef<pb::TypeProto> outputTypes);
  /// Imports the initializers (but `skip`) and nodes of `graph` at the
  /// builder's insertion point, then returns the values of its outputs.
  /// With `release` (`graph` itself, mutable), the raw data of each
  /// initializer is dropped once it is in the IR.
  LogicalResult importGraphBody(const pb::GraphProto &graph,
                                const llvm::StringSet<> &skip,
                                SmallVectorImpl<Value> &outputs,
                                pb::GraphProto *release = nullptr);
  LogicalResult importNode(const pb::NodeProto &node, const TypeTable &types);
  LogicalResult importSubgraph(const pb::NodeProto &node,
                               const pb::GraphProto &graph, Region &region);
  /// Converts `attr`; graph attributes append their graph to `subgraphs`.
  Attribute importAttribute(const pb::AttributeProto &attr,
                            SmallVectorImpl<const pb::GraphProto *> &subgraphs,
                            std::string &why);
  GraphAttr getGraphAttr(const pb::GraphProto &graph, unsigned region);

  /// Binds `name` in the innermost scope; false if it is bound there.
  bool define(StringRef name, Value value) {
    return scopes.back().try_emplace(name, value).second;
  }
  Value lookup(StringRef name) const {
    for (const llvm::StringMap<Value> &scope : llvm::reverse(scopes))
      if (Value value = scope.lookup(name))
        return value;
    return {};
  }
  /// The type of an intermediate value: what inference found, or
  /// !onnx.unknown when it found nothing this dialect can hold.
  Type getValueType(const TypeTable &types, StringRef name) {
    const pb::TypeProto *type = types.lookup(name);
    std::string ignored;
    Type converted = type ? convertType(*type, context, ignored) : Type();
    return converted ? converted : UnknownType::get(context);
  }
  /// The onnx.none of the current block, made on first use.
  Value getNone();

  MLIRContext *context;
  OpBuilder builder;
  std::string fileName;
  const TensorReader &reader;
  const OpsetTable &opsets;
  Location fileLoc;

  std::vector<llvm::StringMap<Value>> scopes;
  llvm::DenseMap<Block *, Value> noneValues;
  std::vector<std::string> graphPath;
  std::string error;
  std::vector<std::string> warnings;
};

} // namespace

static TypeTable collectTypes(const pb::GraphProto &graph) {
  TypeTable types;
  for (const auto *list :
       {&graph.input(), &graph.value_info(), &graph.output()})
    for (const pb::ValueInfoProto &info : *list)
      if (info.has_type())
        types[info.name()] = &info.type();
  return types;
}

Value Importer::getNone() {
  Block *block = builder.getInsertionBlock();
  Value &none = noneValues[block];
  if (!none) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(block);
    none = NoneOp::create(builder, fileLoc, builder.getNoneType()).getResult();
  }
  return none;
}

GraphAttr Importer::getGraphAttr(const pb::GraphProto &graph, unsigned region) {
  SmallVector<Attribute> inputs, outputs;
  for (const pb::ValueInfoProto &info : graph.input())
    inputs.push_back(builder.getStringAttr(info.name()));
  for (const pb::ValueInfoProto &info : graph.output())
    outputs.push_back(builder.getStringAttr(info.name()));
  return GraphAttr::get(context, region, builder.getStringAttr(graph.name()),
                        builder.getArrayAttr(inputs),
                        builder.getArrayAttr(outputs));
}

Attribute
Importer::importAttribute(const pb::AttributeProto &attr,
                          SmallVectorImpl<const pb::GraphProto *> &subgraphs,
                          std::string &why) {
  if (attr.has_ref_attr_name()) {
    why = "it refers to attribute '" + attr.ref_attr_name() +
          "' of an enclosing function, which only function bodies may do";
    return {};
  }
  auto type = attr.type();
  // IR version 1 models do not set the type; the value field tells it.
  if (type == pb::AttributeProto::UNDEFINED) {
    if (attr.has_f())
      type = pb::AttributeProto::FLOAT;
    else if (attr.has_i())
      type = pb::AttributeProto::INT;
    else if (attr.has_s())
      type = pb::AttributeProto::STRING;
    else if (attr.has_t())
      type = pb::AttributeProto::TENSOR;
    else if (attr.has_g())
      type = pb::AttributeProto::GRAPH;
    else if (attr.floats_size())
      type = pb::AttributeProto::FLOATS;
    else if (attr.ints_size())
      type = pb::AttributeProto::INTS;
    else if (attr.strings_size())
      type = pb::AttributeProto::STRINGS;
    else if (attr.tensors_size())
      type = pb::AttributeProto::TENSORS;
    else if (attr.graphs_size())
      type = pb::AttributeProto::GRAPHS;
    else {
      why = "it has neither a type nor a value";
      return {};
    }
  }

  auto tensor = [&](const pb::TensorProto &proto) -> Attribute {
    std::string tensorWhy;
    ElementsAttr value = readTensor(proto, reader, tensorWhy);
    if (!value)
      why = tensorWhy;
    return value;
  };
  auto graph = [&](const pb::GraphProto &proto) -> Attribute {
    subgraphs.push_back(&proto);
    return getGraphAttr(proto, subgraphs.size() - 1);
  };

  switch (type) {
  case pb::AttributeProto::FLOAT:
    return builder.getF32FloatAttr(attr.f());
  case pb::AttributeProto::INT:
    return builder.getI64IntegerAttr(attr.i());
  case pb::AttributeProto::STRING:
    return builder.getStringAttr(attr.s());
  case pb::AttributeProto::TENSOR:
    return tensor(attr.t());
  case pb::AttributeProto::GRAPH:
    return graph(attr.g());
  case pb::AttributeProto::FLOATS:
    return builder.getDenseF32ArrayAttr(
        ArrayRef<float>(attr.floats().data(), attr.floats_size()));
  case pb::AttributeProto::INTS:
    return builder.getDenseI64ArrayAttr(
        ArrayRef<int64_t>(attr.ints().data(), attr.ints_size()));
  case pb::AttributeProto::STRINGS: {
    SmallVector<Attribute> strings;
    for (const std::string &s : attr.strings())
      strings.push_back(builder.getStringAttr(s));
    return builder.getArrayAttr(strings);
  }
  case pb::AttributeProto::TENSORS: {
    SmallVector<Attribute> tensors;
    for (const pb::TensorProto &proto : attr.tensors()) {
      Attribute value = tensor(proto);
      if (!value)
        return {};
      tensors.push_back(value);
    }
    return builder.getArrayAttr(tensors);
  }
  case pb::AttributeProto::GRAPHS: {
    SmallVector<Attribute> graphs;
    for (const pb::GraphProto &proto : attr.graphs())
      graphs.push_back(graph(proto));
    return builder.getArrayAttr(graphs);
  }
  case pb::AttributeProto::SPARSE_TENSOR:
  case pb::AttributeProto::SPARSE_TENSORS:
    why = "sparse tensor attributes are not supported";
    return {};
  case pb::AttributeProto::TYPE_PROTO:
  case pb::AttributeProto::TYPE_PROTOS:
    why = "type attributes are not supported";
    return {};
  default:
    why = "attribute type " + std::to_string(type) +
          " is not one this build's ONNX library knows";
    return {};
  }
}

LogicalResult Importer::importNode(const pb::NodeProto &node,
                                   const TypeTable &types) {
  SmallVector<Value> operands;
  for (const std::string &input : node.input()) {
    if (input.empty()) {
      operands.push_back(getNone());
      continue;
    }
    Value value = lookup(input);
    if (!value)
      return failNode(node, "input '" + input +
                                "' is not defined by a graph input, an "
                                "initializer or an earlier node");
    operands.push_back(value);
  }

  SmallVector<NamedAttribute> attrs;
  SmallVector<const pb::GraphProto *> subgraphs;
  llvm::StringSet<> attrNames;
  for (const pb::AttributeProto &attr : node.attribute()) {
    if (attr.name().empty())
      return failNode(node, "has an attribute without a name");
    if (!attrNames.insert(attr.name()).second)
      return failNode(node, "attribute '" + attr.name() + "' is given twice");
    std::string why;
    Attribute value = importAttribute(attr, subgraphs, why);
    if (!value)
      return failNode(node, "attribute '" + attr.name() + "': " + why);
    attrs.emplace_back(builder.getStringAttr(attr.name()), value);
  }

  SmallVector<Type> resultTypes;
  SmallVector<Attribute> outputNames;
  for (const std::string &output : node.output()) {
    resultTypes.push_back(output.empty() ? Type(builder.getNoneType())
                                         : getValueType(types, output));
    outputNames.push_back(builder.getStringAttr(output));
  }

  Location loc =
      node.name().empty()
          ? fileLoc
          : Location(NameLoc::get(builder.getStringAttr(node.name()), fileLoc));
  auto op = NodeOp::create(
      builder, loc, resultTypes, node.op_type(), node.domain(),
      attrs.empty() ? DictionaryAttr() : builder.getDictionaryAttr(attrs),
      node.name().empty() ? StringAttr() : builder.getStringAttr(node.name()),
      builder.getArrayAttr(outputNames),
      node.doc_string().empty() ? StringAttr()
                                : builder.getStringAttr(node.doc_string()),
      operands, subgraphs.size());

  for (auto [index, graph] : llvm::enumerate(subgraphs))
    if (failed(importSubgraph(node, *graph, op->getRegion(index))))
      return failure();
  std::string signature = op.getSubgraphSignatureError();
  if (!signature.empty())
    return failNode(node, signature);

  for (auto [output, result] : llvm::zip(node.output(), op.getResults()))
    if (!output.empty() && !define(output, result))
      return failNode(node, "output '" + output +
                                "' is already defined (ONNX graphs are in "
                                "SSA form)");
  return success();
}

LogicalResult Importer::importSubgraph(const pb::NodeProto &node,
                                       const pb::GraphProto &graph,
                                       Region &region) {
  Block *block = new Block();
  region.push_back(block);
  scopes.emplace_back();
  graphPath.push_back(graph.name());
  llvm::scope_exit restore([&] {
    scopes.pop_back();
    graphPath.pop_back();
  });

  TypeTable types = collectTypes(graph);
  for (const pb::ValueInfoProto &input : graph.input()) {
    BlockArgument arg =
        block->addArgument(getValueType(types, input.name()), fileLoc);
    if (input.name().empty())
      return failNode(node, "subgraph '" + graph.name() +
                                "' has an input without a name");
    if (!define(input.name(), arg))
      return failNode(node, "subgraph '" + graph.name() + "' has input '" +
                                input.name() + "' twice");
  }

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(block);
  SmallVector<Value> outputs;
  if (failed(importGraphBody(graph, /*skip=*/{}, outputs)))
    return failure();
  YieldOp::create(builder, fileLoc, outputs);
  return success();
}

LogicalResult Importer::importGraphBody(const pb::GraphProto &graph,
                                        const llvm::StringSet<> &skip,
                                        SmallVectorImpl<Value> &outputs,
                                        pb::GraphProto *release) {
  if (graph.sparse_initializer_size() != 0)
    return fail("graph '" + graph.name() +
                "' has sparse initializers, which are not supported");
  for (auto [index, tensor] : llvm::enumerate(graph.initializer())) {
    if (skip.contains(tensor.name()))
      continue;
    std::string why;
    ElementsAttr value = readTensor(tensor, reader, why);
    if (!value)
      return fail("initializer '" + tensor.name() + "': " + why);
    auto op =
        InitializerOp::create(builder, fileLoc, value.getShapedType(),
                              tensor.name(), value, hasExternalData(tensor));
    if (!define(tensor.name(), op.getResult()))
      return fail("initializer '" + tensor.name() +
                  "' has the name of another value of graph '" + graph.name() +
                  "'");
    // readTensor copied (or mapped) the data; free the proto's copy (a
    // swap, because clearing a string keeps its buffer).
    if (release)
      std::string().swap(
          *release->mutable_initializer(index)->mutable_raw_data());
  }

  TypeTable types = collectTypes(graph);
  for (const pb::NodeProto &node : graph.node())
    if (failed(importNode(node, types)))
      return failure();

  llvm::StringSet<> outputNames;
  for (const pb::ValueInfoProto &output : graph.output()) {
    if (!outputNames.insert(output.name()).second)
      return fail("graph '" + graph.name() + "' lists output '" +
                  output.name() + "' twice");
    Value value = lookup(output.name());
    if (!value)
      return fail("output '" + output.name() + "' of graph '" + graph.name() +
                  "' is not defined by an input, an initializer or a node");
    outputs.push_back(value);
  }
  return success();
}

LogicalResult Importer::importMainGraph(pb::GraphProto &graph,
                                        ArrayRef<pb::TypeProto> inputTypes,
                                        ArrayRef<pb::TypeProto> outputTypes) {
  // Inputs that also have an initializer are inputs with a default value.
  llvm::StringMap<pb::TensorProto *> initializers;
  for (pb::TensorProto &tensor : *graph.mutable_initializer())
    initializers[tensor.name()] = &tensor;

  SmallVector<Type> argTypes, resultTypes;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  llvm::StringSet<> defaults;
  auto declare = [&](const pb::ValueInfoProto &info,
                     const pb::TypeProto &declared, StringRef what,
                     SmallVectorImpl<Type> &types,
                     SmallVectorImpl<NamedAttribute> &attrs) {
    std::string why;
    Type type = convertType(declared, context, why);
    if (!type)
      return fail("graph " + what + " '" + info.name() + "': " + why);
    if (isa<UnknownType>(type))
      return fail("graph " + what + " '" + info.name() +
                  "' has no element type; the main graph's inputs and "
                  "outputs need one");
    types.push_back(type);
    attrs.push_back(builder.getNamedAttr(ONNXDialect::kName,
                                         builder.getStringAttr(info.name())));
    if (ArrayAttr dims = getDimParams(declared, context))
      attrs.push_back(builder.getNamedAttr(ONNXDialect::kDimParams, dims));
    return success();
  };
  for (auto [info, declared] : llvm::zip(graph.input(), inputTypes)) {
    SmallVector<NamedAttribute> attrs;
    if (failed(declare(info, declared, "input", argTypes, attrs)))
      return failure();
    if (pb::TensorProto *tensor = initializers.lookup(info.name())) {
      std::string why;
      ElementsAttr value = readTensor(*tensor, reader, why);
      if (!value)
        return fail("initializer '" + info.name() + "': " + why);
      if (!areCompatibleTypes(argTypes.back(), value.getType()))
        return fail("initializer '" + info.name() + "' has type " +
                    llvm::formatv("{0}", value.getType()).str() +
                    " but the graph input of that name is declared as " +
                    llvm::formatv("{0}", argTypes.back()).str());
      attrs.push_back(builder.getNamedAttr(ONNXDialect::kDefault, value));
      defaults.insert(info.name());
      std::string().swap(*tensor->mutable_raw_data()); // copied into the IR
    }
    argAttrs.push_back(builder.getDictionaryAttr(attrs));
  }
  for (auto [info, declared] : llvm::zip(graph.output(), outputTypes)) {
    SmallVector<NamedAttribute> attrs;
    if (failed(declare(info, declared, "output", resultTypes, attrs)))
      return failure();
    resultAttrs.push_back(builder.getDictionaryAttr(attrs));
  }

  auto graphOp = GraphOp::create(
      builder, fileLoc, graph.name(),
      builder.getFunctionType(argTypes, resultTypes), StringAttr(),
      builder.getArrayAttr(
          ArrayRef<Attribute>(argAttrs.begin(), argAttrs.end())),
      builder.getArrayAttr(
          ArrayRef<Attribute>(resultAttrs.begin(), resultAttrs.end())),
      graph.doc_string().empty() ? StringAttr()
                                 : builder.getStringAttr(graph.doc_string()));
  Block *body = new Block();
  graphOp.getBody().push_back(body);
  scopes.emplace_back();
  for (auto [info, type] : llvm::zip(graph.input(), argTypes))
    define(info.name(), body->addArgument(type, fileLoc));

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  SmallVector<Value> outputs;
  if (failed(importGraphBody(graph, defaults, outputs, &graph)))
    return failure();
  for (auto [index, pair] : llvm::enumerate(llvm::zip(resultTypes, outputs))) {
    auto [declared, value] = pair;
    if (!areCompatibleTypes(declared, value.getType()))
      return fail(llvm::formatv("graph output '{0}' is declared as {1} but "
                                "its value has type {2}",
                                graph.output(index).name(), declared,
                                value.getType())
                      .str());
  }
  YieldOp::create(builder, fileLoc, outputs);
  scopes.pop_back();
  return success();
}

void Importer::importModelAttributes(const pb::ModelProto &model,
                                     ModuleOp module) {
  auto set = [&](StringRef name, Attribute value) {
    module->setAttr(name, value);
  };
  set(ONNXDialect::kIrVersion, builder.getI64IntegerAttr(model.ir_version()));
  SmallVector<Attribute> opsetAttrs;
  llvm::StringSet<> imported; // checkOpsets allowed only identical repeats
  for (const pb::OperatorSetIdProto &opset : model.opset_import())
    if (imported.insert(canonicalDomain(opset.domain())).second)
      opsetAttrs.push_back(
          OpsetAttr::get(context, opset.domain(), opset.version()));
  set(ONNXDialect::kOpsetImport, builder.getArrayAttr(opsetAttrs));
  if (!model.producer_name().empty())
    set(ONNXDialect::kProducerName,
        builder.getStringAttr(model.producer_name()));
  if (!model.producer_version().empty())
    set(ONNXDialect::kProducerVersion,
        builder.getStringAttr(model.producer_version()));
  if (!model.domain().empty())
    set(ONNXDialect::kModelDomain, builder.getStringAttr(model.domain()));
  if (model.has_model_version())
    set(ONNXDialect::kModelVersion,
        builder.getI64IntegerAttr(model.model_version()));
  if (!model.doc_string().empty())
    set(ONNXDialect::kDocString, builder.getStringAttr(model.doc_string()));
  if (model.functions_size() != 0) {
    // Function bodies are kept verbatim; ttt does not look inside them.
    SmallVector<Attribute> functions;
    for (const pb::FunctionProto &function : model.functions())
      functions.push_back(FunctionAttr::get(context, function.domain(),
                                            function.name(),
                                            function.SerializeAsString()));
    set(ONNXDialect::kFunctions, builder.getArrayAttr(functions));
  }
  if (model.metadata_props_size() != 0) {
    SmallVector<NamedAttribute> props;
    for (const pb::StringStringEntryProto &entry : model.metadata_props()) {
      if (entry.key().empty()) {
        warnings.push_back(fileName + ": metadata_props entry with an empty "
                                      "key dropped");
        continue;
      }
      props.push_back(builder.getNamedAttr(
          entry.key(), builder.getStringAttr(entry.value())));
    }
    set(ONNXDialect::kMetadataProps, builder.getDictionaryAttr(props));
  }
}

OwningOpRef<ModuleOp>
Importer::importModel(pb::ModelProto &model, ArrayRef<pb::TypeProto> inputTypes,
                      ArrayRef<pb::TypeProto> outputTypes) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  importModelAttributes(model, *module);
  if (model.graph().quantization_annotation_size() != 0)
    warnings.push_back(fileName + ": the graph's quantization_annotation "
                                  "entries are dropped");
  builder.setInsertionPointToEnd(module->getBody());
  if (failed(importMainGraph(*model.mutable_graph(), inputTypes, outputTypes)))
    return nullptr;

  // Anything the verifier rejects here is a bug of the reader; report it as
  // one line like any other failure rather than printing IR.
  std::string verifierMessage;
  {
    ScopedDiagnosticHandler capture(context, [&](Diagnostic &diag) {
      if (verifierMessage.empty())
        verifierMessage = diag.str();
      return success();
    });
    if (failed(verify(*module))) {
      (void)fail("the imported IR does not verify (a bug of the ONNX "
                 "reader): " +
                 flattenMessage(verifierMessage));
      return nullptr;
    }
  }
  return module;
}

/// Checks the opset imports against what the ONNX library knows.
static std::string checkOpsets(const pb::ModelProto &model,
                               OpsetTable &opsets) {
  // onnx.compose.merge_models repeats an import; only a conflict is an error.
  llvm::StringMap<int64_t> seen;
  for (const pb::OperatorSetIdProto &opset : model.opset_import()) {
    StringRef domain = opset.domain();
    std::string shown = canonicalDomain(domain).empty()
                            ? kDefaultDomainName.str()
                            : domain.str();
    int64_t version = opset.version();
    auto [previous, inserted] =
        seen.try_emplace(canonicalDomain(domain), version);
    if (!inserted) {
      if (previous->second != version)
        return llvm::formatv("opset_import lists domain '{0}' twice, with "
                             "versions {1} and {2}",
                             shown, previous->second, version)
            .str();
      continue;
    }
    if (auto range = getKnownOpsetRange(domain)) {
      if (version < range->first || version > range->second)
        return llvm::formatv("opset {0} of domain '{1}' is out of range: this "
                             "build's ONNX library knows opsets {2} to {3}",
                             version, shown, range->first, range->second)
            .str();
    } else if (version < 1) {
      return llvm::formatv("opset {0} of domain '{1}' is out of range: opset "
                           "versions start at 1",
                           version, shown)
          .str();
    }
    opsets.add(domain, version);
  }
  return {};
}

OwningOpRef<ModuleOp>
mlir::ttt::onnx::importONNXModel(StringRef bytes, StringRef fileName,
                                 StringRef modelDir, MLIRContext *context,
                                 const ImportOptions &options) {
  context->getOrLoadDialect<ONNXDialect>();
  Location unknown = UnknownLoc::get(context);
  auto invalid = [&](const Twine &why) -> OwningOpRef<ModuleOp> {
    emitError(unknown) << fileName << ": not a valid ONNX model (" << why
                       << ")";
    return nullptr;
  };

  TimingScope noTiming;
  TimingScope &timing = options.timing ? *options.timing : noTiming;
  if (bytes.empty())
    return invalid("the file is empty");
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return invalid("the file is larger than 2 GiB, the protobuf limit; "
                   "models that large keep their tensors as external data");
  pb::ModelProto model;
  {
    TimingScope parseTiming = timing.nest("Parse protobuf");
    ProtobufLogSilencer silence;
    if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      // Graphs nest in Loop/If attributes; protobuf stops parsing at a
      // fixed depth, which reads like corruption unless said.
      pb::ModelProto deeper;
      google::protobuf::io::ArrayInputStream raw(
          bytes.data(), static_cast<int>(bytes.size()));
      google::protobuf::io::CodedInputStream input(&raw);
      input.SetRecursionLimit(kDeepRecursionLimit);
      if (deeper.ParseFromCodedStream(&input) && input.ConsumedEntireMessage())
        return invalid(llvm::formatv(
            "its messages nest deeper than protobuf's recursion limit of {0} "
            "(each Loop/If body graph nests several levels), so the ONNX "
            "library cannot read it; flatten the nested control flow",
            kProtobufRecursionLimit));
      return invalid("cannot parse it as a protobuf ModelProto: it is "
                     "truncated, corrupt or not an ONNX file");
    }
  }
  if (!model.has_graph())
    return invalid("the model has no graph");

  OpsetTable opsets;
  std::string opsetError = checkOpsets(model, opsets);
  if (!opsetError.empty()) {
    emitError(unknown) << fileName << ": " << opsetError;
    return nullptr;
  }
  if (hasUnknownFields(model))
    emitWarning(unknown) << fileName
                         << ": the model has fields this build's ONNX library "
                            "does not know (from a newer ONNX); they are "
                            "dropped";
  if (static_cast<int64_t>(model.ir_version()) > getLibraryIrVersion())
    emitWarning(unknown) << fileName << ": IR version " << model.ir_version()
                         << " is newer than this build's ONNX library knows ("
                         << getLibraryIrVersion()
                         << "); the model is checked by the rules of IR "
                         << getLibraryIrVersion();

  std::string dir = modelDir.str();
  if (!dir.empty() && !llvm::sys::path::is_separator(dir.back()))
    dir += llvm::sys::path::get_separator();
  TimingScope checkTiming = timing.nest("ONNX checker");
  if (std::optional<CheckFailure> failure = checkModel(model, dir, opsets)) {
    if (failure->node)
      emitError(unknown) << fileName << ": "
                         << describeNode(*failure->node, opsets) << ": "
                         << failure->reason;
    else
      invalid(failure->reason);
    return nullptr;
  }
  checkTiming.stop();
  if (model.training_info_size() != 0)
    return invalid("it has training information (TrainingInfoProto), which "
                   "ttt does not support");

  // The declared interface of the model, before inference refines it.
  std::vector<pb::TypeProto> inputTypes, outputTypes;
  for (const pb::ValueInfoProto &info : model.graph().input())
    inputTypes.push_back(info.type());
  for (const pb::ValueInfoProto &info : model.graph().output())
    outputTypes.push_back(info.type());
  if (options.inferShapes) {
    TimingScope inferTiming = timing.nest("ONNX shape inference");
    std::string why = inferShapes(model);
    if (!why.empty())
      emitWarning(unknown) << fileName
                           << ": shape inference did not complete, some values "
                              "stay untyped: "
                           << why;
  }

  TimingScope irTiming = timing.nest("Build IR");
  TensorReader reader{context, dir, options.resourceThreshold};
  Importer importer(context, fileName, reader, opsets);
  OwningOpRef<ModuleOp> module =
      importer.importModel(model, inputTypes, outputTypes);
  for (const std::string &warning : importer.getWarnings())
    emitWarning(unknown) << warning;
  if (!module)
    emitError(unknown) << importer.getError();
  return module;
}

OwningOpRef<ModuleOp>
mlir::ttt::onnx::importONNXFile(StringRef path, MLIRContext *context,
                                const ImportOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    emitError(UnknownLoc::get(context))
        << path << ": cannot read the file: " << buffer.getError().message();
    return nullptr;
  }
  StringRef dir =
      path == "-" ? StringRef() : llvm::sys::path::parent_path(path);
  return importONNXModel((*buffer)->getBuffer(), path, dir, context, options);
}

bool mlir::ttt::onnx::looksLikeONNXModel(StringRef bytes) {
  // MLIR bytecode, and text (which a ModelProto cannot begin with: its
  // first byte is a field tag, a control character for ir_version).
  if (bytes.empty() || bytes.starts_with("ML\xefR") ||
      static_cast<unsigned char>(bytes.front()) >= 0x20 ||
      bytes.size() > static_cast<size_t>(INT_MAX))
    return false;
  pb::ModelProto model;
  ProtobufLogSilencer silence;
  return model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
         model.has_graph();
}

void mlir::ttt::onnx::registerONNXImportDialects(DialectRegistry &registry) {
  registry.insert<ONNXDialect>();
}
