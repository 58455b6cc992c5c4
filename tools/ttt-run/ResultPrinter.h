//===- ResultPrinter.h - results as text ------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_RUN_RESULTPRINTER_H
#define TTT_TOOLS_TTT_RUN_RESULTPRINTER_H

#include "ttt/Support/Npy.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace ttt::run {

/// Prints `array` on one line as
///   NAME: tensor<2x3xf32> = [[1, 2, 3], [4, 5, 6]]
/// with floats in %g style (6 significant digits). Arrays of more than
/// `limit` elements are summarised instead:
///   NAME: tensor<64x64xf32> = <4096 elements: min -1, max 1, mean 0.01>
void printArray(llvm::raw_ostream &os, llvm::StringRef name,
                const npy::Array &array, int64_t limit);

} // namespace ttt::run

#endif // TTT_TOOLS_TTT_RUN_RESULTPRINTER_H
