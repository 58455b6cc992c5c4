//===- LowerKVBLayer.cpp - ttt.kvb_layer to its reference loop ------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers ttt.kvb_layer to what docs/Semantics.md specifies, step by step and
// in the order the reference models compute it: one scf.forall iteration per
// (batch, head) stream, a sequential scf.for over chunks inside it.
//
//===----------------------------------------------------------------------===//

#include "FastWeightNet.h"
#include "LowerRecurrent.h"
#include "StreamLoop.h"

#include "ttt/Conversion/Utils/LinAttnAlgorithms.h"
#include "ttt/Conversion/Utils/LinalgAlgebra.h"
#include "ttt/Conversion/Utils/TensorMath.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::ttt;

namespace {

/// The operands of one (batch, head) stream, as matrices over its tokens.
struct Stream {
  Value q, k, v;     // [Tq, Din], [T, Din], [T, Dout]
  Value lr;          // [T, 1 or #weights], or null
  Value momentum;    // [T], or null
  Value tokenEta;    // [C], or null
  Value gamma, beta; // [Dout], or null
  SmallVector<Value> weights;
  /// The stream's slice of the layer's output, [Tq, Dout], to compute the
  /// output into (in place); null when it has another element type.
  Value out;
};

/// The tokens one update trains on: a chunk, or every key of a full batch.
struct TokenSet {
  Value k, v, lr, momentum;
  Value count; // index
};

/// The fast weights and momentum buffers carried from chunk to chunk.
struct State {
  SmallVector<Value> weights;
  SmallVector<Value> momenta; // one per weight; null when unused
};

class KVBLowering {
public:
  KVBLowering(TensorMath &tm, KVBLayerOp op)
      : tm(tm), op(op), model(op.getModel()), loss(op.getLoss()),
        update(op.getUpdateOrDefault()), schedule(op.getSchedule()),
        net(tm, model) {}

  /// Returns the stream's output rows and final weights.
  std::pair<Value, SmallVector<Value>> lowerStream(const Stream &stream);

private:
  // Model and loss.
  Value apply(ArrayRef<Value> weights, Value queries);
  Value outputTransform(Value y, Value *xhat = nullptr, Value *rstd = nullptr);
  Value lossGradient(Value y, Value values);
  /// The per-token learning rates of weight `index` in `set`, or null.
  Value learningRates(const TokenSet &set, unsigned index);
  /// s / n (mean) or s (sum) times the step sign, as a scalar.
  Value gradientScale(Value count, double extra);

  // Updates.
  State step(const State &state, const TokenSet &set,
             ArrayRef<Value> initialNorms);
  State steps(const State &state, const TokenSet &set,
              ArrayRef<Value> initialNorms);
  Value clip(Value u);
  Value orthogonalize(Value u);
  Value normalize(Value w, Value initialNorm);

  // Schedules.
  /// The [Tq, Dout] output the chunk loop writes its rows into: the
  /// stream's slice of the layer's output where it has one.
  Value outputInit(const Stream &stream);
  std::pair<Value, SmallVector<Value>> lowerChunked(const Stream &stream);
  std::pair<Value, SmallVector<Value>> lowerCausal(const Stream &stream);
  std::pair<Value, SmallVector<Value>> lowerFullBatch(const Stream &stream);

  /// Token set of chunk [start, start + count).
  TokenSet chunk(const Stream &stream, Value start, Value count);
  Value rows(Value matrix, Value start, Value count);
  Value entries(Value vector, Value start, Value count);

  double sign() const { return update.getSign() == Sign::descent ? -1.0 : 1.0; }

  TensorMath &tm;
  KVBLayerOp op;
  FastWeightModelAttr model;
  LossAttr loss;
  UpdateAttr update;
  ScheduleAttr schedule;
  FastWeightNet net;
  Stream current;
};

} // namespace

//===----------------------------------------------------------------------===//
// Slicing
//===----------------------------------------------------------------------===//

Value KVBLowering::rows(Value matrix, Value start, Value count) {
  if (!matrix)
    return Value();
  OpBuilder &b = tm.builder();
  return tm.slice(matrix, {start, b.getIndexAttr(0)},
                  {count, tm.dim(matrix, 1)}, 2);
}

