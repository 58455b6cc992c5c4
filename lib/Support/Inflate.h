//===- Inflate.h - raw deflate decompression --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Zip members are raw deflate streams, without the zlib header and Adler-32
// trailer that llvm::compression::zlib expects, so this calls zlib's inflate
// directly (when the build found zlib; LLVM itself was built with it).
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_SUPPORT_INFLATE_H
#define TTT_LIB_SUPPORT_INFLATE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace ttt::npy {

/// Whether inflateRaw works in this build.
bool isInflateAvailable();

/// Decompresses the raw deflate stream `compressed`, which must come to
/// exactly `out.size()` bytes, into `out`.
llvm::Error inflateRaw(llvm::StringRef compressed,
                       llvm::MutableArrayRef<char> out);

} // namespace ttt::npy

#endif // TTT_LIB_SUPPORT_INFLATE_H
