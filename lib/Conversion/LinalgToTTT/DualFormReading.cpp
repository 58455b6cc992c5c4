//===- DualFormReading.cpp - TTT-Linear's dual form off a loop ------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "DualFormReading.h"
#include "ChunkLoopForms.h"
#include "EinsumPolynomial.h"
#include "ElementwiseReadings.h"
#include "GeluReadings.h"
#include "LayerLayout.h"
#include "LayerNormReadings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

namespace {

/// The loop's axis in a window (one mini-batch), and token j of a chunk
/// beside token i (kTime).
constexpr unsigned kChunkAxis = kOut + 1;
constexpr unsigned kPair = kOut + 2;

/// Whether dimension `d` of a value of `type` has one index.
bool isUnitDim(Type type, size_t d) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  return shaped && shaped.getDimSize(d) == 1;
}

/// `poly` (a value of `type`) with the dimensions of size 1 of the value and
/// of every leaf dropped: one index each, they sum and broadcast nothing,
/// and readers label them afresh at every read.
Polynomial withoutUnitDims(const Polynomial &poly, Type type) {
  Polynomial result;
  for (auto [d, label] : llvm::enumerate(poly.labels))
    if (!isUnitDim(type, d))
      result.labels.push_back(label);
  for (const Term &term : poly.terms) {
    Term narrow{term.coeff, {}};
    for (const Factor &factor : term.factors) {
      Factor kept{factor.leaf, {}};
      for (auto [d, label] : llvm::enumerate(factor.labels))
        if (!isUnitDim(factor.leaf.getType(), d))
          kept.labels.push_back(label);
      narrow.factors.push_back(std::move(kept));
    }
    result.terms.push_back(std::move(narrow));
  }
  return result;
}

/// The labels of a factor's dimensions that have more than one index.
SmallVector<unsigned> realLabels(ArrayRef<unsigned> labels, Type type) {
  SmallVector<unsigned> result;
  for (auto [d, label] : llvm::enumerate(labels))
    if (!isUnitDim(type, d))
      result.push_back(label);
  return result;
}

/// `x W + b` read off a value: x (a window, or the activation of another
/// such map), the weight and the bias, and the role of every dimension.
struct Affine {
  Value x;
  SmallVector<unsigned> xRoles;
  LayerWeight weight;
  std::optional<LayerWeight> bias;
  /// The roles of the value's dimensions.
  SmallVector<unsigned> roles;
};

class DualFormReader {
public:
  explicit DualFormReader(ChunkLoopOp loop) : loop(loop) {}

  FailureOr<DualFormLayer> read(bool &isDualForm, std::string &why);

private:
  Value stateArg(unsigned i) { return loop.getStateArgs()[i]; }
  Value nextState(unsigned i) { return loop.getYield().getNextState()[i]; }
  std::optional<unsigned> windowOf(Value leaf) {
    return windowIndex(loop, leaf);
  }
  std::optional<unsigned> stateOf(Value leaf) {
    for (unsigned i = 0, e = loop.getInits().size(); i < e; ++i)
      if (leaf == stateArg(i))
        return i;
    return std::nullopt;
  }
  /// Masks are one leaf where they select the same entries.
  bool sameLeaf(Value a, Value b) {
    if (a == b)
      return true;
    std::optional<SmallVector<bool>> ta = maskTable(a, chunkSize),
                                     tb = maskTable(b, chunkSize);
    return ta && tb && *ta == *tb;
  }
  bool matches(const Polynomial &expected, const Polynomial &found, Type type,
               double rtol = 1e-12) {
    return equivalent(
        withoutUnitDims(expected, type), withoutUnitDims(found, type),
        [&](Value a, Value b) { return sameLeaf(a, b); }, rtol);
  }
  /// The roles of `factor`'s dimensions: those of its labels in `roles`,
  /// the loop's axis of a window, a unit role for other dimensions of size
  /// 1; nullopt where a label has none.
  std::optional<SmallVector<unsigned>>
  rolesOf(const Factor &factor, const llvm::DenseMap<unsigned, unsigned> &roles,
          std::optional<unsigned> window) {
    SmallVector<unsigned> result;
    for (auto [d, label] : llvm::enumerate(factor.labels)) {
      if (window && static_cast<int64_t>(d) == loop.getWindowAxes()[*window]) {
        result.push_back(kChunkAxis);
        continue;
      }
      if (auto it = roles.find(label); it != roles.end()) {
        result.push_back(it->second);
        continue;
      }
      if (!isUnitDim(factor.leaf.getType(), d))
        return std::nullopt;
      result.push_back(nextUnit++);
    }
    return result;
  }

  FailureOr<Affine> readAffine(Value value, unsigned inRole, unsigned outRole,
                               std::string &why);
  LogicalResult readGradient(DualFormLayer &layer, const Normalized &keysNorm,
                             Value keysNormalized, Value numerator,
                             std::string &why);
  LogicalResult readHiddenGradient(Value hidden, const Affine &first,
                                   const Affine &second, std::string &why);
  /// Reads `poly`, the pre-norm of a layer (its queries times `affine`'s
  /// weight and bias minus the gradients `grad`), whose keys are `keys`.
  LogicalResult readPreNorm(DualFormLayer &layer, const Polynomial &poly,
                            Value preNorm, const Affine &affine, Value grad,
                            Value &queries, SmallVector<unsigned> &queryRoles,
                            SmallVector<unsigned> &preRoles, std::string &why);
  LogicalResult readUpdate(const LayerWeight &weight, const Affine &affine,
                           bool keysToo, Value grad, StringRef name,
                           const DualFormLayer &layer, std::string &why);
  LogicalResult readRates(DualFormLayer &layer, std::string &why);

  ChunkLoopOp loop;
  int64_t chunkSize = 0;
  /// The step of the first pre-norm read; the others' must be the same.
  std::optional<double> stepRead;
  unsigned numStreams = 0;
  bool streamsKnown = false;
  unsigned nextUnit = kUnit;
  Value gradient, mask;
  SmallVector<unsigned> maskRoles;
  /// The roles of the last layer's keys pre-norm (and of its gradient).
  SmallVector<unsigned> zRoles;
};