Value KVBLowering::entries(Value vector, Value start, Value count) {
  if (!vector)
    return Value();
  return tm.slice(vector, {start}, {count}, 1);
}

TokenSet KVBLowering::chunk(const Stream &stream, Value start, Value count) {
  return TokenSet{rows(stream.k, start, count), rows(stream.v, start, count),
                  rows(stream.lr, start, count),
                  entries(stream.momentum, start, count), count};
}

//===----------------------------------------------------------------------===//
// Model, loss, gradients
//===----------------------------------------------------------------------===//

Value KVBLowering::apply(ArrayRef<Value> weights, Value queries) {
  Value y = net.forward(
      queries, [&](unsigned i, Value x) { return tm.matmul(x, weights[i]); });
  return outputTransform(y);
}

Value KVBLowering::outputTransform(Value y, Value *xhatOut, Value *rstdOut) {
  if (loss.getKind() != LossKind::layernorm_mse)
    return y;
  ScalarMath &s = tm.s();
  int64_t features = op.getOutputDim();
  Value invD = s.constant(1.0 / static_cast<double>(features));
  double eps = loss.getEps().convertToDouble();
  auto subScalars = [](ScalarMath &sm, Value a, Value c) {
    return sm.sub(a, c);
  };
  auto mulScalars = [](ScalarMath &sm, Value a, Value c) {
    return sm.mul(a, c);
  };
  Value mean = tm.scale(tm.rowSums(y), invD);
  Value centered = tm.rowwise(y, mean, subScalars);
  Value var = tm.scale(tm.rowSums(tm.mul(centered, centered)), invD);
  Value rstd = tm.map({var}, [&](ScalarMath &sm, ValueRange x) {
    Value one = sm.constant(1.0);
    Value root = sm.sqrt(sm.add(x[0], sm.constant(eps)));
    return sm.div(one, root);
  });
  Value xhat = tm.rowwise(centered, rstd, mulScalars);
  if (xhatOut)
    *xhatOut = xhat;
  if (rstdOut)
    *rstdOut = rstd;
  Value scaled = tm.scaleCols(xhat, current.gamma);
  return tm.colwise(scaled, current.beta, [](ScalarMath &sm, Value a, Value c) {
    return sm.add(a, c);
  });
}

Value KVBLowering::lossGradient(Value y, Value values) {
  switch (loss.getKind()) {
  case LossKind::dot:
    return tm.map({values},
                  [](ScalarMath &s, ValueRange x) { return s.neg(x[0]); });
  case LossKind::mse:
    return tm.sub(y, values);
  case LossKind::layernorm_mse: {
    // Closed-form LayerNorm backward of 1/2 |gamma * xhat + beta - v|^2.
    Value xhat, rstd;
    Value out = outputTransform(y, &xhat, &rstd);
    ScalarMath &s = tm.s();
    Value invD = s.constant(1.0 / static_cast<double>(op.getOutputDim()));
    Value g = tm.scaleCols(tm.sub(out, values), current.gamma);
    Value meanG = tm.scale(tm.rowSums(g), invD);
    Value meanGX = tm.scale(tm.rowSums(tm.mul(g, xhat)), invD);
    auto subScalars = [](ScalarMath &sm, Value a, Value c) {
      return sm.sub(a, c);
    };
    auto mulScalars = [](ScalarMath &sm, Value a, Value c) {
      return sm.mul(a, c);
    };
    Value centeredG = tm.rowwise(g, meanG, subScalars);
    Value projection = tm.rowwise(xhat, meanGX, mulScalars);
    Value t = tm.sub(centeredG, projection);
    return tm.rowwise(t, rstd, mulScalars);
  }
  }
  llvm_unreachable("unknown loss");
}

Value KVBLowering::learningRates(const TokenSet &set, unsigned index) {
  if (!set.lr)
    return Value();
  int64_t columns = cast<RankedTensorType>(set.lr.getType()).getDimSize(1);
  return tm.column(set.lr, tm.builder().getIndexAttr(columns == 1 ? 0 : index));
}

