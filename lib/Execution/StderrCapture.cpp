//===- StderrCapture.cpp - collect what is written to stderr --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Execution/StderrCapture.h"

#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

namespace ttt::run {

StderrCapture::StderrCapture() {
  llvm::errs().flush();
  std::fflush(stderr);
  file = std::tmpfile();
  if (!file)
    return;
  savedFd = ::dup(STDERR_FILENO);
  if (savedFd < 0 || ::dup2(::fileno(file), STDERR_FILENO) < 0) {
    if (savedFd >= 0)
      ::close(savedFd);
    savedFd = -1;
    std::fclose(file);
    file = nullptr;
  }
}

StderrCapture::~StderrCapture() { (void)take(); }

std::string StderrCapture::take() {
  if (!file)
    return "";
  llvm::errs().flush();
  std::fflush(stderr);
  ::dup2(savedFd, STDERR_FILENO);
  ::close(savedFd);
  savedFd = -1;
  std::string text;
  std::rewind(file);
  char buffer[4096];
  size_t count;
  while ((count = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    text.append(buffer, count);
  std::fclose(file);
  file = nullptr;
  return text;
}

} // namespace ttt::run
