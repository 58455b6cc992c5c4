//===- EinsumPolynomial.h - tensor values as sums of einsum terms -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads a tensor value computed by linalg ops as a polynomial of einsum
// terms over *leaves*: `sum_k c_k * prod_f leaf_f[labels_f]`, every label
// not among the value's own labels summed. A contraction, an elementwise
// sum or product, a transpose, a broadcast and a reshape (of unit
// dimensions, or merging dimensions such as batch and heads) are all the
// same thing here,
// whichever op and indexing maps spelled them, so the math of a chunk step
// is read without regard to layout or orientation. A value the reader does
// not expand (a block argument, a chosen stop value, an op whose payload is
// not a sum of products) is a leaf.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_EINSUMPOLYNOMIAL_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_EINSUMPOLYNOMIAL_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::ttt::linalg_raise {

/// One tensor factor of a term, `leaf[labels]`, a label per dimension.
struct Factor {
  Value leaf;
  SmallVector<unsigned> labels;
};

/// `coeff * prod factors`.
struct Term {
  double coeff = 1.0;
  SmallVector<Factor> factors;

  /// The factors whose leaf is `leaf`.
  SmallVector<const Factor *> factorsOf(Value leaf) const;
};

/// A value as a sum of terms; `labels` name its dimensions in order.
struct Polynomial {
  SmallVector<unsigned> labels;
  SmallVector<Term> terms;
};

/// Whether two leaves stand for the same tensor (for comparing polynomials
/// read in two places, e.g. the windows of two chunks of one sequence).
using SameLeaf = llvm::function_ref<bool(Value, Value)>;

/// Whether `a` and `b` are the same sum of terms: terms matched one to one,
/// equal coefficients (to a relative `rtol`), factors matched to the same
/// leaves with one consistent renaming of labels that maps `a`'s labels of
/// the value onto `b`'s, position by position. A wider `rtol` compares with
/// a formula whose constants the program rounded to its float type.
bool equivalent(const Polynomial &a, const Polynomial &b, SameLeaf sameLeaf,
                double rtol = 1e-12);

/// The value of a float scalar constant, also one converted from another
/// float type (`arith.truncf` of an f64 constant), as the program rounds it.
std::optional<double> floatConstant(Value value);

/// The elements of a dense constant attribute, also when they are a
/// resource blob (large ONNX initializers and torch-mlir's parameters are
/// `dense_resource`); null for anything else.
DenseElementsAttr denseConstantValue(Attribute value);

/// The values of a mask leaf (see EinsumReader's `readMasks`) over loop
/// indices `[0, size)` in each of the loops it reads, row-major in their
/// ascending order; nullopt when `predicate` is not such a leaf or reads
/// other than two loops.
std::optional<SmallVector<bool>> maskTable(Value predicate, int64_t size);

/// Whether `value` is zero: a sum of no terms, or a constant (also a
/// resource blob, as exporters store `zeros_like`) of zeros.
bool isZeroTensor(Value value);

class EinsumReader {
public:
  /// Values in `stops` are leaves even where they could be expanded. With
  /// `readMasks`, a payload's `select(p, x, 0)` whose predicate p reads
  /// nothing but the loop indices (a causal mask) is x times a factor whose
  /// leaf is p (an i1 value inside the payload), labelled by the loops p
  /// reads in ascending order; see maskTable.
  explicit EinsumReader(llvm::DenseSet<Value> stops = {},
                        bool readMasks = false)
      : stops(std::move(stops)), readMasks(readMasks) {}

  /// `value` as a polynomial, or nullopt when it is not a ranked tensor or
  /// grows past the reader's bounds.
  std::optional<Polynomial> read(Value value);

  /// A label no polynomial read so far uses.
  unsigned freshLabel() { return nextLabel++; }

  /// A fresh label for a copy of a term that sums over `label`: of size 1
  /// if `label` is.
  unsigned freshLabelLike(unsigned label) {
    unsigned fresh = freshLabel();
    if (isUnit(label))
      unitLabels.insert(fresh);
    return fresh;
  }

  /// `poly` with every factor of `leaf` replaced by `value` (a polynomial
  /// whose labels name `leaf`'s dimensions), labels renamed so that no two
  /// sums meet.
  std::optional<Polynomial> substitute(const Polynomial &poly, Value leaf,
                                       const Polynomial &value);

  /// Whether `label` is (transitively) a part of one of the `merged`
  /// labels: a dimension merged into it by a reshape.
  bool isPartOf(unsigned label, const llvm::DenseSet<unsigned> &merged) const;

  /// Whether `label` indexes a dimension of size 1 (its one index sums or
  /// broadcasts nothing, so readers of the terms may ignore it).
  bool isUnit(unsigned label) const { return unitLabels.contains(label); }

private:
  std::optional<Polynomial>
  readWithLabels(Value value, ArrayRef<unsigned> labels, unsigned depth);
  std::optional<Polynomial> readLinalg(Operation *op, ArrayRef<unsigned> labels,
                                       unsigned depth);
  std::optional<Polynomial>
  readReshape(Operation *op, ArrayRef<unsigned> labels, unsigned depth);
  Polynomial leaf(Value value, ArrayRef<unsigned> labels);

  llvm::DenseSet<Value> stops;
  bool readMasks = false;
  llvm::DenseSet<unsigned> unitLabels;
  /// A label of merged dimensions (B*H), and the labels and sizes of its
  /// parts.
  struct Split {
    SmallVector<unsigned> parts;
    SmallVector<int64_t> sizes;
  };
  llvm::DenseMap<unsigned, Split> splits;
  /// Values whose defining op was found not to read as a polynomial (in
  /// the current merge mode): leaves from then on.
  llvm::DenseSet<Value> unreadable;
  /// Whether reshapes that merge dimensions are read (see read()).
  bool readMerges = true;

  bool mixesMergedAndParts(const Polynomial &poly) const;
  unsigned nextLabel = 0;
};

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_EINSUMPOLYNOMIAL_H
