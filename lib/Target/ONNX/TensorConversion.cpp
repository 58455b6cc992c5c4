//===- TensorConversion.cpp - TensorProto <-> elements attributes ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TensorConversion.h"
#include "TypeConversion.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SwapByteOrder.h"

#include <cstring>

using namespace mlir;
using namespace mlir::ttt::onnx;

// raw_data and every typed field are little-endian.
static_assert(!llvm::sys::IsBigEndianHost,
              "the ONNX reader assumes a little-endian host");

bool mlir::ttt::onnx::hasExternalData(const pb::TensorProto &tensor) {
  return tensor.has_data_location() &&
         tensor.data_location() == pb::TensorProto::EXTERNAL;
}

/// A resource blob name made of identifier characters, so that it prints
/// as a bare key.
static std::string getBlobName(StringRef tensorName) {
  std::string name;
  for (char c : tensorName)
    name.push_back(llvm::isAlnum(c) || c == '_' || c == '.' ? c : '_');
  if (name.empty() || llvm::isDigit(name.front()))
    name.insert(name.begin(), 't');
  return name;
}

/// The alignment readers of a blob of `dataType` elements need.
static size_t getBlobAlignment(int32_t dataType) {
  return std::min<size_t>(getRawElementSize(dataType), alignof(double));
}

namespace {
/// The raw little-endian bytes of a tensor: converted from typed fields
/// (owned), the proto's raw_data (borrowed) or a memory-mapped external
/// data file.
struct RawData {
  std::string owned;
  std::optional<ArrayRef<char>> borrowed;
  std::unique_ptr<llvm::MemoryBuffer> mapped;

  ArrayRef<char> bytes() const {
    if (mapped)
      return ArrayRef<char>(mapped->getBufferStart(), mapped->getBufferSize());
    if (borrowed)
      return *borrowed;
    return ArrayRef<char>(owned.data(), owned.size());
  }
};
} // namespace

/// Narrows `count` integers of `values` to `size` bytes each.
template <typename T>
static std::string packIntegers(const T &values, size_t size) {
  std::string bytes(values.size() * size, '\0');
  for (int i = 0, e = values.size(); i < e; ++i) {
    uint64_t value = static_cast<uint64_t>(values.Get(i));
    std::memcpy(&bytes[i * size], &value, size);
  }
  return bytes;
}

