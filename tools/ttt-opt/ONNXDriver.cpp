//===- ONNXDriver.cpp - ttt-opt's ONNX input and output -------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MlirOptMain reads and writes MLIR only, and writes its output file itself.
// When ONNX is at either end, ttt-opt instead runs the same steps here with
// MlirOptMain's own configuration (pass pipeline, verifier, timing, IR
// printing, bytecode flags), so that the model is translated in memory, with
// no text round trip of its weights.
//
//===----------------------------------------------------------------------===//

#include "ONNXDriver.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/TTT/Transforms/Passes.h"
#include "ttt/Pipelines/Pipelines.h"
#include "ttt/Support/Location.h"
#include "ttt/Support/OutputFile.h"
#include "ttt/Target/ONNX/ExportONNX.h"
#include "ttt/Target/ONNX/ImportONNX.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/ParseUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {
enum class Format { Auto, MLIR, ONNX };
} // namespace

static llvm::cl::OptionCategory onnxCategory("ttt-opt ONNX options");

static llvm::cl::opt<Format> inputFormat(
    "input-format",
    llvm::cl::desc("Format of the input file (default: ONNX if its name ends "
                   "in .onnx, else MLIR)"),
    llvm::cl::values(clEnumValN(Format::Auto, "auto", "by file extension"),
                     clEnumValN(Format::MLIR, "mlir", "MLIR text or bytecode"),
                     clEnumValN(Format::ONNX, "onnx", "an ONNX model")),
    llvm::cl::init(Format::Auto), llvm::cl::cat(onnxCategory));

static llvm::cl::opt<Format> emitFormat(
    "emit",
    llvm::cl::desc("Format of the output (default: ONNX if the -o file ends "
                   "in .onnx, else MLIR)"),
    llvm::cl::values(clEnumValN(Format::Auto, "auto", "by file extension"),
                     clEnumValN(Format::MLIR, "mlir",
                                "MLIR text (or bytecode with --emit-bytecode)"),
                     clEnumValN(Format::ONNX, "onnx",
                                "an ONNX model, checked with the ONNX "
                                "checker")),
    llvm::cl::init(Format::Auto), llvm::cl::cat(onnxCategory));

static llvm::cl::opt<bool> roundTrip(
    "onnx-roundtrip",
    llvm::cl::desc("ONNX in, ONNX out, no passes: write the model back as it "
                   "is instead of running the default ttt-onnx-optimize "
                   "pipeline"),
    llvm::cl::init(false), llvm::cl::cat(onnxCategory));

// A short spelling of --mlir-timing for the ONNX path, where reading and
// writing the model are stages of their own next to the passes.
static llvm::cl::opt<bool> timing(
    "timing",
    llvm::cl::desc("With ONNX input or output: print the time of each stage "
                   "(reading the model, each pass, writing it); the same as "
                   "--mlir-timing"),
    llvm::cl::init(false), llvm::cl::cat(onnxCategory));

static bool isONNX(Format format, StringRef path) {
  if (format != Format::Auto)
    return format == Format::ONNX;
  return llvm::sys::path::extension(path).equals_insensitive(".onnx");
}

/// Whether the input is ONNX: by --input-format, by a .onnx name, else (a
/// .pb file, standard input) by content.
static bool readsONNXInput(StringRef path, const llvm::MemoryBuffer *input) {
  if (isONNX(inputFormat, path))
    return true;
  if (inputFormat != Format::Auto || !input)
    return false;
  StringRef extension = llvm::sys::path::extension(path);
  if (extension.equals_insensitive(".mlir") ||
      extension.equals_insensitive(".mlirbc"))
    return false;
  return mlir::ttt::onnx::looksLikeONNXModel(input->getBuffer());
}

bool mlir::ttt::isONNXRequested(StringRef inputFilename,
                                StringRef outputFilename,
                                const llvm::MemoryBuffer *input) {
  return readsONNXInput(inputFilename, input) ||
         isONNX(emitFormat, outputFilename);
}

