//===- FormSingleSteps.cpp - a weight updated once, as ttt.chunk_loop -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A single step is a fast weight updated once and applied: LaCT's NVS and
// bidirectional layers, ViT^3, a TTT op function exported for one chunk.
// Nothing is repeated, so neither the reroll nor the loop former sees it;
// it is found here by dataflow alone:
//
//  - a *root* is a weight as the model has it: a function argument, or a
//    value made from constants only (an initializer, a parameter tiled over
//    the batch);
//  - an *update* moves a root W by what the data adds: `W + D` or `W - D`
//    elementwise (W possibly broadcast over the batch), a `linalg.add`, or
//    a sum over tokens accumulated into W; a root the step replaces rather
//    than moves (`W = NS(G); W = W + G`) has its new value in the applied
//    sum of its type made from a sum over tokens;
//  - what is made of a root and its update alone (transposes, a weight
//    norm) is *state-derived*; an op that reads a state-derived value and
//    gives something else *reads the state* (the gradient's `W k`, the
//    apply's `q W'`); an update is taken only if a state-derived value is
//    contracted with data (the weight is applied) and the new value is not
//    updated again (a step of an unrolled recurrence is the reroll's);
//  - the step's body is every op depending on the weights that an update
//    or a state read needs, with the sums over tokens feeding an update and
//    the elementwise ops on the body's values alone; the body's values read
//    after it are its outputs; the data it reads become the windows of one
//    chunk.
//
// Updates whose bodies share ops, or whose gradients read each other's
// weights (the three weights of a SwiGLU inner model), form one loop. The
// loop is kept only if a state is bound to keys and values
// (whyNotATTTLayer): a bias added to a projection, a residual or a masked
// softmax stays as it was. The window and output axes are read from the
// math: the label the output shares with a window and not with the state
// (time), or the one an update sums over and two windows share.
//
//===----------------------------------------------------------------------===//

#include "ChunkLoopForms.h"
#include "EinsumPolynomial.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTFORMSINGLESTEPS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;

namespace {

/// An update of a weight: the op that computes its next value from it and
/// what the data adds.
struct Update {
  /// Computes the next state, its one result.
  Operation *op;
  /// The weight as the model has it, and what the data adds to it.
  Value weight, delta;
  /// Which input of `op` reads the weight, where `op` reads it.
  unsigned weightInput = 0;
  /// Whether the weight and its new value were paired by their order only
  /// (the dataflow reads them as a set): then nothing after the step may
  /// read the new value.
  bool pairedByOrder = false;

  /// Whether the weight is broadcast to the next state's type; the loop's
  /// state is then the broadcast weight.
  bool broadcast() const {
    return weight.getType() != op->getResult(0).getType();
  }
};

/// Whether `map` reads an operand broadcast along some dimensions and not
/// transposed.
static bool isBroadcastMap(AffineMap map) {
  int64_t last = -1;
  for (AffineExpr expr : map.getResults()) {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      if (constant.getValue() != 0)
        return false;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || static_cast<int64_t>(dim.getPosition()) <= last)
      return false;
    last = dim.getPosition();
  }
  return true;
}

/// `W + D` as a named `linalg.add` (either operand the weight, chosen by
/// the caller) or `linalg.sub`.
static std::optional<Update> matchNamedUpdate(Operation *op, Value weight) {
  if (!isa<linalg::AddOp, linalg::SubOp>(op) || op->getNumResults() != 1)
    return std::nullopt;
  auto named = cast<linalg::LinalgOp>(op);
  Value lhs = named.getDpsInputs()[0], rhs = named.getDpsInputs()[1];
  Type type = op->getResult(0).getType();
  if (lhs.getType() != type || rhs.getType() != type)
    return std::nullopt;
  if (weight == lhs)
    return Update{op, lhs, rhs, 0};
  if (weight == rhs && isa<linalg::AddOp>(op))
    return Update{op, rhs, lhs, 1};
  return std::nullopt;
}

/// A weight accumulated into: a linalg op whose init is W and whose payload
/// yields `acc + x` (or `acc - x`) with x computed from the inputs alone, as
/// a sum over tokens written into the weight it moves is.
static std::optional<Update> matchAccumulation(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !isa<linalg::GenericOp>(op) ||
      linalgOp.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      linalgOp.getNumDpsInputs() == 0 ||
      !linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0))
           .isProjectedPermutation())
    return std::nullopt;
  Value init = linalgOp.getDpsInits()[0];
  if (init.getType() != op->getResult(0).getType())
    return std::nullopt;
  Block &body = op->getRegion(0).front();
  Value acc = linalgOp.getMatchingBlockArgument(linalgOp.getDpsInitOperand(0));
  Operation *combine = cast<linalg::YieldOp>(body.getTerminator())
                           .getValues()[0]
                           .getDefiningOp();
  if (!combine || !isa<arith::AddFOp, arith::SubFOp>(combine) ||
      combine->getBlock() != &body)
    return std::nullopt;
  unsigned position;
  if (combine->getOperand(0) == acc)
    position = 1;
  else if (combine->getOperand(1) == acc && isa<arith::AddFOp>(combine))
    position = 0;
  else
    return std::nullopt;
  // The added term must not read the accumulator again (a decay would).
  SmallVector<Value> stack{combine->getOperand(position)};
  while (!stack.empty()) {
    Value next = stack.pop_back_val();
    if (next == acc)
      return std::nullopt;
    if (Operation *def = next.getDefiningOp())
      if (def->getBlock() == &body)
        llvm::append_range(stack, def->getOperands());
  }
  return Update{op, init, op->getResult(0), 0};
}

static std::optional<Update> matchElementwiseUpdate(Operation *op,
                                                    Value weight);

/// `op` as an update of `weight`, in any of the spellings above.
static std::optional<Update> matchUpdate(Operation *op, Value weight) {
  if (std::optional<Update> named = matchNamedUpdate(op, weight))
    return named;
  if (std::optional<Update> accumulated = matchAccumulation(op))
    if (accumulated->weight == weight)
      return accumulated;
  return matchElementwiseUpdate(op, weight);
}

