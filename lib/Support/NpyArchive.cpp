//===- NpyArchive.cpp - NumPy .npz archives -------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A .npz file is a zip archive (PKWARE APPNOTE.TXT) of .npy members. The
// reader trusts the central directory, which always carries the real sizes;
// NumPy's local headers hold 0xffffffff placeholders plus a zip64 extra field,
// because np.savez opens every member with force_zip64=True.
//
//===----------------------------------------------------------------------===//

#include "ttt/Support/NpyArchive.h"

#include "AtomicFile.h"
#include "Inflate.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>

using namespace llvm;
namespace endian = llvm::support::endian;

namespace ttt::npy {

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

namespace {
// Record signatures and sizes of the fixed parts, from APPNOTE.TXT.
constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndSize = 22;
constexpr size_t kEnd64Size = 56;
constexpr size_t kEnd64LocatorSize = 20;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t kMax32 = 0xffffffff;
constexpr uint16_t kMax16 = 0xffff;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
/// MS-DOS date of 1980-01-01, the earliest representable; written for every
/// member so that output depends on the arrays only.
constexpr uint16_t kFixedDosDate = (1 << 5) | 1;

/// One member, as described by the central directory.
struct Entry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressedSize = 0;
  uint64_t size = 0;
  uint64_t localHeaderOffset = 0;
};

/// Little-endian reads at absolute offsets, each checked against the end of
/// the archive, so corrupt offsets become errors rather than wild reads.
class ByteReader {
public:
  explicit ByteReader(StringRef bytes) : bytes(bytes) {}

  bool has(uint64_t offset, uint64_t length) const {
    return offset <= bytes.size() && length <= bytes.size() - offset;
  }
  uint16_t u16(uint64_t offset) const {
    return endian::read16le(bytes.data() + offset);
  }
  uint32_t u32(uint64_t offset) const {
    return endian::read32le(bytes.data() + offset);
  }
  uint64_t u64(uint64_t offset) const {
    return endian::read64le(bytes.data() + offset);
  }
  StringRef slice(uint64_t offset, uint64_t length) const {
    return bytes.substr(offset, length);
  }
  uint64_t size() const { return bytes.size(); }

private:
  StringRef bytes;
};
} // namespace

static Error corrupt(const Twine &message) {
  return makeError("truncated or corrupt .npz (zip) archive: " + message);
}

/// Finds the central directory: returns its offset, size and entry count,
/// following the zip64 end record when the classic one overflowed.
static Error findCentralDirectory(const ByteReader &in, uint64_t &offset,
                                  uint64_t &size, uint64_t &count) {
  // The end record sits at the end, followed by a comment of at most 64 KiB,
  // so search backwards from the last place it can start.
  if (in.size() < kEndSize)
    return corrupt("no end-of-central-directory record");
  uint64_t end = in.size() - kEndSize;
  uint64_t stop = end > kMax16 ? end - kMax16 : 0;
  for (;; --end) {
    if (in.u32(end) == kEndSig)
      break;
    if (end == stop)
      return corrupt("no end-of-central-directory record");
  }
  if (in.u16(end + 4) != 0 || in.u16(end + 6) != 0)
    return makeError("multi-volume zip archives are not supported");
  count = in.u16(end + 10);
  size = in.u32(end + 12);
  offset = in.u32(end + 16);

  if (count == kMax16 || size == kMax32 || offset == kMax32) {
    if (end < kEnd64LocatorSize ||
        in.u32(end - kEnd64LocatorSize) != kEnd64LocatorSig)
      return corrupt("missing zip64 end-of-central-directory locator");
    uint64_t end64 = in.u64(end - kEnd64LocatorSize + 8);
    if (!in.has(end64, kEnd64Size) || in.u32(end64) != kEnd64Sig)
      return corrupt("bad zip64 end-of-central-directory record");
    count = in.u64(end64 + 32);
    size = in.u64(end64 + 40);
    offset = in.u64(end64 + 48);
  }
  if (!in.has(offset, size))
    return corrupt("the central directory lies outside the file");
  if (count > size / kCentralHeaderSize)
    return corrupt("the central directory is too small for its entries");
  return Error::success();
}

