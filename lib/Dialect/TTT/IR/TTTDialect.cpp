//===- TTTDialect.cpp - ttt dialect registration --------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/TTT/IR/TTTDialect.h"
#include "ttt/Dialect/TTT/IR/TTTAttrs.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ttt;

#include "ttt/Dialect/TTT/IR/TTTOpsDialect.cpp.inc"

void TTTDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ttt/Dialect/TTT/IR/TTTOps.cpp.inc"
      >();
  registerAttributes();
}
