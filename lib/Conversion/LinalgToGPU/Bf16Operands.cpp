//===- Bf16Operands.cpp - bf16 products, f32 sums -------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `ttt-gpu-bf16-operands` (ttt-to-gpu{precision=bf16}): in every
// linalg.generic with a reduction iterator (a contraction), rounds each f32
// input operand of an arith.mulf to bf16 and back (truncf + extf), so
// products see bf16 operands while sums stay f32.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTGPUBF16OPERANDS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTGPUBf16OperandsPass
    : public ttt::impl::TTTGPUBf16OperandsBase<TTTGPUBf16OperandsPass> {
  void runOnOperation() override {
    getOperation()->walk([](linalg::GenericOp op) {
      if (op.getNumReductionLoops() == 0)
        return;
      Block *body = op.getBody();
      unsigned numInputs = op.getNumDpsInputs();
      Type f32 = Float32Type::get(op.getContext());
      Type bf16 = BFloat16Type::get(op.getContext());
      // One rounded copy per input argument, made at the top of the body.
      DenseMap<Value, Value> rounded;
      auto getRounded = [&](BlockArgument arg) {
        Value &value = rounded[arg];
        if (!value) {
          OpBuilder b = OpBuilder::atBlockBegin(body);
          Value narrow = arith::TruncFOp::create(b, op.getLoc(), bf16, arg);
          value = arith::ExtFOp::create(b, op.getLoc(), f32, narrow);
        }
        return value;
      };
      SmallVector<arith::MulFOp> products;
      body->walk([&](arith::MulFOp mul) { products.push_back(mul); });
      for (arith::MulFOp mul : products) {
        for (OpOperand &operand : mul->getOpOperands()) {
          auto arg = dyn_cast<BlockArgument>(operand.get());
          if (!arg || arg.getOwner() != body ||
              arg.getArgNumber() >= numInputs || arg.getType() != f32)
            continue;
          operand.set(getRounded(arg));
        }
      }
    });
  }
};
} // namespace
