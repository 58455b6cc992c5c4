//===- ttt-run.cpp - compile and run a tensor function on the CPU ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ttt-run reads a .mlir file, lowers it with the ttt-to-cpu pipeline (the
// same builder ttt-opt --ttt-to-cpu uses), JIT-compiles it and calls one
// function on arrays from a .npz/.npy file or on seeded random arrays. It
// prints the results, writes them to a .npz file, or times repeated calls.
//
// Output: results go to stdout, timings and errors to stderr. Every error is
// one line, "ttt-run: error: SUBJECT: REASON", and the exit status is 1.
//
//===----------------------------------------------------------------------===//

#include "DiagnosticCollector.h"
#include "EntrySignature.h"
#include "Inputs.h"
#include "JitFunction.h"
#include "ResultPrinter.h"
#include "RunError.h"
#include "StderrCapture.h"

#include "ttt/InitAllDialects.h"
#include "ttt/Pipelines/Pipelines.h"
#include "ttt/Support/NpyArchive.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;
using namespace ttt;
using namespace ttt::run;

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

static cl::OptionCategory runCategory("ttt-run options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir file>"),
                                          cl::init("-"), cl::cat(runCategory));

static cl::opt<std::string> entryName(
    "entry",
    cl::desc("Function to run (default: the only public function, else "
             "'main')"),
    cl::value_desc("name"), cl::cat(runCategory));

static cl::opt<std::string> inputsPath(
    "inputs",
    cl::desc("Read the arguments from a .npz file (np.savez or "
             "np.savez_compressed) or, for a function of one argument, a .npy "
             "file. Arrays named arg0, arg1, ... are matched to the arguments "
             "by name; if no array has such a name, by their order in the "
             "file. Dtypes must match exactly (float32, float64, int32, "
             "int64) and shapes must fit the static sizes of the signature"),
    cl::value_desc("file"), cl::cat(runCategory));

static cl::opt<unsigned long long> randomSeed(
    "random-inputs",
    cl::desc("Run on random arguments from this seed instead of --inputs: "
             "floats uniform in [-1, 1), integers uniform in [-10, 10], from "
             "a 64-bit Mersenne Twister (same seed, same arrays)"),
    cl::value_desc("seed"), cl::cat(runCategory));

static cl::opt<int64_t> dimSize(
    "dim-size",
    cl::desc("With --random-inputs: size of every dynamic dimension that "
             "--shapes does not set"),
    cl::init(8), cl::value_desc("n"), cl::cat(runCategory));

static cl::opt<std::string> shapes(
    "shapes",
    cl::desc("With --random-inputs: the shape of each argument, "
             "comma-separated, sizes joined by 'x', e.g. "
             "\"2x4x100x16,2x4x100x16\". A '?' size takes --dim-size; a '*' "
             "entry keeps an argument's default shape. Static sizes must "
             "match the signature"),
    cl::value_desc("shape,..."), cl::cat(runCategory));

static cl::opt<std::string> saveInputsPath(
    "save-inputs",
    cl::desc("Write the arguments used (e.g. the random ones) to a .npz file "
             "as arg0, arg1, ..., before running"),
    cl::value_desc("file.npz"), cl::cat(runCategory));

static cl::opt<std::string> outputsPath(
    "outputs",
    cl::desc("Write the results to an uncompressed .npz file as result0, "
             "result1, ... (or a .npy file for a single result); the file "
             "appears only once complete"),
    cl::value_desc("file.npz"), cl::cat(runCategory));

static cl::opt<bool> printResults(
    "print-results",
    cl::desc("Print the results to stdout, one line each (default on; "
             "--print-results=false to turn off)"),
    cl::init(true), cl::cat(runCategory));

static cl::opt<int64_t> printLimit(
    "print-limit",
    cl::desc("Print results of at most this many elements in full; larger "
             "ones as min/max/mean"),
    cl::init(100), cl::value_desc("n"), cl::cat(runCategory));

