//===- LayerFinder.cpp - TTT-KVB layers in an imported ONNX graph ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LayerFinder.h"
#include "Normalize.h"
#include "SwiGLUForms.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

std::string raise::describeValue(Value value) {
  Value base = skipLayout(value);
  if (auto init = base.getDefiningOp<onnx::InitializerOp>())
    return "'" + init.getName().str() + "'";
  if (auto node = base.getDefiningOp<onnx::NodeOp>()) {
    auto result = cast<OpResult>(base);
    StringRef name = node.getOutputName(result.getResultNumber());
    if (!name.empty())
      return "'" + name.str() + "'";
    // The normalization reads weights stored output x input transposed.
    if (node.getOpType() == "Transpose" && node.getInputs().size() == 1)
      return describeValue(node.getInputs()[0]) + " (transposed)";
    if (auto from = node->getAttrOfType<StringAttr>(kTurnedFromAttr))
      return "'" + from.str() + "' (transposed)";
    return "the " + node.getOpType().str() + " result";
  }
  if (auto arg = dyn_cast<BlockArgument>(base)) {
    if (auto graph = dyn_cast<onnx::GraphOp>(arg.getOwner()->getParentOp()))
      if (auto name = graph.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                         "onnx.name"))
        return "'" + name.str() + "'";
    // A Loop body's carried value is named after its initial value.
    auto loop = dyn_cast<onnx::NodeOp>(arg.getOwner()->getParentOp());
    if (loop && loop.getOpType() == "Loop" && arg.getArgNumber() >= 2 &&
        arg.getArgNumber() < loop.getInputs().size())
      return describeValue(loop.getInputs()[arg.getArgNumber()]);
    return "loop-carried value #" + std::to_string(arg.getArgNumber());
  }
  return "a value";
}

static bool isFloatTensor(Value value) {
  auto shaped = dyn_cast<ShapedType>(value.getType());
  return shaped && isa<FloatType>(shaped.getElementType());
}

/// The ends of Slice chains in the cone of `output`: Slice results that some
/// non-Slice node reads.
static SmallVector<Value> sliceHeads(Value output) {
  SmallVector<Value> heads, stack{output};
  llvm::DenseSet<Value> seen;
  while (!stack.empty()) {
    Value value = stack.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (nodeOf(value, "Slice") || nodeOf(value, "Split")) {
      if (llvm::any_of(value.getUsers(), [](Operation *user) {
            auto node = dyn_cast<onnx::NodeOp>(user);
            return !node || node.getOpType() != "Slice";
          }))
        heads.push_back(value);
      continue;
    }
    // A Shape reads no values of what it measures (a buffer write sizes
    // the chunk output by its window of the buffer).
    if (nodeOf(value, "Shape"))
      continue;
    if (Operation *op = value.getDefiningOp())
      for (Value operand : op->getOperands())
        stack.push_back(operand);
  }
  return heads;
}

/// True if every input that `value` is computed from is one of `allowed`
/// (constants and initializers aside).
static bool readsOnly(Value value, ArrayRef<Value> allowed) {
  SmallVector<Value> stack{value};
  llvm::DenseSet<Value> seen;
  while (!stack.empty()) {
    Value next = stack.pop_back_val();
    if (!seen.insert(next).second || llvm::is_contained(allowed, next) ||
        nodeOf(next, "Shape") || nodeOf(next, "Size"))
      continue;
    if (isa<BlockArgument>(next))
      return false;
    Operation *op = next.getDefiningOp();
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (inner == op ||
            !op->isAncestor(operand.getParentRegion()->getParentOp()))
          stack.push_back(operand);
    });
  }
  return true;
}

namespace {
/// Builds the query path of one chunk output.
class StepBuilder {
public:
  explicit StepBuilder(DependenceCache &deps) : deps(deps) {}

  /// The step of `output`, whose query slices are the time slices no value
  /// of `others` reads (and that cut `query`, when given: the last chunk's
  /// output also is the only reader of the previous chunk's keys). Fails
  /// (nullopt) without such a slice, or when the query slices cut different
  /// tensors.
  std::optional<ChunkStep> chunked(Value output, ArrayRef<Value> others,
                                   Value query = nullptr,
                                   bool dualForm = false) {
    ChunkStep step;
    step.output = output;
    SmallVector<Value> sources;
    for (Value head : sliceHeads(output)) {
      std::optional<SliceChain> chain = sliceChain(head);
      if (!chain || !chain->timeSlice || !isFloatTensor(head))
        continue;
      if ((query && chain->root != query) ||
          llvm::any_of(
              others, [&](Value other) { return deps.dependsOn(other, head); }))
        continue;
      if (step.query && chain->root != step.query)
        return std::nullopt;
      step.query = chain->root;
      step.querySlices.push_back(*chain);
      sources.push_back(head);
    }
    if (sources.empty())
      return std::nullopt;
    if (dualForm)
      step.chunkData = chunkDataOf(output, step);
    collectWeights(step, sources, step.chunkData);
    return step;
  }

