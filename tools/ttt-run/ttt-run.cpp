//===- ttt-run.cpp - compile and run a tensor function on the CPU ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ttt-run reads a .mlir file, lowers it with the ttt-to-cpu pipeline (the
// same builder ttt-opt --ttt-to-cpu uses) or, with --device=cuda, the
// ttt-to-gpu pipeline, JIT-compiles the host code and calls one function on
// arrays from a .npz/.npy file or on seeded random arrays. It prints the
// results, writes them to a .npz file, or times repeated calls. On CUDA the
// kernels run through the project's GPU runtime (libttt_cuda_runtime.so),
// which ttt-run loads, and asks for a device, before compiling anything.
//
// Output: results go to stdout, timings and errors to stderr. Every error is
// one line, "ttt-run: error: SUBJECT: REASON", and the exit status is 1.
//
//===----------------------------------------------------------------------===//

#include "DiagnosticCollector.h"
#include "Inputs.h"
#include "ResultPrinter.h"
#include "ttt/Dialect/TTT/Analysis/FormChoice.h"
#include "ttt/Execution/EntrySignature.h"
#include "ttt/Execution/JitFunction.h"
#include "ttt/Execution/RunError.h"
#include "ttt/Execution/StderrCapture.h"

#include "ttt/InitAllDialects.h"
#include "ttt/Pipelines/Pipelines.h"
#include "ttt/Runtime/BlasRuntime.h"
#include "ttt/Runtime/CudaRuntime.h"
#include "ttt/Support/NpyArchive.h"
#include "ttt/Support/OutputFile.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

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
             "print 'ttt-run: median of N runs: X ms' to stderr, then, on "
             "the CPU, which BLAS library and kernels ran. Times cover the "
             "call only, not compilation or copying"),
    cl::init(1), cl::value_desc("n"), cl::cat(runCategory));

static cl::opt<bool> profileGemm(
    "profile-gemm",
    cl::desc("With --repeat on the CPU: also print, for the median run, how "
             "many GEMM calls (ttt_sgemm) it made, the time spent in them "
             "summed over threads, the share of the threads' time that is "
             "(with --openmp, of --num-threads or all cores) and the "
             "GFLOP/s inside them: where a run's time goes"),
    cl::init(false), cl::cat(runCategory));

namespace {
enum class Device { cpu, cuda };
} // namespace

static cl::opt<Device> device(
    "device",
    cl::desc("Where the function runs (default cpu): cpu compiles with "
             "ttt-to-cpu for this machine; cuda compiles with ttt-to-gpu "
             "(kernels for an NVIDIA GPU, host code JIT-compiled) and runs "
             "the kernels through the project's GPU runtime, "
             "libttt_cuda_runtime.so, which needs the CUDA driver "
             "(libcuda.so.1) and a GPU; without them ttt-run stops with "
             "one line before compiling"),
    cl::values(clEnumValN(Device::cpu, "cpu", "the host CPU"),
               clEnumValN(Device::cuda, "cuda", "an NVIDIA GPU (CUDA)")),
    cl::init(Device::cpu), cl::cat(runCategory));

static cl::opt<std::string> gpuOptions(
    "gpu-options",
    cl::desc("With --device=cuda: options of the ttt-to-gpu pipeline, "
             "space-separated, e.g. \"chip=sm_90 precision=bf16 format=isa "
             "tile-x=32 tile-y=8\" (see ttt-opt --help); emulate=true runs "
             "the kernels on the host instead, needing no GPU (a testing aid)"),
    cl::value_desc("options"), cl::cat(runCategory));

static cl::opt<std::string> cudaRuntime(
    "cuda-runtime",
    cl::desc("With --device=cuda: the GPU runtime library to load (default: "
             "libttt_cuda_runtime.so of this build, or ../lib next to "
             "ttt-run); $TTT_CUDA_DRIVER names the CUDA driver it opens "
             "(default libcuda.so.1)"),
    cl::value_desc("lib.so"), cl::cat(runCategory));

static cl::opt<bool> openmp(
    "openmp",
    cl::desc("Run the coarse parallel loops (streams, batches of GEMMs, "
             "blocks of a GEMM outside them) on "
             "OpenMP threads (pipeline option openmp; loads libomp; "
             "OMP_NUM_THREADS applies). Default: on when this machine has "
             "more than one core; results are the same either way"),
    cl::init(mlir::ttt::isOpenMPDefaultOnHost()), cl::cat(runCategory));

