//===- LinAttnDialect.cpp - linattn dialect registration ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/LinAttn/IR/LinAttnDialect.h"
#include "ttt/Dialect/LinAttn/IR/LinAttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::linattn;

#include "ttt/Dialect/LinAttn/IR/LinAttnOpsDialect.cpp.inc"

void LinAttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ttt/Dialect/LinAttn/IR/LinAttnOps.cpp.inc"
      >();
}