  /// True if the query path of `step` reads a value computed from the
  /// chunk's own keys, values and learning rates alone. A weight never is:
  /// the step is a dual-form one (TTT-Linear's tril(Q K^T), its learning
  /// rates eta), to be read in terms of the chunk-start state. Only a step
  /// whose start weights are not constants tells (the first chunk's
  /// update folds into constants and data).
  bool readsChunkData(const ChunkStep &step) {
    SmallVector<Value> chunkData = chunkDataOf(step.output, step);
    return llvm::any_of(step.weightsRead, [&](Value read) {
      return computedFromChunkData(read, chunkData);
    });
  }

  /// The step of a full-batch layer that reads all of `query`.
  ChunkStep fullBatch(Value output, Value query) {
    ChunkStep step;
    step.output = output;
    step.query = query;
    collectWeights(step, {query}, {});
    return step;
  }

private:
  /// The other time slices of the output's cone that cut the query's
  /// window: the keys, values and learning rates of this chunk (per-token
  /// rates of a graph input may have the time axis last, `[B, H, T]` or
  /// `[B*H, T]`).
  SmallVector<Value> chunkDataOf(Value output, const ChunkStep &step) {
    SmallVector<Value> data;
    for (Value head : sliceHeads(output)) {
      std::optional<SliceChain> chain = sliceChain(head);
      // Not a constant's cut (token_eta[:C] cuts the first chunk's window).
      std::optional<int64_t> rank = rankOf(head);
      if ((!chain || !chain->timeSlice) && (rank == 2 || rank == 3) &&
          !readsOnly(head, {}))
        chain = sliceChain(head, /*timeLast=*/true);
      if (!chain || !chain->timeSlice ||
          llvm::any_of(step.querySlices, [&](const SliceChain &query) {
            return query.timeSlice == chain->timeSlice;
          }))
        continue;
      if (sameWindow(*chain, step.querySlices.front()))
        data.push_back(head);
    }
    return data;
  }

  /// True if `value` reads `chunkData` and nothing else that a graph or
  /// loop input feeds (constants and initializers may enter).
  bool computedFromChunkData(Value value, ArrayRef<Value> chunkData) {
    return llvm::any_of(
               chunkData,
               [&](Value data) { return deps.dependsOn(value, data); }) &&
           readsOnly(value, chunkData);
  }

  bool onQueryPath(Value value, ArrayRef<Value> sources) {
    return llvm::any_of(sources,
                        [&](Value s) { return deps.dependsOn(value, s); });
  }

  /// A one-element value computed from constants (`1 / 16`), or an integer
  /// made a float (a Loop's chunk length `Cast(e - s)`): a factor, not a
  /// weight.
  static bool isConstantScalar(Value value) {
    auto type = dyn_cast<ShapedType>(value.getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() != 1)
      return false;
    if (onnx::NodeOp cast = nodeOf(value, "Cast")) {
      auto from = dyn_cast<ShapedType>(cast.getInputs()[0].getType());
      if (from && isa<IntegerType>(from.getElementType()))
        return true;
    }
    return readsOnly(value, {});
  }

  /// Collects the weights the query path reads; with `chunkData`, looks
  /// through the values computed from this chunk's data to the weights they
  /// read in turn.
  void collectWeights(ChunkStep &step, ArrayRef<Value> sources,
                      ArrayRef<Value> chunkData) {
    llvm::DenseSet<Value> seen;
    SmallVector<Value> stack{step.output};
    // Depth first in operand order, so that chunks computed alike list
    // their weights alike.
    while (!stack.empty()) {
      Value value = stack.pop_back_val();
      if (!seen.insert(value).second || llvm::is_contained(sources, value) ||
          llvm::is_contained(chunkData, value))
        continue;
      if (!onQueryPath(value, sources) && !onQueryPath(value, chunkData)) {
        if (isFloatTensor(value) && !scalarConstant(value) &&
            !isConstantScalar(value) &&
            !llvm::is_contained(step.weightsRead, value))
          step.weightsRead.push_back(value);
        continue;
      }
      if (Operation *op = value.getDefiningOp())
        for (Value operand : llvm::reverse(op->getOperands()))
          stack.push_back(operand);
    }
  }

  DependenceCache &deps;
};

/// How a value depends on some variables, as a polynomial degree: 0 (not
/// at all), 1 (linearly), 2+ (products), or kNonlinear.
class DegreeAnalysis {
public:
  static constexpr int kNonlinear = 1 << 20;

  DegreeAnalysis(DependenceCache &deps, ArrayRef<Value> variables)
      : deps(deps), variables(variables) {}

  int degree(Value value) {
    if (llvm::is_contained(variables, value))
      return 1;
    if (llvm::none_of(variables,
                      [&](Value v) { return deps.dependsOn(value, v); }))
      return 0;
    auto it = memo.find(value);
    if (it != memo.end())
      return it->second;
    int result = compute(value);
    memo[value] = result;
    return result;
  }