/// `W + D` or `W - D`: an elementwise linalg.generic on a tensor D of the
/// result's type and W, of that type too or broadcast to it (a weight shared
/// by the batch), whose payload adds to (or subtracts from) W's element
/// something computed from D's alone.
static std::optional<Update> matchElementwiseUpdate(Operation *op,
                                                    Value weight) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 2 ||
      generic.getNumDpsInits() != 1 || generic->getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .isIdentity())
    return std::nullopt;
  Type type = generic->getResult(0).getType();
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || ranked.getRank() < 2 ||
      !isa<FloatType>(ranked.getElementType()))
    return std::nullopt;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *combine = yield.getValues()[0].getDefiningOp();
  if (!combine || !isa<arith::AddFOp, arith::SubFOp>(combine) ||
      combine->getBlock() != &body)
    return std::nullopt;
  // Whether `value` is computed in the payload from `arg` and constants.
  auto readsOnly = [&](Value value, BlockArgument arg) {
    SmallVector<Value> stack{value};
    while (!stack.empty()) {
      Value next = stack.pop_back_val();
      if (auto blockArg = dyn_cast<BlockArgument>(next)) {
        if (blockArg.getOwner() == &body && blockArg != arg)
          return false;
        continue;
      }
      Operation *def = next.getDefiningOp();
      if (def->getBlock() != &body)
        continue;
      llvm::append_range(stack, def->getOperands());
    }
    return true;
  };
  // The weight is the sum's first term, or either term of an addition.
  unsigned positions = isa<arith::SubFOp>(combine) ? 1 : 2;
  for (unsigned position = 0; position < positions; ++position)
    for (unsigned input = 0; input < 2; ++input) {
      if (combine->getOperand(position) != body.getArgument(input))
        continue;
      OpOperand *weightOperand = generic.getDpsInputOperand(input);
      OpOperand *delta = generic.getDpsInputOperand(1 - input);
      if (weightOperand->get() != weight || delta->get().getType() != type ||
          !generic.getMatchingIndexingMap(delta).isIdentity() ||
          !isBroadcastMap(generic.getMatchingIndexingMap(weightOperand)) ||
          (weight.getType() == type &&
           !generic.getMatchingIndexingMap(weightOperand).isIdentity()) ||
          !readsOnly(combine->getOperand(1 - position),
                     body.getArgument(1 - input)))
        continue;
      return Update{op, weight, delta->get(), input};
    }
  return std::nullopt;
}

/// Whether `op` is an elementwise linalg.generic on two inputs whose
/// payload ends in a sum or difference.
static bool isElementwiseSum(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || op->getNumResults() != 1 || generic.getNumDpsInputs() != 2 ||
      generic.getNumReductionLoops() != 0)
    return false;
  Operation *combine =
      cast<linalg::YieldOp>(generic.getRegion().front().getTerminator())
          .getValues()[0]
          .getDefiningOp();
  return combine && isa<arith::AddFOp, arith::SubFOp>(combine);
}

/// Whether `op` applies a function other than a sum, product, quotient or
/// cast to each element of a tensor shaped `type` (an exp of every score),
/// rather than to a reduction of it (the square root of a norm).
static bool mapsEachElement(Operation *op, Type type) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() != 0 ||
      op->getNumResults() != 1 || op->getResult(0).getType() != type)
    return false;
  return llvm::any_of(generic.getRegion().front(), [](Operation &inner) {
    return !isa<arith::MulFOp, arith::AddFOp, arith::SubFOp, arith::DivFOp,
                arith::NegFOp, arith::TruncFOp, arith::ExtFOp,
                arith::ConstantOp, linalg::YieldOp>(inner);
  });
}

/// The function arguments each value of a block depends on, up to a few:
/// a graph whose opaque nodes became arguments has tens of thousands, and a
/// set per value would be quadratic.
class ArgumentDependence {
public:
  /// Arguments a value depends on, or `many` beyond kMaxArgs of them.
  struct Args {
    SmallVector<unsigned, 2> args;
    bool many = false;

    bool none() const { return !many && args.empty(); }
    void merge(const Args &other) {
      if (many || other.many) {
        many = true;
        args.clear();
        return;
      }
      for (unsigned arg : other.args)
        if (!llvm::is_contained(args, arg))
          args.push_back(arg);
      if (args.size() > kMaxArgs) {
        many = true;
        args.clear();
      }
    }
    /// Whether an argument outside `excluded` is among them.
    bool anyBut(ArrayRef<unsigned> excluded) const {
      if (many)
        return excluded.size() <= kMaxArgs;
      return llvm::any_of(args, [&](unsigned arg) {
        return !llvm::is_contained(excluded, arg);
      });
    }
  };
  static constexpr size_t kMaxArgs = 4;

  explicit ArgumentDependence(Block &block) {
    for (BlockArgument arg : block.getArguments())
      deps[arg].args.push_back(arg.getArgNumber());
    for (Operation &op : block) {
      Args merged;
      for (Value value : linalg_raise::readValues(&op))
        if (auto it = deps.find(value); it != deps.end())
          merged.merge(it->second);
      if (merged.none())
        continue;
      for (Value result : op.getResults())
        deps[result] = merged;
    }
  }

  const Args &of(Value value) const {
    static const Args kNone;
    auto it = deps.find(value);
    return it == deps.end() ? kNone : it->second;
  }

private:
  llvm::DenseMap<Value, Args> deps;
};

/// A group of updates and the ops of their step.
struct Step {
  SmallVector<Update> updates;
  llvm::SetVector<Operation *> body; // in block order
};

class SingleStepFinder {
public:
  SingleStepFinder(func::FuncOp func,
                   const llvm::DenseSet<Operation *> &refused)
      : block(func.getBody().front()), deps(block) {
    llvm::DenseSet<Value> updated;
    for (Operation &op : block) {
      if (refused.contains(&op))
        continue;
      llvm::SmallSetVector<Value, 4> operands(op.operand_begin(),
                                              op.operand_end());
      for (Value weight : operands) {
        if (!isRoot(weight))
          continue;
        std::optional<Update> update = matchUpdate(&op, weight);
        if (update && isData(update->delta, {*update}) &&
            !isUpdatedAgain(*update) && isApplied(*update)) {
          candidates.push_back(*update);
          updated.insert(update->weight);
          break;
        }
      }
    }
    // A weight the step replaces rather than moves (LaCT's bidirectional
    // layer with Muon: `W = NS(G); W = W + G`) has its new value in a sum of
    // its type, made from a sum over tokens, that is applied. Only weights
    // read together with data, of a type some sum has, are followed.
    llvm::DenseSet<Type> sumTypes;
    for (Operation &op : block)
      if (isElementwiseSum(&op))
        sumTypes.insert(op.getResult(0).getType());
    llvm::SetVector<Value> roots;
    for (Operation &op : block) {
      SmallVector<Value> read = linalg_raise::readValues(&op);
      if (llvm::none_of(read, [&](Value v) { return isData(v, {}); }))
        continue;
      // A weight read through a view of it made of constants (`W^T`, a
      // parameter tiled over the batch) is the weight a sum of its type
      // replaces, not the view.
      for (Value value : read)
        for (Value seen = value; seen && isRoot(seen); seen = viewedValue(seen))
          if (!updated.contains(seen) && sumTypes.contains(seen.getType()))
            roots.insert(seen);
    }
    // ... and the views of such a weight are not weights of their own.
    roots.remove_if([&](Value root) {
      for (Value seen = viewedValue(root); seen; seen = viewedValue(seen))
        if (roots.contains(seen))
          return true;
      return false;
    });
    // What a weight's own update reads besides weights is data (the keys
    // and values of a TTT op function given as arguments), not a weight
    // replaced by a sum: `v - k W` is no new value of `k`.
    roots.remove_if([&](Value root) {
      llvm::DenseSet<Value> fromRoot = reachedFrom(root);
      return llvm::any_of(candidates, [&](const Update &update) {
        return fromRoot.contains(update.delta);
      });
    });
    llvm::DenseSet<Operation *> taken(refused.begin(), refused.end());
    for (const Update &update : candidates)
      taken.insert(update.op);
    // Weights whose new values the dataflow reads only as a set (every
    // gradient of a SwiGLU reads every weight; an exporter folded the
    // weight norms that told them apart) are paired in order when the sets
    // match: one chunk's outputs do not depend on the pairing, only its
    // final states do, and formLoop refuses a step whose paired final
    // state is read.
    // A sum that is one weight's new value is no other's: each one taken
    // may single out another weight's, so this runs until none is.
    SmallVector<Value> unpaired;
    llvm::MapVector<Operation *, Value> pool;
    llvm::SetVector<Value> open(roots.begin(), roots.end());
    for (bool progress = true; progress;) {
      progress = false;
      for (Value root : open.takeVector()) {
        SmallVector<Update> sums;
        std::optional<Update> update = replacementOf(root, taken, sums);
        if (update) {
          candidates.push_back(*update);
          taken.insert(update->op);
          progress = true;
          continue;
        }
        open.insert(root);
      }
    }
    for (Value root : open) {
      SmallVector<Update> sums;
      (void)replacementOf(root, taken, sums);
      if (sums.empty())
        continue;
      for (const Update &sum : sums)
        pool.insert({sum.op, sum.delta});
      unpaired.push_back(root);
    }
    if (!pool.empty() && unpaired.size() == pool.size()) {
      SmallVector<std::pair<Operation *, Value>> sums(pool.begin(), pool.end());
      llvm::sort(sums, [](const auto &a, const auto &b) {
        return a.first->isBeforeInBlock(b.first);
      });
      for (auto [root, sum] : llvm::zip_equal(unpaired, sums))
        candidates.push_back(Update{sum.first, root, sum.second, 0, true});
    }
  }

