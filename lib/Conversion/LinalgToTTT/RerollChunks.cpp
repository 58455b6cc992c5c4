//===- RerollChunks.cpp - unrolled chunk steps as one ttt.chunk_loop ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A traced program repeats a chunk step once per chunk. Here the steps are
// found by dataflow alone: the windows are `tensor.extract_slice`s that cut
// one axis of a tensor at 0, C, 2C, ...; every op belongs to the last chunk
// whose window it reads; what a step reads from the step before is its
// state. The steps from the second on that are the same computation (the
// same ops and attributes, windows of the same tensors, the same constants,
// each reading the state the one before yields, proven op by op, or where
// the ops differ, as the same sums of products) become one ttt.chunk_loop
// over their windows. The first step, which exporters often
// fold (a zero momentum, a weight broadcast), joins the loop when, read as
// polynomials, it is the general step from a state the loop can start with;
// a shorter last one stays after the loop. The chunk outputs' assembly (a
// concat, or inserts into a buffer) takes the loop's output in their place.
// Nothing changes what the function computes.
//
//===----------------------------------------------------------------------===//

#include "ChunkLoopForms.h"
#include "EinsumPolynomial.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

#include <functional>

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTREROLLCHUNKS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;

namespace {

/// Other dimensions a window reads from 0 to a run-time size that is not
/// the source's own (keys of a larger batch read over the queries' batch),
/// by dimension.
using Cuts = SmallVector<std::pair<int64_t, Value>, 1>;

/// A tensor cut into windows along one axis.
struct WindowKey {
  Value source;
  int64_t axis;
  Cuts cuts;
  bool operator==(const WindowKey &other) const {
    return source == other.source && axis == other.axis && cuts == other.cuts;
  }
};

/// The axis and offset a slice cuts, when it cuts exactly one axis at a
/// static offset, with unit strides and the other dimensions whole or cut
/// at 0 to the size of another tensor's dimension (`cuts`).
std::optional<std::pair<int64_t, int64_t>>
windowOf(tensor::ExtractSliceOp slice, Cuts *cuts) {
  auto source = slice.getSourceType();
  if (slice.getResultType().getRank() != source.getRank() ||
      !slice.hasUnitStride() || !slice.getOffsets().empty())
    return std::nullopt;
  std::optional<std::pair<int64_t, int64_t>> cut;
  Cuts others;
  for (int64_t d = 0; d < source.getRank(); ++d) {
    int64_t offset = slice.getStaticOffsets()[d];
    OpFoldResult size = slice.getMixedSizes()[d];
    std::optional<int64_t> staticSize = getConstantIntValue(size);
    // A whole dimension: its static size, or the `tensor.dim` of a
    // dimension of run-time size (a dynamic batch).
    bool whole = false;
    if (staticSize) {
      whole = *staticSize == source.getDimSize(d);
    } else if (auto dim = cast<Value>(size).getDefiningOp<tensor::DimOp>()) {
      whole =
          dim.getSource() == slice.getSource() && dim.getConstantIndex() == d;
      if (!whole && offset == 0) {
        others.push_back({d, dim.getResult()});
        continue;
      }
    }
    if (offset == 0 && whole)
      continue;
    if (cut || source.isDynamicDim(d) || !staticSize)
      return std::nullopt;
    cut = {d, offset};
  }
  if (cuts)
    *cuts = std::move(others);
  return cut;
}

/// How a program puts its chunk outputs together: a `tensor.concat` of one
/// piece per chunk, or a chain of `tensor.insert_slice`s that writes piece
/// i at i*C into a buffer.
struct Assembly {
  tensor::ConcatOp concat;
  SmallVector<tensor::InsertSliceOp> inserts;
  int64_t axis = 0;

  Value piece(int64_t chunk) {
    return concat ? concat.getInputs()[chunk] : inserts[chunk].getSource();
  }
  bool contains(Operation *op) {
    return concat ? op == concat.getOperation()
                  : llvm::is_contained(inserts,
                                       dyn_cast<tensor::InsertSliceOp>(op));
  }
};

/// Whether `size` is the whole run-time dimension `d` of the buffer that
/// `dest` is written into: the size its tensor.empty was made with, or
/// that buffer's own tensor.dim.
static bool isWholeBufferDim(Value size, Value dest, int64_t d) {
  while (auto earlier = dest.getDefiningOp<tensor::InsertSliceOp>())
    dest = earlier.getDest();
  if (auto dim = size.getDefiningOp<tensor::DimOp>())
    if (dim.getSource() == dest && dim.getConstantIndex() == d)
      return true;
  auto empty = dest.getDefiningOp<tensor::EmptyOp>();
  return empty && empty.getType().isDynamicDim(d) &&
         empty.getDynamicSize(d) == size;
}

/// The axis and offset at which an insert writes a piece: one axis at a
/// static offset, unit strides, the other dimensions whole.
std::optional<std::pair<int64_t, int64_t>>
insertCut(tensor::InsertSliceOp insert) {
  auto dest = insert.getDestType();
  if (insert.getSourceType().getRank() != dest.getRank() ||
      !insert.hasUnitStride() || !insert.getOffsets().empty())
    return std::nullopt;
  std::optional<std::pair<int64_t, int64_t>> cut;
  for (int64_t d = 0; d < dest.getRank(); ++d) {
    int64_t offset = insert.getStaticOffsets()[d];
    OpFoldResult mixed = insert.getMixedSizes()[d];
    if (auto value = dyn_cast<Value>(mixed)) {
      if (offset == 0 && isWholeBufferDim(value, insert.getDest(), d))
        continue;
      return std::nullopt;
    }
    int64_t size = insert.getStaticSizes()[d];
    if (offset == 0 && size == dest.getDimSize(d))
      continue;
    if (cut)
      return std::nullopt;
    cut = {d, offset};
  }
  return cut;
}

/// Whether `a` and `b` are constants of the same elements (two zero
/// tensors an exporter stored twice).
static bool sameConstant(Value a, Value b) {
  Attribute x, y;
  if (!matchPattern(a, m_Constant(&x)) || !matchPattern(b, m_Constant(&y)))
    return false;
  if (x == y)
    return true;
  DenseElementsAttr dx = linalg_raise::denseConstantValue(x),
                    dy = linalg_raise::denseConstantValue(y);
  return dx && dy && dx == dy;
}

/// Whether `a` and `b` hold the same elements: equal constants, or the same
/// op of the same operands (an exporter's `zeros_like` made once per
/// weight, each a broadcast of one scalar into its own empty tensor).
static bool sameValue(Value a, Value b, unsigned depth = 0) {
  if (a == b || sameConstant(a, b))
    return true;
  constexpr unsigned kMaxDepth = 3;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y || depth >= kMaxDepth || a.getType() != b.getType() ||
      cast<OpResult>(a).getResultNumber() !=
          cast<OpResult>(b).getResultNumber())
    return false;
  IRMapping inner;
  return OperationEquivalence::isEquivalentTo(
      x, y,
      [&](Value l, Value r) {
        return success(inner.lookupOrNull(l) == r ||
                       sameValue(l, r, depth + 1));
      },
      [&](Value l, Value r) { inner.map(l, r); },
      OperationEquivalence::Flags(
          OperationEquivalence::IgnoreLocations |
          OperationEquivalence::IgnoreDiscardableAttrs));
}

/// The unrolled chunk steps of one function and the proof that they repeat.
class Reroll {
public:
  explicit Reroll(func::FuncOp func) : func(func) {}

  /// Finds windows and steps; the reason when there is no loop to make.
  LogicalResult analyze(std::string &why);

