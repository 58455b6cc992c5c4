//===- DropSelfCopies.cpp - erase copies of a buffer onto itself ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Bufferization writes a chunk's output in place in the stream's buffer and
// then copies the "inserted" view onto the same view; a loop that carries a
// buffer it writes in place copies its result onto where it already is.
// Once canonicalization folds the loop's unchanged iter_args and CSE merges
// the equal subviews, these are `memref.copy %a, %a`: memmoves of whole
// streams that change nothing.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTDROPSELFCOPIES
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTDropSelfCopiesPass
    : public ttt::impl::TTTDropSelfCopiesBase<TTTDropSelfCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> selfCopies;
    getOperation()->walk([&](memref::CopyOp copy) {
      if (copy.getSource() == copy.getTarget())
        selfCopies.push_back(copy);
    });
    for (memref::CopyOp copy : selfCopies)
      copy.erase();
  }
};
} // namespace
