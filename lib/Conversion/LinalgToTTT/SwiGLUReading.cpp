//===- SwiGLUReading.cpp - a SwiGLU fast-weight layer off a chunk loop ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "SwiGLUReading.h"
#include "ChunkLoopForms.h"
#include "EinsumPolynomial.h"
#include "ElementwiseReadings.h"
#include "FastWeightLayer.h"
#include "GatedNetworkReader.h"
#include "LayerLayout.h"
#include "MomentumReading.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

namespace {

constexpr const char *kUnprovenNorms =
    "a weight is divided by its column norms and scaled by what the reader "
    "cannot prove to be its initial value's (norms computed from the initial "
    "weight, or a constant initial weight and its norms, are checked)";

class SwiGLUReader : GatedNetworkReader {
public:
  explicit SwiGLUReader(ChunkLoopOp loop, ArrayRef<unsigned> pairing = {},
                        ArrayRef<bool> transposed = {})
      : GatedNetworkReader(loop, pairing, transposed) {}

  FailureOr<SwiGLULayer> read(bool &isSwiGLU, std::string &why);

private:
  /// A weight as a term reads it: its state, and whether before the
  /// update, after it, or after it renormalized.
  struct WeightFactor {
    unsigned state = 0;
    bool updated = false;
    bool normed = false;
    const Factor *factor = nullptr;
  };

  /// The factors of `term` that are weights; the renormalization's target
  /// norms are dropped from `rest` and checked.
  LogicalResult weightFactors(const Term &term, SmallVector<WeightFactor> &out,
                              SmallVector<const Factor *> &rest,
                              std::string &why);
  LogicalResult readModel(SwiGLULayer &layer, std::string &why);
  LogicalResult readKeys(SwiGLULayer &layer, const Polynomial &outUpdate,
                         std::string &why);
  LogicalResult readUpdates(SwiGLULayer &layer, std::string &why);
  /// The update that state `i`'s next value adds (before any
  /// renormalization), and the step it is added with.
  FailureOr<Polynomial> readAdded(SwiGLULayer &layer, unsigned i,
                                  std::string &why);
  /// The update U of weight `i` whose momentum moves it (`next` the
  /// weight's next value before any renormalization).
  FailureOr<Polynomial> readMomentum(SwiGLULayer &layer, unsigned i, Value next,
                                     std::string &why);
  /// The column-norm division `divided` if `target` scales it back to the
  /// column norms of state `state`'s initial value.
  std::optional<ColumnNormDivision>
  normedToInitial(const Factor &divided, const Factor &target, unsigned state);
  /// Records the step that moves a weight and its Muon, if any: every
  /// weight is moved alike, or `differently` says why not.
  LogicalResult takeMove(SwiGLULayer &layer, double step,
                         const std::optional<NewtonSchulzReading> &muon,
                         StringRef differently, std::string &why,
                         bool addsToUpdate = false);
  /// A next weight `next` that keeps nothing of the weight: Muon's result
  /// plus the update it orthogonalized. Returns that update.
  FailureOr<Polynomial> readMuonPlusUpdate(SwiGLULayer &layer, Value next,
                                           std::string &why);
  /// The roles of `factor`'s dimensions, from labels already given roles;
  /// unit dimensions that have none get unit roles.
  std::optional<SmallVector<unsigned>>
  rolesOf(const Factor &factor, const llvm::DenseMap<unsigned, unsigned> &map);
  Polynomial expectedUpdate(const SwiGLULayer &layer, unsigned which);
  /// Whether the sequence of `window` (read where weight `which`'s update
  /// binds keys) is the keys times per-token rates, made before the loop;
  /// records the rates as that weight's.
  void readKeysWithRates(SwiGLULayer &layer, unsigned which, unsigned window,
                         ArrayRef<unsigned> roles);

