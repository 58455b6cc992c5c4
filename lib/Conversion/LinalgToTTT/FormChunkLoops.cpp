//===- FormChunkLoops.cpp - scf.for over chunks as ttt.chunk_loop ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An scf.for is a chunk recurrence when its windows are proven to tile the
// sequences: every tensor.extract_slice that depends on the counter cuts
// `[n*C, n*C + size)` along one axis in iteration n (its offset affine in
// the counter, whatever arithmetic spells it) for n < ceil(T / C), with
// `size` either `min(C, T - n*C)` or C (then a static T is a multiple of C;
// a run-time T that C does not divide makes the loop read past its
// sequences, an execution with no meaning to keep); every carried
// buffer is written at that window and read by nothing else. The loop's
// other carried values are its state. What the body computes is not read
// here; it only has to be in ttt.chunk_loop's op set and blind to the
// counter.
//
//===----------------------------------------------------------------------===//

#include "ChunkLoopForms.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTFORMCHUNKLOOPS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;

namespace {

/// `counterCoeff * counter + lengthCoeff * length + constant`, where
/// `length` is one loop-invariant index value (a tensor.dim), if any.
struct Linear {
  int64_t counterCoeff = 0, constant = 0;
  Value length;
  int64_t lengthCoeff = 0;

  bool operator==(const Linear &other) const {
    return counterCoeff == other.counterCoeff && constant == other.constant &&
           lengthCoeff == other.lengthCoeff &&
           (lengthCoeff == 0 || length == other.length);
  }
  bool isConstant() const { return counterCoeff == 0 && lengthCoeff == 0; }
};

std::optional<Linear> add(const Linear &a, const Linear &b, int64_t sign) {
  Linear sum;
  if (a.lengthCoeff && b.lengthCoeff && a.length != b.length)
    return std::nullopt;
  std::optional<int64_t> counter =
      llvm::checkedAdd(a.counterCoeff, sign * b.counterCoeff);
  std::optional<int64_t> constant =
      llvm::checkedAdd(a.constant, sign * b.constant);
  if (!counter || !constant)
    return std::nullopt;
  sum.counterCoeff = *counter;
  sum.constant = *constant;
  sum.length = a.lengthCoeff ? a.length : b.length;
  sum.lengthCoeff = a.lengthCoeff + sign * b.lengthCoeff;
  return sum;
}

std::optional<Linear> scale(const Linear &a, int64_t factor) {
  std::optional<int64_t> counter = llvm::checkedMul(a.counterCoeff, factor);
  std::optional<int64_t> constant = llvm::checkedMul(a.constant, factor);
  std::optional<int64_t> length = llvm::checkedMul(a.lengthCoeff, factor);
  if (!counter || !constant || !length)
    return std::nullopt;
  return Linear{*counter, *constant, a.length, *length};
}

/// The static size of `value` if it is a constant or the `tensor.dim` of a
/// static dimension.
std::optional<int64_t> staticIndex(Value value) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  if (auto dim = value.getDefiningOp<tensor::DimOp>()) {
    std::optional<int64_t> index = dim.getConstantIndex();
    auto type = dyn_cast<RankedTensorType>(dim.getSource().getType());
    if (index && type && *index < type.getRank() && !type.isDynamicDim(*index))
      return type.getDimSize(*index);
  }
  return std::nullopt;
}

/// Reads index values as Linear in a loop's counter.
class CounterArithmetic {
public:
  CounterArithmetic(scf::ForOp loop) : loop(loop) {}