static cl::opt<unsigned> repeat(
    "repeat",
    cl::desc("Call the function N times (on fresh copies of the inputs) and "
             "print 'ttt-run: median of N runs: X ms' to stderr. Times cover "
             "the call only, not compilation or copying"),
    cl::init(1), cl::value_desc("n"), cl::cat(runCategory));

static cl::opt<bool> openmp(
    "openmp",
    cl::desc("Run parallel loops on OpenMP threads (pipeline option openmp; "
             "loads libomp; OMP_NUM_THREADS applies)"),
    cl::init(false), cl::cat(runCategory));

static cl::opt<unsigned> numThreads(
    "num-threads",
    cl::desc("With --openmp: threads per parallel region (0: the OpenMP "
             "runtime decides)"),
    cl::init(0), cl::value_desc("n"), cl::cat(runCategory));

static cl::opt<bool> fuseElementwise(
    "fuse-elementwise",
    cl::desc("Fuse chains of elementwise linalg ops before bufferization "
             "(pipeline option fuse-elementwise)"),
    cl::init(false), cl::cat(runCategory));

static cl::opt<bool> runtimeChecks(
    "runtime-checks",
    cl::desc("Compile in run-time checks of op preconditions, such as "
             "agreeing dynamic sizes (pipeline option runtime-verification); "
             "a failing check prints the op and stops"),
    cl::init(false), cl::cat(runCategory));

static cl::opt<unsigned> optLevel(
    "opt-level",
    cl::desc("LLVM optimization level of the JIT, 0-3"), cl::init(2),
    cl::value_desc("0-3"), cl::cat(runCategory));

static cl::list<std::string> sharedLibs(
    "shared-libs",
    cl::desc("More shared libraries for the compiled code to call, "
             "comma-separated (the MLIR runner utilities are always loaded)"),
    cl::CommaSeparated, cl::value_desc("lib.so,..."), cl::cat(runCategory));

static cl::opt<bool> printIR(
    "print-ir",
    cl::desc("Print the module after the ttt-to-cpu pipeline (LLVM dialect) "
             "to stdout and exit without running it"),
    cl::init(false), cl::cat(runCategory));

/// Parses the command line into the options above. Errors come back as one
/// line, instead of cl's own multi-line report and exit.
static Error parseCommandLine(int argc, char **argv) {
  cl::HideUnrelatedOptions(runCategory);
  std::string messages;
  bool parsed;
  {
    // cl reports some errors (bad option values) straight to stderr rather
    // than to the stream it is given, so catch those too.
    StderrCapture capture;
    raw_string_ostream os(messages);
    parsed = cl::ParseCommandLineOptions(
        argc, argv,
        "ttt-run: compile a tensor function with the ttt-to-cpu pipeline "
        "and run it on the CPU\n\n"
        "  ttt-run model.mlir --random-inputs=1 --shapes=2x16,16x4\n"
        "  ttt-run model.mlir --inputs=in.npz --outputs=out.npz\n",
        &os);
    messages = capture.take() + messages;
  }
  if (parsed)
    return Error::success();
  SmallVector<StringRef> lines;
  StringRef(messages).split(lines, '\n', -1, /*KeepEmpty=*/false);
  std::string joined;
  for (StringRef line : lines) {
    line.consume_front(sys::path::filename(argv[0]));
    line = line.ltrim(": ").rtrim();
    joined += (joined.empty() ? "" : " ") + line.str();
  }
  return makeRunError("command line", joined);
}

