//===- ContractionBody.h - the body of a plain contraction ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the CPU passes that treat contractions as GEMMs agree a GEMM's body
// is (ttt-contractions-to-blas calls BLAS for it, ttt-fuse-elementwise
// moves negations through it).
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOCPU_CONTRACTIONBODY_H
#define TTT_LIB_CONVERSION_LINALGTOCPU_CONTRACTIONBODY_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::ttt {

/// True when the body is `yield acc + a * b` (in either operand order).
inline bool isMultiplyAccumulate(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getNumArguments() != 3 || body.getOperations().size() != 3)
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  if (add.getLhs() != acc && add.getRhs() != acc)
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || mul->getBlock() != &body)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

} // namespace mlir::ttt

#endif // TTT_LIB_CONVERSION_LINALGTOCPU_CONTRACTIONBODY_H
