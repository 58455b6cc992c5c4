//===- RaiseChunkLoops.cpp - the math of a ttt.chunk_loop, as a layer -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads what one chunk of a ttt.chunk_loop computes, as einsum polynomials
// (EinsumPolynomial.h), and names the layer when it is one `ttt.kvb_layer`
// expresses. The roles of the dimensions come from the math, not from their
// positions: in `y = q W` the label that q and W share and y lacks is W's
// input; the one W and y share is its output; the ones all three share are
// streams (batch, heads); the one y and q share is time, which must be the
// loop's window and output axis. Whatever the layout and orientation, the
// operands are then transposed into the layer op's `[B, H, T, D]`.
//
// Read here: one linear fast weight, applied to the chunk's queries before
// or after the update `W + s * sum_t k_t^T (lr_t v_t)` (the dot loss's
// descent step, per-token rates optional), chunked or as one chunk; SwiGLU
// fast weights are read by SwiGLUReading.h when this reading fails.
//
//===----------------------------------------------------------------------===//

#include "ChunkLoopForms.h"
#include "DWConvReading.h"
#include "DualFormReading.h"
#include "EinsumPolynomial.h"
#include "GLUReading.h"
#include "LayerLayout.h"
#include "MomentumReading.h"
#include "NewtonSchulzReading.h"
#include "SwiGLUReading.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTRAISECHUNKLOOPS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

namespace {

/// Labels given to unit dimensions that only the update's reading has.
constexpr unsigned kUpdateUnits = 1u << 30;

/// A window factor: which loop sequence, and its labels.
struct WindowFactor {
  unsigned sequence;
  SmallVector<unsigned> labels;
};

/// A linear fast-weight layer read off a chunk loop, its labels in the
/// reading of the output.
struct LinearLayer {
  UpdateOrder order = UpdateOrder::apply_then_update;
  LossKind loss = LossKind::dot;
  /// Which state is the fast weight, and which (if any) its momentum.
  unsigned weight = 0;
  std::optional<unsigned> momentum;
  /// The per-token momentum coefficients whose chunk mean scales the
  /// momentum state.
  std::optional<WindowFactor> momentumRates;
  /// The loss's constant factor (with momentum, the step is separate).
  double lossScale = 1.0;
  /// The factor that makes the momentum coefficients' chunk mean the
  /// program's coefficient (1 when it divides by C exactly).
  double momentumScale = 1.0;
  WindowFactor q, k, v;
  std::optional<WindowFactor> lr;
  /// The state's labels (in the output's reading), the stream labels in
  /// the state's order, and the roles.
  SmallVector<unsigned> stateLabels, streams;
  unsigned time = 0, in = 0, out = 0;
  /// k and v's summed time label (in the update's reading), and the map
  /// from the update's labels of the state to the output's.
  unsigned updateTime = 0;
  double step = 1.0;
  /// Muon: the update orthogonalized by Newton-Schulz steps.
  std::optional<NewtonSchulzReading> muon;
  /// The output's labels.
  SmallVector<unsigned> outputLabels;
  /// Labels of dimensions of size 1 that only reshapes added or dropped:
  /// no role, dropped from the layer op's operands and put back after.
  llvm::DenseSet<unsigned> units;

  /// `labels` without the unit ones.
  SmallVector<unsigned> real(ArrayRef<unsigned> labels) const {
    SmallVector<unsigned> result;
    for (unsigned label : labels)
      if (!units.contains(label))
        result.push_back(label);
    return result;
  }
};

bool hasDuplicates(ArrayRef<unsigned> labels) {
  llvm::SmallDenseSet<unsigned> seen;
  return llvm::any_of(
      labels, [&](unsigned label) { return !seen.insert(label).second; });
}

class LayerReading {
public:
  explicit LayerReading(ChunkLoopOp loop) : loop(loop) {}

  FailureOr<LinearLayer> read(std::string &why);

  /// Why no output can be linear attention, read from the math: the state
  /// reaches an output through an op that is no sum of products (a SwiGLU
  /// or GELU inner model), or as a product of two states (a deep one).
  std::optional<std::string> nonlinearity();

  /// Whether a state is updated by a sum over tokens of products of chunk
  /// data (keys bound to values, whatever the inner model): what makes a
  /// recurrence a TTT layer rather than an RNN or a scan.
  bool bindsKeysToValues();

  /// Why a state is no fast weight whatever the output: the data moves it
  /// by something other than sums of products (a running maximum, a
  /// normalizer).
  std::optional<std::string> stateRescaledByData();

private:
  LogicalResult readOutput(LinearLayer &layer, std::string &why);
  LogicalResult readUpdate(LinearLayer &layer, std::string &why);
  LogicalResult readResidual(LinearLayer &layer, const EinsumReader &reader,
                             const Polynomial &poly, const Term &update,
                             const Term &residual, std::string &why);

  LogicalResult readUpdatePoly(LinearLayer &layer, EinsumReader &reader,
                               const Polynomial &poly, std::string &why);
  LogicalResult readMomentum(LinearLayer &layer, std::string &why);
  static std::optional<double> addedOnce(EinsumReader &reader, Value next,
                                         Value state, Value moved);

  Value stateArg(unsigned i) { return loop.getStateArgs()[i]; }
  Value nextState(unsigned i) { return loop.getYield().getNextState()[i]; }

