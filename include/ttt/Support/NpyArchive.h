//===- NpyArchive.h - NumPy .npz archives -----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reading and writing .npz files: zip archives of .npy members, as written by
// np.savez (stored) and np.savez_compressed (deflate), through libzip. The
// writer stores members uncompressed, with fixed timestamps so that equal
// arrays give byte-identical files.
//
// Like Npy.h, this needs no MLIR (LLVMSupport and libzip only), and error
// messages do not name the file: callers prefix it.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_SUPPORT_NPYARCHIVE_H
#define TTT_SUPPORT_NPYARCHIVE_H

#include "ttt/Support/Npy.h"

#include <vector>

namespace ttt::npy {

/// An array with its name in the archive, without the ".npy" suffix (the
/// name np.load reports).
struct NamedArray {
  std::string name;
  Array array;
};

/// The header of an array with its name, read without the data.
struct NamedHeader {
  std::string name;
  NpyHeader header;
};

/// A borrowed array with a name, for writing.
struct NamedArrayRef {
  llvm::StringRef name;
  const Array *array;
};

/// Parses a whole .npz image. Members keep their archive order (the order of
/// the arguments of np.savez). Every member must be a valid .npy file whose
/// CRC-32 matches.
llvm::Expected<std::vector<NamedArray>> parseNpz(llvm::StringRef bytes);

/// Reads a .npz file.
llvm::Expected<std::vector<NamedArray>> readNpzFile(llvm::StringRef path);

/// Reads arrays from `path`: a .npz archive, or a single .npy array, which is
/// returned with an empty name. The format is recognised by content, not by
/// extension.
llvm::Expected<std::vector<NamedArray>> readArraysFile(llvm::StringRef path);

/// Reads the names and headers of the arrays in `path` (as readArraysFile
/// does, in the same order) without their data, so that what they need can
/// be checked before anything is allocated. Only the headers are checked;
/// readArraysFile checks the data against them.
llvm::Expected<std::vector<NamedHeader>>
readArrayHeadersFile(llvm::StringRef path);

/// Serializes `arrays` as a stored (uncompressed) .npz archive. The archive
/// is built in memory first (libzip writes to a seekable target), so this
/// needs about as much memory again as the arrays.
llvm::Error writeNpz(llvm::raw_ostream &os,
                     llvm::ArrayRef<NamedArrayRef> arrays);

/// Writes a .npz file atomically (see writeNpyFile).
llvm::Error writeNpzFile(llvm::StringRef path,
                         llvm::ArrayRef<NamedArrayRef> arrays);

} // namespace ttt::npy

#endif // TTT_SUPPORT_NPYARCHIVE_H
