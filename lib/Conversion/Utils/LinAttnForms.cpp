//===- LinAttnForms.cpp - linattn ops built on the shared algebra ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Utils/LinAttnForms.h"
#include "ttt/Conversion/Utils/LinAttnAlgorithms.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::linattn;

Value mlir::ttt::buildFeatureMap(TensorAlgebra &t, FeatureMapOp op) {
  Value x = op.getInput();
  Value phi = x;
  ValueRange weights = op.getWeights();
  switch (op.getKind()) {
  case FeatureMapKind::identity:
    break;
  case FeatureMapKind::mlp:
    phi = mlpFeatures(t, x, weights[0],
                      weights.size() == 2 ? weights[1] : Value(),
                      nonlinearityOf(op.getActivation()));
    break;
  case FeatureMapKind::swiglu:
    phi = swigluFeatures(t, x, weights[0], weights[1]);
    break;
  }
  return op.getAppendOne() ? appendOne(t, phi) : phi;
}

Value mlir::ttt::buildStateTransform(TensorAlgebra &t, StateTransformOp op) {
  Value x = newtonSchulz(t, op.getInputs(), op.getSteps(), op.getCoeffs(),
                         op.getEps().convertToDouble());
  double factor = op.getFactor().convertToDouble();
  if (factor == 1.0)
    return x;
  return t.map({x}, [&](ElementwiseMath &m, ValueRange v) {
    return m.mul(v[0], m.constant(factor));
  });
}

//===----------------------------------------------------------------------===//
// The chunk contractions
//===----------------------------------------------------------------------===//

namespace {

Value multiply(ElementwiseMath &m, ValueRange v) { return m.mul(v[0], v[1]); }
Value divide(ElementwiseMath &m, ValueRange v) { return m.div(v[0], v[1]); }
Value sum(ElementwiseMath &m, ValueRange v) { return m.add(v[0], v[1]); }

/// The per-token scale [B, H, T]: `scale` itself, or its column `column`
/// when it is [B, H, T, n].
Value tokenScale(TensorAlgebra &t, Value scale, int64_t column) {
  if (cast<RankedTensorType>(scale.getType()).getRank() == 3)
    return scale;
  return t.column(scale, column);
}

/// x [B, H, N, ...] divided by the length of its chunk n.
Value perChunkLength(TensorAlgebra &t, Value x, const Chunking &ch) {
  Value lengths = t.chunkLengths(ch.tokens, ch.length, ch.count);
  return t.mapWith({x}, lengths, {2}, divide);
}

/// v_j eta_j factor: the values the intra-chunk term weighs.
Value scaledIntraValues(TensorAlgebra &t, ChunkApplyOp op) {
  Value v = op.getIntraV();
  if (Value eta = op.getIntraScale())
    v = t.mapWith({v}, tokenScale(t, eta, op.getScaleColumn()), {0, 1, 2},
                  multiply);
  double factor = op.getIntraFactor().convertToDouble();
  if (factor == 1.0)
    return v;
  return t.map({v}, [&](ElementwiseMath &m, ValueRange x) {
    return m.mul(x[0], m.constant(factor));
  });
}

} // namespace

// eta_j v_j first, so that the per-chunk sums are a plain batched product
// (acc + k v, which ttt-contractions-to-blas takes).
Value mlir::ttt::buildChunkReduce(TensorAlgebra &t, ChunkReduceOp op) {
  Value k = op.getK(), v = op.getV();
  if (Value scale = op.getScale())
    v = t.mapWith({v}, tokenScale(t, scale, op.getScaleColumn()), {0, 1, 2},
                  multiply);
  Chunking ch = chunkingOf(t, k, op.getChunkSize());
  Value kc = chunked(t, k, ch); // [B, H, N, C, F]
  Value vc = chunked(t, v, ch); // [B, H, N, C, E]
  Value sums = t.matmulTransposedA(kc, vc);
  double factor = op.getFactor().convertToDouble();
  if (factor != 1.0)
    sums = t.map({sums}, [&](ElementwiseMath &m, ValueRange x) {
      return m.mul(x[0], m.constant(factor));
    });
  return op.getMean() ? perChunkLength(t, sums, ch) : sums;
}

