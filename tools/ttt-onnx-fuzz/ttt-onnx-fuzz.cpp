//===- ttt-onnx-fuzz.cpp - libFuzzer target for the ONNX reader -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to the ONNX reader. Whatever it accepts must also
// write back (the writer's checks pass) and read again to the same model:
// export(import(export(x))) == export(x), except that the second reading may
// know more types of subgraph inputs and outputs (shape inference may not
// have typed them the first time). Then the default ONNX pipeline
// (ttt-onnx-optimize: find TTT layers, rewrite, export the parallel form) runs
// on what was read; it may refuse with an error, but what it accepts must
// write as a checked model. Rejections are fine; crashes, sanitizer reports
// and broken round trips are bugs. Run with `make fuzz`.
//
//===----------------------------------------------------------------------===//

#include "ModelMutator.h"

#include "ttt/InitAllDialects.h"
#include "ttt/Pipelines/Pipelines.h"
#include "ttt/Target/ONNX/ExportONNX.h"
#include "ttt/Target/ONNX/ImportONNX.h"

#include "onnx/onnx_pb.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir;

/// Stops the run with `what` and the diagnostics seen so far.
[[noreturn]] static void fail(const char *what, const std::string &log) {
  llvm::errs() << "ttt-onnx-fuzz: " << what << "\n" << log;
  llvm::errs().flush();
  std::abort();
}

/// Clears the types of the inputs and outputs of every subgraph of `graph`.
static void clearSubgraphTypes(::onnx::GraphProto &graph, bool isSubgraph) {
  if (isSubgraph) {
    for (::onnx::ValueInfoProto &info : *graph.mutable_input())
      info.clear_type();
    for (::onnx::ValueInfoProto &info : *graph.mutable_output())
      info.clear_type();
  }
  for (::onnx::NodeProto &node : *graph.mutable_node())
    for (::onnx::AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        clearSubgraphTypes(*attr.mutable_g(), true);
      for (::onnx::GraphProto &sub : *attr.mutable_graphs())
        clearSubgraphTypes(sub, true);
    }
}

/// The serialized model `bytes` without subgraph input and output types.
static std::string withoutSubgraphTypes(const std::string &bytes) {
  ::onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    fail("the writer produced bytes that do not parse", "");
  clearSubgraphTypes(*model.mutable_graph(), false);
  return model.SerializeAsString();
}

// libFuzzer's entry points keep libFuzzer's names.
// NOLINTNEXTLINE(readability-identifier-naming)
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    ttt::onnx::registerONNXImportDialects(*r);
    ttt::registerTTTDialects(*r);
    return r;
  }();
  // A fresh context per input: resource blobs live as long as their context.
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  std::string log;
  ScopedDiagnosticHandler collect(&context, [&](Diagnostic &diag) {
    log += diag.str() + "\n";
    return success();
  });

  ttt::onnx::ImportOptions options;
  // Small enough that fuzzed tensors also take the resource-blob path.
  options.resourceThreshold = 16;
  // External data is looked up in a directory that does not exist.
  StringRef bytes(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module = ttt::onnx::importONNXModel(
      bytes, "fuzz.onnx", "/nonexistent/ttt-onnx-fuzz", &context, options);
  if (!module)
    return 0;

  std::string first, second;
  if (failed(ttt::onnx::exportONNXToString(*module, "fuzz.onnx", first)))
    fail("an accepted model does not write back", log);
  OwningOpRef<ModuleOp> again = ttt::onnx::importONNXModel(
      first, "again.onnx", "/nonexistent/ttt-onnx-fuzz", &context, options);
  if (!again)
    fail("a written model does not read back", log);
  if (failed(ttt::onnx::exportONNXToString(*again, "again.onnx", second)))
    fail("a model read back does not write again", log);
  if (first != second &&
      withoutSubgraphTypes(first) != withoutSubgraphTypes(second))
    fail("writing is not idempotent: export(import(export(x))) differs", log);

  PassManager pm(&context);
  ttt::buildTTTONNXOptimizePipeline(pm);
  if (failed(pm.run(*again)))
    return 0;
  std::string optimized;
  if (failed(ttt::onnx::exportONNXToString(*again, "fast.onnx", optimized)))
    fail("an optimized model does not write", log);
  return 0;
}

// NOLINTNEXTLINE(readability-identifier-naming)
extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

/// Half of the mutations edit the parsed model (ModelMutator.cpp), half are
/// libFuzzer's byte-level ones.
// NOLINTNEXTLINE(readability-identifier-naming)
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  if (seed % 2 == 0)
    if (size_t newSize =
            mlir::ttt::fuzz::mutateModel(data, size, maxSize, seed / 2))
      return newSize;
  return LLVMFuzzerMutate(data, size, maxSize);
}