  std::optional<Linear> read(Value value) {
    if (value == loop.getInductionVar())
      return Linear{1, 0, {}, 0};
    if (std::optional<int64_t> constant = staticIndex(value))
      return Linear{0, *constant, {}, 0};
    Operation *op = value.getDefiningOp();
    if (!op)
      return std::nullopt;
    // A quotient of constants (a step computed as T / #chunks).
    if (isa<arith::DivUIOp, arith::DivSIOp, arith::CeilDivUIOp>(op)) {
      std::optional<Linear> lhs = read(op->getOperand(0));
      std::optional<Linear> rhs = read(op->getOperand(1));
      if (!lhs || !rhs || !lhs->isConstant() || !rhs->isConstant() ||
          rhs->constant <= 0 || lhs->constant < 0)
        return std::nullopt;
      int64_t quotient = lhs->constant / rhs->constant;
      if (isa<arith::CeilDivUIOp>(op) && lhs->constant % rhs->constant)
        ++quotient;
      return Linear{0, quotient, {}, 0};
    }
    if (!loop->isAncestor(op)) {
      if (isa<tensor::DimOp>(op) && value.getType().isIndex())
        return Linear{0, 0, value, 1};
      return std::nullopt;
    }
    if (auto cast = dyn_cast<arith::IndexCastOp>(op))
      return read(cast.getIn());
    if (isa<arith::AddIOp, arith::SubIOp>(op)) {
      std::optional<Linear> lhs = read(op->getOperand(0));
      std::optional<Linear> rhs = read(op->getOperand(1));
      if (!lhs || !rhs)
        return std::nullopt;
      return add(*lhs, *rhs, isa<arith::AddIOp>(op) ? 1 : -1);
    }
    if (isa<arith::MulIOp>(op)) {
      std::optional<Linear> lhs = read(op->getOperand(0));
      std::optional<Linear> rhs = read(op->getOperand(1));
      if (!lhs || !rhs)
        return std::nullopt;
      if (rhs->isConstant())
        return scale(*lhs, rhs->constant);
      if (lhs->isConstant())
        return scale(*rhs, lhs->constant);
      return std::nullopt;
    }
    if (auto apply = dyn_cast<affine::AffineApplyOp>(op))
      return readAffine(apply.getAffineMap().getResult(0),
                        apply.getAffineMap().getNumDims(),
                        apply.getMapOperands());
    return std::nullopt;
  }

  /// `expr` over `operands` (dims, then symbols) as Linear.
  std::optional<Linear> readAffine(AffineExpr expr, unsigned numDims,
                                   ValueRange operands) {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      return Linear{0, constant.getValue(), {}, 0};
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      return read(operands[dim.getPosition()]);
    if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
      return read(operands[numDims + symbol.getPosition()]);
    auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
    if (!binary)
      return std::nullopt;
    std::optional<Linear> lhs = readAffine(binary.getLHS(), numDims, operands);
    std::optional<Linear> rhs = readAffine(binary.getRHS(), numDims, operands);
    if (!lhs || !rhs)
      return std::nullopt;
    if (expr.getKind() == AffineExprKind::Add)
      return add(*lhs, *rhs, 1);
    if (expr.getKind() == AffineExprKind::Mul) {
      if (rhs->isConstant())
        return scale(*lhs, rhs->constant);
      if (lhs->isConstant())
        return scale(*rhs, lhs->constant);
    }
    return std::nullopt;
  }

  /// The two sides of a minimum: arith.minsi/minui or a two-result
  /// affine.min.
  std::optional<std::pair<Linear, Linear>> readMin(Value value) {
    Operation *op = value.getDefiningOp();
    if (!op || !loop->isAncestor(op))
      return std::nullopt;
    if (isa<arith::MinSIOp, arith::MinUIOp>(op)) {
      std::optional<Linear> lhs = read(op->getOperand(0));
      std::optional<Linear> rhs = read(op->getOperand(1));
      if (lhs && rhs)
        return std::make_pair(*lhs, *rhs);
      return std::nullopt;
    }
    if (auto min = dyn_cast<affine::AffineMinOp>(op)) {
      AffineMap map = min.getAffineMap();
      if (map.getNumResults() != 2)
        return std::nullopt;
      std::optional<Linear> lhs =
          readAffine(map.getResult(0), map.getNumDims(), min.getMapOperands());
      std::optional<Linear> rhs =
          readAffine(map.getResult(1), map.getNumDims(), min.getMapOperands());
      if (lhs && rhs)
        return std::make_pair(*lhs, *rhs);
    }
    return std::nullopt;
  }

private:
  scf::ForOp loop;
};

/// A window of a loop over chunks: iteration n reads `[n*C, n*C + size)`
/// along `axis` of `source`, where `size` is C, or `min(C, T - n*C)`.
struct Window {
  Value source;
  int64_t axis = -1;
  bool clamped = false;
  /// A static size other than C: the one window of a sequence of T <= C
  /// tokens.
  std::optional<int64_t> wholeLength;
  /// An output written at the length of the chunk it is computed from,
  /// whatever that is: it follows the input windows.
  bool followsWindows = false;
  /// Other dimensions read from 0 to a size fixed before the loop (the keys
  /// of a larger batch read over the queries' batch): the sequence is
  /// `source` cut to those sizes.
  SmallVector<std::pair<int64_t, OpFoldResult>> cuts;
};