  /// The first node that made a value non-linear.
  onnx::NodeOp culprit;

private:
  int compute(Value value) {
    auto node = value.getDefiningOp<onnx::NodeOp>();
    if (!node || !node.isDefaultDomain())
      return nonlinear(node);
    SmallVector<int> in;
    for (Value operand : node.getInputs())
      in.push_back(degree(operand));
    auto sum = [&] {
      int total = 0;
      for (int d : in)
        total = std::min(kNonlinear, total + d);
      return total;
    };
    auto max = [&] { return in.empty() ? 0 : *llvm::max_element(in); };
    StringRef type = node.getOpType();
    if (llvm::is_contained({"MatMul", "Mul", "Conv", "Einsum", "Gemm"}, type))
      return sum();
    if (llvm::is_contained({"Add",       "Sub",       "Neg",     "Concat",
                            "Transpose", "Slice",     "Gather",  "ReduceSum",
                            "Identity",  "Unsqueeze", "Squeeze", "Expand",
                            "Reshape",   "Cast",      "Pad",     "Split",
                            "Sum",       "Flatten",   "Trilu",   "ReduceMean",
                            "Tile"},
                           type))
      return max();
    if (type == "Div" && in.size() == 2 && in[1] == 0)
      return in[0];
    if (max() == 0)
      return 0;
    return nonlinear(node);
  }

  int nonlinear(onnx::NodeOp node) {
    if (!culprit)
      culprit = node;
    return kNonlinear;
  }

  DependenceCache &deps;
  ArrayRef<Value> variables;
  llvm::DenseMap<Value, int> memo;
};
} // namespace

static std::string describeNode(onnx::NodeOp node) {
  if (!node)
    return "an op the raise does not know";
  std::string text = node.getOpType().str();
  if (auto name = node.getNodeName())
    text += " node '" + name->str() + "'";
  return text;
}

/// True if `node` stands for an op that a reader of another dialect left
/// untranslated: it blocks a proof without showing the math non-linear.
static bool isUntranslated(onnx::NodeOp node) {
  return node && node.getDomain() == kUntranslatedDomain;
}

/// "<op>, which ttt does not read (<why>)".
static std::string describeUntranslated(onnx::NodeOp node) {
  std::string text = node.getOpType().str() + ", which ttt does not read";
  if (std::optional<StringRef> why = node.getDocString())
    text += " (" + why->str() + ")";
  return text;
}

/// Names the trained weights among `reads`.
static SmallVector<Value> trainedReads(const FoundLayer &layer,
                                       const ChunkStep &step) {
  SmallVector<Value> trained;
  for (auto [read, isTrained] : llvm::zip(step.weightsRead, layer.trained))
    if (isTrained)
      trained.push_back(read);
  return trained;
}

/// The dataflow conditions of docs/Theory.md section 2.1: the output is linear
/// in the trained weights, and the next chunk's weights are affine in this
/// chunk's.
static std::string findBlocker(const FoundLayer &layer, DependenceCache &deps,
                               ArrayRef<std::pair<Value, Value>> updates) {
  const ChunkStep &step =
      layer.steps.size() > 1 ? layer.steps[1] : layer.steps.front();
  // Layout nodes around a weight do not change which numbers it holds.
  SmallVector<Value> trained;
  for (Value read : trainedReads(layer, step))
    trained.push_back(skipLayout(read));
  DegreeAnalysis output(deps, trained);
  int degree = output.degree(step.output);
  if (degree >= DegreeAnalysis::kNonlinear && isUntranslated(output.culprit))
    return "its output passes through " + describeUntranslated(output.culprit) +
           ", so it cannot be shown linear in the fast weights";
  if (degree >= DegreeAnalysis::kNonlinear)
    return "its output depends non-linearly on the trained fast weights "
           "(through " +
           describeNode(output.culprit) +
           "), so it is not linear attention (the theorems need an output "
           "linear in the fast weights)";
  if (degree > 1)
    return "its output multiplies trained fast weights with each other (a "
           "trained feature map), so it is not linear attention";
  for (auto [before, after] : updates) {
    Value base = skipLayout(before);
    DegreeAnalysis update(deps, base);
    if (update.degree(after) <= 1)
      continue;
    if (isUntranslated(update.culprit))
      return "the update of " + describeValue(before) + " passes through " +
             describeUntranslated(update.culprit) +
             ", so it cannot be shown affine in the fast weights";
    return "the update of " + describeValue(before) +
           " is not affine in the fast weights (through " +
           describeNode(update.culprit) +
           "), so the chunks cannot be combined by a scan";
  }
  return "";
}

std::string FoundLayer::describeForm() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  switch (form) {
  case LayerForm::Unrolled:
    os << "unrolled chunk loop (" << steps.size() << " chunks";
    break;
  case LayerForm::Loop:
    os << "ONNX Loop over chunks (";
    break;
  case LayerForm::FullBatch:
    os << "full-batch step";
    return text;
  }
  if (form == LayerForm::Loop)
    os << "chunks";
  if (chunkSize > 0)
    os << " of " << chunkSize << " tokens";
  os << ")";
  return text;
}

