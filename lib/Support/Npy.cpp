//===- Npy.cpp - dense arrays and the NumPy .npy format -------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The .npy format: the magic "\x93NUMPY", a version, a little-endian header
// length, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline, then the raw data.
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//
//===----------------------------------------------------------------------===//

#include "ttt/Support/Npy.h"

#include "AtomicFile.h"
#include "ttt/Support/Memory.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <iterator>

using namespace llvm;

namespace ttt::npy {

static constexpr StringLiteral kMagic("\x93NUMPY");
/// Alignment of array storage: a cache line, which is also what MLIR's
/// bufferization uses for its own allocations.
static constexpr size_t kAlignment = 64;
/// Arrays from this size on are checked against the available memory
/// before they are allocated (smaller ones are not worth reading
/// /proc/meminfo for).
static constexpr size_t kCheckedAllocation = size_t(64) << 20;

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Element types and shapes
//===----------------------------------------------------------------------===//

namespace {
/// What each element type is called where it is named, and its size.
struct DTypeInfo {
  size_t size;
  StringLiteral numpy, mlir, descr;
};
} // namespace

/// Indexed by DType.
static constexpr DTypeInfo kDTypes[] = {
    {4, "float32", "f32", "<f4"},
    {8, "float64", "f64", "<f8"},
    {4, "int32", "i32", "<i4"},
    {8, "int64", "i64", "<i8"},
};
static_assert(static_cast<size_t>(DType::I64) + 1 == std::size(kDTypes),
              "one row per DType");

static const DTypeInfo &info(DType dtype) {
  return kDTypes[static_cast<size_t>(dtype)];
}

size_t getElementSize(DType dtype) { return info(dtype).size; }
StringRef getDTypeName(DType dtype) { return info(dtype).numpy; }
StringRef getMLIRTypeName(DType dtype) { return info(dtype).mlir; }
StringRef getDescr(DType dtype) { return info(dtype).descr; }

std::optional<DType> parseDescr(StringRef descr) {
  // '=' is native order; the runtime only targets little-endian hosts, so it
  // and a missing order character mean the same as '<'.
  static_assert(llvm::endianness::native == llvm::endianness::little,
                "the npy reader assumes a little-endian host");
  if (!descr.empty() && (descr.front() == '<' || descr.front() == '='))
    descr = descr.drop_front();
  return StringSwitch<std::optional<DType>>(descr)
      .Case("f4", DType::F32)
      .Case("f8", DType::F64)
      .Case("i4", DType::I32)
      .Case("i8", DType::I64)
      .Default(std::nullopt);
}

std::string formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string result;
  raw_string_ostream os(result);
  interleave(shape, os, "x");
  return result;
}

std::string quote(StringRef text) {
  std::string result = "'";
  raw_string_ostream os(result);
  printEscapedString(text, os);
  os << "'";
  return result;
}

std::optional<int64_t> getNumElements(ArrayRef<int64_t> shape,
                                      size_t elementSize) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || MulOverflow(count, dim, count))
      return std::nullopt;
  }
  int64_t bytes;
  if (MulOverflow(count, static_cast<int64_t>(elementSize), bytes))
    return std::nullopt;
  return count;
}

//===----------------------------------------------------------------------===//
// Array
//===----------------------------------------------------------------------===//

Array::Array(Array &&other) noexcept
    : dtype(other.dtype), shape(std::move(other.shape)),
      numElements(other.numElements), data(other.data) {
  other.numElements = 0;
  other.data = nullptr;
}

Array &Array::operator=(Array &&other) noexcept {
  if (this == &other)
    return *this;
  std::free(data);
  dtype = other.dtype;
  shape = std::move(other.shape);
  numElements = other.numElements;
  data = other.data;
  other.numElements = 0;
  other.data = nullptr;
  return *this;
}

Array::~Array() { std::free(data); }

Expected<Array> Array::create(DType dtype, ArrayRef<int64_t> shape) {
  std::optional<int64_t> count =
      npy::getNumElements(shape, getElementSize(dtype));
  if (!count)
    return makeError("invalid shape " + formatShape(shape) +
                     ": negative or too large");
  size_t bytes = static_cast<size_t>(*count) * getElementSize(dtype);
  // aligned_alloc wants a multiple of the alignment; allocate at least one
  // block so empty arrays still have a valid, freeable pointer.
  size_t allocBytes = alignTo(std::max<size_t>(bytes, 1), kAlignment);
  if (allocBytes < bytes)
    return makeError("invalid shape " + formatShape(shape) + ": too large");
  // Linux lends more than it has; zeroing would then end the process.
  if (bytes >= kCheckedAllocation)
    if (std::optional<std::string> problem = checkFitsInMemory(bytes))
      return makeError("cannot allocate " + formatBytes(bytes) + " for a " +
                       getDTypeName(dtype) + " array of shape " +
                       formatShape(shape) + ": it " + *problem);
  void *memory = std::aligned_alloc(kAlignment, allocBytes);
  if (!memory)
    return makeError("cannot allocate " + Twine(bytes) + " bytes for a " +
                     getDTypeName(dtype) + " array of shape " +
                     formatShape(shape));
  std::memset(memory, 0, allocBytes);
  Array array;
  array.dtype = dtype;
  array.shape.assign(shape.begin(), shape.end());
  array.numElements = *count;
  array.data = static_cast<char *>(memory);
  return std::move(array);
}