/// Whether `value` is the size of dimension `axis` of `tensor`.
bool isDimOf(Value value, Value tensor, int64_t axis) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(axis))
    return staticIndex(value) == type.getDimSize(axis);
  auto dim = value.getDefiningOp<tensor::DimOp>();
  return dim && dim.getSource() == tensor && dim.getConstantIndex() == axis;
}

/// The loop being read and what has been proven about it so far.
class ChunkLoopReading {
public:
  ChunkLoopReading(scf::ForOp loop) : loop(loop), arithmetic(loop) {}

  /// Proves that the loop is a ttt.chunk_loop; the reason if not.
  LogicalResult read(std::string &why);

  /// Builds the ttt.chunk_loop and replaces the loop by it; the verifier's
  /// complaint instead, and nothing changed, if the op it built is invalid.
  std::string replace(RewriterBase &rewriter);

private:
  LogicalResult readBounds(std::string &why);
  FailureOr<Window> readWindow(OffsetSizeAndStrideOpInterface slice,
                               Value source, std::string &why,
                               Value written = nullptr);
  bool hasWindowLength(Value tensor, int64_t axis);
  bool isWindowLength(Value size);
  /// Whether `tensor` is a carried buffer that starts as a tensor.empty
  /// whose size `axis` is `size`.
  bool isInitSize(Value size, Value tensor, int64_t axis);
  LogicalResult readBuffers(std::string &why);
  LogicalResult checkTiling(std::string &why);
  LogicalResult collectBody(std::string &why);

  scf::ForOp loop;
  CounterArithmetic arithmetic;
  int64_t lower = 0, step = 0;
  /// The chunk C, once a window fixes it.
  int64_t chunk = 0;
  /// The trip count: a constant, or ceil(tripLength / tripDivisor).
  std::optional<int64_t> tripCount;
  Value tripLength;
  int64_t tripDivisor = 0;
  /// The length T that clamped windows clamp to: a value or a constant.
  std::optional<Linear> clampLength;

  SmallVector<tensor::ExtractSliceOp> windowSlices;
  SmallVector<Window> windows;
  /// Per iter_arg: the insert_slice writing it if it is an output buffer.
  SmallVector<tensor::InsertSliceOp> bufferWrites;
  SmallVector<Window> bufferWindows;
  /// The body ops the outputs and next state need, in order.
  SmallVector<Operation *> needed;
  /// Values from outside the loop the needed ops read.
  SmallVector<Value> invariants;
  /// Window sizes the needed ops read (the length of a chunk).
  llvm::SetVector<Value> windowLengths;
};

LogicalResult ChunkLoopReading::readBounds(std::string &why) {
  std::optional<Linear> lb = arithmetic.read(loop.getLowerBound());
  std::optional<Linear> st = arithmetic.read(loop.getStep());
  if (!lb || !lb->isConstant() || !st || !st->isConstant() || st->constant <= 0)
    return why = "its lower bound and step are not constants", failure();
  lower = lb->constant;
  step = st->constant;
  Value upper = loop.getUpperBound();
  if (std::optional<Linear> ub = arithmetic.read(upper)) {
    if (ub->isConstant()) {
      int64_t span = ub->constant - lower;
      tripCount = span <= 0 ? 0 : llvm::divideCeil(span, step);
      return success();
    }
    // `for i = 0 to T step s`: ceil(T / s) iterations.
    if (ub->counterCoeff == 0 && ub->lengthCoeff == 1 && ub->constant == 0 &&
        lower == 0) {
      tripLength = ub->length;
      tripDivisor = step;
      return success();
    }
  }
  // `for i = 0 to ceildiv(T, d) step 1`.
  if (auto ceil = upper.getDefiningOp<arith::CeilDivUIOp>()) {
    std::optional<Linear> length = arithmetic.read(ceil.getLhs());
    std::optional<Linear> divisor = arithmetic.read(ceil.getRhs());
    if (length && divisor && divisor->isConstant() && divisor->constant > 0 &&
        length->lengthCoeff == 1 && length->counterCoeff == 0 &&
        length->constant == 0 && lower == 0 && step == 1) {
      tripLength = length->length;
      tripDivisor = divisor->constant;
      return success();
    }
  }
  return why = "its trip count is neither a constant nor ceil(T / C) of a "
               "length T",
         failure();
}

/// Whether `size` is the length of the current chunk: a window's size, or
/// the size of a tensor that has the chunk's length.
bool ChunkLoopReading::isWindowLength(Value size) {
  for (tensor::ExtractSliceOp slice : windowSlices)
    if (llvm::is_contained(slice.getSizes(), size))
      return true;
  auto dim = size.getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  return index && hasWindowLength(dim.getSource(), *index);
}