/// "'a', 'b', 'c' and 2 more".
static std::string listNames(ArrayRef<Value> values) {
  constexpr size_t kShown = 3;
  SmallVector<std::string> names;
  for (Value value : values) {
    std::string name = describeValue(value);
    if (!llvm::is_contained(names, name))
      names.push_back(name);
  }
  if (names.empty())
    return "none";
  std::string text;
  for (auto [index, name] : llvm::enumerate(names)) {
    if (index == kShown)
      return text + " and " + std::to_string(names.size() - kShown) + " more";
    text += (index ? ", " : "") + name;
  }
  return text;
}

/// True if slot `index` of a layer's weights holds an earlier slot's weight
/// transposed (a backward pass reads W^T; the exporter folds the first
/// chunk's transpose into a constant of its own name).
static bool transposeOfOtherSlot(const FoundLayer &layer, size_t index) {
  ArrayRef<Value> initial = layer.initialWeights;
  return llvm::any_of(llvm::seq(index), [&](size_t other) {
    if (isTransposeOf(initial[index], initial[other]))
      return true;
    if (layer.steps.size() < 2)
      return false;
    // A chunk may read fewer weights than the layer starts from (a model
    // whose chunks do not all apply the same weights).
    ArrayRef<Value> reads = layer.steps[1].weightsRead;
    return index < reads.size() &&
           computesTransposeOf(reads[index], reads[other]);
  });
}

std::string FoundLayer::describeWeights() const {
  SmallVector<Value> fast, fixed;
  for (auto [index, weight] : llvm::enumerate(initialWeights))
    if (!transposeOfOtherSlot(*this, index))
      (trained[index] ? fast : fixed).push_back(weight);
  return "fast weights " + listNames(fast) +
         (fixed.empty() ? "" : "; static weights " + listNames(fixed));
}

//===----------------------------------------------------------------------===//
// The three forms
//===----------------------------------------------------------------------===//

static std::optional<int64_t> axisOf(onnx::NodeOp node) {
  auto axis = dyn_cast_or_null<IntegerAttr>(node.getONNXAttr("axis"));
  if (!axis)
    return std::nullopt;
  return axis.getInt();
}

/// True if `node` joins its inputs along the time axis of its result.
static bool joinsTime(onnx::NodeOp node) {
  std::optional<int64_t> axis = axisOf(node);
  return axis && node->getNumResults() == 1 &&
         isTimeAxis(*axis, rankOf(node->getResult(0)));
}

/// True if `next` is `prev` moved by a term added to it: between them an Add
/// (or a Sub with `prev` first) takes `prev` itself as an operand. Gradient
/// steps (W + dW, W - lr G), momentum and weight norm (a norm of W + dW) all
/// do. Ordinary recurrences do not: an RNN feeds its state through a matrix
/// and a non-linearity, a selective scan scales it by a decay computed from
/// the data before adding, a KV cache concatenates.
static bool isAdditiveUpdate(Value next, Value prev, DependenceCache &deps) {
  // A weight applied transposed (`x W^T`, W stored output x input) is
  // updated as it is stored.
  Value prevStored = transposedInput(prev), nextStored = transposedInput(next);
  if (prevStored && nextStored)
    return isAdditiveUpdate(nextStored, prevStored, deps);
  // The first chunk's weight may be a constant the exporter folded from the
  // transpose of the stored one.
  if (nextStored && storedOperandOf(prev, nextStored))
    return true;
  Value base = skipLayout(prev);
  SmallVector<Value> stack{next};
  llvm::DenseSet<Value> seen;
  while (!stack.empty()) {
    Value value = stack.pop_back_val();
    if (!seen.insert(value).second || !deps.dependsOn(value, base))
      continue;
    auto node = value.getDefiningOp<onnx::NodeOp>();
    if (!node)
      continue;
    StringRef type = node.getOpType();
    if ((type == "Add" || type == "Sub") && node.getInputs().size() == 2)
      for (int i = 0, e = type == "Sub" ? 1 : 2; i < e; ++i)
        if (skipLayout(node.getInputs()[i]) == base)
          return true;
    for (Value operand : node.getInputs())
      stack.push_back(operand);
  }
  return false;
}

/// If `weight` is a learned weight plus a term computed from the inputs
/// (the first chunk of an update-then-apply layer reads W_0 + dW), W_0.
static Value updateBase(Value weight) {
  auto node = skipLayout(weight).getDefiningOp<onnx::NodeOp>();
  if (!node || (node.getOpType() != "Add" && node.getOpType() != "Sub") ||
      node.getInputs().size() != 2)
    return nullptr;
  auto learned = [](Value value) {
    // A weight stored output x input is updated transposed (`x W^T`).
    if (Value stored = transposedInput(value))
      value = stored;
    auto arg = dyn_cast<BlockArgument>(skipLayout(value));
    return (arg && isa<onnx::GraphOp>(arg.getOwner()->getParentOp())) ||
           readsOnly(value, {});
  };
  Value base = node.getInputs()[0], term = node.getInputs()[1];
  if (node.getOpType() == "Add" && !learned(base))
    std::swap(base, term);
  return learned(base) && !learned(term) ? base : nullptr;
}