  /// Replaces steps 1 .. last by a ttt.chunk_loop.
  LogicalResult rewrite(std::string &why);

private:
  LogicalResult findWindows(std::string &why);
  LogicalResult assignSteps(std::string &why);
  LogicalResult matchSteps(std::string &why);
  void sinkStateViews();
  /// Whether step 0 is the template run from window-free initial states;
  /// sets `initial` to them, as polynomials.
  bool firstStepIsTemplate();
  /// Whether step 0 is the template op for op, reading in place of the
  /// state values no step computes (the model's weights, a zero momentum
  /// constant); sets `inits` to them. A step whose state the polynomial
  /// reading cannot follow (a weight norm divides it) is matched this way.
  bool firstStepReadsInitialStates(SmallVector<Value> &inits);
  Value materialize(OpBuilder &b, Location loc,
                    const linalg_raise::Polynomial &poly,
                    RankedTensorType type);
  bool sameInvariant(Value a, Value b, unsigned depth = 0);
  /// Whether step `i` computes the template's next state and chunk
  /// outputs, read as polynomials when its ops differ from the template's
  /// (`a @ b` as `(b^T a^T)^T`, `x c` as `(x c/2) 2`); sets `copies[i]` for
  /// those values and `outputsOnly` when the step's update is absent.
  bool matchAsPolynomials(int64_t i, bool &outputsOnly);
  /// Whether template value `x` and step value `y` are equal, with the
  /// template's state, windows and invariants standing for step `i`'s.
  bool sameInStep(Value x, Value y, int64_t i, ArrayRef<Value> stateInStep,
                  llvm::DenseMap<std::pair<Value, Value>, bool> &memo,
                  unsigned depth);

  func::FuncOp func;
  int64_t chunk = 0, numChunks = 0;
  /// Every window slice and its chunk.
  llvm::MapVector<Operation *, int64_t> windowChunk;
  llvm::DenseMap<Operation *, WindowKey> windowKey;
  /// The chunk of every op that reads a window (-1: none).
  llvm::DenseMap<Operation *, int64_t> stepOf;
  SmallVector<SmallVector<Operation *>> steps;
  /// How the chunk outputs are put together.
  SmallVector<Assembly> assemblies;
  bool isAssembly(Operation *op) {
    return llvm::any_of(assemblies,
                        [&](Assembly &a) { return a.contains(op); });
  }
  /// The template (step 1): the state values it reads from step 0, the
  /// values it yields as the next state, and each later step's copy of the
  /// template's values.
  SmallVector<Value> stateIn, stateOut;
  SmallVector<IRMapping> copies;
  int64_t lastStep = 0;
  /// The length of the last chunk when it is shorter than `chunk` (else 0);
  /// once it is matched, the loop's body is typed for any chunk length.
  int64_t lastLength = 0;
  bool shortLastMatched() const {
    return lastLength && lastStep + 1 == numChunks;
  }
  /// Whether `a` of the template and `b` of the shorter last step are the
  /// same op on windows of that length (types alike but for the sizes that
  /// are C tokens in one and lastLength in the other).
  bool sameOnShorterChunk(Operation *a, Operation *b,
                          function_ref<LogicalResult(Value, Value)> equivalent);
  bool isShorterInstance(Type full, Type shorter) const;
  /// Whether `x` and `y` are the same fresh tensor (a tensor.empty, filled
  /// or not), `y` shorter as isShorterInstance says.
  bool sameFreshOnShorterChunk(Value x, Value y);
  /// Whether the last step matched computes only the outputs (its state
  /// update is dead); the loop then computes that update, unread.
  bool lastStepOutputsOnly = false;
  /// The initial states when the loop starts at chunk 0 (step 0 folded).
  std::optional<SmallVector<linalg_raise::Polynomial>> initial;
  /// Whether the loop starts at chunk 0 (step 0 joined it).
  bool startsAtZero = false;
  /// Values step 0 reads in place of a state that are copies of the
  /// initial value chosen for it (`sameValue`).
  llvm::SetVector<Value> initialCopies;
  /// The labels of `initial` that index a dimension of size 1 (a weight
  /// stored as [1, r, c] and broadcast over the batch).
  llvm::DenseSet<unsigned> initialUnits;
};

LogicalResult Reroll::findWindows(std::string &why) {
  // Cuts of one tensor along one axis, by offset.
  llvm::MapVector<std::pair<Value, int64_t>,
                  SmallVector<std::pair<int64_t, tensor::ExtractSliceOp>>>
      cuts;
  llvm::DenseMap<Operation *, Cuts> otherCuts;
  func.walk([&](tensor::ExtractSliceOp slice) {
    if (slice->getParentOp() != func)
      return;
    Cuts others;
    if (std::optional<std::pair<int64_t, int64_t>> cut =
            windowOf(slice, &others)) {
      cuts[{slice.getSource(), cut->first}].push_back({cut->second, slice});
      otherCuts[slice] = std::move(others);
    }
  });
  // The chunking most tensors follow: offsets 0, C, ..., (M-1)C, every
  // window C long but one that ends at the tensor's end. (A program need
  // not cut every chunk of every tensor: the last chunk's keys are dead
  // when nothing reads the final state.)
  // `given`: the chunk the other tensors agree on; a tensor cut into fewer
  // windows (its last chunk's keys dead) then follows it.
  auto chunking = [](Value source, int64_t axis,
                     ArrayRef<std::pair<int64_t, tensor::ExtractSliceOp>> list,
                     int64_t given =
                         0) -> std::optional<std::pair<int64_t, int64_t>> {
    int64_t length = cast<RankedTensorType>(source.getType()).getDimSize(axis);
    llvm::SmallSetVector<int64_t, 8> offsets;
    for (auto [offset, slice] : list)
      offsets.insert(offset);
    SmallVector<int64_t> sorted(offsets.begin(), offsets.end());
    llvm::sort(sorted);
    if (sorted.empty() || sorted[0] != 0 || (!given && sorted.size() < 3))
      return std::nullopt;
    int64_t c = given ? given : sorted[1];
    for (auto [i, offset] : llvm::enumerate(sorted))
      if (offset != static_cast<int64_t>(i) * c)
        return std::nullopt;
    for (auto [offset, slice] : list) {
      int64_t size = slice.getStaticSizes()[axis];
      if (size != std::min(c, length - offset))
        return std::nullopt;
    }
    return std::make_pair(c, static_cast<int64_t>(sorted.size()));
  };
  // A tensor assembled from what windows compute (a second layer reading
  // the first's output) is cut by a later loop: the first one is rolled
  // first. Only chunk-like cuts count: a rotary embedding's two halves
  // joined again are no layer.
  llvm::DenseSet<Operation *> candidates;
  for (auto &[key, list] : cuts)
    if (chunking(key.first, key.second, list))
      for (auto [offset, slice] : list)
        candidates.insert(slice);
  SmallVector<std::pair<Value, int64_t>> later;
  for (auto &[key, list] : cuts) {
    Operation *def = key.first.getDefiningOp();
    if (!def)
      continue;
    SetVector<Operation *> slice;
    BackwardSliceOptions options;
    options.omitBlockArguments = true;
    (void)getBackwardSlice(def, &slice, options);
    slice.insert(def);
    // Chunk outputs are joined by a concat of three or more pieces or by
    // inserts; a concat of two halves (a rotary embedding) is no assembly.
    bool assembled = llvm::any_of(slice, [](Operation *op) {
      auto concat = dyn_cast<tensor::ConcatOp>(op);
      return isa<tensor::InsertSliceOp>(op) ||
             (concat && concat.getInputs().size() >= 3);
    });
    if (assembled && llvm::any_of(slice, [&](Operation *op) {
          return candidates.count(op);
        }))
      later.push_back(key);
  }
  // Windows whose data meets a later loop's before it is assembled (the
  // later layer's own keys, whose state its outputs read) are that loop's.
  if (!later.empty()) {
    llvm::DenseSet<Operation *> stops;
    for (const auto &key : later)
      stops.insert(key.first.getDefiningOp());
    ForwardSliceOptions options;
    options.filter = [&](Operation *op) { return !stops.contains(op); };
    SetVector<Operation *> laterOps;
    for (const auto &key : later)
      for (auto [offset, slice] : cuts.lookup(key))
        getForwardSlice(slice.getOperation(), &laterOps);
    for (auto &[key, list] : cuts) {
      if (llvm::is_contained(later, key))
        continue;
      SetVector<Operation *> reach;
      for (auto [offset, slice] : list)
        getForwardSlice(slice.getOperation(), &reach, options);
      if (llvm::any_of(reach,
                       [&](Operation *op) { return laterOps.contains(op); }))
        later.push_back(key);
    }
  }
  for (const auto &key : later)
    cuts.erase(key);
  llvm::MapVector<int64_t, unsigned> votes;
  for (auto &[key, list] : cuts)
    if (auto found = chunking(key.first, key.second, list))
      ++votes[found->first];
  if (votes.empty())
    return why = "no tensor is cut into three or more consecutive windows",
           failure();
  chunk = llvm::max_element(votes, [](const auto &a, const auto &b) {
            return a.second < b.second;
          })->first;
  for (auto &[key, list] : cuts) {
    auto found = chunking(key.first, key.second, list, chunk);
    if (!found || found->first != chunk)
      continue;
    // Every window of a sequence reads the same other dimensions.
    Cuts shared = otherCuts.lookup(list.front().second);
    if (llvm::any_of(list, [&](auto &entry) {
          return otherCuts.lookup(entry.second) != shared;
        }))
      continue;
    numChunks = std::max(numChunks, found->second);
    for (auto [offset, slice] : list) {
      windowChunk[slice] = offset / chunk;
      windowKey.try_emplace(slice, WindowKey{key.first, key.second, shared});
    }
  }
  return success();
}

