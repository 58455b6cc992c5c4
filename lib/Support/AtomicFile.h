//===- AtomicFile.h - all-or-nothing file output ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_SUPPORT_ATOMICFILE_H
#define TTT_LIB_SUPPORT_ATOMICFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace ttt::npy {

/// Writes `path` with ttt::writeOutputFile (binary): a regular file through a
/// temporary file renamed over it only if `write` returned success and every
/// write succeeded, so a failure (including a full disk or a signal) never
/// leaves a partial file behind; a FIFO or device in place. Unlike
/// llvm::writeToOutput, write errors are returned instead of being fatal.
llvm::Error
writeFileAtomically(llvm::StringRef path,
                    llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write);

} // namespace ttt::npy

#endif // TTT_LIB_SUPPORT_ATOMICFILE_H