Value KVBLowering::gradientScale(Value count, double extra) {
  ScalarMath &s = tm.s();
  Value factor = s.constant(sign() * loss.getScale().convertToDouble() * extra);
  if (loss.getReduction() == Reduction::mean)
    factor = s.div(factor, s.fromIndex(count));
  return factor;
}

//===----------------------------------------------------------------------===//
// Updates
//===----------------------------------------------------------------------===//

Value KVBLowering::clip(Value u) {
  switch (update.getClip()) {
  case ClipKind::none:
    return u;
  case ClipKind::output_channels:
    return tm.colwise(u, tm.colNorms(u), [](ScalarMath &s, Value x, Value n) {
      return s.div(x, s.add(n, s.constant(1.0)));
    });
  case ClipKind::frobenius: {
    ScalarMath &s = tm.s();
    Value norm = tm.frobeniusNorm(u);
    Value one = s.constant(1.0);
    Value denominator = s.add(norm, s.constant(1.0));
    return tm.scale(u, s.div(one, denominator));
  }
  }
  llvm_unreachable("unknown clip kind");
}

Value KVBLowering::orthogonalize(Value u) {
  NewtonSchulzAttr ns = update.getOrthogonalize();
  if (!ns)
    return u;
  LinalgAlgebra alg(tm.builder(), tm.getLoc(), tm.getType());
  return newtonSchulz(alg, u, ns.getSteps(), ns.getCoeffs().asArrayRef(),
                      ns.getEps().convertToDouble(),
                      dyn_cast_or_null<FloatType>(ns.getCompute()));
}

Value KVBLowering::normalize(Value w, Value initialNorm) {
  double eps = update.getWeightNormEps().convertToDouble();
  Value factor =
      tm.map({initialNorm, tm.colNorms(w)}, [&](ScalarMath &s, ValueRange x) {
        return s.div(x[0], s.add(x[1], s.constant(eps)));
      });
  return tm.scaleCols(w, factor);
}

State KVBLowering::step(const State &state, const TokenSet &set,
                        ArrayRef<Value> initialNorms) {
  ScalarMath &s = tm.s();
  ForwardTrace trace;
  Value y = net.forward(
      set.k,
      [&](unsigned i, Value x) { return tm.matmul(x, state.weights[i]); },
      &trace);
  Value outGrad = lossGradient(y, set.v);
  auto factors = net.backward(trace, outGrad, state.weights);
  Value scale = gradientScale(set.count, 1.0);
  Value mu;
  if (set.momentum) {
    Value sum = tm.sumAll(set.momentum);
    mu = s.div(sum, s.fromIndex(set.count));
  }

  State next = state;
  for (unsigned i = 0, e = model.getNumWeights(); i < e; ++i) {
    if (!factors[i])
      continue;
    Value grads = factors[i]->outputGrads;
    if (Value lr = learningRates(set, i))
      grads = tm.scaleRows(grads, lr);
    // U = sign * G; clipping commutes with the sign.
    Value u = tm.scale(tm.matmul(factors[i]->inputs, grads, true), scale);
    u = clip(u);
    if (mu) {
      next.momenta[i] = tm.add(tm.scale(state.momenta[i], mu), u);
      u = next.momenta[i];
    }
    Value base = update.getBase() == UpdateBase::update ? u : state.weights[i];
    u = orthogonalize(u);
    Value w = tm.add(
        base, tm.scale(u, s.constant(update.getLrScale().convertToDouble())));
    if (initialNorms[i])
      w = normalize(w, initialNorms[i]);
    next.weights[i] = w;
  }
  return next;
}

/// Packs a State into loop-carried values and back.
static SmallVector<Value> flatten(const State &state) {
  SmallVector<Value> values(state.weights);
  for (Value m : state.momenta)
    if (m)
      values.push_back(m);
  return values;
}

static State unflatten(const State &shape, ValueRange values) {
  State state;
  state.weights.assign(values.begin(), values.begin() + shape.weights.size());
  unsigned next = shape.weights.size();
  for (Value m : shape.momenta)
    state.momenta.push_back(m ? values[next++] : Value());
  return state;
}