  /// The eps of the weight norm, and the axis each weight is normed over.
  double normEps = 0.0;
  llvm::DenseMap<unsigned, unsigned> normAxes;
  /// Whether the states carried on are the renormalized weights.
  bool nextIsNormed = false;
  /// Whether a weight's step and Muon were recorded (takeMove).
  bool moved = false;
};

LogicalResult SwiGLUReader::weightFactors(const Term &term,
                                          SmallVector<WeightFactor> &out,
                                          SmallVector<const Factor *> &rest,
                                          std::string &why) {
  SmallVector<const Factor *> others;
  for (const Factor &factor : term.factors) {
    bool found = false;
    for (unsigned i = 0, e = loop.getInits().size(); i < e; ++i) {
      if (factor.leaf == stateArg(i) || factor.leaf == nextState(i)) {
        out.push_back({i, factor.leaf == nextState(i), false, &factor});
        found = true;
        break;
      }
      std::optional<ColumnNormDivision> norm =
          readColumnNormDivision(factor.leaf);
      if (norm && norm->x == nextState(i)) {
        out.push_back({i, true, true, &factor});
        found = true;
        break;
      }
    }
    if (!found)
      others.push_back(&factor);
  }
  // Each renormalized weight is multiplied by its initial column norms.
  for (WeightFactor &weight : out) {
    if (!weight.normed)
      continue;
    std::optional<ColumnNormDivision> norm;
    auto target = llvm::find_if(others, [&](const Factor *factor) {
      return factor &&
             (norm = normedToInitial(*weight.factor, *factor, weight.state));
    });
    if (target == others.end())
      return why = kUnprovenNorms, failure();
    *target = nullptr;
    normEps = norm->eps;
    normAxes[weight.state] = norm->axis;
  }
  for (const Factor *factor : others)
    if (factor)
      rest.push_back(factor);
  return success();
}

std::optional<ColumnNormDivision>
SwiGLUReader::normedToInitial(const Factor &divided, const Factor &target,
                              unsigned state) {
  std::optional<ColumnNormDivision> norm = readColumnNormDivision(divided.leaf);
  // Norms taken before the loop reach the body as an invariant.
  Value norms = target.leaf;
  for (auto [arg, operand] :
       llvm::zip(loop.getInvariantArgs(), loop.getInvariants()))
    if (norms == arg)
      norms = operand;
  if (!norm)
    return std::nullopt;
  // One chunk reads its initial weight as the state itself: the norms the
  // step takes of it are the initial ones.
  // A state holding the transpose of its weight has the matrix's two
  // dimensions swapped, the normed axis with them.
  SmallVector<unsigned> labels = stateRoles(divided.labels, state);
  unsigned axis = norm->axis, rank = labels.size();
  if (isTransposed(state) && axis + 2 >= rank)
    axis = axis == rank - 1 ? rank - 2 : rank - 1;
  if (holdsColumnNorms(norms, target.labels, loop.getInits()[state], labels,
                       axis) ||
      (loop.isSingleChunk() &&
       holdsColumnNorms(norms, target.labels, stateArg(state), labels, axis)))
    return norm;
  return std::nullopt;
}

LogicalResult
SwiGLUReader::takeMove(SwiGLULayer &layer, double step,
                       const std::optional<NewtonSchulzReading> &muon,
                       StringRef differently, std::string &why,
                       bool addsToUpdate) {
  auto same = [&](const NewtonSchulzReading &a, const NewtonSchulzReading &b) {
    return a.steps == b.steps && a.coeffs == b.coeffs && a.eps == b.eps &&
           a.compute == b.compute;
  };
  if (moved &&
      (layer.step != step || layer.muon.has_value() != muon.has_value() ||
       (muon && !same(*layer.muon, *muon)) ||
       layer.addsToUpdate != addsToUpdate))
    return why = differently.str(), failure();
  moved = true;
  layer.step = step;
  layer.muon = muon;
  layer.addsToUpdate = addsToUpdate;
  return success();
}

std::optional<SmallVector<unsigned>>
SwiGLUReader::rolesOf(const Factor &factor,
                      const llvm::DenseMap<unsigned, unsigned> &map) {
  SmallVector<unsigned> roles;
  for (unsigned label : factor.labels) {
    auto it = map.find(label);
    if (it != map.end())
      roles.push_back(it->second);
    else if (reader.isUnit(label))
      roles.push_back(nextUnit++);
    else
      return std::nullopt;
  }
  return roles;
}

LogicalResult SwiGLUReader::readModel(SwiGLULayer &layer, std::string &why) {
  Value output = loop.getYield().getOutputs()[0];
  std::optional<Polynomial> poly = modelReader.read(output);
  if (!poly || poly->terms.size() != 1)
    return why = "its output is not one product", failure();
  const Term &term = poly->terms[0];
  SmallVector<WeightFactor> weights;
  SmallVector<const Factor *> rest;
  if (failed(weightFactors(term, weights, rest, why)))
    return failure();
  if (weights.size() != 3 || rest.size() != 3)
    return why = "its output is not a product of three weights, the "
                 "queries twice and a sigmoid",
           failure();
  const Factor *sigma = nullptr;
  SmallVector<const Factor *> queries;
  for (const Factor *factor : rest) {
    if (sigmoidInput(factor->leaf))
      sigma = factor;
    else if (windowOf(factor->leaf))
      queries.push_back(factor);
  }
  if (!sigma || queries.size() != 2 || queries[0]->leaf != queries[1]->leaf)
    return why = "its output is not a product of three weights, the "
                 "queries twice and a sigmoid",
           failure();
  if (term.coeff != 1.0)
    return why = "its output scales the SwiGLU network's", failure();
  // Roles, from where each label occurs.
  auto has = [](const Factor *factor, unsigned label) {
    return llvm::is_contained(factor->labels, label);
  };
  const WeightFactor *out = nullptr;
  for (const WeightFactor &weight : weights)
    for (unsigned label : weight.factor->labels)
      if (llvm::is_contained(poly->labels, label) && !has(sigma, label))
        out = &weight;
  if (!out)
    return why = "no weight of its output gives the output's features",
           failure();
  llvm::DenseMap<unsigned, unsigned> roles;
  unsigned numStreams = 0;
  for (unsigned label : poly->labels) {
    bool inSigma = has(sigma, label), inOut = has(out->factor, label);
    if (inSigma && inOut)
      roles[label] = kStream + numStreams++;
    else if (inSigma)
      roles[label] = kTime;
    else if (inOut)
      roles[label] = kOut;
  }
  for (unsigned label : sigma->labels)
    if (!roles.count(label))
      roles[label] = kHidden;
  for (const Factor *query : queries)
    for (unsigned label : query->labels)
      if (!roles.count(label))
        roles[label] = kIn;
  layer.numStreams = numStreams;
  auto countRole = [&](ArrayRef<unsigned> labels, unsigned role) {
    return llvm::count_if(labels, [&](unsigned label) {
      auto it = roles.find(label);
      return it != roles.end() && it->second == role;
    });
  };
  if (countRole(poly->labels, kTime) != 1 ||
      countRole(poly->labels, kOut) != 1 ||
      countRole(sigma->labels, kHidden) != 1 ||
      (!loop.isSingleChunk() &&
       roles[poly->labels[loop.getOutputAxes()[0]]] != kTime) ||
      poly->labels.size() != numStreams + 2)
    return why = "its output's dimensions are not streams, time and "
                 "features",
           failure();
  // W0 is the weight under the sigmoid, W2 the other one.
  std::optional<Polynomial> gate = modelReader.read(sigmoidInput(sigma->leaf));
  SmallVector<WeightFactor> gateWeights;
  SmallVector<const Factor *> gateRest;
  if (!gate || gate->terms.size() != 1 ||
      failed(weightFactors(gate->terms[0], gateWeights, gateRest, why)) ||
      gateWeights.size() != 1 || gateRest.size() != 1 ||
      gateRest[0]->leaf != queries[0]->leaf)
    return why = "its sigmoid does not read the queries times a weight",
           failure();
  const WeightFactor *w0 = nullptr, *w2 = nullptr;
  for (const WeightFactor &weight : weights) {
    if (&weight == out)
      continue;
    (weight.state == gateWeights[0].state ? w0 : w2) = &weight;
  }
  if (!w0 || !w2)
    return why = "its sigmoid does not read one of the other two weights",
           failure();
  // x W0 as the output reads it is the sigmoid's input; x W2 reads the
  // same x (one query factor is the other but for the summed feature) with
  // W2 in any orientation over the same streams and hidden features.
  Polynomial gateRead;
  gateRead.labels = gate->labels;
  gateRead.terms.push_back(
      Term{gate->terms[0].coeff, {*gateWeights[0].factor, *gateRest[0]}});
  const Factor *gateQuery = nullptr;
  for (const Factor *query : queries) {
    Polynomial product;
    product.labels = sigma->labels;
    product.terms.push_back(Term{gate->terms[0].coeff, {*w0->factor, *query}});
    if (equivalent(product, gateRead,
                   [](Value a, Value b) { return a == b; })) {
      gateQuery = query;
      break;
    }
  }
  const Factor *upQuery = queries[gateQuery == queries[0] ? 1 : 0];
  auto summedWith = [](const Factor *a, const Factor *b) {
    SmallVector<unsigned> shared;
    for (unsigned label : a->labels)
      if (llvm::is_contained(b->labels, label))
        shared.push_back(label);
    return shared;
  };
  auto without = [](const Factor *factor, unsigned label) {
    SmallVector<unsigned> rest;
    for (unsigned l : factor->labels)
      if (l != label)
        rest.push_back(l);
    return rest;
  };
  bool sameX = false;
  if (gateQuery) {
    SmallVector<unsigned> in0 = summedWith(w0->factor, gateQuery);
    SmallVector<unsigned> in2 = summedWith(w2->factor, upQuery);
    auto notStreams = [&](ArrayRef<unsigned> labels) {
      SmallVector<unsigned> result;
      for (unsigned label : labels)
        if (!llvm::is_contained(poly->labels, label))
          result.push_back(label);
      return result;
    };
    in0 = notStreams(in0);
    in2 = notStreams(in2);
    if (in0.size() == 1 && in2.size() == 1) {
      SmallVector<unsigned> q0 = without(gateQuery, in0[0]),
                            q2 = without(upQuery, in2[0]);
      auto position = [](const Factor *factor, unsigned label) {
        return llvm::find(factor->labels, label) - factor->labels.begin();
      };
      SmallVector<unsigned> a = without(w0->factor, in0[0]),
                            b = without(w2->factor, in2[0]);
      llvm::sort(a);
      llvm::sort(b);
      sameX = q0 == q2 &&
              position(gateQuery, in0[0]) == position(upQuery, in2[0]) &&
              a == b;
    }
  }
  if (!sameX)
    return why = "its output is not W1 (silu(W0 x) * (W2 x)) with one x",
           failure();
  auto allRead = [&](ArrayRef<unsigned> labels) {
    return llvm::all_of(labels,
                        [&](unsigned label) { return roles.count(label); });
  };
  if (!allRead(w0->factor->labels) || !allRead(out->factor->labels) ||
      !allRead(w2->factor->labels) || !allRead(gateQuery->labels) ||
      !allRead(poly->labels))
    return why = "a dimension of its output's factors has no role in the "
                 "SwiGLU network (a unit dimension)",
           failure();
  std::array<const WeightFactor *, 3> ordered{w0, out, w2};
  for (auto [i, weight] : llvm::enumerate(ordered)) {
    layer.weights[i] = weight->state;
    layer.weightRoles[i].clear();
    for (unsigned label : weight->factor->labels)
      layer.weightRoles[i].push_back(roles.lookup(label));
    if (weight->updated != ordered[0]->updated ||
        weight->normed != ordered[0]->normed)
      return why = "its output reads its weights at different points of "
                   "the update",
             failure();
  }
  if (ordered[0]->normed)
    layer.weightNormEps = normEps;
  layer.order = ordered[0]->updated ? UpdateOrder::update_then_apply
                                    : UpdateOrder::apply_then_update;
  std::optional<unsigned> q = windowOf(gateQuery->leaf);
  layer.q.sequence = *q;
  for (unsigned label : gateQuery->labels)
    layer.q.roles.push_back(roles.lookup(label));
  for (unsigned label : poly->labels)
    layer.outputRoles.push_back(roles.lookup(label));
  // The same x in both: the queries' roles hold in the output term too.
  // One chunk has no window axis: time is where the math puts it.
  if (!loop.isSingleChunk() && layer.q.roles[loop.getWindowAxes()[*q]] != kTime)
    return why = "its queries' time axis is not the output's", failure();
  return success();
}

FailureOr<Polynomial> SwiGLUReader::readAdded(SwiGLULayer &layer, unsigned i,
                                              std::string &why) {
  Value arg = stateArg(i);
  Value next = nextState(i);
  // A next state renormalized in the body: the update is what it divides.
  {
    std::optional<Polynomial> poly = reader.read(next);
    if (poly && poly->terms.size() == 1 && poly->terms[0].factors.size() == 2) {
      for (const Factor &factor : poly->terms[0].factors)
        if (readColumnNormDivision(factor.leaf)) {
          const Factor &other =
              poly->terms[0].factors[&factor == &poly->terms[0].factors[0]];
          std::optional<ColumnNormDivision> norm =
              normedToInitial(factor, other, i);
          if (!norm)
            return why = kUnprovenNorms, failure();
          nextIsNormed = true;
          layer.weightNormEps = norm->eps;
          normAxes[i] = norm->axis;
          next = norm->x;
          break;
        }
    }
  }
  if (loop.getInits().size() > 3)
    return readMomentum(layer, i, next, why);
  std::optional<Polynomial> poly = reader.read(next);
  if (!poly)
    return why = "its update is not a sum of products", failure();
  Polynomial added;
  added.labels = poly->labels;
  bool keeps = false;
  for (const Term &term : poly->terms) {
    if (!keeps && term.coeff == 1.0 && term.factors.size() == 1 &&
        term.factors[0].leaf == arg &&
        ArrayRef<unsigned>(term.factors[0].labels) ==
            ArrayRef<unsigned>(poly->labels)) {
      keeps = true;
      continue;
    }
    added.terms.push_back(term);
  }
  if (!keeps)
    return readMuonPlusUpdate(layer, next, why);
  // Muon: W' = W + s NS(U).
  if (added.terms.size() == 1 && added.terms[0].factors.size() == 1) {
    std::optional<std::pair<Value, NewtonSchulzReading>> muon =
        findNewtonSchulzOf(added.terms[0].factors[0].leaf, Value());
    if (muon && muon->first == added.terms[0].factors[0].leaf) {
      if (failed(takeMove(layer, added.terms[0].coeff, muon->second,
                          "its weights are moved differently (steps or "
                          "Muon)",
                          why)))
        return failure();
      std::optional<Polynomial> input = reader.read(muon->second.input);
      if (!input)
        return why = "the update Newton-Schulz orthogonalizes is not a sum "
                     "of products",
               failure();
      return *input;
    }
  }
  if (failed(takeMove(layer, 1.0, std::nullopt,
                      "Muon orthogonalizes the update of some weights only",
                      why)))
    return failure();
  return added;
}

FailureOr<Polynomial> SwiGLUReader::readMuonPlusUpdate(SwiGLULayer &layer,
                                                       Value next,
                                                       std::string &why) {
  // W' = U + s NS(U): one term Muon's result, the others the update it
  // orthogonalized (LaCT's minimal bidirectional layer). Muon's result is
  // read as a leaf: its steps are sums of products of the normalized U.
  auto fail = [&] {
    why = "a weight is not updated by adding a term to it";
    return failure();
  };
  std::optional<std::pair<Value, NewtonSchulzReading>> muon =
      findNewtonSchulzOf(next, Value());
  if (!muon)
    return fail();
  EinsumReader outer({muon->first});
  std::optional<Polynomial> poly = outer.read(next);
  std::optional<Polynomial> input = outer.read(muon->second.input);
  if (!poly || !input)
    return fail();
  Polynomial rest;
  rest.labels = poly->labels;
  std::optional<double> step;
  for (const Term &term : poly->terms) {
    if (!step && term.factors.size() == 1 &&
        term.factors[0].leaf == muon->first &&
        ArrayRef<unsigned>(term.factors[0].labels) ==
            ArrayRef<unsigned>(poly->labels)) {
      step = term.coeff;
      continue;
    }
    rest.terms.push_back(term);
  }
  if (!step ||
      !equivalent(rest, *input, [](Value a, Value b) { return a == b; }))
    return fail();
  if (failed(takeMove(layer, *step, muon->second,
                      "its weights are moved differently (steps or Muon)", why,
                      /*addsToUpdate=*/true)))
    return failure();
  std::optional<Polynomial> update = reader.read(muon->second.input);
  if (!update)
    return fail();
  return *update;
}

FailureOr<Polynomial> SwiGLUReader::readMomentum(SwiGLULayer &layer, unsigned i,
                                                 Value next, std::string &why) {
  auto fail = [&](StringRef reason) {
    why = reason.str();
    return failure();
  };
  unsigned which = llvm::find(layer.weights, i) - layer.weights.begin();
  std::optional<unsigned> state;
  for (unsigned s = 0, e = loop.getInits().size(); s < e; ++s) {
    if (llvm::is_contained(layer.weights, s) || !readsValue(next, nextState(s)))
      continue;
    if (state)
      return fail("a weight is moved by two momenta");
    state = s;
  }
  if (!state)
    return fail("a weight is moved by no momentum of the other states");
  Value momentumNext = nextState(*state);
  // W' = W + c M', or with Muon W' = W + c NS(M').
  Value moved = momentumNext;
  std::optional<NewtonSchulzReading> muon;
  if (auto found = findNewtonSchulzOf(next, momentumNext)) {
    moved = found->first;
    muon = found->second;
  }
  EinsumReader outer({momentumNext, moved});
  std::optional<Polynomial> poly = outer.read(next);
  std::optional<double> step;
  bool keeps = false;
  for (const Term &term : poly ? poly->terms : SmallVector<Term>()) {
    if (term.factors.size() != 1 ||
        ArrayRef<unsigned>(term.factors[0].labels) !=
            ArrayRef<unsigned>(poly->labels))
      return fail("a weight is not moved by its momentum alone (W' = W + c "
                  "M')");
    if (term.factors[0].leaf == stateArg(i) && term.coeff == 1.0 && !keeps)
      keeps = true;
    else if (term.factors[0].leaf == moved && !step)
      step = term.coeff;
    else
      return fail("a weight is not moved by its momentum alone (W' = W + c "
                  "M')");
  }
  if (!keeps || !step)
    return fail("a weight is not moved by its momentum alone (W' = W + c "
                "M')");
  if (failed(takeMove(layer, *step, muon,
                      "its weights are moved by their momenta differently",
                      why)))
    return failure();
  // M' = mu M + U: the term in M is the mean of a window times M.
  std::optional<Polynomial> update = reader.read(momentumNext);
  if (!update)
    return fail("a momentum's update is not a sum of products");
  FailureOr<MomentumDecay> decay =
      readMomentumDecay(loop, *update, stateArg(*state), why);
  if (failed(decay))
    return failure();
  Polynomial result;
  result.labels = update->labels;
  result.terms = decay->rest;
  const Factor *rates = &decay->rates;
  std::optional<unsigned> window = decay->sequence;
  RoledWindow coefficients{*window, {}, Value()};
  unsigned time = rates->labels[loop.getWindowAxes()[*window]];
  for (unsigned label : rates->labels) {
    auto position = llvm::find(update->labels, label);
    if (label == time)
      coefficients.roles.push_back(kTime);
    else if (position != update->labels.end() &&
             layer.weightRoles[which][position - update->labels.begin()] <
                 kTime)
      coefficients.roles.push_back(
          layer.weightRoles[which][position - update->labels.begin()]);
    else if (reader.isUnit(label))
      coefficients.roles.push_back(nextUnit++);
    else
      return fail("a momentum's coefficients are not one per token and "
                  "stream");
  }
  if (llvm::is_contained(update->labels, time))
    return fail("a momentum is not scaled by a mean over the chunk");
  // A mean over the chunk: every window one chunk long.
  if (!windowsAreWholeChunks(loop))
    return fail("its momentum's coefficient is a sum over chunks that may "
                "differ in length, not their mean");
  double scale = decay->coeff * loop.getChunk();
  if (layer.momentum && (layer.momentum->sequence != coefficients.sequence ||
                         layer.momentumScale != scale))
    return fail("its weights' momenta decay differently");
  layer.momentum = coefficients;
  layer.momentumScale = scale;
  if (!isZeroTensor(loop.getInits()[*state]))
    return fail("a momentum does not start at zero");
  if (!loop.getFinalStates()[*state].use_empty())
    return fail("a final momentum is read after the loop");
  layer.momentumStates.push_back(*state);
  return result;
}

LogicalResult SwiGLUReader::readKeys(SwiGLULayer &layer,
                                     const Polynomial &outUpdate,
                                     std::string &why) {
  FailureOr<KeysGate> gate = readKeysGate(
      loop, reader, outUpdate, layer.weights[0],
      stateRoles(layer.weightRoles[0], layer.weights[0]), layer.numStreams,
      "W1's update is not a sum over tokens of values times the SwiGLU "
      "hidden state of the keys",
      "W0", why);
  if (failed(gate))
    return failure();
  keysSigmoid = gate->sigmoid;
  layer.k = gate->keys;
  sigmoidRoles = gate->sigmoidRoles;
  return success();
}

Polynomial SwiGLUReader::expectedUpdate(const SwiGLULayer &layer,
                                        unsigned which) {
  Value w0 = stateArg(layer.weights[0]), w1 = stateArg(layer.weights[1]),
        w2 = stateArg(layer.weights[2]);
  Value keys = loop.getWindowArgs()[layer.k.sequence];
  Value values = loop.getWindowArgs()[layer.v.sequence];
  unsigned fresh = kFresh;
  unsigned i1 = fresh++, i2 = fresh++, i3 = fresh++, o1 = fresh++;
  // The keys bound to the update, times their rates where the program
  // multiplied them before the loop.
  const std::optional<RoledWindow> &withRates = layer.keysWithRates[which];
  Value bound = withRates ? loop.getWindowArgs()[withRates->sequence] : keys;
  ArrayRef<unsigned> boundRoles = withRates ? withRates->roles : layer.k.roles;
  auto base = [&](double coeff) {
    RoleTerm term(coeff, fresh);
    if (layer.lr[which] && !layer.keysWithRates[which])
      term.add(loop.getWindowArgs()[layer.lr[which]->sequence],
               layer.lr[which]->roles);
    return term;
  };
  // x W0 and x W2 for the keys, summed over their own input labels.
  SmallVector<unsigned> roles0 =
      stateRoles(layer.weightRoles[0], layer.weights[0]);
  SmallVector<unsigned> roles1 =
      stateRoles(layer.weightRoles[1], layer.weights[1]);
  SmallVector<unsigned> roles2 =
      stateRoles(layer.weightRoles[2], layer.weights[2]);
  auto gate = [&](RoleTerm &term, unsigned in) {
    term.add(w0, roles0, {{kIn, in}}).add(keys, layer.k.roles, {{kIn, in}});
  };
  auto up = [&](RoleTerm &term, unsigned in) {
    term.add(w2, roles2, {{kIn, in}}).add(keys, layer.k.roles, {{kIn, in}});
  };
  // W1^T v, the gradient reaching the hidden state.
  auto back = [&](RoleTerm &term) {
    term.add(w1, roles1, {{kOut, o1}}).add(values, layer.v.roles, {{kOut, o1}});
  };
  Polynomial poly;
  poly.labels = layer.weightRoles[which];
  if (which == 1) {
    RoleTerm term = base(1.0);
    term.add(values, layer.v.roles);
    gate(term, i1);
    term.add(keysSigmoid, sigmoidRoles);
    up(term, i2);
    poly.terms.push_back(term.term);
    return poly;
  }
  if (which == 2) {
    RoleTerm term = base(1.0);
    term.add(bound, boundRoles);
    back(term);
    gate(term, i3);
    term.add(keysSigmoid, sigmoidRoles);
    poly.terms.push_back(term.term);
    return poly;
  }
  // silu'(x) = sigma + x sigma - x sigma^2.
  for (unsigned power : {0u, 1u, 2u}) {
    RoleTerm term = base(power == 2 ? -1.0 : 1.0);
    term.add(bound, boundRoles);
    back(term);
    up(term, i2);
    if (power > 0)
      gate(term, i3);
    for (unsigned s = 0; s < std::max(power, 1u); ++s)
      term.add(keysSigmoid, sigmoidRoles);
    poly.terms.push_back(term.term);
  }
  return poly;
}

void SwiGLUReader::readKeysWithRates(SwiGLULayer &layer, unsigned which,
                                     unsigned window,
                                     ArrayRef<unsigned> roles) {
  // The rates then come from outside the loop, whole: one chunk only (a
  // loop of several reads its sequences cut to its length).
  if (!loop.isSingleChunk())
    return;
  Value keys = loop.getSequences()[layer.k.sequence];
  EinsumReader outside;
  std::optional<Polynomial> poly = outside.read(loop.getSequences()[window]);
  if (!poly || poly->terms.size() != 1 || poly->terms[0].coeff != 1.0 ||
      poly->terms[0].factors.size() != 2)
    return;
  const Term &term = poly->terms[0];
  const Factor *k = nullptr, *rates = nullptr;
  for (const Factor &factor : term.factors)
    (factor.leaf == keys ? k : rates) = &factor;
  // The keys whole, in any layout: each of the window's dimensions one of
  // theirs.
  SmallVector<unsigned> sortedKeys(k ? k->labels : SmallVector<unsigned>()),
      sortedWindow(poly->labels);
  llvm::sort(sortedKeys);
  llvm::sort(sortedWindow);
  if (!k || !rates || sortedKeys != sortedWindow ||
      std::adjacent_find(sortedKeys.begin(), sortedKeys.end()) !=
          sortedKeys.end())
    return;
  RoledWindow found{0, {}, rates->leaf};
  for (unsigned label : rates->labels) {
    auto position = llvm::find(poly->labels, label);
    if (position != poly->labels.end() &&
        (roles[position - poly->labels.begin()] < kTime ||
         roles[position - poly->labels.begin()] == kTime))
      found.roles.push_back(roles[position - poly->labels.begin()]);
    else if (outside.isUnit(label))
      found.roles.push_back(nextUnit++);
    else
      return;
  }
  if (llvm::count(found.roles, kTime) != 1)
    return;
  layer.lr[which] = found;
  layer.keysWithRates[which] =
      RoledWindow{window, SmallVector<unsigned>(roles), Value()};
}

LogicalResult SwiGLUReader::readUpdates(SwiGLULayer &layer, std::string &why) {
  std::array<Polynomial, 3> added;
  for (unsigned i = 0; i < 3; ++i) {
    FailureOr<Polynomial> poly = readAdded(layer, layer.weights[i], why);
    if (failed(poly))
      return failure();
    added[i] = *poly;
  }
  if (failed(readKeys(layer, added[1], why)))
    return failure();
  // Values and rates, by the roles of the labels they share.
  for (unsigned i = 0; i < 3; ++i) {
    if (added[i].terms.empty())
      return why = "a weight is not updated", failure();
    const Term &term = added[i].terms[0];
    llvm::DenseMap<unsigned, unsigned> roles;
    for (auto [label, role] :
         llvm::zip_equal(added[i].labels, layer.weightRoles[i]))
      roles[label] = role;
    for (const Factor &factor : term.factors)
      if (factor.leaf == keysSigmoid || sameLeaf(factor.leaf, keysSigmoid))
        for (auto [label, role] : llvm::zip_equal(factor.labels, sigmoidRoles))
          roles.try_emplace(label, role);
    for (const Factor &factor : term.factors) {
      std::optional<unsigned> window = windowOf(factor.leaf);
      if (!window || *window == layer.k.sequence)
        continue;
      std::optional<SmallVector<unsigned>> factorRoles = rolesOf(factor, roles);
      if (!factorRoles)
        continue;
      bool features = llvm::any_of(*factorRoles, [](unsigned role) {
        return role == kOut || role == kIn || role == kHidden;
      });
      if (!features && !layer.lr[i])
        layer.lr[i] = RoledWindow{*window, *factorRoles, Value()};
      else if (i != 1 && !layer.lr[i] && !layer.keysWithRates[i] &&
               llvm::is_contained(*factorRoles, kIn))
        readKeysWithRates(layer, i, *window, *factorRoles);
      else if (i == 1 && features && llvm::is_contained(*factorRoles, kOut))
        layer.v = RoledWindow{*window, *factorRoles, Value()};
    }
  }
  if (layer.v.roles.empty())
    return why = "W1's update does not read the values", failure();
  if (llvm::count(layer.v.roles, kOut) != 1 ||
      llvm::count(layer.v.roles, kTime) != 1 ||
      (!loop.isSingleChunk() &&
       layer.v.roles[loop.getWindowAxes()[layer.v.sequence]] != kTime))
    return why = "the values' dimensions are not streams, time and features",
           failure();
  if (llvm::count_if(layer.lr, [](const auto &lr) { return lr.has_value(); }) %
          3 !=
      0)
    return why = "some weights have per-token learning rates and others "
                 "not",
           failure();
  // Each update must be the dot loss's descent step the model implies.
  static const char *const names[] = {"W0", "W1", "W2"};
  std::optional<double> scale;
  for (unsigned i = 0; i < 3; ++i) {
    Polynomial expected = expectedUpdate(layer, i);
    std::optional<double> found = scaleOf(expected, added[i]);
    if (!found)
      return why = std::string(names[i]) +
                   "'s update is not the dot loss's gradient step for the "
                   "SwiGLU network its output applies",
             failure();
    if (scale && std::abs(*scale - *found) > 1e-12 * std::abs(*scale))
      return why = "its weights' updates are scaled differently", failure();
    scale = found;
  }
  layer.lossScale = *scale;
  return success();
}

/// The narrower float type `value` is computed through (a payload that
/// truncates, as LaCT's Muon casts its update to bfloat16), if any.
static std::optional<Type> narrowedOnTheWay(Value value) {
  SmallVector<Value> stack{value};
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val().getDefiningOp();
    if (!op || !seen.insert(op).second)
      continue;
    std::optional<Type> narrow;
    op->walk([&](arith::TruncFOp trunc) { narrow = trunc.getType(); });
    if (narrow)
      return narrow;
    llvm::append_range(stack, op->getOperands());
  }
  return std::nullopt;
}

