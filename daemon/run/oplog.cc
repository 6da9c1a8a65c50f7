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

int FormatLine(const OpRecord& r, bool simulated, char* out, size_t size) {
  int n = snprintf(out, size,
                   "{\"i\":%" PRIu64 ",\"cpu\":%d,\"dir\":\"%s\",\"start_ns\":%" PRIu64
                   ",\"duration_ns\":%" PRIu64 ",\"errno\":%d",
                   r.index, r.cpu, r.dir == Direction::kOffline ? "offline" : "online", r.start_ns,
                   r.duration_ns, r.err);
  if (r.err != 0)
    n += snprintf(out + n, size - static_cast<size_t>(n), ",\"error\":\"%s\"",
                  ErrnoName(r.err).c_str());
  n += snprintf(out + n, size - static_cast<size_t>(n),
                ",\"online_before\":%d,\"readback_ok\":%s%s%s}\n", r.online_before,
                r.readback_ok ? "true" : "false", r.setup ? ",\"setup\":true" : "",
                simulated ? ",\"simulated\":true" : "");
  return n;
}

}  // namespace

OpLog::~OpLog() {
  std::string ignored;
  Close(&ignored);
}

bool OpLog::Adopt(std::FILE* f, const std::string& path, std::string* err) {
  struct stat st {};
  if (fstat(fileno(f), &st) != 0) {
    *err = path + ": operation log: fstat: " + strerror(errno);
    std::fclose(f);
    return false;
  }
  f_ = f;
  path_ = path;
  bytes_ = static_cast<uint64_t>(st.st_size);
  dev_ = static_cast<uint64_t>(st.st_dev);
  ino_ = static_cast<uint64_t>(st.st_ino);
  buf_ = new char[kBufferBytes];
  setvbuf(f_, buf_, _IOFBF, kBufferBytes);
  return true;
}

bool OpLog::Open(const std::string& path, std::string* err) {
  std::FILE* f = OpenNoFollow(path, /*append=*/false);
  if (!f) {
    *err = path + ": cannot open operation log: " + strerror(errno);
    return false;
  }
  return Adopt(f, path, err);
}

bool OpLog::Append(const OpRecord& rec, std::string* err) {
  char line[320];
  int n = FormatLine(rec, simulated_, line, sizeof(line));
  if (std::fwrite(line, 1, static_cast<size_t>(n), f_) != static_cast<size_t>(n)) {
    *err = path_ + ": write: " + strerror(errno);
    return false;
  }
  bytes_ += static_cast<uint64_t>(n);
  return true;
}

bool OpLog::OpenAt(const std::string& path, const Position& at, std::string* err) {
  if (at.ino == 0)
    return Open(path, err);
  // Not created: a missing log is the checkpoint's log gone, not a new one.
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *err = path + ": cannot reopen the checkpoint's operation log: " + strerror(errno);
    return false;
  }
  struct stat st {};
  std::string why;
  if (fstat(fd, &st) != 0) {
    why = std::string("fstat: ") + strerror(errno);
  } else if (static_cast<uint64_t>(st.st_dev) != at.dev ||
             static_cast<uint64_t>(st.st_ino) != at.ino) {
    why = "another file (device " + std::to_string(st.st_dev) + ", inode " +
          std::to_string(st.st_ino) + ") than the checkpoint's (device " + std::to_string(at.dev) +
          ", inode " + std::to_string(at.ino) + "): rotated or replaced after the checkpoint";
  } else if (static_cast<uint64_t>(st.st_size) < at.bytes) {
    why = std::to_string(st.st_size) + " bytes, shorter than the " + std::to_string(at.bytes) +
          " the checkpoint recorded: truncated after the checkpoint";
  } else if (static_cast<uint64_t>(st.st_size) > at.bytes &&
             ftruncate(fd, static_cast<off_t>(at.bytes)) != 0) {
    why = std::string("cannot cut it back to the checkpoint: ") + strerror(errno);
  }
  if (!why.empty()) {
    *err = path + ": operation log not resumed: " + why +
           "; move it away and start fresh (--fresh), or restore the file";
    close(fd);
    return false;
  }
  std::FILE* f = fdopen(fd, "a");
  if (!f) {
    *err = path + ": cannot open operation log: " + strerror(errno);
    close(fd);
    return false;
  }
  return Adopt(f, path, err);
}

bool OpLog::Reopen(std::string* err) {
  if (!f_)
    return true;
  const std::string path = path_;
  if (!Close(err))
    return false;
  std::FILE* f = OpenNoFollow(path, /*append=*/true);
  if (!f) {
    *err = path + ": cannot reopen operation log: " + strerror(errno);
    return false;
  }
  return Adopt(f, path, err);
}

bool OpLog::Sync(std::string* err) {
  if (!f_)
    return true;
  if (std::fflush(f_) != 0) {
    *err = path_ + ": write: " + strerror(errno);
    return false;
  }
  if (fsync(fileno(f_)) != 0 && errno != EINVAL) {
    *err = path_ + ": fsync: " + strerror(errno);
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

std::string OpLog::Format(const OpRecord& rec, bool simulated) {
  char line[320];
  int n = FormatLine(rec, simulated, line, sizeof(line));
  return std::string(line, static_cast<size_t>(n - 1));
}

}  // namespace cpuhp