FailureOr<Affine> DualFormReader::readAffine(Value value, unsigned inRole,
                                             unsigned outRole,
                                             std::string &why) {
  constexpr const char *kNotAffine =
      "a layer's keys are not x W + b of its state";
  EinsumReader reader(llvm::DenseSet<Value>(loop.getStateArgs().begin(),
                                            loop.getStateArgs().end()));
  std::optional<Polynomial> poly = reader.read(value);
  if (!poly)
    return why = kNotAffine, failure();
  const Factor *x = nullptr, *weight = nullptr, *bias = nullptr;
  for (const Term &term : poly->terms) {
    if (term.coeff != 1.0)
      return why = kNotAffine, failure();
    if (term.factors.size() == 1 && stateOf(term.factors[0].leaf) && !bias) {
      bias = &term.factors[0];
      continue;
    }
    if (term.factors.size() != 2 || x)
      return why = kNotAffine, failure();
    for (const Factor &factor : term.factors) {
      if (stateOf(factor.leaf))
        weight = &factor;
      else
        x = &factor;
    }
  }
  if (!x || !weight)
    return why = kNotAffine, failure();
  // Roles, from where each label occurs.
  llvm::DenseMap<unsigned, unsigned> roles;
  unsigned streams = 0;
  for (unsigned label : realLabels(poly->labels, value.getType())) {
    bool inX = llvm::is_contained(x->labels, label),
         inWeight = llvm::is_contained(weight->labels, label);
    if (inX && inWeight)
      roles[label] = kStream + streams++;
    else if (inX)
      roles[label] = kTime;
    else if (inWeight)
      roles[label] = outRole;
    else
      return why = kNotAffine, failure();
  }
  if (streamsKnown && streams != numStreams)
    return why = "its layers are not applied per the same streams", failure();
  numStreams = streams;
  streamsKnown = true;
  for (unsigned label : weight->labels)
    if (!llvm::is_contained(poly->labels, label) &&
        llvm::is_contained(x->labels, label))
      roles[label] = inRole;
  Affine affine;
  affine.x = x->leaf;
  std::optional<SmallVector<unsigned>> weightRoles =
      rolesOf(*weight, roles, std::nullopt);
  std::optional<SmallVector<unsigned>> xRoles =
      rolesOf(*x, roles, windowOf(x->leaf));
  auto realCount = [](ArrayRef<unsigned> roles) {
    return static_cast<unsigned>(
        llvm::count_if(roles, [](unsigned role) { return role < kUnit; }));
  };
  if (!weightRoles || !xRoles || llvm::count(*weightRoles, inRole) != 1 ||
      llvm::count(*weightRoles, outRole) != 1 ||
      realCount(*weightRoles) != numStreams + 2 ||
      llvm::count(*xRoles, kTime) != 1 || llvm::count(*xRoles, inRole) != 1)
    return why = "a weight is not one matrix per stream read by the keys",
           failure();
  affine.weight = {*stateOf(weight->leaf), *weightRoles, inRole, outRole};
  affine.xRoles = *xRoles;
  if (bias) {
    unsigned biasState = *stateOf(bias->leaf);
    // [streams, 1, out]: the row a bias is to the op.
    SmallVector<unsigned> biasRoles;
    for (auto [d, label] : llvm::enumerate(bias->labels)) {
      // The row's dimension is the one before the features.
      int64_t rank = cast<ShapedType>(bias->leaf.getType()).getRank();
      if (auto it = roles.find(label); it != roles.end())
        biasRoles.push_back(it->second);
      else if (isUnitDim(bias->leaf.getType(), d) &&
               static_cast<int64_t>(d) == rank - 2)
        biasRoles.push_back(inRole);
      else if (isUnitDim(bias->leaf.getType(), d))
        biasRoles.push_back(nextUnit++);
      else
        return why = "a bias is not one row per stream", failure();
    }
    if (biasState == affine.weight.state ||
        realCount(biasRoles) != numStreams + 2 ||
        llvm::count(biasRoles, outRole) != 1 ||
        llvm::count(biasRoles, inRole) != 1)
      return why = "a bias is not one row per stream", failure();
    affine.bias = LayerWeight{biasState, biasRoles, inRole, outRole};
  }
  for (unsigned label : poly->labels)
    affine.roles.push_back(roles.count(label) ? roles[label] : nextUnit++);
  chunkSize =
      cast<RankedTensorType>(value.getType())
          .getDimSize(llvm::find(affine.roles, kTime) - affine.roles.begin());
  return affine;
}

LogicalResult DualFormReader::readGradient(DualFormLayer &layer,
                                           const Normalized &keysNorm,
                                           Value keysNormalized,
                                           Value numerator, std::string &why) {
  // ttt-lm-pytorch's ln_fused_l2_bwd with g = gamma LN(Z) + beta - t and
  // h = gamma g: (D h - sum h - LN(Z) sum(h LN(Z))) / D, before the division
  // by the deviation; the target t a sum of windows, gamma and beta the
  // output's (or absent).
  EinsumReader reader(llvm::DenseSet<Value>{keysNormalized});
  std::optional<Polynomial> poly = reader.read(numerator);
  constexpr const char *kNotMSE =
      "its gradient is not the squared error's through the keys' LayerNorm";
  if (!poly)
    return why = kNotMSE, failure();
  Value gamma = layer.gamma ? layer.gamma->source : Value();
  Value beta = layer.beta ? layer.beta->source : Value();
  auto isNormalized = [&](const Factor &f) { return f.leaf == keysNormalized; };
  SmallVector<unsigned> real = realLabels(poly->labels, numerator.getType());
  // The target: the terms -t_d (times gamma), no sum in them.
  llvm::DenseMap<unsigned, unsigned> roles;
  for (auto [label, role] : llvm::zip_equal(poly->labels, zRoles))
    roles[label] = role;
  for (const Term &term : poly->terms) {
    if (llvm::any_of(term.factors, isNormalized))
      continue;
    bool summed = llvm::any_of(term.factors, [&](const Factor &f) {
      return llvm::any_of(
          realLabels(f.labels, f.leaf.getType()),
          [&](unsigned l) { return !llvm::is_contained(real, l); });
    });
    if (summed)
      continue; // a sum of the target: checked below
    const Factor *window = nullptr;
    for (const Factor &factor : term.factors)
      if (windowOf(factor.leaf))
        window = &factor;
    if (!window)
      continue; // gamma * beta
    std::optional<SmallVector<unsigned>> targetRoles =
        rolesOf(*window, roles, windowOf(window->leaf));
    if (!targetRoles ||
        (!layer.targetRoles.empty() && layer.targetRoles != *targetRoles))
      return why = "the windows of its target are not laid out alike",
             failure();
    layer.targetRoles = *targetRoles;
    layer.target.push_back({*windowOf(window->leaf), -term.coeff});
  }
  if (layer.target.empty())
    return why = kNotMSE, failure();
  int64_t size =
      cast<RankedTensorType>(numerator.getType()).getDimSize(keysNorm.axis);
  double inv = 1.0 / static_cast<double>(size);
  unsigned fresh = kFresh;
  unsigned e = fresh++;
  // h's terms, each a coefficient and its factors' leaves and roles.
  struct Part {
    Value leaf;
    SmallVector<unsigned> roles;
  };
  SmallVector<std::pair<double, SmallVector<Part>>> h;
  SmallVector<Part> scale;
  if (gamma)
    scale.push_back({gamma, layer.gamma->roles});
  auto withScale = [&](SmallVector<Part> parts) {
    for (const Part &part : scale)
      parts.push_back(part);
    return parts;
  };
  h.push_back({1.0, withScale(withScale({{keysNormalized, zRoles}}))});
  if (beta)
    h.push_back({1.0, withScale({{beta, layer.beta->roles}})});
  for (auto [window, coeff] : layer.target)
    h.push_back({-coeff, withScale({{loop.getWindowArgs()[window],
                                     layer.targetRoles}})});
  Polynomial expected;
  expected.labels = zRoles;
  for (const auto &[coeff, parts] : h) {
    RoleTerm itself(coeff, fresh), mean(-coeff * inv, fresh),
        projected(-coeff * inv, fresh);
    projected.add(keysNormalized, zRoles)
        .add(keysNormalized, zRoles, {{kOut, e}});
    for (const Part &part : parts) {
      itself.add(part.leaf, part.roles);
      mean.add(part.leaf, part.roles, {{kOut, e}});
      projected.add(part.leaf, part.roles, {{kOut, e}});
    }
    expected.terms.push_back(itself.term);
    expected.terms.push_back(mean.term);
    expected.terms.push_back(projected.term);
  }
  if (!matches(expected, *poly, numerator.getType(), kFloat32Rounding))
    return why = kNotMSE, failure();
  layer.eps = keysNorm.eps;
  return success();
}