  /// The steps, updates whose bodies share ops taken together.
  SmallVector<Step> steps() {
    llvm::EquivalenceClasses<unsigned> classes;
    SmallVector<llvm::SetVector<Operation *>> bodies;
    for (unsigned i = 0; i < candidates.size(); ++i) {
      classes.insert(i);
      bodies.push_back(bodyOf({candidates[i]}));
    }
    SmallVector<llvm::DenseSet<Value>> beforeUpdate;
    for (const Update &candidate : candidates)
      // The values computed from a weight other than through its update.
      beforeUpdate.push_back(reachedFrom(candidate.weight, candidate.op));
    // One step: bodies that share ops, or an update computed from another
    // weight as it was before its own update (a SwiGLU gradient reads all
    // three weights). A layer reading an earlier layer's output reads that
    // layer's weights after their update, and stays a step of its own.
    for (unsigned i = 0; i < candidates.size(); ++i)
      for (unsigned j = i + 1; j < candidates.size(); ++j)
        if (llvm::any_of(
                bodies[i],
                [&](Operation *op) { return bodies[j].contains(op); }) ||
            beforeUpdate[j].contains(candidates[i].delta) ||
            beforeUpdate[i].contains(candidates[j].delta))
          classes.unionSets(i, j);
    SmallVector<Step> result;
    for (auto it = classes.begin(); it != classes.end(); ++it) {
      if (!(*it)->isLeader())
        continue;
      Step step;
      for (auto member = classes.member_begin(**it);
           member != classes.member_end(); ++member)
        step.updates.push_back(candidates[*member]);
      llvm::sort(step.updates, [](const Update &a, const Update &b) {
        return a.op->isBeforeInBlock(b.op);
      });
      // Two updates of one weight are one state's two values, a schedule
      // this former does not read; one value is not two weights' update.
      llvm::SmallDenseSet<Value> weights;
      llvm::SmallDenseSet<Operation *> ops;
      bool distinct = llvm::all_of(step.updates, [&](const Update &update) {
        return weights.insert(update.weight).second &&
               ops.insert(update.op).second;
      });
      if (!distinct)
        continue;
      step.body = bodyOf(step.updates);
      result.push_back(std::move(step));
    }
    llvm::sort(result, [](const Step &a, const Step &b) {
      return a.updates.front().op->isBeforeInBlock(b.updates.front().op);
    });
    return result;
  }

  /// Whether `value` reads data: a function argument none of the weights
  /// of `updates` is.
  bool isData(Value value, ArrayRef<Update> updates) const {
    SmallVector<unsigned> weights;
    for (const Update &update : updates)
      if (auto arg = dyn_cast<BlockArgument>(update.weight))
        weights.push_back(arg.getArgNumber());
    return deps.of(value).anyBut(weights);
  }

  /// Whether `op` reads two or more data values.
  bool readsDataTwice(linalg::LinalgOp op) const {
    return llvm::count_if(op.getDpsInputs(),
                          [&](Value input) { return isData(input, {}); }) >= 2;
  }

  /// Whether `op` sums products of two data values over some of its loops,
  /// or (a ReduceSum after a Mul) sums their elementwise product.
  bool contractsData(Operation *op) const {
    auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
    if (!linalgOp || linalgOp.getNumReductionLoops() == 0 ||
        op->getNumResults() != 1)
      return false;
    if (readsDataTwice(linalgOp))
      return true;
    auto product =
        linalgOp.getNumDpsInputs() == 1
            ? linalgOp.getDpsInputs()[0].getDefiningOp<linalg::LinalgOp>()
            : nullptr;
    return product && product.getNumReductionLoops() == 0 &&
           readsDataTwice(product);
  }

  /// Whether `value` is a reshape of such a sum (a sum unsqueezed to be
  /// stacked with others).
  bool reshapesBinding(Value value) const {
    if (!isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
            value.getDefiningOp()))
      return false;
    while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
        value.getDefiningOp()))
      value = value.getDefiningOp()->getOperand(0);
    return contractsData(value.getDefiningOp());
  }

  /// Whether `value` is made from a contraction of two data values whose
  /// result has the type of `value` (or of `delta`, an update's: what is
  /// made of a gradient, its norm for clipping, counts too): a sum over
  /// tokens of keys times values, as a new weight is, and a token's
  /// activation is not. Such sums stacked into a tensor of that size count
  /// too (ViT^3's kernel gradient: one sum per kernel position).
  bool madeFromBinding(Value value, Value delta = Value()) const {
    constexpr unsigned kMaxOps = 256;
    auto type = cast<ShapedType>((delta ? delta : value).getType());
    auto stackedSums = [&](tensor::ConcatOp concat) {
      if (!type.hasStaticShape() || !concat.getType().hasStaticShape() ||
          concat.getType().getNumElements() != type.getNumElements())
        return false;
      return llvm::all_of(concat.getInputs(), [&](Value input) {
        return reshapesBinding(input) || contractsData(input.getDefiningOp());
      });
    };
    SmallVector<Value> stack{value};
    llvm::DenseSet<Operation *> seen;
    while (!stack.empty() && seen.size() < kMaxOps) {
      Operation *def = stack.pop_back_val().getDefiningOp();
      if (!def || def->getBlock() != &block || !seen.insert(def).second)
        continue;
      if (contractsData(def) && def->getResult(0).getType() == type)
        return true;
      if (auto concat = dyn_cast<tensor::ConcatOp>(def);
          concat && stackedSums(concat))
        return true;
      llvm::append_range(stack, linalg_raise::readValues(def));
    }
    return false;
  }

