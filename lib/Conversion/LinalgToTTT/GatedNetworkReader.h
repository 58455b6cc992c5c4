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
  /// `pairing[i]`, if given, is the yielded value read as state i's next
  /// one, and `transposed[i]` says that state i holds the transpose of that
  /// value's weight (see readSwiGLULayer).
  explicit GatedNetworkReader(ChunkLoopOp loop, ArrayRef<unsigned> pairing = {},
                              ArrayRef<bool> transposed = {})
      : loop(loop), pairing(pairing), transposed(transposed),
        modelReader(
            llvm::DenseSet<Value>(loop.getYield().getNextState().begin(),
                                  loop.getYield().getNextState().end())) {}

  Value stateArg(unsigned i) { return loop.getStateArgs()[i]; }
  Value nextState(unsigned i) {
    return loop.getYield().getNextState()[pairing.empty() ? i : pairing[i]];
  }
  bool isTransposed(unsigned state) {
    return state < transposed.size() && transposed[state];
  }
  /// The roles of state `state`'s dimensions given its weight's (those of
  /// its next value): the matrix's two swapped where the state holds the
  /// transpose.
  SmallVector<unsigned> stateRoles(ArrayRef<unsigned> roles, unsigned state) {
    SmallVector<unsigned> result(roles);
    if (isTransposed(state) && result.size() >= 2)
      std::swap(result.end()[-1], result.end()[-2]);
    return result;
  }
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
  SmallVector<unsigned> pairing;
  SmallVector<bool> transposed;
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
