// SPDX-License-Identifier: GPL-2.0
#include "run/oplog.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>

#include "util/errno_name.h"
#include "util/file_util.h"

namespace cpuhp {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

// Keeps `fd` only if it is a regular file: opened O_NONBLOCK so that a FIFO
// cannot block the open, which is cleared again for the writes. Else closes
// it and says why.
int RegularOnly(int fd, const std::string& path, const char* what, std::string* err) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *err = path + ": " + what + ": " +
           (S_ISREG(st.st_mode) ? std::string("fstat: ") + strerror(errno)
                                : FileKindName(st.st_mode) + ", not a regular file: refused");
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// Why open(2) of `path` failed with `e`: a FIFO without a reader gives
// ENXIO, which is named for what it is.
std::string OpenError(const std::string& path, const char* what, int e) {
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    return path + ": " + what + ": " + FileKindName(st.st_mode) + ", not a regular file: refused";
  return path + ": " + what + ": " + strerror(e);
}

// As fopen(path, mode) ("w": truncate, "a": append), but never through a
// symlink: root must not truncate or append to whatever a planted link names.
// Always O_APPEND: when logrotate's copytruncate empties the file under the
// run, the next line goes to its new end, not to the old offset after a
// hole of NUL bytes.
std::FILE* OpenNoFollow(const std::string& path, bool append, const char* what, std::string* err) {
  int fd = open(
      path.c_str(),
      O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_APPEND | (append ? 0 : O_TRUNC),
      0644);
  if (fd < 0) {
    *err = OpenError(path, what, errno);
    return nullptr;
  }
  if (RegularOnly(fd, path, what, err) < 0)
    return nullptr;
  std::FILE* f = fdopen(fd, append ? "a" : "w");
  if (!f) {
    *err = path + ": " + what + ": " + strerror(errno);
    close(fd);
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
  n +=
      snprintf(out + n, size - static_cast<size_t>(n), ",\"online_before\":%d,\"readback_ok\":%s%s",
               r.online_before, r.readback_ok ? "true" : "false", r.setup ? ",\"setup\":true" : "");
  if (r.group)
    n += snprintf(out + n, size - static_cast<size_t>(n), ",\"smt_switch\":%" PRIu64, r.group);
  if (r.smt_control)
    n += snprintf(out + n, size - static_cast<size_t>(n),
                  ",\"smt_control\":true,\"cpus_changed\":%d", r.cpus_changed);
  n += snprintf(out + n, size - static_cast<size_t>(n), "%s}\n",
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
  std::FILE* f = OpenNoFollow(path, /*append=*/false, "cannot open operation log", err);
  if (!f)
    return false;
  return Adopt(f, path, err);
}

bool OpLog::Append(const OpRecord& rec, std::string* err) {
  char line[384];
  int n = FormatLine(rec, simulated_, line, sizeof(line));
  if (std::fwrite(line, 1, static_cast<size_t>(n), f_) != static_cast<size_t>(n)) {
    *err = path_ + ": write: " + strerror(errno);
    return false;
  }
  bytes_ += static_cast<uint64_t>(n);
  return true;
}

bool OpLog::OpenAt(const std::string& path, const Position& at, std::string* err,
                   std::string* warning) {
  warning->clear();
  if (at.ino == 0)
    return Open(path, err);
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    *warning = path +
               ": the checkpoint's operation log is gone (rotated away?): a new log "
               "begins with the operations from the checkpoint on";
    fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
              0644);
  }
  if (fd < 0) {
    *err = OpenError(path, "cannot reopen the checkpoint's operation log", errno);
    return false;
  }
  if (RegularOnly(fd, path, "cannot reopen the checkpoint's operation log", err) < 0)
    return false;
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *err = path + ": operation log: fstat: " + strerror(errno);
    close(fd);
    return false;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  // Created just now (it may get the old file's inode number): a new log.
  const bool created = !warning->empty();
  const bool same = !created && static_cast<uint64_t>(st.st_dev) == at.dev &&
                    static_cast<uint64_t>(st.st_ino) == at.ino;
  if (!created && !same) {
    *warning = path + ": another file than the checkpoint's (device " + std::to_string(st.st_dev) +
               ", inode " + std::to_string(st.st_ino) +
               "; rotated since?): the operations from the checkpoint on are appended to it";
  } else if (same && size < at.bytes) {
    *warning = path + ": " + std::to_string(size) + " bytes, shorter than the " +
               std::to_string(at.bytes) +
               " the checkpoint recorded (emptied by copytruncate?): the operations from the "
               "checkpoint on are appended at its end";
  } else if (same && size > at.bytes && ftruncate(fd, static_cast<off_t>(at.bytes)) != 0) {
    *err = path +
           ": operation log not resumed: cannot cut it back to the checkpoint: " + strerror(errno);
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
  std::FILE* f = OpenNoFollow(path, /*append=*/true, "cannot reopen operation log", err);
  if (!f)
    return false;
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
  // Emptied under the run (copytruncate): the position a checkpoint records
  // is the file's real length, so that a restart can continue it.
  struct stat st {};
  if (fstat(fileno(f_), &st) == 0 && static_cast<uint64_t>(st.st_size) < bytes_) {
    ++truncations_;
    *err = path_ + ": truncated under the run (" + std::to_string(bytes_) + " bytes written, " +
           std::to_string(st.st_size) + " now; logrotate copytruncate?): continuing at its end";
    bytes_ = static_cast<uint64_t>(st.st_size);
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
  char line[384];
  int n = FormatLine(rec, simulated, line, sizeof(line));
  return std::string(line, static_cast<size_t>(n - 1));
}

}  // namespace cpuhp