LogicalResult DualFormReader::readHiddenGradient(Value hidden,
                                                 const Affine &first,
                                                 const Affine &second,
                                                 std::string &why) {
  // (G W2^T) * gelu'(Z1), gelu'(z) = (1 + t)/2 + z/2 (1 - t^2)(c + b z^2)
  // with t = tanh(c (z + 0.044715 z^3)) and b = 3 * 0.044715 c.
  constexpr const char *kNotBackward =
      "its hidden layer's gradient is not the output's back through W2 and "
      "GELU's derivative";
  Value z1 = geluTanhInput(second.x);
  llvm::DenseSet<Value> stops(loop.getStateArgs().begin(),
                              loop.getStateArgs().end());
  stops.insert(gradient);
  stops.insert(z1);
  EinsumReader reader(stops);
  std::optional<Polynomial> poly = reader.read(hidden);
  if (!poly)
    return why = kNotBackward, failure();
  Value tanh;
  for (const Term &term : poly->terms)
    for (const Factor &factor : term.factors)
      if (!stateOf(factor.leaf) && factor.leaf != gradient &&
          factor.leaf != z1) {
        if (tanh && tanh != factor.leaf)
          return why = kNotBackward, failure();
        tanh = factor.leaf;
      }
  if (!tanh || !isGeluTanh(tanh, z1))
    return why = kNotBackward, failure();
  unsigned fresh = kFresh;
  unsigned o = fresh++;
  const double b = 3.0 * kGeluCubic * kGeluC;
  Polynomial expected;
  expected.labels = first.roles;
  Value w2 = stateArg(second.weight.state);
  auto term = [&](double coeff, unsigned zs, unsigned ts) {
    RoleTerm t(coeff, fresh);
    t.add(gradient, zRoles, {{kOut, o}})
        .add(w2, second.weight.roles, {{kOut, o}});
    for (unsigned i = 0; i < zs; ++i)
      t.add(z1, first.roles);
    for (unsigned i = 0; i < ts; ++i)
      t.add(tanh, first.roles);
    expected.terms.push_back(t.term);
  };
  term(0.5, 0, 0);
  term(0.5, 0, 1);
  term(0.5 * kGeluC, 1, 0);
  term(-0.5 * kGeluC, 1, 2);
  term(0.5 * b, 3, 0);
  term(-0.5 * b, 3, 2);
  if (!matches(expected, *poly, hidden.getType(), kGeluRtol))
    return why = kNotBackward, failure();
  return success();
}

LogicalResult
DualFormReader::readPreNorm(DualFormLayer &layer, const Polynomial &poly,
                            Value preNorm, const Affine &affine, Value grad,
                            Value &queries, SmallVector<unsigned> &queryRoles,
                            SmallVector<unsigned> &preRoles, std::string &why) {
  constexpr const char *kNotDual =
      "its output's pre-norm is not q W + b minus the gradients weighted by "
      "eta and the causal mask (q k^T + 1)";
  Value weightArg = stateArg(affine.weight.state);
  unsigned inRole = affine.weight.input;
  const Factor *q = nullptr, *weight = nullptr;
  for (const Term &term : poly.terms)
    if (term.coeff == 1.0 && term.factors.size() == 2 &&
        llvm::any_of(term.factors,
                     [&](const Factor &f) { return f.leaf == weightArg; }))
      for (const Factor &factor : term.factors) {
        if (factor.leaf == weightArg)
          weight = &factor;
        else
          q = &factor;
      }
  if (!q || !weight)
    return why = kNotDual, failure();
  // Roles of the pre-norm's labels, from the weight's and the queries'.
  llvm::DenseMap<unsigned, unsigned> roles;
  for (auto [label, role] :
       llvm::zip_equal(weight->labels, affine.weight.roles))
    roles[label] = role;
  preRoles.clear();
  for (auto [d, label] : llvm::enumerate(poly.labels)) {
    if (isUnitDim(preNorm.getType(), d)) {
      preRoles.push_back(nextUnit++);
      continue;
    }
    auto it = roles.find(label);
    if (it != roles.end() && it->second != inRole) {
      preRoles.push_back(it->second);
      continue;
    }
    if (!llvm::is_contained(q->labels, label))
      return why = kNotDual, failure();
    roles[label] = kTime;
    preRoles.push_back(kTime);
  }
  std::optional<SmallVector<unsigned>> qRoles =
      rolesOf(*q, roles, windowOf(q->leaf));
  if (!qRoles || llvm::count(*qRoles, kTime) != 1 ||
      llvm::count(*qRoles, inRole) != 1)
    return why = kNotDual, failure();
  queries = q->leaf;
  queryRoles = *qRoles;
  // The step sizes and the mask, from a term of the gradient.
  unsigned timeLabel =
      poly.labels[llvm::find(preRoles, kTime) - preRoles.begin()];
  SmallVector<unsigned> gradRoles = affine.roles;
  std::optional<double> step;
  for (const Term &term : poly.terms) {
    const Factor *g = nullptr;
    for (const Factor &factor : term.factors)
      if (factor.leaf == grad)
        g = &factor;
    if (!g)
      continue;
    if (step && std::abs(*step + term.coeff) > 1e-12 * std::abs(*step))
      return why = kNotDual, failure();
    step = -term.coeff;
    unsigned pairLabel =
        g->labels[llvm::find(gradRoles, kTime) - gradRoles.begin()];
    for (const Factor &factor : term.factors) {
      if (factor.leaf.getType().isInteger(1)) {
        if (factor.labels.size() != 2)
          return why = kNotDual, failure();
        if (!mask)
          mask = factor.leaf;
        if (factor.labels[0] == timeLabel && factor.labels[1] == pairLabel)
          maskRoles = {kTime, kPair};
        else if (factor.labels[1] == timeLabel && factor.labels[0] == pairLabel)
          maskRoles = {kPair, kTime};
        else
          return why = kNotDual, failure();
        continue;
      }
      std::optional<unsigned> window = windowOf(factor.leaf);
      if (!window || factor.leaf == queries || factor.leaf == affine.x ||
          !llvm::is_contained(factor.labels, timeLabel) ||
          !llvm::is_contained(factor.labels, pairLabel))
        continue;
      llvm::DenseMap<unsigned, unsigned> etaLabels(roles);
      etaLabels[pairLabel] = kPair;
      std::optional<SmallVector<unsigned>> etaRoles =
          rolesOf(factor, etaLabels, window);
      if (!etaRoles || llvm::count(*etaRoles, kTime) != 1 ||
          llvm::count(*etaRoles, kPair) != 1 ||
          (!layer.eta.roles.empty() &&
           (layer.eta.sequence != *window || layer.eta.roles != *etaRoles)))
        return why = kNotDual, failure();
      layer.eta = {*window, *etaRoles, Value()};
    }
  }
  if (!step || !mask || layer.eta.roles.empty() ||
      (stepRead && std::abs(*stepRead - *step) > 1e-12 * std::abs(*step)))
    return why = kNotDual, failure();
  stepRead = step;
  // The mask keeps j <= i, whatever its predicate says it with.
  std::optional<SmallVector<bool>> table = maskTable(mask, chunkSize);
  if (!table)
    return why = kNotDual, failure();
  for (int64_t a = 0; a < chunkSize; ++a)
    for (int64_t b = 0; b < chunkSize; ++b) {
      bool causal = maskRoles[0] == kTime ? b <= a : a <= b;
      if ((*table)[a * chunkSize + b] != causal)
        return why = "its mask over a chunk's tokens is not causal (j <= i)",
               failure();
    }
  layer.step = *step;
  unsigned fresh = kFresh;
  unsigned in = fresh++, j = fresh++;
  Value eta = loop.getWindowArgs()[layer.eta.sequence];
  Polynomial expected;
  expected.labels = preRoles;
  {
    RoleTerm t(1.0, fresh);
    t.add(queries, queryRoles, {{inRole, in}})
        .add(weightArg, affine.weight.roles, {{inRole, in}});
    expected.terms.push_back(t.term);
  }
  {
    RoleTerm t(-layer.step, fresh);
    t.add(eta, layer.eta.roles, {{kPair, j}})
        .add(mask, maskRoles, {{kPair, j}})
        .add(queries, queryRoles, {{inRole, in}})
        .add(affine.x, affine.xRoles, {{kTime, j}, {inRole, in}})
        .add(grad, gradRoles, {{kTime, j}});
    expected.terms.push_back(t.term);
  }
  if (affine.bias) {
    RoleTerm b(1.0, fresh), moved(-layer.step, fresh);
    b.add(stateArg(affine.bias->state), affine.bias->roles);
    moved.add(eta, layer.eta.roles, {{kPair, j}})
        .add(mask, maskRoles, {{kPair, j}})
        .add(grad, gradRoles, {{kTime, j}});
    expected.terms.push_back(b.term);
    expected.terms.push_back(moved.term);
  }
  if (!matches(expected, poly, preNorm.getType()))
    return why = kNotDual, failure();
  return success();
}

