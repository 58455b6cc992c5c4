//===- Inputs.h - the arrays ttt-run passes in ------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Inputs come from a .npz/.npy file or from a seeded generator. Either way
// they are checked against the entry signature here, before anything runs:
// compiled code trusts the sizes it is given.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_RUN_INPUTS_H
#define TTT_TOOLS_TTT_RUN_INPUTS_H

#include "ttt/Execution/EntrySignature.h"

#include "ttt/Support/Npy.h"

#include <cstdint>
#include <vector>

namespace ttt::run {

/// An array's element type and shape, before it is allocated.
struct ArrayShape {
  npy::DType dtype;
  llvm::SmallVector<int64_t> shape;
};

/// Checks, before anything is allocated, that the memory the system can
/// still give (ttt::getAvailableMemory) holds each input, and all of them
/// with the fresh copy of the inputs each call gets and the results of
/// static shape. The error is one line, e.g. "SUBJECT: input arg0 (f32
/// 200000x200000, 149 GiB) exceeds the available memory (21.3 GiB)".
llvm::Error checkMemory(llvm::StringRef subject,
                        const EntrySignature &signature,
                        llvm::ArrayRef<ArrayShape> inputs);

/// Checks that each result of static shape of the function in `file` fits
/// in the available memory: "FILE: result 0 (f32 200000x200000, 149 GiB)
/// exceeds the available memory (21.3 GiB)".
llvm::Error checkResultMemory(llvm::StringRef file,
                              const EntrySignature &signature);

/// Reads the arguments of `signature` from `path`, a .npz archive or (for a
/// function of one argument) a .npy file. Arrays named arg0, arg1, ... are
/// matched by name; if no array has such a name, they are matched by their
/// order in the archive. The headers are read and checked first (dtypes,
/// shapes, checkMemory), the data only then.
llvm::Expected<std::vector<npy::Array>>
loadInputs(llvm::StringRef path, const EntrySignature &signature);

struct RandomInputOptions {
  uint64_t seed = 0;
  /// Size of every dynamic dimension not given by `shapes`.
  int64_t dimSize = 8;
  /// The --shapes flag: one shape per argument, comma-separated.
  std::string shapes;
};

/// Makes seeded random arguments for `signature`: floats uniform in [-1, 1),
/// integers uniform in [-10, 10]. Their shapes pass checkMemory first.
llvm::Expected<std::vector<npy::Array>>
makeRandomInputs(const EntrySignature &signature,
                 const RandomInputOptions &options);

} // namespace ttt::run

#endif // TTT_TOOLS_TTT_RUN_INPUTS_H