  ChunkLoopOp loop;
  /// The fast weight's state argument and next value.
  Value weightArg, weightNext;
};

LogicalResult LayerReading::readOutput(LinearLayer &layer, std::string &why) {
  Value state = weightArg, next = weightNext;
  Value output = loop.getYield().getOutputs()[0];
  layer.order = readsValue(output, next) ? UpdateOrder::update_then_apply
                                         : UpdateOrder::apply_then_update;
  EinsumReader reader({state, next});
  std::optional<Polynomial> poly = reader.read(output);
  if (!poly || poly->terms.size() != 1 || poly->terms[0].factors.size() != 2)
    return why = "its output is not one product of the queries and the fast "
                 "weight",
           failure();
  const Term &term = poly->terms[0];
  if (term.coeff != 1.0)
    return why = "its output scales the product of the queries and the fast "
                 "weight",
           failure();
  const Factor *weight = nullptr, *queries = nullptr;
  for (const Factor &factor : term.factors) {
    if (factor.leaf == state || factor.leaf == next)
      weight = &factor;
    else
      queries = &factor;
  }
  std::optional<unsigned> q =
      queries ? windowIndex(loop, queries->leaf) : std::nullopt;
  if (!weight || !q)
    return why = "its output is not the chunk's queries times the fast weight",
           failure();
  if ((weight->leaf == next) != (layer.order == UpdateOrder::update_then_apply))
    return why = "its output reads the state both before and after the update",
           failure();
  layer.q = {*q, queries->labels};
  layer.stateLabels = weight->labels;
  layer.outputLabels = poly->labels;
  if (hasDuplicates(poly->labels) || hasDuplicates(weight->labels) ||
      hasDuplicates(queries->labels))
    return why = "a factor of its output repeats a dimension (a diagonal)",
           failure();
  layer.time = poly->labels[loop.getOutputAxes()[0]];
  // Time keeps its role even in chunks of one token.
  for (ArrayRef<unsigned> labels :
       {ArrayRef<unsigned>(poly->labels), ArrayRef<unsigned>(weight->labels),
        ArrayRef<unsigned>(queries->labels)})
    for (unsigned label : labels)
      if (reader.isUnit(label) && label != layer.time)
        layer.units.insert(label);
  SmallVector<unsigned> y = layer.real(poly->labels),
                        w = layer.real(weight->labels),
                        x = layer.real(queries->labels);
  if (queries->labels[loop.getWindowAxes()[*q]] != layer.time ||
      llvm::is_contained(w, layer.time))
    return why = "its output's time axis is not the queries' time axis",
           failure();
  SmallVector<unsigned> ins, outs;
  for (unsigned label : w) {
    bool inY = llvm::is_contained(y, label), inX = llvm::is_contained(x, label);
    if (inY && inX)
      layer.streams.push_back(label);
    else if (inX)
      ins.push_back(label);
    else if (inY)
      outs.push_back(label);
    else
      return why = "the fast weight has a dimension that its output sums "
                   "without the queries",
             failure();
  }
  if (ins.size() != 1 || outs.size() != 1)
    return why = "the fast weight is not one matrix per stream (one input "
                 "and one output dimension)",
           failure();
  layer.in = ins[0];
  layer.out = outs[0];
  if (x.size() != layer.streams.size() + 2 ||
      y.size() != layer.streams.size() + 2)
    return why = "the queries or the output have dimensions the fast weight "
                 "does not have per stream (a weight shared across a batch)",
           failure();
  return success();
}

LogicalResult LayerReading::readUpdate(LinearLayer &layer, std::string &why) {
  if (layer.momentum)
    return readMomentum(layer, why);
  EinsumReader reader({weightArg});
  std::optional<Polynomial> poly = reader.read(weightNext);
  if (!poly)
    return why = "its update is not a sum of products", failure();
  std::string plain;
  if (succeeded(readUpdatePoly(layer, reader, *poly, plain)))
    return success();
  // Muon: W' = W + s NS(U), U the step the plain update would add.
  std::optional<std::pair<Value, NewtonSchulzReading>> muon =
      findNewtonSchulzOf(weightNext, Value());
  if (!muon) {
    why = plain;
    return failure();
  }
  Value orthogonalized = muon->first;
  EinsumReader outer({weightArg, orthogonalized});
  std::optional<double> step =
      addedOnce(outer, weightNext, weightArg, orthogonalized);
  if (!step)
    return why = "its fast weight is not moved by its orthogonalized update "
                 "alone (W' = W + s NS(U))",
           failure();
  EinsumReader inner({weightArg});
  std::optional<Polynomial> input = inner.read(muon->second.input);
  if (!input)
    return why = "the update Newton-Schulz orthogonalizes is not a sum of "
                 "products",
           failure();
  Polynomial update;
  update.labels = input->labels;
  update.terms.push_back(Term{1.0, {Factor{weightArg, input->labels}}});
  llvm::append_range(update.terms, input->terms);
  if (failed(readUpdatePoly(layer, inner, update, why)))
    return failure();
  layer.lossScale = layer.step;
  layer.step = *step;
  layer.muon = muon->second;
  return success();
}

/// s if `next` reads as `state + s * moved` (each whole, in one layout).
std::optional<double> LayerReading::addedOnce(EinsumReader &reader, Value next,
                                              Value state, Value moved) {
  std::optional<Polynomial> poly = reader.read(next);
  if (!poly || poly->terms.size() != 2)
    return std::nullopt;
  std::optional<double> step;
  bool keeps = false;
  for (const Term &term : poly->terms) {
    if (term.factors.size() != 1 ||
        ArrayRef<unsigned>(term.factors[0].labels) !=
            ArrayRef<unsigned>(poly->labels))
      return std::nullopt;
    if (term.factors[0].leaf == state && term.coeff == 1.0)
      keeps = true;
    else if (term.factors[0].leaf == moved)
      step = term.coeff;
  }
  if (!keeps)
    return std::nullopt;
  return step;
}

/// With momentum M (LaCT's): `M' = mu M + U` with mu the chunk's mean of
/// per-token coefficients and U a step of the loss, and `W' = W + c M'`.
LogicalResult LayerReading::readMomentum(LinearLayer &layer, std::string &why) {
  Value momentum = stateArg(*layer.momentum);
  Value momentumNext = nextState(*layer.momentum);
  auto fail = [&](StringRef reason) {
    why = reason.str();
    return failure();
  };
  // W' = W + c M', or with Muon W' = W + c NS(M').
  Value moved = momentumNext;
  std::optional<NewtonSchulzReading> muon;
  {
    EinsumReader plain({weightArg, momentum, momentumNext});
    if (!addedOnce(plain, weightNext, weightArg, momentumNext))
      if (auto found = findNewtonSchulzOf(weightNext, momentumNext)) {
        moved = found->first;
        muon = found->second;
      }
  }
  EinsumReader weightReader({weightArg, momentum, momentumNext, moved});
  std::optional<double> step =
      addedOnce(weightReader, weightNext, weightArg, moved);
  if (!step)
    return fail("its fast weight is not moved by its momentum alone "
                "(W' = W + c M')");
  layer.muon = muon;
  // M' = mu M + U: the term in M is the mean of a window times M.
  EinsumReader reader({weightArg, momentum});
  std::optional<Polynomial> poly = reader.read(momentumNext);
  if (!poly)
    return fail("its momentum's update is not a sum of products");
  FailureOr<MomentumDecay> decay =
      readMomentumDecay(loop, *poly, momentum, why);
  if (failed(decay))
    return failure();
  Polynomial update;
  update.labels = poly->labels;
  update.terms.push_back(Term{1.0, {Factor{weightArg, poly->labels}}});
  llvm::append_range(update.terms, decay->rest);
  const Factor *rates = &decay->rates;
  std::optional<unsigned> index = decay->sequence;
  // A mean over the chunk: 1/C, every window C long.
  int64_t chunk = loop.getChunk();
  if (!windowsAreWholeChunks(loop))
    return fail("its momentum's coefficient is a sum over chunks that may "
                "differ in length, not their mean");
  // a * sum_t m_t is the mean of a * C * m_t: the coefficients the layer op
  // takes, scaled where a is not 1/C exactly (a constant 1/3 in f32).
  layer.momentumScale = decay->coeff * chunk;
  // The update, read as the fast weight's would be (W + U).
  if (failed(readUpdatePoly(layer, reader, update, why)))
    return failure();
  unsigned axisLabel = rates->labels[loop.getWindowAxes()[*index]];
  WindowFactor window{*index, {}};
  llvm::DenseMap<unsigned, unsigned> toOutput;
  for (auto [mine, theirs] : llvm::zip_equal(poly->labels, layer.stateLabels))
    toOutput[mine] = theirs;
  for (unsigned label : rates->labels) {
    if (label == axisLabel) {
      window.labels.push_back(layer.time);
      continue;
    }
    auto it = toOutput.find(label);
    if (it == toOutput.end() ||
        (!layer.units.contains(it->second) &&
         !llvm::is_contained(layer.streams, it->second)))
      return fail("its momentum coefficients are not one per token and "
                  "stream");
    window.labels.push_back(it->second);
  }
  if (layer.real(window.labels).size() != layer.streams.size() + 1)
    return fail("its momentum coefficients are not one per token and stream");
  layer.momentumRates = window;
  layer.lossScale = layer.step;
  layer.step = *step;
  // kvb_layer's momentum starts at zero and is not returned.
  std::optional<Polynomial> start =
      EinsumReader().read(loop.getInits()[*layer.momentum]);
  if (!start || !start->terms.empty())
    return fail("its momentum does not start at zero");
  if (!loop.getFinalStates()[*layer.momentum].use_empty())
    return fail("its final momentum is read after the loop");
  return success();
}

LogicalResult LayerReading::readUpdatePoly(LinearLayer &layer,
                                           EinsumReader &reader,
                                           const Polynomial &inPoly,
                                           std::string &why) {
  Value state = weightArg;
  const Polynomial *poly = &inPoly;
  // The update's labels of the state, in the output's reading; unit
  // dimensions the update alone has get labels of their own.
  llvm::DenseMap<unsigned, unsigned> toOutput;
  for (auto [mine, theirs] : llvm::zip_equal(poly->labels, layer.stateLabels))
    toOutput[mine] = theirs;
  auto unitOf = [&](unsigned label) -> std::optional<unsigned> {
    if (!reader.isUnit(label))
      return std::nullopt;
    auto [it, inserted] = toOutput.try_emplace(label, 0);
    if (inserted) {
      it->second = kUpdateUnits + layer.units.size();
      layer.units.insert(it->second);
    }
    return it->second;
  };
  const Term *update = nullptr, *residual = nullptr;
  bool keepsState = false;
  for (const Term &term : poly->terms) {
    SmallVector<const Factor *> states = term.factorsOf(state);
    if (states.empty()) {
      if (update)
        return why = "its update adds more than one product of keys and "
                     "values",
               failure();
      update = &term;
      continue;
    }
    if (!keepsState && term.coeff == 1.0 && term.factors.size() == 1 &&
        ArrayRef<unsigned>(states[0]->labels) == ArrayRef(poly->labels)) {
      keepsState = true;
      continue;
    }
    if (residual || states.size() != 1)
      return why = "its update is not the fast weight plus a term, or minus "
                   "the MSE loss's gradient (a decay, a delta rule with "
                   "per-token factors inside, momentum: not read yet)",
             failure();
    residual = &term;
  }
  if (!keepsState && residual)
    return why = "its update does not keep the fast weight whole (a decay, "
                 "another affine map of it: not read yet)",
           failure();
  if (!keepsState || !update)
    return why = "its update does not add a term to the fast weight", failure();
  layer.step = update->coeff;
  std::optional<unsigned> time;
  for (const Factor &factor : update->factors) {
    std::optional<unsigned> index = windowIndex(loop, factor.leaf);
    if (!index || hasDuplicates(factor.labels))
      return why = "its update reads something other than the chunk's "
                   "windows",
             failure();
    unsigned axisLabel = factor.labels[loop.getWindowAxes()[*index]];
    for (unsigned label : factor.labels)
      if (label != axisLabel)
        (void)unitOf(label);
    if (llvm::is_contained(poly->labels, axisLabel) ||
        (time && *time != axisLabel))
      return why = "its update does not sum over the chunk's tokens", failure();
    time = axisLabel;
    bool hasIn = false, hasOut = false;
    WindowFactor window{*index, {}};
    for (unsigned label : factor.labels) {
      if (label == axisLabel) {
        window.labels.push_back(layer.time);
        continue;
      }
      auto it = toOutput.find(label);
      if (it == toOutput.end())
        return why = "its update sums over a dimension other than time",
               failure();
      if (layer.units.contains(it->second)) {
        window.labels.push_back(it->second);
        continue;
      }
      hasIn |= it->second == layer.in;
      hasOut |= it->second == layer.out;
      window.labels.push_back(it->second);
    }
    SmallVector<unsigned> real = layer.real(window.labels);
    bool streamsOnly = llvm::all_of(real, [&](unsigned label) {
      return label == layer.time || llvm::is_contained(layer.streams, label);
    });
    if (hasIn && !hasOut && !layer.k.labels.size())
      layer.k = window;
    else if (hasOut && !hasIn && !layer.v.labels.size())
      layer.v = window;
    else if (!hasIn && !hasOut && !layer.lr && streamsOnly &&
             real.size() == layer.streams.size() + 1)
      layer.lr = window;
    else
      return why = "its update is not keys times values (times per-token "
                   "rates)",
             failure();
  }
  if (layer.k.labels.empty() || layer.v.labels.empty() ||
      layer.real(layer.k.labels).size() != layer.streams.size() + 2 ||
      layer.real(layer.v.labels).size() != layer.streams.size() + 2)
    return why = "its update is not keys times values per stream", failure();
  layer.updateTime = *time;
  if (residual &&
      failed(readResidual(layer, reader, *poly, *update, *residual, why)))
    return failure();
  return success();
}

/// The term `-s * sum_t k_t^T lr_t (k_t W)` of the MSE loss's descent step,
/// whose other half `s * sum_t k_t^T lr_t v_t` is `update`: the same keys
/// (in both places), rates and step.
LogicalResult
LayerReading::readResidual(LinearLayer &layer, const EinsumReader &reader,
                           const Polynomial &poly, const Term &update,
                           const Term &residual, std::string &why) {
  auto fail = [&] {
    why = "its update's term in the fast weight is not the MSE loss's "
          "residual k^T (k W) with the keys and rates of its k^T v term";
    return failure();
  };
  if (residual.coeff != -update.coeff)
    return fail();
  const Factor *weight = residual.factorsOf(weightArg)[0];
  // The weight's input dimension is summed (j); the rest are the update's.
  std::optional<unsigned> summedIn;
  for (auto [position, label] : llvm::enumerate(weight->labels)) {
    unsigned role = layer.stateLabels[position];
    if (layer.units.contains(role))
      continue;
    if (role == layer.in) {
      if (llvm::is_contained(poly.labels, label))
        return fail();
      summedIn = label;
    } else if (label != poly.labels[position]) {
      return fail();
    }
  }
  // In the update's labels: what each of the update's factors reads.
  llvm::DenseMap<unsigned, unsigned> toOutput;
  for (auto [mine, theirs] : llvm::zip_equal(poly.labels, layer.stateLabels))
    toOutput[mine] = theirs;
  auto roles = [&](const Factor &factor, unsigned time,
                   unsigned in) -> std::optional<SmallVector<unsigned>> {
    SmallVector<unsigned> result;
    for (unsigned label : factor.labels) {
      if (label != time && reader.isUnit(label))
        continue;
      if (label == time)
        result.push_back(layer.time);
      else if (label == in)
        result.push_back(layer.in);
      else if (auto it = toOutput.find(label); it != toOutput.end())
        result.push_back(it->second);
      else
        return std::nullopt;
    }
    return result;
  };
  Value keys = loop.getWindowArgs()[layer.k.sequence];
  Value rates = layer.lr ? loop.getWindowArgs()[layer.lr->sequence] : Value();
  SmallVector<const Factor *> keyFactors = residual.factorsOf(keys);
  if (keyFactors.size() != 2 || residual.factors.size() != (rates ? 4u : 3u) ||
      (rates && residual.factorsOf(rates).size() != 1))
    return fail();
  unsigned time = keyFactors[0]->labels[loop.getWindowAxes()[layer.k.sequence]];
  bool matched[2] = {false, false};
  for (const Factor *factor : keyFactors) {
    // One key meets the update's input, the other the weight's.
    std::optional<SmallVector<unsigned>> asUpdate =
        roles(*factor, time, /*in=*/~0u);
    std::optional<SmallVector<unsigned>> asWeight =
        roles(*factor, time, *summedIn);
    SmallVector<unsigned> keyRoles = layer.real(layer.k.labels);
    if (asUpdate && *asUpdate == keyRoles && !matched[0])
      matched[0] = true;
    else if (asWeight && *asWeight == keyRoles && !matched[1])
      matched[1] = true;
  }
  if (!matched[0] || !matched[1])
    return fail();
  if (rates) {
    std::optional<SmallVector<unsigned>> rateRoles =
        roles(*residual.factorsOf(rates)[0], time, ~0u);
    if (!rateRoles || *rateRoles != layer.real(layer.lr->labels))
      return fail();
  }
  layer.loss = LossKind::mse;
  return success();
}

/// The first op inside `op` (or `op` itself) that is not a sum, product,
/// negation or division by a constant; null if there is none.
static Operation *nonPolynomialOp(Operation *op) {
  auto polynomial = [](Operation *inner) {
    if (auto div = dyn_cast<arith::DivFOp>(inner))
      return static_cast<bool>(div.getRhs().getDefiningOp<arith::ConstantOp>());
    return isa<arith::MulFOp, arith::AddFOp, arith::SubFOp, arith::NegFOp,
               arith::ConstantOp, arith::TruncFOp, arith::ExtFOp,
               linalg::YieldOp>(inner);
  };
  if (!isa<linalg::LinalgOp>(op))
    return polynomial(op) ? nullptr : op;
  Operation *found = nullptr;
  op->walk([&](Operation *inner) {
    if (inner == op || polynomial(inner))
      return WalkResult::advance();
    found = inner;
    return WalkResult::interrupt();
  });
  return found;
}

/// The op that makes `leaf` a non-polynomial function of `states`: the op
/// defining it or, for a reshape the reader takes whole (dims merged as
/// B*H), the first such op in what it reshapes.
static Operation *culpritOf(Value leaf, const llvm::DenseSet<Value> &states) {
  SmallVector<Value> stack{leaf};
  llvm::DenseSet<Operation *> seen;
  while (!stack.empty()) {
    Operation *def = stack.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def)) {
      stack.push_back(def->getOperand(0));
      continue;
    }
    if (Operation *culprit = nonPolynomialOp(def))
      return culprit;
    if (def == leaf.getDefiningOp())
      return nullptr;
    for (Value operand : def->getOperands())
      if (llvm::any_of(states,
                       [&](Value state) { return readsValue(operand, state); }))
        stack.push_back(operand);
  }
  return nullptr;
}