LogicalResult Reroll::assignSteps(std::string &why) {
  steps.resize(numChunks);
  Block &body = func.getBody().front();
  // A concat of one value per chunk along the window axis assembles
  // outputs; it belongs to no step.
  for (Operation &op : body)
    if (auto concat = dyn_cast<tensor::ConcatOp>(&op))
      if (static_cast<int64_t>(concat.getInputs().size()) == numChunks)
        assemblies.push_back(
            {concat, {}, static_cast<int64_t>(concat.getDim())});
  // A chain of inserts at 0, C, 2C, ... into one buffer does the same.
  for (Operation &op : body) {
    auto insert = dyn_cast<tensor::InsertSliceOp>(&op);
    auto cut = insert ? insertCut(insert) : std::nullopt;
    if (!cut || cut->second != 0 ||
        insert.getDest().getDefiningOp<tensor::InsertSliceOp>())
      continue;
    Assembly chain{{}, {insert}, cut->first};
    while (static_cast<int64_t>(chain.inserts.size()) < numChunks) {
      Value last = chain.inserts.back().getResult();
      if (!last.hasOneUse())
        break;
      auto next = dyn_cast<tensor::InsertSliceOp>(*last.getUsers().begin());
      auto nextCut = next ? insertCut(next) : std::nullopt;
      if (!next || next.getDest() != last || !nextCut ||
          nextCut->first != cut->first ||
          nextCut->second != static_cast<int64_t>(chain.inserts.size()) * chunk)
        break;
      chain.inserts.push_back(next);
    }
    if (static_cast<int64_t>(chain.inserts.size()) == numChunks)
      assemblies.push_back(std::move(chain));
  }
  for (Operation &op : body) {
    if (auto it = windowChunk.find(&op); it != windowChunk.end()) {
      stepOf[&op] = it->second;
      continue;
    }
    if (op.hasTrait<OpTrait::IsTerminator>() || isAssembly(&op))
      continue;
    int64_t step = -1;
    op.walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (auto it = stepOf.find(def); it != stepOf.end())
            step = std::max(step, it->second);
    });
    if (step < 0)
      continue;
    stepOf[&op] = step;
    if (!windowChunk.count(&op))
      steps[step].push_back(&op);
  }
  // An assembly of another loop's pieces (a later layer's outputs) is not
  // this loop's.
  llvm::erase_if(assemblies, [&](Assembly &assembly) {
    Operation *def = assembly.piece(1).getDefiningOp();
    return !def || !stepOf.count(def);
  });
  sinkStateViews();
  // A step reads only its own values, the step before's, windows and
  // values no step computes.
  for (auto [index, ops] : llvm::enumerate(steps))
    for (Operation *op : ops)
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        auto it = def ? stepOf.find(def) : stepOf.end();
        if (it == stepOf.end() || windowChunk.count(def))
          continue;
        if (it->second != static_cast<int64_t>(index) &&
            it->second + 1 != static_cast<int64_t>(index))
          return why = "step " + std::to_string(index) +
                       " reads a value of step " + std::to_string(it->second) +
                       ", not only its own and the step before's",
                 failure();
      }
  return success();
}

/// A reshape or transpose of a step's value that only the next step reads
/// (`collapse(W_i)`, made after W_i for the next chunk's product) belongs
/// to that step: the state it carries is W_i, in every step alike.
void Reroll::sinkStateViews() {
  for (int64_t i = 0; i + 1 < numChunks; ++i) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation *op : llvm::reverse(steps[i])) {
        if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                 linalg::TransposeOp>(op) ||
            op->use_empty())
          continue;
        bool onlyNext = llvm::all_of(op->getUsers(), [&](Operation *user) {
          auto it = stepOf.find(user);
          return it != stepOf.end() && it->second == i + 1;
        });
        Operation *source = op->getOperand(0).getDefiningOp();
        auto it = source ? stepOf.find(source) : stepOf.end();
        if (!onlyNext || it == stepOf.end() || it->second != i ||
            windowChunk.count(source))
          continue;
        llvm::erase(steps[i], op);
        stepOf[op] = i + 1;
        steps[i + 1].push_back(op);
        llvm::sort(steps[i + 1], [](Operation *a, Operation *b) {
          return a->isBeforeInBlock(b);
        });
        changed = true;
        break;
      }
    }
  }
}

/// Removes the terms of `poly` with a factor whose leaf `isZero`.
static void dropTermsOf(linalg_raise::Polynomial &poly,
                        llvm::function_ref<bool(Value)> isZero) {
  llvm::erase_if(poly.terms, [&](const linalg_raise::Term &term) {
    return llvm::any_of(term.factors, [&](const linalg_raise::Factor &f) {
      return isZero(f.leaf);
    });
  });
}

/// Two steps' ops are compared without their locations and without
/// discardable attributes, which front ends use to tie ops to their source
/// (the ONNX front end's `ttt.onnx_op`) and which do not change what an op
/// computes.
static constexpr OperationEquivalence::Flags kStepEquivalence =
    OperationEquivalence::IgnoreLocations |
    OperationEquivalence::IgnoreDiscardableAttrs;

bool Reroll::sameInvariant(Value a, Value b, unsigned depth) {
  if (a == b)
    return true;
  Operation *opA = a.getDefiningOp(), *opB = b.getDefiningOp();
  if (!opA || !opB || depth > 8 || stepOf.count(opA) || stepOf.count(opB) ||
      cast<OpResult>(a).getResultNumber() !=
          cast<OpResult>(b).getResultNumber())
    return false;
  // Region arguments and results (a fill's payload) pair up as it walks.
  IRMapping inner;
  return OperationEquivalence::isEquivalentTo(
      opA, opB,
      [&](Value x, Value y) {
        return success(inner.lookupOrNull(x) == y ||
                       sameInvariant(x, y, depth + 1));
      },
      [&](Value x, Value y) { inner.map(x, y); }, kStepEquivalence);
}

