//===- ttt-opt.cpp - the ttt optimizer driver -----------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An mlir-opt-style driver: the ttt and linattn dialects, every upstream
// dialect, pass and extension that the ttt pipelines lower through, and the
// project's passes and pipelines. Reads and writes ONNX models too: an input
// or -o file ending in .onnx, an input that is an ONNX model by content (or
// --input-format=onnx / --emit=onnx) goes through the ONNX reader/writer
// (ONNXDriver.cpp) instead of MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "ttt/InitAllDialects.h"
#include "ttt/InitAllPasses.h"
#include "ttt/Pipelines/Pipelines.h"
#include "ttt/Support/OutputFile.h"
#include "ttt/Target/ONNX/ImportONNX.h"

#include "ONNXDriver.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

/// The project's passes and pipelines, in the order `--help` lists them.
static const char *const kProjectPasses[] = {
    "ttt-onnx-optimize", "ttt-raise-onnx",      "ttt-optimize-linalg",
    "ttt-raise-linalg",  "ttt-explain",         "ttt-simplify",
    "ttt-to-linattn",    "ttt-lower-recurrent", "linattn-to-linalg",
    "linattn-to-onnx",   "ttt-to-cpu",          "ttt-to-gpu"};

/// `ttt-opt --help`: the project's own options and passes. The upstream
/// dialects and passes add over a thousand lines; --help-list-all shows them.
static void printProjectHelp() {
  llvm::raw_ostream &os = llvm::outs();
  os << "OVERVIEW: ttt optimizer driver: finds test-time-training layers, "
        "rewrites them into linear attention and lowers them to a parallel "
        "chunked scan\n\n"
        "USAGE: ttt-opt [options] <input file>\n\n"
        "  ttt-opt model.onnx -o model.fast.onnx     rewrite an ONNX model "
        "(ttt-onnx-optimize)\n"
        "  ttt-opt model.onnx -o out.onnx --ttt-explain   the same, and one "
        "analysis remark per layer\n"
        "  ttt-opt layer.mlir --ttt-to-linattn       run passes on MLIR, as "
        "mlir-opt\n"
        "  ttt-opt prog.mlir --ttt-optimize-linalg   TTT layers of a linalg "
        "program, rewritten in linalg\n"
        "  ttt-opt - --emit=onnx -o - < in.pb > out.onnx   standard input and "
        "output ('-')\n\n"
        "INPUT AND OUTPUT:\n"
        "  -o <file>                  Output file ('-': standard output, the "
        "default). A regular file is\n"
        "                             replaced atomically; a FIFO or device is "
        "written in place; a symbolic\n"
        "                             link keeps pointing at the file it "
        "names. Binary output is never\n"
        "                             written to a terminal.\n"
        "  --input-format=auto|mlir|onnx   ONNX if the name ends in .onnx or "
        "the content is an ONNX ModelProto\n"
        "  --emit=auto|mlir|onnx      ONNX if the -o file ends in .onnx, else "
        "MLIR text\n"
        "  --emit-bytecode            MLIR bytecode instead of text\n"
        "  --onnx-roundtrip           ONNX in and out, no passes\n"
        "  --timing                   time per stage (import, passes, "
        "export)\n\n"
        "PASSES AND PIPELINES (options as --name=\"opt=value ...\"):\n";
  for (const char *name : kProjectPasses) {
    llvm::StringRef description;
    if (const mlir::PassInfo *pass = mlir::PassInfo::lookup(name))
      description = pass->getPassDescription();
    else if (const mlir::PassPipelineInfo *pipeline =
                 mlir::PassPipelineInfo::lookup(name))
      description = pipeline->getPassDescription();
    else
      continue;
    os << "  --" << name << "\n      " << description << "\n";
  }
  os << "\nWith stock mlir-opt and the plug-in, name the passes in a pipeline "
        "string (mlir-opt builds its\n"
        "pass flags before it loads plug-ins, so --ttt-explain is unknown "
        "there):\n"
        "  mlir-opt --load-dialect-plugin=libTTTPlugin.so "
        "--load-pass-plugin=libTTTPlugin.so \\\n"
        "      --pass-pipeline='builtin.module(ttt-explain)' layer.mlir\n\n"
        "Every upstream dialect, pass and option (mlir-opt's): ttt-opt "
        "--help-list-all\n";
}

int main(int argc, char **argv) {
  ttt::installOneLineCrashHandlers("ttt-opt");
  mlir::registerAllPasses();
  mlir::ttt::registerTTTPipelines();
  mlir::ttt::registerAllTTTPasses();

  // --help shows the project's options; --help-list-all is LLVM's --help.
  std::vector<char *> args(argv, argv + argc);
  static char helpFlag[] = "--help";
  for (char *&arg : args) {
    llvm::StringRef flag(arg);
    if (flag == "--help" || flag == "-help" || flag == "-h") {
      printProjectHelp();
      return 0;
    }
    if (flag == "--help-list-all" || flag == "-help-list-all")
      arg = helpFlag;
  }
  argv = args.data();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::ttt::registerTTTDialects(registry);
  mlir::ttt::onnx::registerONNXImportDialects(registry);

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv,
      "ttt optimizer driver: finds test-time-training layers, rewrites them "
      "into linear attention and lowers them to a parallel chunked scan\n",
      registry);
  // `-o ""` names no file (and would read "error: : ..." below).
  if (outputFilename.empty()) {
    llvm::errs() << "error: -o: empty output file name\n";
    return 1;
  }
  if (inputFilename.empty()) {
    llvm::errs() << "error: empty input file name\n";
    return 1;
  }
  // The input is read once, here: whether it is ONNX may depend on its
  // content, and standard input cannot be read twice.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> read =
      llvm::MemoryBuffer::getFileOrSTDIN(inputFilename, /*IsText=*/false);
  if (!read) {
    llvm::errs() << "error: " << inputFilename
                 << ": cannot read the file: " << read.getError().message()
                 << "\n";
    return 1;
  }
  std::unique_ptr<llvm::MemoryBuffer> input = std::move(*read);
  if (mlir::ttt::isONNXRequested(inputFilename, outputFilename, input.get()))
    return mlir::asMainReturnCode(mlir::ttt::runONNXOptMain(
        argc, argv, inputFilename, outputFilename, registry, std::move(input)));

  // MlirOptMain's own file output writes in place and removes the file on
  // failure (a symbolic link too), and a write error is fatal. Its output
  // is kept in memory instead and written by ttt::writeOutputFile: a
  // regular file atomically, a FIFO or device through, errors as one line.
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
  if (llvm::Expected<ttt::OutputTarget> target =
          ttt::resolveOutputTarget(outputFilename);
      !target) {
    llvm::errs() << "error: " << outputFilename << ": "
                 << llvm::toString(target.takeError()) << "\n";
    return 1;
  }
  std::string output;
  {
    llvm::raw_string_ostream os(output);
    if (mlir::failed(mlir::MlirOptMain(os, std::move(input), registry, config)))
      return 1;
  }
  if (llvm::Error err =
          ttt::writeOutputFile(outputFilename, config.shouldEmitBytecode(),
                               [&](llvm::raw_ostream &os) {
                                 os << output;
                                 return llvm::Error::success();
                               })) {
    llvm::errs() << "error: " << outputFilename << ": "
                 << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  return 0;
}
