// SPDX-License-Identifier: GPL-2.0
#include "util/file_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
  int64_t days = sec / 86400, sod = sec % 86400;
  if (sod < 0) {
    sod += 86400;
    --days;
  }
  // The proleptic Gregorian date of a day number (days since 1970-01-01), in
  // 400-year eras of 146097 days, each from a March 1st (H. Hinnant's
  // civil_from_days).
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ",
                static_cast<long long>(year), static_cast<int>(month), static_cast<int>(day),
                static_cast<int>(sod / 3600), static_cast<int>(sod / 60 % 60),
                static_cast<int>(sod % 60), static_cast<int>(rem / 1000000));
  return buf;
}

int64_t RealtimeNs() {
#if defined(SYS_clock_gettime64) && !defined(__LP64__)
  struct {
    int64_t tv_sec;
    int64_t tv_nsec;
  } kts;  // struct __kernel_timespec
  if (syscall(SYS_clock_gettime64, CLOCK_REALTIME, &kts) == 0)
    return kts.tv_sec * 1000000000 + kts.tv_nsec;
#endif
  timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
    return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace cpuhp