bool Reroll::sameInStep(Value x, Value y, int64_t i,
                        ArrayRef<Value> stateInStep,
                        llvm::DenseMap<std::pair<Value, Value>, bool> &memo,
                        unsigned depth) {
  if (x == y)
    return true;
  if (auto state = llvm::find(stateIn, x); state != stateIn.end()) {
    Value in = stateInStep[state - stateIn.begin()];
    // Initial states read from constants: any constant of their elements,
    // or any copy of the same computation.
    return in && sameValue(in, y);
  }
  Operation *dx = x.getDefiningOp(), *dy = y.getDefiningOp();
  if (!dx || !dy || depth > 16 || x.getType() != y.getType())
    return false;
  if (windowChunk.count(dx) || windowChunk.count(dy))
    return windowChunk.count(dx) && windowChunk.count(dy) &&
           windowKey.find(dx)->second == windowKey.find(dy)->second &&
           windowChunk[dx] == 1 && windowChunk[dy] == i;
  auto stepX = stepOf.find(dx), stepY = stepOf.find(dy);
  bool inX = stepX != stepOf.end(), inY = stepY != stepOf.end();
  if (!inX && !inY)
    return sameInvariant(x, y);
  // Step 0 reads a view of an initial weight that no step computes where
  // the template views its state: the same op of equal operands.
  if (i == 0 && inX && !inY && stepX->second == 1 &&
      cast<OpResult>(x).getResultNumber() ==
          cast<OpResult>(y).getResultNumber()) {
    IRMapping inner;
    return OperationEquivalence::isEquivalentTo(
        dx, dy,
        [&](Value a, Value b) {
          return success(inner.lookupOrNull(a) == b ||
                         sameInStep(a, b, i, stateInStep, memo, depth + 1));
        },
        [&](Value a, Value b) { inner.map(a, b); }, kStepEquivalence);
  }
  if (!inX || !inY || stepX->second != 1 || stepY->second != i)
    return false;
  auto [it, inserted] = memo.try_emplace({x, y}, false);
  if (!inserted)
    return it->second;
  auto same = [&](Value a, Value b) {
    return sameInStep(a, b, i, stateInStep, memo, depth + 1);
  };
  // As sums of products, whatever ops spell them.
  linalg_raise::EinsumReader readX(
      llvm::DenseSet<Value>(stateIn.begin(), stateIn.end()));
  llvm::DenseSet<Value> leavesY(stateInStep.begin(), stateInStep.end());
  if (i == 0)
    leavesY.insert(initialCopies.begin(), initialCopies.end());
  linalg_raise::EinsumReader readY(std::move(leavesY));
  std::optional<linalg_raise::Polynomial> px = readX.read(x),
                                          py = readY.read(y);
  auto isItself = [](const std::optional<linalg_raise::Polynomial> &poly,
                     Value value) {
    return poly && poly->terms.size() == 1 &&
           poly->terms[0].factors.size() == 1 && poly->terms[0].coeff == 1.0 &&
           poly->terms[0].factors[0].leaf == value;
  };
  // In step 0 a state read from a zero constant adds nothing, and exporters
  // fold such terms away (`x W + b` with b = 0 is `x W`).
  if (i == 0 && px && py) {
    auto zeroState = [&](Value leaf) {
      auto state = llvm::find(stateIn, leaf);
      if (state == stateIn.end())
        return false;
      Value in = stateInStep[state - stateIn.begin()];
      return in && linalg_raise::isZeroTensor(in);
    };
    dropTermsOf(*px, zeroState);
    dropTermsOf(*py, linalg_raise::isZeroTensor);
  }
  bool equal = false;
  if (px && py && !isItself(px, x) && !isItself(py, y)) {
    equal = linalg_raise::equivalent(*px, *py, same);
  } else if (cast<OpResult>(x).getResultNumber() ==
             cast<OpResult>(y).getResultNumber()) {
    // An op no sum of products reads (a division, an exponential): the
    // same op of equal operands.
    IRMapping inner;
    equal = OperationEquivalence::isEquivalentTo(
        dx, dy,
        [&](Value a, Value b) {
          return success(inner.lookupOrNull(a) == b || same(a, b));
        },
        [&](Value a, Value b) { inner.map(a, b); }, kStepEquivalence);
  }
  memo[{x, y}] = equal;
  return equal;
}

bool Reroll::matchAsPolynomials(int64_t i, bool &outputsOnly) {
  // Whether step i is the template from the states `stateOut` names: its
  // outputs and next states the template's, as sums of products.
  auto verify = [&]() {
    SmallVector<Value> stateInStep;
    for (Value value : stateOut) {
      Value in = i == 2 ? value : copies[i - 1].lookupOrNull(value);
      if (!in)
        return false;
      stateInStep.push_back(in);
    }
    llvm::DenseMap<std::pair<Value, Value>, bool> memo;
    IRMapping &copy = copies[i];
    copy.clear();
    for (Assembly &assembly : assemblies) {
      Value x = assembly.piece(1), y = assembly.piece(i);
      if (!sameInStep(x, y, i, stateInStep, memo, 0))
        return false;
      copy.map(x, y);
    }
    unsigned found = 0;
    for (Value next : stateOut) {
      for (Operation *op : steps[i]) {
        for (Value result : op->getResults())
          if (result.getType() == next.getType() &&
              sameInStep(next, result, i, stateInStep, memo, 0)) {
            copy.map(next, result);
            ++found;
            break;
          }
        if (copy.contains(next))
          break;
      }
    }
    // A last step whose update nothing reads may lack it.
    outputsOnly = found == 0 && i + 1 == numChunks && !assemblies.empty();
    return found == stateOut.size() || outputsOnly;
  };
  if (i != 2)
    return verify();
  // The state step 2 reads: values of the template. Those the op-by-op
  // comparison paired before it stopped stand; each other state takes one of
  // the template's values step 2 reads, of its type and computed in the
  // template from that state itself (not through another state), every
  // choice tried until one is proven.
  SmallVector<Value> read;
  for (Operation *op : steps[2])
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        Operation *def = operand.getDefiningOp();
        auto it = def ? stepOf.find(def) : stepOf.end();
        if (it != stepOf.end() && it->second == 1 && !windowChunk.count(def) &&
            !llvm::is_contained(read, operand) &&
            !llvm::is_contained(stateOut, operand))
          read.push_back(operand);
      }
    });
  auto readsInTemplate = [&](Value value, Value state) {
    SmallVector<Value> stack{value};
    llvm::DenseSet<Value> seen;
    while (!stack.empty()) {
      Value next = stack.pop_back_val();
      if (next == state)
        return true;
      Operation *def = next.getDefiningOp();
      auto it = def ? stepOf.find(def) : stepOf.end();
      if (!seen.insert(next).second || it == stepOf.end() || it->second != 1)
        continue;
      llvm::append_range(stack, linalg_raise::readValues(def));
    }
    return false;
  };
  SmallVector<unsigned> open;
  SmallVector<SmallVector<Value>> candidates(stateIn.size());
  for (auto [j, state] : llvm::enumerate(stateIn)) {
    if (stateOut[j])
      continue;
    for (Value value : read)
      if (value.getType() == state.getType() && readsInTemplate(value, state))
        candidates[j].push_back(value);
    if (candidates[j].empty())
      return false;
    open.push_back(j);
  }
  llvm::stable_sort(open, [&](unsigned a, unsigned b) {
    return candidates[a].size() < candidates[b].size();
  });
  // Depth-first over the choices, each value taken once.
  constexpr unsigned kMaxTries = 64;
  unsigned tries = 0;
  llvm::DenseSet<Value> taken;
  std::function<bool(unsigned)> choose = [&](unsigned at) {
    if (at == open.size())
      return ++tries <= kMaxTries && verify();
    unsigned j = open[at];
    for (Value value : candidates[j]) {
      if (tries > kMaxTries)
        return false;
      if (!taken.insert(value).second)
        continue;
      stateOut[j] = value;
      if (choose(at + 1))
        return true;
      taken.erase(value);
      stateOut[j] = Value();
    }
    return false;
  };
  return choose(0);
}

bool Reroll::isShorterInstance(Type full, Type shorter) const {
  auto a = dyn_cast<RankedTensorType>(full);
  auto b = dyn_cast<RankedTensorType>(shorter);
  if (!a || !b)
    return full == shorter;
  if (a.getRank() != b.getRank() || a.getElementType() != b.getElementType() ||
      a.getEncoding() != b.getEncoding())
    return false;
  for (auto [x, y] : llvm::zip_equal(a.getShape(), b.getShape()))
    if (x != y && !(x == chunk && y == lastLength))
      return false;
  return true;
}