bool LayerReading::bindsKeysToValues() {
  llvm::DenseSet<Value> states(loop.getStateArgs().begin(),
                               loop.getStateArgs().end());
  auto readsChunk = [&](Value leaf) {
    return llvm::any_of(loop.getWindowArgs(), [&](BlockArgument window) {
      return readsValue(leaf, window);
    });
  };
  EinsumReader reader(states);
  // A binding inside an op the reader does not expand counts too (an
  // update divided by its norm, a gradient through a SiLU, a reshape it
  // reads as a whole): the values such a leaf is made of are read in turn,
  // a few ops deep.
  constexpr unsigned kMaxDepth = 4;
  SmallVector<std::pair<Value, unsigned>> worklist;
  for (Value next : loop.getYield().getNextState())
    worklist.push_back({next, 0});
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    auto [value, depth] = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    std::optional<Polynomial> poly = reader.read(value);
    if (!poly)
      continue;
    for (const Term &term : poly->terms)
      for (const Factor &factor : term.factors) {
        for (unsigned label : factor.labels) {
          if (llvm::is_contained(poly->labels, label) || reader.isUnit(label))
            continue;
          unsigned bound = 0;
          for (const Factor &other : term.factors)
            if (!states.contains(other.leaf) &&
                llvm::is_contained(other.labels, label) &&
                readsChunk(other.leaf))
              ++bound;
          if (bound >= 2)
            return true;
        }
        Operation *leafOp = factor.leaf.getDefiningOp();
        if (depth >= kMaxDepth || !leafOp || states.contains(factor.leaf) ||
            !readsChunk(factor.leaf))
          continue;
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(leafOp))
          for (Value input : linalgOp.getDpsInputs())
            worklist.push_back({input, depth + 1});
        // A reshape that merges dims (batch and heads as B*H around a
        // batch_matmul) is a leaf when its parts meet the merged label
        // elsewhere; what it reshapes is read on its own.
        if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(leafOp))
          worklist.push_back({leafOp->getOperand(0), depth + 1});
        // Sums stacked into one tensor (ViT^3's kernel gradient, one sum
        // per kernel position) bind keys to values each.
        if (auto concat = dyn_cast<tensor::ConcatOp>(leafOp))
          for (Value input : concat.getInputs())
            worklist.push_back({input, depth + 1});
      }
  }
  return false;
}