State KVBLowering::steps(const State &state, const TokenSet &set,
                         ArrayRef<Value> initialNorms) {
  int64_t count = schedule.getInnerSteps();
  if (count == 1)
    return step(state, set, initialNorms);
  OpBuilder &b = tm.builder();
  Location loc = tm.getLoc();
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, count);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, lb, ub, one, flatten(state));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  State inner = unflatten(state, loop.getRegionIterArgs());
  State next = step(inner, set, initialNorms);
  scf::YieldOp::create(b, loc, flatten(next));
  return unflatten(state, loop.getResults());
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

/// Loop bounds of the chunk loop over `tokens` tokens.
static std::pair<Value, Value> chunkLoopBounds(TensorMath &tm, Value tokens,
                                               int64_t size) {
  OpBuilder &b = tm.builder();
  Location loc = tm.getLoc();
  Value chunk = arith::ConstantIndexOp::create(b, loc, size);
  Value chunks = arith::CeilDivUIOp::create(b, loc, tokens, chunk);
  return {chunk, chunks};
}

/// Start and length of chunk `index` of `tokens` tokens (the last one may be
/// shorter than `chunkSize`).
static std::pair<Value, Value> chunkExtent(OpBuilder &b, Location loc,
                                           Value index, Value chunkSize,
                                           Value tokens) {
  Value start = arith::MulIOp::create(b, loc, index, chunkSize);
  Value left = arith::SubIOp::create(b, loc, tokens, start);
  return {start, arith::MinUIOp::create(b, loc, chunkSize, left)};
}

Value KVBLowering::outputInit(const Stream &stream) {
  // The chunk loop writes every query row (chunked schedules have as many
  // queries as keys), so the stream's slice needs no zeros first.
  if (stream.out)
    return stream.out;
  return tm.zeros({tm.dim(stream.q, 0), tm.dim(stream.v, 1)});
}

std::pair<Value, SmallVector<Value>>
KVBLowering::lowerChunked(const Stream &stream) {
  OpBuilder &b = tm.builder();
  Location loc = tm.getLoc();
  bool applyFirst = schedule.getOrder() == UpdateOrder::apply_then_update;

  State init;
  init.weights.assign(stream.weights.begin(), stream.weights.end());
  SmallVector<Value> initialNorms(stream.weights.size());
  for (auto [i, w] : llvm::enumerate(stream.weights)) {
    bool trained = model.isTrained(i);
    init.momenta.push_back(trained && stream.momentum ? tm.zerosLike(w)
                                                      : Value());
    if (trained && !model.isBias(i) &&
        update.getWeightNorm() == WeightNormKind::output_channels)
      initialNorms[i] = tm.colNorms(w);
  }
  Value tokens = tm.indexValue(tm.dim(stream.k, 0));
  auto [chunkSize, chunks] = chunkLoopBounds(tm, tokens, schedule.getSize());
  Value out = outputInit(stream);

  SmallVector<Value> carried = flatten(init);
  carried.push_back(out);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, zero, chunks, one, carried);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange args = loop.getRegionIterArgs();
    State state = unflatten(init, args.drop_back());
    Value acc = args.back();
    Value start, count;
    std::tie(start, count) =
        chunkExtent(b, loc, loop.getInductionVar(), chunkSize, tokens);
    TokenSet set = chunk(stream, start, count);
    Value queries = rows(stream.q, start, count);
    auto store = [&](const State &weights) {
      Value o = apply(weights.weights, queries);
      acc =
          tm.insert(o, acc, {start, b.getIndexAttr(0)}, {count, tm.dim(o, 1)});
    };
    if (applyFirst)
      store(state);
    state = steps(state, set, initialNorms);
    if (!applyFirst)
      store(state);
    SmallVector<Value> yielded = flatten(state);
    yielded.push_back(acc);
    scf::YieldOp::create(b, loc, yielded);
  }
  State final = unflatten(init, loop.getResults().drop_back());
  return {loop.getResults().back(), final.weights};
}

