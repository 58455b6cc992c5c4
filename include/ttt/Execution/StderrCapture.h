//===- StderrCapture.h - collect what is written to stderr ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Library code that prints its complaints to stderr itself would break
// ttt-run's one-line error format; this collects such output (at the file
// descriptor level, so llvm::errs() and stdio alike) to be rephrased.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_RUN_STDERRCAPTURE_H
#define TTT_TOOLS_TTT_RUN_STDERRCAPTURE_H

#include <cstdio>
#include <string>

namespace ttt::run {

class StderrCapture {
public:
  /// Redirects stderr to a temporary file until take() or destruction. If
  /// that fails, stderr is left alone and take() returns nothing.
  StderrCapture();
  ~StderrCapture();
  StderrCapture(const StderrCapture &) = delete;
  StderrCapture &operator=(const StderrCapture &) = delete;

  /// Restores stderr and returns what was written meanwhile.
  std::string take();

private:
  std::FILE *file = nullptr;
  int savedFd = -1;
};

} // namespace ttt::run

#endif // TTT_TOOLS_TTT_RUN_STDERRCAPTURE_H
