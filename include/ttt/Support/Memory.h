//===- Memory.h - how much memory a process may still use -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Arrays whose sizes come from the user (shapes on the command line, .npy
// headers, NumPy views) are checked against the memory the system can still
// give before they are allocated: Linux overcommits, so an allocation larger
// than the memory succeeds and the kernel's OOM killer ends the process
// (exit status 137, no message) once the pages are touched.
//
// Like Npy.h, this needs LLVMSupport only.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_SUPPORT_MEMORY_H
#define TTT_SUPPORT_MEMORY_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ttt {

/// Bytes this process may still allocate before the kernel runs out: Linux's
/// estimate MemAvailable plus free swap (/proc/meminfo), less where a memory
/// cgroup (v2 memory.max, v1 memory.limit_in_bytes, of the process's group
/// and its parents) leaves less room. std::nullopt when the system does not
/// say (no /proc/meminfo); callers then check nothing.
std::optional<uint64_t> getAvailableMemory();

/// `bytes` for messages, to three significant digits in binary units:
/// "149 GiB", "21.3 GiB", "1.50 MiB", "100 bytes".
std::string formatBytes(uint64_t bytes);

/// The check itself: if `bytes` exceeds the available memory, the reason
/// "exceeds the available memory (21.3 GiB)"; std::nullopt if it fits (or
/// the available memory is unknown).
std::optional<std::string> checkFitsInMemory(uint64_t bytes);

} // namespace ttt

#endif // TTT_SUPPORT_MEMORY_H