FailureOr<SwiGLULayer> SwiGLUReader::read(bool &isSwiGLU, std::string &why) {
  isSwiGLU = false;
  for (Value init : loop.getInits())
    if (!getElementTypeOrSelf(init.getType()).isF32())
      return why = "its state is not f32", failure();
  SwiGLULayer layer;
  if (failed(readModel(layer, why)))
    return failure();
  isSwiGLU = true;
  // A second output of one step that is made of the first alone (what a
  // norm after the layer reads of it, pulled into the step) is computed
  // again from the layer op's output.
  Value network = loop.getYield().getOutputs()[0];
  for (Value other : loop.getYield().getOutputs().drop_front())
    if (!loop.isSingleChunk() || failed(madeOf(other, network)))
      return why = "it has " + std::to_string(loop.getOutputs().size()) +
                   " outputs, and the others are not made of the network's "
                   "alone in one step",
             failure();
  if (loop.getInits().size() != 3 && loop.getInits().size() != 6)
    return why = "it carries " + std::to_string(loop.getInits().size() - 3) +
                 " more state values than its weights (read: none, or a "
                 "momentum per weight)",
           failure();
  for (unsigned i = 0; i < 3; ++i)
    if (layer.weightRoles[i].size() != layer.numStreams + 2)
      return why = "a weight is not one matrix per stream", failure();
  if (failed(readUpdates(layer, why))) {
    for (unsigned state : layer.weights)
      if (std::optional<Type> narrow = narrowedOnTheWay(nextState(state))) {
        std::string type;
        llvm::raw_string_ostream os(type);
        os << *narrow;
        why = "its update is computed in " + type +
              " on the way (as LaCT ships Muon's Newton-Schulz steps); "
              "ttt.kvb_layer computes updates in the weights' type";
        break;
      }
    return failure();
  }
  // kvb_layer renormalizes each output column over the weight's inputs.
  for (unsigned i = 0; layer.weightNormEps && i < 3; ++i) {
    auto axis = normAxes.find(layer.weights[i]);
    unsigned input = i == 1 ? kHidden : kIn;
    if (axis == normAxes.end() || layer.weightRoles[i][axis->second] != input)
      return why = "a weight is renormalized over other than its inputs",
             failure();
  }
  if (loop.isSingleChunk() && layer.order != UpdateOrder::update_then_apply)
    return why = "one chunk applied before its update learns nothing",
           failure();
  // A weight renormalized only where the output reads it: the state the
  // loop carries on is not, so its final value is no kvb_layer result.
  for (unsigned i = 0; i < 3; ++i)
    if (layer.weightNormEps && !nextIsNormed &&
        !loop.getFinalStates()[layer.weights[i]].use_empty())
      return why = "its final weights are read before their renormalization",
             failure();
  for (unsigned i = 0; i < 3; ++i)
    layer.stateRoles[i] = stateRoles(layer.weightRoles[i], layer.weights[i]);
  return layer;
}

} // namespace

