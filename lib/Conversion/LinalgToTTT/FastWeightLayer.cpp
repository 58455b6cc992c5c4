//===- FastWeightLayer.cpp - a layer read off a loop, as an op ------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "FastWeightLayer.h"
#include "ChunkLoopForms.h"
#include "ElementwiseReadings.h"
#include "LayerLayout.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

FailureOr<llvm::SetVector<Operation *>> linalg_raise::madeOf(Value value,
                                                             Value base) {
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> stack{value};
  while (!stack.empty()) {
    Value next = stack.pop_back_val();
    if (next == base)
      continue;
    Operation *op = next.getDefiningOp();
    if (!op)
      return failure();
    if (ops.insert(op))
      llvm::append_range(stack, readValues(op));
  }
  return ops;
}

void linalg_raise::buildFastWeightLayer(RewriterBase &rewriter,
                                        ChunkLoopOp loop,
                                        const FastWeightLayer &layer) {
  Location loc = loop.getLoc();
  MLIRContext *context = loop.getContext();
  rewriter.setInsertionPoint(loop);
  SmallVector<unsigned> streams;
  for (unsigned s = 0; s < layer.numStreams; ++s)
    streams.push_back(kStream + s);
  LayoutBuilder layout(rewriter, loc, streams);
  llvm::DenseSet<unsigned> units;
  auto collectUnits = [&](ArrayRef<unsigned> roles) {
    for (unsigned role : roles)
      if (role >= kUnit)
        units.insert(role);
  };
  for (const RoledWindow *window : {&layer.q, &layer.k, &layer.v})
    collectUnits(window->roles);
  for (const auto &lr : layer.lr)
    if (lr)
      collectUnits(lr->roles);
  if (layer.momentum)
    collectUnits(layer.momentum->roles);
  auto real = [&](ArrayRef<unsigned> roles) {
    SmallVector<unsigned> result;
    for (unsigned role : roles)
      if (!units.contains(role))
        result.push_back(role);
    return result;
  };
  auto inStreams = [&](Value value, ArrayRef<unsigned> roles,
                       ArrayRef<unsigned> order) -> Value {
    return layout.permute(layout.dropUnits(value, roles, units), real(roles),
                          order);
  };
  auto order = [&](std::initializer_list<unsigned> rest) {
    SmallVector<unsigned> result(streams);
    result.append(rest);
    return result;
  };
  SmallVector<Value> sequences = sequencesOverTheLoopLength(rewriter, loop);
  auto sequence = [&](const RoledWindow &window,
                      ArrayRef<unsigned> wanted) -> Value {
    Value value = window.source ? window.source : sequences[window.sequence];
    return layout.toLayer(inStreams(value, window.roles, wanted), 4);
  };
  Value q = sequence(layer.q, order({kTime, kIn}));
  Value k = sequence(layer.k, order({kTime, kIn}));
  Value v = sequence(layer.v, order({kTime, kOut}));
  // One column of rates per weight, or one for all when they are one.
  Value lr;
  if (!layer.lr.empty() && layer.lr[0]) {
    bool shared = llvm::all_of(layer.lr, [&](const auto &rates) {
      return !rates->source && rates->sequence == layer.lr[0]->sequence;
    });
    SmallVector<Value> columns;
    for (const auto &rates : layer.lr) {
      columns.push_back(sequence(*rates, order({kTime})));
      if (shared)
        break;
    }
    lr = columns.size() == 1
             ? columns[0]
             : tensor::ConcatOp::create(rewriter, loc, /*dim=*/3, columns)
                   .getResult();
  }
  Value momentum;
  if (layer.momentum) {
    momentum = layout.toLayer(inStreams(sequences[layer.momentum->sequence],
                                        layer.momentum->roles, order({kTime})),
                              3);
    if (layer.momentumScale != 1.0)
      momentum = scaled(rewriter, loc, momentum, layer.momentumScale);
  }
  SmallVector<Value> weights, weightsInStreams;
  SmallVector<SmallVector<unsigned>> weightOrders;
  for (const LayerWeight &weight : layer.weights) {
    weightOrders.push_back(order({weight.input, weight.output}));
    Value init = loop.getInits()[weight.state];
    weightsInStreams.push_back(
        inStreams(init, weight.roles, weightOrders.back()));
    // [1, N, r, c] as [N, r, c]: one initial weight per head, the batch of
    // one being the streams merged into heads.
    Value inLayer = layout.toLayer(weightsInStreams.back(), 4);
    auto type = cast<RankedTensorType>(inLayer.getType());
    weights.push_back(tensor::CollapseShapeOp::create(
        rewriter, loc,
        RankedTensorType::get(type.getShape().drop_front(),
                              type.getElementType()),
        inLayer, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}}));
  }
  bool ascent = layer.lossScale < 0;
  auto loss =
      LossAttr::get(context, LossKind::dot, APFloat(std::abs(layer.lossScale)),
                    Reduction::sum, APFloat(1e-6));
  NewtonSchulzAttr orthogonalize = newtonSchulzAttr(context, layer.muon);
  auto update = UpdateAttr::get(
      context, ascent ? Sign::ascent : Sign::descent, APFloat(layer.step),
      layer.clip, orthogonalize,
      layer.weightNormEps ? WeightNormKind::output_channels
                          : WeightNormKind::none,
      APFloat(layer.weightNormEps.value_or(1e-5)),
      layer.addsToUpdate ? UpdateBase::update : UpdateBase::weights);
  ScheduleAttr schedule = scheduleOf(loop, layer.order);
  auto qType = cast<RankedTensorType>(q.getType());
  RankedTensorType outputType = layerOutputType(q, v);
  bool wantsFinal = llvm::any_of(layer.weights, [&](const LayerWeight &w) {
    return !loop.getFinalStates()[w.state].use_empty();
  });
  SmallVector<Type> finalTypes;
  if (wantsFinal)
    for (Value weight : weights) {
      auto type = cast<RankedTensorType>(weight.getType());
      finalTypes.push_back(
          RankedTensorType::get({qType.getDimSize(0), qType.getDimSize(1),
                                 type.getDimSize(1), type.getDimSize(2)},
                                type.getElementType()));
    }
  auto op = KVBLayerOp::create(rewriter, loc, outputType, finalTypes, q, k, v,
                               weights, lr, Value(), momentum, Value(), Value(),
                               layer.model, loss, update, schedule);
  Value qInStreams = inStreams(sequences[layer.q.sequence], layer.q.roles,
                               order({kTime, kIn}));
  Value output = layout.fromLayer(op.getOutput(), qInStreams);
  output = layout.permute(output, order({kTime, kOut}), layer.outputRoles);
  // The other outputs of one step, made of the network's output alone,
  // computed again from the layer op's.
  Value network = loop.getYield().getOutputs()[0];
  IRMapping mapping;
  mapping.map(network, output);
  llvm::SetVector<Operation *> needed;
  for (Value other : loop.getYield().getOutputs().drop_front())
    needed.insert_range(*madeOf(other, network));
  // A constant the step made its own copy of is the one outside.
  Block *outside = loop->getBlock();
  for (Operation &op : loop.getBody().front()) {
    if (!needed.contains(&op))
      continue;
    if (op.getNumOperands() == 0 && op.getNumRegions() == 0) {
      auto same = llvm::find_if(*outside, [&](Operation &there) {
        return there.getNumOperands() == 0 &&
               OperationEquivalence::isEquivalentTo(
                   &op, &there,
                   OperationEquivalence::IgnoreLocations |
                       OperationEquivalence::IgnoreDiscardableAttrs);
      });
      if (same != outside->end() && same->isBeforeInBlock(loop)) {
        mapping.map(op.getResults(), same->getResults());
        continue;
      }
    }
    rewriter.clone(op, mapping);
  }
  for (auto [index, other] :
       llvm::enumerate(loop.getYield().getOutputs().drop_front()))
    rewriter.replaceAllUsesWith(loop.getOutputs()[index + 1],
                                mapping.lookupOrDefault(other));
  rewriter.replaceAllUsesWith(loop.getOutputs()[0], output);
  if (wantsFinal)
    for (auto [i, weight] : llvm::enumerate(layer.weights)) {
      Value final =
          layout.fromLayer(op.getFinalWeights()[i], weightsInStreams[i]);
      final = layout.permute(final, weightOrders[i], weight.roles);
      rewriter.replaceAllUsesWith(loop.getFinalStates()[weight.state], final);
    }
  rewriter.eraseOp(loop);
}