/// Whether dimension `axis` of `tensor` is the length of the current chunk:
/// the time axis of a window, carried through destination-style ops (a
/// linalg op's result has its init's sizes) and `tensor.empty`'s sizes.
bool ChunkLoopReading::hasWindowLength(Value tensor, int64_t axis) {
  for (auto [slice, window] : llvm::zip_equal(windowSlices, windows))
    if (tensor == slice.getResult())
      return axis == window.axis;
  Operation *def = tensor.getDefiningOp();
  if (!def || !loop->isProperAncestor(def))
    return false;
  if (auto empty = dyn_cast<tensor::EmptyOp>(def))
    return empty.getType().isDynamicDim(axis) &&
           isWindowLength(empty.getDynamicSize(axis));
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
    return hasWindowLength(dps.getTiedOpOperand(cast<OpResult>(tensor))->get(),
                           axis);
  return false;
}

bool ChunkLoopReading::isInitSize(Value size, Value tensor, int64_t axis) {
  auto arg = dyn_cast<BlockArgument>(tensor);
  if (!arg || arg.getOwner() != loop.getBody() ||
      arg.getArgNumber() < loop.getNumInductionVars())
    return false;
  Value init =
      loop.getInitArgs()[arg.getArgNumber() - loop.getNumInductionVars()];
  auto empty = init.getDefiningOp<tensor::EmptyOp>();
  return empty && empty.getType().isDynamicDim(axis) &&
         empty.getDynamicSize(axis) == size;
}

FailureOr<Window>
ChunkLoopReading::readWindow(OffsetSizeAndStrideOpInterface slice, Value source,
                             std::string &why, Value written) {
  auto fail = [&](const Twine &reason) -> FailureOr<Window> {
    why = reason.str();
    return failure();
  };
  auto type = cast<RankedTensorType>(source.getType());
  Window window;
  window.source = source;
  if (!slice.hasUnitStride())
    return fail("a window has a stride other than 1");
  for (int64_t d = 0, e = type.getRank(); d < e; ++d) {
    OpFoldResult offset = slice.getMixedOffsets()[d];
    OpFoldResult size = slice.getMixedSizes()[d];
    std::optional<Linear> start =
        isa<Attribute>(offset) ? std::optional<Linear>(Linear{
                                     0, *getConstantIntValue(offset), {}, 0})
                               : arithmetic.read(cast<Value>(offset));
    if (!start)
      return fail("a window's offset is not affine in the chunk index");
    if (start->counterCoeff == 0 && start->lengthCoeff == 0 &&
        start->constant == 0) {
      // A whole dimension.
      std::optional<int64_t> staticSize = getConstantIntValue(size);
      bool whole = staticSize ? !type.isDynamicDim(d) &&
                                    *staticSize == type.getDimSize(d)
                              : isDimOf(cast<Value>(size), source, d) ||
                                    isInitSize(cast<Value>(size), source, d);
      if (whole)
        continue;
      // A window of another dimension that every chunk reads alike is a
      // cut of the sequence, made once before the loop.
      bool fixed =
          staticSize || cast<Value>(size).getParentRegion()->isAncestor(
                            loop->getParentRegion());
      if (written || !fixed)
        return fail("a window cuts dimension " + Twine(d) +
                    " that is not its time axis");
      window.cuts.push_back({d, size});
      continue;
    }
    if (window.axis >= 0 || start->lengthCoeff != 0)
      return fail("a window's offset moves along more than one axis");
    window.axis = d;
    // Iteration n starts at counterCoeff * (lower + n * step) + constant.
    int64_t first = start->counterCoeff * lower + start->constant;
    int64_t stride = start->counterCoeff * step;
    if (first != 0 || stride <= 0)
      return fail("the windows do not start at 0 and move forward by a "
                  "constant");
    if (chunk && chunk != stride)
      return fail("windows move by " + Twine(chunk) + " and by " +
                  Twine(stride) + " tokens");
    chunk = stride;
    if (std::optional<int64_t> staticSize = getConstantIntValue(size)) {
      if (*staticSize != chunk)
        window.wholeLength = *staticSize;
      continue;
    }
    if (written && isWindowLength(cast<Value>(size)) &&
        hasWindowLength(written, d)) {
      window.followsWindows = true;
      continue;
    }
    // min(C, T - n*C), the last window cut at the length.
    std::optional<std::pair<Linear, Linear>> min =
        arithmetic.readMin(cast<Value>(size));
    if (!min)
      return fail("a window's size is neither " + Twine(chunk) + " nor min(" +
                  Twine(chunk) + ", T - offset)");
    auto [lhs, rhs] = *min;
    if (!lhs.isConstant())
      std::swap(lhs, rhs);
    std::optional<Linear> length = add(rhs, *start, 1);
    if (!lhs.isConstant() || lhs.constant != chunk || !length ||
        length->counterCoeff != 0 || length->lengthCoeff > 1 ||
        length->lengthCoeff < 0)
      return fail("a window's size is neither " + Twine(chunk) + " nor min(" +
                  Twine(chunk) + ", T - offset)");
    if (clampLength && !(*clampLength == *length))
      return fail("windows are cut at two different lengths");
    clampLength = *length;
    window.clamped = true;
  }
  if (window.axis < 0)
    return fail("a slice does not move with the chunk index");
  return window;
}

