// SPDX-License-Identifier: GPL-2.0
// Opening a file under a CPU sysfs root. Root writes 0 and 1 there, so what
// sits in the tree must not choose what happens: a FIFO must not hang open(2)
// (it held both locks 26 minutes and ate a SIGTERM), a symlink must not send
// the write to the file it names. Every component is opened O_NOFOLLOW, the
// file O_NONBLOCK, and only a regular file is kept (sysfs attributes are
// regular files); under the real root it must also be on sysfs. Any other
// root is a fake tree, for tests.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace cpuhp {

inline constexpr char kRealSysfsRoot[] = "/sys/devices/system/cpu";

class SysfsRoot {
 public:
  // `path` is followed (the user named it); nothing under it is.
  explicit SysfsRoot(std::string path);
  // For tests: `path` held to the real root's rule (`real`) or not.
  SysfsRoot(std::string path, bool real) : path_(std::move(path)), real_(real) {}

  const std::string& path() const { return path_; }
  // Whether `path` is the real /sys/devices/system/cpu (as written or once
  // resolved): its files must be on sysfs.
  bool real() const { return real_; }

  // Opens <path>/<rel> ("online", "cpu3/online", "cpu3/hotplug/fail") with
  // `flags` (O_RDONLY, O_RDWR, O_WRONLY | O_TRUNC; O_NOFOLLOW, O_NONBLOCK
  // and O_CLOEXEC are added). Returns the descriptor, or -1 with *err_no
  // (ELOOP: a symlink; ENXIO: not a regular file; EXDEV: not on sysfs;
  // else open's) and a one-line *err naming the file.
  int Open(const std::string& rel, int flags, std::string* err, int* err_no) const;

  // Reads <path>/<rel> whole, at most `max_bytes`; errors as Open's, and
  // "<file>: cannot read: <strerror>" for the read itself.
  bool Read(const std::string& rel, size_t max_bytes, std::string* text, std::string* err,
            int* err_no) const;

  // Whether anything is at <path>/<rel>, not followed (a symlink or FIFO
  // there exists, and Open says what is wrong with it).
  bool Exists(const std::string& rel) const;

 private:
  std::string path_;
  bool real_;
};

}  // namespace cpuhp
