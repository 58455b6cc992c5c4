//===- AtomicFile.cpp - all-or-nothing file output ------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "AtomicFile.h"
#include "ttt/Support/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

Expected<ttt::OutputTarget> ttt::resolveOutputTarget(StringRef path) {
  if (path.empty())
    return makeError("empty output file name");
  if (path == "-" || path == "/dev/stdout")
    return OutputTarget{OutputTarget::Stdout, path.str()};
  sys::fs::file_status status;
  std::error_code ec = sys::fs::status(path, status, /*Follow=*/true);
  if (ec == std::errc::no_such_file_or_directory) {
    sys::fs::file_status link;
    if (!sys::fs::status(path, link, /*Follow=*/false) &&
        link.type() == sys::fs::file_type::symlink_file)
      return makeError("is a symbolic link to a missing file; ttt does not "
                       "create the file it names");
    return OutputTarget{OutputTarget::Atomic, path.str()};
  }
  if (ec)
    return makeError("cannot write: " + ec.message());
  switch (status.type()) {
  case sys::fs::file_type::regular_file: {
    // /dev/fd/N and /proc/self/fd/N name an open file of this process (a
    // shell redirection): replacing the file behind it would not reach it.
    if (path.starts_with("/dev/") || path.starts_with("/proc/"))
      return OutputTarget{OutputTarget::Through, path.str()};
    // Replace the file a link points to, not the link.
    SmallString<256> real;
    if (std::error_code realEc = sys::fs::real_path(path, real))
      return makeError("cannot resolve the path: " + realEc.message());
    return OutputTarget{OutputTarget::Atomic, std::string(real)};
  }
  case sys::fs::file_type::fifo_file:
  case sys::fs::file_type::character_file:
    return OutputTarget{OutputTarget::Through, path.str()};
  case sys::fs::file_type::directory_file:
    return makeError("is a directory");
  case sys::fs::file_type::block_file:
    return makeError("is a block device; ttt writes only regular files, "
                     "FIFOs and character devices");
  default:
    return makeError("is not a regular file, FIFO or character device; ttt "
                     "does not write there");
  }
}

StringRef ttt::binaryToTerminalMessage() {
  return "refusing to write binary output to a terminal; write it to a file "
         "with -o FILE (or redirect standard output)";
}

void ttt::copyFileAttributes(StringRef path, int fd) {
  struct stat old;
  if (::stat(path.str().c_str(), &old) != 0 || !S_ISREG(old.st_mode))
    return;
  // The owner first: changing it clears the set-user-ID and set-group-ID
  // bits. Only root may give a file away; the group may be any of the
  // user's own.
  int ignored = ::fchown(fd, old.st_uid, old.st_gid);
  if (ignored != 0)
    ignored = ::fchown(fd, static_cast<uid_t>(-1), old.st_gid);
  ignored = ::fchmod(fd, old.st_mode & 07777);
  (void)ignored;
}

/// Runs `write` on `os`: its own error first, then the stream's.
static Error writeAndFlush(raw_fd_ostream &os,
                           function_ref<Error(raw_ostream &)> write) {
  Error produced = write(os);
  os.flush();
  std::error_code ec = os.error();
  // Cleared so that the stream's destructor does not report it as fatal.
  os.clear_error();
  if (produced)
    return produced;
  if (ec)
    return createStringError(ec, "cannot write: " + ec.message());
  return Error::success();
}