/// Flags that make no sense together or out of range.
static Error checkOptions() {
  if (!inputsPath.empty() && randomSeed.getNumOccurrences())
    return makeRunError("command line",
                        "--inputs and --random-inputs exclude each other");
  if (!randomSeed.getNumOccurrences()) {
    if (!shapes.empty())
      return makeRunError("--shapes", "only applies with --random-inputs");
    if (dimSize.getNumOccurrences())
      return makeRunError("--dim-size", "only applies with --random-inputs");
  }
  if (optLevel > 3)
    return makeRunError("--opt-level", "must be 0-3, got " + Twine(optLevel));
  if (repeat < 1)
    return makeRunError("--repeat", "must be at least 1");
  if (printLimit < 0)
    return makeRunError("--print-limit", "must be >= 0");
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

/// The file's name in messages: as given, or <stdin>.
static std::string getDisplayName() {
  return inputFilename == "-" ? "<stdin>" : inputFilename.getValue();
}

static Expected<mlir::OwningOpRef<mlir::ModuleOp>>
parseInput(mlir::MLIRContext &context, SourceMgr &sourceMgr) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFileOrSTDIN(inputFilename);
  if (!buffer)
    return makeRunError(getDisplayName(),
                        "cannot read: " + buffer.getError().message());
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  DiagnosticCollector diagnostics(&context, getDisplayName());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return diagnostics.takeError("cannot parse");
  return std::move(module);
}

