//===- DiagnosticCollector.cpp - MLIR diagnostics as one line -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "DiagnosticCollector.h"

#include "ttt/Execution/RunError.h"
#include "ttt/Support/Location.h"

using namespace mlir;

namespace ttt::run {

DiagnosticCollector::DiagnosticCollector(MLIRContext *context,
                                         llvm::StringRef file)
    : ScopedDiagnosticHandler(context), file(file.str()) {
  setHandler([this](Diagnostic &diag) {
    // Warnings and remarks are dropped: ttt-run's output is its results.
    if (diag.getSeverity() != DiagnosticSeverity::Error || !message.empty())
      return success();
    subject = ::ttt::formatLocation(diag.getLocation(), this->file);
    message = diag.str();
    // Messages may quote multi-line IR; keep the report on one line.
    for (char &c : message)
      if (c == '\n' || c == '\r')
        c = ' ';
    message = llvm::StringRef(message).trim().str();
    return success();
  });
}

llvm::Error DiagnosticCollector::takeError(const llvm::Twine &what) {
  llvm::Error error =
      message.empty()
          ? makeRunError(file, what + ": failed without a diagnostic")
          : makeRunError(subject, what + ": " + message);
  subject.clear();
  message.clear();
  return error;
}

} // namespace ttt::run