LogicalResult DualFormReader::readUpdate(const LayerWeight &weight,
                                         const Affine &affine, bool keysToo,
                                         Value grad, StringRef name,
                                         const DualFormLayer &layer,
                                         std::string &why) {
  std::string notStep = (name + "'s update is not its gradient at the "
                                "chunk's start, weighted by the last token's "
                                "step sizes")
                            .str();
  llvm::DenseSet<Value> stops(loop.getStateArgs().begin(),
                              loop.getStateArgs().end());
  stops.insert(grad);
  if (!windowOf(affine.x))
    stops.insert(affine.x);
  EinsumReader reader(stops);
  Value eta = loop.getWindowArgs()[layer.eta.sequence];
  Value next = nextState(weight.state);
  std::optional<Polynomial> poly = reader.read(next);
  if (!poly || poly->terms.size() != 2)
    return why = notStep, failure();
  // The last row of the step sizes: eta[C - 1, :].
  Value last;
  for (const Term &term : poly->terms)
    for (const Factor &factor : term.factors)
      if (factor.leaf != grad && factor.leaf != affine.x &&
          factor.leaf != stateArg(weight.state))
        last = factor.leaf;
  auto slice = last ? last.getDefiningOp<tensor::ExtractSliceOp>() : nullptr;
  if (!slice || throughReshapes(slice.getSource()) != eta ||
      !slice.hasUnitStride())
    return why = notStep, failure();
  // The step sizes, or a reshape of them that drops or adds units only.
  auto sourceType = cast<RankedTensorType>(slice.getSource().getType());
  auto etaType = cast<RankedTensorType>(eta.getType());
  SmallVector<unsigned> sourceRoles, etaReal;
  for (auto [d, role] : llvm::enumerate(layer.eta.roles))
    if (!isUnitDim(etaType, d))
      etaReal.push_back(d);
  unsigned nextReal = 0;
  for (int64_t d = 0; d < sourceType.getRank(); ++d) {
    if (sourceType.getDimSize(d) == 1) {
      sourceRoles.push_back(nextUnit++);
      continue;
    }
    if (nextReal == etaReal.size() ||
        etaType.getDimSize(etaReal[nextReal]) != sourceType.getDimSize(d))
      return why = notStep, failure();
    sourceRoles.push_back(layer.eta.roles[etaReal[nextReal++]]);
  }
  if (nextReal != etaReal.size())
    return why = notStep, failure();
  SmallVector<unsigned> lastRoles;
  bool sawRow = false;
  for (auto [d, role] : llvm::enumerate(sourceRoles)) {
    int64_t offset = slice.getStaticOffsets()[d];
    int64_t size = slice.getStaticSizes()[d];
    bool row = role == kTime;
    sawRow |= row;
    if (row ? offset != chunkSize - 1 || size != 1
            : offset != 0 || size != sourceType.getDimSize(d))
      return why = notStep, failure();
    lastRoles.push_back(row ? nextUnit++ : role);
  }
  if (!sawRow)
    return why = notStep, failure();
  unsigned fresh = kFresh;
  unsigned j = fresh++;
  Polynomial expected;
  expected.labels = weight.roles;
  RoleTerm keep(1.0, fresh), moved(-layer.step, fresh);
  keep.add(stateArg(weight.state), weight.roles);
  moved.add(last, lastRoles, {{kPair, j}});
  if (keysToo)
    moved.add(affine.x, affine.xRoles, {{kTime, j}});
  moved.add(grad, affine.roles, {{kTime, j}});
  expected.terms.push_back(keep.term);
  expected.terms.push_back(moved.term);
  if (!matches(expected, *poly, next.getType()))
    return why = notStep, failure();
  return success();
}