private:
  /// A weight as the model has it: a float tensor of rank 2 or more that is
  /// an argument or made of constants, not a fill.
  bool isRoot(Value value) const {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || type.getRank() < 2 || !isa<FloatType>(type.getElementType()))
      return false;
    if (auto arg = dyn_cast<BlockArgument>(value))
      return arg.getOwner() == &block;
    return deps.of(value).none() &&
           !isa<tensor::EmptyOp, linalg::FillOp>(value.getDefiningOp());
  }

  /// The value `value` is a view of (a transpose, a reshape, a broadcast or
  /// copy), or null.
  static Value viewedValue(Value value) {
    Operation *def = value.getDefiningOp();
    if (isa_and_nonnull<linalg::TransposeOp, tensor::CollapseShapeOp,
                        tensor::ExpandShapeOp>(def))
      return def->getOperand(0);
    auto generic = dyn_cast_or_null<linalg::GenericOp>(def);
    if (generic && generic.getNumDpsInputs() == 1 &&
        generic.getNumReductionLoops() == 0) {
      auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
      if (yield.getValues().size() == 1 &&
          yield.getValues()[0] == generic.getBody()->getArgument(0))
        return generic.getDpsInputs()[0];
    }
    return Value();
  }

  /// Whether `update`'s new value is itself updated by the data: one step
  /// of an unrolled recurrence, left to ttt-reroll-chunks, not a single step.
  bool isUpdatedAgain(const Update &update) const {
    Value next = update.op->getResult(0);
    for (Operation *user : next.getUsers()) {
      std::optional<Update> again = matchUpdate(user, next);
      if (again && isData(again->delta, {*again}))
        return true;
    }
    return false;
  }

  /// Whether a loop's initial state is computed from `update`'s new value:
  /// the update is the first chunk of that loop, left unrolled.
  bool startsALoop(const Update &update) const {
    llvm::DenseSet<Value> reached = reachedFrom(update.op->getResult(0));
    for (Operation &op : block)
      if (auto loop = dyn_cast<ChunkLoopOp>(&op))
        if (llvm::any_of(loop.getInits(),
                         [&](Value init) { return reached.contains(init); }))
          return true;
    return false;
  }

  /// Whether `update`'s new value, or what is made of it alone, is
  /// contracted with data it does not depend on: the weight is applied.
  bool isApplied(const Update &update) const {
    Value next = update.op->getResult(0);
    llvm::DenseSet<Value> derived{next}, dependsOnNext{next};
    for (Operation *op = update.op->getNextNode(); op; op = op->getNextNode()) {
      SmallVector<Value> read = linalg_raise::readValues(op);
      if (llvm::none_of(read,
                        [&](Value v) { return dependsOnNext.contains(v); }))
        continue;
      for (Value result : op->getResults())
        dependsOnNext.insert(result);
      // The first chunk of a loop left unrolled: the loop's, not a step.
      if (isa<ChunkLoopOp>(op))
        if (llvm::any_of(read, [&](Value v) { return derived.contains(v); }))
          return false;
      if (llvm::all_of(read, [&](Value v) {
            return derived.contains(v) || !isData(v, {update});
          })) {
        // A weight is applied as it is, or rescaled (a weight norm); a
        // softmax of attention scores plus a mask is no weight's.
        if (!mapsEachElement(op, next.getType()))
          for (Value result : op->getResults())
            derived.insert(result);
        continue;
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && linalgOp.getNumReductionLoops() > 0 &&
          llvm::any_of(read, [&](Value v) { return derived.contains(v); }) &&
          llvm::any_of(read, [&](Value v) {
            return isData(v, {update}) && !dependsOnNext.contains(v);
          }))
        return true;
    }
    return false;
  }

  /// The sum that is `root`'s new value, if one alone is; `sums` are the
  /// sums that could be.
  std::optional<Update> replacementOf(Value root,
                                      const llvm::DenseSet<Operation *> &taken,
                                      SmallVector<Update> &sums) const {
    llvm::DenseSet<Value> fromRoot = reachedFrom(root);
    for (Operation &op : block) {
      if (op.getNumResults() == 0 || !fromRoot.contains(op.getResult(0)) ||
          !isElementwiseSum(&op) || op.getResult(0).getType() != root.getType())
        continue;
      Update update{&op, root, op.getResult(0)};
      if (isData(update.delta, {update}) && madeFromBinding(update.delta) &&
          !isUpdatedAgain(update) && !startsALoop(update) && isApplied(update))
        sums.push_back(update);
    }
    // A sum another one is computed from is a step on the way (Muon's
    // Newton-Schulz iterations in the weight's own precision), not the
    // new value; also when that other one is another weight's, taken.
    SmallVector<Update> last;
    for (const Update &sum : sums) {
      llvm::DenseSet<Value> later = reachedFrom(sum.delta);
      if (!taken.contains(sum.op) &&
          llvm::none_of(sums, [&](const Update &other) {
            return other.op != sum.op && later.contains(other.delta);
          }))
        last.push_back(sum);
    }
    sums = std::move(last);
    if (sums.size() == 1)
      return sums.front();
    // Every weight's gradient reads every weight of a SwiGLU; the sum that
    // is this weight's new value is the one its weight norm rescales by a
    // value made of the weight alone.
    std::optional<Update> rescaled;
    for (const Update &sum : sums) {
      if (!rescaledBy(sum, [&](Value v) {
            return v != root && fromRoot.contains(v) && deps.of(v).none();
          }))
        continue;
      if (rescaled)
        return std::nullopt;
      rescaled = sum;
    }
    return rescaled;
  }

  /// Whether what is made of `update`'s new value and non-data values reads
  /// a value `isScale` accepts.
  bool rescaledBy(const Update &update,
                  llvm::function_ref<bool(Value)> isScale) const {
    llvm::DenseSet<Value> derived{update.op->getResult(0)};
    for (Operation *op = update.op->getNextNode(); op; op = op->getNextNode()) {
      SmallVector<Value> read = linalg_raise::readValues(op);
      if (llvm::none_of(read, [&](Value v) { return derived.contains(v); }) ||
          llvm::any_of(read, [&](Value v) {
            return !derived.contains(v) && isData(v, {update});
          }))
        continue;
      if (llvm::any_of(read, [&](Value v) {
            return !derived.contains(v) && isScale(v);
          }))
        return true;
      for (Value result : op->getResults())
        derived.insert(result);
    }
    return false;
  }

  /// The values computed from `value`, other than through `skipped`.
  llvm::DenseSet<Value> reachedFrom(Value value,
                                    Operation *skipped = nullptr) const {
    llvm::DenseSet<Value> reached{value};
    for (Operation &op : block) {
      if (&op == skipped ||
          llvm::none_of(linalg_raise::readValues(&op),
                        [&](Value v) { return reached.contains(v); }))
        continue;
      for (Value result : op.getResults())
        reached.insert(result);
    }
    return reached;
  }

  /// The ops of the step of `updates`, in block order.
  llvm::SetVector<Operation *> bodyOf(ArrayRef<Update> updates) const {
    llvm::DenseSet<Value> dependsOnWeights, stateDerived;
    llvm::DenseSet<Operation *> updateOps;
    for (const Update &update : updates) {
      dependsOnWeights.insert(update.weight);
      stateDerived.insert(update.weight);
      updateOps.insert(update.op);
    }
    SmallVector<Operation *> seeds;
    for (Operation &op : block) {
      SmallVector<Value> read = linalg_raise::readValues(&op);
      if (llvm::none_of(read,
                        [&](Value v) { return dependsOnWeights.contains(v); }))
        continue;
      for (Value result : op.getResults())
        dependsOnWeights.insert(result);
      bool derived =
          updateOps.contains(&op) || llvm::all_of(read, [&](Value v) {
            return stateDerived.contains(v) ||
                   (!dependsOnWeights.contains(v) && deps.of(v).none());
          });
      if (derived) {
        for (Value result : op.getResults())
          stateDerived.insert(result);
        if (updateOps.contains(&op))
          seeds.push_back(&op);
        continue;
      }
      // Reads a state-derived value and gives something else (the
      // function's return gives nothing: it reads the step's results).
      if (op.getNumResults() > 0 &&
          llvm::any_of(read, [&](Value v) { return stateDerived.contains(v); }))
        seeds.push_back(&op);
    }
    llvm::DenseSet<Operation *> inBody;
    SmallVector<Operation *> stack(seeds);
    llvm::DenseSet<Value> weights;
    for (const Update &update : updates)
      weights.insert(update.weight);
    while (!stack.empty()) {
      Operation *op = stack.pop_back_val();
      if (!inBody.insert(op).second)
        continue;
      for (Value value : linalg_raise::readValues(op)) {
        if (weights.contains(value) || !dependsOnWeights.contains(value))
          continue;
        if (Operation *def = value.getDefiningOp())
          if (def->getBlock() == &block)
            stack.push_back(def);
      }
    }
    // Elementwise ops and transposes on the body's values alone finish its
    // outputs (the gate of a SwiGLU applied after both of its contractions,
    // an apply written `(W^T q^T)^T`).
    llvm::SetVector<Operation *> ordered;
    for (Operation &op : block) {
      if (inBody.contains(&op)) {
        ordered.insert(&op);
        continue;
      }
      auto generic = dyn_cast<linalg::GenericOp>(&op);
      if ((!generic || generic.getNumReductionLoops() != 0) &&
          !isa<linalg::TransposeOp>(op))
        continue;
      if (ordered.empty())
        continue;
      SmallVector<Value> read = linalg_raise::readValues(&op);
      bool onBody = false,
           onlyBody = llvm::all_of(read, [&](Value v) {
             Operation *def = v.getDefiningOp();
             if (def && ordered.contains(def))
               return onBody = true;
             return linalg_raise::isRematerializable(v) ||
                    (!isa<ShapedType>(v.getType()) && deps.of(v).none());
           });
      if (onBody && onlyBody)
        ordered.insert(&op);
    }
    return ordered;
  }

  Block &block;
  ArgumentDependence deps;
  SmallVector<Update> candidates;
};