template <typename T> static std::string copyValues(const T &values) {
  using Element = typename T::value_type;
  std::string bytes(values.size() * sizeof(Element), '\0');
  if (!values.empty())
    std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// The data of `tensor` from its typed fields, or false if the field its
/// data type uses holds `expected` values no more.
static bool readTypedFields(const pb::TensorProto &tensor, uint64_t expected,
                            size_t elementSize, RawData &data,
                            uint64_t &found) {
  switch (tensor.data_type()) {
  case pb::TensorProto::FLOAT:
    found = tensor.float_data_size();
    data.owned = copyValues(tensor.float_data());
    break;
  case pb::TensorProto::COMPLEX64:
    found = tensor.float_data_size() / 2;
    data.owned = copyValues(tensor.float_data());
    if (tensor.float_data_size() % 2)
      found = expected + 1;
    break;
  case pb::TensorProto::DOUBLE:
    found = tensor.double_data_size();
    data.owned = copyValues(tensor.double_data());
    break;
  case pb::TensorProto::COMPLEX128:
    found = tensor.double_data_size() / 2;
    data.owned = copyValues(tensor.double_data());
    if (tensor.double_data_size() % 2)
      found = expected + 1;
    break;
  case pb::TensorProto::INT64:
    found = tensor.int64_data_size();
    data.owned = copyValues(tensor.int64_data());
    break;
  case pb::TensorProto::UINT32:
  case pb::TensorProto::UINT64:
    found = tensor.uint64_data_size();
    data.owned = packIntegers(tensor.uint64_data(), elementSize);
    break;
  default:
    // INT32 and everything narrower, FLOAT16 and BFLOAT16 as bit patterns.
    found = tensor.int32_data_size();
    data.owned = packIntegers(tensor.int32_data(), elementSize);
    break;
  }
  return found == expected;
}

/// Maps the external data of `tensor` (`size` bytes) into `data`.
static bool readExternalData(const pb::TensorProto &tensor,
                             const TensorReader &reader, uint64_t size,
                             RawData &data, std::string &error) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const pb::StringStringEntryProto &entry : tensor.external_data()) {
    StringRef key = entry.key(), value = entry.value();
    if (key == "location") {
      location = value.str();
    } else if (key == "offset" || key == "length") {
      uint64_t number;
      if (value.getAsInteger(10, number)) {
        error = "external data " + key.str() + " '" + value.str() +
                "' is not a number";
        return false;
      }
      if (key == "offset")
        offset = number;
      else
        length = number;
    }
  }
  if (location.empty()) {
    error = "external data has no location";
    return false;
  }
  // The data must live next to the model, as ONNX requires.
  namespace path = llvm::sys::path;
  if (path::is_absolute(location) ||
      llvm::any_of(llvm::make_range(path::begin(location), path::end(location)),
                   [](StringRef part) { return part == ".."; })) {
    error = "external data location '" + location +
            "' must be a relative path inside the model's directory";
    return false;
  }
  SmallString<256> file(reader.modelDir);
  path::append(file, location);
  uint64_t fileSize;
  if (std::error_code ec = llvm::sys::fs::file_size(file, fileSize)) {
    error = "cannot read external data file '" + std::string(file) +
            "': " + ec.message();
    return false;
  }
  if (length && *length != size) {
    error = "external data length is " + std::to_string(*length) +
            " bytes but the tensor needs " + std::to_string(size);
    return false;
  }
  if (offset > fileSize || fileSize - offset < size) {
    error = "external data file '" + std::string(file) + "' has " +
            std::to_string(fileSize) + " bytes, too few for " +
            std::to_string(size) + " bytes at offset " + std::to_string(offset);
    return false;
  }
  if (size == 0)
    return true;
  auto buffer = llvm::MemoryBuffer::getFileSlice(file, size, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer) {
    error = "cannot read external data file '" + std::string(file) +
            "': " + buffer.getError().message();
    return false;
  }
  data.mapped = std::move(*buffer);
  return true;
}

ElementsAttr mlir::ttt::onnx::readTensor(const pb::TensorProto &tensor,
                                         const TensorReader &reader,
                                         std::string &error) {
  int32_t dataType = tensor.data_type();
  Type element = convertElementType(dataType, reader.context, error);
  if (!element)
    return {};
  size_t elementSize = getRawElementSize(dataType);

  SmallVector<int64_t> shape;
  uint64_t numElements = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0) {
      error = "negative dimension " + std::to_string(dim);
      return {};
    }
    shape.push_back(dim);
    bool overflow = false;
    numElements = llvm::SaturatingMultiply(
        numElements, static_cast<uint64_t>(dim), &overflow);
    if (overflow) {
      error = "too many elements";
      return {};
    }
  }
  bool overflow = false;
  uint64_t numBytes = llvm::SaturatingMultiply(
      numElements, static_cast<uint64_t>(elementSize), &overflow);
  if (overflow ||
      numBytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    error = "too many elements";
    return {};
  }
  auto type = RankedTensorType::get(shape, element);

  RawData data;
  if (hasExternalData(tensor)) {
    if (!readExternalData(tensor, reader, numBytes, data, error))
      return {};
  } else if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != numBytes) {
      error = "raw_data has " + std::to_string(tensor.raw_data().size()) +
              " bytes but " + std::to_string(numElements) + " elements need " +
              std::to_string(numBytes);
      return {};
    }
    data.borrowed =
        ArrayRef<char>(tensor.raw_data().data(), tensor.raw_data().size());
  } else if (numElements != 0) {
    uint64_t found = 0;
    if (!readTypedFields(tensor, numElements, elementSize, data, found)) {
      error = std::to_string(found) + " values for " +
              std::to_string(numElements) + " elements";
      return {};
    }
  }
  ArrayRef<char> bytes = data.bytes();

  // MLIR packs booleans into bits; ONNX stores one byte each.
  if (element.isInteger(1)) {
    SmallVector<bool> bits;
    bits.reserve(numElements);
    for (char byte : bytes)
      bits.push_back(byte != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  if (numBytes <= reader.resourceThreshold)
    return DenseElementsAttr::getFromRawBuffer(type, bytes);

  size_t alignment = getBlobAlignment(dataType);
  std::string blobName = getBlobName(tensor.name());
  if (data.mapped &&
      reinterpret_cast<uintptr_t>(bytes.data()) % alignment == 0) {
    // Borrow the mapping; the blob's deleter keeps it alive.
    auto *mapping = data.mapped.release();
    AsmResourceBlob blob(
        bytes, alignment, [mapping](void *, size_t, size_t) { delete mapping; },
        /*dataIsMutable=*/false);
    return DenseResourceElementsAttr::get(type, blobName, std::move(blob));
  }
  return DenseResourceElementsAttr::get(
      type, blobName,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignment,
                                                    /*dataIsMutable=*/false));
}

