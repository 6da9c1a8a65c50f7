// SPDX-License-Identifier: GPL-2.0
#include "run/oplog.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>

#include "util/errno_name.h"

namespace cpuhp {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

// As fopen(path, mode) ("w": truncate, "a": append), but never through a
// symlink: root must not truncate or append to whatever a planted link names.
std::FILE* OpenNoFollow(const std::string& path, bool append) {
  int fd = open(path.c_str(),
                O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd < 0)
    return nullptr;
  std::FILE* f = fdopen(fd, append ? "a" : "w");
  if (!f) {
    const int e = errno;
    close(fd);
    errno = e;
  }
  return f;
}

int FormatLine(const OpRecord& r, char* out, size_t size) {
  int n = snprintf(out, size,
                   "{\"i\":%" PRIu64 ",\"cpu\":%d,\"dir\":\"%s\",\"start_ns\":%" PRIu64
                   ",\"duration_ns\":%" PRIu64 ",\"errno\":%d",
                   r.index, r.cpu, r.dir == Direction::kOffline ? "offline" : "online", r.start_ns,
                   r.duration_ns, r.err);
  if (r.err != 0)
    n += snprintf(out + n, size - static_cast<size_t>(n), ",\"error\":\"%s\"",
                  ErrnoName(r.err).c_str());
  n += snprintf(out + n, size - static_cast<size_t>(n),
                ",\"online_before\":%d,\"readback_ok\":%s%s}\n", r.online_before,
                r.readback_ok ? "true" : "false", r.setup ? ",\"setup\":true" : "");
  return n;
}

}  // namespace

OpLog::~OpLog() {
  std::string ignored;
  Close(&ignored);
}

bool OpLog::Open(const std::string& path, std::string* err) {
  f_ = OpenNoFollow(path, /*append=*/false);
  if (!f_) {
    *err = path + ": cannot open operation log: " + strerror(errno);
    return false;
  }
  path_ = path;
  buf_ = new char[kBufferBytes];
  setvbuf(f_, buf_, _IOFBF, kBufferBytes);
  return true;
}

bool OpLog::Append(const OpRecord& rec, std::string* err) {
  char line[320];
  int n = FormatLine(rec, line, sizeof(line));
  if (std::fwrite(line, 1, static_cast<size_t>(n), f_) != static_cast<size_t>(n)) {
    *err = path_ + ": write: " + strerror(errno);
    return false;
  }
  bytes_ += static_cast<uint64_t>(n);
  return true;
}

bool OpLog::OpenAt(const std::string& path, uint64_t bytes, std::string* err) {
  f_ = OpenNoFollow(path, /*append=*/true);
  if (!f_) {
    *err = path + ": cannot open operation log: " + strerror(errno);
    return false;
  }
  path_ = path;
  struct stat st {};
  if (fstat(fileno(f_), &st) == 0 && static_cast<uint64_t>(st.st_size) > bytes &&
      ftruncate(fileno(f_), static_cast<off_t>(bytes)) != 0) {
    *err = path + ": cannot cut the operation log back to the checkpoint: " + strerror(errno);
    std::fclose(f_);
    f_ = nullptr;
    return false;
  }
  bytes_ = bytes;
  buf_ = new char[kBufferBytes];
  setvbuf(f_, buf_, _IOFBF, kBufferBytes);
  return true;
}

bool OpLog::Reopen(std::string* err) {
  if (!f_)
    return true;
  const std::string path = path_;
  const uint64_t bytes = bytes_;
  if (!Close(err))
    return false;
  f_ = OpenNoFollow(path, /*append=*/true);
  if (!f_) {
    *err = path + ": cannot reopen operation log: " + strerror(errno);
    return false;
  }
  path_ = path;
  bytes_ = bytes;
  buf_ = new char[kBufferBytes];
  setvbuf(f_, buf_, _IOFBF, kBufferBytes);
  return true;
}

bool OpLog::Flush(std::string* err) {
  if (f_ && std::fflush(f_) != 0) {
    *err = path_ + ": write: " + strerror(errno);
    return false;
  }
  return true;
}

bool OpLog::Close(std::string* err) {
  if (!f_)
    return true;
  bool ok = std::fflush(f_) == 0;
  if (!ok)
    *err = path_ + ": write: " + strerror(errno);
  if (ok && fsync(fileno(f_)) != 0 && errno != EINVAL) {
    *err = path_ + ": fsync: " + strerror(errno);
    ok = false;
  }
  if (std::fclose(f_) != 0 && ok) {
    *err = path_ + ": close: " + strerror(errno);
    ok = false;
  }
  f_ = nullptr;
  delete[] buf_;
  buf_ = nullptr;
  return ok;
}

std::string OpLog::Format(const OpRecord& rec) {
  char line[320];
  int n = FormatLine(rec, line, sizeof(line));
  return std::string(line, static_cast<size_t>(n - 1));
}

}  // namespace cpuhp
