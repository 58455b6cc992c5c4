//===- LinAttnDialect.h - linattn dialect -----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_LINATTN_IR_LINATTNDIALECT_H
#define TTT_DIALECT_LINATTN_IR_LINATTNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ttt/Dialect/LinAttn/IR/LinAttnOpsDialect.h.inc"

#endif // TTT_DIALECT_LINATTN_IR_LINATTNDIALECT_H