bool Reroll::sameFreshOnShorterChunk(Value x, Value y) {
  if (!isShorterInstance(x.getType(), y.getType()))
    return false;
  auto fx = x.getDefiningOp<linalg::FillOp>();
  auto fy = y.getDefiningOp<linalg::FillOp>();
  if (bool(fx) != bool(fy) ||
      (fx && !sameInvariant(fx.getInputs()[0], fy.getInputs()[0])))
    return false;
  tensor::EmptyOp ex = linalg_raise::freshEmpty(x);
  tensor::EmptyOp ey = linalg_raise::freshEmpty(y);
  if (!ex || !ey || ex.getDynamicSizes().size() != ey.getDynamicSizes().size())
    return false;
  for (auto [a, b] :
       llvm::zip_equal(ex.getDynamicSizes(), ey.getDynamicSizes()))
    if (!sameInvariant(a, b))
      return false;
  return true;
}

bool Reroll::sameOnShorterChunk(
    Operation *a, Operation *b,
    function_ref<LogicalResult(Value, Value)> equivalent) {
  if (a->getName() != b->getName() ||
      a->getNumOperands() != b->getNumOperands() ||
      a->getNumResults() != b->getNumResults() ||
      a->getNumRegions() != b->getNumRegions())
    return false;
  // An expansion's output shape is its result type, compared below; any
  // other property (a slice's sizes) must be the same.
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(a)) {
    if (expand.getReassociationIndices() !=
        cast<tensor::ExpandShapeOp>(b).getReassociationIndices())
      return false;
  } else if (a->getPropertiesAsAttribute() != b->getPropertiesAsAttribute()) {
    return false;
  }
  for (auto [x, y] : llvm::zip_equal(a->getResultTypes(), b->getResultTypes()))
    if (!isShorterInstance(x, y))
      return false;
  for (auto [x, y] : llvm::zip_equal(a->getOperands(), b->getOperands()))
    if (failed(equivalent(x, y)))
      return false;
  for (auto [x, y] : llvm::zip_equal(a->getRegions(), b->getRegions()))
    if (!OperationEquivalence::isRegionEquivalentTo(
            &x, &y, OperationEquivalence::IgnoreLocations))
      return false;
  return true;
}

LogicalResult Reroll::matchSteps(std::string &why) {
  if (numChunks < 3)
    return why = "fewer than three chunks", failure();
  ArrayRef<Operation *> base = steps[1];
  auto chunkOf = [&](Value value) -> int64_t {
    Operation *def = value.getDefiningOp();
    auto it = def ? stepOf.find(def) : stepOf.end();
    return it == stepOf.end() ? -1 : it->second;
  };
  // The template's state: what step 1 reads from step 0, in order.
  for (Operation *op : base)
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (chunkOf(operand) == 0 &&
            !windowChunk.count(operand.getDefiningOp()) &&
            !llvm::is_contained(stateIn, operand))
          stateIn.push_back(operand);
    });
  if (stateIn.empty())
    return why = "the steps carry no state", failure();
  stateOut.assign(stateIn.size(), Value());
  copies.resize(numChunks);
  for (Operation *op : base)
    for (Value result : op->getResults())
      copies[1].map(result, result);
  lastStep = 1;
  // The template's ops its outputs need: all a last step computes when
  // nothing reads the state it would leave (LaCT's last update is dead).
  llvm::SetVector<Operation *> forOutputs;
  {
    SmallVector<Value> worklist;
    for (Assembly &assembly : assemblies)
      worklist.push_back(assembly.piece(1));
    while (!worklist.empty()) {
      Operation *def = worklist.pop_back_val().getDefiningOp();
      if (!def || !llvm::is_contained(base, def) || !forOutputs.insert(def))
        continue;
      def->walk([&](Operation *inner) {
        llvm::append_range(worklist, inner->getOperands());
      });
    }
  }
  SmallVector<Operation *> outputsOnly;
  for (Operation *op : base)
    if (forOutputs.contains(op))
      outputsOnly.push_back(op);
  // Where the third step first differs from the second, for the remark.
  std::string difference;
  // A last chunk shorter than the others.
  for (auto [op, index] : windowChunk)
    if (index == numChunks - 1) {
      auto slice = cast<tensor::ExtractSliceOp>(op);
      int64_t size = slice.getStaticSizes()[windowKey.find(op)->second.axis];
      if (size < chunk)
        lastLength = size;
    }
  for (int64_t i = 2; i < numChunks; ++i) {
    ArrayRef<Operation *> ops = steps[i];
    ArrayRef<Operation *> pattern = base;
    bool same = true;
    bool shorter = lastLength && i + 1 == numChunks;
    if (ops.size() != base.size()) {
      if (i + 1 != numChunks || ops.size() != outputsOnly.size() ||
          assemblies.empty()) {
        difference = std::to_string(base.size()) + " and " +
                     std::to_string(ops.size()) + " ops";
        same = false;
      }
      pattern = outputsOnly;
    }
    IRMapping &copy = copies[i];
    for (auto [a, b] : llvm::zip_equal(same ? pattern : ArrayRef<Operation *>(),
                                       same ? ops : ArrayRef<Operation *>())) {
      auto equivalent = [&](Value x, Value y) -> LogicalResult {
        if (copy.lookupOrNull(x) == y)
          return success();
        Operation *dx = x.getDefiningOp(), *dy = y.getDefiningOp();
        // Windows of the same tensor along the same axis, one chunk on.
        if (dx && dy && windowChunk.count(dx) && windowChunk.count(dy))
          return success(
              windowKey.find(dx)->second == windowKey.find(dy)->second &&
              windowChunk[dx] == 1 && windowChunk[dy] == i &&
              (x.getType() == y.getType() ||
               (shorter && isShorterInstance(x.getType(), y.getType()))));
        // The state: step i reads what step i-1 yields where the template
        // does (the value step 2 reads is the template's next state).
        auto state = llvm::find(stateIn, x);
        if (state != stateIn.end()) {
          size_t j = state - stateIn.begin();
          if (i == 2 && chunkOf(y) == 1) {
            if (!stateOut[j])
              stateOut[j] = y;
            return success(stateOut[j] == y);
          }
          return success(stateOut[j] &&
                         copies[i - 1].lookupOrNull(stateOut[j]) == y);
        }
        if (chunkOf(x) < 0 && chunkOf(y) < 0)
          return success(sameInvariant(x, y) ||
                         (shorter && sameFreshOnShorterChunk(x, y)));
        return failure();
      };
      // Payload arguments and results pair up as the comparison walks.
      auto mark = [&](Value x, Value y) { copy.map(x, y); };
      auto compare = [&](Operation *x, Operation *y) {
        return shorter ? sameOnShorterChunk(x, y, equivalent)
                       : OperationEquivalence::isEquivalentTo(
                             x, y, equivalent, mark, kStepEquivalence);
      };
      SmallVector<Value> stateBefore(stateOut);
      bool equal = compare(a, b);
      // `a + b` in one step and `b + a` in the next are the same step.
      if (!equal && linalg_raise::isCommutativePair(a) &&
          linalg_raise::isCommutativePair(b)) {
        stateOut = stateBefore;
        linalg_raise::swapCommutativeInputs(b);
        equal = compare(a, b);
        if (!equal) {
          stateOut = stateBefore;
          linalg_raise::swapCommutativeInputs(b);
        }
      }
      if (!equal) {
        // Only ops that matched whole pair states.
        stateOut = stateBefore;
        same = false;
        llvm::raw_string_ostream os(difference);
        os << "at '" << a->getName() << "' and '" << b->getName() << "' ("
           << b->getLoc() << ")";
        break;
      }
      for (auto [x, y] : llvm::zip_equal(a->getResults(), b->getResults()))
        copy.map(x, y);
    }
    bool stepOutputsOnly = pattern.size() != base.size();
    if (!same && !shorter && matchAsPolynomials(i, stepOutputsOnly)) {
      same = true;
      difference.clear();
    }
    if (!same)
      break;
    lastStep = i;
    lastStepOutputsOnly = stepOutputsOnly;
  }
  if (lastStep < 2)
    return why = "its second and third steps differ" +
                 (difference.empty() ? std::string() : ": " + difference),
           failure();
  if (llvm::any_of(stateOut, [](Value v) { return !v; }))
    return why = "a value the second step reads from the first is not "
                 "carried on by the later steps",
           failure();
  return success();
}

