//===- Inputs.cpp - the arrays ttt-run passes in --------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Inputs.h"

#include "ttt/Execution/RunError.h"

#include "ttt/Support/Memory.h"
#include "ttt/Support/NpyArchive.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <limits>
#include <random>

using namespace llvm;
using mlir::ShapedType;

namespace ttt::run {

//===----------------------------------------------------------------------===//
// Arrays from a file
//===----------------------------------------------------------------------===//

/// "argument 1 (tensor<?x4xf32>)", or with the array's name when it has one.
static std::string describeArgument(size_t index, const TensorSpec &spec,
                                    StringRef arrayName) {
  std::string text;
  raw_string_ostream os(text);
  if (!arrayName.empty())
    os << "array " << npy::quote(arrayName) << " for ";
  os << "argument " << index << " (" << spec.type << ")";
  return text;
}

/// Checks an array of `dtype` and `shape` against `spec`: dtype, rank and
/// every static size.
static Error checkArray(npy::DType dtype, ArrayRef<int64_t> shape,
                        const TensorSpec &spec, size_t index,
                        StringRef arrayName, StringRef path) {
  std::string what = describeArgument(index, spec, arrayName);
  if (dtype != spec.dtype)
    return makeRunError(path, what + ": dtype mismatch: expected " +
                                  npy::getDTypeName(spec.dtype) + ", got " +
                                  npy::getDTypeName(dtype));
  if (static_cast<int64_t>(shape.size()) != spec.getRank())
    return makeRunError(path, what + ": shape mismatch: expected rank " +
                                  Twine(spec.getRank()) + ", got shape " +
                                  npy::formatShape(shape));
  for (auto [dim, expected, actual] : enumerate(spec.shape, shape)) {
    if (!ShapedType::isDynamic(expected) && expected != actual)
      return makeRunError(path, what + ": shape mismatch: dimension " +
                                    Twine(dim) + " must be " + Twine(expected) +
                                    ", got shape " + npy::formatShape(shape));
  }
  return Error::success();
}

/// The argument index named by "arg<N>", if `name` is one.
static std::optional<size_t> parseArgName(StringRef name) {
  size_t index;
  // Exact spelling only, so "arg01" cannot alias "arg1".
  if (!name.consume_front("arg") || name.empty() || !all_of(name, isDigit) ||
      name.getAsInteger(10, index) || name != std::to_string(index))
    return std::nullopt;
  return index;
}

Expected<std::vector<npy::Array>> loadInputs(StringRef path,
                                             const EntrySignature &signature) {
  // The headers first: names, dtypes, shapes and the memory they need are
  // checked before any array is allocated.
  Expected<std::vector<npy::NamedHeader>> file =
      npy::readArrayHeadersFile(path);
  if (!file)
    return makeRunError(path, toString(file.takeError()));
  std::vector<npy::NamedHeader> &headers = *file;
  size_t numArgs = signature.arguments.size();

  // Decide how arrays map to arguments: names arg<N> win over order.
  std::vector<int64_t> arrayForArg(numArgs, -1);
  bool byName = any_of(headers, [](const npy::NamedHeader &a) {
    return parseArgName(a.name).has_value();
  });
  if (byName) {
    for (auto [i, array] : enumerate(headers)) {
      std::optional<size_t> index = parseArgName(array.name);
      if (!index)
        return makeRunError(path, "array " + npy::quote(array.name) +
                                      " is not named arg<N>, but others are "
                                      "(name all arrays arg0, arg1, ... or "
                                      "none)");
      if (*index >= numArgs)
        return makeRunError(path, "wrong number of inputs: array " +
                                      npy::quote(array.name) + ", but @" +
                                      signature.name + " takes " +
                                      countOf(numArgs, "argument"));
      arrayForArg[*index] = i;
    }
    for (size_t i = 0; i < numArgs; ++i)
      if (arrayForArg[i] < 0)
        return makeRunError(path, "no array 'arg" + Twine(i) +
                                      "' for argument " + Twine(i) + " (" +
                                      signature.arguments[i].type + ")");
  } else {
    if (headers.size() != numArgs)
      return makeRunError(path, "wrong number of inputs: @" + signature.name +
                                    " takes " + countOf(numArgs, "argument") +
                                    ", the file holds " +
                                    countOf(headers.size(), "array"));
    for (size_t i = 0; i < numArgs; ++i)
      arrayForArg[i] = i;
  }

  std::vector<ArrayShape> shapes;
  for (size_t i = 0; i < numArgs; ++i) {
    const npy::NamedHeader &named = headers[arrayForArg[i]];
    if (Error err = checkArray(named.header.dtype, named.header.shape,
                               signature.arguments[i], i, named.name, path))
      return std::move(err);
    shapes.push_back({named.header.dtype, named.header.shape});
  }
  if (Error err = checkMemory(path, signature, shapes))
    return std::move(err);

  Expected<std::vector<npy::NamedArray>> arrays = npy::readArraysFile(path);
  if (!arrays)
    return makeRunError(path, toString(arrays.takeError()));
  if (arrays->size() != headers.size())
    return makeRunError(path, "changed while it was read");
  std::vector<npy::Array> inputs;
  for (size_t i = 0; i < numArgs; ++i) {
    npy::NamedArray &named = (*arrays)[arrayForArg[i]];
    // Checked again: the file may have changed since its headers were read.
    if (Error err = checkArray(named.array.getDType(), named.array.getShape(),
                               signature.arguments[i], i, named.name, path))
      return std::move(err);
    inputs.push_back(std::move(named.array));
  }
  return std::move(inputs);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Bytes of an array of `dtype` and `shape`, saturating at the largest
/// value (a shape too large to count is larger than any memory).
static uint64_t getArrayBytes(npy::DType dtype, ArrayRef<int64_t> shape) {
  std::optional<int64_t> count =
      npy::getNumElements(shape, npy::getElementSize(dtype));
  if (!count)
    return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(*count) * npy::getElementSize(dtype);
}

/// "input arg0 (f32 200000x200000, 149 GiB)".
static std::string describeArray(const Twine &what, npy::DType dtype,
                                 ArrayRef<int64_t> shape, uint64_t bytes) {
  return (what + " (" + npy::getMLIRTypeName(dtype) + " " +
          npy::formatShape(shape) + ", " + formatBytes(bytes) + ")")
      .str();
}

/// a + b, saturating.
static uint64_t addBytes(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b
             ? std::numeric_limits<uint64_t>::max()
             : a + b;
}

/// The bytes of the results of static shape (the others are known only
/// after the call).
static uint64_t getStaticResultBytes(const EntrySignature &signature) {
  uint64_t bytes = 0;
  for (const TensorSpec &result : signature.results)
    if (!ShapedType::isDynamicShape(result.shape))
      bytes = addBytes(bytes, getArrayBytes(result.dtype, result.shape));
  return bytes;
}

Error checkResultMemory(StringRef file, const EntrySignature &signature) {
  std::optional<uint64_t> available = getAvailableMemory();
  if (!available)
    return Error::success();
  for (auto [i, result] : enumerate(signature.results)) {
    if (ShapedType::isDynamicShape(result.shape))
      continue;
    uint64_t bytes = getArrayBytes(result.dtype, result.shape);
    if (bytes > *available)
      return makeRunError(file,
                          describeArray("result " + Twine(i), result.dtype,
                                        result.shape, bytes) +
                              " exceeds the available memory (" +
                              formatBytes(*available) + ")");
  }
  return Error::success();
}

Error checkMemory(StringRef subject, const EntrySignature &signature,
                  ArrayRef<ArrayShape> inputs) {
  std::optional<uint64_t> available = getAvailableMemory();
  if (!available)
    return Error::success();
  auto exceeds = [&](const Twine &what) {
    return makeRunError(subject, what + " exceeds the available memory (" +
                                     formatBytes(*available) + ")");
  };
  uint64_t inputBytes = 0;
  for (auto [i, input] : enumerate(inputs)) {
    uint64_t bytes = getArrayBytes(input.dtype, input.shape);
    if (bytes > *available)
      return exceeds(describeArray("input arg" + Twine(i), input.dtype,
                                   input.shape, bytes));
    inputBytes = addBytes(inputBytes, bytes);
  }
  uint64_t resultBytes = getStaticResultBytes(signature);
  // The inputs stay while each call gets a fresh copy of them.
  uint64_t total = addBytes(addBytes(inputBytes, inputBytes), resultBytes);
  if (total <= *available)
    return Error::success();
  std::string parts = "the inputs (" + formatBytes(inputBytes) +
                      ") and the copy of them each call gets";
  if (resultBytes)
    parts += ", with the results (" + formatBytes(resultBytes) + "),";
  return exceeds(parts + " need " + formatBytes(total) + ", which");
}

//===----------------------------------------------------------------------===//
// Random arrays
//===----------------------------------------------------------------------===//

/// Parses one entry of --shapes for argument `index`: sizes joined by 'x',
/// where '?' takes the default; '*' (or nothing) means all defaults.
static Expected<SmallVector<int64_t>> parseShapeEntry(StringRef entry,
                                                      size_t index,
                                                      const TensorSpec &spec,
                                                      int64_t dimSize) {
  entry = entry.trim();
  SmallVector<int64_t> shape;
  for (int64_t dim : spec.shape)
    shape.push_back(ShapedType::isDynamic(dim) ? dimSize : dim);
  if (entry.empty() || entry == "*")
    return std::move(shape);

  auto fail = [&](const Twine &reason) {
    return makeRunError("--shapes", "argument " + Twine(index) + " (" +
                                        spec.type + "): " + reason);
  };
  SmallVector<StringRef> dims;
  entry.split(dims, 'x');
  if (static_cast<int64_t>(dims.size()) != spec.getRank())
    return fail("'" + entry + "' has rank " + Twine(dims.size()) +
                ", expected rank " + Twine(spec.getRank()));
  for (auto [i, text] : enumerate(dims)) {
    text = text.trim();
    if (text == "?")
      continue;
    int64_t size;
    if (text.getAsInteger(10, size) || size < 0)
      return fail("'" + text + "' is not a size (a number >= 0 or '?')");
    if (!ShapedType::isDynamic(spec.shape[i]) && size != spec.shape[i])
      return fail("dimension " + Twine(i) + " must be " + Twine(spec.shape[i]) +
                  ", got " + Twine(size));
    shape[i] = size;
  }
  return std::move(shape);
}

/// Fills `array` from `generator`. The conversions are spelled out (rather
/// than using std::uniform_*_distribution, whose output is up to the
/// standard library) so a seed gives the same inputs everywhere.
static void fillRandom(npy::Array &array, std::mt19937_64 &generator) {
  auto uniform = [&] {
    // 53 random bits -> [0, 1) -> [-1, 1).
    return static_cast<double>(generator() >> 11) * 0x1.0p-53 * 2.0 - 1.0;
  };
  auto integer = [&] { return static_cast<int64_t>(generator() % 21) - 10; };
  switch (array.getDType()) {
  case npy::DType::F32:
    for (float &v : array.getValues<float>())
      v = static_cast<float>(uniform());
    break;
  case npy::DType::F64:
    for (double &v : array.getValues<double>())
      v = uniform();
    break;
  case npy::DType::I32:
    for (int32_t &v : array.getValues<int32_t>())
      v = static_cast<int32_t>(integer());
    break;
  case npy::DType::I64:
    for (int64_t &v : array.getValues<int64_t>())
      v = integer();
    break;
  }
}

Expected<std::vector<npy::Array>>
makeRandomInputs(const EntrySignature &signature,
                 const RandomInputOptions &options) {
  size_t numArgs = signature.arguments.size();
  SmallVector<StringRef> entries;
  if (!options.shapes.empty()) {
    StringRef(options.shapes).split(entries, ',');
    if (entries.size() != numArgs)
      return makeRunError("--shapes",
                          "gives " + countOf(entries.size(), "shape") +
                              ", but @" + signature.name + " takes " +
                              countOf(numArgs, "argument") +
                              " (use '*' for the default shape of an "
                              "argument)");
  }
  if (options.dimSize < 0)
    return makeRunError("--dim-size",
                        "must be >= 0, got " + Twine(options.dimSize));

  std::vector<ArrayShape> shapes;
  for (size_t i = 0; i < numArgs; ++i) {
    const TensorSpec &spec = signature.arguments[i];
    Expected<SmallVector<int64_t>> shape = parseShapeEntry(
        entries.empty() ? StringRef() : entries[i], i, spec, options.dimSize);
    if (!shape)
      return shape.takeError();
    shapes.push_back({spec.dtype, std::move(*shape)});
  }
  if (Error err = checkMemory("--random-inputs", signature, shapes))
    return std::move(err);

  std::mt19937_64 generator(options.seed);
  std::vector<npy::Array> inputs;
  for (size_t i = 0; i < numArgs; ++i) {
    const TensorSpec &spec = signature.arguments[i];
    Expected<npy::Array> array =
        npy::Array::create(spec.dtype, shapes[i].shape);
    if (!array)
      return makeRunError("--random-inputs", "argument " + Twine(i) + ": " +
                                                 toString(array.takeError()));
    fillRandom(*array, generator);
    inputs.push_back(std::move(*array));
  }
  return std::move(inputs);
}

} // namespace ttt::run
