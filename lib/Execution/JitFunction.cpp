//===- JitFunction.cpp - calling the compiled entry function --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Execution/JitFunction.h"

#include "ttt/Execution/CrashGuard.h"
#include "ttt/Execution/RunError.h"
#include "ttt/Execution/StderrCapture.h"
#include "ttt/Runtime/BlasRuntime.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace llvm;

namespace ttt::run {

namespace {
/// A memref descriptor as func-to-llvm lays it out for rank `rank`:
/// { ptr allocated, ptr aligned, i64 offset, [rank x i64] sizes,
///   [rank x i64] strides }. Every field is 8 bytes, so descriptors (and a
/// struct of several) are plain arrays of 8-byte words.
size_t getDescriptorWords(int64_t rank) { return 3 + 2 * rank; }

/// Reads result descriptors out of the word array the wrapper filled.
struct DescriptorView {
  const int64_t *words;
  int64_t rank;

  void *getAllocated() const { return getPointer(0); }
  char *getAligned() const { return static_cast<char *>(getPointer(1)); }
  int64_t getOffset() const { return words[2]; }
  ArrayRef<int64_t> getSizes() const { return {words + 3, size_t(rank)}; }
  ArrayRef<int64_t> getStrides() const {
    return {words + 3 + rank, size_t(rank)};
  }

private:
  void *getPointer(int index) const {
    void *pointer;
    std::memcpy(&pointer, &words[index], sizeof(pointer));
    return pointer;
  }
};
} // namespace

/// Copies the strided memref `view` into the dense `array` (results are
/// normally contiguous already, but strides are what the code reports).
static void copyToDense(const DescriptorView &view, npy::Array &array) {
  size_t elementSize = npy::getElementSize(array.getDType());
  int64_t count = array.getNumElements();
  if (count == 0)
    return;
  const char *base = view.getAligned() + view.getOffset() * elementSize;
  ArrayRef<int64_t> sizes = view.getSizes(), strides = view.getStrides();

  bool contiguous = true;
  for (int64_t d = view.rank - 1, expected = 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected)
      contiguous = false;
    expected *= sizes[d];
  }
  if (contiguous) {
    std::memcpy(array.getData(), base, count * elementSize);
    return;
  }
  SmallVector<int64_t> index(view.rank, 0);
  char *out = array.getData();
  for (int64_t i = 0; i < count; ++i) {
    int64_t element = 0;
    for (int64_t d = 0; d < view.rank; ++d)
      element += index[d] * strides[d];
    std::memcpy(out + i * elementSize, base + element * elementSize,
                elementSize);
    for (int64_t d = view.rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
}

Expected<std::unique_ptr<JitFunction>>
JitFunction::create(mlir::ModuleOp lowered, const EntrySignature &signature,
                    const JitOptions &options, StringRef file) {
  for (const std::string &lib : options.sharedLibs)
    if (!sys::fs::exists(lib))
      return makeRunError(lib, "shared library not found");

  // The host's CPU and features, so the optimizer can vectorize for it.
  Expected<orc::JITTargetMachineBuilder> builder =
      orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return makeRunError(file, "cannot target the host: " +
                                  toString(builder.takeError()));
  Expected<std::unique_ptr<TargetMachine>> machine =
      builder->createTargetMachine();
  if (!machine)
    return makeRunError(file, "cannot target the host: " +
                                  toString(machine.takeError()));

  auto transformer = mlir::makeOptimizingTransformer(
      options.optLevel, /*sizeLevel=*/0, machine->get());
  SmallVector<StringRef> libs(options.sharedLibs.begin(),
                              options.sharedLibs.end());
  mlir::ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel =
      static_cast<CodeGenOptLevel>(options.optLevel);
  engineOptions.sharedLibPaths = libs;

  // ORC prints some failures (such as unresolved symbols) to stderr itself
  // before returning a vaguer error; fold that text into the one-line report.
  StderrCapture capture;
  Expected<std::unique_ptr<mlir::ExecutionEngine>> engine =
      mlir::ExecutionEngine::create(lowered, engineOptions,
                                    std::move(*machine));
  Expected<void (*)(void **)> packed = nullptr;
  if (engine) {
    (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
      llvm::orc::SymbolMap symbols;
      unsigned count = 0;
      const ::ttt::runtime::RuntimeSymbol *runtime =
          ::ttt::runtime::getCPURuntimeSymbols(count);
      for (unsigned i = 0; i < count; ++i)
        symbols[interner(runtime[i].name)] = {
            llvm::orc::ExecutorAddr::fromPtr(runtime[i].address),
            llvm::JITSymbolFlags::Exported};
      return symbols;
    });
    (*engine)->initialize();
    packed = (*engine)->lookupPacked(signature.name);
  }
  std::string printed = capture.take();
  Error error = !engine ? engine.takeError()
                        : (!packed ? packed.takeError() : Error::success());
  if (error) {
    SmallVector<StringRef> lines;
    StringRef(printed).split(lines, '\n', -1, /*KeepEmpty=*/false);
    std::string reason;
    for (StringRef line : lines) {
      line.consume_front("JIT session error: ");
      reason += line.trim().str() + "; ";
    }
    return makeRunError(file, "JIT compilation failed: " + reason +
                                  toString(std::move(error)));
  }
  errs() << printed;

  std::unique_ptr<JitFunction> function(new JitFunction());
  function->engine = std::move(*engine);
  function->packed = *packed;
  function->freeResult = options.freeResult ? options.freeResult : std::free;
  function->signature = signature;
  function->file = file.str();
  return std::move(function);
}

Expected<std::vector<npy::Array>>
JitFunction::call(std::vector<npy::Array> &inputs, double &seconds) {
  assert(inputs.size() == signature.arguments.size() && "unchecked inputs");

  // One word per descriptor field; `args` points at each word.
  std::vector<int64_t> argWords;
  for (const npy::Array &input : inputs)
    argWords.resize(argWords.size() + getDescriptorWords(input.getRank()));
  SmallVector<void *> args;
  size_t pos = 0;
  for (npy::Array &input : inputs) {
    void *data = input.getData();
    std::memcpy(&argWords[pos], &data, sizeof(data));
    std::memcpy(&argWords[pos + 1], &data, sizeof(data));
    argWords[pos + 2] = 0;
    ArrayRef<int64_t> shape = input.getShape();
    int64_t rank = input.getRank(), stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      argWords[pos + 3 + d] = shape[d];
      argWords[pos + 3 + rank + d] = stride;
      stride *= shape[d];
    }
    for (size_t i = 0, e = getDescriptorWords(rank); i < e; ++i)
      args.push_back(&argWords[pos + i]);
    pos += getDescriptorWords(rank);
  }