/// Why a candidate whose state changes from chunk to chunk is no TTT layer.
static std::string ordinaryRecurrence(Value state) {
  return "its carried state " + describeValue(state) +
         " is not updated by adding a term to it (an ordinary recurrence, not "
         "gradient steps on fast weights)";
}

static std::optional<FoundLayer> findUnrolled(onnx::NodeOp concat,
                                              DependenceCache &deps,
                                              std::string &rejection) {
  if (concat.getOpType() != "Concat" || !joinsTime(concat) ||
      concat.getInputs().size() < 2 || concat->getNumResults() != 1)
    return std::nullopt;
  FoundLayer layer;
  layer.form = LayerForm::Unrolled;
  layer.assembly = concat;
  layer.output = concat->getResult(0);
  StepBuilder builder(deps);
  SmallVector<Value> outputs(concat.getInputs());
  auto readSteps = [&](bool dualForm) {
    layer.steps.clear();
    for (Value output : outputs) {
      SmallVector<Value> others;
      for (Value other : outputs)
        if (other != output)
          others.push_back(other);
      Value query = layer.steps.empty() ? Value() : layer.steps[0].query;
      std::optional<ChunkStep> step =
          builder.chunked(output, others, query, dualForm);
      if (!step ||
          (!layer.steps.empty() &&
           (step->query != layer.steps[0].query ||
            step->weightsRead.size() != layer.steps[0].weightsRead.size())))
        return false;
      layer.steps.push_back(std::move(*step));
    }
    return true;
  };
  if (!readSteps(/*dualForm=*/false))
    return std::nullopt;
  if (llvm::any_of(ArrayRef(layer.steps).drop_front(),
                   [&](const ChunkStep &step) {
                     return builder.readsChunkData(step);
                   }) &&
      !readSteps(/*dualForm=*/true))
    return std::nullopt;
  const ChunkStep &first = layer.steps[0], &second = layer.steps[1];
  for (auto [a, b] : llvm::zip(first.weightsRead, second.weightsRead)) {
    layer.initialWeights.push_back(a);
    layer.trained.push_back(skipLayout(a) != skipLayout(b));
  }
  if (!llvm::is_contained(layer.trained, true))
    return std::nullopt;
  for (auto [index, isTrained] : llvm::enumerate(layer.trained)) {
    if (!isTrained)
      continue;
    if (!isAdditiveUpdate(second.weightsRead[index], first.weightsRead[index],
                          deps)) {
      rejection = ordinaryRecurrence(first.weightsRead[index]);
      return std::nullopt;
    }
    if (Value base = updateBase(first.weightsRead[index]))
      layer.initialWeights[index] = base;
  }
  const SliceChain &slice = first.querySlices.front();
  if (slice.start && slice.end && *slice.start == 0)
    layer.chunkSize = *slice.end - *slice.start;
  SmallVector<std::pair<Value, Value>> updates;
  if (layer.steps.size() > 2)
    for (auto [index, isTrained] : llvm::enumerate(layer.trained))
      if (isTrained)
        updates.push_back({layer.steps[1].weightsRead[index],
                           layer.steps[2].weightsRead[index]});
  layer.blocker = findBlocker(layer, deps, updates);
  return layer;
}

/// `start` of a Loop body's time slice is `iteration * C`: returns C.
static int64_t loopChunkSize(const SliceChain &slice, Block &body) {
  onnx::NodeOp cut = slice.timeSlice;
  if (!cut || cut.getOpType() != "Slice")
    return 0;
  onnx::NodeOp timeSlice = slice.timeSlice;
  Value start = skipLayout(timeSlice.getInputs()[1]);
  int64_t size = 0;
  matchCommutative(start, "Mul", [&](Value a, Value b) {
    std::optional<double> c = scalarConstant(b);
    if (skipLayout(a) != body.getArgument(0) || !c)
      return false;
    size = static_cast<int64_t>(*c);
    return true;
  });
  return size;
}

/// True if `user` reads nothing of `value` but its shape: a Shape node, or a
/// view of it whose values reach only Shape nodes (a scripted export sizes a
/// buffer write by `out[:, :, s:e]`'s shape).
static bool readsOnlyShape(Operation *user) {
  auto node = dyn_cast<onnx::NodeOp>(user);
  if (!node || !node.isDefaultDomain())
    return false;
  if (node.getOpType() == "Shape")
    return true;
  return node->getNumResults() == 1 &&
         llvm::is_contained(
             {"Slice", "Identity", "Reshape", "Unsqueeze", "Squeeze"},
             node.getOpType()) &&
         llvm::all_of(node->getResult(0).getUsers(), readsOnlyShape);
}

/// A buffer write's update turned into the buffer's layout.
struct Unturned {
  /// The chunk's output, or its `W phi(q)^T` when `swapped`.
  Value output;
  /// The permutation from the [.., C, E] chunk output to the update.
  SmallVector<int64_t> perm;
  bool swapped = false;
};