/// Sets the window and output axes of a single-chunk loop from its math:
/// time is the label an output shares with a window and no state has, or
/// the label a next state sums over that two windows share. Where several
/// labels qualify (a weight shared across the batch sums over batch and
/// time alike) the last one is time. Axes not found stay as they are.
void inferAxes(ChunkLoopOp loop) {
  llvm::DenseSet<Value> states(loop.getStateArgs().begin(),
                               loop.getStateArgs().end());
  SmallVector<int64_t> windowAxes(loop.getWindowAxes());
  SmallVector<int64_t> outputAxes(loop.getOutputAxes());
  SmallVector<bool> windowSet(windowAxes.size(), false);
  auto windowOf = [&](Value leaf) -> std::optional<unsigned> {
    for (auto [index, arg] : llvm::enumerate(loop.getWindowArgs()))
      if (arg == leaf)
        return index;
    return std::nullopt;
  };
  auto setWindow = [&](const linalg_raise::Factor &factor, unsigned label) {
    std::optional<unsigned> window = windowOf(factor.leaf);
    if (!window || windowSet[*window])
      return;
    for (auto [position, own] : llvm::enumerate(factor.labels))
      if (own == label) {
        windowAxes[*window] = position;
        windowSet[*window] = true;
      }
  };
  auto inState = [&](const linalg_raise::Term &term, unsigned label) {
    return llvm::any_of(term.factors, [&](const linalg_raise::Factor &f) {
      return states.contains(f.leaf) && llvm::is_contained(f.labels, label);
    });
  };
  linalg_raise::EinsumReader reader(states);
  ChunkYieldOp yield = loop.getYield();
  for (auto [index, output] : llvm::enumerate(yield.getOutputs())) {
    std::optional<linalg_raise::Polynomial> poly = reader.read(output);
    if (!poly)
      continue;
    std::optional<int64_t> outputAxis;
    for (const linalg_raise::Term &term : poly->terms) {
      if (llvm::none_of(term.factors, [&](const linalg_raise::Factor &f) {
            return states.contains(f.leaf);
          }))
        continue;
      for (auto [position, label] : llvm::enumerate(poly->labels)) {
        if (reader.isUnit(label) || inState(term, label))
          continue;
        bool shared = false;
        for (const linalg_raise::Factor &factor : term.factors)
          if (windowOf(factor.leaf) &&
              llvm::is_contained(factor.labels, label)) {
            setWindow(factor, label);
            shared = true;
          }
        if (shared)
          outputAxis = position;
      }
    }
    if (outputAxis)
      outputAxes[index] = *outputAxis;
  }
  for (Value next : yield.getNextState()) {
    std::optional<linalg_raise::Polynomial> poly = reader.read(next);
    if (!poly)
      continue;
    for (const linalg_raise::Term &term : poly->terms)
      for (const linalg_raise::Factor &factor : term.factors)
        for (unsigned label : llvm::reverse(factor.labels)) {
          if (llvm::is_contained(poly->labels, label) || reader.isUnit(label) ||
              !windowOf(factor.leaf))
            continue;
          unsigned windows = llvm::count_if(
              term.factors, [&](const linalg_raise::Factor &other) {
                return windowOf(other.leaf) &&
                       llvm::is_contained(other.labels, label);
              });
          if (windows >= 2)
            setWindow(factor, label);
        }
  }
  OpBuilder b(loop);
  loop.setWindowAxesAttr(b.getDenseI64ArrayAttr(windowAxes));
  loop.setOutputAxesAttr(b.getDenseI64ArrayAttr(outputAxes));
}