/// The value a carried buffer is written into in an iteration: the
/// iter_arg itself, or, at the first iteration only, a fresh tensor (the
/// reference lowering's allocation once a chunk's sizes are known).
static bool isBufferDest(Value dest, BlockArgument arg, scf::ForOp loop) {
  if (dest == arg)
    return true;
  auto choice = dest.getDefiningOp<scf::IfOp>();
  if (!choice || choice->getParentOp() != loop || choice.getNumResults() != 1)
    return false;
  auto cmp = choice.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq ||
      cmp.getLhs() != loop.getInductionVar() ||
      !matchPattern(cmp.getRhs(), m_Zero()))
    return false;
  Value fresh = choice.thenYield().getOperand(0);
  return choice.elseYield().getOperand(0) == arg &&
         fresh.getDefiningOp<tensor::EmptyOp>();
}

LogicalResult ChunkLoopReading::readBuffers(std::string &why) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (BlockArgument arg : loop.getRegionIterArgs()) {
    unsigned index = arg.getArgNumber() - loop.getNumInductionVars();
    tensor::InsertSliceOp write;
    auto insert =
        yield.getOperand(index).getDefiningOp<tensor::InsertSliceOp>();
    bool onlyWritten =
        insert && insert->getParentOp() == loop &&
        isBufferDest(insert.getDest(), arg, loop) &&
        llvm::all_of(arg.getUsers(), [&](Operation *user) {
          return user == insert || user == insert.getDest().getDefiningOp();
        });
    if (onlyWritten)
      write = insert;
    bufferWrites.push_back(write);
    bufferWindows.push_back({});
    if (!write) {
      if (!isa<RankedTensorType>(arg.getType()))
        return why = "it carries a " +
                     std::string(isa<IndexType>(arg.getType()) ? "counter"
                                                               : "scalar") +
                     ", not a tensor",
               failure();
      continue;
    }
    FailureOr<Window> window =
        readWindow(cast<OffsetSizeAndStrideOpInterface>(write.getOperation()),
                   arg, why, write.getSource());
    if (failed(window))
      return why = "an output " + why, failure();
    bufferWindows.back() = *window;
  }
  return success();
}

