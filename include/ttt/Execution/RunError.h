//===- RunError.h - ttt-run's error values ----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every failure of ttt-run ends as one line, "ttt-run: error: SUBJECT:
// REASON", where the subject is what the user should look at: a file, a
// location in the .mlir file, or a flag.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_RUN_RUNERROR_H
#define TTT_TOOLS_TTT_RUN_RUNERROR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace ttt::run {

/// An error whose message reads "subject: reason".
inline llvm::Error makeRunError(const llvm::Twine &subject,
                                const llvm::Twine &reason) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 subject + ": " + reason);
}

/// "1 argument", "2 arguments": counts in messages.
inline std::string countOf(size_t count, llvm::StringRef noun) {
  return (llvm::Twine(count) + " " + noun + (count == 1 ? "" : "s")).str();
}

} // namespace ttt::run

#endif // TTT_TOOLS_TTT_RUN_RUNERROR_H
