// SPDX-License-Identifier: GPL-2.0
#include <errno.h>

#include <filesystem>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "machine/cpu_control.h"
#include "machine/topology.h"
#include "testing/fake_sysfs.h"
#include "testing/fifo_guard.h"

namespace cpuhp {
namespace {

TEST(SysfsCpuControlTest, DiscoversTheTree) {
  FakeSysfs fs(4);
  fs.Write("online", "0-2\n");
  fs.Write("cpu3/online", "0\n");
  fs.Write("isolated", "2\n");
  fs.Write("nohz_full", "2-3\n");
  auto ctl = NewSysfsCpuControl(fs.root());
  Topology t;
  std::string err;
  ASSERT_TRUE(DiscoverTopology(ctl.get(), &t, &err)) << err;
  EXPECT_EQ(t.present, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t.online, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(t.hotpluggable, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(t.isolated, (std::vector<int>{2}));
  EXPECT_EQ(t.nohz_full, (std::vector<int>{2, 3}));
  EXPECT_TRUE(t.has_nohz_full_file);
  EXPECT_EQ(t.max_cpu, 3);
  EXPECT_EQ(TopologyToJson(t)["hotpluggable"], "1-3");
}

TEST(SysfsCpuControlTest, MissingOptionalFilesAreNotErrors) {
  FakeSysfs fs(2);
  std::filesystem::remove(fs.root() + "/isolated");
  auto ctl = NewSysfsCpuControl(fs.root());
  Topology t;
  std::string err;
  ASSERT_TRUE(DiscoverTopology(ctl.get(), &t, &err)) << err;
  EXPECT_FALSE(t.has_isolated_file);
  EXPECT_FALSE(t.has_nohz_full_file);
  EXPECT_TRUE(TopologyToJson(t)["nohz_full"].is_null());
}

// A NO_HZ_FULL kernel without nohz_full= prints "(null)"; %*pbl pads it to
// nr_cpu_ids columns: Debian's 6.1 in a 128-vCPU guest printed 122 spaces
// before it (the run stopped with exit 2).
TEST(SysfsCpuControlTest, NullNohzFullMaskIsEmpty) {
  for (const auto& [cpus, text] : {std::pair{4, std::string("(null)\n")},
                                   std::pair{128, std::string(122, ' ') + "(null)\n"}}) {
    FakeSysfs fs(cpus);
    fs.Write("nohz_full", text);
    auto ctl = NewSysfsCpuControl(fs.root());
    Topology t;
    std::string err;
    ASSERT_TRUE(DiscoverTopology(ctl.get(), &t, &err)) << err;
    EXPECT_TRUE(t.has_nohz_full_file) << cpus;
    EXPECT_TRUE(t.nohz_full.empty()) << cpus;
    EXPECT_EQ(TopologyToJson(t)["nohz_full"], "") << cpus;
    // Anything else padded is still refused.
    fs.Write("nohz_full", std::string(10, ' ') + "(nul)\n");
    EXPECT_FALSE(DiscoverTopology(ctl.get(), &t, &err));
    EXPECT_NE(err.find("nohz_full"), std::string::npos) << err;
  }
}

TEST(SysfsCpuControlTest, MissingOrCorruptRequiredFilesNameThePath) {
  FakeSysfs fs(2);
  auto ctl = NewSysfsCpuControl(fs.root());
  Topology t;
  std::string err;
  fs.Write("online", "0-x\n");
  EXPECT_FALSE(DiscoverTopology(ctl.get(), &t, &err));
  EXPECT_EQ(err.rfind(fs.root() + "/online: bad CPU list", 0), 0u) << err;
  std::filesystem::remove(fs.root() + "/present");
  EXPECT_FALSE(DiscoverTopology(ctl.get(), &t, &err));
  EXPECT_EQ(err, fs.root() + "/present: cannot read: No such file or directory");
  auto none = NewSysfsCpuControl("/nonexistent/cpu");
  EXPECT_FALSE(DiscoverTopology(none.get(), &t, &err));
}

TEST(SysfsCpuControlTest, WritesAndReadsBackTheOnlineFile) {
  FakeSysfs fs(2);
  auto ctl = NewSysfsCpuControl(fs.root());
  std::string err;
  EXPECT_FALSE(ctl->HasOnlineFile(0));
  EXPECT_TRUE(ctl->HasOnlineFile(1));
  EXPECT_EQ(ctl->WriteOnline(1, false), 0);
  EXPECT_EQ(fs.Online(1), '0');
  EXPECT_EQ(ctl->ReadOnline(1, &err), 0);
  EXPECT_EQ(ctl->WriteOnline(1, true), 0);
  EXPECT_EQ(ctl->ReadOnline(1, &err), 1);
  // cpu0 has no online file: the write fails with the open errno.
  EXPECT_EQ(ctl->WriteOnline(0, false), ENOENT);
  EXPECT_EQ(ctl->ReadOnline(0, &err), -1);
  EXPECT_EQ(err, fs.root() + "/cpu0/online: open: No such file or directory");
  fs.Write("cpu1/online", "x\n");
  EXPECT_EQ(ctl->ReadOnline(1, &err), -1);
  EXPECT_EQ(err, fs.root() + "/cpu1/online: unexpected content");
}

TEST(SysfsCpuControlTest, AWriteErrorIsReturnedAsErrno) {
  FakeSysfs fs(3);
  // A directory where the file should be: open(O_RDWR) fails with EISDIR.
  std::filesystem::remove(fs.root() + "/cpu2/online");
  std::filesystem::create_directory(fs.root() + "/cpu2/online");
  auto ctl = NewSysfsCpuControl(fs.root());
  EXPECT_EQ(ctl->WriteOnline(2, false), EISDIR);
}

// Issue 29 item 7: a FIFO at the root's online list hung `run` and `list`;
// one at hotplug/fail held both locks 26 minutes in fifo_open. Each is
// refused at once, naming the file.
TEST(SysfsCpuControlTest, AFifoInTheTreeIsRefusedAtOnce) {
  FakeSysfs fs(4);
  const std::string online = fs.Fifo("online");
  auto ctl = NewSysfsCpuControl(fs.root());
  Topology t;
  std::string err;
  bool found = true;
  EXPECT_TRUE(ReturnsWithin(online, [&] { found = DiscoverTopology(ctl.get(), &t, &err); }));
  EXPECT_FALSE(found);
  EXPECT_EQ(err, online + ": a FIFO, not a regular file: refused");

  std::filesystem::create_directories(fs.root() + "/cpu1/hotplug");
  const std::string fail = fs.Fifo("cpu1/hotplug/fail");
  int write = 0, read = 0, state = 0;
  EXPECT_TRUE(ReturnsWithin(fail, [&] { write = ctl->WriteFail(1, -1); }));
  EXPECT_TRUE(ReturnsWithin(fail, [&] { read = ctl->ReadFail(1, &state); }));
  EXPECT_EQ(write, ENXIO);
  EXPECT_EQ(read, ENXIO);
  // A FIFO at cpuN/online: neither read nor written.
  fs.Fifo("cpu2/online");
  EXPECT_EQ(ctl->ReadOnline(2, &err), -1);
  EXPECT_EQ(err, fs.root() + "/cpu2/online: a FIFO, not a regular file: refused");
  EXPECT_EQ(ctl->WriteOnline(2, false), ENXIO);
}

// A symlink at cpu3/online overwrote the first byte of the file it named; at
// cpu3/hotplug/fail the file was truncated to "-1".
TEST(SysfsCpuControlTest, ASymlinkInTheTreeIsNotFollowed) {
  FakeSysfs fs(4);
  fs.Write("victim", "precious\n");
  fs.Symlink("cpu3/online", fs.root() + "/victim");
  std::filesystem::create_directories(fs.root() + "/cpu3/hotplug");
  fs.Symlink("cpu3/hotplug/fail", fs.root() + "/victim");
  auto ctl = NewSysfsCpuControl(fs.root());
  std::string err;
  EXPECT_TRUE(ctl->HasOnlineFile(3));  // there: refused by name, not skipped
  EXPECT_EQ(ctl->ReadOnline(3, &err), -1);
  EXPECT_EQ(err, fs.root() +
                     "/cpu3/online: a symbolic link: refused (nothing under a sysfs root is "
                     "followed)");
  EXPECT_EQ(ctl->WriteOnline(3, false), ELOOP);
  EXPECT_EQ(ctl->WriteFail(3, -1), ELOOP);
  int state = 0;
  EXPECT_EQ(ctl->ReadFail(3, &state), ELOOP);
  EXPECT_EQ(fs.Read("victim"), "precious\n");
}

}  // namespace
}  // namespace cpuhp