Value mlir::ttt::buildChunkMean(TensorAlgebra &t, ChunkMeanOp op) {
  Value x = op.getInput();
  Chunking ch = chunkingOf(t, x, op.getChunkSize());
  Value sums = t.sumLast(chunked(t, x, ch)); // [B, H, N]
  return perChunkLength(t, sums, ch);
}

// Without a chunk size the queries are one chunk of T tokens, read against
// the one state [B, H, 1, F, E].
Value mlir::ttt::buildChunkApply(TensorAlgebra &t, ChunkApplyOp op) {
  Value q = op.getQ();
  Chunking ch = chunkingOf(t, q, op.getChunkSize());
  Value qc = chunked(t, q, ch);
  Value out = t.matmul(qc, op.getStates(), /*transposeB=*/false);
  if (Value k = op.getIntraK()) {
    // Inside each chunk: factor (/ n_c) sum_{j <= i} eta_j (q_i . k_j) v_j.
    // The zero-padded tokens of a short last chunk add nothing.
    Value kc = chunked(t, k, ch);
    Value vc = chunked(t, scaledIntraValues(t, op), ch);
    if (op.getIntraMean())
      vc = perChunkLength(t, vc, ch);
    Value scores = t.matmul(qc, kc, /*transposeB=*/true); // [B, H, N, C, C]
    Value causal = t.lowerTriangle(scores, *ch.size);
    Value intra = t.matmul(causal, vc, /*transposeB=*/false);
    out = t.map({out, intra}, sum);
  }
  return unchunked(t, out, ch);
}

//===----------------------------------------------------------------------===//
// The scan
//===----------------------------------------------------------------------===//

Value mlir::ttt::buildScan(TensorAlgebra &t, ScanOp op) {
  Value g = op.getInputs();
  TransitionKind kind = TransitionKind::none;
  Value transitions;
  switch (op.getKind()) {
  case ScanKind::additive:
    break;
  case ScanKind::decayed:
    kind = TransitionKind::decay;
    transitions = op.getDecay();
    break;
  case ScanKind::affine:
    kind = TransitionKind::matrix;
    transitions = op.getTransition();
    break;
  case ScanKind::residual_affine:
    kind = TransitionKind::matrix;
    transitions = t.plusIdentity(
        op.getTransition(), cast<RankedTensorType>(g.getType()).getDimSize(3));
    break;
  }

  // The initial state [H, F, E] or [B, H, F, E] as [1|B, H, 1, F, E]: it
  // broadcasts over the chunks (and the batch), carried through each chunk's
  // cumulative transition.
  auto initialPerChunk = [&]() -> Value {
    Value initial = op.getInitial();
    if (!initial)
      return {};
    bool perSample = cast<RankedTensorType>(initial.getType()).getRank() == 4;
    return t.expandAxes(initial, perSample ? SmallVector<int64_t>{2}
                                           : SmallVector<int64_t>{0, 2});
  };
  bool exclusive = op.getMode() == ScanMode::exclusive;

  // S_c = S0 + the sum of the chunks up to c (or before c), in one op where
  // the back end has one.
  if (kind == TransitionKind::none)
    if (Value sums = t.nativePrefixSum(g, 2, exclusive)) {
      Value initial = initialPerChunk();
      return initial ? t.mapBroadcast({sums}, {initial}, sum) : sums;
    }

  // The partial states from a zero state, and the cumulative transitions.
  auto [partial, cumulative] = doublingScan(t, kind, g, transitions);
  Value initial = initialPerChunk();
  Value inclusive = partial;
  if (initial) {
    // S0 broadcast over the chunks (ONNX nodes broadcast it themselves),
    // then a_c S0 + partial_c as one round of the doubling scan combines.
    Value start =
        t.mapBroadcast({partial}, {initial},
                       [](ElementwiseMath &, ValueRange v) { return v[1]; });
    inclusive = applyTransition(t, kind, cumulative, start, partial);
  }
  // Chunk c reads S_{c-1}: the initial state, then the inclusive states
  // but the last.
  if (exclusive)
    return t.shiftByOne(inclusive, 2, initial);
  return inclusive;
}
