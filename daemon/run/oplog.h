// SPDX-License-Identifier: GPL-2.0
// The optional raw operation log: one JSON object per line (OpRecordToJson's
// fields), streamed through a large buffer. Formatted by hand: at a million
// simulated operations per second a JSON DOM per line would be the bottleneck.
#pragma once

#include <cstdio>
#include <string>

#include "stats/op_record.h"

namespace cpuhp {

class OpLog {
 public:
  OpLog() = default;
  ~OpLog();
  OpLog(const OpLog&) = delete;
  OpLog& operator=(const OpLog&) = delete;

  // Truncates or creates `path`. One-line error naming the path on failure.
  bool Open(const std::string& path, std::string* err);
  bool is_open() const { return f_ != nullptr; }
  // False once a write failed (disk full...); *err says why, once.
  bool Append(const OpRecord& rec, std::string* err);
  bool Close(std::string* err);  // flush, fsync, close

  // Resume: keeps the first `bytes` of an existing log (the operations up to
  // the checkpoint), drops the rest (operations that will be redone) and
  // appends from there. A log shorter than `bytes` (rotated) is appended to.
  bool OpenAt(const std::string& path, uint64_t bytes, std::string* err);
  // SIGHUP: close and reopen the same path for appending (after a rotation).
  bool Reopen(std::string* err);
  // Flushes the buffer to the file (checkpoints record a flushed length).
  bool Flush(std::string* err);
  // Bytes written through this log since Open, plus the resumed length.
  uint64_t bytes() const { return bytes_; }

  // The line Append writes, without the newline (for tests).
  static std::string Format(const OpRecord& rec);

 private:
  std::FILE* f_ = nullptr;
  std::string path_;
  char* buf_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace cpuhp
