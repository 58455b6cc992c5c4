//===- ResultPrinter.cpp - results as text --------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ResultPrinter.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace ttt::run {

/// Element `i` of `array`, widened to double for summaries.
static double getAsDouble(const npy::Array &array, int64_t i) {
  switch (array.getDType()) {
  case npy::DType::F32:
    return array.getValues<float>()[i];
  case npy::DType::F64:
    return array.getValues<double>()[i];
  case npy::DType::I32:
    return array.getValues<int32_t>()[i];
  case npy::DType::I64:
    return static_cast<double>(array.getValues<int64_t>()[i]);
  }
  return 0;
}

static void printElement(raw_ostream &os, const npy::Array &array, int64_t i) {
  switch (array.getDType()) {
  case npy::DType::F32:
    os << format("%g", static_cast<double>(array.getValues<float>()[i]));
    return;
  case npy::DType::F64:
    os << format("%g", array.getValues<double>()[i]);
    return;
  case npy::DType::I32:
    os << array.getValues<int32_t>()[i];
    return;
  case npy::DType::I64:
    os << array.getValues<int64_t>()[i];
    return;
  }
}

/// Prints the elements [first, first + size of dims) in nested brackets.
static void printNested(raw_ostream &os, const npy::Array &array,
                        ArrayRef<int64_t> dims, int64_t first) {
  if (dims.empty()) {
    printElement(os, array, first);
    return;
  }
  int64_t inner = 1;
  for (int64_t dim : dims.drop_front())
    inner *= dim;
  os << '[';
  for (int64_t i = 0; i < dims.front(); ++i) {
    if (i)
      os << ", ";
    printNested(os, array, dims.drop_front(), first + i * inner);
  }
  os << ']';
}

void printArray(raw_ostream &os, StringRef name, const npy::Array &array,
                int64_t limit) {
  os << name << ": tensor<";
  for (int64_t dim : array.getShape())
    os << dim << 'x';
  os << npy::getMLIRTypeName(array.getDType()) << "> = ";
  int64_t count = array.getNumElements();
  if (count <= limit) {
    printNested(os, array, array.getShape(), 0);
    os << '\n';
    return;
  }
  // NaNs are counted apart; they would otherwise vanish from min and max.
  double minimum = 0, maximum = 0, sum = 0;
  int64_t numbers = 0, nans = 0;
  for (int64_t i = 0; i < count; ++i) {
    double value = getAsDouble(array, i);
    if (value != value) {
      ++nans;
      continue;
    }
    minimum = numbers ? std::min(minimum, value) : value;
    maximum = numbers ? std::max(maximum, value) : value;
    sum += value;
    ++numbers;
  }
  os << '<' << count << " elements: min " << format("%g", minimum) << ", max "
     << format("%g", maximum) << ", mean "
     << format("%g", numbers ? sum / numbers : 0.0);
  if (nans)
    os << ", " << nans << " NaN";
  os << ">\n";
}

} // namespace ttt::run
