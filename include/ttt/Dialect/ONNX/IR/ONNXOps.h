//===- ONNXOps.h - onnx ops -------------------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_ONNX_IR_ONNXOPS_H
#define TTT_DIALECT_ONNX_IR_ONNXOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ttt/Dialect/ONNX/IR/ONNXAttrs.h"
#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"
#include "ttt/Dialect/ONNX/IR/ONNXTypes.h"

#define GET_OP_CLASSES
#include "ttt/Dialect/ONNX/IR/ONNXOps.h.inc"

#endif // TTT_DIALECT_ONNX_IR_ONNXOPS_H
