//===- TTTOps.h - ttt layer ops ---------------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_TTT_IR_TTTOPS_H
#define TTT_DIALECT_TTT_IR_TTTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ttt/Dialect/TTT/IR/TTTAttrs.h"
#include "ttt/Dialect/TTT/IR/TTTDialect.h"

#define GET_OP_CLASSES
#include "ttt/Dialect/TTT/IR/TTTOps.h.inc"

#endif // TTT_DIALECT_TTT_IR_TTTOPS_H