static cl::opt<unsigned> numThreads(
    "num-threads",
    cl::desc("With --openmp: threads per parallel region (0: the OpenMP "
             "runtime decides)"),
    cl::init(0), cl::value_desc("n"), cl::cat(runCategory));

static cl::opt<bool> fuseElementwise(
    "fuse-elementwise",
    cl::desc("Fuse chains of elementwise linalg ops before bufferization "
             "(pipeline option fuse-elementwise; default on)"),
    cl::init(true), cl::cat(runCategory));

static cl::opt<bool> vectorizableMath(
    "vectorizable-math",
    cl::desc("Compute f32 exp, expm1 and tanh by polynomials LLVM "
             "vectorizes, within a few ulp of libm (pipeline option "
             "vectorizable-math; default on; false: libm calls)"),
    cl::init(true), cl::cat(runCategory));

static cl::opt<mlir::ttt::LayerForm> layerForm(
    "ttt-form",
    cl::desc("The form each ttt layer runs in (pipeline option form)"),
    cl::init(mlir::ttt::LayerForm::automatic),
    cl::values(clEnumValN(mlir::ttt::LayerForm::automatic, "auto",
                          "per layer, the form a CPU cost model expects to "
                          "be faster on this machine (the default)"),
               clEnumValN(mlir::ttt::LayerForm::parallel, "parallel",
                          "the chunk-parallel linear-attention form wherever "
                          "it is exact"),
               clEnumValN(mlir::ttt::LayerForm::recurrent, "recurrent",
                          "the exact sequential reference")),
    cl::cat(runCategory));

static cl::opt<mlir::ttt::CPUContractions> contractions(
    "contractions",
    cl::desc("How fp32 contractions run (pipeline option contractions)"),
    cl::init(mlir::ttt::CPUContractions::blas),
    cl::values(clEnumValN(mlir::ttt::CPUContractions::blas, "blas",
                          "BLAS GEMM calls (OpenBLAS, or $TTT_BLAS_LIBRARY; "
                          "the generated loops where none loads)"),
               clEnumValN(mlir::ttt::CPUContractions::loops, "loops",
                          "the generated loops only")),
    cl::cat(runCategory));

static cl::opt<bool> runtimeChecks(
    "runtime-checks",
    cl::desc("Compile in run-time checks of op preconditions, such as "
             "agreeing dynamic sizes (pipeline option runtime-verification); "
             "a failing check prints the op and stops"),
    cl::init(false), cl::cat(runCategory));

static cl::opt<unsigned>
    optLevel("opt-level", cl::desc("LLVM optimization level of the JIT, 0-3"),
             cl::init(2), cl::value_desc("0-3"), cl::cat(runCategory));

static cl::list<std::string> sharedLibs(
    "shared-libs",
    cl::desc("More shared libraries for the compiled code to call, "
             "comma-separated (the MLIR runner utilities are always loaded)"),
    cl::CommaSeparated, cl::value_desc("lib.so,..."), cl::cat(runCategory));

