//===- AtomicFile.cpp - all-or-nothing file output ------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "AtomicFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace ttt::npy {

Error writeFileAtomically(StringRef path,
                          function_ref<Error(raw_ostream &)> write) {
  // TempFile removes the file on a signal, and keep() renames it atomically.
  Expected<sys::fs::TempFile> temp =
      sys::fs::TempFile::create(path + ".tmp-%%%%%%%%");
  if (!temp)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create a file next to it: " +
                                 toString(temp.takeError()));
  std::error_code writeError;
  Error producerError = [&] {
    raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    Error err = write(os);
    os.flush();
    writeError = os.error();
    // Cleared so that the stream's destructor does not report it as fatal.
    os.clear_error();
    return err;
  }();
  if (producerError) {
    consumeError(temp->discard());
    return producerError;
  }
  if (writeError) {
    consumeError(temp->discard());
    return createStringError(writeError,
                             "cannot write: " + writeError.message());
  }
  if (Error err = temp->keep(path)) {
    return createStringError(inconvertibleErrorCode(),
                             "cannot write: " + toString(std::move(err)));
  }
  return Error::success();
}

} // namespace ttt::npy
