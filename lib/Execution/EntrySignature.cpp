//===- EntrySignature.cpp - the function ttt-run calls --------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Execution/EntrySignature.h"

#include "ttt/Execution/RunError.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace ttt::run {

static std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

static std::optional<npy::DType> getDType(Type type) {
  if (type.isF32())
    return npy::DType::F32;
  if (type.isF64())
    return npy::DType::F64;
  if (type.isSignlessInteger(32))
    return npy::DType::I32;
  if (type.isSignlessInteger(64))
    return npy::DType::I64;
  return std::nullopt;
}

/// Describes `type`, the type of `what` ("argument 0", "result 1").
static llvm::Expected<TensorSpec> describe(Type type, const llvm::Twine &what,
                                           llvm::StringRef function,
                                           llvm::StringRef file) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::optional<npy::DType> dtype;
  if (tensor)
    dtype = getDType(tensor.getElementType());
  if (!dtype)
    return makeRunError(file, "@" + function + ": " + what + " has type " +
                                  typeToString(type) +
                                  "; ttt-run passes only ranked tensors of "
                                  "f32, f64, i32 or i64");
  return TensorSpec{*dtype, llvm::to_vector(tensor.getShape()),
                    typeToString(type)};
}

/// The function to run; see getEntrySignature.
static llvm::Expected<func::FuncOp>
findEntry(ModuleOp module, llvm::StringRef requested, llvm::StringRef file) {
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      candidates.push_back(func);
  auto names = [&] {
    std::string list;
    llvm::raw_string_ostream os(list);
    llvm::interleaveComma(candidates, os,
                          [&](func::FuncOp f) { os << f.getSymName(); });
    return candidates.empty() ? std::string("none") : list;
  };

  if (!requested.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(requested);
    if (!func)
      return makeRunError(file, "no function named '" + requested +
                                    "' (public functions: " + names() + ")");
    if (func.isExternal())
      return makeRunError(file,
                          "function '" + requested + "' is only a declaration");
    if (!func.isPublic())
      return makeRunError(file, "function '" + requested +
                                    "' is private; ttt-run calls public "
                                    "functions only");
    return func;
  }
  if (candidates.size() == 1)
    return candidates.front();
  for (func::FuncOp func : candidates)
    if (func.getSymName() == "main")
      return func;
  if (candidates.empty())
    return makeRunError(file, "no public function with a body to run");
  return makeRunError(file, "several public functions (" + names() +
                                ") and none is 'main'; choose one with "
                                "--entry=NAME");
}

llvm::Expected<EntrySignature> getEntrySignature(ModuleOp module,
                                                 llvm::StringRef requested,
                                                 llvm::StringRef file) {
  llvm::Expected<func::FuncOp> func = findEntry(module, requested, file);
  if (!func)
    return func.takeError();
  EntrySignature signature;
  signature.name = func->getSymName().str();
  FunctionType type = func->getFunctionType();
  for (auto [i, input] : llvm::enumerate(type.getInputs())) {
    auto spec =
        describe(input, "argument " + llvm::Twine(i), signature.name, file);
    if (!spec)
      return spec.takeError();
    signature.arguments.push_back(std::move(*spec));
  }
  for (auto [i, result] : llvm::enumerate(type.getResults())) {
    auto spec =
        describe(result, "result " + llvm::Twine(i), signature.name, file);
    if (!spec)
      return spec.takeError();
    signature.results.push_back(std::move(*spec));
  }
  return std::move(signature);
}

/// The first size mismatch the verifier of `op` finds once its operands that
/// are arguments of `entry` get the static types of `shapes`, if any.
static std::optional<std::string>
findSizeMismatch(mlir::Operation *op, mlir::Block &entry,
                 llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes) {
  bool refined = false;
  llvm::SmallVector<mlir::Type> types;
  for (mlir::Value operand : op->getOperands()) {
    mlir::Type type = operand.getType();
    auto arg = llvm::dyn_cast<mlir::BlockArgument>(operand);
    auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (arg && arg.getOwner() == &entry && tensor && !tensor.hasStaticShape() &&
        arg.getArgNumber() < shapes.size() &&
        static_cast<int64_t>(shapes[arg.getArgNumber()].size()) ==
            tensor.getRank()) {
      type = tensor.clone(shapes[arg.getArgNumber()]);
      refined = true;
    }
    types.push_back(type);
  }
  if (!refined)
    return std::nullopt;
  // A detached copy of the op over placeholder arguments of those types.
  mlir::MLIRContext *context = op->getContext();
  auto block = std::make_unique<mlir::Block>();
  mlir::IRMapping mapping;
  for (auto [operand, type] : llvm::zip(op->getOperands(), types))
    mapping.map(operand, block->addArgument(type, op->getLoc()));
  mlir::OpBuilder builder(context);
  builder.setInsertionPointToEnd(block.get());
  builder.clone(*op, mapping);
  std::optional<std::string> mismatch;
  {
    // Only the size checks count: traits that want operand and result types
    // equal would object to the refined operands alone.
    mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic &d) {
      std::string text = d.str();
      if (!mismatch && d.getSeverity() == mlir::DiagnosticSeverity::Error &&
          llvm::StringRef(text).contains("dimension") &&
          llvm::StringRef(text).contains(" must be "))
        mismatch = text;
      return mlir::success();
    });
    (void)mlir::verify(&block->front(), /*verifyRecursively=*/false);
  }
  return mismatch;
}

llvm::Error checkArgumentSizes(mlir::ModuleOp module,
                               const EntrySignature &signature,
                               llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
                               llvm::StringRef file) {
  auto function = module.lookupSymbol<mlir::func::FuncOp>(signature.name);
  if (!function || function.isExternal())
    return llvm::Error::success();
  mlir::Block &entry = function.getBody().front();
  std::optional<std::string> mismatch;
  function.walk([&](mlir::Operation *op) {
    llvm::StringRef dialect = op->getName().getDialectNamespace();
    if (dialect != "ttt" && dialect != "linattn")
      return mlir::WalkResult::advance();
    mismatch = findSizeMismatch(op, entry, shapes);
    return mismatch ? mlir::WalkResult::interrupt()
                    : mlir::WalkResult::advance();
  });
  if (!mismatch)
    return llvm::Error::success();
  std::string sizes;
  for (auto [i, shape] : llvm::enumerate(shapes)) {
    sizes += (i ? ", " : "") + std::string("arg") + std::to_string(i) + " ";
    for (auto [j, size] : llvm::enumerate(shape))
      sizes += (j ? "x" : "") + std::to_string(size);
  }
  return makeRunError(file, "@" + signature.name +
                                ": the inputs' sizes disagree: " + *mismatch +
                                " (inputs: " + sizes + ")");
}

} // namespace ttt::run
