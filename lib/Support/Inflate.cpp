//===- Inflate.cpp - raw deflate decompression ----------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Inflate.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#if TTT_HAVE_ZLIB
#include <zlib.h>
#endif

using namespace llvm;

namespace ttt::npy {

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

#if TTT_HAVE_ZLIB

bool isInflateAvailable() { return true; }

Error inflateRaw(StringRef compressed, MutableArrayRef<char> out) {
  uint64_t size = out.size();
  z_stream stream = {};
  // Negative window bits select a raw stream (no zlib header or trailer).
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
    return makeError("cannot initialise zlib");

  // zlib counts in uInt, so feed buffers over 4 GiB in pieces.
  constexpr uint64_t kChunk = std::numeric_limits<uInt>::max();
  uint64_t inPos = 0, outPos = 0;
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    if (stream.avail_in == 0 && inPos < compressed.size()) {
      uint64_t chunk = std::min<uint64_t>(compressed.size() - inPos, kChunk);
      stream.next_in = reinterpret_cast<Bytef *>(
          const_cast<char *>(compressed.data() + inPos));
      stream.avail_in = static_cast<uInt>(chunk);
      inPos += chunk;
    }
    if (stream.avail_out == 0 && outPos < size) {
      uint64_t chunk = std::min<uint64_t>(size - outPos, kChunk);
      stream.next_out = reinterpret_cast<Bytef *>(out.data() + outPos);
      stream.avail_out = static_cast<uInt>(chunk);
      outPos += chunk;
    }
    // When the output is full but the stream has not ended, give zlib a
    // scratch byte: it either finds the end marker or proves the data is
    // longer than declared.
    Bytef scratch;
    bool usingScratch = stream.avail_out == 0;
    if (usingScratch) {
      stream.next_out = &scratch;
      stream.avail_out = 1;
    }
    status = inflate(&stream, Z_NO_FLUSH);
    if (usingScratch && stream.avail_out == 0) {
      inflateEnd(&stream);
      return makeError("compressed data is longer than the declared " +
                       Twine(size) + " bytes");
    }
    if (status == Z_BUF_ERROR && stream.avail_in == 0 &&
        inPos == compressed.size()) {
      inflateEnd(&stream);
      return makeError("compressed data is truncated");
    }
    if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) {
      std::string reason = stream.msg ? stream.msg : "zlib error";
      inflateEnd(&stream);
      return makeError("corrupt compressed data (" + reason + ")");
    }
  }
  uint64_t produced = stream.total_out;
  inflateEnd(&stream);
  if (produced != size)
    return makeError("compressed data holds " + Twine(produced) +
                     " bytes, the archive declares " + Twine(size));
  return Error::success();
}

#else // !TTT_HAVE_ZLIB

bool isInflateAvailable() { return false; }

Error inflateRaw(StringRef, MutableArrayRef<char>) {
  return makeError("compressed members (np.savez_compressed) need zlib, "
                   "which this build lacks; save with np.savez instead");
}

#endif // TTT_HAVE_ZLIB

} // namespace ttt::npy
