//===- Compiler.cpp - the project's small C++ API -------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Wraps the passes, the ONNX reader/writer, the layer analysis and ttt-run's
// JIT pieces (EntrySignature, JitFunction) behind the string-only interface
// of Compiler.h. Each call gets its own MLIRContext.
//
//===----------------------------------------------------------------------===//

#include "ttt/API/Compiler.h"

#include "ttt/Execution/EntrySignature.h"
#include "ttt/Execution/JitFunction.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/TTT/Analysis/LayerAnalysis.h"
#include "ttt/Dialect/TTT/Transforms/Passes.h"
#include "ttt/InitAllDialects.h"
#include "ttt/Pipelines/Pipelines.h"
#include "ttt/Support/Location.h"
#include "ttt/Support/Memory.h"
#include "ttt/Target/ONNX/ExportONNX.h"
#include "ttt/Target/ONNX/ImportONNX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

using namespace llvm;

#ifndef TTT_VERSION
#define TTT_VERSION "0.0.0"
#endif

namespace ttt::api {
namespace {

/// One-time global set-up: the native target (for the JIT). Pipelines are
/// built by their C++ builders, so no pass needs registering.
void initialize() {
  static std::once_flag once;
  std::call_once(once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
  });
}

void makeRegistry(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::ttt::registerTTTDialects(registry);
  mlir::ttt::onnx::registerONNXImportDialects(registry);
}

/// Flattens a message to one line.
std::string oneLine(StringRef text) {
  std::string line = text.trim().str();
  for (char &c : line)
    if (c == '\n' || c == '\r')
      c = ' ';
  return line;
}

/// Collects every diagnostic while alive: the first error as a one-line
/// message, remarks and warnings as lines.
class Collector : public mlir::ScopedDiagnosticHandler {
public:
  Collector(mlir::MLIRContext *context, StringRef inputName,
            std::function<void(const std::string &)> onLine = nullptr)
      : mlir::ScopedDiagnosticHandler(context), name(inputName.str()),
        onLine(std::move(onLine)) {
    setHandler([this](mlir::Diagnostic &diag) {
      std::string where = ::ttt::formatLocation(diag.getLocation());
      std::string text = oneLine(diag.str());
      if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
        if (error.empty())
          error = where.empty() ? text : where + ": " + text;
        return;
      }
      StringRef severity =
          diag.getSeverity() == mlir::DiagnosticSeverity::Warning ? "warning"
                                                                  : "remark";
      lines.push_back((where.empty() ? name : where) + ": " + severity.str() +
                      ": " + text);
      if (this->onLine)
        this->onLine(lines.back());
    });
  }

  /// "the first error", or "NAME: WHAT" when there was none.
  std::string takeError(StringRef what) {
    std::string message = error.empty() ? name + ": " + what.str() : error;
    error.clear();
    return message;
  }

  std::vector<std::string> lines;

private:
  std::string name;
  std::function<void(const std::string &)> onLine;
  std::string error;
};

Status fail(ErrorKind kind, std::string message) {
  return Status{kind, oneLine(message)};
}

