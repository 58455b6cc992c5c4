//===- CrashGuard.cpp - one-line reports of crashes in compiled code ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Execution/CrashGuard.h"

#include <cstdio>
#include <cstring>

namespace ttt::run {

static const int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static_assert(sizeof(kSignals) / sizeof(kSignals[0]) == 5,
              "CrashGuard::kNumSignals is out of date");

/// The report's beginning, "ttt-run: error: FILE: @NAME ", built before the
/// call because a signal handler may not allocate.
static std::string reportPrefix;

static const char *describe(int signal) {
  switch (signal) {
  case SIGSEGV:
  case SIGBUS:
    return "made an invalid memory access";
  case SIGFPE:
    return "raised an arithmetic exception (integer division by zero?)";
  case SIGILL:
    return "executed an illegal instruction";
  case SIGABRT:
    return "aborted (a --runtime-checks check failed?)";
  default:
    return "crashed";
  }
}

static sigjmp_buf recoveryPoint;

/// Only async-signal-safe calls here, except for SIGABRT: that one comes
/// from abort() called by the compiled code itself after a failed check has
/// put() its message, which sits in stdout's buffer. The guarded call
/// reports the crash as an error, so that a process embedding the JIT (the
/// Python package) survives it.
static void onFatalSignal(int signal) {
  if (signal == SIGABRT)
    std::fflush(stdout);
  siglongjmp(recoveryPoint, signal);
}

CrashGuard::CrashGuard(llvm::StringRef file, llvm::StringRef function) {
  reportPrefix =
      ("ttt-run: error: " + llvm::Twine(file) + ": @" + function + " ").str();
  struct sigaction action = {};
  action.sa_handler = onFatalSignal;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < kNumSignals; ++i)
    sigaction(kSignals[i], &action, &previous[i]);
}

sigjmp_buf &CrashGuard::getRecoveryPoint() { return recoveryPoint; }

std::string CrashGuard::getCrashMessage(int signal) {
  std::string message = reportPrefix;
  message.erase(0, std::strlen("ttt-run: error: "));
  message += describe(signal);
  if (signal == SIGSEGV || signal == SIGBUS)
    message += "; do the inputs' dynamic sizes agree? --runtime-checks can "
               "tell";
  return message;
}

CrashGuard::~CrashGuard() {
  for (int i = 0; i < kNumSignals; ++i)
    sigaction(kSignals[i], &previous[i], nullptr);
}

} // namespace ttt::run