LogicalResult DualFormReader::readRates(DualFormLayer &layer,
                                        std::string &why) {
  constexpr const char *kNotRates =
      "its step sizes are not a per-position factor times per-token rates "
      "(eta_ij = token_eta[i] * lr[j])";
  Value sequence = loop.getSequences()[layer.eta.sequence];
  // A slice of all of a tensor is the tensor.
  if (auto slice = sequence.getDefiningOp<tensor::ExtractSliceOp>();
      slice && slice.getSourceType() == slice.getResultType() &&
      slice.hasZeroOffset() && slice.hasUnitStride())
    sequence = slice.getSource();
  EinsumReader reader;
  std::optional<Polynomial> poly = reader.read(sequence);
  if (!poly || poly->terms.size() != 1)
    return why = kNotRates, failure();
  llvm::DenseMap<unsigned, unsigned> roles;
  for (auto [label, role] : llvm::zip_equal(poly->labels, layer.eta.roles))
    roles[label] = role;
  const Term &term = poly->terms[0];
  layer.lrScale = term.coeff;
  for (const Factor &factor : term.factors) {
    SmallVector<unsigned> factorRoles;
    for (auto [d, label] : llvm::enumerate(factor.labels)) {
      auto it = roles.find(label);
      if (it != roles.end() && it->second < kUnit)
        factorRoles.push_back(it->second);
      else if (isUnitDim(factor.leaf.getType(), d))
        factorRoles.push_back(nextUnit++);
      else
        return why = kNotRates, failure();
    }
    // Exporters tile the per-position factor over the streams and chunks.
    bool perPosition = llvm::is_contained(factorRoles, kTime) &&
                       !llvm::is_contained(factorRoles, kPair);
    if (perPosition && layer.tokenEta.empty() && !layer.tokenEtaLeaf &&
        llvm::all_of(factorRoles, [](unsigned role) {
          return role == kTime || role >= kUnit;
        })) {
      // One factor per position, computed at run time.
      layer.tokenEtaLeaf = factor.leaf;
      layer.tokenEtaRoles = factorRoles;
      continue;
    }
    if (perPosition && layer.tokenEta.empty() && !layer.tokenEtaLeaf) {
      // A constant whose elements depend on the position alone.
      Attribute attr;
      DenseElementsAttr values = matchPattern(factor.leaf, m_Constant(&attr))
                                     ? denseConstantValue(attr)
                                     : DenseElementsAttr();
      if (!values || !values.getElementType().isF32())
        return why = kNotRates, failure();
      unsigned axis = llvm::find(factorRoles, kTime) - factorRoles.begin();
      ArrayRef<int64_t> shape = values.getType().getShape();
      layer.tokenEta.assign(chunkSize, std::nan(""));
      SmallVector<float> elements(values.getValues<float>());
      for (auto [flat, x] : llvm::enumerate(elements)) {
        int64_t rest = flat, position = 0;
        for (int64_t d = shape.size() - 1; d >= 0; --d) {
          if (static_cast<unsigned>(d) == axis)
            position = rest % shape[d];
          rest /= shape[d];
        }
        double &slot = layer.tokenEta[position];
        if (std::isnan(slot))
          slot = x;
        else if (slot != x)
          return why = kNotRates, failure();
      }
      continue;
    }
    bool perToken = llvm::count(factorRoles, kPair) == 1 &&
                    llvm::count(factorRoles, kChunkAxis) == 1 &&
                    !llvm::is_contained(factorRoles, kTime);
    for (unsigned s = 0; s < layer.numStreams; ++s)
      perToken = perToken && llvm::count(factorRoles, kStream + s) == 1;
    if (!perToken || layer.lrLeaf)
      return why = kNotRates, failure();
    layer.lrLeaf = factor.leaf;
    layer.lrRoles = factorRoles;
  }
  if (!layer.lrLeaf)
    return why = kNotRates, failure();
  return success();
}