bool mlir::ttt::onnx::writeTensor(ElementsAttr value, pb::TensorProto &tensor,
                                  std::string &error,
                                  std::optional<ArrayRef<char>> *borrowed) {
  ShapedType type = value.getShapedType();
  int32_t dataType = getDataType(type.getElementType());
  if (dataType == pb::TensorProto::UNDEFINED) {
    llvm::raw_string_ostream(error)
        << "element type " << type.getElementType() << " has no ONNX form";
    return false;
  }
  tensor.set_data_type(dataType);
  for (int64_t dim : type.getShape())
    tensor.add_dims(dim);
  uint64_t numElements = type.getNumElements();
  size_t elementSize = getRawElementSize(dataType);
  uint64_t numBytes = numElements * elementSize;
  std::string *raw = tensor.mutable_raw_data();
  // A protobuf message holds at most 2 GiB; a splat this large would be
  // expanded into memory only to fail there.
  if (numBytes >= (uint64_t(1) << 31) && isa<DenseElementsAttr>(value)) {
    error = "a constant of " + std::to_string(numElements) +
            " elements is too large to write inline (2 GiB at most)";
    return false;
  }

  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (type.getElementType().isInteger(1)) {
      raw->reserve(numElements);
      for (bool bit : dense.getValues<bool>())
        raw->push_back(bit ? 1 : 0);
    } else if (dense.isSplat()) {
      ArrayRef<char> one = dense.getRawData();
      raw->reserve(numBytes);
      for (uint64_t i = 0; i < numElements; ++i)
        raw->append(one.data(), one.size());
    } else {
      ArrayRef<char> bytes = dense.getRawData();
      raw->assign(bytes.data(), bytes.size());
    }
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob) {
      error = "resource blob '" + resource.getRawHandle().getKey().str() +
              "' has no data (was it elided when printed?)";
      return false;
    }
    ArrayRef<char> bytes = blob->getData();
    if (borrowed && !type.getElementType().isInteger(1) &&
        bytes.size() == numBytes && numElements != 0) {
      tensor.clear_raw_data();
      *borrowed = bytes;
      return true;
    }
    raw->assign(bytes.data(), bytes.size());
  } else {
    error = "this kind of elements attribute has no ONNX form";
    return false;
  }
  if (raw->size() != numBytes) {
    error = std::to_string(raw->size()) + " bytes of data but its type " +
            "needs " + std::to_string(numBytes);
    return false;
  }
  if (numElements == 0)
    tensor.clear_raw_data();
  return true;
}