Expected<Array> Array::clone() const {
  Expected<Array> copy = create(dtype, shape);
  if (!copy)
    return copy.takeError();
  if (getNumBytes())
    std::memcpy(copy->getData(), data, getNumBytes());
  return copy;
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

namespace {
/// The fields of a .npy header.
struct Header {
  std::string descr;
  bool fortranOrder = false;
  SmallVector<int64_t> shape;
};

/// A recursive-descent parser for the header dictionary. The format is a
/// Python literal, but NumPy only ever writes strings, booleans and a tuple of
/// integers, so that is all this accepts.
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : text(text) {}

  Expected<Header> parse() {
    Header header;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    if (!consume('{'))
      return fail("expected '{'");
    while (!consume('}')) {
      std::string key;
      if (Error err = parseString(key))
        return std::move(err);
      if (!consume(':'))
        return fail("expected ':' after " + quote(key));
      if (key == "descr") {
        skipSpace();
        if (!text.empty() && (text.front() == '[' || text.front() == '('))
          return fail("structured dtypes are not supported");
        if (Error err = parseString(header.descr))
          return std::move(err);
        seenDescr = true;
      } else if (key == "fortran_order") {
        if (Error err = parseBool(header.fortranOrder))
          return std::move(err);
        seenOrder = true;
      } else if (key == "shape") {
        if (Error err = parseShape(header.shape))
          return std::move(err);
        seenShape = true;
      } else {
        return fail("unknown key " + quote(key));
      }
      // Entries are separated by commas; one may trail the last entry.
      if (!consume(',')) {
        if (!consume('}'))
          return fail("expected ',' or '}'");
        break;
      }
    }
    skipSpace();
    if (!text.empty())
      return fail("unexpected text after the dictionary");
    if (!seenDescr || !seenOrder || !seenShape)
      return fail("'descr', 'fortran_order' and 'shape' are all required");
    return std::move(header);
  }

private:
  void skipSpace() { text = text.ltrim(" \t\r\n"); }

  bool consume(char c) {
    skipSpace();
    if (text.empty() || text.front() != c)
      return false;
    text = text.drop_front();
    return true;
  }

  Error fail(const Twine &message) {
    return makeError("corrupt .npy header: " + message);
  }

  Error parseString(std::string &out) {
    skipSpace();
    if (text.empty() || (text.front() != '\'' && text.front() != '"'))
      return fail("expected a string");
    char quote = text.front();
    size_t end = text.find(quote, 1);
    if (end == StringRef::npos)
      return fail("unterminated string");
    out = text.slice(1, end).str();
    text = text.drop_front(end + 1);
    return Error::success();
  }

  Error parseBool(bool &out) {
    skipSpace();
    if (text.consume_front("True"))
      out = true;
    else if (text.consume_front("False"))
      out = false;
    else
      return fail("expected True or False");
    return Error::success();
  }

  Error parseShape(SmallVectorImpl<int64_t> &out) {
    if (!consume('('))
      return fail("expected a shape tuple");
    while (!consume(')')) {
      skipSpace();
      size_t digits = text.find_first_not_of("0123456789");
      if (digits == 0 || text.empty())
        return fail("expected a dimension size");
      int64_t dim;
      if (text.take_front(digits).getAsInteger(10, dim))
        return fail("dimension size out of range");
      out.push_back(dim);
      text = text.drop_front(std::min(digits, text.size()));
      // Python 2 wrote longs with an 'L' suffix.
      text.consume_front("L");
      if (!consume(',')) {
        if (!consume(')'))
          return fail("expected ',' or ')' in the shape");
        break;
      }
    }
    return Error::success();
  }

  StringRef text;
};
} // namespace

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

uint64_t NpyHeader::getDataSize() const {
  return static_cast<uint64_t>(*getNumElements(shape, getElementSize(dtype))) *
         getElementSize(dtype);
}

Expected<uint64_t> getNpyHeaderSize(StringRef prefix) {
  if (!prefix.starts_with(kMagic))
    return makeError("not a .npy file (no \\x93NUMPY magic)");
  if (prefix.size() < 10)
    return makeError("truncated .npy header");
  uint8_t major = prefix[6];
  if (major == 1)
    return 10 + uint64_t(support::endian::read16le(prefix.data() + 8));
  if (major == 2 || major == 3) {
    if (prefix.size() < 12)
      return makeError("truncated .npy header");
    return 12 + uint64_t(support::endian::read32le(prefix.data() + 8));
  }
  return makeError("unsupported .npy format version " +
                   Twine(static_cast<unsigned>(major)));
}

