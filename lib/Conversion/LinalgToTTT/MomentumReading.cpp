//===- MomentumReading.cpp - LaCT's momentum, read off a chunk step -------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "MomentumReading.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

FailureOr<MomentumDecay>
linalg_raise::readMomentumDecay(ChunkLoopOp loop, const Polynomial &update,
                                Value momentum, std::string &why) {
  MomentumDecay result;
  std::optional<Term> decay;
  for (const Term &term : update.terms) {
    if (term.factorsOf(momentum).empty()) {
      result.rest.push_back(term);
      continue;
    }
    if (decay)
      return why = "its momentum's update reads the momentum twice", failure();
    decay = term;
  }
  auto notAMean = [&] {
    why = "its momentum is not scaled by a mean of per-token coefficients "
          "(mu M)";
    return failure();
  };
  if (!decay || decay->factors.size() != 2)
    return notAMean();
  const Factor *kept = decay->factorsOf(momentum)[0];
  const Factor *rates = &decay->factors[kept == &decay->factors[0] ? 1 : 0];
  std::optional<unsigned> sequence;
  for (auto [index, arg] : llvm::enumerate(loop.getWindowArgs()))
    if (rates->leaf == arg)
      sequence = index;
  if (!sequence ||
      ArrayRef<unsigned>(kept->labels) != ArrayRef<unsigned>(update.labels))
    return notAMean();
  result.coeff = decay->coeff;
  result.sequence = *sequence;
  result.rates = *rates;
  return result;
}

bool linalg_raise::windowsAreWholeChunks(ChunkLoopOp loop) {
  int64_t chunk = loop.getChunk();
  return chunk > 0 && llvm::all_of(loop.getWindowArgs(), [&](BlockArgument w) {
           auto type = cast<RankedTensorType>(w.getType());
           int64_t axis =
               loop.getWindowAxes()[w.getArgNumber() - loop.getInits().size()];
           return type.getDimSize(axis) == chunk;
         });
}