/// `Transpose(x, perm)` with the feature axis kept last, or `Transpose(x,
/// perm)` of x = `W phi(q)^T` ([.., E, C]) that the exporter merged with the
/// transpose back to [.., C, E]; otherwise the update itself, unturned.
static Unturned unturned(Value update) {
  // A scripted export sizes the update as the window it writes:
  // `Reshape(Expand(x, Shape(buffer[.., s:e])), ..)`, x itself.
  if (onnx::NodeOp reshape = nodeOf(update, "Reshape")) {
    onnx::NodeOp expand = nodeOf(reshape.getInputs()[0], "Expand");
    onnx::NodeOp shape =
        expand ? nodeOf(expand.getInputs()[1], "Shape") : onnx::NodeOp();
    std::optional<SliceChain> window =
        shape ? sliceChain(shape.getInputs()[0]) : std::nullopt;
    if (window && isa<BlockArgument>(window->root) &&
        nodeOf(expand.getInputs()[0], "Transpose"))
      update = expand.getInputs()[0];
  }
  onnx::NodeOp turn = nodeOf(update, "Transpose");
  std::optional<SmallVector<int64_t>> perm =
      turn ? transposePerm(turn) : std::nullopt;
  int64_t rank = perm ? static_cast<int64_t>(perm->size()) : 0;
  if (rank < 2)
    return {update, {}, false};
  if (perm->back() == rank - 1)
    return {turn.getInputs()[0], *perm, false};
  // Transpose(x, p) = Transpose(Transpose(x, s), r) with s the swap of the
  // last two axes and r[i] = s[p[i]].
  SmallVector<int64_t> composed(*perm);
  for (int64_t &axis : composed)
    axis = axis == rank - 1 ? rank - 2 : axis == rank - 2 ? rank - 1 : axis;
  // A plain swap is the product turned back: the update is the chunk output.
  bool identity = llvm::all_of(llvm::enumerate(composed), [](auto entry) {
    return entry.value() == static_cast<int64_t>(entry.index());
  });
  if (identity || composed.back() != rank - 1)
    return {update, {}, false};
  return {turn.getInputs()[0], composed, true};
}

/// The Loop writes its chunks into the buffer `buffer` holds after it: the
/// layer's output is that buffer, after the last chunk's write if the next
/// node is one.
static std::optional<FoundLayer>
finishBufferLoop(FoundLayer layer, onnx::NodeOp bodyWrite, Value buffer,
                 StepBuilder &builder, bool dualForm, DependenceCache &deps,
                 ArrayRef<std::pair<Value, Value>> updates) {
  layer.bodyWrite = bodyWrite;
  layer.assembly = layer.loop;
  layer.output = buffer;
  // The write after the Loop is the buffer's one reader but for Shape
  // nodes (the grid of a write whose batch is known at run time only reads
  // the buffer's shape, which the write keeps).
  onnx::NodeOp tail;
  for (Operation *user : buffer.getUsers()) {
    auto node = dyn_cast<onnx::NodeOp>(user);
    if (node && node.getOpType() == "Shape" && node.isDefaultDomain())
      continue;
    if (tail || !node) {
      tail = {};
      break;
    }
    tail = node;
  }
  if (tail && tail.getOpType() == "ScatterND" && tail.getInputs().size() == 3 &&
      tail.getInputs()[0] == buffer) {
    // The last chunk is written in the layout of the others.
    Unturned update = unturned(tail.getInputs()[2]);
    if (update.perm != layer.outputPerm ||
        update.swapped != layer.outputSwapped)
      return std::nullopt;
    std::optional<ChunkStep> step =
        builder.chunked(update.output, {}, layer.steps[0].query, dualForm);
    if (!step)
      return std::nullopt;
    layer.steps.push_back(std::move(*step));
    layer.tailWrite = tail;
    layer.assembly = tail;
    layer.output = tail->getResult(0);
  }
  layer.blocker = findBlocker(layer, deps, updates);
  return layer;
}