FailureOr<DualFormLayer> DualFormReader::read(bool &isDualForm,
                                              std::string &why) {
  isDualForm = false;
  if (loop.getYield().getOutputs().size() != 1)
    return why = "not one output", failure();
  for (Value init : loop.getInits())
    if (!getElementTypeOrSelf(init.getType()).isF32())
      return why = "its state is not f32", failure();
  // The output: LayerNorm of a pre-norm that reads the state, plus a window.
  Value out = loop.getYield().getOutputs()[0];
  EinsumReader outReader;
  std::optional<Polynomial> outPoly = outReader.read(out);
  if (!outPoly)
    return why = "its output is not a LayerNorm", failure();
  std::optional<Normalized> norm;
  const Term *normTerm = nullptr;
  const Factor *residualFactor = nullptr;
  for (const Term &term : outPoly->terms)
    for (const Factor &factor : term.factors)
      if (std::optional<Normalized> n = readNormalized(factor.leaf)) {
        norm = n;
        normTerm = &term;
      }
  if (!norm || llvm::none_of(loop.getStateArgs(), [&](Value state) {
        return readsValue(norm->x, state);
      }))
    return why = "its output is no LayerNorm of what reads its state",
           failure();
  isDualForm = true;
  DualFormLayer layer;
  SmallVector<unsigned> outReal = realLabels(outPoly->labels, out.getType());
  // gamma * LN(x) + beta (+ a window): gamma and beta leaves over the
  // output's features (and streams), absent where the exporter folded them.
  const Factor *normFactor = nullptr, *gammaFactor = nullptr,
               *betaFactor = nullptr;
  auto within = [&](const Factor &factor) {
    return llvm::all_of(
        realLabels(factor.labels, factor.leaf.getType()),
        [&](unsigned label) { return llvm::is_contained(outReal, label); });
  };
  for (const Factor &factor : normTerm->factors) {
    if (readNormalized(factor.leaf) && !normFactor)
      normFactor = &factor;
    else if (!gammaFactor && !windowOf(factor.leaf) && !stateOf(factor.leaf) &&
             within(factor))
      gammaFactor = &factor;
    else
      return why = "its output's LayerNorm is scaled by other than a "
                   "weight per feature",
             failure();
  }
  if (normTerm->coeff != 1.0 ||
      realLabels(normFactor->labels, normFactor->leaf.getType()) != outReal)
    return why = "its output's LayerNorm is scaled or transposed", failure();
  for (const Term &term : outPoly->terms) {
    if (&term == normTerm)
      continue;
    const Factor *only = term.factors.size() == 1 ? &term.factors[0] : nullptr;
    std::optional<unsigned> window = only ? windowOf(only->leaf) : std::nullopt;
    if (only && window && term.coeff == 1.0 && !layer.residual &&
        realLabels(only->labels, only->leaf.getType()) == outReal) {
      layer.residual = *window;
      residualFactor = only;
      continue;
    }
    if (only && !window && !stateOf(only->leaf) && term.coeff == 1.0 &&
        !betaFactor && within(*only)) {
      betaFactor = only;
      continue;
    }
    return why = "its output adds to its LayerNorm other than a shift per "
                 "feature and one window",
           failure();
  }
  if (!loop.isSingleChunk() && loop.getChunk() != 1)
    return why = "its chunks are not its mini-batches (chunk of 1 along a "
                 "mini-batch axis)",
           failure();
  for (Value final : loop.getFinalStates())
    if (!final.use_empty())
      return why = "its final weights are read after the loop (not built "
                   "yet)",
             failure();
  // The pre-norm reads the weights, the data, masks, one gradient and, in
  // a two-layer network, the hidden activations of queries and keys.
  llvm::DenseSet<Value> stateStops(loop.getStateArgs().begin(),
                                   loop.getStateArgs().end());
  EinsumReader preReader(stateStops, /*readMasks=*/true);
  std::optional<Polynomial> prePoly = preReader.read(norm->x);
  if (!prePoly)
    return why = "its output's pre-norm is not a sum of products", failure();
  for (const Term &term : prePoly->terms)
    for (const Factor &factor : term.factors) {
      if (windowOf(factor.leaf) || stateOf(factor.leaf) ||
          factor.leaf.getType().isInteger(1) || geluTanhInput(factor.leaf))
        continue;
      if (gradient && gradient != factor.leaf)
        return why = "its output's pre-norm reads more than its weights, the "
                     "data, one gradient and GELU activations",
               failure();
      gradient = factor.leaf;
    }
  if (!gradient)
    return why = "its output's pre-norm reads no gradient", failure();
  linalg::GenericOp division = parallelGeneric(gradient, 2);
  auto div =
      division ? yielded(division).getDefiningOp<arith::DivFOp>() : nullptr;
  if (!div || div.getLhs() != division.getRegion().front().getArgument(0) ||
      div.getRhs() != division.getRegion().front().getArgument(1))
    return why = "its gradient is not divided by the keys' deviation",
           failure();
  Value numerator = division.getDpsInputs()[0];
  // The keys' LayerNorm, which the gradient's numerator reads.
  std::optional<Normalized> keysNorm;
  Value keysNormalized;
  {
    EinsumReader plain;
    std::optional<Polynomial> poly = plain.read(numerator);
    for (const Term &term : poly ? poly->terms : SmallVector<Term>())
      for (const Factor &factor : term.factors)
        if (std::optional<Normalized> n = readNormalized(factor.leaf)) {
          if (keysNormalized && keysNormalized != factor.leaf)
            return why = "its gradient reads two LayerNorms", failure();
          keysNormalized = factor.leaf;
          keysNorm = n;
        }
  }
  if (!keysNorm)
    return why = "its gradient reads no LayerNorm of the keys", failure();
  Value divisor = division.getDpsInputs()[1];
  std::optional<double> divisorEps =
      divisor == keysNorm->stddev
          ? keysNorm->eps
          : readStdDev(divisor, Centered{keysNorm->x, keysNorm->axis});
  if (!dividesRows(division, keysNorm->axis) || !divisorEps ||
      std::abs(*divisorEps - keysNorm->eps) > 1e-12 * keysNorm->eps)
    return why = "its gradient is not divided by the keys' deviation",
           failure();
  if (std::abs(norm->eps - keysNorm->eps) > 1e-12 * keysNorm->eps)
    return why = "the LayerNorms of its keys and of its output differ in "
                 "eps",
           failure();
  // The network: `k W + b`, or `gelu(k W0 + b0) W1 + b1`.
  std::optional<unsigned> keysWindow;
  {
    EinsumReader reader(stateStops);
    std::optional<Polynomial> poly = reader.read(keysNorm->x);
    for (const Term &term : poly ? poly->terms : SmallVector<Term>())
      for (const Factor &factor : term.factors)
        if (std::optional<unsigned> window = windowOf(factor.leaf))
          keysWindow = window;
  }
  bool twoLayers = !keysWindow;
  FailureOr<Affine> last =
      readAffine(keysNorm->x, twoLayers ? kHidden : kIn, kOut, why);
  if (failed(last))
    return failure();
  zRoles = last->roles;
  if (zRoles[keysNorm->axis] != kOut)
    return why = "its LayerNorm is not over the output features", failure();
  FailureOr<Affine> first = last;
  if (twoLayers) {
    Value z1 = geluTanhInput(last->x);
    if (!z1)
      return why = "its output layer's keys are not GELU (tanh) of the "
                   "keys' hidden pre-activations",
             failure();
    first = readAffine(z1, kIn, kHidden, why);
    if (failed(first))
      return failure();
    if (!windowOf(first->x))
      return why = "its first layer does not read the keys", failure();
    if (static_cast<bool>(first->bias) != static_cast<bool>(last->bias))
      return why = "one of its two layers has a bias and the other not",
             failure();
  }
  layer.k = {*windowOf(first->x), first->xRoles, Value()};
  // The output layer's pre-norm, and in a two-layer network the hidden's.
  Value queries;
  SmallVector<unsigned> queryRoles, preRoles;
  if (failed(readPreNorm(layer, *prePoly, norm->x, *last, gradient, queries,
                         queryRoles, preRoles, why)))
    return failure();
  layer.outputRoles = preRoles;
  // The roles of the output's labels: the pre-norm's, in its order.
  {
    llvm::DenseMap<unsigned, unsigned> outRoles;
    unsigned next = 0;
    SmallVector<unsigned> realPre;
    for (auto [d, role] : llvm::enumerate(preRoles))
      if (!isUnitDim(norm->x.getType(), d))
        realPre.push_back(role);
    for (unsigned label : outReal)
      outRoles[label] = realPre[next++];
    for (auto [factor, param] : {std::pair{gammaFactor, &layer.gamma},
                                 std::pair{betaFactor, &layer.beta}}) {
      if (!factor)
        continue;
      std::optional<SmallVector<unsigned>> roles =
          rolesOf(*factor, outRoles, std::nullopt);
      if (!roles || llvm::count(*roles, kOut) != 1 ||
          llvm::is_contained(*roles, kTime))
        return why = "its LayerNorm's scale or shift is not one per feature "
                     "(and stream)",
               failure();
      // A loop invariant, or a constant the step holds its own copy of.
      Value leaf = factor->leaf;
      auto arg = dyn_cast<BlockArgument>(leaf);
      bool invariant = arg && arg.getOwner() == &loop.getBody().front() &&
                       llvm::is_contained(loop.getInvariantArgs(), arg);
      if (!invariant && !isRematerializable(leaf))
        return why = "its LayerNorm's scale or shift is computed in the step",
               failure();
      *param = RoledWindow{0, *roles, leaf};
    }
  }
  if (failed(readGradient(layer, *keysNorm, keysNormalized, numerator, why)))
    return failure();
  Value hiddenGradient;
  if (twoLayers) {
    Value z1bar = geluTanhInput(queries);
    if (!z1bar)
      return why = "its output layer does not read GELU (tanh) of the "
                   "queries' hidden pre-activations",
             failure();
    // The hidden layer's gradient: the one value the hidden pre-norm
    // reads besides the weights, the data and masks.
    std::optional<Polynomial> hiddenPoly;
    Type hiddenType = geluTanhInput(last->x).getType();
    for (Operation &op : loop.getBody().front()) {
      if (op.getNumResults() != 1 || op.getResult(0).getType() != hiddenType ||
          !readsValue(op.getResult(0), gradient))
        continue;
      Value candidate = op.getResult(0);
      llvm::DenseSet<Value> stops(stateStops);
      stops.insert(candidate);
      EinsumReader reader(stops, /*readMasks=*/true);
      std::optional<Polynomial> poly = reader.read(z1bar);
      bool onlyIt = poly.has_value();
      for (const Term &term : poly ? poly->terms : SmallVector<Term>())
        for (const Factor &factor : term.factors)
          onlyIt &= windowOf(factor.leaf) || stateOf(factor.leaf) ||
                    factor.leaf.getType().isInteger(1) ||
                    factor.leaf == candidate;
      if (onlyIt) {
        hiddenGradient = candidate;
        hiddenPoly = poly;
        break;
      }
    }
    if (!hiddenGradient)
      return why = "its hidden layer's pre-norm reads no one gradient",
             failure();
    if (failed(readHiddenGradient(hiddenGradient, *first, *last, why)))
      return failure();
    Value q;
    SmallVector<unsigned> qRoles, hiddenRoles;
    if (failed(readPreNorm(layer, *hiddenPoly, z1bar, *first, hiddenGradient, q,
                           qRoles, hiddenRoles, why)))
      return failure();
    if (!windowOf(q))
      return why = "its hidden layer does not read the queries", failure();
    layer.q = {*windowOf(q), qRoles, Value()};
  } else {
    if (!windowOf(queries))
      return why = "its output does not read the queries", failure();
    layer.q = {*windowOf(queries), queryRoles, Value()};
  }
  // Every weight's update.
  if (twoLayers) {
    if (failed(readUpdate(first->weight, *first, true, hiddenGradient, "W0",
                          layer, why)) ||
        (first->bias && failed(readUpdate(*first->bias, *first, false,
                                          hiddenGradient, "b0", layer, why))))
      return failure();
    layer.weights.push_back(first->weight);
    if (first->bias)
      layer.weights.push_back(*first->bias);
  }
  StringRef lastName = twoLayers ? "W1" : "W";
  if (failed(readUpdate(last->weight, *last, true, gradient, lastName, layer,
                        why)) ||
      (last->bias && failed(readUpdate(*last->bias, *last, false, gradient,
                                       twoLayers ? "b1" : "b", layer, why))))
    return failure();
  layer.weights.push_back(last->weight);
  if (last->bias)
    layer.weights.push_back(*last->bias);
  layer.bias = last->bias.has_value();
  layer.twoLayers = twoLayers;
  layer.numStreams = numStreams;
  if (loop.getInits().size() != layer.weights.size())
    return why = "it carries more state than its weights", failure();
  if (failed(readRates(layer, why)))
    return failure();
  if (layer.outputRoles[norm->axis] != kOut)
    return why = "its LayerNorm is not over the output features", failure();
  // The output's roles: the pre-norm's, where the output puts them.
  SmallVector<unsigned> realRoles;
  for (auto [d, role] : llvm::enumerate(layer.outputRoles))
    if (!isUnitDim(norm->x.getType(), d))
      realRoles.push_back(role);
  SmallVector<unsigned> outputRoles;
  unsigned next = 0;
  for (auto [d, label] : llvm::enumerate(outPoly->labels)) {
    if (static_cast<int64_t>(d) == loop.getOutputAxes()[0])
      outputRoles.push_back(kChunkAxis);
    else if (isUnitDim(out.getType(), d))
      outputRoles.push_back(nextUnit++);
    else
      outputRoles.push_back(realRoles[next++]);
  }
  if (residualFactor) {
    next = 0;
    unsigned axis = loop.getWindowAxes()[*layer.residual];
    for (auto [d, label] : llvm::enumerate(residualFactor->labels)) {
      if (d == axis)
        layer.residualRoles.push_back(kChunkAxis);
      else if (isUnitDim(residualFactor->leaf.getType(), d))
        layer.residualRoles.push_back(nextUnit++);
      else
        layer.residualRoles.push_back(realRoles[next++]);
    }
  }
  layer.outputRoles = outputRoles;
  layer.chunkSize = chunkSize;
  return layer;
}

