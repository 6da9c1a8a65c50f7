// SPDX-License-Identifier: GPL-2.0
// Files written as root must be whole or absent: atomic replacement, and the
// UTC time stamps every file carries.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace cpuhp {

// Replaces `path` with `content` atomically: temp file in the same directory, write, fsync, rename,
// fsync the directory. On any failure the temp file is removed, the previous file is untouched, and
// *err names the path and the cause ("report.json: write: No space left on
// device").
bool WriteFileAtomic(const std::string& path, const std::string& content, std::string* err);

// The temporary name WriteFileAtomic writes before its rename:
// "<path>.tmp.<pid>".
std::string AtomicTempPath(const std::string& path);

// What a file of st_mode `mode` is, for a refusal: "a FIFO", "a symbolic
// link", "a character device"...; "a regular file" for one.
std::string FileKindName(mode_t mode);

// An output file can be written at `path`: not a directory nor any other
// non-regular file (a FIFO would block the open), its directory exists and takes a new file
// (probed), and the temporary name WriteFileAtomic uses fits the directory's NAME_MAX. Checked
// before any work so that a bad path is bad input (exit 2); *err names the path and the cause.
bool CheckOutputPath(const std::string& path, std::string* err);

// RFC 3339 UTC with milliseconds for a CLOCK_REALTIME time, any int64 one:
// computed here, not by gmtime(), whose time_t is 32 bits on bookworm's
// armhf and wraps in January 2038 (issue 36).
std::string FormatUtc(int64_t realtime_ns);

// CLOCK_REALTIME in nanoseconds; on a 32-bit target through the kernel's
// clock_gettime64 (5.1+), so that it stays right past 2038 with a 32-bit
// time_t, else clock_gettime().
int64_t RealtimeNs();

}  // namespace cpuhp
