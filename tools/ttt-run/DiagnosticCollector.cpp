//===- DiagnosticCollector.cpp - MLIR diagnostics as one line -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "DiagnosticCollector.h"

#include "ttt/Execution/RunError.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

using namespace mlir;

namespace ttt::run {

/// "file:line:col" of the innermost file location in `loc`, if any.
static std::string formatLocation(Location loc, llvm::StringRef fallback) {
  if (auto file = loc->findInstanceOf<FileLineColRange>())
    return (file.getFilename().strref() + ":" +
            llvm::Twine(file.getStartLine()) + ":" +
            llvm::Twine(file.getStartColumn()))
        .str();
  return fallback.str();
}

DiagnosticCollector::DiagnosticCollector(MLIRContext *context,
                                         llvm::StringRef file)
    : ScopedDiagnosticHandler(context), file(file.str()) {
  setHandler([this](Diagnostic &diag) {
    // Warnings and remarks are dropped: ttt-run's output is its results.
    if (diag.getSeverity() != DiagnosticSeverity::Error || !message.empty())
      return success();
    subject = formatLocation(diag.getLocation(), this->file);
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
