//===- ConstantTransposes.cpp - folded transposes spelled as views --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Exporters fold `w.transpose(1, 2)` of a constant weight into a second
// constant. A reader of the chunk step then sees two unrelated tensors where
// the model has one weight, read once as it is and once transposed; written
// as a `linalg.transpose` of the first, the second is that weight's view
// again. The elements are the same, so nothing changes what the function
// computes.
//
//===----------------------------------------------------------------------===//

#include "ChunkLoopForms.h"
#include "EinsumPolynomial.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cstring>

using namespace mlir;
using namespace mlir::ttt;

namespace {

/// A float constant of two or more dimensions that is not a splat, with its
/// elements' bytes.
struct WeightConstant {
  arith::ConstantOp op;
  RankedTensorType type;
  ArrayRef<char> bytes;
};

/// Whether `b`'s elements are `a`'s with dimensions `i` and `j` swapped.
bool isSwapOf(const WeightConstant &a, const WeightConstant &b, int64_t i,
              int64_t j) {
  ArrayRef<int64_t> shape = a.type.getShape();
  SmallVector<int64_t> swapped(shape);
  std::swap(swapped[i], swapped[j]);
  if (ArrayRef<int64_t>(swapped) != b.type.getShape())
    return false;
  size_t width = a.bytes.size() / a.type.getNumElements();
  int64_t rank = shape.size();
  SmallVector<int64_t> strides(rank, 1), swappedStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
    swappedStrides[d] = swappedStrides[d + 1] * swapped[d + 1];
  }
  SmallVector<int64_t> index(rank, 0);
  for (int64_t flat = 0, e = a.type.getNumElements(); flat < e; ++flat) {
    int64_t rest = flat, target = 0;
    for (int64_t d = 0; d < rank; ++d) {
      index[d] = rest / strides[d];
      rest %= strides[d];
    }
    std::swap(index[i], index[j]);
    for (int64_t d = 0; d < rank; ++d)
      target += index[d] * swappedStrides[d];
    if (std::memcmp(a.bytes.data() + flat * width,
                    b.bytes.data() + target * width, width) != 0)
      return false;
  }
  return true;
}

} // namespace

void linalg_raise::spellConstantTransposes(func::FuncOp func) {
  SmallVector<WeightConstant> constants;
  for (auto op : func.getBody().getOps<arith::ConstantOp>()) {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || type.getRank() < 2 || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()) || type.getNumElements() < 4)
      continue;
    DenseElementsAttr elements = denseConstantValue(op.getValue());
    if (!elements || elements.isSplat())
      continue;
    constants.push_back({op, type, elements.getRawData()});
  }
  OpBuilder b(func.getContext());
  llvm::DenseSet<Operation *> spelled;
  for (auto [n, later] : llvm::enumerate(constants)) {
    for (WeightConstant earlier : ArrayRef(constants).take_front(n)) {
      if (spelled.contains(earlier.op) ||
          earlier.type.getElementType() != later.type.getElementType() ||
          earlier.type.getNumElements() != later.type.getNumElements() ||
          earlier.bytes.size() != later.bytes.size())
        continue;
      int64_t rank = earlier.type.getRank();
      std::optional<std::pair<int64_t, int64_t>> swap;
      for (int64_t i = 0; i < rank && !swap; ++i)
        for (int64_t j = i + 1; j < rank && !swap; ++j)
          if (isSwapOf(earlier, later, i, j))
            swap = {i, j};
      if (!swap)
        continue;
      SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
      std::swap(perm[swap->first], perm[swap->second]);
      b.setInsertionPoint(later.op);
      Value init =
          tensor::EmptyOp::create(b, later.op.getLoc(), later.type.getShape(),
                                  later.type.getElementType());
      Value view = linalg::TransposeOp::create(
                       b, later.op.getLoc(), earlier.op.getResult(), init, perm)
                       ->getResult(0);
      later.op.getResult().replaceAllUsesWith(view);
      spelled.insert(later.op);
      later.op.erase();
      break;
    }
  }
}