/// The ops that make `value` from constants and the sizes of other values
/// alone (a zero accumulator sized by `tensor.dim` at a run-time length), in
/// block order, with the values whose sizes they read; nullopt if it is made
/// otherwise.
static std::optional<SmallVector<Operation *>>
sizedBySlice(Value value, llvm::SetVector<Value> &sources) {
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> stack{value};
  while (!stack.empty()) {
    Operation *def = stack.pop_back_val().getDefiningOp();
    if (!def)
      return std::nullopt;
    if (!ops.insert(def))
      continue;
    if (auto dim = dyn_cast<tensor::DimOp>(def)) {
      sources.insert(dim.getSource());
      stack.push_back(dim.getIndex());
      continue;
    }
    if (!isa<tensor::EmptyOp, linalg::FillOp, arith::ConstantOp>(def))
      return std::nullopt;
    llvm::append_range(stack, def->getOperands());
  }
  if (llvm::none_of(ops, [](Operation *op) { return isa<tensor::DimOp>(op); }))
    return std::nullopt;
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Makes the body's reads of `weight` read `state` instead, where
/// state[i] = weight[i mapped]: `weightDimOf[p]` is the weight dimension
/// state dimension p reads, none where the weight is broadcast along it. A
/// generic reading weight[G(x)] reads the same element as state[S(x)], S
/// picking G's index for each dimension the weight has and, for one it is
/// broadcast along, any index in range: a loop of the reader's with that
/// many iterations. A transpose of the weight becomes the same transpose of
/// the state, its readers read in turn. The math then sees one weight, the
/// state, wherever the step reads it (ViT^3 computes its gradient from the
/// parameter and adds it to the broadcast).
static void readWeightAsState(OpBuilder &builder, Value weight, Value state,
                              ArrayRef<std::optional<unsigned>> weightDimOf,
                              Operation *skip) {
  auto stateType = cast<RankedTensorType>(state.getType());
  Block *body = state.getParentBlock();
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : weight.getUses())
    if (use.getOwner() != skip && use.getOwner()->getBlock() == body &&
        isa<linalg::GenericOp, linalg::TransposeOp>(use.getOwner()))
      uses.push_back(&use);
  for (OpOperand *use : uses) {
    if (auto transpose = dyn_cast<linalg::TransposeOp>(use->getOwner())) {
      if (!stateType.hasStaticShape())
        continue;
      ArrayRef<int64_t> perm = transpose.getPermutation();
      SmallVector<int64_t> inverse(perm.size());
      for (auto [q, p] : llvm::enumerate(perm))
        inverse[p] = q;
      SmallVector<int64_t> shape;
      SmallVector<std::optional<unsigned>> transposedDimOf;
      for (int64_t p : perm) {
        shape.push_back(stateType.getDimSize(p));
        std::optional<unsigned> j = weightDimOf[p];
        transposedDimOf.push_back(j ? std::optional<unsigned>(inverse[*j])
                                    : std::nullopt);
      }
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(transpose);
      Value empty = tensor::EmptyOp::create(builder, transpose.getLoc(), shape,
                                            stateType.getElementType());
      auto ofState = linalg::TransposeOp::create(builder, transpose.getLoc(),
                                                 state, empty, perm);
      readWeightAsState(builder, transpose.getResult()[0],
                        ofState.getResult()[0], transposedDimOf, nullptr);
      continue;
    }
    auto reader = cast<linalg::GenericOp>(use->getOwner());
    if (reader.isDpsInit(use))
      continue;
    AffineMap read = reader.getMatchingIndexingMap(use);
    AffineMap written =
        reader.getMatchingIndexingMap(reader.getDpsInitOperand(0));
    SmallVector<int64_t> extents = reader.getStaticLoopRanges();
    SmallVector<AffineExpr> results;
    for (auto [p, j] : llvm::enumerate(weightDimOf)) {
      if (j) {
        results.push_back(read.getResult(*j));
        continue;
      }
      int64_t size = stateType.getDimSize(p);
      auto hasSize = [&](AffineExpr expr) {
        auto dim = dyn_cast<AffineDimExpr>(expr);
        return dim && extents[dim.getPosition()] == size;
      };
      // The loop that writes the reader's dimension p, as a weight shared
      // by the batch is read per batch element; else any of that size.
      std::optional<AffineExpr> chosen;
      if (p < written.getNumResults() && hasSize(written.getResult(p)))
        chosen = written.getResult(p);
      for (unsigned d = 0; !chosen && d < extents.size(); ++d)
        if (extents[d] == size)
          chosen = getAffineDimExpr(d, reader.getContext());
      if (!chosen || ShapedType::isDynamic(size))
        break;
      results.push_back(*chosen);
    }
    if (results.size() != weightDimOf.size())
      continue;
    SmallVector<AffineMap> maps = reader.getIndexingMapsArray();
    maps[use->getOperandNumber()] =
        AffineMap::get(read.getNumDims(), 0, results, reader.getContext());
    use->set(state);
    reader.setIndexingMapsAttr(ArrayAttr::get(
        reader.getContext(),
        llvm::map_to_vector(maps, [](AffineMap map) -> Attribute {
          return AffineMapAttr::get(map);
        })));
  }
}