/// Applies a zip64 extended-information field: it holds, in this order, only
/// those of the sizes and the offset whose 32-bit fields are saturated.
static Error applyZip64Extra(StringRef extra, Entry &entry) {
  while (extra.size() >= 4) {
    uint16_t id = endian::read16le(extra.data());
    uint16_t length = endian::read16le(extra.data() + 2);
    if (extra.size() - 4 < length)
      return corrupt("bad extra field in member " + quote(entry.name));
    StringRef data = extra.substr(4, length);
    extra = extra.drop_front(4 + length);
    if (id != kZip64ExtraId)
      continue;
    for (uint64_t *field :
         {&entry.size, &entry.compressedSize, &entry.localHeaderOffset}) {
      if (*field != kMax32)
        continue;
      if (data.size() < 8)
        return corrupt("short zip64 field in member " + quote(entry.name));
      *field = endian::read64le(data.data());
      data = data.drop_front(8);
    }
  }
  return Error::success();
}

static Expected<std::vector<Entry>> readCentralDirectory(const ByteReader &in) {
  uint64_t offset, size, count;
  if (Error err = findCentralDirectory(in, offset, size, count))
    return std::move(err);
  std::vector<Entry> entries;
  uint64_t pos = offset, end = offset + size;
  for (uint64_t i = 0; i < count; ++i) {
    if (end - pos < kCentralHeaderSize || in.u32(pos) != kCentralHeaderSig)
      return corrupt("bad central directory entry " + Twine(i));
    uint16_t nameLength = in.u16(pos + 28);
    uint16_t extraLength = in.u16(pos + 30);
    uint16_t commentLength = in.u16(pos + 32);
    uint64_t variable = uint64_t(nameLength) + extraLength + commentLength;
    if (end - pos - kCentralHeaderSize < variable)
      return corrupt("bad central directory entry " + Twine(i));
    Entry entry;
    entry.flags = in.u16(pos + 8);
    entry.method = in.u16(pos + 10);
    entry.crc = in.u32(pos + 16);
    entry.compressedSize = in.u32(pos + 20);
    entry.size = in.u32(pos + 24);
    entry.localHeaderOffset = in.u32(pos + 42);
    entry.name = in.slice(pos + kCentralHeaderSize, nameLength).str();
    if (Error err = applyZip64Extra(
            in.slice(pos + kCentralHeaderSize + nameLength, extraLength),
            entry))
      return std::move(err);
    entries.push_back(std::move(entry));
    pos += kCentralHeaderSize + variable;
  }
  return std::move(entries);
}

/// Locates a member's data through its local header, whose own sizes are not
/// used (see the file comment).
static Expected<StringRef> getMemberData(const ByteReader &in,
                                         const Entry &entry) {
  uint64_t pos = entry.localHeaderOffset;
  if (!in.has(pos, kLocalHeaderSize) || in.u32(pos) != kLocalHeaderSig)
    return corrupt("bad local header for member " + quote(entry.name));
  uint64_t dataOffset =
      pos + kLocalHeaderSize + in.u16(pos + 26) + in.u16(pos + 28);
  if (!in.has(dataOffset, entry.compressedSize))
    return corrupt("member " + quote(entry.name) +
                   " extends past the end of the "
                   "file");
  return in.slice(dataOffset, entry.compressedSize);
}

namespace {
/// Heap memory that may fail to allocate (sizes come from the file).
struct MallocBuffer {
  char *data = nullptr;
  ~MallocBuffer() { std::free(data); }
};
} // namespace

/// Deflate cannot compress better than about 1032:1, so a larger declared
/// size means a corrupt archive, not a big array; checked before allocating.
static constexpr uint64_t kMaxDeflateRatio = 1032;