LogicalResult ChunkLoopReading::checkTiling(std::string &why) {
  // The length T every window and buffer spans.
  Value lengthValue;
  std::optional<int64_t> length;
  auto sourceLength = [](const Window &window) -> std::optional<int64_t> {
    auto type = cast<RankedTensorType>(window.source.getType());
    if (type.isDynamicDim(window.axis))
      return std::nullopt;
    return type.getDimSize(window.axis);
  };
  if (clampLength) {
    if (clampLength->lengthCoeff == 1)
      lengthValue = clampLength->length;
    else
      length = clampLength->constant;
  }
  if (lengthValue)
    length = staticIndex(lengthValue);
  if (!lengthValue && !length)
    for (const Window &window : windows)
      if ((length = sourceLength(window)))
        break;
  // Windows of C tokens in a loop of ceil(T / C) iterations: T is the
  // length (a length C does not divide makes the program read past its
  // sequences, which has no meaning to keep).
  if (!lengthValue && !length && tripLength)
    lengthValue = tripLength;
  if (!lengthValue && !length)
    return why = "the length its windows tile is not known", failure();

  // One sequence is T long, and goes first: the others are read over its
  // T tokens, as the loop read them (a static length must be T).
  auto isT = [&](const Window &window) {
    return (lengthValue && isDimOf(lengthValue, window.source, window.axis)) ||
           (length && sourceLength(window) == length);
  };
  auto first = llvm::find_if(windows, isT);
  if (first == windows.end())
    return why = "none of the sequences it cuts is proven to be as long as "
                 "the length its windows stop at",
           failure();
  size_t firstIndex = first - windows.begin();
  std::swap(windows[0], windows[firstIndex]);
  std::swap(windowSlices[0], windowSlices[firstIndex]);
  for (const Window &window : windows)
    if (sourceLength(window) && length && sourceLength(window) != length)
      return why = "it cuts sequences of different lengths", failure();
  for (auto [write, window] : llvm::zip_equal(bufferWrites, bufferWindows)) {
    if (!write)
      continue;
    unsigned index = cast<BlockArgument>(window.source).getArgNumber() -
                     loop.getNumInductionVars();
    Value init = loop.getInitArgs()[index];
    auto type = cast<RankedTensorType>(init.getType());
    int64_t axis = window.axis;
    bool spans = false;
    if (!type.isDynamicDim(axis)) {
      spans = length && type.getDimSize(axis) == *length;
    } else if (auto empty = init.getDefiningOp<tensor::EmptyOp>()) {
      spans = lengthValue && empty.getDynamicSize(axis) == lengthValue;
    }
    if (!spans)
      return why = "an output buffer is not proven to be as long as the "
                   "sequences",
             failure();
  }

  // The windows tile [0, T): N == ceil(T / C), and a window that is not
  // clamped at T never passes it (C divides T).
  SmallVector<Window> all(windows);
  for (auto [write, window] : llvm::zip_equal(bufferWrites, bufferWindows))
    if (write)
      all.push_back(window);
  bool full = false;
  for (const Window &window : all) {
    if (window.wholeLength &&
        !(length && *length == *window.wholeLength && *length <= chunk))
      return why = "a window of " + std::to_string(*window.wholeLength) +
                   " tokens moves by " + std::to_string(chunk),
             failure();
    full |= !window.clamped && !window.wholeLength && !window.followsWindows;
  }
  if (full && length && *length % chunk != 0)
    return why = "its windows of " + std::to_string(chunk) +
                 " tokens pass the end of its " + std::to_string(*length) +
                 " tokens",
           failure();
  if (tripCount) {
    if (!length)
      return why = "its constant trip count does not prove that its windows "
                   "tile a sequence of run-time length",
             failure();
    int64_t expected = llvm::divideCeil(*length, chunk);
    if (*tripCount != expected)
      return why = "its " + std::to_string(*tripCount) + " windows of " +
                   std::to_string(chunk) + " tokens do not tile the " +
                   std::to_string(*length) + " tokens of its sequences",
             failure();
    return success();
  }
  bool tripOverT = tripLength == lengthValue ||
                   (length && staticIndex(tripLength) == length) ||
                   isDimOf(tripLength, windows[0].source, windows[0].axis);
  if (tripDivisor != chunk || !tripOverT)
    return why = "its trip count ceil(T / " + std::to_string(tripDivisor) +
                 ") is not proven to tile the sequences with windows of " +
                 std::to_string(chunk) + " tokens",
           failure();
  return success();
}

LogicalResult ChunkLoopReading::collectBody(std::string &why) {
  Block *body = loop.getBody();
  Value counter = loop.getInductionVar();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  SmallVector<Value> worklist;
  for (auto [index, write] : llvm::enumerate(bufferWrites))
    worklist.push_back(write ? write.getSource() : yield.getOperand(index));
  llvm::SetVector<Operation *> seen;
  llvm::SetVector<Value> outside;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (value == counter)
      return why = "its body reads the chunk index", failure();
    // A window's run-time length is the size of its window argument.
    if (llvm::any_of(windowSlices, [&](tensor::ExtractSliceOp slice) {
          return llvm::is_contained(slice.getSizes(), value);
        })) {
      windowLengths.insert(value);
      continue;
    }
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == body)
        continue; // state
    }
    Operation *def = value.getDefiningOp();
    if (!def || !loop->isProperAncestor(def)) {
      outside.insert(value);
      continue;
    }
    if (def->getBlock() != body)
      continue; // inside a needed op's region
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def))
      if (llvm::is_contained(windowSlices, slice))
        continue;
    if (!seen.insert(def))
      continue;
    std::string reason = ChunkLoopOp::whyNotCanonical(def);
    if (!reason.empty())
      return why = "'" + def->getName().getStringRef().str() +
                   "' in its body is not in ttt.chunk_loop's op set (" +
                   reason + ")",
             failure();
    llvm::append_range(worklist, def->getOperands());
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(def->getRegions(), captured);
    llvm::append_range(worklist, captured);
  }
  needed = seen.takeVector();
  llvm::sort(needed,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Value value : outside)
    invariants.push_back(value);
  return success();
}