std::pair<Value, SmallVector<Value>>
KVBLowering::lowerCausal(const Stream &stream) {
  OpBuilder &b = tm.builder();
  Location loc = tm.getLoc();
  ScalarMath &s = tm.s();
  Value tokens = tm.indexValue(tm.dim(stream.k, 0));
  auto [chunkSize, chunks] = chunkLoopBounds(tm, tokens, schedule.getSize());
  Value out = outputInit(stream);

  SmallVector<Value> carried(stream.weights.begin(), stream.weights.end());
  carried.push_back(out);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, zero, chunks, one, carried);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange args = loop.getRegionIterArgs();
    SmallVector<Value> weights(args.drop_back());
    Value acc = args.back();
    Value start, count;
    std::tie(start, count) =
        chunkExtent(b, loc, loop.getInductionVar(), chunkSize, tokens);
    TokenSet set = chunk(stream, start, count);
    Value queries = rows(stream.q, start, count);

    // Gradients of every key of the chunk, all at the chunk-start weights.
    ForwardTrace trace;
    Value y = net.forward(
        set.k, [&](unsigned i, Value x) { return tm.matmul(x, weights[i]); },
        &trace);
    auto factors = net.backward(trace, lossGradient(y, set.v), weights);
    // Fold the learning rate of key j into its output gradient.
    SmallVector<Value> keyGrads(weights.size());
    for (unsigned i = 0; i < weights.size(); ++i) {
      if (!factors[i])
        continue;
      keyGrads[i] = factors[i]->outputGrads;
      if (Value lr = learningRates(set, i))
        keyGrads[i] = tm.scaleRows(keyGrads[i], lr);
    }
    Value scale = gradientScale(count, update.getLrScale().convertToDouble());
    Value eta = entries(stream.tokenEta, zero, count);

    // Token i reads W0 + scale * eta_i * sum_{j <= i} x_j^T d_j; on a query
    // row that is the masked (x_bar x_j) weighting of the key gradients.
    Value yq = net.forward(queries, [&](unsigned i, Value x) {
      Value base = tm.matmul(x, weights[i]);
      if (!keyGrads[i])
        return base;
      Value scores =
          tm.lowerTriangle(tm.matmul(x, factors[i]->inputs, false, true));
      Value dual = tm.matmul(scores, keyGrads[i]);
      dual = eta ? tm.scaleRows(tm.scale(dual, scale), eta)
                 : tm.scale(dual, scale);
      return tm.add(base, dual);
    });
    Value o = outputTransform(yq);
    acc = tm.insert(o, acc, {start, b.getIndexAttr(0)}, {count, tm.dim(o, 1)});

    // The chunk hands on the weights of its last token.
    Value carry = scale;
    if (eta) {
      Value last = arith::SubIOp::create(b, loc, count, one);
      carry = s.mul(scale,
                    tensor::ExtractOp::create(b, loc, eta, ValueRange{last}));
    }
    SmallVector<Value> yielded;
    for (unsigned i = 0; i < weights.size(); ++i) {
      if (!keyGrads[i]) {
        yielded.push_back(weights[i]);
        continue;
      }
      Value g = tm.matmul(factors[i]->inputs, keyGrads[i], true);
      yielded.push_back(tm.add(weights[i], tm.scale(g, carry)));
    }
    yielded.push_back(acc);
    scf::YieldOp::create(b, loc, yielded);
  }
  return {loop.getResults().back(),
          SmallVector<Value>(loop.getResults().drop_back())};
}

std::pair<Value, SmallVector<Value>>
KVBLowering::lowerFullBatch(const Stream &stream) {
  State init;
  init.weights.assign(stream.weights.begin(), stream.weights.end());
  init.momenta.assign(stream.weights.size(), Value());
  SmallVector<Value> initialNorms(stream.weights.size());
  for (auto [i, w] : llvm::enumerate(stream.weights))
    if (model.isTrained(i) && !model.isBias(i) &&
        update.getWeightNorm() == WeightNormKind::output_channels)
      initialNorms[i] = tm.colNorms(w);
  TokenSet all{stream.k, stream.v, stream.lr, Value(),
               tm.indexValue(tm.dim(stream.k, 0))};
  State final = steps(init, all, initialNorms);
  return {apply(final.weights, stream.q), final.weights};
}

