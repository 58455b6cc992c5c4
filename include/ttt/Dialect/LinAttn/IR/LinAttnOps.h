//===- LinAttnOps.h - linattn ops -------------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_LINATTN_IR_LINATTNOPS_H
#define TTT_DIALECT_LINATTN_IR_LINATTNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ttt/Dialect/LinAttn/IR/LinAttnDialect.h"
#include "ttt/Dialect/LinAttn/IR/LinAttnEnums.h.inc"

#define GET_OP_CLASSES
#include "ttt/Dialect/LinAttn/IR/LinAttnOps.h.inc"

#endif // TTT_DIALECT_LINATTN_IR_LINATTNOPS_H
