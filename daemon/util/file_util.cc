// SPDX-License-Identifier: GPL-2.0
#include "util/file_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <system_error>

namespace cpuhp {
namespace {

std::string ErrnoText(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// "<path>: <syscall>: <strerror>" for the current errno.
std::string SyscallError(const std::string& path, const char* syscall) {
  return path + ": " + syscall + ": " + ErrnoText(errno);
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

bool WriteAll(int fd, const std::string& content) {
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    if (n == 0) {  // not expected for a regular file; never spin on it
      errno = EIO;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

int OpenExclusive(const std::string& path) {
  int fd;
  do {
    fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

}  // namespace

std::string AtomicTempPath(const std::string& path) {
  return path + ".tmp." + std::to_string(getpid());
}

bool WriteFileAtomic(const std::string& path, const std::string& content, std::string* err) {
  std::string unused;
  if (err == nullptr)
    err = &unused;
  const std::string tmp = AtomicTempPath(path);
  int fd = OpenExclusive(tmp);
  if (fd < 0 && errno == EEXIST) {
    // Left behind by a crash of an earlier process with our pid (pids repeat
    // across reboots, the state directory does not): the name is ours.
    unlink(tmp.c_str());
    fd = OpenExclusive(tmp);
  }
  if (fd < 0) {
    *err = SyscallError(path, "open");
    return false;
  }
  const char* failed_call = nullptr;
  if (!WriteAll(fd, content))
    failed_call = "write";
  else if (fsync(fd) != 0)
    failed_call = "fsync";
  int saved_errno = errno;
  // close() can report a delayed write error (NFS): it counts as a failure.
  if (close(fd) != 0 && failed_call == nullptr) {
    failed_call = "close";
    saved_errno = errno;
  }
  if (failed_call == nullptr && rename(tmp.c_str(), path.c_str()) != 0) {
    failed_call = "rename";
    saved_errno = errno;
  }
  if (failed_call != nullptr) {
    unlink(tmp.c_str());
    errno = saved_errno;
    *err = SyscallError(path, failed_call);
    return false;
  }
  // The new file is in place; without this a crash could still lose the
  // rename. Failing here is reported, but the new content is already visible.
  const std::string dir = DirectoryOf(path);
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    *err = SyscallError(dir, "open directory");
    return false;
  }
  bool synced = fsync(dfd) == 0;
  if (!synced)
    *err = SyscallError(dir, "fsync directory");
  close(dfd);
  return synced;
}

std::string FileKindName(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFLNK:
      return "a symbolic link";
    case S_IFIFO:
      return "a FIFO";
    case S_IFSOCK:
      return "a socket";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    default:
      return "not a regular file";
  }
}

bool CheckOutputPath(const std::string& path, std::string* err) {
  struct stat st;
  const bool exists = !path.empty() && stat(path.c_str(), &st) == 0;
  if (path.empty() || path.back() == '/' || (exists && S_ISDIR(st.st_mode))) {
    *err = path + ": is a directory; give a file name";
    return false;
  }
  // A FIFO nobody reads blocks the open before the first operation; a
  // device is not a file to replace.
  if (exists && !S_ISREG(st.st_mode)) {
    *err = path + ": " + FileKindName(st.st_mode) +
           ", not a regular file: refused (output goes to regular files only)";
    return false;
  }
  const std::string dir = DirectoryOf(path);
  const int rc = stat(dir.c_str(), &st);
  if (rc != 0 || !S_ISDIR(st.st_mode)) {
    *err = path + ": directory " + dir + ": " + ErrnoText(rc != 0 ? errno : ENOTDIR);
    return false;
  }
  // The file is written under a longer temporary name first: a name that
  // fits only without it would fail at the end of the run (ENAMETOOLONG).
  const long name_max = pathconf(dir.c_str(), _PC_NAME_MAX);
  const size_t limit = name_max > 0 ? static_cast<size_t>(name_max) : NAME_MAX;
  const size_t slash = path.rfind('/');
  const size_t name = path.size() - (slash == std::string::npos ? 0 : slash + 1);
  const size_t suffix = AtomicTempPath(path).size() - path.size();
  if (name + suffix > limit) {
    *err = path + ": file name too long: " + std::to_string(name) + " characters, at most " +
           std::to_string(limit > suffix ? limit - suffix : 0) + " in " + dir +
           " (it is written as <name>" + AtomicTempPath("") + " first)";
    return false;
  }
  // A new file under a name nobody could guess (mkostemp: O_CREAT|O_EXCL),
  // never one a planted symlink points at.
  std::string probe = dir + "/.cpuhp-stress-probe.XXXXXX";
  const int fd = mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) {
    *err = path + ": cannot write in " + dir + ": " + ErrnoText(errno);
    return false;
  }
  close(fd);
  unlink(probe.c_str());
  return true;
}

std::string FormatUtc(int64_t realtime_ns) {
  // Floor division, so that times before 1970 still print the right second.
  int64_t sec = realtime_ns / 1000000000;
  int64_t rem = realtime_ns % 1000000000;
  if (rem < 0) {
    rem += 1000000000;
    --sec;
  }
  time_t t = static_cast<time_t>(sec);
  struct tm tm;
  if (gmtime_r(&t, &tm) == nullptr)
    return "1970-01-01T00:00:00.000Z";
  char buf[64];
  size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char ms[8];
  std::snprintf(ms, sizeof(ms), ".%03dZ", static_cast<int>(rem / 1000000));
  return std::string(buf, n) + std::string(ms);
}

}  // namespace cpuhp