LogicalResult ChunkLoopReading::read(std::string &why) {
  if (failed(readBounds(why)))
    return failure();
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(&op);
    if (!slice)
      continue;
    bool moves = llvm::any_of(slice.getOffsets(), [&](Value offset) {
      std::optional<Linear> start = arithmetic.read(offset);
      return !start || start->counterCoeff != 0;
    });
    if (!moves)
      continue;
    if (loop->isAncestor(slice.getSource().getParentRegion()->getParentOp()))
      return why = "it slices a tensor it computes at the chunk index",
             failure();
    if (slice.getSourceType().getRank() != slice.getResultType().getRank())
      return why = "a window drops dimensions", failure();
    FailureOr<Window> window =
        readWindow(cast<OffsetSizeAndStrideOpInterface>(slice.getOperation()),
                   slice.getSource(), why);
    if (failed(window))
      return failure();
    windowSlices.push_back(slice);
    windows.push_back(*window);
  }
  if (windows.empty())
    return why = "no slice of its body moves with the chunk index", failure();
  if (failed(readBuffers(why)) || failed(checkTiling(why)) ||
      failed(collectBody(why)))
    return failure();
  for (auto [write, init] : llvm::zip_equal(bufferWrites, loop.getInitArgs())) {
    if (!write)
      continue;
    auto chunkType = write.getSourceType();
    auto type = cast<RankedTensorType>(init.getType());
    int64_t axis = bufferWindows[&write - bufferWrites.begin()].axis;
    for (int64_t d = 0, e = type.getRank(); d < e; ++d)
      if (d != axis && chunkType.getDimSize(d) != type.getDimSize(d))
        return why = "a chunk output's type does not match its buffer's",
               failure();
  }
  return success();
}

std::string ChunkLoopReading::replace(RewriterBase &rewriter) {
  Location loc = loop.getLoc();
  SmallVector<Value> inits, sequences;
  SmallVector<int64_t> windowAxes, outputAxes;
  SmallVector<Type> outputTypes, stateTypes;
  for (auto [write, window, init] :
       llvm::zip_equal(bufferWrites, bufferWindows, loop.getInitArgs())) {
    if (write) {
      outputTypes.push_back(init.getType());
      outputAxes.push_back(window.axis);
      continue;
    }
    inits.push_back(init);
    stateTypes.push_back(init.getType());
  }
  rewriter.setInsertionPoint(loop);
  for (const Window &window : windows) {
    Value sequence = window.source;
    if (!window.cuts.empty()) {
      auto type = cast<RankedTensorType>(sequence.getType());
      SmallVector<OpFoldResult> sizes(type.getRank());
      for (auto [d, size] : window.cuts)
        sizes[d] = size;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (!sizes[d])
          sizes[d] = tensor::getMixedSize(rewriter, loc, sequence, d);
      SmallVector<OpFoldResult> zeros(type.getRank(), rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> ones(type.getRank(), rewriter.getIndexAttr(1));
      sequence = tensor::ExtractSliceOp::create(rewriter, loc, sequence, zeros,
                                                sizes, ones);
    }
    sequences.push_back(sequence);
    windowAxes.push_back(window.axis);
  }
  SmallVector<Value> passed, made;
  for (Value value : invariants)
    (linalg_raise::isRematerializable(value) ? made : passed).push_back(value);

  auto chunkLoop =
      ChunkLoopOp::create(rewriter, loc, outputTypes, stateTypes, inits,
                          sequences, passed, rewriter.getI64IntegerAttr(chunk),
                          rewriter.getDenseI64ArrayAttr(windowAxes),
                          rewriter.getDenseI64ArrayAttr(outputAxes));
  SmallVector<Type> argTypes(stateTypes);
  for (tensor::ExtractSliceOp slice : windowSlices)
    argTypes.push_back(slice.getResultType());
  for (Value value : passed)
    argTypes.push_back(value.getType());
  Block *block =
      rewriter.createBlock(&chunkLoop.getBody(), {}, argTypes,
                           SmallVector<Location>(argTypes.size(), loc));
  IRMapping mapping;
  unsigned next = 0;
  for (auto [write, arg] :
       llvm::zip_equal(bufferWrites, loop.getRegionIterArgs()))
    if (!write)
      mapping.map(arg, block->getArgument(next++));
  for (tensor::ExtractSliceOp slice : windowSlices)
    mapping.map(slice.getResult(), block->getArgument(next++));
  for (Value value : passed)
    mapping.map(value, block->getArgument(next++));
  rewriter.setInsertionPointToStart(block);
  for (Value value : made)
    (void)linalg_raise::rematerialize(rewriter, value, mapping);
  for (Value size : windowLengths) {
    for (auto [index, slice] : llvm::enumerate(windowSlices)) {
      if (!llvm::is_contained(slice.getSizes(), size))
        continue;
      Value window = block->getArgument(stateTypes.size() + index);
      mapping.map(size, tensor::DimOp::create(rewriter, loc, window,
                                              windows[index].axis)
                            .getResult());
      break;
    }
  }
  for (Operation *op : needed)
    rewriter.clone(*op, mapping);
  SmallVector<Value> chunkOutputs, nextState;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [index, write] : llvm::enumerate(bufferWrites)) {
    if (write)
      chunkOutputs.push_back(mapping.lookup(write.getSource()));
    else
      nextState.push_back(mapping.lookupOrDefault(yield.getOperand(index)));
  }
  ChunkYieldOp::create(rewriter, loc, chunkOutputs, nextState);
  if (std::string problem = linalg_raise::verifyQuietly(chunkLoop);
      !problem.empty()) {
    // Never leave an invalid op behind; say why instead.
    rewriter.eraseOp(chunkLoop);
    return problem;
  }

  SmallVector<Value> replacements;
  unsigned output = 0, state = 0;
  for (tensor::InsertSliceOp write : bufferWrites)
    replacements.push_back(write ? chunkLoop.getOutputs()[output++]
                                 : chunkLoop.getFinalStates()[state++]);
  rewriter.replaceOp(loop, replacements);
  return "";
}

} // namespace