FailureOr<SwiGLULayer> linalg_raise::readSwiGLULayer(ChunkLoopOp loop,
                                                     bool &isSwiGLU,
                                                     std::string &why) {
  FailureOr<SwiGLULayer> layer = SwiGLUReader(loop).read(isSwiGLU, why);
  if (succeeded(layer) || !loop.isSingleChunk() ||
      llvm::any_of(loop.getFinalStates(),
                   [](Value final) { return !final.use_empty(); }))
    return layer;
  // One step whose final states nothing reads computes the same whichever
  // yielded value is read as which state's next one; a step that replaces
  // its weights (W' = U + NS(U)) has new values the dataflow pairs with
  // none of them (FormSingleSteps pairs those in order). The reading that
  // proves each one the update of its weight's role is the pairing.
  // An exporter may have folded a weight into the one transpose the step
  // reads of it (`w1.transpose(1, 2)` of a constant), while the new value
  // is the weight itself: a square state may hold its weight transposed.
  unsigned count = loop.getInits().size();
  if (count != 3)
    return layer;
  unsigned square = 0;
  for (auto [i, init] : llvm::enumerate(loop.getInits())) {
    auto type = cast<RankedTensorType>(init.getType());
    int64_t rank = type.getRank();
    if (rank >= 2 && type.getDimSize(rank - 1) == type.getDimSize(rank - 2))
      square |= 1u << i;
  }
  SmallVector<unsigned> pairing =
      llvm::to_vector(llvm::seq<unsigned>(0, count));
  do {
    bool inOrder = llvm::equal(pairing, llvm::seq<unsigned>(0, count));
    // Only square states may hold their weight transposed; the pairing in
    // order, none transposed, was read first.
    for (unsigned mask = 0; mask < (1u << count); ++mask) {
      if ((mask & ~square) || (inOrder && mask == 0))
        continue;
      SmallVector<bool> transposed;
      for (unsigned i = 0; i < count; ++i)
        transposed.push_back(mask & (1u << i));
      bool recognized = false;
      std::string reason;
      FailureOr<SwiGLULayer> paired =
          SwiGLUReader(loop, pairing, transposed).read(recognized, reason);
      if (succeeded(paired)) {
        isSwiGLU = true;
        return paired;
      }
    }
  } while (std::next_permutation(pairing.begin(), pairing.end()));
  return layer;
}

void linalg_raise::buildSwiGLULayer(RewriterBase &rewriter, ChunkLoopOp loop,
                                    const SwiGLULayer &layer) {
  FastWeightLayer built;
  built.model = FastWeightModelAttr::get(loop.getContext(), ModelKind::swiglu,
                                         {0, 1, 2}, false, Activation::silu);
  for (unsigned i = 0; i < 3; ++i)
    built.weights.push_back({layer.weights[i], layer.stateRoles[i],
                             i == 1 ? kHidden : kIn, i == 1 ? kOut : kHidden});
  built.numStreams = layer.numStreams;
  built.q = layer.q;
  built.k = layer.k;
  built.v = layer.v;
  built.lr.assign(layer.lr.begin(), layer.lr.end());
  built.momentum = layer.momentum;
  built.momentumScale = layer.momentumScale;
  built.order = layer.order;
  built.lossScale = layer.lossScale;
  built.step = layer.step;
  built.muon = layer.muon;
  built.addsToUpdate = layer.addsToUpdate;
  built.weightNormEps = layer.weightNormEps;
  built.outputRoles = layer.outputRoles;
  buildFastWeightLayer(rewriter, loop, built);
}
