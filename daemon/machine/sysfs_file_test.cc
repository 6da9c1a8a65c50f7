// SPDX-License-Identifier: GPL-2.0
// Issue 29 item 7: what a hostile tree holds (a FIFO, a symlink) is refused
// in one line naming it, at once, and nothing it names is written.
#include "machine/sysfs_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "testing/fake_sysfs.h"
#include "testing/fifo_guard.h"

namespace cpuhp {
namespace {

TEST(SysfsRootTest, AFifoIsRefusedNotOpened) {
  FakeSysfs fs(4);
  const std::string fifo = fs.Fifo("online");
  SysfsRoot root(fs.root());
  std::string text, err;
  int e = 0;
  bool read = true;
  EXPECT_TRUE(ReturnsWithin(fifo, [&] { read = root.Read("online", 4096, &text, &err, &e); }));
  EXPECT_FALSE(read);
  EXPECT_EQ(err, fifo + ": a FIFO, not a regular file: refused");
  EXPECT_EQ(e, ENXIO);
  // Nor for writing (hotplug/fail): a FIFO nobody reads blocked open(2).
  const std::string fail = fs.Fifo("cpu1/online");
  int fd = 0;
  EXPECT_TRUE(
      ReturnsWithin(fail, [&] { fd = root.Open("cpu1/online", O_WRONLY | O_TRUNC, &err, &e); }));
  EXPECT_EQ(fd, -1);
  EXPECT_EQ(err, fail + ": a FIFO, not a regular file: refused");
}

TEST(SysfsRootTest, ASymlinkIsNotFollowedAndItsTargetIsUntouched) {
  FakeSysfs fs(4);
  fs.Write("victim", "precious\n");
  fs.Symlink("cpu3/online", fs.root() + "/victim");
  SysfsRoot root(fs.root());
  std::string err;
  int e = 0;
  EXPECT_EQ(root.Open("cpu3/online", O_RDWR, &err, &e), -1);
  EXPECT_EQ(e, ELOOP);
  EXPECT_EQ(err, fs.root() +
                     "/cpu3/online: a symbolic link: refused (nothing under a sysfs root is "
                     "followed)");
  EXPECT_EQ(root.Open("cpu3/online", O_WRONLY | O_TRUNC, &err, &e), -1);
  EXPECT_EQ(fs.Read("victim"), "precious\n");
  EXPECT_TRUE(root.Exists("cpu3/online"));  // there, and refused when opened
}

TEST(SysfsRootTest, ASymlinkedDirectoryOnTheWayIsRefused) {
  FakeSysfs fs(4);
  std::filesystem::create_directories(fs.root() + "/elsewhere");
  std::ofstream(fs.root() + "/elsewhere/online") << "1\n";
  std::filesystem::remove_all(fs.root() + "/cpu2");
  fs.Symlink("cpu2", fs.root() + "/elsewhere");
  std::string err;
  int e = 0;
  EXPECT_EQ(SysfsRoot(fs.root()).Open("cpu2/online", O_RDWR, &err, &e), -1);
  EXPECT_EQ(e, ELOOP);
  EXPECT_EQ(err.rfind(fs.root() + "/cpu2: a symbolic link: refused", 0), 0u) << err;
  // A FIFO where a directory belongs is refused as well.
  std::filesystem::remove_all(fs.root() + "/cpu1");
  fs.Fifo("cpu1");
  EXPECT_EQ(SysfsRoot(fs.root()).Open("cpu1/online", O_RDWR, &err, &e), -1);
  EXPECT_EQ(err, fs.root() + "/cpu1: a FIFO, not a directory: refused");
}

TEST(SysfsRootTest, MissingFilesKeepTheirErrno) {
  FakeSysfs fs(2);
  std::string text, err;
  int e = 0;
  EXPECT_FALSE(SysfsRoot(fs.root()).Read("cpu1/hotplug/fail", 64, &text, &err, &e));
  EXPECT_EQ(e, ENOENT);
  EXPECT_EQ(err, fs.root() + "/cpu1/hotplug/fail: cannot read: No such file or directory");
  EXPECT_TRUE(SysfsRoot(fs.root()).Read("cpu1/online", 64, &text, &err, &e)) << err;
  EXPECT_EQ(text, "1\n");
}

// The real root's files must be on sysfs: a tree anywhere else (tmpfs, a
// bind mount over /sys/devices/system/cpu) is refused there.
TEST(SysfsRootTest, UnderTheRealRootOnlySysfsFilesAreKept) {
  FakeSysfs fs(2);
  std::string text, err;
  int e = 0;
  EXPECT_FALSE(SysfsRoot(fs.root(), /*real=*/true).Read("online", 64, &text, &err, &e));
  EXPECT_EQ(e, EXDEV);
  EXPECT_EQ(err.rfind(fs.root() + "/online: not on sysfs (file system type 0x", 0), 0u) << err;
  EXPECT_FALSE(SysfsRoot(fs.root()).real());
  EXPECT_TRUE(SysfsRoot(kRealSysfsRoot).real());
  // Read only: the real tree passes its own rule.
  if (access("/sys/devices/system/cpu/possible", R_OK) == 0) {
    EXPECT_TRUE(SysfsRoot("/sys/devices/system/cpu/").real());
    EXPECT_TRUE(SysfsRoot(kRealSysfsRoot).Read("possible", 4096, &text, &err, &e)) << err;
    EXPECT_FALSE(text.empty());
  }
}

}  // namespace
}  // namespace cpuhp