static std::optional<FoundLayer>
findLoop(onnx::NodeOp loop, DependenceCache &deps, std::string &rejection) {
  if (loop.getOpType() != "Loop" || loop->getNumRegions() != 1 ||
      loop->getRegion(0).empty())
    return std::nullopt;
  Block &body = loop->getRegion(0).front();
  auto yield = dyn_cast<onnx::YieldOp>(body.getTerminator());
  if (!yield)
    return std::nullopt;
  unsigned numCarried = body.getNumArguments() - 2;
  // The carried sequence the body appends its chunk output to, or the
  // carried buffer it writes the chunk output into.
  std::optional<unsigned> sequenceSlot;
  Value chunkOutput;
  onnx::NodeOp bodyWrite;
  SmallVector<int64_t> outputPerm;
  bool outputSwapped = false;
  for (unsigned i = 0; i < numCarried; ++i) {
    Value carried = body.getArgument(2 + i);
    onnx::NodeOp insert = nodeOf(yield.getOperand(1 + i), "SequenceInsert");
    onnx::NodeOp write = nodeOf(yield.getOperand(1 + i), "ScatterND");
    if (insert && insert.getInputs()[0] == carried) {
      sequenceSlot = i;
      chunkOutput = insert.getInputs()[1];
      bodyWrite = nullptr;
      outputPerm.clear();
      outputSwapped = false;
    } else if (write && write.getInputs().size() == 3 &&
               write.getInputs()[0] == carried && !sequenceSlot &&
               llvm::all_of(carried.getUsers(), [&](Operation *user) {
                 return user == write || readsOnlyShape(user);
               })) {
      sequenceSlot = i;
      Unturned update = unturned(write.getInputs()[2]);
      chunkOutput = update.output;
      outputPerm = update.perm;
      outputSwapped = update.swapped;
      bodyWrite = write;
    }
  }
  if (!sequenceSlot)
    return std::nullopt;
  SmallVector<Value> carriedOut;
  for (unsigned i = 0; i < numCarried; ++i)
    if (i != *sequenceSlot)
      carriedOut.push_back(yield.getOperand(1 + i));
  StepBuilder builder(deps);
  std::optional<ChunkStep> step = builder.chunked(chunkOutput, carriedOut);
  if (!step)
    return std::nullopt;
  bool dualForm = builder.readsChunkData(*step);
  if (dualForm)
    step = builder.chunked(chunkOutput, carriedOut, nullptr, dualForm);

  FoundLayer layer;
  layer.form = LayerForm::Loop;
  layer.loop = loop;
  layer.outputPerm = outputPerm;
  layer.outputSwapped = outputSwapped;
  layer.chunkSize = loopChunkSize(step->querySlices.front(), body);
  SmallVector<std::pair<Value, Value>> updates;
  for (Value read : step->weightsRead) {
    auto arg = dyn_cast<BlockArgument>(skipLayout(read));
    bool carried = arg && arg.getOwner() == &body && arg.getArgNumber() >= 2;
    // Values the body computes from the carried weights change too; such a
    // value (a weight already updated with this chunk) is named after the
    // carried weight it comes from.
    auto from = llvm::find_if(body.getArguments().drop_front(2),
                              [&](BlockArgument carriedArg) {
                                return deps.dependsOn(read, carriedArg);
                              });
    bool computed = from != body.getArguments().end();
    layer.trained.push_back(carried || computed);
    layer.initialWeights.push_back(
        carried    ? loop.getInputs()[arg.getArgNumber()]
        : computed ? loop.getInputs()[(*from).getArgNumber()]
                   : read);
    if (carried)
      updates.push_back({arg, yield.getOperand(arg.getArgNumber() - 1)});
    BlockArgument state = carried ? arg : computed ? *from : BlockArgument();
    if (state && !isAdditiveUpdate(yield.getOperand(state.getArgNumber() - 1),
                                   state, deps)) {
      rejection = ordinaryRecurrence(state);
      return std::nullopt;
    }
  }
  if (!llvm::is_contained(layer.trained, true))
    return std::nullopt;
  layer.steps.push_back(std::move(*step));

  // After the loop: maybe one more chunk appended, then the concatenation.
  Value sequence = loop->getResult(*sequenceSlot);
  if (bodyWrite)
    return finishBufferLoop(std::move(layer), bodyWrite, sequence, builder,
                            dualForm, deps, updates);
  if (!sequence.hasOneUse())
    return std::nullopt;
  auto user = dyn_cast<onnx::NodeOp>(*sequence.getUsers().begin());
  if (user && user.getOpType() == "SequenceInsert" &&
      user.getInputs().size() >= 2 && user->getNumResults() == 1 &&
      user->getResult(0).hasOneUse()) {
    std::optional<ChunkStep> tail = builder.chunked(
        user.getInputs()[1], {}, layer.steps[0].query, dualForm);
    if (!tail)
      return std::nullopt;
    layer.steps.push_back(std::move(*tail));
    user = dyn_cast<onnx::NodeOp>(*user->getResult(0).getUsers().begin());
  }
  if (!user || user.getOpType() != "ConcatFromSequence" ||
      intAttr(user, "new_axis").value_or(0) != 0)
    return std::nullopt;
  // The joined value may be untyped; its elements have the queries' rank.
  std::optional<int64_t> axis = axisOf(user);
  std::optional<int64_t> rank = rankOf(user->getResult(0));
  if (!rank)
    rank = rankOf(layer.steps[0].query);
  if (!axis || !isTimeAxis(*axis, rank))
    return std::nullopt;
  layer.assembly = user;
  layer.output = user->getResult(0);
  layer.blocker = findBlocker(layer, deps, updates);
  return layer;
}