/// Returns the member's uncompressed bytes, in `storage` when they had to be
/// inflated, after checking the CRC.
static Expected<StringRef>
extractMember(const ByteReader &in, const Entry &entry, MallocBuffer &storage) {
  if (entry.flags & 1)
    return makeError("member " + quote(entry.name) + " is encrypted");
  Expected<StringRef> data = getMemberData(in, entry);
  if (!data)
    return data.takeError();
  StringRef bytes;
  if (entry.method == kMethodStored) {
    if (entry.compressedSize != entry.size)
      return corrupt("stored member " + quote(entry.name) +
                     " has different compressed and uncompressed sizes");
    bytes = *data;
  } else if (entry.method == kMethodDeflate) {
    if (entry.size / kMaxDeflateRatio > entry.compressedSize + 1)
      return corrupt("member " + quote(entry.name) + " declares " +
                     Twine(entry.size) + " bytes from " +
                     Twine(entry.compressedSize) + " compressed");
    storage.data =
        static_cast<char *>(std::malloc(std::max<uint64_t>(entry.size, 1)));
    if (!storage.data)
      return makeError("cannot allocate " + Twine(entry.size) +
                       " bytes for member " + quote(entry.name));
    MutableArrayRef<char> out(storage.data, entry.size);
    if (Error err = inflateRaw(*data, out))
      return makeError("member " + quote(entry.name) + ": " +
                       toString(std::move(err)));
    bytes = StringRef(storage.data, entry.size);
  } else {
    return makeError("member " + quote(entry.name) +
                     " uses compression method " + Twine(entry.method) +
                     "; only stored (0) and deflate (8) are supported");
  }
  if (crc32(arrayRefFromStringRef(bytes)) != entry.crc)
    return corrupt("CRC mismatch in member " + quote(entry.name));
  return bytes;
}

bool isDeflateAvailable() { return isInflateAvailable(); }

Expected<std::vector<NamedArray>> parseNpz(StringRef bytes) {
  ByteReader in(bytes);
  Expected<std::vector<Entry>> entries = readCentralDirectory(in);
  if (!entries)
    return entries.takeError();
  std::vector<NamedArray> arrays;
  StringSet<> seen;
  for (const Entry &entry : *entries) {
    StringRef name(entry.name);
    if (!name.consume_back(".npy"))
      return makeError("member " + quote(entry.name) +
                       " is not a .npy array (its name must end in .npy)");
    if (!seen.insert(name).second)
      return makeError("duplicate member " + quote(entry.name));
    MallocBuffer storage;
    Expected<StringRef> member = extractMember(in, entry, storage);
    if (!member)
      return member.takeError();
    Expected<Array> array = parseNpy(*member);
    if (!array)
      return makeError("member " + quote(entry.name) + ": " +
                       toString(array.takeError()));
    arrays.push_back({name.str(), std::move(*array)});
  }
  return std::move(arrays);
}

static Expected<std::unique_ptr<MemoryBuffer>> readFile(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read: " + buffer.getError().message());
  return std::move(*buffer);
}

Expected<std::vector<NamedArray>> readNpzFile(StringRef path) {
  Expected<std::unique_ptr<MemoryBuffer>> buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  return parseNpz((*buffer)->getBuffer());
}

Expected<std::vector<NamedArray>> readArraysFile(StringRef path) {
  Expected<std::unique_ptr<MemoryBuffer>> buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.starts_with("\x93NUMPY")) {
    Expected<Array> array = parseNpy(bytes);
    if (!array)
      return array.takeError();
    std::vector<NamedArray> arrays;
    arrays.push_back({"", std::move(*array)});
    return std::move(arrays);
  }
  // Zip archives start with a local header, or with the end record when
  // empty (np.savez with no arrays).
  if (bytes.starts_with("PK\x03\x04") || bytes.starts_with("PK\x05\x06"))
    return parseNpz(bytes);
  if (bytes.empty())
    return makeError("empty file; expected a .npy or .npz file");
  return makeError("not a .npy or .npz file (unrecognised leading bytes)");
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {
/// Little-endian appends to a byte string.
struct ByteWriter {
  std::string bytes;
  void u16(uint16_t v) {
    char b[2];
    endian::write16le(b, v);
    bytes.append(b, 2);
  }
  void u32(uint32_t v) {
    char b[4];
    endian::write32le(b, v);
    bytes.append(b, 4);
  }
  void u64(uint64_t v) {
    char b[8];
    endian::write64le(b, v);
    bytes.append(b, 8);
  }
};

/// What the central directory needs to know about a written member.
struct WrittenMember {
  std::string name;
  uint32_t crc;
  uint64_t size;
  uint64_t offset;
};
} // namespace

static uint32_t saturate32(uint64_t value) {
  return value >= kMax32 ? kMax32 : static_cast<uint32_t>(value);
}

