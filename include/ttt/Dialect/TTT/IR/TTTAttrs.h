//===- TTTAttrs.h - ttt layer attributes ------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_TTT_IR_TTTATTRS_H
#define TTT_DIALECT_TTT_IR_TTTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallVector.h"

#include <array>

namespace mlir::ttt {
// Parsers and printers of the attribute parameters declared in TTTBase.td.
FailureOr<llvm::APFloat> parseF64Param(AsmParser &parser);
void printF64Param(AsmPrinter &printer, const llvm::APFloat &value);
FailureOr<DenseF64ArrayAttr> parseF64ListParam(AsmParser &parser);
void printF64ListParam(AsmPrinter &printer, DenseF64ArrayAttr values);
FailureOr<SmallVector<int64_t>> parseI64ListParam(AsmParser &parser);
void printI64ListParam(AsmPrinter &printer, ArrayRef<int64_t> values);
} // namespace mlir::ttt

#include "ttt/Dialect/TTT/IR/TTTEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ttt/Dialect/TTT/IR/TTTAttrs.h.inc"

#endif // TTT_DIALECT_TTT_IR_TTTATTRS_H
