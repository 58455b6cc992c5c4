//===- GatedNetworkReader.h - base of the gated readers ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A reader of a fast-weight network gated by a sigmoid (LaCT's SwiGLU,
// ViT^3's GLU) reads one chunk loop twice over: the output with the next
// states as leaves (which weights the model applies), and the updates with
// everything expanded (the gradients); both meet in the keys' sigmoid. This
// base holds that state and the loop's accessors.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_GATEDNETWORKREADER_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_GATEDNETWORKREADER_H

#include "ChunkLoopForms.h"
#include "ElementwiseReadings.h"

namespace mlir::ttt::linalg_raise {

class GatedNetworkReader {
protected:
  explicit GatedNetworkReader(ChunkLoopOp loop)
      : loop(loop), modelReader(llvm::DenseSet<Value>(
                        loop.getYield().getNextState().begin(),
                        loop.getYield().getNextState().end())) {}

  Value stateArg(unsigned i) { return loop.getStateArgs()[i]; }
  Value nextState(unsigned i) { return loop.getYield().getNextState()[i]; }
  std::optional<unsigned> windowOf(Value leaf) {
    return windowIndex(loop, leaf);
  }
  /// Whether two leaves of the updates are one value (two ops computing
  /// one gate count as one).
  bool sameLeaf(Value a, Value b) { return sameUpToSigmoids(reader, a, b); }
  /// The factor r with r * `expected` equal to `found` term for term, if
  /// there is one (each term of `found` proposes one).
  std::optional<double> scaleOf(const Polynomial &expected,
                                const Polynomial &found) {
    for (const Term &term : found.terms) {
      double ratio = term.coeff / expected.terms[0].coeff;
      Polynomial scaled = expected;
      for (Term &t : scaled.terms)
        t.coeff *= ratio;
      if (equivalent(scaled, found,
                     [&](Value a, Value b) { return sameLeaf(a, b); }))
        return ratio;
    }
    return std::nullopt;
  }

  ChunkLoopOp loop;
  /// Reads the output with the next states as leaves, and the updates.
  EinsumReader modelReader, reader;
  /// The keys' sigmoid, `sigma(k W)` of the gated weight W, and the roles
  /// of its dimensions.
  Value keysSigmoid;
  SmallVector<unsigned> sigmoidRoles;
  /// The next role a unit dimension with no other role gets.
  unsigned nextUnit = kUnit;
};

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_GATEDNETWORKREADER_H
