//===- ProtoChecks.cpp - ONNX checker and shape inference, no-throw -------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Built with -fexceptions (see CMakeLists.txt): every call into the ONNX
// checker or shape inference is wrapped so that no exception leaves this
// file.
//
//===----------------------------------------------------------------------===//

#include "ProtoChecks.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <exception>
#include <unordered_set>

using namespace mlir::ttt::onnx;

namespace {
/// Runs `fn`; returns the flattened message of anything it throws.
template <typename Fn> std::optional<std::string> tryRun(Fn &&fn) {
  try {
    fn();
    return std::nullopt;
  } catch (const std::exception &e) {
    return flattenMessage(e.what());
  } catch (...) {
    return std::string("unknown error in the ONNX library");
  }
}
} // namespace

int64_t mlir::ttt::onnx::getLibraryIrVersion() { return pb::IR_VERSION; }

std::optional<std::pair<int64_t, int64_t>>
mlir::ttt::onnx::getKnownOpsetRange(llvm::StringRef domain) {
  const auto &map =
      pb::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(canonicalDomain(domain).str());
  if (it == map.end())
    return std::nullopt;
  return std::make_pair<int64_t, int64_t>(it->second.first, it->second.second);
}

/// The main-graph part of the checker (onnx::checker::check_graph), split
/// per item so that a failure can name the input, initializer or node.
static std::optional<CheckFailure>
checkMainGraph(const pb::GraphProto &graph,
               const pb::checker::CheckerContext &ctx,
               const OpsetTable &opsets) {
  if (graph.name().empty())
    return CheckFailure{nullptr, "the main graph has no name"};
  for (const auto *list : {&graph.input(), &graph.output()})
    for (const pb::ValueInfoProto &info : *list)
      if (auto error =
              tryRun([&] { pb::checker::check_value_info(info, ctx); }))
        return CheckFailure{
            nullptr,
            "graph " +
                std::string(list == &graph.input() ? "input" : "output") +
                " '" + info.name() + "': " + *error};

  // One lexical scope for the whole graph, filled as items define names:
  // the checker looks node inputs up in it. (Copying the names defined so
  // far into a fresh scope per node made checking quadratic in the nodes.)
  pb::checker::LexicalScopeContext lexical;
  std::unordered_set<std::string> &defined = lexical.output_names;
  for (const pb::ValueInfoProto &info : graph.input())
    if (!defined.insert(info.name()).second)
      return CheckFailure{nullptr,
                          "graph input '" + info.name() + "' is listed twice"};
  std::unordered_set<std::string> initializers;
  for (const pb::TensorProto &tensor : graph.initializer()) {
    if (!initializers.insert(tensor.name()).second)
      return CheckFailure{nullptr, "initializer '" + tensor.name() +
                                       "' is defined twice"};
    if (ctx.get_ir_version() <= 3 && !defined.count(tensor.name()))
      return CheckFailure{nullptr, "initializer '" + tensor.name() +
                                       "' is not a graph input, which IR "
                                       "version 3 and older require"};
    defined.insert(tensor.name());
    if (auto error = tryRun([&] { pb::checker::check_tensor(tensor, ctx); }))
      return CheckFailure{nullptr,
                          "initializer '" + tensor.name() + "': " + *error};
  }

  for (const pb::NodeProto &node : graph.node()) {
    for (const std::string &input : node.input())
      if (!input.empty() && !defined.count(input))
        return CheckFailure{&node, "input '" + input +
                                       "' is not defined by a graph input, "
                                       "an initializer or an earlier node"};
    if (auto error =
            tryRun([&] { pb::checker::check_node(node, ctx, lexical); }))
      return CheckFailure{&node, *error};
    for (const std::string &output : node.output())
      if (!output.empty() && !defined.insert(output).second)
        return CheckFailure{&node, "output '" + output +
                                       "' is already defined (ONNX graphs "
                                       "are in SSA form)"};
  }
  return std::nullopt;
}

std::optional<CheckFailure>
mlir::ttt::onnx::checkModel(const pb::ModelProto &model,
                            const std::string &modelDir,
                            const OpsetTable &opsets) {
  // The model-level rules of onnx::checker::check_model, except that a model
  // newer than the library is checked by the newest rules it knows.
  if (!model.ir_version())
    return CheckFailure{nullptr, "the model does not set ir_version"};
  std::unordered_set<std::string> keys;
  for (const pb::StringStringEntryProto &entry : model.metadata_props())
    if (!keys.insert(entry.key()).second)
      return CheckFailure{nullptr, "metadata_props has the key '" +
                                       entry.key() + "' twice"};

  pb::checker::CheckerContext ctx;
  int64_t irVersion = std::min<int64_t>(model.ir_version(), pb::IR_VERSION);
  ctx.set_ir_version(static_cast<int>(irVersion));
  std::unordered_map<std::string, int> imports;
  for (const pb::OperatorSetIdProto &opset : model.opset_import())
    imports[opset.domain()] = static_cast<int>(opset.version());
  if (irVersion >= 3 && imports.empty())
    return CheckFailure{nullptr, "the model imports no opset"};
  if (irVersion < 3 && imports.empty())
    imports[""] = 1;
  ctx.set_opset_imports(imports);
  ctx.set_model_dir(modelDir);

  if (std::optional<CheckFailure> failure =
          checkMainGraph(model.graph(), ctx, opsets))
    return failure;
  if (irVersion >= 8 && model.functions_size() != 0) {
    pb::checker::LexicalScopeContext lexical;
    if (auto error = tryRun([&] {
          pb::checker::check_model_local_functions(model, ctx, lexical);
        }))
      return CheckFailure{nullptr, "model-local function: " + *error};
  }
  return std::nullopt;
}

std::string mlir::ttt::onnx::inferShapesInProcess(pb::ModelProto &model) {
  // check_type off and error_mode 0: a node that cannot be inferred leaves
  // its outputs untyped instead of failing the import.
  pb::ShapeInferenceOptions options{/*check_type_val=*/false,
                                    /*strict_mode_val=*/0,
                                    /*data_prop_val=*/false};
  std::optional<std::string> error = tryRun([&] {
    pb::shape_inference::InferShapes(model, pb::OpSchemaRegistry::Instance(),
                                     options);
  });
  return error ? *error : std::string();
}