  size_t resultWordCount = 0;
  for (const TensorSpec &result : signature.results)
    resultWordCount += getDescriptorWords(result.getRank());
  std::vector<int64_t> resultWords(resultWordCount, 0);
  if (resultWordCount)
    args.push_back(resultWords.data());

  {
    CrashGuard guard(file, signature.name);
    auto start = std::chrono::steady_clock::now();
    if (int signal = sigsetjmp(guard.getRecoveryPoint(), /*savemask=*/1)) {
      std::fflush(stdout);
      return createStringError(inconvertibleErrorCode(),
                               CrashGuard::getCrashMessage(signal));
    }
    packed(args.data());
    auto stop = std::chrono::steady_clock::now();
    seconds = std::chrono::duration<double>(stop - start).count();
  }
  // Output of the code itself (vector.print, failed checks) goes through C
  // stdio; flush it so it comes before ttt-run's own output.
  std::fflush(stdout);

  // Copy the results out, then free their buffers: ttt-to-cpu makes every
  // returned buffer a fresh malloc owned by the caller (ttt-to-gpu: a buffer
  // of the GPU runtime's allocator), though two results may share one.
  // Argument buffers are never freed here.
  std::vector<npy::Array> results;
  Error error = Error::success();
  DenseSet<void *> freed;
  for (const npy::Array &input : inputs)
    freed.insert(const_cast<char *>(input.getData()));
  pos = 0;
  for (auto [i, spec] : enumerate(signature.results)) {
    DescriptorView view{&resultWords[pos], spec.getRank()};
    pos += getDescriptorWords(spec.getRank());
    if (!error) {
      Expected<npy::Array> array =
          npy::Array::create(spec.dtype, view.getSizes());
      if (array) {
        copyToDense(view, *array);
        results.push_back(std::move(*array));
      } else {
        error = makeRunError(file, "result " + Twine(i) + ": " +
                                       toString(array.takeError()));
      }
    }
    if (freed.insert(view.getAllocated()).second)
      freeResult(view.getAllocated());
  }
  if (error)
    return std::move(error);
  return std::move(results);
}

} // namespace ttt::run