LogicalResult Reroll::analyze(std::string &why) {
  if (failed(findWindows(why)) || failed(assignSteps(why)) ||
      failed(matchSteps(why)))
    return failure();
  for (Operation *op : steps[1])
    if (std::string reason = ChunkLoopOp::whyNotCanonical(op); !reason.empty())
      return why = "'" + op->getName().getStringRef().str() +
                   "' in a step is not in ttt.chunk_loop's op set (" + reason +
                   ")",
             failure();
  return success();
}

/// Step 0 often is the general step with its state folded in (a zero
/// momentum dropped, an initial weight read through a broadcast): read as
/// polynomials, each of its state values is the template's next state and
/// each of its outputs the template's output, with the template's state
/// replaced by the window-free part of what step 0 yields and its windows
/// by chunk 0's.
bool Reroll::firstStepIsTemplate() {
  auto isWindow = [&](Value value) {
    Operation *def = value.getDefiningOp();
    return def && windowChunk.count(def);
  };
  auto sameLeaf = [&](Value x, Value y) {
    if (x == y)
      return true;
    Operation *dx = x.getDefiningOp(), *dy = y.getDefiningOp();
    return dx && dy && windowChunk.count(dx) && windowChunk.count(dy) &&
           windowKey.find(dx)->second == windowKey.find(dy)->second &&
           x.getType() == y.getType();
  };
  auto readsStep = [&](const linalg_raise::Term &term, int64_t step) {
    return llvm::any_of(term.factors, [&](const linalg_raise::Factor &f) {
      Operation *def = f.leaf.getDefiningOp();
      auto it = def ? stepOf.find(def) : stepOf.end();
      return it != stepOf.end() && it->second == step;
    });
  };
  linalg_raise::EinsumReader reader(
      llvm::DenseSet<Value>(stateIn.begin(), stateIn.end()));
  linalg_raise::EinsumReader full;
  SmallVector<linalg_raise::Polynomial> init;
  SmallVector<linalg_raise::Polynomial> firstState;
  for (Value value : stateIn) {
    std::optional<linalg_raise::Polynomial> poly = full.read(value);
    if (!poly)
      return false;
    linalg_raise::Polynomial x;
    x.labels = poly->labels;
    for (const linalg_raise::Term &term : poly->terms) {
      if (llvm::any_of(term.factors, [&](const linalg_raise::Factor &f) {
            return isWindow(f.leaf);
          }))
        continue;
      if (readsStep(term, 0))
        return false; // a window-free term of what step 0 computes otherwise
      x.terms.push_back(term);
    }
    init.push_back(std::move(x));
    firstState.push_back(std::move(*poly));
  }
  // The template from those states, against step 0.
  auto fromInit = [&](Value value) -> std::optional<linalg_raise::Polynomial> {
    std::optional<linalg_raise::Polynomial> poly = reader.read(value);
    for (auto [state, x] : llvm::zip_equal(stateIn, init)) {
      if (!poly)
        return std::nullopt;
      poly = reader.substitute(*poly, state, x);
    }
    return poly;
  };
  for (auto [next, first] : llvm::zip_equal(stateOut, firstState)) {
    std::optional<linalg_raise::Polynomial> general = fromInit(next);
    if (!general || !linalg_raise::equivalent(first, *general, sameLeaf))
      return false;
  }
  for (Assembly &assembly : assemblies) {
    std::optional<linalg_raise::Polynomial> first =
        full.read(assembly.piece(0));
    std::optional<linalg_raise::Polynomial> general =
        fromInit(assembly.piece(1));
    if (!first || !general ||
        !linalg_raise::equivalent(*first, *general, sameLeaf))
      return false;
  }
  for (const linalg_raise::Polynomial &poly : init)
    for (const linalg_raise::Term &term : poly.terms)
      for (const linalg_raise::Factor &factor : term.factors)
        for (unsigned label : factor.labels)
          if (full.isUnit(label))
            initialUnits.insert(label);
  initial = std::move(init);
  return true;
}

bool Reroll::firstStepReadsInitialStates(SmallVector<Value> &inits) {
  // Candidates for the value step 0 reads in place of each state: where a
  // template op reads the state, a step-0 op that is the same op of the
  // same other operands reads it at the same place. (`x W0` and `x W2`
  // look alike: a state may have several, tried in turn below.)
  constexpr size_t kMaxAssignments = 64;
  SmallVector<SmallVector<Value>> candidates(stateIn.size());
  SmallVector<Value> none(stateIn.size());
  // Step 0's ops, and those no step computes (a view of an initial
  // weight, made once for step 0's product).
  SmallVector<Operation *> before;
  for (Operation &op : func.getBody().front()) {
    auto it = stepOf.find(&op);
    if ((it == stepOf.end() || it->second == 0) && !windowChunk.count(&op))
      before.push_back(&op);
  }
  llvm::DenseMap<std::pair<Value, Value>, bool> memo;
  for (size_t index = 0; index < stateIn.size(); ++index) {
    Value state = stateIn[index];
    // First where the other operands are the same; failing that, where the
    // op is the same whatever they are (they may read states not chosen
    // yet; the proof below checks every choice whole).
    for (bool anyOperands : {false, true}) {
      if (!candidates[index].empty())
        break;
      for (Operation *user : state.getUsers()) {
        auto it = stepOf.find(user);
        if (it == stepOf.end() || it->second != 1)
          continue;
        for (Operation *other : before) {
          if (other->getName() != user->getName())
            continue;
          Value found;
          IRMapping inner;
          bool same = OperationEquivalence::isEquivalentTo(
              user, other,
              [&](Value a, Value b) {
                if (inner.lookupOrNull(a) == b)
                  return success();
                if (a == state) {
                  found = b;
                  return success();
                }
                return success(anyOperands ||
                               sameInStep(a, b, 0, none, memo, 0));
              },
              [&](Value a, Value b) { inner.map(a, b); }, kStepEquivalence);
          Operation *def = found ? found.getDefiningOp() : nullptr;
          if (!same || !found || found.getType() != state.getType() ||
              (def && stepOf.count(def)))
            continue;
          // A copy of a known candidate is no new choice, but step 0's sums
          // read it as the state all the same.
          if (llvm::any_of(candidates[index], [&](Value known) {
                return sameValue(known, found);
              })) {
            if (!llvm::is_contained(candidates[index], found))
              initialCopies.insert(found);
            continue;
          }
          candidates[index].push_back(found);
        }
      }
    }
    if (candidates[index].empty())
      return false;
  }
  size_t assignments = 1;
  for (const SmallVector<Value> &options : candidates)
    if ((assignments *= options.size()) > kMaxAssignments)
      return false;
  // Step 0, whole, must be the template from one choice of them.
  for (size_t n = 0; n < assignments; ++n) {
    SmallVector<Value> chosen;
    size_t rest = n;
    for (const SmallVector<Value> &options : candidates) {
      chosen.push_back(options[rest % options.size()]);
      rest /= options.size();
    }
    memo.clear();
    bool same = llvm::all_of(assemblies, [&](Assembly &assembly) {
      return sameInStep(assembly.piece(1), assembly.piece(0), 0, chosen, memo,
                        0);
    });
    // What step 0 yields is what step 1 reads as its state.
    for (auto [next, read] : llvm::zip_equal(stateOut, stateIn))
      same = same && sameInStep(next, read, 0, chosen, memo, 0);
    if (same) {
      inits = chosen;
      return true;
    }
  }
  return false;
}