/// The unit roles (of dimensions of size 1) among `roles`, and the others in
/// order.
struct SplitRoles {
  llvm::DenseSet<unsigned> units;
  SmallVector<unsigned> real;
};
SplitRoles splitUnits(ArrayRef<unsigned> roles) {
  SplitRoles split;
  for (unsigned role : roles)
    if (role >= kUnit)
      split.units.insert(role);
    else
      split.real.push_back(role);
  return split;
}

/// `a + b`, elementwise, of one type.
Value added(RewriterBase &rewriter, Location loc, Value a, Value b) {
  auto type = cast<RankedTensorType>(a.getType());
  Value init = tensor::EmptyOp::create(rewriter, loc,
                                       tensor::getMixedSizes(rewriter, loc, a),
                                       type.getElementType());
  AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             rewriter, loc, type, ValueRange{a, b}, ValueRange{init},
             SmallVector<AffineMap>(3, identity),
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [](OpBuilder &b, Location loc, ValueRange args) {
               Value sum = arith::AddFOp::create(b, loc, args[0], args[1]);
               linalg::YieldOp::create(b, loc, sum);
             })
      .getResult(0);
}

/// A sequence whose dimensions have `roles` as `[1, N, T, feature]`: the
/// streams merged, the chunk axis and the token within it merged into time.
Value toTokens(RewriterBase &rewriter, Location loc, LayoutBuilder &layout,
               ArrayRef<unsigned> streams, Value value,
               ArrayRef<unsigned> roles, std::optional<unsigned> feature) {
  auto [units, real] = splitUnits(roles);
  value = layout.dropUnits(value, roles, units);
  SmallVector<unsigned> order(streams);
  order.push_back(kChunkAxis);
  order.push_back(feature ? kTime : kPair);
  if (feature)
    order.push_back(*feature);
  value = layout.permute(value, real, order);
  auto type = cast<RankedTensorType>(value.getType());
  int64_t n = streams.size();
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == n + 1)
      continue;
    if (d == n) {
      groups.push_back({n, n + 1});
      int64_t a = type.getDimSize(n), b = type.getDimSize(n + 1);
      shape.push_back(ShapedType::isDynamic(a) || ShapedType::isDynamic(b)
                          ? ShapedType::kDynamic
                          : a * b);
      continue;
    }
    groups.push_back({d});
    shape.push_back(type.getDimSize(d));
  }
  value = tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()), value,
      groups);
  return layout.toLayer(value, 4);
}

} // namespace

FailureOr<DualFormLayer> linalg_raise::readDualFormLayer(ChunkLoopOp loop,
                                                         bool &isDualForm,
                                                         std::string &why) {
  return DualFormReader(loop).read(isDualForm, why);
}

