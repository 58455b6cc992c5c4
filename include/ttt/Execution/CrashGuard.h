//===- CrashGuard.h - crashes in compiled code as errors --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Compiled code trusts its inputs: dynamic sizes that disagree (say, the inner
// dimensions of a matmul) make it read out of bounds, and a failed
// --runtime-checks assertion aborts. While a CrashGuard lives, such fatal
// signals jump back to the guarded call (getRecoveryPoint), which returns a
// one-line error instead of a crash dump; the process goes on (the Python
// package runs compiled code inside the interpreter).
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_RUN_CRASHGUARD_H
#define TTT_TOOLS_TTT_RUN_CRASHGUARD_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <csetjmp>
#include <csignal>
#include <string>

namespace ttt::run {

class CrashGuard {
public:
  /// Reports crashes as errors of function `function` in `file`.
  CrashGuard(llvm::StringRef file, llvm::StringRef function);
  ~CrashGuard();
  CrashGuard(const CrashGuard &) = delete;
  CrashGuard &operator=(const CrashGuard &) = delete;

  /// Where a crash jumps back to (sigsetjmp in the caller's frame, which
  /// must outlive the guarded call), so that the process survives it: the
  /// Python package runs compiled code inside the interpreter.
  sigjmp_buf &getRecoveryPoint();
  /// The one-line report of the crash jumped back from.
  static std::string getCrashMessage(int signal);

private:
  static constexpr int kNumSignals = 5;
  struct sigaction previous[kNumSignals];
};

} // namespace ttt::run

#endif // TTT_TOOLS_TTT_RUN_CRASHGUARD_H