void writeNpz(raw_ostream &os, ArrayRef<NamedArrayRef> arrays) {
  std::vector<WrittenMember> members;
  uint64_t offset = 0;
  for (const NamedArrayRef &named : arrays) {
    const Array &array = *named.array;
    std::string npyHeader = makeNpyHeader(array.getDType(), array.getShape());
    StringRef data(array.getData(), array.getNumBytes());
    WrittenMember member{(named.name + ".npy").str(),
                         crc32(crc32(arrayRefFromStringRef(npyHeader)),
                               arrayRefFromStringRef(data)),
                         npyHeader.size() + data.size(), offset};
    bool zip64 = member.size >= kMax32;

    ByteWriter header;
    header.u32(kLocalHeaderSig);
    header.u16(zip64 ? 45 : 20); // Version needed: 4.5 adds zip64.
    header.u16(0);               // Flags.
    header.u16(kMethodStored);
    header.u16(0); // Time.
    header.u16(kFixedDosDate);
    header.u32(member.crc);
    header.u32(saturate32(member.size)); // Compressed size.
    header.u32(saturate32(member.size));
    header.u16(member.name.size());
    header.u16(zip64 ? 20 : 0);
    header.bytes += member.name;
    if (zip64) {
      header.u16(kZip64ExtraId);
      header.u16(16);
      header.u64(member.size);
      header.u64(member.size);
    }
    os << header.bytes << npyHeader << data;
    offset += header.bytes.size() + member.size;
    members.push_back(std::move(member));
  }

  uint64_t directoryOffset = offset;
  ByteWriter directory;
  for (const WrittenMember &member : members) {
    bool bigSize = member.size >= kMax32;
    bool bigOffset = member.offset >= kMax32;
    uint16_t extraLength = (bigSize ? 16 : 0) + (bigOffset ? 8 : 0);
    directory.u32(kCentralHeaderSig);
    directory.u16((3 << 8) | 45); // Made by: Unix, version 4.5.
    directory.u16(bigSize || bigOffset ? 45 : 20);
    directory.u16(0);
    directory.u16(kMethodStored);
    directory.u16(0);
    directory.u16(kFixedDosDate);
    directory.u32(member.crc);
    directory.u32(saturate32(member.size));
    directory.u32(saturate32(member.size));
    directory.u16(member.name.size());
    directory.u16(extraLength ? extraLength + 4 : 0);
    directory.u16(0);          // Comment length.
    directory.u16(0);          // Disk number.
    directory.u16(0);          // Internal attributes.
    directory.u32(0644 << 16); // External attributes: Unix rw-r--r--.
    directory.u32(saturate32(member.offset));
    directory.bytes += member.name;
    if (extraLength) {
      directory.u16(kZip64ExtraId);
      directory.u16(extraLength);
      if (bigSize) {
        directory.u64(member.size);
        directory.u64(member.size);
      }
      if (bigOffset)
        directory.u64(member.offset);
    }
  }
  uint64_t directorySize = directory.bytes.size();
  uint64_t count = members.size();

  ByteWriter end;
  if (count >= kMax16 || directorySize >= kMax32 || directoryOffset >= kMax32) {
    uint64_t end64Offset = directoryOffset + directorySize;
    end.u32(kEnd64Sig);
    end.u64(kEnd64Size - 12); // Size of the rest of this record.
    end.u16((3 << 8) | 45);
    end.u16(45);
    end.u32(0);
    end.u32(0);
    end.u64(count);
    end.u64(count);
    end.u64(directorySize);
    end.u64(directoryOffset);
    end.u32(kEnd64LocatorSig);
    end.u32(0);
    end.u64(end64Offset);
    end.u32(1); // Total number of disks.
  }
  end.u32(kEndSig);
  end.u16(0);
  end.u16(0);
  end.u16(count >= kMax16 ? kMax16 : count);
  end.u16(count >= kMax16 ? kMax16 : count);
  end.u32(saturate32(directorySize));
  end.u32(saturate32(directoryOffset));
  end.u16(0); // Comment length.
  os << directory.bytes << end.bytes;
}

Error writeNpzFile(StringRef path, ArrayRef<NamedArrayRef> arrays) {
  return writeFileAtomically(path,
                             [&](raw_ostream &os) { writeNpz(os, arrays); });
}

} // namespace ttt::npy
