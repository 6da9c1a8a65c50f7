// SPDX-License-Identifier: GPL-2.0
// The optional raw operation log: one JSON object per line (OpRecordToJson's
// fields), streamed through a large buffer. A sim backend's log says so on
// every line ("simulated":true): a line read alone, or a log rotated or
// resumed, is never taken for a measurement. Formatted by hand: at a million
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
  // Every line written from here on carries "simulated":true (sim backend).
  void set_simulated(bool simulated) { simulated_ = simulated; }
  OpLog(const OpLog&) = delete;
  OpLog& operator=(const OpLog&) = delete;

  // Truncates or creates `path`. One-line error naming the path on failure.
  bool Open(const std::string& path, std::string* err);
  bool is_open() const { return f_ != nullptr; }
  // False once a write failed (disk full...); *err says why, once.
  bool Append(const OpRecord& rec, std::string* err);
  bool Close(std::string* err);  // flush, fsync, close

  // Where the log stands in the file it writes: that file's length (bytes
  // flushed or buffered) and identity. A checkpoint records it.
  struct Position {
    uint64_t bytes = 0;
    uint64_t dev = 0;
    uint64_t ino = 0;  // 0: no log was open
  };

  // Reopens the log a checkpoint wrote for resuming: keeps what it holds up
  // to `at` (the operations up to the checkpoint), drops the rest (they
  // will be redone) and appends from there. A log rotated since the
  // checkpoint does not stop the resume (logrotate must not keep a service
  // down): missing, a new one begins; another file (a rotated-in one), or
  // the same file shorter than recorded (copytruncate), it is appended to
  // at its end, untouched; *warning says which, in one line. False only
  // when the file cannot be opened. `at.ino == 0`: a new log, as Open.
  bool OpenAt(const std::string& path, const Position& at, std::string* err, std::string* warning);
  // SIGHUP: close and reopen the same path for appending. After a rotation
  // (mv, then HUP) that is a new file, counted from its own length (0).
  bool Reopen(std::string* err);
  // Flushes the buffer and fsyncs the file: a checkpoint never records more
  // than the file holds after a power cut.
  bool Sync(std::string* err);
  Position position() const { return {bytes_, dev_, ino_}; }
  // Bytes in the current file.
  uint64_t bytes() const { return bytes_; }
  // Times Sync found the file shorter than what was written to it.
  uint64_t truncations() const { return truncations_; }

  // The line Append writes, without the newline (for tests).
  static std::string Format(const OpRecord& rec, bool simulated = false);

 private:
  // Takes `f` (opened on `path`): its identity, its length, the buffer.
  bool Adopt(std::FILE* f, const std::string& path, std::string* err);

  std::FILE* f_ = nullptr;
  std::string path_;
  char* buf_ = nullptr;
  uint64_t bytes_ = 0;
  uint64_t truncations_ = 0;
  uint64_t dev_ = 0;
  uint64_t ino_ = 0;
  bool simulated_ = false;
};

}  // namespace cpuhp
