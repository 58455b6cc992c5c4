//===- EntrySignature.h - the function ttt-run calls ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Picks the entry function of a module and describes its tensor arguments and
// results, read from the tensor-level signature before lowering (afterwards
// only memref descriptors are left).
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_RUN_ENTRYSIGNATURE_H
#define TTT_TOOLS_TTT_RUN_ENTRYSIGNATURE_H

#include "ttt/Support/Npy.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ttt::run {

/// One ranked tensor of the signature.
struct TensorSpec {
  npy::DType dtype;
  /// Sizes, with mlir::ShapedType::kDynamic for '?'.
  llvm::SmallVector<int64_t> shape;
  /// The MLIR type, for messages: "tensor<?x4xf32>".
  std::string type;

  int64_t getRank() const { return static_cast<int64_t>(shape.size()); }
};

struct EntrySignature {
  std::string name;
  std::vector<TensorSpec> arguments;
  std::vector<TensorSpec> results;
};

/// Finds the function to run in `module` (read from `file`): the one named
/// `requested`, or else the only public function, or else `main`. Describes
/// it, checking that it takes and returns only ranked tensors of supported
/// element types.
llvm::Expected<EntrySignature> getEntrySignature(mlir::ModuleOp module,
                                                 llvm::StringRef requested,
                                                 llvm::StringRef file);

/// Checks, before anything is compiled, that the sizes `shapes` of the
/// arguments agree where the ttt and linattn ops of the entry function need
/// them to (queries and keys of one sequence length, one batch, ...): each
/// such op taking arguments directly is verified again as if those
/// arguments had their actual static types. Sizes that disagree would make
/// the compiled code read out of bounds or return wrong results.
llvm::Error checkArgumentSizes(mlir::ModuleOp module,
                               const EntrySignature &signature,
                               llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
                               llvm::StringRef file);

} // namespace ttt::run

#endif // TTT_TOOLS_TTT_RUN_ENTRYSIGNATURE_H
