// SPDX-License-Identifier: GPL-2.0
// Reading JSON that a user or a crash handed us (configs, reports, checkpoints):
// bounded size, bounded nesting checked before parsing, numbers that overflow
// a double refused, and one error line with the line and column
// ("c.json: invalid JSON at line 2, column 17: number overflow parsing '1e400'")
// that never echoes raw bytes.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace cpuhp {

// Reads at most max_bytes (more is an error naming the path). Works on pipes.
// *err is "<path>: cannot read: <strerror>" or "<path>: too large (...)";
// *err_no (if not null) the errno, EFBIG when too large.
// kRegularOnly: a FIFO, device or directory is refused ("<path>: not a
// regular file", EINVAL) without blocking: reports, checkpoints, state.
enum class FileKind { kAny, kRegularOnly };
bool ReadSmallFile(const std::string& path, size_t max_bytes, std::string* text, std::string* err,
                   int* err_no = nullptr, FileKind kind = FileKind::kAny);
// The reading part of ReadSmallFile, on an open `fd` (not closed) that
// `path` names in errors: for a caller that opens the file its own way.
bool ReadSmallFd(int fd, const std::string& path, size_t max_bytes, std::string* text,
                 std::string* err, int* err_no = nullptr);

// Parses `text`; `source` names it in errors. Nesting deeper than 64 levels is
// refused before the parser sees it; an array longer than max_array_elements
// while it is read ("<source>: /per_cpu: more than 100000 elements in one
// array"), before it can cost memory or later work.
bool ParseJsonText(const std::string& text, const std::string& source, nlohmann::json* doc,
                   std::string* err, size_t max_array_elements = SIZE_MAX);

// j.dump(indent) that never throws on invalid UTF-8 (a hostname, the kernel
// command line, a path given to us): bad bytes become U+FFFD, and one string
// cannot cost a day's report.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

// Whether `s` is valid UTF-8 (what DumpJson keeps unchanged).
bool IsUtf8(const std::string& s);

// A key as a JSON pointer token (RFC 6901: "~" and "/" escaped), control
// characters as \uXXXX, so an error line naming it stays one line.
std::string JsonPointerToken(const std::string& key);

// ReadSmallFile + ParseJsonText.
bool LoadJsonFile(const std::string& path, size_t max_bytes, nlohmann::json* doc, std::string* err);

// obj[key] as a non-negative integer. JSON built in memory stores 5 as signed,
// parsed JSON as unsigned: both are accepted; negatives, floats, strings and a
// missing key are refused with "<path><key>: ..." in *msg.
bool ReadU64Field(const nlohmann::json& obj, const std::string& path, const char* key,
                  uint64_t* out, std::string* msg);

}  // namespace cpuhp