void linalg_raise::buildDualFormLayer(RewriterBase &rewriter, ChunkLoopOp loop,
                                      const DualFormLayer &layer) {
  Location loc = loop.getLoc();
  MLIRContext *context = loop.getContext();
  rewriter.setInsertionPoint(loop);
  SmallVector<unsigned> streams;
  for (unsigned s = 0; s < layer.numStreams; ++s)
    streams.push_back(kStream + s);
  LayoutBuilder layout(rewriter, loc, streams);
  SmallVector<Value> sequences(loop.getSequences());
  auto tokens = [&](const RoledWindow &window, unsigned feature) {
    return toTokens(rewriter, loc, layout, streams, sequences[window.sequence],
                    window.roles, feature);
  };
  Value q = tokens(layer.q, kIn);
  Value k = tokens(layer.k, kIn);
  // The target, a sum of windows.
  Value v;
  for (auto [window, coeff] : layer.target) {
    Value term = toTokens(rewriter, loc, layout, streams, sequences[window],
                          layer.targetRoles, kOut);
    if (coeff != 1.0)
      term = scaled(rewriter, loc, term, coeff);
    v = v ? added(rewriter, loc, v, term) : term;
  }
  // The per-token rates, [1, N, T, 1].
  Value lr = toTokens(rewriter, loc, layout, streams, layer.lrLeaf,
                      layer.lrRoles, std::nullopt);
  if (layer.lrScale != 1.0)
    lr = scaled(rewriter, loc, lr, layer.lrScale);
  SmallVector<float> etas(layer.tokenEta.begin(), layer.tokenEta.end());
  Value tokenEta;
  if (layer.tokenEtaLeaf) {
    tokenEta = layout.dropUnits(layer.tokenEtaLeaf, layer.tokenEtaRoles,
                                splitUnits(layer.tokenEtaRoles).units);
  }
  if (!etas.empty()) {
    auto etaType = RankedTensorType::get({static_cast<int64_t>(etas.size())},
                                         rewriter.getF32Type());
    tokenEta = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(etaType, ArrayRef<float>(etas)));
  }
  int64_t dout = cast<RankedTensorType>(v.getType()).getDimSize(3);
  auto outType = cast<RankedTensorType>(loop.getOutputs()[0].getType());
  // The LayerNorm's scale and shift: [Dout], or [N, Dout] broadcast over
  // the streams they do not vary along; 1 and 0 where they were folded.
  auto affineParam = [&](const std::optional<RoledWindow> &param,
                         float folded) -> Value {
    auto type = RankedTensorType::get({dout}, rewriter.getF32Type());
    if (!param)
      return arith::ConstantOp::create(rewriter, loc,
                                       DenseElementsAttr::get(type, folded));
    auto [units, real] = splitUnits(param->roles);
    // The value outside the loop: the invariant's operand, or a copy of the
    // constant.
    Value source = param->source;
    if (auto arg = dyn_cast<BlockArgument>(source)) {
      auto invariants = loop.getInvariantArgs();
      source = loop.getInvariants()[llvm::find(invariants, arg) -
                                    invariants.begin()];
    } else {
      IRMapping mapping;
      source = rematerialize(rewriter, source, mapping);
    }
    Value value = layout.dropUnits(source, param->roles, units);
    if (real.size() == 1)
      return value;
    // [streams..., Dout], read through a map from its own roles.
    SmallVector<unsigned> order(streams);
    order.push_back(kOut);
    SmallVector<int64_t> shape;
    for (unsigned role : order)
      shape.push_back(outType.getDimSize(llvm::find(layer.outputRoles, role) -
                                         layer.outputRoles.begin()));
    SmallVector<AffineExpr> exprs;
    for (unsigned role : real)
      exprs.push_back(
          rewriter.getAffineDimExpr(llvm::find(order, role) - order.begin()));
    auto broadcastType = RankedTensorType::get(shape, rewriter.getF32Type());
    Value init =
        tensor::EmptyOp::create(rewriter, loc, shape, rewriter.getF32Type());
    value =
        linalg::GenericOp::create(
            rewriter, loc, broadcastType, ValueRange{value}, ValueRange{init},
            SmallVector<AffineMap>{
                AffineMap::get(order.size(), 0, exprs, context),
                rewriter.getMultiDimIdentityMap(order.size())},
            SmallVector<utils::IteratorType>(order.size(),
                                             utils::IteratorType::parallel),
            [](OpBuilder &b, Location loc, ValueRange args) {
              linalg::YieldOp::create(b, loc, args[0]);
            })
            .getResult(0);
    ReassociationIndices lead;
    for (unsigned i = 0; i < streams.size(); ++i)
      lead.push_back(i);
    int64_t heads = 1;
    for (unsigned i = 0; i < streams.size(); ++i)
      heads *= shape[i];
    return tensor::CollapseShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({heads, dout}, rewriter.getF32Type()), value,
        SmallVector<ReassociationIndices>{
            lead, {static_cast<int64_t>(streams.size())}});
  };
  Value gamma = affineParam(layer.gamma, 1.0f);
  Value beta = affineParam(layer.beta, 0.0f);
  // The weights, one per stream: [N, r, c].
  SmallVector<Value> weights;
  for (const LayerWeight &layerWeight : layer.weights) {
    const LayerWeight *weight = &layerWeight;
    SmallVector<unsigned> order(streams);
    order.push_back(weight->input);
    order.push_back(weight->output);
    auto [units, real] = splitUnits(weight->roles);
    Value init = layout.permute(
        layout.dropUnits(loop.getInits()[weight->state], weight->roles, units),
        real, order);
    Value inLayer = layout.toLayer(init, 4);
    auto type = cast<RankedTensorType>(inLayer.getType());
    weights.push_back(tensor::CollapseShapeOp::create(
        rewriter, loc,
        RankedTensorType::get(type.getShape().drop_front(),
                              type.getElementType()),
        inLayer, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}}));
  }
  SmallVector<int64_t> trained;
  for (int64_t i = 0, e = layer.weights.size(); i < e; ++i)
    trained.push_back(i);
  auto model = FastWeightModelAttr::get(
      context, layer.twoLayers ? ModelKind::mlp : ModelKind::linear, trained,
      layer.bias, layer.twoLayers ? Activation::gelu_tanh : Activation::silu);
  auto loss = LossAttr::get(context, LossKind::layernorm_mse, APFloat(1.0),
                            Reduction::sum, APFloat(layer.eps));
  auto update = UpdateAttr::get(
      context, layer.step < 0 ? Sign::ascent : Sign::descent,
      APFloat(std::abs(layer.step)), ClipKind::none, NewtonSchulzAttr(),
      WeightNormKind::none, APFloat(1e-5), UpdateBase::weights);
  auto schedule = ScheduleAttr::get(context, ScheduleKind::chunked,
                                    layer.chunkSize, UpdateOrder::causal, 1);
  RankedTensorType outputType = layerOutputType(q, v);
  auto op = KVBLayerOp::create(rewriter, loc, outputType, TypeRange(), q, k, v,
                               weights, lr, tokenEta, Value(), gamma, beta,
                               model, loss, update, schedule);
  Value output = op.getOutput();
  if (layer.residual) {
    Value residual =
        toTokens(rewriter, loc, layout, streams, sequences[*layer.residual],
                 layer.residualRoles, kOut);
    output = added(rewriter, loc, output, residual);
  }
  // Back to the loop's output: [streams, n, C, D] in the output's order,
  // its unit dimensions put back.
  auto [units, real] = splitUnits(layer.outputRoles);
  // [1, N, T, D] -> [streams..., n, C, D] with the output's sizes.
  SmallVector<int64_t> tokenShape;
  SmallVector<unsigned> tokenOrder(streams);
  tokenOrder.append({kChunkAxis, kTime, kOut});
  for (unsigned role : tokenOrder)
    tokenShape.push_back(outType.getDimSize(
        llvm::find(layer.outputRoles, role) - layer.outputRoles.begin()));
  // [1, N, T, D] -> [N, T, D] (-> [T, D] without streams, N being 1) ->
  // [streams..., n, C, D].
  Type element = outType.getElementType();
  auto outputShape = cast<RankedTensorType>(output.getType()).getShape();
  output = tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get(outputShape.drop_front(), element),
      output, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  SmallVector<ReassociationIndices> groups;
  int64_t n = layer.numStreams;
  if (n == 0) {
    output = tensor::CollapseShapeOp::create(
        rewriter, loc,
        RankedTensorType::get(outputShape.drop_front(2), element), output,
        SmallVector<ReassociationIndices>{{0, 1}, {2}});
    groups = {{0, 1}, {2}};
  } else {
    ReassociationIndices lead;
    for (int64_t s = 0; s < n; ++s)
      lead.push_back(s);
    groups = {lead, {n, n + 1}, {n + 2}};
  }
  output = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(tokenShape, element), output,
      groups);
  output = layout.permute(output, tokenOrder, real);
  output = layout.addUnits(output, layer.outputRoles, units);
  rewriter.replaceAllUsesWith(loop.getOutputs()[0], output);
  rewriter.eraseOp(loop);
}
