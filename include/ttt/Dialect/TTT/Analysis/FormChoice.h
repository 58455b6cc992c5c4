//===- FormChoice.h - recurrent or parallel, per layer ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_TTT_ANALYSIS_FORMCHOICE_H
#define TTT_DIALECT_TTT_ANALYSIS_FORMCHOICE_H

#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include <string>

namespace mlir::ttt {

/// Which exact form a layer runs in on a CPU with `cores` cores.
struct FormChoice {
  bool parallel = false;
  /// Why, one sentence fragment with the numbers it rests on.
  std::string reason;
};

/// The cost model of ttt-to-linattn's form=auto (and ttt-to-cpu's). Both
/// forms do the same products; the parallel form also writes every chunk
/// state and scans them, which in our CPU benchmark costs about five times
/// the recurrent form's single-thread time. It pays only where its chunks
/// can run on that many times more cores than the recurrent form's B*H
/// streams occupy.
FormChoice chooseForm(KVBLayerOp op, unsigned cores);

/// The cores of this machine (at least 1).
unsigned getHostCores();

} // namespace mlir::ttt

#endif // TTT_DIALECT_TTT_ANALYSIS_FORMCHOICE_H