/// Parses `input` as `format` into a module.
mlir::OwningOpRef<mlir::ModuleOp>
readInput(const std::string &input, StringRef format, StringRef name,
          mlir::MLIRContext &context, llvm::SourceMgr &sourceMgr,
          Collector &collector, Status &status) {
  if (format == "onnx") {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        // External data files are looked up next to the model.
        mlir::ttt::onnx::importONNXModel(
            input, name, llvm::sys::path::parent_path(name), &context);
    if (!module)
      status =
          fail(ErrorKind::Parse, collector.takeError("not a valid ONNX model"));
    return module;
  }
  if (format != "mlir" && format != "linalg") {
    status =
        fail(ErrorKind::Invalid, "unknown input format '" + format.str() +
                                     "' (expected 'mlir', 'linalg' or 'onnx')");
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(MemoryBuffer::getMemBufferCopy(input, name),
                               SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    status = fail(ErrorKind::Parse, collector.takeError("cannot parse"));
  return module;
}

/// A context for one call, with everything registered.
std::unique_ptr<mlir::MLIRContext> makeContext() {
  initialize();
  mlir::DialectRegistry registry;
  makeRegistry(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->disableMultithreading();
  context->allowUnregisteredDialects(false);
  return context;
}

} // namespace

std::string version() { return TTT_VERSION; }

int64_t availableMemory() {
  std::optional<uint64_t> bytes = ::ttt::getAvailableMemory();
  if (!bytes)
    return -1;
  return static_cast<int64_t>(
      std::min<uint64_t>(*bytes, std::numeric_limits<int64_t>::max()));
}

std::vector<std::string> simplifications() {
  std::vector<std::string> names;
  for (const mlir::ttt::SimplifyVariant &variant :
       mlir::ttt::getSimplifyVariants())
    names.push_back(variant.option.str());
  return names;
}

OptimizeResult
optimize(const std::string &input, const std::string &inputFormat,
         const std::vector<std::string> &simplify, const std::string &emit,
         const std::string &name,
         const std::function<void(const std::string &)> &onRemark) {
  OptimizeResult result;
  if (emit != "onnx" && emit != "mlir") {
    result.status =
        fail(ErrorKind::Invalid, "unknown output format '" + emit +
                                     "' (expected 'onnx' or 'mlir')");
    return result;
  }
  mlir::ttt::TTTSimplifyOptions simplifyOptions;
  ArrayRef<mlir::ttt::SimplifyVariant> variants =
      mlir::ttt::getSimplifyVariants();
  for (const std::string &option : simplify) {
    const auto *variant =
        llvm::find_if(variants, [&](const mlir::ttt::SimplifyVariant &v) {
          return v.option == option;
        });
    if (variant == variants.end()) {
      std::vector<std::string> names = simplifications();
      result.status =
          fail(ErrorKind::Invalid, "unknown simplification '" + option +
                                       "' (expected " +
                                       join(ArrayRef(names).drop_back(), ", ") +
                                       " or " + names.back() + ")");
      return result;
    }
    simplifyOptions.*(variant->flag) = true;
  }

  bool onnxInput = inputFormat == "onnx";
  bool linalgInput = inputFormat == "linalg";
  if (linalgInput && (emit != "mlir" || !simplify.empty())) {
    result.status = fail(ErrorKind::Invalid,
                         "a linalg program is optimized by ttt-optimize-linalg "
                         "into MLIR, without simplifications");
    return result;
  }

  auto context = makeContext();
  Collector collector(context.get(), name, onRemark);
  llvm::SourceMgr sourceMgr;
  mlir::OwningOpRef<mlir::ModuleOp> module = readInput(
      input, inputFormat, name, *context, sourceMgr, collector, result.status);
  if (!module)
    return result;

  // The pass manager is anchored on builtin.module already. An ONNX model
  // gets its TTT layers found and, where exact, rewritten into standard ONNX
  // nodes (or shown in linattn form with emit "mlir").
  mlir::PassManager pm(context.get());
  if (linalgInput) {
    mlir::ttt::buildTTTOptimizeLinalgPipeline(pm);
  } else if (!onnxInput) {
    pm.addPass(mlir::ttt::createTTTSimplify(simplifyOptions));
    pm.addPass(mlir::ttt::createTTTToLinAttn());
  } else if (emit == "onnx" && simplify.empty()) {
    mlir::ttt::buildTTTONNXOptimizePipeline(pm);
  } else if (emit == "onnx") {
    // The simplifications run on every layer the raise reads; a layer they
    // do not make linear attention keeps its nodes.
    (void)mlir::ttt::buildTTTONNXOptimizePipeline(
        pm, /*explain=*/false, [&](mlir::OpPassManager &nested) {
          nested.addPass(mlir::ttt::createTTTSimplify(simplifyOptions));
          return mlir::success();
        });
  } else if (!simplify.empty()) {
    mlir::ttt::TTTRaiseONNXChunksOptions chunks;
    chunks.raiseAll = true;
    pm.addPass(mlir::ttt::createTTTRaiseONNXChunks(chunks));
    mlir::ttt::TTTRaiseONNXOptions raise;
    raise.raiseAll = true;
    pm.addPass(mlir::ttt::createTTTRaiseONNX(raise));
    pm.addPass(mlir::ttt::createTTTSimplify(simplifyOptions));
    pm.addPass(mlir::ttt::createTTTToLinAttn());
  } else {
    mlir::ttt::addTTTONNXRewritePasses(pm);
  }
  if (mlir::failed(pm.run(*module))) {
    result.status =
        fail(ErrorKind::Compile, collector.takeError("optimization failed"));
    result.remarks = collector.lines;
    return result;
  }

  if (emit == "onnx") {
    if (mlir::failed(mlir::ttt::onnx::exportONNXToString(*module, name,
                                                         result.output))) {
      result.status =
          fail(ErrorKind::Export, collector.takeError("cannot write as ONNX"));
      result.output.clear();
    }
  } else {
    raw_string_ostream os(result.output);
    module->print(os);
    os << '\n';
  }
  result.remarks = collector.lines;
  return result;
}

ExplainResult explain(const std::string &input, const std::string &inputFormat,
                      const std::string &name) {
  ExplainResult result;
  auto context = makeContext();
  Collector collector(context.get(), name);
  llvm::SourceMgr sourceMgr;
  mlir::OwningOpRef<mlir::ModuleOp> module = readInput(
      input, inputFormat, name, *context, sourceMgr, collector, result.status);
  if (!module)
    return result;

  auto record = [&](mlir::Operation *op, const mlir::ttt::LayerFacts &facts) {
    LayerReport report;
    report.location = ::ttt::formatLocation(op->getLoc(), name);
    report.op = op->getName().getStringRef().str();
    report.lowering = mlir::ttt::stringifyExactLowering(facts.lowering).str();
    report.update = mlir::ttt::stringifyStateUpdate(facts.update).str();
    report.outputLinear = facts.outputLinear;
    report.staticKernel = facts.staticKernel;
    report.rewritable = facts.rewritable;
    report.proven.assign(facts.proven.begin(), facts.proven.end());
    report.blockers.assign(facts.blockers.begin(), facts.blockers.end());
    report.unsupported.assign(facts.unsupported.begin(),
                              facts.unsupported.end());
    report.explanation = mlir::ttt::explainLayer(facts);
    result.layers.push_back(std::move(report));
  };
  // In an ONNX model, the raise finds the layers (one remark each) and
  // raises every one whose ttt.kvb_layer form it can read: the canonical
  // route first, then the older reader on what it left.
  std::map<std::string, std::string> foundInONNX;
  if (inputFormat == "onnx") {
    mlir::PassManager pm(context.get());
    mlir::ttt::TTTRaiseONNXChunksOptions chunks;
    chunks.raiseAll = true;
    pm.addPass(mlir::ttt::createTTTRaiseONNXChunks(chunks));
    mlir::ttt::TTTRaiseONNXOptions raise;
    raise.raiseAll = true;
    pm.addPass(mlir::ttt::createTTTRaiseONNX(raise));
    if (mlir::failed(pm.run(*module))) {
      result.status = fail(ErrorKind::Compile,
                           collector.takeError("cannot search for TTT layers"));
      return result;
    }
    for (const std::string &line : collector.lines) {
      size_t at = line.find(": remark: TTT layer: ");
      if (at != std::string::npos)
        foundInONNX.emplace(line.substr(0, at),
                            line.substr(at + strlen(": remark: ")));
    }
  }
  module->walk([&](mlir::Operation *op) {
    if (auto layer = dyn_cast<mlir::ttt::KVBLayerOp>(op))
      record(op, mlir::ttt::analyzeLayer(layer));
    else if (auto conv = dyn_cast<mlir::ttt::DWConvLayerOp>(op))
      record(op, mlir::ttt::analyzeLayer(conv));
  });
  // Raised layers are described by their analysis, with the raise's finding
  // in front; the others only by the raise's finding.
  for (LayerReport &report : result.layers) {
    auto found = foundInONNX.find(report.location);
    if (found == foundInONNX.end())
      continue;
    // A raised layer that is not rewritable already carries its analysis
    // in the finding; it is said once.
    std::string finding = found->second;
    StringRef raised = ": raised to ttt.kvb_layer";
    size_t at = finding.find(raised.str() + ";");
    if (at != std::string::npos)
      finding.resize(at + raised.size());
    report.explanation = finding + "; " + report.explanation;
    foundInONNX.erase(found);
  }
  for (const auto &[location, finding] : foundInONNX) {
    LayerReport report;
    report.location = location;
    report.op = "onnx";
    report.lowering = mlir::ttt::stringifyExactLowering(
                          mlir::ttt::ExactLowering::ChunkSequential)
                          .str();
    report.update = "unknown";
    size_t reason = finding.find(": left as it was: ");
    if (reason != std::string::npos)
      report.blockers.push_back(
          finding.substr(reason + strlen(": left as it was: ")));
    report.explanation = finding;
    result.layers.push_back(std::move(report));
  }
  return result;
}

namespace {

std::optional<::ttt::npy::DType> parseDType(StringRef name) {
  using ::ttt::npy::DType;
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("float32", DType::F32)
      .Case("float64", DType::F64)
      .Case("int32", DType::I32)
      .Case("int64", DType::I64)
      .Default(std::nullopt);
}

std::string formatShape(ArrayRef<int64_t> shape) {
  return ::ttt::npy::formatShape(shape);
}

/// Checks input `index` against its tensor type (ttt-run's rules: dtype,
/// rank, every static size).
std::optional<std::string> checkInput(const Buffer &buffer, size_t index,
                                      const ::ttt::run::TensorSpec &spec) {
  std::string what = "input " + std::to_string(index) + " (" + spec.type + ")";
  std::optional<::ttt::npy::DType> dtype = parseDType(buffer.dtype);
  if (!dtype)
    return what + ": unsupported dtype " + buffer.dtype +
           " (expected float32, float64, int32 or int64)";
  if (*dtype != spec.dtype)
    return what + ": dtype mismatch: expected " +
           ::ttt::npy::getDTypeName(spec.dtype).str() + ", got " + buffer.dtype;
  if (static_cast<int64_t>(buffer.shape.size()) != spec.getRank())
    return what + ": shape mismatch: expected rank " +
           std::to_string(spec.getRank()) + ", got shape " +
           formatShape(buffer.shape);
  for (auto [dim, expected, actual] : llvm::enumerate(spec.shape, buffer.shape))
    if (!mlir::ShapedType::isDynamic(expected) && expected != actual)
      return what + ": shape mismatch: dimension " + std::to_string(dim) +
             " must be " + std::to_string(expected) + ", got shape " +
             formatShape(buffer.shape);
  return std::nullopt;
}

/// What the pipeline left outside the LLVM dialect (as ttt-run checks).
mlir::Operation *findLeftover(mlir::ModuleOp module) {
  mlir::Operation *leftover = nullptr;
  module.walk([&](mlir::Operation *op) {
    StringRef dialect = op->getName().getDialectNamespace();
    if (op != module.getOperation() && dialect != "llvm" && dialect != "omp") {
      leftover = op;
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return leftover;
}

} // namespace

RunResult run(const std::string &mlirText, const std::vector<Buffer> &inputs,
              const std::string &device, const std::string &entry,
              const std::string &name) {
  RunResult result;
  if (device != "cpu") {
    result.status =
        fail(ErrorKind::Invalid,
             "device '" + device +
                 "' is not supported here (the Python package runs on "
                 "'cpu'; use ttt-run --device=cuda for GPUs)");
    return result;
  }
  auto context = makeContext();
  Collector collector(context.get(), name);
  llvm::SourceMgr sourceMgr;
  mlir::OwningOpRef<mlir::ModuleOp> module = readInput(
      mlirText, "mlir", name, *context, sourceMgr, collector, result.status);
  if (!module)
    return result;

  Expected<::ttt::run::EntrySignature> signature =
      ::ttt::run::getEntrySignature(*module, entry, name);
  if (!signature) {
    result.status = fail(ErrorKind::Invalid, toString(signature.takeError()));
    return result;
  }
  result.function = signature->name;
  if (inputs.size() != signature->arguments.size()) {
    result.status =
        fail(ErrorKind::Invalid,
             name + ": wrong number of inputs: @" + signature->name +
                 " takes " + std::to_string(signature->arguments.size()) +
                 " argument(s), got " + std::to_string(inputs.size()));
    return result;
  }
  std::vector<::ttt::npy::Array> arrays;
  for (auto [i, buffer] : llvm::enumerate(inputs)) {
    if (std::optional<std::string> problem =
            checkInput(buffer, i, signature->arguments[i])) {
      result.status = fail(ErrorKind::Invalid, name + ": " + *problem);
      return result;
    }
    Expected<::ttt::npy::Array> array =
        ::ttt::npy::Array::create(*parseDType(buffer.dtype), buffer.shape);
    if (!array) {
      result.status =
          fail(ErrorKind::Invalid, name + ": input " + std::to_string(i) +
                                       ": " + toString(array.takeError()));
      return result;
    }
    if (array->getNumBytes() != buffer.data.size()) {
      result.status =
          fail(ErrorKind::Invalid,
               name + ": input " + std::to_string(i) + ": expected " +
                   std::to_string(array->getNumBytes()) +
                   " bytes of data, got " + std::to_string(buffer.data.size()));
      return result;
    }
    std::copy(buffer.data.begin(), buffer.data.end(), array->getData());
    arrays.push_back(std::move(*array));
  }

  {
    llvm::SmallVector<llvm::ArrayRef<int64_t>> shapes;
    for (const ::ttt::npy::Array &array : arrays)
      shapes.push_back(array.getShape());
    if (llvm::Error err =
            ::ttt::run::checkArgumentSizes(*module, *signature, shapes, name)) {
      result.status = fail(ErrorKind::Invalid, toString(std::move(err)));
      return result;
    }
  }

  mlir::PassManager pm(context.get());
  mlir::ttt::TTTToCPUOptions options;
  // As ttt-run: threads over streams where the machine has cores to spare
  // (the results do not depend on it).
  options.openmp = mlir::ttt::isOpenMPDefaultOnHost();
  mlir::ttt::buildTTTToCPUPipeline(pm, options);
  if (mlir::failed(pm.run(*module))) {
    result.status = fail(ErrorKind::Compile,
                         collector.takeError("ttt-to-cpu pipeline failed"));
    return result;
  }
  if (mlir::Operation *leftover = findLeftover(*module)) {
    leftover->emitError() << "'" << leftover->getName()
                          << "' has no lowering to the LLVM dialect";
    result.status = fail(ErrorKind::Compile,
                         collector.takeError("ttt-to-cpu pipeline failed"));
    return result;
  }

  ::ttt::run::JitOptions jitOptions;
  jitOptions.sharedLibs = {TTT_LLVM_LIBRARY_DIR "/libmlir_c_runner_utils.so",
                           TTT_LLVM_LIBRARY_DIR "/libmlir_runner_utils.so"};
  if (options.openmp)
    jitOptions.sharedLibs.push_back(TTT_LLVM_LIBRARY_DIR "/libomp.so");
  jitOptions.freeResult = std::free;
  auto function =
      ::ttt::run::JitFunction::create(*module, *signature, jitOptions, name);
  if (!function) {
    result.status = fail(ErrorKind::Run, toString(function.takeError()));
    return result;
  }
  double seconds = 0;
  auto outputs = (*function)->call(arrays, seconds);
  if (!outputs) {
    result.status = fail(ErrorKind::Run, toString(outputs.takeError()));
    return result;
  }
  for (::ttt::npy::Array &array : *outputs) {
    Buffer buffer;
    buffer.dtype = ::ttt::npy::getDTypeName(array.getDType()).str();
    buffer.shape.assign(array.getShape().begin(), array.getShape().end());
    buffer.data.assign(array.getData(), array.getNumBytes());
    result.outputs.push_back(std::move(buffer));
  }
  return result;
}

} // namespace ttt::api
