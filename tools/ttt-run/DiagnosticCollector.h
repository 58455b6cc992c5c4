//===- DiagnosticCollector.h - MLIR diagnostics as one line -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The parser, the verifier and the passes report problems as MLIR
// diagnostics, possibly with notes that dump whole operations. ttt-run reports
// each failure as a single line, so this keeps the first error, flattened to
// "file:line:col: message", and drops the rest.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_RUN_DIAGNOSTICCOLLECTOR_H
#define TTT_TOOLS_TTT_RUN_DIAGNOSTICCOLLECTOR_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Error.h"

#include <string>

namespace ttt::run {

class DiagnosticCollector : public mlir::ScopedDiagnosticHandler {
public:
  /// `file` names the subject when a diagnostic has no file location.
  DiagnosticCollector(mlir::MLIRContext *context, llvm::StringRef file);

  /// The first error as "LOCATION: what: MESSAGE" (or a generic message if
  /// no diagnostic was emitted); resets the collector.
  llvm::Error takeError(const llvm::Twine &what);

private:
  std::string file;
  std::string subject;
  std::string message;
};

} // namespace ttt::run

#endif // TTT_TOOLS_TTT_RUN_DIAGNOSTICCOLLECTOR_H