/// A tensor of `type` holding `poly`, when each of its terms is a constant
/// times one leaf (broadcast and transposed as its labels say): one
/// linalg.generic per term, each adding to the last.
Value Reroll::materialize(OpBuilder &b, Location loc,
                          const linalg_raise::Polynomial &poly,
                          RankedTensorType type) {
  // The state itself, as step 0 read it.
  if (poly.terms.size() == 1 && poly.terms[0].coeff == 1.0 &&
      poly.terms[0].factors.size() == 1 &&
      poly.terms[0].factors[0].leaf.getType() == type &&
      ArrayRef<unsigned>(poly.terms[0].factors[0].labels) ==
          ArrayRef<unsigned>(poly.labels))
    return poly.terms[0].factors[0].leaf;
  // Sizes known only at run time would have to come from the leaves.
  if (!type.hasStaticShape())
    return {};
  // A constant part (a splat initial weight) fills the tensor.
  double constant = 0.0;
  for (const linalg_raise::Term &term : poly.terms)
    if (term.factors.empty())
      constant += term.coeff;
  Value acc =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value fill = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), constant));
  acc = linalg::FillOp::create(b, loc, fill, acc).getResult(0);
  MLIRContext *context = b.getContext();
  unsigned rank = type.getRank();
  for (const linalg_raise::Term &term : poly.terms) {
    if (term.factors.empty())
      continue;
    if (term.factors.size() != 1)
      return {};
    const linalg_raise::Factor &factor = term.factors[0];
    SmallVector<AffineExpr> exprs;
    for (unsigned label : factor.labels) {
      auto it = llvm::find(poly.labels, label);
      if (it == poly.labels.end() && initialUnits.contains(label)) {
        exprs.push_back(getAffineConstantExpr(0, context));
        continue;
      }
      if (it == poly.labels.end())
        return {}; // a sum inside the term
      exprs.push_back(getAffineDimExpr(it - poly.labels.begin(), context));
    }
    if (factor.leaf.getType() != type &&
        !isa<RankedTensorType>(factor.leaf.getType()))
      return {};
    acc = linalg_raise::scaledInto(b, loc, factor.leaf,
                                   AffineMap::get(rank, 0, exprs, context), acc,
                                   term.coeff, /*accumulate=*/true);
  }
  return acc;
}

