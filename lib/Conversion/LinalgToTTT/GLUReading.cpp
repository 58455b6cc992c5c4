//===- GLUReading.cpp - a GLU fast-weight layer off a chunk loop ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "GLUReading.h"
#include "ChunkLoopForms.h"
#include "EinsumPolynomial.h"
#include "ElementwiseReadings.h"
#include "GatedNetworkReader.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

namespace {

/// The weights in the model's operand order.
enum GLUWeight : unsigned { kLinear = 0, kGated = 1 };

class GLUReader : GatedNetworkReader {
public:
  explicit GLUReader(ChunkLoopOp loop) : GatedNetworkReader(loop) {}

  FailureOr<FastWeightLayer> read(bool &isGLU, std::string &why);

private:
  /// What a weight's next value adds to it: `step` times the gradient,
  /// clipped per output column or not.
  struct Move {
    Polynomial gradient;
    double step = 1.0;
    bool clipped = false;
  };

  LogicalResult readModel(FastWeightLayer &layer, bool &isGLU,
                          std::string &why);
  FailureOr<Move> readMove(const LayerWeight &weight, std::string &why);
  LogicalResult readKeysAndValues(FastWeightLayer &layer,
                                  const Polynomial &linearGradient,
                                  std::string &why);
  Polynomial expectedGradient(const FastWeightLayer &layer, unsigned which);

