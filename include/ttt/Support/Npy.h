//===- Npy.h - dense arrays and the NumPy .npy format -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A dense, C-ordered array with aligned storage, and reading and writing it in
// NumPy's .npy format (versions 1.0, 2.0 and 3.0 of the header). Only the
// element types the ttt runtime passes to compiled code are supported:
// float32, float64, int32 and int64, little-endian, C order.
//
// This code needs LLVMSupport only (no MLIR types), so that the command-line
// tools and the Python bindings can share it. Errors are llvm::Error values
// whose message names the problem but not the file: callers prefix it.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_SUPPORT_NPY_H
#define TTT_SUPPORT_NPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace ttt::npy {

/// Element types of arrays.
enum class DType : uint8_t { F32, F64, I32, I64 };

/// Size of one element in bytes.
size_t getElementSize(DType dtype);
/// NumPy's name of the type: "float32", "float64", "int32", "int64".
llvm::StringRef getDTypeName(DType dtype);
/// MLIR's name of the type: "f32", "f64", "i32", "i64".
llvm::StringRef getMLIRTypeName(DType dtype);
/// The .npy descriptor: "<f4", "<f8", "<i4", "<i8".
llvm::StringRef getDescr(DType dtype);
/// Parses a .npy descriptor such as "<f4" (also "=f4" and "f4", which mean
/// the native, little-endian order here). Returns std::nullopt for anything
/// else, including big-endian and structured types.
std::optional<DType> parseDescr(llvm::StringRef descr);

/// Formats a shape the way MLIR writes tensor shapes: "2x3x4", or "scalar"
/// for rank 0.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// `text` in single quotes, with quotes, backslashes and bytes outside
/// printable ASCII escaped (\\xx), so names read from a (possibly corrupt)
/// file are safe to put in a one-line message.
std::string quote(llvm::StringRef text);

/// Number of elements of `shape`, or std::nullopt if a dimension is negative
/// or the element count times `elementSize` overflows.
std::optional<int64_t> getNumElements(llvm::ArrayRef<int64_t> shape,
                                      size_t elementSize);

/// A dense, C-ordered array that owns 64-byte-aligned storage, so compiled
/// code can use it in place. Move-only.
class Array {
public:
  Array() = default;
  Array(Array &&other) noexcept;
  Array &operator=(Array &&other) noexcept;
  Array(const Array &) = delete;
  Array &operator=(const Array &) = delete;
  ~Array();

  /// Allocates a zero-filled array. Fails (instead of aborting) when the
  /// shape is invalid or the memory is not available, since shapes come from
  /// user input: an array of 64 MiB or more is checked against the memory
  /// the system can still give (ttt::getAvailableMemory) first, since Linux
  /// would overcommit it and end the process while zeroing it.
  static llvm::Expected<Array> create(DType dtype,
                                      llvm::ArrayRef<int64_t> shape);

  /// Deep copy (arrays do not copy implicitly because they can be large).
  llvm::Expected<Array> clone() const;

  DType getDType() const { return dtype; }
  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getRank() const { return static_cast<int64_t>(shape.size()); }
  int64_t getNumElements() const { return numElements; }
  size_t getNumBytes() const {
    return static_cast<size_t>(numElements) * getElementSize(dtype);
  }
  char *getData() { return data; }
  const char *getData() const { return data; }

  /// Typed views. T must match the dtype (checked by assertion).
  template <typename T> llvm::MutableArrayRef<T> getValues() {
    assert(sizeof(T) == getElementSize(dtype) && "element size mismatch");
    return {reinterpret_cast<T *>(data), static_cast<size_t>(numElements)};
  }
  template <typename T> llvm::ArrayRef<T> getValues() const {
    assert(sizeof(T) == getElementSize(dtype) && "element size mismatch");
    return {reinterpret_cast<const T *>(data),
            static_cast<size_t>(numElements)};
  }

private:
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 4> shape;
  int64_t numElements = 0;
  char *data = nullptr;
};

/// What a .npy header says: the element type and shape of the array, and
/// where its data starts.
struct NpyHeader {
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t> shape;
  /// Offset of the data from the start of the file: the header's size.
  uint64_t dataOffset = 0;
  /// Bytes of data the shape needs (parseNpyHeader checks that the count
  /// does not overflow).
  uint64_t getDataSize() const;
};

/// The bytes at the start of a .npy file that give the header's size.
constexpr size_t kNpyPrefixSize = 12;

/// The size of the header (the data offset) of the .npy file that starts
/// with `prefix`: its first kNpyPrefixSize bytes, or all of a shorter file.
llvm::Expected<uint64_t> getNpyHeaderSize(llvm::StringRef prefix);

/// Parses the header at the start of `bytes`, which need not hold more than
/// the header: the dtype, the order and the shape are checked, the data is
/// not. Nothing is allocated for the array, so its size can be checked first.
llvm::Expected<NpyHeader> parseNpyHeader(llvm::StringRef bytes);

/// Checks that `dataSize`, the bytes after the header, is what `header`
/// needs.
llvm::Error checkNpyDataSize(const NpyHeader &header, uint64_t dataSize);

/// Parses a whole .npy file image. The data size must match the header
/// exactly, so truncated files are reported rather than zero-padded.
llvm::Expected<Array> parseNpy(llvm::StringRef bytes);

/// The .npy header (magic, version, length and the padded dictionary) that
/// precedes the raw data of an array of `dtype` and `shape`.
std::string makeNpyHeader(DType dtype, llvm::ArrayRef<int64_t> shape);

/// Writes `array` in .npy format.
void writeNpy(llvm::raw_ostream &os, const Array &array);

/// Reads a .npy file.
llvm::Expected<Array> readNpyFile(llvm::StringRef path);

/// Writes a .npy file atomically: a temporary file in the same directory is
/// renamed over `path` once complete, so failures leave no partial file.
llvm::Error writeNpyFile(llvm::StringRef path, const Array &array);

} // namespace ttt::npy

#endif // TTT_SUPPORT_NPY_H
