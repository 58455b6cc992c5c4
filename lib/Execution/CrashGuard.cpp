//===- CrashGuard.cpp - one-line reports of crashes in compiled code ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Execution/CrashGuard.h"

#include <cstdio>
#include <cstring>
#include <unistd.h>

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

static void write(const char *text) {
  size_t length = std::strlen(text);
  while (length) {
    ssize_t written = ::write(STDERR_FILENO, text, length);
    if (written <= 0)
      return;
    text += written;
    length -= written;
  }
}

/// Only async-signal-safe calls here (write and _exit), except for SIGABRT:
/// that one comes from abort() called by the compiled code itself after a
/// failed check has put() its message, which sits in stdout's buffer.
static void onFatalSignal(int signal) {
  if (signal == SIGABRT)
    std::fflush(stdout);
  write(reportPrefix.c_str());
  write(describe(signal));
  if (signal == SIGSEGV || signal == SIGBUS)
    write("; do the inputs' dynamic sizes agree? --runtime-checks can tell");
  write("\n");
  ::_exit(1);
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

CrashGuard::~CrashGuard() {
  for (int i = 0; i < kNumSignals; ++i)
    sigaction(kSignals[i], &previous[i], nullptr);
}

} // namespace ttt::run