std::optional<std::string> LayerReading::nonlinearity() {
  llvm::DenseSet<Value> states(loop.getStateArgs().begin(),
                               loop.getStateArgs().end());
  EinsumReader reader(states);
  for (Value output : loop.getYield().getOutputs()) {
    std::optional<Polynomial> poly = reader.read(output);
    if (!poly)
      continue;
    for (const Term &term : poly->terms) {
      unsigned degree = 0;
      for (const Factor &factor : term.factors) {
        if (states.contains(factor.leaf)) {
          ++degree;
          continue;
        }
        Operation *culprit = culpritOf(factor.leaf, states);
        if (!culprit || llvm::none_of(states, [&](Value state) {
              return readsValue(factor.leaf, state);
            }))
          continue;
        return "its output reads its state through '" +
               culprit->getName().getStringRef().str() +
               "', not by sums of products: a TTT layer with a nonlinear "
               "inner model, no linear attention";
      }
      if (degree > 1)
        return "its output multiplies " + std::to_string(degree) +
               " values of its state (an inner model of several layers): a "
               "TTT layer, no linear attention";
    }
  }
  return std::nullopt;
}

std::optional<std::string> LayerReading::stateRescaledByData() {
  size_t numStates = loop.getInits().size();
  for (unsigned i = 0; i < numStates; ++i) {
    Value next = nextState(i);
    std::optional<Polynomial> update = EinsumReader({stateArg(i)}).read(next);
    if (update && update->terms.size() == 1 &&
        update->terms[0].factors.size() == 1 &&
        update->terms[0].factors[0].leaf == next) {
      std::string culprit = "an op that is not a sum of products";
      if (Operation *op = next.getDefiningOp()) {
        culprit = "'" + op->getName().getStringRef().str() + "'";
        op->walk([&](Operation *inner) {
          if (inner != op &&
              !isa<arith::MulFOp, arith::AddFOp, arith::SubFOp, arith::DivFOp,
                   arith::NegFOp, arith::ConstantOp, linalg::YieldOp>(inner)) {
            culprit = "'" + inner->getName().getStringRef().str() + "'";
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
      }
      return "its state is updated through " + culprit +
             ", not by adding sums of products: no fast weight this "
             "reader takes (carried state that the data rescales, a "
             "running maximum or a normalizer, never is one)";
    }
  }
  return std::nullopt;
}

FailureOr<LinearLayer> LayerReading::read(std::string &why) {
  size_t numStates = loop.getInits().size();
  if (std::optional<std::string> reason = stateRescaledByData())
    return why = *reason, failure();
  if (std::optional<std::string> reason = nonlinearity())
    return why = *reason, failure();
  if (numStates < 1 || numStates > 2 || loop.getOutputs().size() != 1)
    return why = "it carries " + std::to_string(numStates) +
                 " state values and has " +
                 std::to_string(loop.getOutputs().size()) +
                 " outputs; read today: one fast weight (and its momentum), "
                 "one output",
           failure();
  for (Value init : loop.getInits()) {
    Type element = getElementTypeOrSelf(init.getType());
    if (!element.isF32() && !element.isF64())
      return why = "its state is not f32 or f64", failure();
  }
  LinearLayer layer;
  // The fast weight is the state the output reads; another is momentum.
  Value output = loop.getYield().getOutputs()[0];
  SmallVector<unsigned> read;
  for (unsigned i = 0; i < numStates; ++i)
    if (readsValue(output, stateArg(i)) || readsValue(output, nextState(i)))
      read.push_back(i);
  if (numStates == 2 && read.size() == 2) {
    // Reading W' reads M' too; the weight is the state whose next value
    // the output reads first.
    read.clear();
    for (unsigned i = 0; i < 2; ++i)
      if (readsValue(nextState(1 - i), nextState(i)))
        read.push_back(1 - i);
  }
  if (read.size() != 1)
    return why = "its output does not read exactly one of its states",
           failure();
  layer.weight = read[0];
  if (numStates == 2)
    layer.momentum = 1 - read[0];
  weightArg = stateArg(layer.weight);
  weightNext = nextState(layer.weight);
  if (failed(readOutput(layer, why)) || failed(readUpdate(layer, why)))
    return failure();
  if (loop.isSingleChunk() && layer.order != UpdateOrder::update_then_apply)
    return why = "one chunk applied before its update learns nothing",
           failure();
  return layer;
}

void buildLayer(RewriterBase &rewriter, ChunkLoopOp loop,
                const LinearLayer &layer) {
  Location loc = loop.getLoc();
  MLIRContext *context = loop.getContext();
  rewriter.setInsertionPoint(loop);
  LayoutBuilder layout(rewriter, loc, layer.streams);
  auto inStreams = [&](Value value, ArrayRef<unsigned> labels,
                       ArrayRef<unsigned> order) -> Value {
    return layout.permute(layout.dropUnits(value, labels, layer.units),
                          layer.real(labels), order);
  };
  SmallVector<Value> sequences = sequencesOverTheLoopLength(rewriter, loop);
  auto sequence = [&](const WindowFactor &window,
                      ArrayRef<unsigned> order) -> Value {
    Value value = sequences[window.sequence];
    return layout.toLayer(inStreams(value, window.labels, order), 4);
  };
  SmallVector<unsigned> qOrder(layer.streams), kOrder(layer.streams),
      vOrder(layer.streams), wOrder(layer.streams), lrOrder(layer.streams);
  qOrder.append({layer.time, layer.in});
  kOrder.append({layer.time, layer.in});
  vOrder.append({layer.time, layer.out});
  wOrder.append({layer.in, layer.out});
  lrOrder.push_back(layer.time);
  Value q = sequence(layer.q, qOrder);
  Value k = sequence(layer.k, kOrder);
  Value v = sequence(layer.v, vOrder);
  Value lr = layer.lr ? sequence(*layer.lr, lrOrder) : Value();
  Value weightInStreams =
      inStreams(loop.getInits()[layer.weight], layer.stateLabels, wOrder);
  Value momentum;
  if (layer.momentumRates) {
    Value rates = sequences[layer.momentumRates->sequence];
    momentum = layout.toLayer(
        inStreams(rates, layer.momentumRates->labels, lrOrder), 3);
    if (layer.momentumScale != 1.0)
      momentum = scaled(rewriter, loc, momentum, layer.momentumScale);
  }
  Value weight = layout.toLayer(weightInStreams, 4);

  auto model = FastWeightModelAttr::get(context, ModelKind::linear, {0}, false,
                                        Activation::silu);
  auto loss = LossAttr::get(context, layer.loss, APFloat(layer.lossScale),
                            Reduction::sum, APFloat(1e-6));
  NewtonSchulzAttr orthogonalize = newtonSchulzAttr(context, layer.muon);
  auto update = UpdateAttr::get(
      context, Sign::descent, APFloat(layer.step), ClipKind::none,
      orthogonalize, WeightNormKind::none, APFloat(1e-5), UpdateBase::weights);
  ScheduleAttr schedule = scheduleOf(loop, layer.order);
  auto qType = cast<RankedTensorType>(q.getType());
  auto wType = cast<RankedTensorType>(weight.getType());
  RankedTensorType outputType = layerOutputType(q, v);
  auto finalType =
      RankedTensorType::get({qType.getDimSize(0), qType.getDimSize(1),
                             wType.getDimSize(2), wType.getDimSize(3)},
                            wType.getElementType());
  bool wantsFinal = !loop.getFinalStates()[layer.weight].use_empty();
  auto op =
      KVBLayerOp::create(rewriter, loc, outputType,
                         wantsFinal ? TypeRange{finalType} : TypeRange{}, q, k,
                         v, ValueRange{weight}, lr, Value(), momentum, Value(),
                         Value(), model, loss, update, schedule);

  SmallVector<unsigned> yOrder(layer.streams);
  yOrder.append({layer.time, layer.out});
  Value qInStreams =
      inStreams(sequences[layer.q.sequence], layer.q.labels, qOrder);
  Value output = layout.fromLayer(op.getOutput(), qInStreams);
  output = layout.permute(output, yOrder, layer.real(layer.outputLabels));
  output = layout.addUnits(output, layer.outputLabels, layer.units);
  Value finalState;
  if (wantsFinal) {
    finalState = layout.fromLayer(op.getFinalWeights()[0], weightInStreams);
    finalState =
        layout.permute(finalState, wOrder, layer.real(layer.stateLabels));
    finalState = layout.addUnits(finalState, layer.stateLabels, layer.units);
  }
  // The momentum's final value is unread (the reading checked it).
  rewriter.replaceAllUsesWith(loop.getOutputs()[0], output);
  if (finalState)
    rewriter.replaceAllUsesWith(loop.getFinalStates()[layer.weight],
                                finalState);
  rewriter.eraseOp(loop);
}

} // namespace

std::string ttt::linalg_raise::whyNotATTTLayer(ChunkLoopOp loop) {
  LayerReading reading(loop);
  // A running maximum or normalizer (chunked online softmax) is refused
  // before anything else is read.
  if (std::optional<std::string> rescaled = reading.stateRescaledByData())
    return *rescaled;
  if (!reading.bindsKeysToValues())
    return "no state is updated by a sum over tokens of products of the "
           "chunk's data (keys bound to values): an ordinary recurrence";
  return "";
}

/// "Muon (5 Newton-Schulz steps)", with " in bf16" where they compute in it.
static std::string describeMuon(const NewtonSchulzReading &muon) {
  std::string text =
      "Muon (" + std::to_string(muon.steps) + " Newton-Schulz steps";
  if (muon.compute) {
    llvm::raw_string_ostream os(text);
    os << " in " << muon.compute;
  }
  return text + ")";
}

/// Whether `next` is `NS(U) + U`: Muon's result added to the update it
/// orthogonalized, with nothing of the weight it replaces (LaCT's minimal
/// bidirectional layer writes its step as `W = NS(U); W = W + U`).
static bool isMuonPlusUpdate(Value next) {
  auto add = next.getDefiningOp<linalg::GenericOp>();
  if (!add || add.getNumDpsInputs() != 2 || add.getNumReductionLoops() != 0)
    return false;
  SmallVector<AffineMap> maps = add.getIndexingMapsArray();
  Block &body = add.getRegion().front();
  auto sum = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!sum || maps[0] != maps[2] || maps[1] != maps[2] ||
      !maps[2].isIdentity() ||
      !llvm::is_contained(ValueRange{sum.getLhs(), sum.getRhs()},
                          body.getArgument(0)) ||
      !llvm::is_contained(ValueRange{sum.getLhs(), sum.getRhs()},
                          body.getArgument(1)))
    return false;
  // Muon may run in a narrower type, cast to it and back (as shipped):
  // readNewtonSchulz reads through both casts.
  for (unsigned i = 0; i < 2; ++i) {
    std::optional<NewtonSchulzReading> muon =
        readNewtonSchulz(add.getDpsInputs()[i]);
    if (muon && muon->input == add.getDpsInputs()[1 - i])
      return true;
  }
  return false;
}

/// Runs a model's reader on `loop`; where the reader recognized its model
/// but cannot build the layer, `why` becomes `named` and the reader's reason.
template <typename Layer>
static FailureOr<Layer>
readRecognized(ChunkLoopOp loop, std::string &why,
               FailureOr<Layer> (*reader)(ChunkLoopOp, bool &, std::string &),
               StringRef named) {
  bool recognized = false;
  std::string own;
  FailureOr<Layer> layer = reader(loop, recognized, own);
  if (failed(layer) && recognized)
    why = named.str() + own;
  return layer;
}

/// Whether a SwiGLU layer is read off `loop` when the linear reading fails
/// with `why`; if not, `why` becomes the reason of the reader that
/// recognized the model.
static FailureOr<SwiGLULayer> readAsSwiGLU(ChunkLoopOp loop, std::string &why) {
  FailureOr<SwiGLULayer> layer = readRecognized(
      loop, why, readSwiGLULayer,
      "a SwiGLU fast-weight network (W1 (silu(W0 x) * (W2 x))): a TTT layer "
      "with a nonlinear inner model, no linear attention; no ttt.kvb_layer "
      "yet: ");
  if (succeeded(layer))
    return layer;
  // The SwiGLU reader takes this step (ttt.kvb_layer's `base = update`);
  // for other models it is named.
  for (auto [index, next] : llvm::enumerate(loop.getYield().getNextState()))
    if (isMuonPlusUpdate(next)) {
      why = "its state " + std::to_string(index) +
            " becomes Muon's result plus the update it orthogonalized (W' "
            "= NS(U) + U, as LaCT's minimal bidirectional layer writes its "
            "step), which keeps nothing of the old weight (ttt.kvb_layer's "
            "`base = update`): read for SwiGLU networks only";
      break;
    }
  return failure();
}

/// Whether a GLU layer (ViT^3's) is read off `loop` when the other
/// readings fail with `why`; if not, `why` becomes the GLU reader's reason
/// where it recognized the model.
static FailureOr<FastWeightLayer> readAsGLU(ChunkLoopOp loop,
                                            std::string &why) {
  return readRecognized(
      loop, why, readGLULayer,
      "a GLU fast-weight network ((x Wa) * silu(x Wg)): a TTT layer with a "
      "nonlinear inner model, no linear attention; no ttt.kvb_layer yet: ");
}

/// Whether TTT-Linear's dual form is read off `loop` when the other
/// readings fail with `why`; if not, `why` becomes its reader's reason
/// where the output is a LayerNorm of what reads the state.
static FailureOr<DualFormLayer> readAsDualForm(ChunkLoopOp loop,
                                               std::string &why) {
  return readRecognized(
      loop, why, readDualFormLayer,
      "a fast weight read through a LayerNorm, fit by its squared error "
      "(TTT-Linear/MLP's dual form): a TTT layer with a nonlinear inner "
      "model, no linear attention; no ttt.kvb_layer yet: ");
}

/// Whether ViT^3's depth-wise convolution layer is read off `loop`; if
/// not, `why` becomes its reader's reason where it recognized the
/// convolution.
static FailureOr<DWConvLayer> readAsDWConv(ChunkLoopOp loop, std::string &why) {
  return readRecognized(loop, why, readDWConvLayer,
                        "a depth-wise convolution kernel as fast weight "
                        "(ViT^3's branch): no ttt.dwconv_layer yet: ");
}

std::string ttt::linalg_raise::whyNotAKVBLayer(ChunkLoopOp loop) {
  std::string why;
  if (succeeded(LayerReading(loop).read(why)) ||
      succeeded(readAsSwiGLU(loop, why)) || succeeded(readAsGLU(loop, why)) ||
      succeeded(readAsDualForm(loop, why)))
    return "";
  if (succeeded(readAsDWConv(loop, why)))
    return "a depth-wise convolution kernel as fast weight (ViT^3's "
           "branch), which ttt.dwconv_layer expresses (per-channel linear "
           "attention over the kernel's positions); not rewritten: one step "
           "of it is exact in its recurrent form, and the ONNX route writes "
           "back ttt.kvb_layer only";
  return why;
}

namespace {
struct TTTRaiseChunkLoopsPass
    : ttt::impl::TTTRaiseChunkLoopsBase<TTTRaiseChunkLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<ChunkLoopOp> loops;
    getOperation()->walk([&](ChunkLoopOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (ChunkLoopOp loop : loops) {
      std::string why;
      FailureOr<LinearLayer> layer = LayerReading(loop).read(why);
      if (failed(layer)) {
        if (FailureOr<SwiGLULayer> swiglu = readAsSwiGLU(loop, why);
            succeeded(swiglu)) {
          if (explain)
            loop.emitRemark()
                << "ttt-raise-chunk-loops: a SwiGLU fast-weight network "
                   "(dot loss"
                << (swiglu->lr[0] ? ", per-token rates" : "")
                << (swiglu->momentum ? ", momentum" : "")
                << (swiglu->muon ? ", " + describeMuon(*swiglu->muon)
                                 : std::string())
                << (swiglu->addsToUpdate
                        ? " added to the update it orthogonalized (W' = U + "
                          "s NS(U))"
                        : "")
                << (swiglu->weightNormEps ? ", weight norm" : "") << ", "
                << (loop.isSingleChunk()
                        ? std::string("one chunk")
                        : "chunks of " + std::to_string(loop.getChunk()) +
                              ", " + stringifyUpdateOrder(swiglu->order).str())
                << ")";
          buildSwiGLULayer(rewriter, loop, *swiglu);
          continue;
        }
        if (FailureOr<FastWeightLayer> glu = readAsGLU(loop, why);
            succeeded(glu)) {
          if (explain)
            loop.emitRemark()
                << "ttt-raise-chunk-loops: a GLU fast-weight network (dot "
                   "loss"
                << (glu->clip == ClipKind::output_channels
                        ? ", gradients clipped per output column"
                        : "")
                << ", "
                << (loop.isSingleChunk()
                        ? std::string("one chunk")
                        : "chunks of " + std::to_string(loop.getChunk()) +
                              ", " + stringifyUpdateOrder(glu->order).str())
                << ")";
          buildFastWeightLayer(rewriter, loop, *glu);
          continue;
        }
        if (FailureOr<DualFormLayer> dual = readAsDualForm(loop, why);
            succeeded(dual)) {
          if (explain)
            loop.emitRemark()
                << "ttt-raise-chunk-loops: "
                << (dual->twoLayers ? "a two-layer GELU fast-weight network"
                                    : "a linear fast weight")
                << (dual->bias ? " with bias" : "")
                << " read through a LayerNorm (squared-error loss, "
                << (dual->tokenEta.empty() && !dual->tokenEtaLeaf
                        ? ""
                        : "per-position and ")
                << "per-token rates, mini-batches of " << dual->chunkSize
                << ", causal dual form)";
          buildDualFormLayer(rewriter, loop, *dual);
          continue;
        }
        if (FailureOr<DWConvLayer> conv = readAsDWConv(loop, why);
            convolutions && succeeded(conv)) {
          if (explain)
            loop.emitRemark()
                << "ttt-raise-chunk-loops: a depth-wise convolution kernel ("
                << conv->kh << "x" << conv->kw << ", dot loss"
                << (conv->clipped ? ", gradients clipped per channel" : "")
                << ", one chunk)";
          buildDWConvLayer(rewriter, loop, *conv);
          continue;
        }
        if (explain)
          loop.emitRemark()
              << "ttt-raise-chunk-loops: not a ttt.kvb_layer: " << why;
        continue;
      }
      if (explain)
        loop.emitRemark()
            << "ttt-raise-chunk-loops: a linear fast weight "
               "("
            << stringifyLossKind(layer->loss) << " loss, "
            << (layer->lr ? "per-token rates, " : "")
            << (layer->momentum ? "momentum, " : "")
            << (layer->muon ? describeMuon(*layer->muon) + ", " : std::string())
            << (loop.isSingleChunk()
                    ? std::string("one chunk")
                    : "chunks of " + std::to_string(loop.getChunk()) + ", " +
                          stringifyUpdateOrder(layer->order).str())
            << ")";
      buildLayer(rewriter, loop, *layer);
    }
  }
};

} // namespace

std::optional<unsigned> ttt::linalg_raise::windowIndex(ChunkLoopOp loop,
                                                       Value leaf) {
  for (auto [index, arg] : llvm::enumerate(loop.getWindowArgs()))
    if (leaf == arg)
      return index;
  return std::nullopt;
}