LogicalResult Reroll::rewrite(std::string &why) {
  ArrayRef<Operation *> base = steps[1];
  OpBuilder b(func.getContext());
  // The loop goes before the first op that will read it: an assembly, or a
  // reader of the last step's state that is not one of the steps it
  // replaces.
  llvm::DenseSet<Value> lastStateSet;
  for (Value value : stateOut)
    lastStateSet.insert(copies[lastStep].lookupOrNull(value));
  Operation *anchor = func.getBody().front().getTerminator();
  for (Operation &op : func.getBody().front()) {
    auto it = stepOf.find(&op);
    bool replaced =
        it != stepOf.end() && it->second >= 1 && it->second <= lastStep;
    // An insert chain is read where it writes the last chunk the loop
    // makes; a concat where it is.
    bool reads = llvm::any_of(assemblies, [&](Assembly &a) {
      return a.concat ? a.concat.getOperation() == &op
                      : a.inserts[lastStep].getOperation() == &op;
    });
    op.walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        reads |= !replaced && lastStateSet.contains(operand);
    });
    if (reads) {
      anchor = &op;
      break;
    }
  }
  b.setInsertionPoint(anchor);
  Location loc = func.getLoc();
  // The loop starts at chunk 0 when step 0 is the template run from states
  // it can make here; otherwise step 0 stays, and the loop starts at 1.
  SmallVector<Value> inits(stateIn);
  if (firstStepIsTemplate()) {
    startsAtZero = true;
    for (auto [index, poly] : llvm::enumerate(*initial)) {
      Value made = materialize(
          b, loc, poly, cast<RankedTensorType>(stateIn[index].getType()));
      if (!made) {
        startsAtZero = false;
        inits.assign(stateIn.begin(), stateIn.end());
        break;
      }
      inits[index] = made;
    }
  }
  if (!startsAtZero) {
    SmallVector<Value> read;
    if (firstStepReadsInitialStates(read)) {
      startsAtZero = true;
      inits = read;
    }
  }
  int64_t first = startsAtZero ? 0 : 1;
  int64_t covered = (lastStep + 1 - first) * chunk;
  if (shortLastMatched())
    covered -= chunk - lastLength;

  // Windows of the template, each a sequence cut to chunks 1 .. last.
  SmallVector<Operation *> templateWindows;
  for (auto [op, index] : windowChunk)
    if (index == 1)
      templateWindows.push_back(op);
  llvm::DenseSet<Value> inTemplate;
  for (Operation *op : base)
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        inTemplate.insert(operand);
    });
  llvm::erase_if(templateWindows, [&](Operation *op) {
    return !inTemplate.contains(op->getResult(0));
  });
  SmallVector<Value> sequences;
  SmallVector<int64_t> axes;
  for (Operation *op : templateWindows) {
    WindowKey key = windowKey.find(op)->second;
    auto type = cast<RankedTensorType>(key.source.getType());
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes(rank),
        strides(rank, b.getIndexAttr(1));
    offsets[key.axis] = b.getIndexAttr(first * chunk);
    sizes[key.axis] = b.getIndexAttr(covered);
    for (auto [d, size] : key.cuts)
      sizes[d] = size;
    for (int64_t d = 0; d < rank; ++d)
      if (!sizes[d])
        sizes[d] = tensor::getMixedSize(b, loc, key.source, d);
    sequences.push_back(tensor::ExtractSliceOp::create(
        b, loc, key.source, offsets, sizes, strides));
    axes.push_back(key.axis);
  }

  // The template's outputs: what the assemblies take from step 1.
  SmallVector<Value> outputs;
  SmallVector<int64_t> outputAxes;
  SmallVector<Type> outputTypes;
  for (Assembly &assembly : assemblies) {
    Value piece = assembly.piece(1);
    if (!llvm::is_contained(base, piece.getDefiningOp()))
      return why = "the chunk outputs' assembly takes its second piece from "
                   "elsewhere",
             failure();
    for (int64_t i = 2; i <= lastStep; ++i)
      if (copies[i].lookupOrNull(piece) != assembly.piece(i))
        return why = "the chunk outputs' assembly takes pieces that are not "
                     "the steps' copies of one value",
               failure();
    outputs.push_back(piece);
    int64_t axis = assembly.axis;
    outputAxes.push_back(axis);
    auto type = cast<RankedTensorType>(piece.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = covered;
    outputTypes.push_back(type.clone(shape));
  }
  // Every other use of a step's value outside the steps is of the last
  // step's next state.
  SmallVector<Value> lastState;
  for (Value value : stateOut)
    lastState.push_back(copies[lastStep].lookupOrNull(value));

  // Values from outside the steps the template reads: invariants.
  llvm::SetVector<Value> invariants, fresh;
  auto freshOfRuntimeSize = [&](Value value) -> tensor::EmptyOp {
    auto fill = value.getDefiningOp<linalg::FillOp>();
    tensor::EmptyOp empty = linalg_raise::freshEmpty(value);
    if (!shortLastMatched() || !empty || empty.getDynamicSizes().empty() ||
        (fill && !linalg_raise::isRematerializable(fill.getInputs()[0])))
      return {};
    return empty;
  };
  for (Operation *op : base)
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (llvm::is_contained(stateIn, operand) ||
            (def && (stepOf.count(def) || !def->getBlock() ||
                     def->getBlock() != &func.getBody().front())) ||
            (!def && cast<BlockArgument>(operand).getOwner() !=
                         &func.getBody().front()))
          continue;
        if (linalg_raise::isRematerializable(operand))
          continue;
        // A fresh tensor of run-time size is made in the body when the
        // chunk's length changes it: its sizes come in.
        if (tensor::EmptyOp empty = freshOfRuntimeSize(operand)) {
          fresh.insert(operand);
          for (Value size : empty.getDynamicSizes())
            if (!linalg_raise::isRematerializable(size))
              invariants.insert(size);
          continue;
        }
        invariants.insert(operand);
      }
    });

  SmallVector<Type> stateTypes;
  for (Value value : stateIn)
    stateTypes.push_back(value.getType());
  auto loop = ChunkLoopOp::create(
      b, loc, outputTypes, stateTypes, inits, sequences,
      invariants.getArrayRef(), b.getI64IntegerAttr(chunk),
      b.getDenseI64ArrayAttr(axes), b.getDenseI64ArrayAttr(outputAxes));
  SmallVector<Type> argTypes(stateTypes);
  for (auto [op, axis] : llvm::zip_equal(templateWindows, axes)) {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    // Windows of any length when the last one is shorter.
    if (shortLastMatched()) {
      SmallVector<int64_t> shape(type.getShape());
      shape[axis] = ShapedType::kDynamic;
      type = type.clone(shape);
    }
    argTypes.push_back(type);
  }
  for (Value value : invariants)
    argTypes.push_back(value.getType());
  Block *block = b.createBlock(&loop.getBody(), {}, argTypes,
                               SmallVector<Location>(argTypes.size(), loc));
  IRMapping mapping;
  unsigned next = 0;
  for (Value value : stateIn)
    mapping.map(value, block->getArgument(next++));
  for (Operation *op : templateWindows)
    mapping.map(op->getResult(0), block->getArgument(next++));
  for (Value value : invariants)
    mapping.map(value, block->getArgument(next++));
  b.setInsertionPointToStart(block);
  // What the template reads that is made of constants is made in the body.
  for (Operation *op : base)
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (def->getBlock() == &func.getBody().front() &&
              !stepOf.count(def) && linalg_raise::isRematerializable(operand))
            (void)linalg_raise::rematerialize(b, operand, mapping);
    });
  for (Value value : fresh) {
    Operation *fill = value.getDefiningOp<linalg::FillOp>();
    Value empty = fill ? fill->getOperand(1) : value;
    if (!mapping.contains(empty))
      b.clone(*empty.getDefiningOp(), mapping);
    if (fill) {
      (void)linalg_raise::rematerialize(b, fill->getOperand(0), mapping);
      b.clone(*fill, mapping);
    }
  }
  std::string retyping;
  for (Operation *op : base) {
    Operation *copy = b.clone(*op, mapping);
    if (!shortLastMatched() || !retyping.empty())
      continue;
    FailureOr<Operation *> retyped =
        linalg_raise::retypeForAnyChunkLength(b, copy, op, chunk, retyping);
    // A retyped op may have been made again: the mapping follows it.
    if (succeeded(retyped))
      mapping.map(op->getResults(), (*retyped)->getResults());
  }
  SmallVector<Value> chunkOutputs, nextState;
  for (Value value : outputs)
    chunkOutputs.push_back(mapping.lookup(value));
  for (Value value : stateOut)
    nextState.push_back(mapping.lookup(value));
  ChunkYieldOp::create(b, loc, chunkOutputs, nextState);
  // The fresh tensors the retyping made again are left unread.
  if (shortLastMatched())
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*block)))
      if (isOpTriviallyDead(&op))
        op.erase();
  if (shortLastMatched() && retyping.empty())
    for (auto [value, type] : llvm::zip_equal(nextState, stateTypes))
      if (value.getType() != type)
        retyping = "its state would depend on the chunk's length";
  if (std::string problem = retyping.empty()
                                ? linalg_raise::verifyQuietly(loop)
                                : "its last chunk is shorter, and " + retyping;
      !problem.empty()) {
    loop.erase();
    for (Value sequence : llvm::reverse(sequences))
      sequence.getDefiningOp()->erase();
    return why = problem, failure();
  }

  // The last step's state, wherever later ops read it, is the loop's final
  // state; the assemblies take the loop's output for chunks 1 .. last.
  auto readAfterTheSteps = [&](OpOperand &use) {
    return !stepOf.count(use.getOwner()) || stepOf[use.getOwner()] > lastStep;
  };
  // A loop nothing would read replaces no step: the steps stay, and the
  // next round would find them again.
  bool read = !assemblies.empty() || llvm::any_of(lastState, [&](Value value) {
    return value && llvm::any_of(value.getUses(), readAfterTheSteps);
  });
  if (!read) {
    loop.erase();
    for (Value sequence : llvm::reverse(sequences))
      sequence.getDefiningOp()->erase();
    return why = "no op after the steps reads what they compute", failure();
  }
  for (auto [value, final] : llvm::zip_equal(lastState, loop.getFinalStates()))
    if (value) // a last step that computes only outputs leaves no state
      value.replaceUsesWithIf(final, readAfterTheSteps);
  for (auto [assembly, output] :
       llvm::zip_equal(assemblies, loop.getOutputs())) {
    if (tensor::ConcatOp concat = assembly.concat) {
      SmallVector<Value> pieces;
      if (!startsAtZero)
        pieces.push_back(concat.getInputs()[0]);
      pieces.push_back(output);
      for (int64_t i = lastStep + 1; i < numChunks; ++i)
        pieces.push_back(concat.getInputs()[i]);
      b.setInsertionPoint(concat);
      auto joined =
          tensor::ConcatOp::create(b, concat.getLoc(), concat.getDim(), pieces);
      concat.getResult().replaceAllUsesWith(joined.getResult());
      concat.erase();
      continue;
    }
    // One insert of the loop's output where the chunks' inserts were.
    tensor::InsertSliceOp last = assembly.inserts[lastStep];
    Value dest = first == 0 ? assembly.inserts[0].getDest()
                            : assembly.inserts[first - 1].getResult();
    auto destType = cast<RankedTensorType>(dest.getType());
    SmallVector<OpFoldResult> offsets(destType.getRank(), b.getIndexAttr(0)),
        sizes, strides(destType.getRank(), b.getIndexAttr(1));
    for (int64_t size : destType.getShape())
      sizes.push_back(b.getIndexAttr(size));
    offsets[assembly.axis] = b.getIndexAttr(first * chunk);
    sizes[assembly.axis] = b.getIndexAttr(covered);
    b.setInsertionPoint(last);
    // A loop over every chunk writes the whole buffer: its output is it.
    Value written = output;
    if (first != 0 || covered != destType.getDimSize(assembly.axis) ||
        output.getType() != destType)
      written = tensor::InsertSliceOp::create(b, last.getLoc(), output, dest,
                                              offsets, sizes, strides);
    last.getResult().replaceAllUsesWith(written);
    for (int64_t i = lastStep; i >= first; --i)
      assembly.inserts[i].erase();
  }
  // The copies of steps first .. last are dead now.
  for (int64_t i = lastStep; i >= first; --i)
    for (Operation *op : llvm::reverse(steps[i]))
      if (op->use_empty())
        op->erase();
  for (auto [op, index] : windowChunk)
    if (index >= first && index <= lastStep && op->use_empty())
      op->erase();
  return success();
}

/// Loops rolled in one function at most (layers stacked in one model).
constexpr int kMaxLoopsPerFunction = 64;

struct TTTRerollChunksPass
    : ttt::impl::TTTRerollChunksBase<TTTRerollChunksPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      linalg_raise::spellConstantTransposes(func);
      linalg_raise::foldNoOps(func);
      // One loop per round: a layer reading another's output is cut by
      // windows of the first loop's result.
      std::string why;
      bool rolled = false;
      for (int round = 0; round < kMaxLoopsPerFunction; ++round) {
        Reroll reroll(func);
        why.clear();
        if (failed(reroll.analyze(why)) || failed(reroll.rewrite(why)))
          break;
        rolled = true;
      }
      if (rolled)
        return;
      if (explain)
        func.emitRemark() << "ttt-reroll-chunks: no chunk loop rerolled: "
                          << why;
    });
  }
};

} // namespace