bool linalg_raise::isRematerializable(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (def->hasTrait<OpTrait::ConstantLike>())
    return true;
  if (!isa<tensor::EmptyOp, linalg::FillOp>(def))
    return false;
  return llvm::all_of(def->getOperands(), isRematerializable);
}

Value linalg_raise::rematerialize(OpBuilder &builder, Value value,
                                  IRMapping &mapping) {
  if (Value copy = mapping.lookupOrNull(value))
    return copy;
  Operation *def = value.getDefiningOp();
  for (Value operand : def->getOperands())
    (void)rematerialize(builder, operand, mapping);
  Operation *copy = builder.clone(*def, mapping);
  return copy->getResult(cast<OpResult>(value).getResultNumber());
}

Value linalg_raise::scaledInto(OpBuilder &builder, Location loc, Value input,
                               AffineMap inputMap, Value init, double factor,
                               bool accumulate) {
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<AffineMap> maps{
      inputMap,
      AffineMap::getMultiDimIdentityMap(type.getRank(), builder.getContext())};
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             builder, loc, type, ValueRange{input}, ValueRange{init}, maps,
             iterators,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               Value c = arith::ConstantOp::create(
                   nested, nestedLoc,
                   nested.getFloatAttr(type.getElementType(), factor));
               Value result =
                   arith::MulFOp::create(nested, nestedLoc, args[0], c);
               if (accumulate)
                 result =
                     arith::AddFOp::create(nested, nestedLoc, args[1], result);
               linalg::YieldOp::create(nested, nestedLoc, result);
             })
      .getResult(0);
}

std::string linalg_raise::verifyQuietly(Operation *op) {
  std::string message;
  ScopedDiagnosticHandler handler(op->getContext(), [&](Diagnostic &diag) {
    if (message.empty())
      message = diag.str();
    return success();
  });
  if (succeeded(verify(op)))
    return "";
  return message.empty() ? "the loop it would be does not verify" : message;
}

namespace {

struct TTTFormChunkLoopsPass
    : ttt::impl::TTTFormChunkLoopsBase<TTTFormChunkLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      ChunkLoopReading reading(loop);
      std::string why;
      if (succeeded(reading.read(why)) &&
          (why = reading.replace(rewriter)).empty())
        continue;
      bool carriesTensors = llvm::any_of(loop.getInitArgs(), [](Value init) {
        return isa<RankedTensorType>(init.getType());
      });
      if (explain && carriesTensors)
        loop.emitRemark() << "ttt-form-chunk-loops: not a loop over chunks: "
                          << why;
    }
  }
};

} // namespace