Error ttt::writeOutputFile(StringRef path, bool binary,
                           function_ref<Error(raw_ostream &)> write) {
  Expected<OutputTarget> target = resolveOutputTarget(path);
  if (!target)
    return target.takeError();
  switch (target->kind) {
  case OutputTarget::Stdout: {
    if (binary && sys::Process::StandardOutIsDisplayed())
      return makeError(binaryToTerminalMessage());
    outs().flush();
    raw_fd_ostream os(STDOUT_FILENO, /*shouldClose=*/false);
    return writeAndFlush(os, write);
  }
  case OutputTarget::Through: {
    std::error_code ec;
    raw_fd_ostream os(target->path, ec, sys::fs::OF_None);
    if (ec) {
      os.clear_error();
      return makeError("cannot open it for writing: " + ec.message());
    }
    return writeAndFlush(os, write);
  }
  case OutputTarget::Atomic:
    break;
  }
  // TempFile removes the file on a signal, and keep() renames it atomically.
  Expected<sys::fs::TempFile> temp =
      sys::fs::TempFile::create(target->path + ".tmp-%%%%%%%%");
  if (!temp)
    return makeError("cannot create a file next to it: " +
                     toString(temp.takeError()));
  copyFileAttributes(target->path, temp->FD);
  Error written = [&] {
    raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    return writeAndFlush(os, write);
  }();
  if (written) {
    consumeError(temp->discard());
    return written;
  }
  if (Error err = temp->keep(target->path))
    return makeError("cannot write: " + toString(std::move(err)));
  return Error::success();
}

Error ttt::npy::writeFileAtomically(StringRef path,
                                    function_ref<Error(raw_ostream &)> write) {
  return writeOutputFile(path, /*binary=*/true, write);
}

//===----------------------------------------------------------------------===//
// One-line reports of fatal signals and errors
//===----------------------------------------------------------------------===//

static const char *crashTool = "ttt";

static const int kFatalSignals[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL, SIGABRT,
                                    SIGTRAP, SIGXFSZ, SIGXCPU, SIGSYS};

static const char *describeSignal(int signal) {
  switch (signal) {
  case SIGXFSZ:
    return "the file size limit was exceeded (SIGXFSZ; see ulimit -f)";
  case SIGXCPU:
    return "the CPU time limit was exceeded (SIGXCPU; see ulimit -t)";
  case SIGSEGV:
    return "crashed: invalid memory access (SIGSEGV)";
  case SIGBUS:
    return "crashed: bus error (SIGBUS)";
  case SIGFPE:
    return "crashed: arithmetic exception (SIGFPE)";
  case SIGILL:
    return "crashed: illegal instruction (SIGILL)";
  case SIGABRT:
    return "aborted (SIGABRT)";
  case SIGTRAP:
    return "crashed: trap (SIGTRAP)";
  default:
    return "crashed: fatal signal";
  }
}

static void writeStderr(const char *text) {
  size_t length = std::strlen(text);
  while (length) {
    ssize_t written = ::write(STDERR_FILENO, text, length);
    if (written <= 0)
      return;
    text += written;
    length -= written;
  }
}

/// Async-signal-safe only: write, LLVM's removal of pending temporary files,
/// and _exit.
static void onFatalSignal(int signal) {
  sys::RunInterruptHandlers();
  writeStderr(crashTool);
  writeStderr(": error: ");
  writeStderr(describeSignal(signal));
  writeStderr("\n");
  ::_exit(128 + signal);
}

static void onFatalError(void *, const char *reason, bool) {
  sys::RunInterruptHandlers();
  writeStderr(crashTool);
  writeStderr(": error: ");
  writeStderr(reason);
  writeStderr("\n");
  ::_exit(1);
}

void ttt::installOneLineCrashHandlers(const char *tool) {
  crashTool = tool;
  const char *keep = std::getenv("TTT_CRASH_BACKTRACE");
  if (keep && *keep && std::strcmp(keep, "0") != 0)
    return;
  // LLVM installs its handlers once, on the first file registered for
  // removal or the first stack-trace request; registering them now makes
  // the later calls (InitLLVM, ToolOutputFile) leave ours in place.
  sys::PrintStackTraceOnErrorSignal(crashTool, /*DisableCrashReporting=*/true);
  struct sigaction action = {};
  action.sa_handler = onFatalSignal;
  sigemptyset(&action.sa_mask);
  for (int signal : kFatalSignals)
    sigaction(signal, &action, nullptr);
  install_fatal_error_handler(onFatalError);
}
