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

/// Whether member `stat` (named `member` in messages) can be read at all.
static Error checkMember(const zip_stat_t &stat, const std::string &member) {
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
  return Error::success();
}

/// Reads the next `size` bytes of member `stat`, `offset` bytes into it,
/// from `file` into `out`; the archive declares that many.
static Error readBytes(zip_file_t *file, const zip_stat_t &stat,
                       const std::string &member, uint64_t offset, char *out,
                       uint64_t size) {
  uint64_t done = 0;
  while (done < size) {
    zip_int64_t got = zip_fread(file, out + done, size - done);
    if (got < 0)
      return readFailure(zip_file_get_error(file), member);
    if (got == 0)
      return corrupt(member + " holds " + Twine(offset + done) +
                     " bytes, the archive declares " + Twine(stat.size));
    done += got;
  }
  return Error::success();
}

/// Reads the .npy header at the start of member `stat` from `file`, which
/// is left at the start of the data.
static Expected<NpyHeader> readHeader(zip_file_t *file, const zip_stat_t &stat,
                                      const std::string &member) {
  auto wrap = [&](Error err) {
    return makeError(member + ": " + toString(std::move(err)));
  };
  std::string bytes(std::min<uint64_t>(kNpyPrefixSize, stat.size), '\0');
  if (Error err = readBytes(file, stat, member, 0, bytes.data(), bytes.size()))
    return std::move(err);
  Expected<uint64_t> headerSize = getNpyHeaderSize(bytes);
  if (!headerSize)
    return wrap(headerSize.takeError());
  // A header longer than the member is reported by parseNpyHeader.
  uint64_t wanted = std::min<uint64_t>(*headerSize, stat.size);
  if (wanted > bytes.size()) {
    size_t had = bytes.size();
    bytes.resize(wanted);
    if (Error err = readBytes(file, stat, member, had, bytes.data() + had,
                              wanted - had))
      return std::move(err);
  }
  Expected<NpyHeader> header = parseNpyHeader(bytes);
  if (!header)
    return wrap(header.takeError());
  // Bytes read past the header (a header shorter than the prefix) are
  // data; NumPy never writes one, so it is refused rather than handled.
  if (header->dataOffset < bytes.size())
    return wrap(makeError("corrupt .npy header: shorter than " +
                          Twine(kNpyPrefixSize) + " bytes"));
  return header;
}

/// Reads member `index`, described by `stat`, as a .npy array: the header
/// first, so that its sizes are checked before the array is allocated, then
/// the data straight into the array.
static Expected<Array> readMember(zip_t *archive, zip_uint64_t index,
                                  const zip_stat_t &stat) {
  std::string member = "member " + quote(stat.name);
  if (Error err = checkMember(stat, member))
    return std::move(err);
  zip_file_t *file = zip_fopen_index(archive, index, 0);
  if (!file)
    return readFailure(zip_get_error(archive), member);
  scope_exit closeFile([&] { zip_fclose(file); });
  Expected<NpyHeader> header = readHeader(file, stat, member);
  if (!header)
    return header.takeError();
  if (Error err = checkNpyDataSize(*header, stat.size - header->dataOffset))
    return makeError(member + ": " + toString(std::move(err)));
  Expected<Array> array = Array::create(header->dtype, header->shape);
  if (!array)
    return makeError(member + ": " + toString(array.takeError()));
  if (Error err = readBytes(file, stat, member, header->dataOffset,
                            array->getData(), array->getNumBytes()))
    return std::move(err);
  // One byte past the declared size: libzip checks the CRC (and finds
  // longer data) only when a read reaches the end of the member.
  char spare;
  zip_int64_t got = zip_fread(file, &spare, 1);
  if (got < 0)
    return readFailure(zip_file_get_error(file), member);
  if (got > 0)
    return corrupt(member + " holds more than the declared " +
                   Twine(stat.size) + " bytes");
  return array;
}

/// Calls `visit` on every member of the .npz image `bytes`, in archive
/// order, with its name without ".npy".
static Error forEachMember(
    StringRef bytes,
    function_ref<Error(zip_t *, zip_uint64_t, const zip_stat_t &, StringRef)>
        visit) {
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
    if (Error err = visit(archive, i, stat, name))
      return err;
  }
  return Error::success();
}

Expected<std::vector<NamedArray>> parseNpz(StringRef bytes) {
  std::vector<NamedArray> arrays;
  if (Error err =
          forEachMember(bytes,
                        [&](zip_t *archive, zip_uint64_t index,
                            const zip_stat_t &stat, StringRef name) -> Error {
                          Expected<Array> array =
                              readMember(archive, index, stat);
                          if (!array)
                            return array.takeError();
                          arrays.push_back({name.str(), std::move(*array)});
                          return Error::success();
                        }))
    return std::move(err);
  return std::move(arrays);
}

/// The headers of the members of the .npz image `bytes`.
static Expected<std::vector<NamedHeader>> parseNpzHeaders(StringRef bytes) {
  std::vector<NamedHeader> headers;
  if (Error err =
          forEachMember(bytes,
                        [&](zip_t *archive, zip_uint64_t index,
                            const zip_stat_t &stat, StringRef name) -> Error {
                          std::string member = "member " + quote(stat.name);
                          if (Error err = checkMember(stat, member))
                            return err;
                          zip_file_t *file = zip_fopen_index(archive, index, 0);
                          if (!file)
                            return readFailure(zip_get_error(archive), member);
                          scope_exit closeFile([&] { zip_fclose(file); });
                          Expected<NpyHeader> header =
                              readHeader(file, stat, member);
                          if (!header)
                            return header.takeError();
                          headers.push_back({name.str(), std::move(*header)});
                          return Error::success();
                        }))
    return std::move(err);
  return std::move(headers);
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

/// How the image `bytes` of a file of arrays is stored.
enum class ArraysFormat { Npy, Npz };

static Expected<ArraysFormat> getArraysFormat(StringRef bytes) {
  if (bytes.starts_with("\x93NUMPY"))
    return ArraysFormat::Npy;
  // Zip archives start with a local header, or with the end record when
  // empty (np.savez with no arrays).
  if (bytes.starts_with("PK\x03\x04") || bytes.starts_with("PK\x05\x06"))
    return ArraysFormat::Npz;
  if (bytes.empty())
    return makeError("empty file; expected a .npy or .npz file");
  return makeError("not a .npy or .npz file (unrecognised leading bytes)");
}

/// The named pieces (arrays, or headers) of the .npy or .npz file at `path`:
/// `parseArchive` reads an archive's, `parseOne` the one of a .npy file.
template <typename Named, typename ParseArchive, typename ParseOne>
static Expected<std::vector<Named>>
readFileAs(StringRef path, ParseArchive parseArchive, ParseOne parseOne) {
  Expected<std::unique_ptr<MemoryBuffer>> buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  StringRef bytes = (*buffer)->getBuffer();
  Expected<ArraysFormat> format = getArraysFormat(bytes);
  if (!format)
    return format.takeError();
  if (*format == ArraysFormat::Npz)
    return parseArchive(bytes);
  auto one = parseOne(bytes);
  if (!one)
    return one.takeError();
  std::vector<Named> pieces;
  pieces.push_back({"", std::move(*one)});
  return std::move(pieces);
}

Expected<std::vector<NamedHeader>> readArrayHeadersFile(StringRef path) {
  return readFileAs<NamedHeader>(path, parseNpzHeaders, parseNpyHeader);
}

Expected<std::vector<NamedArray>> readArraysFile(StringRef path) {
  return readFileAs<NamedArray>(path, parseNpz, parseNpy);
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