  std::optional<unsigned> stateOf(Value leaf, bool &updated) {
    for (unsigned i = 0, e = loop.getInits().size(); i < e; ++i)
      if (leaf == stateArg(i) || leaf == nextState(i)) {
        updated = leaf == nextState(i);
        return i;
      }
    return std::nullopt;
  }
};

LogicalResult GLUReader::readModel(FastWeightLayer &layer, bool &isGLU,
                                   std::string &why) {
  constexpr const char *kNotAGLU =
      "its output is not a product of two weights, the queries twice and a "
      "sigmoid";
  std::optional<Polynomial> poly =
      modelReader.read(loop.getYield().getOutputs()[0]);
  if (!poly || poly->terms.size() != 1)
    return why = "its output is not one product", failure();
  const Term &term = poly->terms[0];
  struct WeightFactor {
    unsigned state;
    bool updated;
    const Factor *factor;
  };
  SmallVector<WeightFactor> weights;
  SmallVector<const Factor *> queries;
  const Factor *sigma = nullptr;
  for (const Factor &factor : term.factors) {
    bool updated = false;
    if (std::optional<unsigned> state = stateOf(factor.leaf, updated))
      weights.push_back({*state, updated, &factor});
    else if (sigmoidInput(factor.leaf) && !sigma)
      sigma = &factor;
    else if (windowOf(factor.leaf))
      queries.push_back(&factor);
    else
      return why = kNotAGLU, failure();
  }
  if (weights.size() != 2 || queries.size() != 2 || !sigma ||
      queries[0]->leaf != queries[1]->leaf ||
      weights[0].state == weights[1].state)
    return why = kNotAGLU, failure();
  // Wg is the weight under the sigmoid, read as the output reads it.
  std::optional<Polynomial> gate = modelReader.read(sigmoidInput(sigma->leaf));
  if (!gate || gate->terms.size() != 1 || gate->terms[0].factors.size() != 2)
    return why = "its sigmoid does not read the queries times a weight",
           failure();
  const WeightFactor *gated = nullptr, *linear = nullptr;
  for (const Factor &factor : gate->terms[0].factors)
    for (const WeightFactor &weight : weights)
      if (factor.leaf == weight.factor->leaf)
        gated = &weight;
  if (!gated)
    return why = "its sigmoid does not read one of its two weights as the "
                 "output does",
           failure();
  linear = &weights[gated == &weights[0] ? 1 : 0];
  // x Wg as the output reads it is the sigmoid's input.
  const Factor *gateQuery = nullptr, *linearQuery = nullptr;
  for (const Factor *query : queries) {
    Polynomial product;
    product.labels = sigma->labels;
    product.terms.push_back(
        Term{gate->terms[0].coeff, {*gated->factor, *query}});
    if (equivalent(product, *gate, [](Value a, Value b) { return a == b; })) {
      gateQuery = query;
      linearQuery = queries[query == queries[0] ? 1 : 0];
      break;
    }
  }
  if (!gateQuery)
    return why = "its sigmoid's input is not what it multiplies", failure();
  isGLU = true;
  if (term.coeff != 1.0 || gate->terms[0].coeff != 1.0)
    return why = "its output scales the GLU's", failure();
  // Roles, from where each label occurs.
  auto has = [](const Factor *factor, unsigned label) {
    return llvm::is_contained(factor->labels, label);
  };
  llvm::DenseMap<unsigned, unsigned> roles;
  unsigned numStreams = 0;
  for (unsigned label : poly->labels) {
    bool inQuery = has(gateQuery, label), inWeight = has(linear->factor, label);
    if (inQuery && inWeight)
      roles[label] = kStream + numStreams++;
    else if (inQuery)
      roles[label] = kTime;
    else if (inWeight)
      roles[label] = kOut;
    else
      return why = "a dimension of its output is neither the queries' nor "
                   "the weights'",
             failure();
  }
  layer.numStreams = numStreams;
  if (llvm::count_if(poly->labels,
                     [&](unsigned label) { return roles[label] == kTime; }) !=
          1 ||
      llvm::count_if(poly->labels,
                     [&](unsigned label) { return roles[label] == kOut; }) != 1)
    return why = "its output's dimensions are not streams, time and "
                 "features",
           failure();
  // Each weight's input is the label it sums with its query.
  auto rolesOfPair = [&](const Factor *weight, const Factor *query)
      -> std::optional<
          std::pair<SmallVector<unsigned>, SmallVector<unsigned>>> {
    llvm::DenseMap<unsigned, unsigned> local(roles);
    for (unsigned label : weight->labels)
      if (!llvm::is_contained(poly->labels, label) && has(query, label)) {
        if (local.count(label))
          return std::nullopt;
        local[label] = kIn;
      }
    SmallVector<unsigned> weightRoles, queryRoles;
    for (unsigned label : weight->labels) {
      auto it = local.find(label);
      if (it != local.end())
        weightRoles.push_back(it->second);
      else if (modelReader.isUnit(label))
        weightRoles.push_back(nextUnit++);
      else
        return std::nullopt;
    }
    for (unsigned label : query->labels) {
      auto it = local.find(label);
      if (it == local.end() || it->second == kOut)
        return std::nullopt;
      queryRoles.push_back(it->second);
    }
    return std::make_pair(weightRoles, queryRoles);
  };
  auto linearRoles = rolesOfPair(linear->factor, linearQuery);
  auto gatedRoles = rolesOfPair(gated->factor, gateQuery);
  if (!linearRoles || !gatedRoles || linearRoles->second != gatedRoles->second)
    return why = "its output is not (x Wa) * silu(x Wg) with one x", failure();
  for (const auto *weightRoles : {&linearRoles->first, &gatedRoles->first})
    if (llvm::count(*weightRoles, kIn) != 1 ||
        llvm::count(*weightRoles, kOut) != 1 ||
        weightRoles->size() != numStreams + 2)
      return why = "a weight is not one matrix per stream", failure();
  layer.weights.push_back({linear->state, linearRoles->first, kIn, kOut});
  layer.weights.push_back({gated->state, gatedRoles->first, kIn, kOut});
  if (linear->updated != gated->updated)
    return why = "its output reads its weights at different points of the "
                 "update",
           failure();
  layer.order = linear->updated ? UpdateOrder::update_then_apply
                                : UpdateOrder::apply_then_update;
  layer.q.sequence = *windowOf(gateQuery->leaf);
  layer.q.roles = gatedRoles->second;
  for (unsigned label : poly->labels)
    layer.outputRoles.push_back(roles.lookup(label));
  if (llvm::count(layer.q.roles, kTime) != 1 ||
      llvm::count(layer.q.roles, kIn) != 1)
    return why = "its queries' dimensions are not streams, time and features",
           failure();
  // One chunk has no window axis: time is where the math puts it.
  if (!loop.isSingleChunk() &&
      (layer.q.roles[loop.getWindowAxes()[layer.q.sequence]] != kTime ||
       roles[poly->labels[loop.getOutputAxes()[0]]] != kTime))
    return why = "its queries' time axis is not the loop's", failure();
  return success();
}

FailureOr<GLUReader::Move> GLUReader::readMove(const LayerWeight &weight,
                                               std::string &why) {
  Value arg = stateArg(weight.state);
  std::optional<Polynomial> poly = reader.read(nextState(weight.state));
  if (!poly)
    return why = "its update is not a sum of products", failure();
  Move move;
  move.gradient.labels = poly->labels;
  bool keeps = false;
  for (const Term &term : poly->terms) {
    if (!keeps && term.coeff == 1.0 && term.factors.size() == 1 &&
        term.factors[0].leaf == arg &&
        ArrayRef<unsigned>(term.factors[0].labels) ==
            ArrayRef<unsigned>(poly->labels)) {
      keeps = true;
      continue;
    }
    move.gradient.terms.push_back(term);
  }
  if (!keeps)
    return why = "a weight is not updated by adding a term to it", failure();
  // ViT^3's clipping, G / (|G| + 1) per output column: the division is one
  // leaf of the update, and the gradient is what it divides.
  if (move.gradient.terms.size() != 1 ||
      move.gradient.terms[0].factors.size() != 1)
    return move;
  const Term &term = move.gradient.terms[0];
  const Factor &factor = term.factors[0];
  std::optional<ColumnNormDivision> clip = readColumnNormDivision(factor.leaf);
  if (!clip)
    return move;
  if (clip->x.getType() != arg.getType() ||
      ArrayRef<unsigned>(factor.labels) != ArrayRef<unsigned>(poly->labels))
    return why = "its clipped gradient is not shaped as its weight", failure();
  if (clip->eps != 1.0)
    return why = "its gradient is divided by its column norms plus " +
                 std::to_string(clip->eps) +
                 ", not plus 1 (the clipping ttt.kvb_layer knows)",
           failure();
  if (weight.roles[clip->axis] != kIn)
    return why = "its gradient is clipped over other than the weight's "
                 "inputs",
           failure();
  std::optional<Polynomial> gradient = reader.read(clip->x);
  if (!gradient)
    return why = "the gradient it clips is not a sum of products", failure();
  move.step = term.coeff;
  move.clipped = true;
  move.gradient = *gradient;
  return move;
}

LogicalResult GLUReader::readKeysAndValues(FastWeightLayer &layer,
                                           const Polynomial &linearGradient,
                                           std::string &why) {
  constexpr const char *kNotBound = "Wa's update is not a sum over tokens of "
                                    "keys times values times the gate of the "
                                    "keys";
  auto fail = [&] {
    why = kNotBound;
    return failure();
  };
  FailureOr<KeysGate> gate = readKeysGate(
      loop, reader, linearGradient, layer.weights[kGated].state,
      layer.weights[kGated].roles, layer.numStreams, kNotBound, "Wg", why);
  if (failed(gate))
    return failure();
  keysSigmoid = gate->sigmoid;
  layer.k = gate->keys;
  sigmoidRoles = gate->sigmoidRoles;
  const Term &term = linearGradient.terms[0];
  const Factor *sigma = nullptr;
  for (const Factor &factor : term.factors)
    if (factor.leaf == keysSigmoid)
      sigma = &factor;
  // The values: the window Wa's gradient reads with the output features.
  llvm::DenseMap<unsigned, unsigned> termRoles;
  for (auto [label, role] :
       llvm::zip_equal(linearGradient.labels, layer.weights[kLinear].roles))
    termRoles[label] = role;
  for (auto [label, role] : llvm::zip_equal(sigma->labels, sigmoidRoles))
    termRoles.try_emplace(label, role);
  for (const Factor &factor : term.factors) {
    std::optional<unsigned> window = windowOf(factor.leaf);
    if (!window || *window == layer.k.sequence)
      continue;
    SmallVector<unsigned> factorRoles;
    for (unsigned label : factor.labels) {
      auto it = termRoles.find(label);
      if (it != termRoles.end())
        factorRoles.push_back(it->second);
      else if (reader.isUnit(label))
        factorRoles.push_back(nextUnit++);
      else
        return fail();
    }
    if (llvm::count(factorRoles, kOut) == 1 &&
        llvm::count(factorRoles, kTime) == 1 && layer.v.roles.empty())
      layer.v = RoledWindow{*window, factorRoles, Value()};
  }
  if (layer.v.roles.empty() ||
      (!loop.isSingleChunk() &&
       layer.v.roles[loop.getWindowAxes()[layer.v.sequence]] != kTime))
    return why = "Wa's update does not read values over time and the output "
                 "features",
           failure();
  return success();
}

Polynomial GLUReader::expectedGradient(const FastWeightLayer &layer,
                                       unsigned which) {
  const LayerWeight &linear = layer.weights[kLinear],
                    &gated = layer.weights[kGated];
  Value wa = stateArg(linear.state), wg = stateArg(gated.state);
  Value keys = loop.getWindowArgs()[layer.k.sequence];
  Value values = loop.getWindowArgs()[layer.v.sequence];
  unsigned fresh = kFresh;
  unsigned i1 = fresh++, i2 = fresh++;
  // x Wa and x Wg for the keys, summed over their own input labels.
  auto times = [&](RoleTerm &term, Value weight, const LayerWeight &roles,
                   unsigned in) {
    term.add(weight, roles.roles, {{kIn, in}})
        .add(keys, layer.k.roles, {{kIn, in}});
  };
  auto base = [&](double coeff) {
    RoleTerm term(coeff, fresh);
    term.add(keys, layer.k.roles).add(values, layer.v.roles);
    return term;
  };
  Polynomial poly;
  poly.labels = layer.weights[which].roles;
  if (which == kLinear) {
    // d/dWa <(k Wa) * silu(k Wg), v> = k^T (v * (k Wg) * sigma(k Wg)).
    RoleTerm term = base(1.0);
    times(term, wg, gated, i2);
    term.add(keysSigmoid, sigmoidRoles);
    poly.terms.push_back(term.term);
    return poly;
  }
  // d/dWg = k^T (v * (k Wa) * silu'(k Wg)), silu'(z) = s + z s - z s^2.
  for (unsigned power : {0u, 1u, 2u}) {
    RoleTerm term = base(power == 2 ? -1.0 : 1.0);
    times(term, wa, linear, i1);
    if (power > 0)
      times(term, wg, gated, i2);
    for (unsigned s = 0; s < std::max(power, 1u); ++s)
      term.add(keysSigmoid, sigmoidRoles);
    poly.terms.push_back(term.term);
  }
  return poly;
}

FailureOr<FastWeightLayer> GLUReader::read(bool &isGLU, std::string &why) {
  isGLU = false;
  for (Value init : loop.getInits())
    if (!getElementTypeOrSelf(init.getType()).isF32())
      return why = "its state is not f32", failure();
  FastWeightLayer layer;
  if (failed(readModel(layer, isGLU, why)))
    return failure();
  Value network = loop.getYield().getOutputs()[0];
  for (Value other : loop.getYield().getOutputs().drop_front())
    if (!loop.isSingleChunk() || failed(madeOf(other, network)))
      return why = "it has " + std::to_string(loop.getOutputs().size()) +
                   " outputs, and the others are not made of the network's "
                   "alone in one step",
             failure();
  if (loop.getInits().size() != 2)
    return why = "it carries " + std::to_string(loop.getInits().size() - 2) +
                 " more state values than its two weights",
           failure();
  if (loop.isSingleChunk() && layer.order != UpdateOrder::update_then_apply)
    return why = "one chunk applied before its update learns nothing",
           failure();
  SmallVector<Move> moves;
  for (const LayerWeight &weight : layer.weights) {
    FailureOr<Move> move = readMove(weight, why);
    if (failed(move))
      return failure();
    moves.push_back(*move);
  }
  if (moves[kLinear].clipped != moves[kGated].clipped ||
      moves[kLinear].step != moves[kGated].step)
    return why = "its weights are moved differently (steps or clipping)",
           failure();
  if (failed(readKeysAndValues(layer, moves[kLinear].gradient, why)))
    return failure();
  // Each gradient must be the dot loss's for the GLU its output applies,
  // all with one factor.
  static const char *const names[] = {"Wa", "Wg"};
  std::optional<double> scale;
  for (unsigned which : {kLinear, kGated}) {
    Polynomial expected = expectedGradient(layer, which);
    std::optional<double> ratio = scaleOf(expected, moves[which].gradient);
    if (!ratio)
      return why = std::string(names[which]) +
                   "'s update is not the dot loss's gradient step for the "
                   "GLU its output applies",
             failure();
    if (scale && std::abs(*scale - *ratio) > 1e-12 * std::abs(*scale))
      return why = "its weights' updates are scaled differently", failure();
    scale = ratio;
  }
  // W' = W + c clip(r E), E the gradient direction above; the op moves by
  // step * clip(U) with U = +-|loss scale| E, so a negative c flips r.
  double step = moves[kLinear].step, ratio = *scale;
  if (step < 0) {
    step = -step;
    ratio = -ratio;
  }
  layer.lossScale = ratio;
  layer.step = step;
  layer.clip =
      moves[kLinear].clipped ? ClipKind::output_channels : ClipKind::none;
  layer.model =
      FastWeightModelAttr::get(loop.getContext(), ModelKind::glu,
                               {kLinear, kGated}, false, Activation::silu);
  return layer;
}

} // namespace

FailureOr<FastWeightLayer>
linalg_raise::readGLULayer(ChunkLoopOp loop, bool &isGLU, std::string &why) {
  return GLUReader(loop).read(isGLU, why);
}
