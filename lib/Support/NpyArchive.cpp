//===- NpyArchive.cpp - NumPy .npz archives -------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A .npz file is a zip archive of .npy members; libzip reads and writes the
// archive (zip64 records, deflate, CRCs) and this file only maps members to
// arrays and libzip's errors to one-line messages.
//
//===----------------------------------------------------------------------===//

#include "ttt/Support/NpyArchive.h"

#include "AtomicFile.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <zip.h>

#include <algorithm>
#include <cstdlib>

using namespace llvm;

namespace ttt::npy {

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

static Error corrupt(const Twine &message) {
  return makeError("truncated or corrupt .npz (zip) archive: " + message);
}

namespace {
/// A libzip error record, released with its scope.
struct ZipError {
  zip_error_t error;
  ZipError() { zip_error_init(&error); }
  ~ZipError() { zip_error_fini(&error); }
  ZipError(const ZipError &) = delete;
  ZipError &operator=(const ZipError &) = delete;
};

/// Heap memory that may fail to allocate (sizes come from the file).
struct MallocBuffer {
  char *data = nullptr;
  ~MallocBuffer() { std::free(data); }
};
} // namespace

/// libzip's message for `error`, starting in lower case ("not a zip
/// archive") to continue our sentences; acronyms ("CRC error") stay.
static std::string describe(zip_error_t *error) {
  std::string text = zip_error_strerror(error);
  if (text.size() > 1 && isUpper(text[0]) && isLower(text[1]))
    text[0] = toLower(text[0]);
  return text;
}

/// The error for a failed libzip read of the archive, or of `member` if it
/// is not empty. The bytes are in memory, so almost every libzip failure
/// means they are damaged; the exceptions are named without the
/// corrupt-archive wording.
static Error readFailure(zip_error_t *error, const std::string &member = "") {
  std::string prefix = member.empty() ? "" : member + ": ";
  switch (zip_error_code_zip(error)) {
  case ZIP_ER_CRC:
    return corrupt("CRC mismatch in " + member);
  case ZIP_ER_MEMORY:
  case ZIP_ER_MULTIDISK:
  case ZIP_ER_COMPNOTSUPP:
  case ZIP_ER_ENCRNOTSUPP:
  case ZIP_ER_NOPASSWD:
  case ZIP_ER_WRONGPASSWD:
    return makeError(prefix + describe(error));
  default:
    return corrupt(prefix + describe(error));
  }
}

/// Opens an archive in memory: over `size` bytes at `data`, or empty (null
/// `data`) to write one. The archive owns its source, which `source`
/// receives if given. Returns null, with `error` set, on failure.
static zip_t *openArchive(const void *data, zip_uint64_t size, int flags,
                          zip_error_t *error, zip_source_t **source = nullptr) {
  zip_source_t *buffer =
      zip_source_buffer_create(data, size, /*freep=*/0, error);
  if (!buffer)
    return nullptr;
  zip_t *archive = zip_open_from_source(buffer, flags, error);
  if (!archive) {
    zip_source_free(buffer);
    return nullptr;
  }
  if (source)
    *source = buffer;
  return archive;
}

/// Deflate cannot compress better than about 1032:1, so a larger declared
/// size means a corrupt archive, not a big array; checked before allocating.
static constexpr uint64_t kMaxDeflateRatio = 1032;

/// Reads member `index`, described by `stat`, and parses it as a .npy
/// array.
static Expected<Array> readMember(zip_t *archive, zip_uint64_t index,
                                  const zip_stat_t &stat) {
  std::string member = "member " + quote(stat.name);
  if (stat.encryption_method != ZIP_EM_NONE)
    return makeError(member + " is encrypted");
  if (!zip_compression_method_supported(stat.comp_method, /*compress=*/0))
    return makeError(member + " uses compression method " +
                     Twine(stat.comp_method) +
                     ", which this build of libzip cannot read");
  if (stat.comp_method == ZIP_CM_STORE && stat.comp_size != stat.size)
    return corrupt("stored " + member +
                   " has different compressed and uncompressed sizes");
  if (stat.comp_method == ZIP_CM_DEFLATE &&
      stat.size / kMaxDeflateRatio > stat.comp_size + 1)
    return corrupt(member + " declares " + Twine(stat.size) + " bytes from " +
                   Twine(stat.comp_size) + " compressed");

  MallocBuffer storage;
  storage.data =
      static_cast<char *>(std::malloc(std::max<uint64_t>(stat.size, 1)));
  if (!storage.data)
    return makeError("cannot allocate " + Twine(stat.size) + " bytes for " +
                     member);
  zip_file_t *file = zip_fopen_index(archive, index, 0);
  if (!file)
    return readFailure(zip_get_error(archive), member);
  scope_exit closeFile([&] { zip_fclose(file); });
  // Reads one byte past the declared size: libzip checks the CRC (and finds
  // longer data) only when a read reaches the end of the member.
  uint64_t done = 0;
  for (;;) {
    char spare;
    bool full = done == stat.size;
    zip_int64_t got = zip_fread(file, full ? &spare : storage.data + done,
                                full ? 1 : stat.size - done);
    if (got < 0)
      return readFailure(zip_file_get_error(file), member);
    if (got == 0)
      break;
    if (full)
      return corrupt(member + " holds more than the declared " +
                     Twine(stat.size) + " bytes");
    done += got;
  }
  if (done != stat.size)
    return corrupt(member + " holds " + Twine(done) +
                   " bytes, the archive declares " + Twine(stat.size));

  Expected<Array> array = parseNpy(StringRef(storage.data, stat.size));
  if (!array)
    return makeError(member + ": " + toString(array.takeError()));
  return array;
}

Expected<std::vector<NamedArray>> parseNpz(StringRef bytes) {
  // libzip opens an empty file as an empty archive; np.load does not.
  if (bytes.empty())
    return corrupt("empty file");
  ZipError error;
  zip_t *archive =
      openArchive(bytes.data(), bytes.size(), ZIP_RDONLY, &error.error);
  if (!archive)
    return readFailure(&error.error);
  scope_exit discardArchive([&] { zip_discard(archive); });

  zip_int64_t count = zip_get_num_entries(archive, 0);
  std::vector<NamedArray> arrays;
  StringSet<> seen;
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t stat;
    // Raw names: the bytes np.savez wrote, whatever the encoding flag says.
    if (zip_stat_index(archive, i, ZIP_FL_ENC_RAW, &stat) < 0)
      return readFailure(zip_get_error(archive));
    if (!(stat.valid & ZIP_STAT_NAME))
      return corrupt("entry " + Twine(i) + " has no name");
    StringRef name(stat.name);
    if (!name.consume_back(".npy"))
      return makeError("member " + quote(stat.name) +
                       " is not a .npy array (its name must end in .npy)");
    if (!seen.insert(name).second)
      return makeError("duplicate member " + quote(stat.name));
    Expected<Array> array = readMember(archive, i, stat);
    if (!array)
      return array.takeError();
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

/// MS-DOS date of 1980-01-01, the earliest representable; written for every
/// member so that output depends on the arrays only.
static constexpr zip_uint16_t kFixedDosDate = (1 << 5) | 1;

/// What np.savez writes for no arrays: the end-of-central-directory record
/// alone. libzip cannot write it: closing an archive without entries
/// deletes it instead.
static constexpr char kEmptyArchive[22] = {'P', 'K', 5, 6};

static Error writeFailure(zip_error_t *error) {
  return makeError("cannot build the .npz archive: " + describe(error));
}

/// Adds `arrays` to `archive` as stored members. libzip reads the member
/// data only when the archive is closed, so `headers` keeps the .npy
/// headers alive until then.
static Error addMembers(zip_t *archive, ArrayRef<NamedArrayRef> arrays,
                        std::vector<std::string> &headers) {
  headers.reserve(arrays.size());
  for (const NamedArrayRef &named : arrays) {
    const Array &array = *named.array;
    std::string &header =
        headers.emplace_back(makeNpyHeader(array.getDType(), array.getShape()));
    // The array's bytes are used in place, not copied.
    zip_buffer_fragment_t fragments[] = {
        {reinterpret_cast<zip_uint8_t *>(header.data()), header.size()},
        {reinterpret_cast<zip_uint8_t *>(const_cast<char *>(array.getData())),
         array.getNumBytes()}};
    ZipError error;
    zip_source_t *member = zip_source_buffer_fragment_create(
        fragments, array.getNumBytes() ? 2 : 1, /*freep=*/0, &error.error);
    if (!member)
      return writeFailure(&error.error);
    std::string name = (named.name + ".npy").str();
    zip_int64_t index =
        zip_file_add(archive, name.c_str(), member, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(member);
      return writeFailure(zip_get_error(archive));
    }
    if (zip_set_file_compression(archive, index, ZIP_CM_STORE, 0) < 0 ||
        zip_file_set_dostime(archive, index, 0, kFixedDosDate, 0) < 0 ||
        zip_file_set_external_attributes(archive, index, 0, ZIP_OPSYS_UNIX,
                                         0644 << 16) < 0)
      return writeFailure(zip_get_error(archive));
  }
  return Error::success();
}

Error writeNpz(raw_ostream &os, ArrayRef<NamedArrayRef> arrays) {
  if (arrays.empty()) {
    os.write(kEmptyArchive, sizeof(kEmptyArchive));
    return Error::success();
  }
  ZipError error;
  zip_source_t *image;
  zip_t *archive = openArchive(nullptr, 0, ZIP_TRUNCATE, &error.error, &image);
  if (!archive)
    return writeFailure(&error.error);
  // Closing the archive releases its source; the extra reference keeps the
  // written image to copy out afterwards.
  zip_source_keep(image);
  scope_exit freeImage([&] { zip_source_free(image); });

  std::vector<std::string> headers;
  if (Error err = addMembers(archive, arrays, headers)) {
    zip_discard(archive);
    return err;
  }
  if (zip_close(archive) < 0) {
    Error err = writeFailure(zip_get_error(archive));
    zip_discard(archive);
    return err;
  }

  if (zip_source_open(image) < 0)
    return writeFailure(zip_source_error(image));
  std::vector<char> chunk(1 << 20);
  zip_int64_t got;
  while ((got = zip_source_read(image, chunk.data(), chunk.size())) > 0)
    os.write(chunk.data(), got);
  Error err =
      got < 0 ? writeFailure(zip_source_error(image)) : Error::success();
  zip_source_close(image);
  return err;
}

Error writeNpzFile(StringRef path, ArrayRef<NamedArrayRef> arrays) {
  return writeFileAtomically(
      path, [&](raw_ostream &os) { return writeNpz(os, arrays); });
}

} // namespace ttt::npy