namespace {
/// Prints diagnostics as "error: <where>: <message>", one line each (plus
/// notes). <where> is the file of an ONNX model and, for an op imported from
/// one, its node: the reader gives imported ops the location
/// `"<node name>"(<file>:0:0)`. Diagnostics with a real source position are
/// left to the next handler (`fallThrough`), which shows the source line.
class OneLineDiagnosticHandler : public ScopedDiagnosticHandler {
public:
  OneLineDiagnosticHandler(MLIRContext *context, bool fallThrough)
      : ScopedDiagnosticHandler(context) {
    setHandler([fallThrough](Diagnostic &diag) -> LogicalResult {
      if (fallThrough && ::ttt::hasSourcePosition(diag.getLocation()))
        return failure();
      print(diag);
      for (Diagnostic &note : diag.getNotes())
        print(note);
      return success();
    });
  }

private:
  static void print(Diagnostic &diag) {
    llvm::raw_ostream &os = llvm::errs();
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Error:
      os << "error: ";
      break;
    case DiagnosticSeverity::Warning:
      os << "warning: ";
      break;
    case DiagnosticSeverity::Note:
      os << "note: ";
      break;
    case DiagnosticSeverity::Remark:
      os << "remark: ";
      break;
    }
    std::string where = ::ttt::formatLocation(diag.getLocation());
    if (!where.empty())
      os << where << ": ";
    os << diag.str() << "\n";
  }
};
} // namespace

/// Parses the MLIR file `path` (read as `file`) as mlir-opt would.
static OwningOpRef<ModuleOp>
parseMLIR(std::unique_ptr<llvm::MemoryBuffer> file,
          const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
          MLIRContext &context, const MlirOptMainConfig &config,
          FallbackAsmResourceMap &resources) {
  sourceMgr->AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  ParserConfig parserConfig(&context, config.shouldVerifyOnParsing(),
                            &resources);
  OwningOpRef<Operation *> op = parseSourceFileForTool(
      sourceMgr, parserConfig, !config.shouldUseExplicitModule());
  if (!op)
    return nullptr;
  auto module = dyn_cast<ModuleOp>(op.get());
  if (!module) {
    op->emitError() << "expected a builtin.module at the top level";
    return nullptr;
  }
  op.release();
  return module;
}

/// Writes `module` as MLIR text or bytecode to `path` (ttt::writeOutputFile:
/// a regular file appears only if everything was written).
static LogicalResult writeMLIR(ModuleOp module, StringRef path,
                               const MlirOptMainConfig &config,
                               FallbackAsmResourceMap &resources) {
  LogicalResult written = success();
  llvm::Error error = ::ttt::writeOutputFile(
      path, config.shouldEmitBytecode(),
      [&](llvm::raw_ostream &os) -> llvm::Error {
        if (config.shouldEmitBytecode()) {
          BytecodeWriterConfig writerConfig(resources);
          if (std::optional<int64_t> version = config.bytecodeVersionToEmit())
            writerConfig.setDesiredBytecodeVersion(*version);
          if (config.shouldElideResourceDataFromBytecode())
            writerConfig.setElideResourceDataFlag();
          written = writeBytecodeToFile(module, os, writerConfig);
          return llvm::Error::success();
        }
        AsmState state(module, OpPrintingFlags(), /*locationMap=*/nullptr,
                       &resources);
        module->print(os, state);
        os << '\n';
        return llvm::Error::success();
      });
  if (error) {
    emitError(UnknownLoc::get(module.getContext()))
        << path << ": " << llvm::toString(std::move(error));
    return failure();
  }
  return written;
}

/// The passes named on the command line, if they only explain or simplify
/// layers: such passes are added to the main job on an ONNX model instead of
/// replacing it.
struct LayerPasses {
  bool explain = false;
  /// The ttt-simplify passes, as a textual pipeline.
  std::string simplify;
};

static std::optional<LayerPasses> layerPassesOnly(PassManager &pm) {
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  StringRef list = text;
  for (StringRef anchor : {"builtin.module(", "any("})
    if (list.consume_front(anchor)) {
      if (!list.consume_back(")"))
        return std::nullopt;
      break;
    }
  LayerPasses passes;
  // Passes are separated by commas outside their option braces.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] == '{')
      ++depth;
    else if (i < list.size() && list[i] == '}')
      --depth;
    if (i < list.size() && (list[i] != ',' || depth != 0))
      continue;
    StringRef pass = list.slice(start, i).trim();
    start = i + 1;
    // printAsTextualPipeline spells out every option, at its default too.
    if (pass == "ttt-explain" || pass == "ttt-explain{cores=0}") {
      passes.explain = true;
    } else if (pass.starts_with("ttt-simplify")) {
      passes.simplify += (passes.simplify.empty() ? "" : ",") + pass.str();
    } else {
      return std::nullopt;
    }
  }
  return passes;
}

