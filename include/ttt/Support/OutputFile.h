//===- OutputFile.h - where and how the tools write output ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tools' output paths may name a regular file, a symbolic link, a FIFO, a
// device (/dev/null, /dev/full, /dev/stdout) or `-`. Only a regular file (or a
// new one) is written atomically, through a temporary file renamed over it;
// replacing anything else would turn a device or a FIFO into a regular file,
// or a symbolic link into a copy. Those are written through instead. A file
// replaced keeps its permissions (and owner, where the process may set it).
//
//===----------------------------------------------------------------------===//

#ifndef TTT_SUPPORT_OUTPUTFILE_H
#define TTT_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace ttt {

/// How an output path is written.
struct OutputTarget {
  enum Kind {
    /// Standard output (`-` or /dev/stdout).
    Stdout,
    /// A regular file, or one that does not exist yet: written to a
    /// temporary file next to `path`, renamed over it once complete.
    Atomic,
    /// A FIFO or a character device: opened and written in place.
    Through,
  };
  Kind kind;
  /// For Atomic, the regular file itself, with symbolic links resolved (the
  /// links stay); else the path as given.
  std::string path;
};

/// Decides how `path` is written; refuses (with the reason, no path prefix)
/// an empty name, directories, block devices, sockets and links to missing
/// files.
llvm::Expected<OutputTarget> resolveOutputTarget(llvm::StringRef path);

/// Gives the open file `fd`, a temporary file about to be renamed over
/// `path`, the permissions of the regular file `path` and, where this
/// process may, its owner and group, so that replacing a file keeps them. A
/// new file (no `path` yet) keeps the default mode.
void copyFileAttributes(llvm::StringRef path, int fd);

/// Writes `path` as resolveOutputTarget says, calling `write` once. Write
/// errors (ENOSPC on /dev/full, a full disk) are returned, not fatal; an
/// atomic write leaves no partial file. A `binary` output is refused on a
/// terminal. Error messages have no path prefix.
llvm::Error
writeOutputFile(llvm::StringRef path, bool binary,
                llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write);

/// The message for binary output to a terminal.
llvm::StringRef binaryToTerminalMessage();

/// Makes a fatal signal (SIGSEGV, SIGXFSZ, ...) or an LLVM fatal error print
/// one line, "<tool>: error: <what happened>", and exit non-zero, instead of
/// LLVM's stack dump and bug-report request. Files registered for removal on
/// a signal (temporary output files) are still removed. Set
/// TTT_CRASH_BACKTRACE=1 to keep LLVM's stack dump. Call it after
/// llvm::InitLLVM (or instead of it).
void installOneLineCrashHandlers(const char *tool);

} // namespace ttt

#endif // TTT_SUPPORT_OUTPUTFILE_H