/// Finds what the pipeline left outside the LLVM dialect: partial
/// conversions succeed even when some op had no lowering, and translation to
/// LLVM IR would only report a leftover cast. Reports the op itself.
static Error checkLowered(mlir::ModuleOp module) {
  mlir::Operation *leftover = nullptr, *cast = nullptr;
  module.walk([&](mlir::Operation *op) {
    llvm::StringRef dialect = op->getName().getDialectNamespace();
    if (isa<mlir::UnrealizedConversionCastOp>(op)) {
      if (!cast)
        cast = op;
    } else if (dialect != "llvm" && dialect != "omp" && op != module) {
      leftover = op;
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  if (!leftover)
    leftover = cast;
  if (!leftover)
    return Error::success();
  DiagnosticCollector diagnostics(module.getContext(), getDisplayName());
  leftover->emitError() << "'" << leftover->getName()
                        << "' has no lowering to the LLVM dialect";
  return diagnostics.takeError("ttt-to-cpu pipeline failed");
}

static Error lower(mlir::ModuleOp module) {
  mlir::ttt::TTTToCPUOptions options;
  options.openmp = openmp;
  options.numThreads = numThreads;
  options.fuseElementwise = fuseElementwise;
  options.runtimeVerification = runtimeChecks;
  mlir::PassManager pm(module.getContext());
  mlir::ttt::buildTTTToCPUPipeline(pm, options);
  DiagnosticCollector diagnostics(module.getContext(), getDisplayName());
  if (mlir::failed(pm.run(module)))
    return diagnostics.takeError("ttt-to-cpu pipeline failed");
  return checkLowered(module);
}

static Expected<std::vector<npy::Array>>
getInputs(const EntrySignature &signature) {
  if (!inputsPath.empty())
    return loadInputs(inputsPath, signature);
  if (randomSeed.getNumOccurrences()) {
    RandomInputOptions options;
    options.seed = randomSeed;
    options.dimSize = dimSize;
    options.shapes = shapes;
    return makeRandomInputs(signature, options);
  }
  if (!signature.arguments.empty())
    return makeRunError(getDisplayName(),
                        "@" + signature.name + " takes " +
                            countOf(signature.arguments.size(), "argument") +
                            "; pass --inputs=FILE.npz or "
                            "--random-inputs=SEED");
  return std::vector<npy::Array>();
}

/// Writes `arrays` as PREFIX0, PREFIX1, ... to `path`: .npy if the name says
/// so (one array only), else .npz.
static Error saveArrays(StringRef path, ArrayRef<npy::Array> arrays,
                        StringRef prefix) {
  Error error = Error::success();
  if (path.ends_with(".npy")) {
    if (arrays.size() != 1)
      return makeRunError(path, "a .npy file holds one array, but there are " +
                                    Twine(arrays.size()) + "; use .npz");
    error = npy::writeNpyFile(path, arrays.front());
  } else {
    std::vector<std::string> names;
    std::vector<npy::NamedArrayRef> named;
    for (size_t i = 0; i < arrays.size(); ++i)
      names.push_back((prefix + Twine(i)).str());
    for (size_t i = 0; i < arrays.size(); ++i)
      named.push_back({names[i], &arrays[i]});
    error = npy::writeNpzFile(path, named);
  }
  if (error)
    return makeRunError(path, toString(std::move(error)));
  return Error::success();
}

/// The libraries the compiled code may call into.
static std::vector<std::string> getSharedLibs() {
  // Installed next to libMLIR.so; TTT_LLVM_LIBRARY_DIR is set by CMake.
  std::vector<std::string> libs = {
      TTT_LLVM_LIBRARY_DIR "/libmlir_c_runner_utils.so",
      TTT_LLVM_LIBRARY_DIR "/libmlir_runner_utils.so"};
  if (openmp)
    libs.push_back(TTT_LLVM_LIBRARY_DIR "/libomp.so");
  libs.insert(libs.end(), sharedLibs.begin(), sharedLibs.end());
  return libs;
}

static double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

static Error runTool(int argc, char **argv) {
  if (Error err = parseCommandLine(argc, argv))
    return err;
  if (Error err = checkOptions())
    return err;

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::ttt::registerTTTDialects(registry);
  mlir::MLIRContext context(registry);

  SourceMgr sourceMgr;
  auto module = parseInput(context, sourceMgr);
  if (!module)
    return module.takeError();
  Expected<EntrySignature> signature =
      getEntrySignature(**module, entryName, getDisplayName());
  if (!signature)
    return signature.takeError();

  if (printIR) {
    if (Error err = lower(**module))
      return err;
    (*module)->print(outs());
    outs() << '\n';
    return Error::success();
  }

  // Inputs first: checking them is quick, compiling is not.
  Expected<std::vector<npy::Array>> inputs = getInputs(*signature);
  if (!inputs)
    return inputs.takeError();
  if (!saveInputsPath.empty())
    if (Error err = saveArrays(saveInputsPath, *inputs, "arg"))
      return err;

  if (Error err = lower(**module))
    return err;
  JitOptions jitOptions;
  jitOptions.optLevel = optLevel;
  jitOptions.sharedLibs = getSharedLibs();
  auto function =
      JitFunction::create(**module, *signature, jitOptions, getDisplayName());
  if (!function)
    return function.takeError();

  std::vector<npy::Array> results;
  std::vector<double> seconds;
  for (unsigned i = 0; i < repeat; ++i) {
    // Functions may update their arguments in place, so every call gets
    // fresh copies.
    std::vector<npy::Array> arguments;
    for (const npy::Array &input : *inputs) {
      Expected<npy::Array> copy = input.clone();
      if (!copy)
        return makeRunError("inputs", toString(copy.takeError()));
      arguments.push_back(std::move(*copy));
    }
    double time = 0;
    auto output = (*function)->call(arguments, time);
    if (!output)
      return output.takeError();
    results = std::move(*output);
    seconds.push_back(time);
  }
  if (repeat.getNumOccurrences()) {
    // Three decimals for typical times, more for sub-millisecond ones.
    double ms = median(seconds) * 1e3;
    errs() << "ttt-run: median of " << repeat
           << " runs: " << format(ms >= 1 ? "%.3f" : "%.6f", ms) << " ms\n";
  }

  if (!outputsPath.empty())
    if (Error err = saveArrays(outputsPath, results, "result"))
      return err;
  if (printResults)
    for (auto [i, result] : enumerate(results))
      printArray(outs(), "result" + std::to_string(i), result, printLimit);
  return Error::success();
}

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  if (Error err = runTool(argc, argv)) {
    outs().flush();
    errs() << "ttt-run: error: " << toString(std::move(err)) << '\n';
    return 1;
  }
  return 0;
}