std::pair<Value, SmallVector<Value>>
KVBLowering::lowerStream(const Stream &stream) {
  current = stream;
  if (schedule.getKind() == ScheduleKind::full_batch)
    return lowerFullBatch(stream);
  if (schedule.getOrder() == UpdateOrder::causal)
    return lowerCausal(stream);
  return lowerChunked(stream);
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

namespace {
struct LowerKVBLayer : OpRewritePattern<KVBLayerOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(KVBLayerOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto elementType = cast<FloatType>(op.getQ().getType().getElementType());
    FloatType computeType = getComputeType(elementType, rewriter);
    TensorMath tm(rewriter, loc, computeType);
    OpBuilder &b = rewriter;

    Value q = op.getQ(), k = op.getK(), v = op.getV();
    OpFoldResult batch = tm.dim(q, 0), heads = tm.dim(q, 1);
    OpFoldResult qTokens = tm.dim(q, 2), dout = tm.dim(v, 3);

    // Shared outputs: o, then the final weights if the op returns them.
    SmallVector<Value> outputs;
    outputs.push_back(tensor::EmptyOp::create(
        b, loc, {batch, heads, qTokens, dout}, elementType));
    SmallVector<std::pair<OpFoldResult, OpFoldResult>> weightShapes;
    for (Value w : op.getWeights()) {
      int64_t rank = cast<RankedTensorType>(w.getType()).getRank();
      weightShapes.push_back({tm.dim(w, rank - 2), tm.dim(w, rank - 1)});
    }
    bool returnsWeights = !op.getFinalWeights().empty();
    if (returnsWeights)
      for (auto [rows, cols] : weightShapes)
        outputs.push_back(tensor::EmptyOp::create(
            b, loc, {batch, heads, rows, cols}, elementType));

    SmallVector<Value> results = buildStreamLoop(
        b, loc, {batch, heads}, outputs,
        [&](Value bIv, Value hIv, ValueRange slices) {
          OpFoldResult zero = b.getIndexAttr(0), unit = b.getIndexAttr(1);
          auto streamOf = [&](Value t, int64_t keep) -> Value {
            // [B, H, ...] -> the (b, h) slice with `keep` trailing dims.
            SmallVector<OpFoldResult> offsets{bIv, hIv}, sizes{unit, unit};
            for (int64_t d = 2,
                         e = cast<RankedTensorType>(t.getType()).getRank();
                 d < e; ++d) {
              offsets.push_back(zero);
              sizes.push_back(tm.dim(t, d));
            }
            return tm.convert(tm.slice(t, offsets, sizes, keep), computeType);
          };
          Stream stream;
          stream.q = streamOf(q, 2);
          stream.k = streamOf(k, 2);
          stream.v = streamOf(v, 2);
          if (Value lr = op.getLr())
            stream.lr = streamOf(lr, 2);
          if (Value m = op.getMomentum())
            stream.momentum = streamOf(m, 1);
          if (Value eta = op.getTokenEta())
            stream.tokenEta = tm.convert(eta, computeType);
          auto perHead = [&](Value t) -> Value {
            if (!t)
              return Value();
            if (cast<RankedTensorType>(t.getType()).getRank() == 1)
              return tm.convert(t, computeType);
            return tm.convert(tm.slice(t, {hIv, zero}, {unit, tm.dim(t, 1)}, 1),
                              computeType);
          };
          stream.gamma = perHead(op.getLnGamma());
          stream.beta = perHead(op.getLnBeta());
          for (auto [w, shape] : llvm::zip(op.getWeights(), weightShapes)) {
            bool perSample = cast<RankedTensorType>(w.getType()).getRank() == 4;
            SmallVector<OpFoldResult> offsets, sizes;
            if (perSample) {
              offsets.push_back(bIv);
              sizes.push_back(unit);
            }
            offsets.append({hIv, zero, zero});
            sizes.append({unit, shape.first, shape.second});
            stream.weights.push_back(
                tm.convert(tm.slice(w, offsets, sizes, 2), computeType));
          }

          if (elementType == computeType)
            stream.out = slices[0];
          KVBLowering lowering(tm, op);
          auto [o, finals] = lowering.lowerStream(stream);
          SmallVector<Value> pieces{tm.convert(o, elementType)};
          if (returnsWeights)
            for (Value w : finals)
              pieces.push_back(tm.convert(w, elementType));
          return pieces;
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

void mlir::ttt::populateLowerKVBLayerPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerKVBLayer>(patterns.getContext());
}