LogicalResult
mlir::ttt::runONNXOptMain(int argc, char **argv, StringRef inputFilename,
                          StringRef outputFilename, DialectRegistry &registry,
                          std::unique_ptr<llvm::MemoryBuffer> input) {
  llvm::InitLLVM initLLVM(argc, argv);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return MlirOptMain(argc, argv, inputFilename, outputFilename, registry);
  if (config.shouldVerifyDiagnostics() || !config.inputSplitMarker().empty()) {
    llvm::errs() << "error: --verify-diagnostics and --split-input-file work "
                    "on MLIR files, not with ONNX input or output\n";
    return failure();
  }

  MLIRContext context(registry);
  // Remarks about imported nodes name the node; the IR dump adds nothing.
  context.printOpOnDiagnostic(false);
  context.allowUnregisteredDialects(config.shouldAllowUnregisteredDialects());
  if (!input) {
    std::string error;
    input = openInputFile(inputFilename, &error);
    if (!input) {
      llvm::errs() << "error: " << error << "\n";
      return failure();
    }
  }
  bool readsONNX = readsONNXInput(inputFilename, input.get());
  StringRef displayName = inputFilename == "-" ? "<stdin>" : inputFilename;
  // Messages of the ONNX reader and writer, and about ops imported from ONNX,
  // print as one line each; those about MLIR source lines as mlir-opt would.
  auto sources = std::make_shared<llvm::SourceMgr>();
  std::optional<SourceMgrDiagnosticHandler> sourceHandler;
  if (!readsONNX)
    sourceHandler.emplace(*sources, &context);
  OneLineDiagnosticHandler oneLineHandler(&context, /*fallThrough=*/!readsONNX);

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  if (timing)
    timingManager.setEnabled(true);
  TimingScope timing = timingManager.getRootScope();

  FallbackAsmResourceMap resources;
  OwningOpRef<ModuleOp> module;
  {
    TimingScope inputTiming = timing.nest("Input");
    onnx::ImportOptions importOptions;
    importOptions.timing = &inputTiming;
    module = readsONNX ? onnx::importONNXModel(
                             input->getBuffer(), displayName,
                             inputFilename == "-"
                                 ? StringRef()
                                 : llvm::sys::path::parent_path(inputFilename),
                             &context, importOptions)
                       : parseMLIR(std::move(input), sources, context, config,
                                   resources);
  }
  if (!module)
    return failure();

  PassManager pm(&context, ModuleOp::getOperationName(),
                 PassManager::Nesting::Implicit);
  pm.enableVerifier(config.shouldVerifyPasses());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.enableTiming(timing);
  if (failed(config.setupPassPipeline(pm)))
    return failure();
  // `ttt-opt model.onnx -o fast.onnx` is the main job: with no passes named,
  // an ONNX model written back as ONNX gets its TTT layers rewritten. Asking
  // for an explanation adds it to that job (after the raise, which makes
  // the layers it explains) instead of replacing it.
  bool writesONNX = isONNX(emitFormat, outputFilename);
  bool named = pm.size() != 0;
  std::optional<LayerPasses> layerPasses =
      named ? layerPassesOnly(pm) : LayerPasses();
  if (readsONNX && !roundTrip && layerPasses) {
    bool explain = layerPasses->explain;
    pm.clear();
    if (writesONNX && layerPasses->simplify.empty()) {
      buildTTTONNXOptimizePipeline(pm, explain);
    } else if (writesONNX) {
      auto addSimplify = [&](OpPassManager &nested) {
        return parsePassPipeline(layerPasses->simplify, nested);
      };
      if (failed(buildTTTONNXOptimizePipeline(pm, explain, addSimplify)))
        return failure();
    } else if (named) {
      // MLIR out: every layer the raise can read, as the passes leave it.
      TTTRaiseONNXOptions options;
      options.raiseAll = true;
      pm.addPass(createTTTRaiseONNX(options));
      if (!layerPasses->simplify.empty() &&
          failed(parsePassPipeline(layerPasses->simplify, pm)))
        return failure();
      if (explain)
        pm.addPass(createTTTExplain());
    }
  }
  // Naming passes changes what runs on a model: say what did.
  if (readsONNX && named) {
    std::string text;
    llvm::raw_string_ostream os(text);
    pm.printAsTextualPipeline(os);
    llvm::errs() << "note: " << displayName << ": passes named, ran '" << text
                 << "'\n";
  }
  if (failed(pm.run(*module)))
    return failure();

  TimingScope outputTiming = timing.nest("Output");
  if (isONNX(emitFormat, outputFilename)) {
    onnx::ExportOptions exportOptions;
    exportOptions.timing = &outputTiming;
    return onnx::exportONNXFile(*module, outputFilename, exportOptions);
  }
  return writeMLIR(*module, outputFilename, config, resources);
}