/// readWeightAsState for the weight a broadcast update (`update`, in the
/// body) reads with the map `broadcast`.
static void readBroadcastWeightAsState(OpBuilder &builder,
                                       linalg::GenericOp update,
                                       AffineMap broadcast, Value weight,
                                       BlockArgument state) {
  if (!weight)
    return;
  auto stateType = cast<RankedTensorType>(state.getType());
  SmallVector<std::optional<unsigned>> weightDimOf(stateType.getRank());
  for (auto [j, expr] : llvm::enumerate(broadcast.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      weightDimOf[dim.getPosition()] = j;
  readWeightAsState(builder, weight, state, weightDimOf, update);
}

/// Builds the loop of `step`; on success the step's ops are replaced by it.
LogicalResult formLoop(RewriterBase &rewriter, func::FuncOp func,
                       SingleStepFinder &finder, Step step, bool onlyRaised,
                       std::string &why) {
  Block &block = func.getBody().front();
  // A weight broadcast by its update enters as the broadcast value, made
  // before the loop; the body reads the weight itself as an invariant.
  llvm::DenseMap<Value, unsigned> stateOf;
  SmallVector<Value> inits;
  for (const Update &update : step.updates) {
    if (!update.broadcast()) {
      stateOf[update.weight] = inits.size();
      inits.push_back(update.weight);
      continue;
    }
    if (!cast<RankedTensorType>(update.op->getResult(0).getType())
             .hasStaticShape())
      return why = "a weight is broadcast to a shape known only at run time",
             failure();
    inits.push_back(Value());
  }
  auto inBody = [&](Operation *user) {
    Operation *ancestor = block.findAncestorOpInBlock(*user);
    return ancestor && step.body.contains(ancestor);
  };
  // A linear-attention update reads no weight, so its sum over tokens of
  // keys times values was left out of the body; it is taken in (where
  // nothing else reads it), so that the body binds keys to values itself.
  SmallVector<Operation *> stack;
  for (const Update &update : step.updates)
    stack.push_back(update.op);
  llvm::DenseSet<Operation *> updateSide;
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    if (!updateSide.insert(op).second)
      continue;
    for (Value value : linalg_raise::readValues(op)) {
      Operation *def = value.getDefiningOp();
      if (!def || def->getBlock() != &block || stateOf.count(value) ||
          linalg_raise::isRematerializable(value))
        continue;
      if (step.body.contains(def)) {
        stack.push_back(def);
        continue;
      }
      // The sums, their reshapes and stacking, and a product that a sum
      // (ReduceSum after Mul) reads.
      auto linalgDef = dyn_cast<linalg::LinalgOp>(def);
      auto reader = dyn_cast<linalg::LinalgOp>(op);
      bool summedProduct =
          linalgDef && reader && linalgDef.getNumReductionLoops() == 0 &&
          reader.getNumReductionLoops() > 0 && reader.getNumDpsInputs() == 1 &&
          finder.readsDataTwice(linalgDef);
      bool fromBinding =
          (isa<linalg::LinalgOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
               tensor::ConcatOp>(def) &&
           (finder.madeFromBinding(value) ||
            llvm::any_of(step.updates,
                         [&](const Update &update) {
                           return finder.madeFromBinding(value, update.delta);
                         }))) ||
          finder.reshapesBinding(value);
      if ((!summedProduct && !fromBinding) ||
          !llvm::all_of(def->getUsers(), inBody))
        continue;
      step.body.insert(def);
      stack.push_back(def);
    }
  }
  SmallVector<Operation *> ordered = step.body.takeVector();
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  step.body.insert_range(ordered);
  // What the body reads from outside: windows (data), invariants, and what
  // is made of constants (copied in). A broadcast weight's update reads the
  // state in its place.
  llvm::DenseSet<std::pair<Operation *, Value>> readAsState;
  for (const Update &update : step.updates)
    if (update.broadcast())
      readAsState.insert({update.op, update.weight});
  llvm::SetVector<Value> sequences, invariants, made;
  SmallVector<Operation *> sized;
  SmallVector<linalg::TransposeOp> transposed;
  for (Operation *op : step.body)
    for (Value value : linalg_raise::readValues(op)) {
      Operation *def = value.getDefiningOp();
      if (stateOf.count(value) || (def && step.body.contains(def)) ||
          readAsState.contains({op, value}))
        continue;
      llvm::SetVector<Value> sources;
      if (linalg_raise::isRematerializable(value)) {
        made.insert(value);
      } else if (std::optional<SmallVector<Operation *>> slice =
                     sizedBySlice(value, sources);
                 slice && llvm::none_of(sources, [&](Value source) {
                   Operation *def = source.getDefiningOp();
                   return def && step.body.contains(def);
                 })) {
        // Made in the body from the sizes of what the body is passed.
        llvm::append_range(sized, *slice);
        for (Value source : sources) {
          if (stateOf.count(source))
            continue;
          if (finder.isData(source, step.updates))
            sequences.insert(source);
          else
            invariants.insert(source);
        }
      } else if (finder.isData(value, step.updates) &&
                 isa<RankedTensorType>(value.getType()) &&
                 cast<RankedTensorType>(value.getType()).getRank() > 0) {
        // A transpose of data is read in the body, from the data: keys
        // passed once as they are and once transposed (ViT^3's k and k^T)
        // are then one window.
        Value source = value;
        while (auto transpose = source.getDefiningOp<linalg::TransposeOp>()) {
          if (!transpose.getInput().getType().hasStaticShape() ||
              !finder.isData(transpose.getInput(), step.updates))
            break;
          if (!llvm::is_contained(transposed, transpose))
            transposed.push_back(transpose);
          source = transpose.getInput();
        }
        sequences.insert(source);
      } else
        invariants.insert(value);
    }
  if (sequences.empty())
    return why = "the step reads no data", failure();
  // The body's values read after it: outputs, or the final state.
  llvm::SetVector<Value> outputs;
  llvm::DenseMap<Value, unsigned> finalOf;
  for (auto [index, update] : llvm::enumerate(step.updates))
    finalOf[update.op->getResult(0)] = index;
  Operation *firstUser = block.getTerminator();
  for (Operation *op : step.body)
    for (Value result : op->getResults())
      for (OpOperand &use : result.getUses()) {
        if (inBody(use.getOwner()))
          continue;
        if (!finalOf.count(result))
          outputs.insert(result);
        else if (step.updates[finalOf[result]].pairedByOrder)
          return why = "its weights' new values are told apart by their "
                       "order only, and one is read after the step",
                 failure();
        Operation *user = block.findAncestorOpInBlock(*use.getOwner());
        if (user->isBeforeInBlock(firstUser))
          firstUser = user;
      }
  if (outputs.empty())
    return why = "nothing reads the updated weight's result", failure();
  for (Value output : outputs) {
    auto type = dyn_cast<RankedTensorType>(output.getType());
    if (!type || type.getRank() == 0)
      return why = "an output of the step is not a tensor of rank 1 or more",
             failure();
  }
  // The loop sits before the first op that reads its results; what it
  // reads is moved before that op if it comes later.
  SmallVector<Value> operands;
  auto addOperand = [&](Value value) {
    if (value && value.getDefiningOp())
      operands.push_back(value);
  };
  llvm::for_each(inits, addOperand);
  llvm::for_each(sequences, addOperand);
  llvm::for_each(invariants, addOperand);
  for (const Update &update : step.updates)
    if (update.broadcast())
      addOperand(update.weight);
  if (failed(moveValueDefinitions(rewriter, operands, firstUser)))
    return why = "what the step reads cannot be moved before its first "
                 "reader",
           failure();
  rewriter.setInsertionPoint(firstUser);
  SmallVector<Operation *> broadcasts;
  for (auto [index, update] : llvm::enumerate(step.updates)) {
    if (!update.broadcast())
      continue;
    auto generic = cast<linalg::GenericOp>(update.op);
    auto type = cast<RankedTensorType>(update.op->getResult(0).getType());
    Location loc = update.op->getLoc();
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    SmallVector<AffineMap> maps{
        generic.getIndexingMapsArray()[update.weightInput],
        rewriter.getMultiDimIdentityMap(type.getRank())};
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    auto broadcast = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{update.weight}, ValueRange{empty}, maps,
        iterators, [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(b, loc, args[0]);
        });
    broadcasts.push_back(broadcast);
    broadcasts.push_back(empty.getDefiningOp());
    inits[index] = broadcast.getResult(0);
  }
  auto dropBroadcasts = [&] {
    for (Operation *op : broadcasts)
      rewriter.eraseOp(op);
  };
  SmallVector<Value> passed(inits);
  llvm::append_range(passed, sequences);
  llvm::append_range(passed, invariants);

  Location loc = step.updates.front().op->getLoc();
  SmallVector<Type> stateTypes, outputTypes;
  for (Value init : inits)
    stateTypes.push_back(init.getType());
  for (Value output : outputs)
    outputTypes.push_back(output.getType());
  auto loop = ChunkLoopOp::create(
      rewriter, loc, outputTypes, stateTypes, inits, sequences.getArrayRef(),
      invariants.getArrayRef(), rewriter.getI64IntegerAttr(0),
      rewriter.getDenseI64ArrayAttr(SmallVector<int64_t>(sequences.size(), 0)),
      rewriter.getDenseI64ArrayAttr(SmallVector<int64_t>(outputs.size(), 0)));
  SmallVector<Type> argTypes;
  for (Value value : passed)
    argTypes.push_back(value.getType());
  Block *body =
      rewriter.createBlock(&loop.getBody(), {}, argTypes,
                           SmallVector<Location>(argTypes.size(), loc));
  IRMapping mapping;
  for (auto [index, value] : llvm::enumerate(passed))
    if (index >= inits.size() || !step.updates[index].broadcast())
      mapping.map(value, body->getArgument(index));
  rewriter.setInsertionPointToStart(body);
  for (Value value : made)
    (void)linalg_raise::rematerialize(rewriter, value, mapping);
  llvm::sort(sized,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : sized)
    if (!mapping.contains(op->getResult(0)))
      rewriter.clone(*op, mapping);
  // In block order: a transpose of a transpose after the one it reads.
  llvm::sort(transposed, [](linalg::TransposeOp a, linalg::TransposeOp b) {
    return a->isBeforeInBlock(b);
  });
  for (linalg::TransposeOp transpose : transposed) {
    if (mapping.contains(transpose.getResult()[0]))
      continue;
    auto type = cast<RankedTensorType>(transpose.getInit().getType());
    Value empty = tensor::EmptyOp::create(
        rewriter, transpose.getLoc(), type.getShape(), type.getElementType());
    auto inside = linalg::TransposeOp::create(
        rewriter, transpose.getLoc(), mapping.lookup(transpose.getInput()),
        empty, transpose.getPermutation());
    mapping.map(transpose.getResult()[0], inside.getResult()[0]);
  }
  for (Operation *op : step.body)
    rewriter.clone(*op, mapping);
  // A broadcast weight's update reads the state in its own shape.
  for (auto [index, update] : llvm::enumerate(step.updates)) {
    if (!update.broadcast())
      continue;
    auto clone = cast<linalg::GenericOp>(
        mapping.lookup(update.op->getResult(0)).getDefiningOp());
    clone->setOperand(update.weightInput, body->getArgument(index));
    SmallVector<AffineMap> maps = clone.getIndexingMapsArray();
    maps[update.weightInput] = rewriter.getMultiDimIdentityMap(
        cast<RankedTensorType>(update.op->getResult(0).getType()).getRank());
    clone.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    readBroadcastWeightAsState(rewriter, clone,
                               cast<linalg::GenericOp>(update.op)
                                   .getIndexingMapsArray()[update.weightInput],
                               mapping.lookupOrNull(update.weight),
                               body->getArgument(index));
  }
  SmallVector<Value> chunkOutputs, nextState;
  for (Value output : outputs)
    chunkOutputs.push_back(mapping.lookup(output));
  for (const Update &update : step.updates)
    nextState.push_back(mapping.lookup(update.op->getResult(0)));
  ChunkYieldOp::create(rewriter, loc, chunkOutputs, nextState);
  if (std::string problem = linalg_raise::verifyQuietly(loop);
      !problem.empty()) {
    rewriter.eraseOp(loop);
    dropBroadcasts();
    return why = problem, failure();
  }
  inferAxes(loop);
  if (std::string problem = linalg_raise::verifyQuietly(loop);
      !problem.empty()) {
    rewriter.eraseOp(loop);
    dropBroadcasts();
    return why = problem, failure();
  }
  if (std::string notALayer = linalg_raise::whyNotATTTLayer(loop);
      !notALayer.empty()) {
    rewriter.eraseOp(loop);
    dropBroadcasts();
    return why = notALayer, failure();
  }
  if (onlyRaised) {
    if (std::string left = linalg_raise::whyNotAKVBLayer(loop); !left.empty()) {
      rewriter.eraseOp(loop);
      dropBroadcasts();
      return why = "a layer the reader leaves: " + left, failure();
    }
  }

  for (auto [output, result] : llvm::zip_equal(outputs, loop.getOutputs()))
    rewriter.replaceUsesWithIf(output, result, [&](OpOperand &use) {
      return !inBody(use.getOwner()) && !loop->isAncestor(use.getOwner());
    });
  for (auto [update, final] :
       llvm::zip_equal(step.updates, loop.getFinalStates()))
    rewriter.replaceUsesWithIf(
        update.op->getResult(0), final, [&](OpOperand &use) {
          return !inBody(use.getOwner()) && !loop->isAncestor(use.getOwner());
        });
  for (Operation *op : llvm::reverse(step.body))
    rewriter.eraseOp(op);
  return success();
}

/// Loops formed in one function at most (layers stacked in one model).
constexpr int kMaxStepsPerFunction = 64;

struct TTTFormSingleStepsPass
    : ttt::impl::TTTFormSingleStepsBase<TTTFormSingleStepsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](func::FuncOp func) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        return;
      linalg_raise::spellConstantTransposes(func);
      // Updates whose step was refused, by their op; the function changes
      // only when a loop is formed, so a refused step is never retried.
      llvm::DenseSet<Operation *> refused;
      for (int round = 0; round < kMaxStepsPerFunction; ++round) {
        SingleStepFinder finder(func, refused);
        bool formed = false;
        for (const Step &step : finder.steps()) {
          std::string why;
          if (succeeded(
                  formLoop(rewriter, func, finder, step, onlyRaised, why))) {
            formed = true;
            break;
          }
          for (const Update &update : step.updates)
            refused.insert(update.op);
          if (explain)
            step.updates.front().op->emitRemark()
                << "ttt-form-single-steps: a weight updated once, left as "
                   "it was: "
                << why;
        }
        if (!formed)
          return;
      }
    });
  }
};

} // namespace