/// True if `weight` is a learned weight moved by data: somewhere on its way
/// from the inputs an Add or Sub combines a matrix that no input affects
/// (the initial fast weight) with one computed from the inputs (the
/// update). Attention's keys and values, however projected, never are.
static bool isUpdatedWeight(Value weight, ArrayRef<Value> inputs,
                            DependenceCache &deps) {
  auto fromInputs = [&](Value value) {
    return llvm::any_of(
        inputs, [&](Value input) { return deps.dependsOn(value, input); });
  };
  SmallVector<Value> stack{weight};
  llvm::DenseSet<Value> seen;
  while (!stack.empty()) {
    Value value = stack.pop_back_val();
    if (!seen.insert(value).second || !fromInputs(value))
      continue;
    auto node = value.getDefiningOp<onnx::NodeOp>();
    if (!node)
      continue;
    if ((node.getOpType() == "Add" || node.getOpType() == "Sub") &&
        node.getInputs().size() == 2) {
      for (int i = 0; i < 2; ++i) {
        Value initial = node.getInputs()[i];
        auto type = dyn_cast<ShapedType>(initial.getType());
        // The initial weight is computed from no input, or is an input of
        // its own (a fast weight passed to the layer) while the update
        // reads the others.
        Value start = skipLayoutAndTransposes(initial),
              step = node.getInputs()[1 - i];
        bool given = llvm::is_contained(inputs, start) &&
                     llvm::any_of(inputs, [&](Value input) {
                       return input != start && deps.dependsOn(step, input);
                     });
        // A bias vector is not a fast weight; scripted exports often leave
        // the rank unknown.
        if ((!fromInputs(initial) || given) && type &&
            (!type.hasRank() || type.getRank() >= 2) && isFloatTensor(initial))
          return true;
      }
    }
    for (Value operand : node.getInputs())
      stack.push_back(operand);
  }
  return false;
}

static std::optional<FoundLayer>
findFullBatch(Value output, onnx::GraphOp graph, DependenceCache &deps) {
  // Layout nodes after the product (the output turned back to [B, T, H, E],
  // a no-op Cast) stay outside the layer.
  output = skipLayoutAndTransposes(output);
  if (!output.getDefiningOp<onnx::NodeOp>())
    return std::nullopt;
  Block &block = graph.getBody().front();
  SmallVector<Value> inputs;
  for (BlockArgument arg : block.getArguments())
    if (deps.dependsOn(output, arg) && isFloatTensor(arg))
      inputs.push_back(arg);
  StepBuilder builder(deps);
  for (Value query : inputs) {
    ChunkStep step = builder.fullBatch(output, query);
    // The weights the queries meet are computed from the other inputs (the
    // keys and values), never an input itself.
    bool updated = false, readsInput = false;
    for (Value read : step.weightsRead) {
      readsInput |= llvm::is_contained(inputs, skipLayout(read));
      updated |= isUpdatedWeight(read, inputs, deps);
    }
    if (readsInput || !updated)
      continue;
    FoundLayer layer;
    layer.form = LayerForm::FullBatch;
    layer.output = output;
    layer.assembly = output.getDefiningOp();
    for (Value read : step.weightsRead) {
      layer.initialWeights.push_back(read);
      layer.trained.push_back(llvm::any_of(
          inputs, [&](Value input) { return deps.dependsOn(read, input); }));
    }
    layer.steps.push_back(std::move(step));
    layer.blocker = findBlocker(layer, deps, {});
    return layer;
  }
  return std::nullopt;
}

std::vector<FoundLayer> raise::findLayers(onnx::GraphOp graph,
                                          DependenceCache &deps,
                                          std::vector<Candidate> *rejected) {
  std::vector<FoundLayer> layers;
  auto covered = [&](Operation *op) {
    return llvm::any_of(layers, [&](const FoundLayer &layer) {
      onnx::NodeOp loop = layer.loop;
      return loop && loop->isAncestor(op);
    });
  };
  graph.walk<WalkOrder::PreOrder>([&](onnx::NodeOp node) {
    if (!node.isDefaultDomain() || covered(node))
      return;
    std::string rejection;
    std::optional<FoundLayer> layer = node.getOpType() == "Loop"
                                          ? findLoop(node, deps, rejection)
                                          : findUnrolled(node, deps, rejection);
    if (layer)
      layers.push_back(std::move(*layer));
    else if (rejected && !rejection.empty())
      rejected->push_back({node, std::move(rejection)});
  });
  // Full-batch layers: graph outputs that no chunked layer produced, and
  // that do not read a layer ttt-opt already rewrote.
  SmallVector<Value> rewritten;
  graph.walk([&](onnx::NodeOp node) {
    std::optional<StringRef> doc = node.getDocString();
    if (doc && doc->starts_with(kRewrittenDoc))
      llvm::append_range(rewritten, node->getResults());
  });
  auto yield = cast<onnx::YieldOp>(graph.getBody().front().getTerminator());
  for (Value output : yield.getOperands()) {
    if (llvm::any_of(layers,
                     [&](const FoundLayer &layer) {
                       return deps.dependsOn(output, layer.output);
                     }) ||
        llvm::any_of(rewritten,
                     [&](Value done) { return deps.dependsOn(output, done); }))
      continue;
    if (std::optional<FoundLayer> layer = findFullBatch(output, graph, deps))
      layers.push_back(std::move(*layer));
  }
  return layers;
}
