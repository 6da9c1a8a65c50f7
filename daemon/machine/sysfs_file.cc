// SPDX-License-Identifier: GPL-2.0
#include "machine/sysfs_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdio>

#include "util/file_util.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

// Why `mode` is refused where `want_dir` (or a regular file) was expected,
// and the errno that stands for it.
std::string Refusal(mode_t mode, bool want_dir, int* e) {
  if (S_ISLNK(mode)) {
    *e = ELOOP;
    return "a symbolic link: refused (nothing under a sysfs root is followed)";
  }
  *e = want_dir ? ENOTDIR : S_ISDIR(mode) ? EISDIR : ENXIO;
  return FileKindName(mode) + (want_dir ? ", not a directory" : ", not a regular file") +
         ": refused";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0)
      close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd) {
    if (fd_ >= 0)
      close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

}  // namespace

SysfsRoot::SysfsRoot(std::string path) : path_(std::move(path)) {
  char resolved[PATH_MAX];
  real_ = path_ == kRealSysfsRoot ||
          (realpath(path_.c_str(), resolved) && std::string(resolved) == kRealSysfsRoot);
}

namespace {

// Open() with `verb` before open's own errors ("open", "cannot read").
int OpenUnder(const std::string& root, bool real, const std::string& rel, int flags,
              const char* verb, std::string* err, int* err_no) {
  const std::string file = root + "/" + rel;
  auto fail = [&](const std::string& where, int e, const std::string& why) {
    *err_no = e;
    *err = where + ": " + why;
    return -1;
  };
  auto fail_errno = [&](int e) { return fail(file, e, std::string(verb) + ": " + strerror(e)); };
  auto refuse = [&](const std::string& where, mode_t mode, bool want_dir) {
    int e = 0;
    const std::string why = Refusal(mode, want_dir, &e);
    return fail(where, e, why);
  };
  Fd dir(open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0)
    return fail_errno(errno);
  std::string where = root;
  size_t begin = 0;
  for (size_t slash = rel.find('/'); slash != std::string::npos;
       begin = slash + 1, slash = rel.find('/', begin)) {
    const std::string part = rel.substr(begin, slash - begin);
    where += "/" + part;
    int next = openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      const int e = errno;
      struct stat st {};
      if (fstatat(dir.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
        return refuse(where, st.st_mode, /*want_dir=*/true);
      return fail_errno(e);
    }
    dir.reset(next);
  }
  const std::string name = rel.substr(begin);
  // Looked at before it is opened: a FIFO or a device is never opened.
  struct stat st {};
  if (fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return fail_errno(errno);
  if (!S_ISREG(st.st_mode))
    return refuse(file, st.st_mode, false);
  Fd fd(openat(dir.get(), name.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int e = errno;
    // Swapped for a symlink or a FIFO since the look.
    if (fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
      return refuse(file, st.st_mode, false);
    return fail_errno(e);
  }
  if (fstat(fd.get(), &st) != 0)
    return fail(file, errno, std::string("fstat: ") + strerror(errno));
  if (!S_ISREG(st.st_mode))
    return refuse(file, st.st_mode, false);
  if (real) {
    struct statfs fs {};
    if (fstatfs(fd.get(), &fs) != 0)
      return fail(file, errno, std::string("fstatfs: ") + strerror(errno));
    if (static_cast<unsigned long>(fs.f_type) != SYSFS_MAGIC) {
      char type[32];
      snprintf(type, sizeof type, "0x%lx", static_cast<unsigned long>(fs.f_type));
      return fail(file, EXDEV,
                  std::string("not on sysfs (file system type ") + type + "): refused");
    }
  }
  return fd.release();
}

}  // namespace

int SysfsRoot::Open(const std::string& rel, int flags, std::string* err, int* err_no) const {
  return OpenUnder(path_, real_, rel, flags, "open", err, err_no);
}

bool SysfsRoot::Read(const std::string& rel, size_t max_bytes, std::string* text, std::string* err,
                     int* err_no) const {
  int e = 0;
  Fd fd(OpenUnder(path_, real_, rel, O_RDONLY, "cannot read", err, &e));
  if (fd.get() < 0) {
    if (err_no)
      *err_no = e;
    return false;
  }
  text->clear();
  return ReadSmallFd(fd.get(), path_ + "/" + rel, max_bytes, text, err, err_no);
}

bool SysfsRoot::Exists(const std::string& rel) const {
  struct stat st {};
  return lstat((path_ + "/" + rel).c_str(), &st) == 0;
}

}  // namespace cpuhp