Expected<NpyHeader> parseNpyHeader(StringRef bytes) {
  Expected<uint64_t> dataOffset = getNpyHeaderSize(bytes);
  if (!dataOffset)
    return dataOffset.takeError();
  size_t headerLength = *dataOffset - (bytes[6] == 1 ? 10 : 12);
  if (bytes.size() < *dataOffset)
    return makeError("truncated .npy header (" + Twine(headerLength) +
                     " bytes announced, " + Twine(bytes.size()) +
                     " bytes in the file)");

  Expected<Header> header =
      HeaderParser(bytes.slice(*dataOffset - headerLength, *dataOffset))
          .parse();
  if (!header)
    return header.takeError();
  std::optional<DType> dtype = parseDescr(header->descr);
  if (!dtype)
    return makeError("unsupported dtype " + quote(header->descr) +
                     " (supported: '<f4' float32, '<f8' float64, '<i4' "
                     "int32, '<i8' int64)");
  if (header->fortranOrder)
    return makeError("Fortran-ordered arrays are not supported (save a "
                     "C-ordered copy, e.g. np.ascontiguousarray)");
  // A corrupt header may claim more bytes than a size can count.
  if (!getNumElements(header->shape, getElementSize(*dtype)))
    return makeError("corrupt .npy header: shape " +
                     formatShape(header->shape) + " is too large");
  NpyHeader result;
  result.dtype = *dtype;
  result.shape.assign(header->shape.begin(), header->shape.end());
  result.dataOffset = *dataOffset;
  return std::move(result);
}

Error checkNpyDataSize(const NpyHeader &header, uint64_t dataSize) {
  uint64_t needed = header.getDataSize();
  if (dataSize == needed)
    return Error::success();
  return makeError(Twine(dataSize < needed ? "truncated .npy data: "
                                           : "corrupt .npy data: ") +
                   "a " + getDTypeName(header.dtype) + " array of shape " +
                   formatShape(header.shape) + " needs " + Twine(needed) +
                   " bytes, the file has " + Twine(dataSize));
}

Expected<Array> parseNpy(StringRef bytes) {
  Expected<NpyHeader> header = parseNpyHeader(bytes);
  if (!header)
    return header.takeError();
  // Checked before allocating: a corrupt header may claim terabytes.
  uint64_t available = bytes.size() - header->dataOffset;
  if (Error err = checkNpyDataSize(*header, available))
    return std::move(err);
  Expected<Array> array = Array::create(header->dtype, header->shape);
  if (!array)
    return array.takeError();
  if (available)
    std::memcpy(array->getData(), bytes.data() + header->dataOffset, available);
  return array;
}

Expected<Array> readNpyFile(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read: " + buffer.getError().message());
  return parseNpy((*buffer)->getBuffer());
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::string makeNpyHeader(DType dtype, ArrayRef<int64_t> shape) {
  std::string dict;
  raw_string_ostream os(dict);
  os << "{'descr': '" << getDescr(dtype) << "', 'fortran_order': False, "
     << "'shape': (";
  for (size_t i = 0, e = shape.size(); i < e; ++i)
    os << (i ? ", " : "") << shape[i];
  // A one-element Python tuple needs its trailing comma.
  os << (shape.size() == 1 ? ",), }" : "), }");

  // Like NumPy, pad with spaces and end with a newline so that the data
  // starts at a multiple of 64 bytes; use version 2.0 only when the header
  // does not fit version 1.0's 16-bit length.
  bool version1 = alignTo(10 + dict.size() + 1, kAlignment) - 10 <= 0xffff;
  size_t prefix = version1 ? 10 : 12;
  size_t total = alignTo(prefix + dict.size() + 1, kAlignment);
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');

  std::string header(kMagic);
  header.push_back(static_cast<char>(version1 ? 1 : 2));
  header.push_back(0);
  char length[4];
  if (version1) {
    support::endian::write16le(length, static_cast<uint16_t>(dict.size()));
    header.append(length, 2);
  } else {
    support::endian::write32le(length, static_cast<uint32_t>(dict.size()));
    header.append(length, 4);
  }
  return header + dict;
}

void writeNpy(raw_ostream &os, const Array &array) {
  os << makeNpyHeader(array.getDType(), array.getShape());
  os.write(array.getData(), array.getNumBytes());
}

Error writeNpyFile(StringRef path, const Array &array) {
  return writeFileAtomically(path, [&](raw_ostream &os) {
    writeNpy(os, array);
    return Error::success();
  });
}

} // namespace ttt::npy