static cl::opt<bool> printIR(
    "print-ir",
    cl::desc("Print the module after the pipeline (ttt-to-cpu, or "
             "ttt-to-gpu with --device=cuda: LLVM dialect plus gpu.binary "
             "kernels) to stdout and exit without running it (needs no GPU)"),
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
        "and run it on the CPU, or with ttt-to-gpu on an NVIDIA GPU\n\n"
        "  ttt-run model.mlir --random-inputs=1 --shapes=2x16,16x4\n"
        "  ttt-run model.mlir --inputs=in.npz --outputs=out.npz\n"
        "  ttt-run model.mlir --device=cuda --inputs=in.npz --repeat=5\n",
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

/// The ttt-to-gpu options of --gpu-options (parsed by checkOptions).
static std::unique_ptr<mlir::ttt::TTTToGPUOptions> parsedGPUOptions;

/// --device=cuda with real kernels (not emulated on the host).
static bool usesCudaRuntime() {
  return device == Device::cuda && !parsedGPUOptions->emulate;
}

/// Flags that make no sense together or out of range.
static Error checkOptions() {
  if (device == Device::cuda) {
    for (cl::Option *flag : std::initializer_list<cl::Option *>{
             &openmp, &numThreads, &fuseElementwise, &vectorizableMath,
             &layerForm, &contractions, &runtimeChecks, &profileGemm})
      if (flag->getNumOccurrences())
        return makeRunError("--" + flag->ArgStr,
                            "only applies with --device=cpu");
    std::string messages;
    {
      StderrCapture capture;
      parsedGPUOptions =
          mlir::ttt::TTTToGPUOptions::createFromString(gpuOptions);
      messages = capture.take();
    }
    if (!parsedGPUOptions) {
      SmallVector<StringRef> lines;
      StringRef(messages).split(lines, '\n', -1, /*KeepEmpty=*/false);
      std::string reason;
      for (StringRef line : lines) {
        line = line.trim();
        line.consume_front("ttt-run: ");
        reason += (reason.empty() ? "" : " ") + line.str();
      }
      return makeRunError("--gpu-options",
                          "not valid ttt-to-gpu options" +
                              (reason.empty() ? "" : ": " + reason));
    }
  } else {
    if (gpuOptions.getNumOccurrences())
      return makeRunError("--gpu-options", "only applies with --device=cuda");
    if (cudaRuntime.getNumOccurrences())
      return makeRunError("--cuda-runtime", "only applies with --device=cuda");
  }
  if (profileGemm && !repeat.getNumOccurrences())
    return makeRunError("--profile-gemm", "only applies with --repeat");
  if (!inputsPath.empty() && randomSeed.getNumOccurrences())
    return makeRunError("command line",
                        "--inputs and --random-inputs exclude each other");
  if (!randomSeed.getNumOccurrences()) {
    if (!shapes.empty())
      return makeRunError("--shapes", "only applies with --random-inputs");
    if (dimSize.getNumOccurrences())
      return makeRunError("--dim-size", "only applies with --random-inputs");
  }
  // An empty name is no file (and would read "ttt-run: error: : ...").
  if (inputFilename.empty())
    return makeRunError("command line", "empty input file name");
  for (cl::opt<std::string> *flag :
       {&inputsPath, &saveInputsPath, &outputsPath})
    if (flag->getNumOccurrences() && flag->empty())
      return makeRunError("--" + flag->ArgStr, "empty file name");
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

/// The pipeline that --device selects, for messages.
static StringRef getPipelineName() {
  return device == Device::cuda ? "ttt-to-gpu" : "ttt-to-cpu";
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
    } else if (dialect != "llvm" && dialect != "omp" && op != module &&
               // ttt-to-gpu's kernels and launches, which the LLVM IR
               // translation turns into the blobs and mgpu* calls.
               !(device == Device::cuda &&
                 isa<mlir::gpu::BinaryOp, mlir::gpu::LaunchFuncOp>(op))) {
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
  return diagnostics.takeError(getPipelineName() + " pipeline failed");
}

static Error lower(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  if (device == Device::cuda) {
    mlir::ttt::buildTTTToGPUPipeline(pm, *parsedGPUOptions);
  } else {
    mlir::ttt::TTTToCPUOptions options;
    options.openmp = openmp;
    options.numThreads = numThreads;
    options.fuseElementwise = fuseElementwise;
    options.vectorizableMath = vectorizableMath;
    options.contractions = contractions;
    options.form = layerForm;
    options.runtimeVerification = runtimeChecks;
    mlir::ttt::buildTTTToCPUPipeline(pm, options);
  }
  DiagnosticCollector diagnostics(module.getContext(), getDisplayName());
  if (mlir::failed(pm.run(module)))
    return diagnostics.takeError(getPipelineName() + " pipeline failed");
  return checkLowered(module);
}

//===----------------------------------------------------------------------===//
// The GPU runtime
//===----------------------------------------------------------------------===//

/// The runtime library --device=cuda loads: --cuda-runtime, else the one of
/// this build, else ../lib/ next to the executable (an installed tree).
static std::string getCudaRuntimePath() {
  if (!cudaRuntime.empty())
    return cudaRuntime;
  if (sys::fs::exists(TTT_CUDA_RUNTIME_PATH))
    return TTT_CUDA_RUNTIME_PATH;
  static int anchor;
  std::string exe = sys::fs::getMainExecutable("ttt-run", &anchor);
  SmallString<256> path(sys::path::parent_path(sys::path::parent_path(exe)));
  sys::path::append(path, "lib", sys::path::filename(TTT_CUDA_RUNTIME_PATH));
  return std::string(path);
}

/// How compiled code frees the buffers it returns: free() on the CPU, the
/// runtime's allocator on CUDA.
static void (*freeResultBuffer)(void *) = std::free;

/// "ttt-run: error: FILE: --device=cuda: " for failures inside the runtime,
/// built before any call.
static std::string cudaErrorPrefix;
/// The real stderr: a failure may come while ttt-run captures stderr (the
/// kernels are loaded while the JIT initializes the program).
static int cudaErrorFd = STDERR_FILENO;

[[noreturn]] static void onCudaError(const char *message) {
  std::fflush(stdout);
  std::string line = cudaErrorPrefix + message + "\n";
  ssize_t ignored = ::write(cudaErrorFd, line.data(), line.size());
  (void)ignored;
  ::_exit(1);
}

/// Loads the runtime and asks it for a device; one line when there is none.
/// Returns the device's description.
static Expected<std::string> openCudaDevice() {
  std::string path = getCudaRuntimePath();
  std::string loadError;
  sys::DynamicLibrary library =
      sys::DynamicLibrary::getPermanentLibrary(path.c_str(), &loadError);
  if (!library.isValid())
    return makeRunError("--device=cuda", "cannot load the GPU runtime " + path +
                                             ": " + loadError);
  auto probe = reinterpret_cast<decltype(&tttCudaProbe)>(
      library.getAddressOfSymbol("tttCudaProbe"));
  auto describe = reinterpret_cast<decltype(&tttCudaDescribeDevice)>(
      library.getAddressOfSymbol("tttCudaDescribeDevice"));
  auto setHandler = reinterpret_cast<decltype(&tttCudaSetErrorHandler)>(
      library.getAddressOfSymbol("tttCudaSetErrorHandler"));
  auto freeBuffer = reinterpret_cast<decltype(&_mlir_memref_to_llvm_free)>(
      library.getAddressOfSymbol("_mlir_memref_to_llvm_free"));
  if (!probe || !describe || !setHandler || !freeBuffer)
    return makeRunError("--device=cuda",
                        path + " is not the ttt GPU runtime (it lacks "
                               "tttCudaProbe and friends)");
  char message[1024];
  if (probe(message, sizeof(message)))
    return makeRunError("--device=cuda",
                        "no CUDA driver/GPU found (" + Twine(message) + ")");
  cudaErrorPrefix = "ttt-run: error: " + getDisplayName() + ": --device=cuda: ";
  cudaErrorFd = ::dup(STDERR_FILENO);
  if (cudaErrorFd < 0)
    cudaErrorFd = STDERR_FILENO;
  setHandler(onCudaError);
  freeResultBuffer = freeBuffer;
  describe(message, sizeof(message));
  return std::string(message);
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
  // Emulated kernels with contractions=cublas still call the runtime's
  // ttt_cublas_* (which, without a device, send them to the kernels).
  if (usesCudaRuntime() ||
      (device == Device::cuda &&
       parsedGPUOptions->contractions == mlir::ttt::GPUContractions::cublas))
    libs.push_back(getCudaRuntimePath());
  libs.insert(libs.end(), sharedLibs.begin(), sharedLibs.end());
  return libs;
}

static double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// The threads a run's parallel loops use: --num-threads, else what the
/// OpenMP runtime starts (OMP_NUM_THREADS, else one per core).
static unsigned getRunThreads() {
  if (!openmp)
    return 1;
  if (numThreads)
    return numThreads;
  unsigned fromEnvironment = 0;
  if (const char *env = std::getenv("OMP_NUM_THREADS"))
    if (StringRef(env).split(',').first.trim().getAsInteger(10,
                                                            fromEnvironment))
      fromEnvironment = 0;
  return fromEnvironment ? fromEnvironment : mlir::ttt::getHostCores();
}

/// The GEMM profile of the median run (the lower one of an even count).
static void printGemmProfile(ArrayRef<double> seconds,
                             ArrayRef<ttt::runtime::GemmProfile> profiles) {
  auto indices = llvm::seq<size_t>(0, seconds.size());
  SmallVector<size_t> order(indices.begin(), indices.end());
  llvm::sort(order,
             [&](size_t a, size_t b) { return seconds[a] < seconds[b]; });
  size_t median = order[(order.size() - 1) / 2];
  const ttt::runtime::GemmProfile &profile = profiles[median];
  unsigned threads = getRunThreads();
  double share =
      seconds[median] > 0 ? profile.seconds / (seconds[median] * threads) : 0;
  errs() << "ttt-run: GEMM calls in the median run: " << profile.calls << ", "
         << format("%.6g", profile.flops / 1e9) << " GFLOP, "
         << format("%.3f", profile.seconds * 1e3)
         << " ms in them summed over threads (" << format("%.0f", 100 * share)
         << "% of " << threads << (threads == 1 ? " thread's" : " threads'")
         << " time), "
         << format("%.1f", profile.seconds > 0
                               ? profile.flops / profile.seconds / 1e9
                               : 0.0)
         << " GFLOP/s inside them\n";
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

static Error runTool(int argc, char **argv) {
  if (Error err = parseCommandLine(argc, argv))
    return err;
  if (Error err = checkOptions())
    return err;
  // A machine without a GPU learns it before anything is compiled.
  std::string deviceName;
  if (usesCudaRuntime() && !printIR) {
    Expected<std::string> opened = openCudaDevice();
    if (!opened)
      return opened.takeError();
    deviceName = *opened;
  }

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
  if (Error err = checkResultMemory(getDisplayName(), *signature))
    return err;
  Expected<std::vector<npy::Array>> inputs = getInputs(*signature);
  if (!inputs)
    return inputs.takeError();
  {
    SmallVector<ArrayRef<int64_t>> shapes;
    for (const npy::Array &input : *inputs)
      shapes.push_back(input.getShape());
    if (Error err =
            checkArgumentSizes(**module, *signature, shapes, getDisplayName()))
      return err;
  }
  if (!saveInputsPath.empty())
    if (Error err = saveArrays(saveInputsPath, *inputs, "arg"))
      return err;

  if (Error err = lower(**module))
    return err;
  JitOptions jitOptions;
  jitOptions.optLevel = optLevel;
  jitOptions.sharedLibs = getSharedLibs();
  jitOptions.freeResult = freeResultBuffer;
  auto function =
      JitFunction::create(**module, *signature, jitOptions, getDisplayName());
  if (!function)
    return function.takeError();

  std::vector<npy::Array> results;
  std::vector<double> seconds;
  std::vector<ttt::runtime::GemmProfile> profiles;
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
    if (profileGemm)
      ttt::runtime::startGemmProfile();
    auto output = (*function)->call(arguments, time);
    if (profileGemm)
      profiles.push_back(ttt::runtime::stopGemmProfile());
    if (!output)
      return output.takeError();
    results = std::move(*output);
    seconds.push_back(time);
  }
  if (repeat.getNumOccurrences()) {
    if (!deviceName.empty())
      errs() << "ttt-run: device: " << deviceName << "\n";
    // Three decimals for typical times, more for sub-millisecond ones.
    double ms = median(seconds) * 1e3;
    errs() << "ttt-run: median of " << repeat
           << " runs: " << format(ms >= 1 ? "%.3f" : "%.6f", ms) << " ms\n";
    // Timings depend on the GEMM kernels: say which ran.
    if (!usesCudaRuntime() &&
        contractions == mlir::ttt::CPUContractions::blas) {
      StringRef library = ttt::runtime::getLoadedBlasLibrary();
      StringRef kernels = ttt::runtime::getLoadedBlasKernels();
      errs() << "ttt-run: BLAS: "
             << (library.empty() ? "none (the generated loops)" : library);
      if (!kernels.empty())
        errs() << " (" << kernels << ")";
      errs() << "\n";
    }
    if (!profiles.empty())
      printGemmProfile(seconds, profiles);
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
  ttt::installOneLineCrashHandlers("ttt-run");
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  if (Error err = runTool(argc, argv)) {
    outs().flush();
    errs() << "ttt-run: error: " << toString(std::move(err)) << '\n';
    return 1;
  }
  return 0;
}
