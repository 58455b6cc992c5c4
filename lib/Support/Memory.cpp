//===- Memory.cpp - how much memory a process may still use ---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Support/Memory.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

/// The text of a file of /proc or /sys (whose size reads as 0, so it is read
/// as a stream), or std::nullopt.
static std::optional<std::string> readSmallFile(const Twine &path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFileAsStream(path);
  if (!buffer)
    return std::nullopt;
  return (*buffer)->getBuffer().str();
}

/// The value of `key` in lines "key value" or "key: value kB" (the unit
/// scales it to bytes).
static std::optional<uint64_t> findValue(StringRef text, StringRef key) {
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (StringRef line : lines) {
    StringRef rest = line;
    if (!rest.consume_front(key))
      continue;
    if (!rest.consume_front(":") && !rest.starts_with(" "))
      continue;
    rest = rest.trim();
    uint64_t scale = 1;
    if (rest.consume_back(" kB"))
      scale = 1024;
    uint64_t value;
    if (rest.trim().getAsInteger(10, value))
      return std::nullopt;
    return value * scale;
  }
  return std::nullopt;
}

/// A number in a cgroup file, or std::nullopt ("max", missing).
static std::optional<uint64_t> readNumber(const Twine &path) {
  std::optional<std::string> text = readSmallFile(path);
  uint64_t value;
  if (!text || StringRef(*text).trim().getAsInteger(10, value))
    return std::nullopt;
  return value;
}

/// Room left in the memory cgroup at `dir` (cgroup v2 names, or v1's when
/// `v1`): the limit less what the group uses, its reclaimable file cache
/// counted as free. std::nullopt without a limit.
static std::optional<uint64_t> getCgroupRoom(StringRef dir, bool v1) {
  std::optional<uint64_t> limit =
      readNumber(dir + (v1 ? "/memory.limit_in_bytes" : "/memory.max"));
  if (!limit)
    return std::nullopt;
  uint64_t used =
      readNumber(dir + (v1 ? "/memory.usage_in_bytes" : "/memory.current"))
          .value_or(0);
  uint64_t cache = 0;
  if (std::optional<std::string> stat = readSmallFile(dir + "/memory.stat"))
    cache = findValue(*stat, v1 ? "total_inactive_file" : "inactive_file")
                .value_or(0);
  used -= std::min(used, cache);
  return *limit - std::min(*limit, used);
}

/// The least room any memory cgroup above this process leaves, if one
/// limits it.
static std::optional<uint64_t> getCgroupRoom() {
  std::optional<std::string> groups = readSmallFile("/proc/self/cgroup");
  if (!groups)
    return std::nullopt;
  std::optional<uint64_t> room;
  auto consider = [&](std::optional<uint64_t> value) {
    if (value)
      room = room ? std::min(*room, *value) : *value;
  };
  SmallVector<StringRef> lines;
  StringRef(*groups).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines) {
    // "0::/path" (v2) or "4:memory:/path" (v1).
    auto [id, rest] = line.split(':');
    auto [controllers, path] = rest.split(':');
    bool v1;
    std::string root;
    if (id == "0" && controllers.empty()) {
      v1 = false;
      root = "/sys/fs/cgroup";
    } else if (is_contained(split(controllers, ','), "memory")) {
      v1 = true;
      root = "/sys/fs/cgroup/memory";
    } else {
      continue;
    }
    // The group and every parent up to the root; in a container the path
    // may name the host's hierarchy, so the mount's root counts too.
    std::string dir = (root + path.rtrim('/')).str();
    for (;;) {
      consider(getCgroupRoom(dir, v1));
      if (dir.size() <= root.size())
        break;
      dir.resize(StringRef(dir).rfind('/'));
    }
    consider(getCgroupRoom(root, v1));
  }
  return room;
}

std::optional<uint64_t> ttt::getAvailableMemory() {
  std::optional<std::string> meminfo = readSmallFile("/proc/meminfo");
  if (!meminfo)
    return std::nullopt;
  std::optional<uint64_t> available = findValue(*meminfo, "MemAvailable");
  // Kernels before 3.14 do not estimate it.
  if (!available) {
    std::optional<uint64_t> free = findValue(*meminfo, "MemFree");
    if (!free)
      return std::nullopt;
    available = *free + findValue(*meminfo, "Cached").value_or(0);
  }
  uint64_t total = *available + findValue(*meminfo, "SwapFree").value_or(0);
  if (std::optional<uint64_t> room = getCgroupRoom())
    total = std::min(total, *room);
  return total;
}

std::string ttt::formatBytes(uint64_t bytes) {
  static const char *const kUnits[] = {"KiB", "MiB", "GiB",
                                       "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  // Three significant digits; a value that rounds up to 1024 stays below it.
  const char *style = value < 9.995   ? "%.2f %s"
                      : value < 99.95 ? "%.1f %s"
                                      : "%.0f %s";
  std::string text;
  raw_string_ostream(text) << format(style, value, kUnits[unit]);
  return text;
}

std::optional<std::string> ttt::checkFitsInMemory(uint64_t bytes) {
  std::optional<uint64_t> available = getAvailableMemory();
  if (!available || bytes <= *available)
    return std::nullopt;
  return "exceeds the available memory (" + formatBytes(*available) + ")";
}
