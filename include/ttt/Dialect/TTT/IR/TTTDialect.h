//===- TTTDialect.h - ttt dialect -------------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_TTT_IR_TTTDIALECT_H
#define TTT_DIALECT_TTT_IR_TTTDIALECT_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "ttt/Dialect/TTT/IR/TTTOpsDialect.h.inc"

#endif // TTT_DIALECT_TTT_IR_TTTDIALECT_H
